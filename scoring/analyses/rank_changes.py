"""How EIP re-ranks models compared with accuracy (section 3.2, appendix G).

* :func:`eip_vs_accuracy` -- Kendall's tau between EIP competency and
  accuracy, the distribution of absolute rank changes (G.1, figure 12) and
  the displacement within consecutive accuracy-rank windows (G.2, figure 13).
* :func:`accuracy_by_difficulty_tertile` -- every model's accuracy on the
  easy / medium / hard third of the questions by EIP difficulty, grouped by
  model family (figure 5, appendix F).

Ranks
-----
Rank 1 is the best model (highest score). Tied scores share the average of
their ranks (``scipy.stats.rankdata(-score, method="average")``), so a rank
change can be a half-integer when there are ties.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._typing import FloatArray
from scoring._validation import check_positive_int, check_response_matrix
from scoring.analyses._common import Correlation, check_labels, check_names, correlation, unique_in_order

__all__ = [
    "WindowBlock",
    "WindowDisplacement",
    "FamilyRankChange",
    "RankComparison",
    "TertileAccuracy",
    "eip_vs_accuracy",
    "accuracy_by_difficulty_tertile",
]

TERTILES = ("easy", "medium", "hard")


@dataclass(frozen=True)
class WindowBlock:
    """One block of consecutive accuracy ranks.

    Attributes
    ----------
    first, last : int
        1-based accuracy positions covered (inclusive), e.g. 1 and 10 for the
        paper's window "1-10".
    models : tuple of int
        Model indices in accuracy order.
    displacements : tuple of float
        ``|EIP rank - accuracy rank|`` of each model (global ranks).
    mean_displacement, max_displacement : float
    kendall : Correlation
        Kendall's tau-b between accuracy and EIP competency within the block
        (undefined for a block of one model).
    """

    first: int
    last: int
    models: tuple[int, ...]
    displacements: tuple[float, ...]
    mean_displacement: float
    max_displacement: float
    kendall: Correlation


@dataclass(frozen=True)
class WindowDisplacement:
    """All blocks for one window size ``w`` (the last block may be shorter)."""

    window: int
    blocks: tuple[WindowBlock, ...]


@dataclass(frozen=True)
class FamilyRankChange:
    """Rank changes of the models of one family.

    Attributes
    ----------
    family : object
    models : tuple of int
    rank_change : tuple of float
        ``accuracy rank - EIP rank`` per model (positive = EIP ranks it higher).
    mean_abs_change : float
    """

    family: object
    models: tuple[int, ...]
    rank_change: tuple[float, ...]
    mean_abs_change: float


@dataclass(frozen=True)
class RankComparison:
    """Result of :func:`eip_vs_accuracy`.

    Attributes
    ----------
    kendall : Correlation
        Kendall's tau-b between competency and accuracy, with its p-value.
    n_concordant, n_discordant : int
        Model pairs ordered the same / opposite way by the two scores (pairs
        tied in either score are in neither count).
    accuracy_rank, eip_rank : ndarray of shape (n_models,)
        1 = best; tied models share the best rank of their group and the
        next rank is skipped ("1, 2, 2, 4", competition ranking, as on the
        leaderboard), so ranks are whole numbers (stored as floats).
    rank_change : ndarray of shape (n_models,)
        ``accuracy_rank - eip_rank``: positive when EIP ranks the model higher.
    abs_change_counts : dict of float to int
        Number of models per absolute rank change, ascending (figure 12).
    windows : tuple of WindowDisplacement
        One per requested window size (figure 13).
    families : dict or None
        Family label to :class:`FamilyRankChange`, when ``families`` was given.
    model_names : tuple of str
    """

    kendall: Correlation
    n_concordant: int
    n_discordant: int
    accuracy_rank: FloatArray
    eip_rank: FloatArray
    rank_change: FloatArray
    abs_change_counts: dict[float, int]
    windows: tuple[WindowDisplacement, ...]
    families: dict[object, FamilyRankChange] | None
    model_names: tuple[str, ...]


def _check_scores(x: ArrayLike, *, name: str, n: int | None = None) -> FloatArray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"{name} must be 1-D with at least 2 models; got shape {arr.shape}")
    if n is not None and arr.size != n:
        raise ValueError(f"{name} must have {n} entries (one per model); got {arr.size}")
    if not np.isfinite(arr).all():
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"{name} must be finite; got {float(arr[bad])!r} at model {bad}")
    return arr


def _pair_counts(a: FloatArray, b: FloatArray) -> tuple[int, int]:
    da = np.sign(a[:, None] - a[None, :])
    db = np.sign(b[:, None] - b[None, :])
    prod = np.triu(da * db, k=1)
    return int((prod > 0).sum()), int((prod < 0).sum())


def eip_vs_accuracy(
    competency: ArrayLike,
    accuracy: ArrayLike,
    *,
    windows: Iterable[int] = (1, 3, 5, 10),
    families: ArrayLike | Sequence[Hashable] | None = None,
    model_names: Iterable[object] | None = None,
) -> RankComparison:
    """Compare the model ranking by EIP competency with the ranking by accuracy.

    Parameters
    ----------
    competency : array-like of shape (n_models,)
        EIP competency (pi_M or its 0-100 scale); higher = better.
    accuracy : array-like of shape (n_models,)
        Accuracy (any scale); higher = better.
    windows : sequence of int, default (1, 3, 5, 10)
        Window sizes ``w`` for the local displacement analysis.
    families : array-like of shape (n_models,), optional
        Family label per model, to summarise rank changes per family.
    model_names : sequence of str, optional
        Names per model (default ``model_0``, ...).

    Returns
    -------
    RankComparison
        Kendall's tau, rank changes, their distribution, window blocks and
        per-family changes.

    Raises
    ------
    ValueError
        If the score vectors differ in length, have fewer than 2 models or
        non-finite values, a window is not an integer >= 1, or ``families`` /
        ``model_names`` has the wrong length.

    Notes
    -----
    Window displacement (appendix G.2): sort the models by accuracy rank
    (ties by model index), cut this order into consecutive blocks of ``w``
    models (positions 1..w, w+1..2w, ...; the last block holds the
    remainder), and for each model take ``|EIP rank - accuracy rank|`` with
    both ranks global over all models. Each block reports the mean and max of
    these displacements and Kendall's tau-b between accuracy and competency
    within the block.

    References
    ----------
    EIP paper, section 3.2 (Kendall's tau = 0.8492) and appendix G
    (figures 12 and 13).

    Examples
    --------
    >>> res = eip_vs_accuracy([0.4, 0.3, 0.2, 0.1], [0.9, 0.7, 0.8, 0.6], windows=(2,))
    >>> round(res.kendall.value, 4), res.rank_change.tolist()
    (0.6667, [0.0, 1.0, -1.0, 0.0])
    """
    from scipy.stats import rankdata
    comp = _check_scores(competency, name="competency")
    acc = _check_scores(accuracy, name="accuracy", n=comp.size)
    n = comp.size
    windows = tuple(check_positive_int(w, name="windows") for w in windows)
    names = check_names(model_names, n=n)
    fam = None if families is None else check_labels(families, name="families", length=n, per="model")

    # Competition ranking ("1, 2, 2, 4"): the site's one tie convention (the leaderboard's too).
    acc_rank = rankdata(-acc, method="min").astype(np.float64)
    eip_rank = rankdata(-comp, method="min").astype(np.float64)
    change = acc_rank - eip_rank
    abs_change = np.abs(change)
    values, counts = np.unique(abs_change, return_counts=True)
    n_conc, n_disc = _pair_counts(acc, comp)

    order = np.lexsort((np.arange(n), acc_rank))
    window_results = []
    for w in windows:
        blocks = []
        for start in range(0, n, w):
            idx = order[start:start + w]
            disp = abs_change[idx]
            blocks.append(
                WindowBlock(
                    first=start + 1,
                    last=start + idx.size,
                    models=tuple(int(i) for i in idx),
                    displacements=tuple(float(d) for d in disp),
                    mean_displacement=float(disp.mean()),
                    max_displacement=float(disp.max()),
                    kendall=correlation(acc[idx], comp[idx], method="kendall"),
                )
            )
        window_results.append(WindowDisplacement(window=w, blocks=tuple(blocks)))

    family_results = None
    if fam is not None:
        family_results = {}
        for f in unique_in_order(fam):
            idx = np.flatnonzero(fam == f)
            family_results[f] = FamilyRankChange(
                family=f,
                models=tuple(int(i) for i in idx),
                rank_change=tuple(float(c) for c in change[idx]),
                mean_abs_change=float(abs_change[idx].mean()),
            )

    return RankComparison(
        kendall=correlation(comp, acc, method="kendall"),
        n_concordant=n_conc,
        n_discordant=n_disc,
        accuracy_rank=acc_rank,
        eip_rank=eip_rank,
        rank_change=change,
        abs_change_counts={float(v): int(c) for v, c in zip(values, counts)},
        windows=tuple(window_results),
        families=family_results,
        model_names=names,
    )


@dataclass(frozen=True)
class TertileAccuracy:
    """Result of :func:`accuracy_by_difficulty_tertile`.

    Attributes
    ----------
    labels : tuple of str
        ``("easy", "medium", "hard")``: the column order below.
    tertile : ndarray of int of shape (n_questions,)
        0 easy, 1 medium, 2 hard, -1 for a question no model observed.
    thresholds : tuple of float
        The 1/3 and 2/3 quantiles of the kept questions' difficulty.
    n_questions : ndarray of int of shape (3,)
        Questions per tertile (all-solved ones in easy, all-failed in hard).
    n_all_solved, n_all_failed : int
    accuracy : ndarray of shape (n_models, 3)
        Mean credit over the model's observed cells in each tertile; NaN
        where ``n_observed`` is 0.
    n_observed : ndarray of int of shape (n_models, 3)
    correct_share : ndarray of shape (n_models, 3)
        Share of the model's total credit earned in each tertile (rows sum to
        1; NaN for a model with no credit).
    model_names : tuple of str
    families : dict or None
        Family label to the tuple of its model indices, in order of first
        appearance, when ``families`` was given.
    """

    labels: tuple[str, ...]
    tertile: NDArray[np.int64]
    thresholds: tuple[float, float]
    n_questions: NDArray[np.int64]
    n_all_solved: int
    n_all_failed: int
    accuracy: FloatArray
    n_observed: NDArray[np.int64]
    correct_share: FloatArray
    model_names: tuple[str, ...]
    families: dict[object, tuple[int, ...]] | None


def accuracy_by_difficulty_tertile(
    R: ArrayLike,
    difficulty: ArrayLike,
    *,
    families: ArrayLike | Sequence[Hashable] | None = None,
    model_names: Iterable[object] | None = None,
) -> TertileAccuracy:
    """Accuracy of every model on the easy, medium and hard third of the questions.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed.
    difficulty : array-like of shape (n_questions,)
        EIP difficulty of the same questions, higher = harder: either
        ``EIPResult.difficulty`` (pi_Q, NaN where excluded) or
        ``EIPResult.difficulty_scaled``. Only its order over the kept
        questions matters, up to ties at a threshold.
    families : array-like of shape (n_models,), optional
        Family label per model (e.g. "Llama-3", "Qwen2.5").
    model_names : sequence of str, optional

    Returns
    -------
    TertileAccuracy

    Raises
    ------
    ValueError
        If ``R`` is invalid, ``difficulty`` has the wrong length or is NaN
        for a question that ``R`` says EIP keeps, or no question is kept.

    Notes
    -----
    Which questions are kept, all solved or all failed is read from ``R``
    itself (section 2.2: observed credit all 1 / all 0), not from
    ``difficulty``. The kept questions are split at the 1/3 and 2/3
    quantiles ``t1 <= t2`` of their difficulty (``numpy.quantile``, linear
    interpolation): easy ``d <= t1``, medium ``t1 < d <= t2``, hard
    ``d > t2``. Questions every model solved count as easy, questions every
    model failed as hard.

    References
    ----------
    EIP paper, section 3.2 (figure 5: Llama-3 family) and appendix F.

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[1, 1], [1, 0], [0, 1], [0, 0]], dtype=float)
    >>> res = accuracy_by_difficulty_tertile(R, [0.0, 0.4, 0.6, 100.0])
    >>> res.tertile.tolist()
    [0, 0, 2, 2]
    """
    R = check_response_matrix(R)
    n_q, n_m = R.shape
    d = np.asarray(difficulty, dtype=np.float64)
    if d.shape != (n_q,):
        raise ValueError(f"difficulty must have shape ({n_q},) (one value per question); got {d.shape}")
    names = check_names(model_names, n=n_m)
    fam = None if families is None else check_labels(families, name="families", length=n_m, per="model")

    X = R.astype(np.float64, copy=False)
    obs = ~np.isnan(X)
    observed = obs.any(axis=1)
    all_solved = observed & np.where(obs, X == 1, True).all(axis=1)
    all_failed = observed & np.where(obs, X == 0, True).all(axis=1)
    kept = observed & ~all_solved & ~all_failed
    if not kept.any():
        raise ValueError("no question is kept: every observed question was solved by all models or failed by all")
    if np.isnan(d[kept]).any():
        bad = int(np.flatnonzero(kept & np.isnan(d))[0])
        raise ValueError(
            f"difficulty is NaN for question {bad}, which R says EIP keeps; pass the EIP result of this same R"
        )
    t1, t2 = (float(v) for v in np.quantile(d[kept], [1 / 3, 2 / 3]))

    tertile = np.full(n_q, -1, dtype=np.int64)
    tertile[all_solved] = 0
    tertile[all_failed] = 2
    tertile[kept & (d <= t1)] = 0
    tertile[kept & (d > t1) & (d <= t2)] = 1
    tertile[kept & (d > t2)] = 2

    credit = np.where(obs, X, 0.0)
    accuracy = np.full((n_m, 3), np.nan)
    n_observed = np.zeros((n_m, 3), dtype=np.int64)
    earned = np.zeros((n_m, 3))
    for t in range(3):
        rows = tertile == t
        n_observed[:, t] = obs[rows].sum(axis=0)
        earned[:, t] = credit[rows].sum(axis=0)
        has = n_observed[:, t] > 0
        accuracy[has, t] = earned[has, t] / n_observed[has, t]
    total = earned.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, earned / total, np.nan)

    family_index = None
    if fam is not None:
        family_index = {f: tuple(int(i) for i in np.flatnonzero(fam == f)) for f in unique_in_order(fam)}

    return TertileAccuracy(
        labels=TERTILES,
        tertile=tertile,
        thresholds=(t1, t2),
        n_questions=np.array([(tertile == t).sum() for t in range(3)]),
        n_all_solved=int(all_solved.sum()),
        n_all_failed=int(all_failed.sum()),
        accuracy=accuracy,
        n_observed=n_observed,
        correct_share=share,
        model_names=names,
        families=family_index,
    )
