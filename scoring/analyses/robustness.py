"""Robustness of EIP to changes of the model pool and of the dataset suite.

Three analyses from the paper, all as pure functions on a response matrix
``R`` of shape ``(n_questions, n_models)`` (credit in [0, 1], NaN = not
observed):

* :func:`model_removal_robustness` -- remove ``k`` random models, rerun EIP
  and correlate with the full pool (section 3.5, table 5, figure 10);
* :func:`leave_one_out_models` -- remove each model once (appendix E.1,
  table 9, "LOO");
* :func:`leave_one_dataset_out` -- remove each dataset once and correlate the
  model competencies (appendix E.2, table 10).

What is correlated with what
----------------------------
* Question difficulty: Spearman's rho between the full-pool and reduced-pool
  ``EIPResult.difficulty`` (pi_Q) over the questions **kept in both runs**
  (a question excluded by either pool -- all solved, all failed or
  unobserved -- has no pi_Q there and is left out).
* Model competency: Spearman's rho between ``EIPResult.competency`` (pi_M)
  of the full pool restricted to the remaining models and that of the
  reduced pool.
* Filtering changes: the number of questions whose ``kept`` status differs
  between the two runs (kept <-> excluded, in either direction).

A correlation that cannot be computed (a constant vector, fewer than two
values, or an EIP run that failed on the reduced pool) is reported as
undefined with its reason (see :class:`~scoring.analyses._common.Correlation`)
and left out of the means, never folded in as NaN.
"""
from __future__ import annotations

import time
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from scoring._typing import BoolArray, ResponseArray
from scoring._validation import as_rng, check_in_open_interval, check_positive_int, check_response_matrix
from scoring.analyses._common import Correlation, Summary, check_labels, correlation, summarise, unique_in_order
from scoring.eip import EIPResult, eip
from scoring.exceptions import ConvergenceError

__all__ = [
    "RemovalTrial",
    "RemovalSummary",
    "ModelRemovalResult",
    "DatasetRemoval",
    "LeaveOneDatasetOutResult",
    "model_removal_robustness",
    "leave_one_out_models",
    "leave_one_dataset_out",
]


@dataclass(frozen=True)
class RemovalTrial:
    """One reduced-pool EIP run compared with the full pool.

    Attributes
    ----------
    removed : tuple of int
        Column indices (into the full ``R``) of the removed models, ascending.
    difficulty_rho : Correlation
        Spearman rho of pi_Q over the questions kept in both runs.
    competency_rho : Correlation
        Spearman rho of pi_M over the remaining models.
    n_filter_changes : int or None
        Questions whose kept/excluded status differs between the runs; None
        if the reduced run failed.
    seconds : float or None
        Wall time of the reduced EIP run (``time.perf_counter``); None if it
        failed.
    error : str or None
        The error message if EIP failed on the reduced pool (no question
        kept, or no convergence); None otherwise.
    """

    removed: tuple[int, ...]
    difficulty_rho: Correlation
    competency_rho: Correlation
    n_filter_changes: int | None
    seconds: float | None
    error: str | None = None


@dataclass(frozen=True)
class RemovalSummary:
    """All trials for one number ``k`` of removed models, and their summary.

    Attributes
    ----------
    k : int
        Models removed per trial.
    trials : tuple of RemovalTrial
    difficulty_rho, competency_rho : Summary
        Mean, sample std (ddof=1), min and max of the defined rho values;
        ``n_undefined`` counts the trials where rho was undefined.
    filter_changes : Summary
        Of ``n_filter_changes`` (mean and max are table 9's "change").
    seconds : Summary
        Of the reduced EIP wall times.
    """

    k: int
    trials: tuple[RemovalTrial, ...]
    difficulty_rho: Summary
    competency_rho: Summary
    filter_changes: Summary
    seconds: Summary


@dataclass(frozen=True)
class ModelRemovalResult:
    """Result of :func:`model_removal_robustness` or :func:`leave_one_out_models`.

    Attributes
    ----------
    summaries : tuple of RemovalSummary
        One per evaluated ``k``, in the order given.
    skipped : tuple of (int, str)
        ``(k, reason)`` for every requested ``k`` that would have left fewer
        than 2 models.
    n_questions, n_models : int
        Shape of the full matrix.
    n_kept_full : int
        Questions kept by the full-pool EIP run.
    full_seconds : float
        Wall time of the full-pool EIP run.
    n_trials : int
        Trials per ``k`` (for leave-one-out: ``n_models``).
    alpha : float
        EIP damping factor used for every run.
    """

    summaries: tuple[RemovalSummary, ...]
    skipped: tuple[tuple[int, str], ...]
    n_questions: int
    n_models: int
    n_kept_full: int
    full_seconds: float
    n_trials: int
    alpha: float

    def summary_for(self, k: int) -> RemovalSummary:
        """The summary for ``k`` removed models; KeyError if it was not evaluated."""
        for s in self.summaries:
            if s.k == k:
                return s
        raise KeyError(f"k = {k} was not evaluated (evaluated: {[s.k for s in self.summaries]})")


def _timed_eip(R: ResponseArray, alpha: float) -> tuple[EIPResult, float]:
    t0 = time.perf_counter()
    res = eip(R, alpha=alpha)
    return res, time.perf_counter() - t0


def _undefined(reason: str) -> Correlation:
    return Correlation("spearman", None, None, 0, reason)


def _compare(R: ResponseArray, full: EIPResult, keep_models: BoolArray, alpha: float) -> RemovalTrial:
    removed = tuple(int(i) for i in np.flatnonzero(~keep_models))
    try:
        sub, seconds = _timed_eip(R[:, keep_models], alpha)
    except (ValueError, ConvergenceError) as exc:
        reason = f"EIP failed on the reduced pool: {exc}"
        return RemovalTrial(removed, _undefined(reason), _undefined(reason), None, None, str(exc))
    both = full.kept & sub.kept
    diff_rho = correlation(full.difficulty[both], sub.difficulty[both], method="spearman")
    comp_rho = correlation(full.competency[keep_models], sub.competency, method="spearman")
    n_changes = int(np.count_nonzero(full.kept != sub.kept))
    return RemovalTrial(removed, diff_rho, comp_rho, n_changes, seconds, None)


def _summarise_trials(k: int, trials: list[RemovalTrial]) -> RemovalSummary:
    return RemovalSummary(
        k=k,
        trials=tuple(trials),
        difficulty_rho=summarise([t.difficulty_rho.value for t in trials]),
        competency_rho=summarise([t.competency_rho.value for t in trials]),
        filter_changes=summarise([t.n_filter_changes for t in trials]),
        seconds=summarise([t.seconds for t in trials]),
    )


def model_removal_robustness(
    R: ArrayLike,
    *,
    ks: Iterable[int] = range(1, 16),
    n_trials: int = 50,
    rng: np.random.Generator | int | None = 0,
    alpha: float = 0.85,
) -> ModelRemovalResult:
    """Rerun EIP after removing ``k`` random models and correlate with the full pool.

    For every ``k`` in ``ks``, ``n_trials`` times: draw ``k`` distinct models
    uniformly at random (without replacement within a trial; trials are
    independent draws, so two trials may remove the same set), drop their
    columns, rerun EIP and compare with the full-pool run.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed. Bool/integer 0/1 matrices are
        accepted (fully observed). At least 2 models.
    ks : iterable of int, default range(1, 16)
        Numbers of models to remove, each >= 1. A ``k`` that would leave
        fewer than 2 models is skipped and listed in ``result.skipped``.
    n_trials : int, default 50
        Random removals per ``k`` (the paper uses 50 in table 5 and 10 in
        table 9).
    rng : numpy.random.Generator, int or None, default 0
        Source of the random removals.
    alpha : float, default 0.85
        EIP damping factor in (0, 1).

    Returns
    -------
    ModelRemovalResult
        Per ``k``: every trial and the mean/std (ddof=1) of the difficulty
        and competency Spearman rho, the mean/max number of questions whose
        filtering status changed, and the mean reduced-run wall time.

    Raises
    ------
    ValueError
        If ``R`` is invalid or has fewer than 2 models, a ``k`` is not an
        integer >= 1, ``n_trials`` < 1, ``alpha`` is outside (0, 1), or EIP
        keeps no question on the full pool.
    ConvergenceError
        If EIP does not converge on the full pool. (A failure on a reduced
        pool is recorded in that trial instead.)

    Notes
    -----
    Difficulty rho is computed over the questions kept in both runs;
    competency rho over the remaining models. See the module docstring.

    References
    ----------
    EIP paper, section 3.5 (table 5, figure 10) and appendix E.1 (table 9).

    Examples
    --------
    >>> import numpy as np
    >>> R = (np.random.default_rng(0).random((200, 6)) < 0.5).astype(float)
    >>> res = model_removal_robustness(R, ks=[1, 2], n_trials=3, rng=0)
    >>> [s.k for s in res.summaries]
    [1, 2]
    """
    R = check_response_matrix(R, min_models=2)
    ks = list(ks)
    for k in ks:
        check_positive_int(k, name="ks")
    n_trials = check_positive_int(n_trials, name="n_trials")
    alpha = check_in_open_interval(alpha, name="alpha", low=0.0, high=1.0)
    gen = as_rng(rng)
    n_questions, n_models = R.shape
    full, full_seconds = _timed_eip(R, alpha)
    summaries, skipped = [], []
    for k in ks:
        if n_models - k < 2:
            skipped.append((int(k), f"removing {k} of {n_models} models leaves {n_models - k} (< 2)"))
            continue
        trials = []
        for _ in range(n_trials):
            keep = np.ones(n_models, dtype=bool)
            keep[gen.choice(n_models, size=int(k), replace=False)] = False
            trials.append(_compare(R, full, keep, alpha))
        summaries.append(_summarise_trials(int(k), trials))
    return ModelRemovalResult(
        summaries=tuple(summaries),
        skipped=tuple(skipped),
        n_questions=n_questions,
        n_models=n_models,
        n_kept_full=int(full.kept.sum()),
        full_seconds=full_seconds,
        n_trials=n_trials,
        alpha=alpha,
    )


def leave_one_out_models(R: ArrayLike, *, alpha: float = 0.85) -> ModelRemovalResult:
    """Remove each model once, rerun EIP and correlate with the full pool.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed. At least 3 models (removing
        one must leave 2).
    alpha : float, default 0.85
        EIP damping factor in (0, 1).

    Returns
    -------
    ModelRemovalResult
        A single summary with ``k = 1`` whose ``trials[j]`` removes model
        ``j`` (so ``n_trials == n_models``).

    Raises
    ------
    ValueError
        If ``R`` is invalid or has fewer than 3 models, ``alpha`` is outside
        (0, 1), or EIP keeps no question on the full pool.
    ConvergenceError
        If EIP does not converge on the full pool.

    References
    ----------
    EIP paper, appendix E.1, table 9 (LOO column).

    Examples
    --------
    >>> import numpy as np
    >>> R = (np.random.default_rng(0).random((200, 4)) < 0.5).astype(float)
    >>> len(leave_one_out_models(R).summaries[0].trials)
    4
    """
    R = check_response_matrix(R, min_models=3)
    alpha = check_in_open_interval(alpha, name="alpha", low=0.0, high=1.0)
    n_questions, n_models = R.shape
    full, full_seconds = _timed_eip(R, alpha)
    trials = []
    for j in range(n_models):
        keep = np.ones(n_models, dtype=bool)
        keep[j] = False
        trials.append(_compare(R, full, keep, alpha))
    return ModelRemovalResult(
        summaries=(_summarise_trials(1, trials),),
        skipped=(),
        n_questions=n_questions,
        n_models=n_models,
        n_kept_full=int(full.kept.sum()),
        full_seconds=full_seconds,
        n_trials=n_models,
        alpha=alpha,
    )


@dataclass(frozen=True)
class DatasetRemoval:
    """EIP without one dataset, compared with EIP on all datasets.

    Attributes
    ----------
    dataset : object
        The removed dataset's label.
    n_questions_removed : int
        Questions carrying that label.
    competency_rho : Correlation
        Spearman rho of pi_M (all models) without the dataset vs with all.
    difficulty_rho : Correlation
        Spearman rho of pi_Q over the remaining questions kept in both runs.
    error : str or None
        Why EIP could not run without this dataset (for example a model
        observed only on it), else None.
    """

    dataset: object
    n_questions_removed: int
    competency_rho: Correlation
    difficulty_rho: Correlation
    error: str | None = None


@dataclass(frozen=True)
class LeaveOneDatasetOutResult:
    """Result of :func:`leave_one_dataset_out`.

    Attributes
    ----------
    removals : tuple of DatasetRemoval
        One per dataset, in order of first appearance in ``groups``.
    competency_rho : Summary
        Mean, sample std (ddof=1), min, max of the defined competency rho
        values (table 10's "average").
    alpha : float
    """

    removals: tuple[DatasetRemoval, ...]
    competency_rho: Summary
    alpha: float


def leave_one_dataset_out(
    R: ArrayLike, groups: ArrayLike | Sequence[Hashable], *, alpha: float = 0.85
) -> LeaveOneDatasetOutResult:
    """Remove each dataset once and correlate model competency with all datasets.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed. At least 2 models.
    groups : array-like of shape (n_questions,)
        Dataset label of every question; at least 2 distinct labels.
    alpha : float, default 0.85
        EIP damping factor in (0, 1).

    Returns
    -------
    LeaveOneDatasetOutResult
        Per dataset the Spearman rho of pi_M without it vs with all datasets
        (and, as a bonus, of pi_Q over the remaining questions kept in both
        runs); mean and std of the competency rho over datasets.

    Raises
    ------
    ValueError
        If ``R`` or ``groups`` is invalid, ``groups`` has fewer than 2
        distinct labels, ``alpha`` is outside (0, 1), or EIP keeps no
        question on the full matrix.
    ConvergenceError
        If EIP does not converge on the full matrix.

    References
    ----------
    EIP paper, appendix E.2, table 10.

    Examples
    --------
    >>> import numpy as np
    >>> R = (np.random.default_rng(0).random((300, 5)) < 0.5).astype(float)
    >>> groups = np.repeat(["a", "b", "c"], 100)
    >>> res = leave_one_dataset_out(R, groups)
    >>> [r.dataset for r in res.removals]
    ['a', 'b', 'c']
    """
    R = check_response_matrix(R, min_models=2)
    labels = check_labels(groups, name="groups", length=R.shape[0])
    datasets = unique_in_order(labels)
    if len(datasets) < 2:
        raise ValueError(f"groups must hold at least 2 distinct datasets; got {datasets!r}")
    alpha = check_in_open_interval(alpha, name="alpha", low=0.0, high=1.0)
    full, _ = _timed_eip(R, alpha)
    removals = []
    for d in datasets:
        rest = labels != d
        try:
            sub, _ = _timed_eip(R[rest], alpha)
        except (ValueError, ConvergenceError) as exc:
            reason = f"EIP failed without dataset {d!r}: {exc}"
            removals.append(DatasetRemoval(d, int((~rest).sum()), _undefined(reason), _undefined(reason), str(exc)))
            continue
        both = full.kept[rest] & sub.kept
        removals.append(
            DatasetRemoval(
                dataset=d,
                n_questions_removed=int((~rest).sum()),
                competency_rho=correlation(full.competency, sub.competency, method="spearman"),
                difficulty_rho=correlation(full.difficulty[rest][both], sub.difficulty[both], method="spearman"),
            )
        )
    return LeaveOneDatasetOutResult(
        removals=tuple(removals),
        competency_rho=summarise([r.competency_rho.value for r in removals]),
        alpha=alpha,
    )
