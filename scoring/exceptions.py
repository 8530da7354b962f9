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
