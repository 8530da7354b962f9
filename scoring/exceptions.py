"""Exceptions raised by :mod:`scoring`."""
from __future__ import annotations


class ConvergenceError(RuntimeError):
    """An iterative method stopped at ``max_iter`` without reaching ``tol``.

    Attributes
    ----------
    n_iter : int
        Iterations performed.
    residual : float
        The last residual (its meaning is documented by the raising function).
    tol : float
        The tolerance that was not reached.
    """

    def __init__(self, method: str, *, n_iter: int, residual: float, tol: float) -> None:
        self.method = method
        self.n_iter = n_iter
        self.residual = residual
        self.tol = tol
        super().__init__(
            f"{method} did not converge: residual {residual:.3e} > tol {tol:.1e} "
            f"after {n_iter} iterations; raise max_iter or tol"
        )


class NonFiniteError(ArithmeticError):
    """A computation produced a non-finite value (inf or NaN) where none can be.

    Raised instead of returning NaN scores or reporting a failure to
    converge: more iterations would not help. The message says which
    quantity became non-finite and at which iteration.

    Attributes
    ----------
    method : str
        The method that raised ("EIP", ...).
    quantity : str
        What became non-finite (e.g. "the question vector pi_Q").
    n_iter : int
        The iteration at which it was seen (0: before iterating).
    """

    def __init__(self, method: str, *, quantity: str, n_iter: int) -> None:
        self.method = method
        self.quantity = quantity
        self.n_iter = n_iter
        super().__init__(
            f"{method} produced a non-finite value in {quantity} at iteration {n_iter}; the input holds "
            "values too small or too large for float64 arithmetic (more iterations would not help)"
        )


class NoEstimateError(ConvergenceError):
    """A maximum-likelihood estimate does not exist, so no iteration can reach one.

    Raised by an unpenalised fit (Bradley-Terry with ``penalty=0``) when some
    questions are judged harder than every question they are compared with
    outside their group (or easier than every one): the likelihood keeps
    rising as their logits move apart, and a finite answer would be an
    artefact of where the iteration stopped. A subclass of
    :class:`ConvergenceError`, so code that catches failures to converge
    catches this too.

    Attributes
    ----------
    method : str
    questions : tuple of int
        Indices of the questions whose logits diverge (a group never judged
        easier than a question outside it), at most 10.
    """

    def __init__(self, method: str, *, questions: tuple[int, ...], reason: str) -> None:
        self.method = method
        self.questions = questions
        self.n_iter = 0
        self.residual = float("nan")
        self.tol = float("nan")
        RuntimeError.__init__(self, f"{method} has no maximum-likelihood estimate: {reason}; use a penalty > 0")
