"""Question pairs for blind human difficulty judging.

Pure numpy; never imports Django. A study shows evaluators pairs of questions
from the same subject and asks which one is harder. Three strategies pick the
pairs:

``"uniform"`` (default)
    Uniformly random among every distinct same-subject pair of eligible
    questions (each unordered pair equally likely; subjects therefore weigh
    by their number of pairs, ``n_s (n_s - 1) / 2``).
``"stratified_gap"``
    Every candidate pair is ranked by its gap ``|d_i - d_j|`` in the
    reference (EIP) difficulty; the ranking is cut into ``n_strata``
    equal-count strata (tertiles by default, ties broken at random) and
    ``n_pairs`` is split as evenly as possible across the strata, so small,
    medium and large gaps are all represented.
``"methods_disagree"``
    Pairs on which the baselines order the two questions opposite to the
    reference come first (most disagreeing baselines first, ties at random);
    any remaining slots are filled uniformly from the other pairs.

Every strategy returns distinct unordered pairs (never a repeat, never a
question paired with itself), never mixes subjects, never mixes components of
the model-question graph when ``components`` is given (see
:func:`scoring.diagnostics.matrix_diagnostics`) and, by default, only uses
questions whose ``kept`` flag is true (EIP drops questions that every model
solved or every model failed).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._typing import BoolArray, FloatArray
from scoring._validation import as_rng, check_positive_int
from scoring.pairs import FIRST, SECOND, _merge_within, _tie_threshold_exact, _verdicts

__all__ = ["STRATEGIES", "PairSample", "count_possible_pairs", "sample_pairs"]

STRATEGIES = ("uniform", "stratified_gap", "methods_disagree")
ERR_TOO_FEW_PAIRS = (
    "n_pairs={n_pairs:,} but only {n_possible:,} distinct same-subject pairs are possible "
    "from {n_eligible:,} eligible questions"
)


@dataclass(frozen=True)
class PairSample:
    """The pairs chosen for a study.

    Attributes
    ----------
    pairs : ndarray of shape (n_pairs, 2), int64
        Question ids; each row is one unordered pair stored with the smaller id
        first. Rows are in random order.
    strategy : str
        The strategy used.
    n_possible : int
        How many distinct same-subject pairs the eligible questions allow.
    n_eligible : int
        How many questions were eligible (kept, and with a finite reference
        difficulty for the difficulty-based strategies).
    stratum : ndarray of shape (n_pairs,), int64, or None
        ``"stratified_gap"`` only: gap stratum of each pair, 0 = smallest gaps.
    n_disagree : ndarray of shape (n_pairs,), int64, or None
        ``"methods_disagree"`` only: how many baselines order the pair opposite
        to the reference (0 for the uniform fill).
    """

    pairs: NDArray[np.int64]
    strategy: str
    n_possible: int
    n_eligible: int
    stratum: NDArray[np.int64] | None = None
    n_disagree: NDArray[np.int64] | None = None


def count_possible_pairs(subjects: ArrayLike) -> int:
    """Number of distinct unordered same-subject pairs.

    Parameters
    ----------
    subjects : array-like of shape (n_questions,)
        Subject label of each eligible question.

    Returns
    -------
    int
        ``sum_s n_s (n_s - 1) / 2`` over the subjects.

    Examples
    --------
    >>> count_possible_pairs(["a", "a", "a", "b", "b"])
    4
    """
    labels = np.asarray(subjects)
    if labels.ndim != 1:
        raise ValueError(f"subjects must be 1-dimensional; got shape {labels.shape}")
    if labels.size == 0:
        return 0
    _, counts = np.unique(labels, return_counts=True)
    return int((counts * (counts - 1) // 2).sum())


def sample_pairs(
    question_ids: ArrayLike,
    subjects: ArrayLike,
    *,
    n_pairs: int,
    strategy: str = "uniform",
    difficulty: Mapping[str, object] | None = None,
    kept: ArrayLike | None = None,
    components: ArrayLike | None = None,
    reference: str = "eip",
    n_strata: int = 3,
    tie_tolerance: Mapping[str, float] | None = None,
    rng: np.random.Generator | int | None = None,
) -> PairSample:
    """Choose distinct same-subject question pairs for human judging.

    Parameters
    ----------
    question_ids : array-like of int, shape (n_questions,)
        Question ids, all distinct.
    subjects : array-like of shape (n_questions,)
        Subject label of each question (any hashable dtype numpy can sort).
    n_pairs : int
        Number of pairs wanted, >= 1.
    strategy : {"uniform", "stratified_gap", "methods_disagree"}, default "uniform"
        How to choose (see the module docstring).
    difficulty : mapping of str to array-like of shape (n_questions,), optional
        Difficulty per method, higher = harder, NaN = undefined. Needed by
        ``"stratified_gap"`` (the ``reference`` entry) and ``"methods_disagree"``
        (``reference`` plus at least one baseline: every other entry).
        Ignored by ``"uniform"``.
    kept : array-like of bool, shape (n_questions,), optional
        Eligible questions; default all. Pass EIP's kept flags to leave out
        questions every model solved or failed.
    components : array-like of int, shape (n_questions,), optional
        Component of each question in the model-question graph (e.g.
        :attr:`scoring.diagnostics.MatrixDiagnostics.question_component`).
        Given, a pair's two questions always share a component as well as a
        subject: questions no common model answered are never compared.
        Default: one component.
    reference : str, default "eip"
        Key of the reference method in ``difficulty``.
    n_strata : int, default 3
        ``"stratified_gap"`` only: number of equal-count gap strata.
    tie_tolerance : mapping of str to float, optional
        Relative tie tolerance per key of ``difficulty`` (the methods'
        registry ``tie_tolerance``; a missing key: 0, exact). Two values of a
        method within ``tie_tolerance * spread`` of each other (spread over
        the eligible questions) are a tie, as in
        :func:`scoring.pairs.harder_of_pairs`; reference gaps within the
        reference's threshold of each other rank as equal (ties at random).
        So numerical noise decides neither a disagreement nor a stratum.
    rng : numpy.random.Generator, int or None, default None
        Randomness; the same seed and inputs give the same pairs.

    Returns
    -------
    PairSample
        ``pairs`` of shape (n_pairs, 2) with the smaller id first.

    Raises
    ------
    ValueError
        If an argument has the wrong shape or value, ids repeat, the strategy
        is unknown, a needed difficulty is missing or is NaN for an eligible
        question, or fewer than ``n_pairs`` distinct pairs are possible (the
        message says how many are).

    Notes
    -----
    A baseline *disagrees* with the reference on a pair when the two order
    the pair strictly oppositely (one says i is harder, the other j); a tie
    (within the method's ``tie_tolerance``) or a NaN in either method counts
    as no disagreement.

    The difficulty-based strategies enumerate every candidate pair, so they
    need memory proportional to the number of candidate pairs (about 80 MB
    for the 5 million same-category pairs of MMLU-Pro); ``"uniform"`` draws
    pair ranks directly and needs O(n_questions + n_pairs).

    References
    ----------
    EIP paper, section 5 "Human alignment" and appendix H.3: 70 randomly
    ordered question pairs from the same subject category, judged blind.

    Examples
    --------
    >>> s = sample_pairs([10, 11, 12, 20, 21], ["m", "m", "m", "p", "p"], n_pairs=4, rng=0)
    >>> sorted(map(tuple, s.pairs.tolist()))
    [(10, 11), (10, 12), (11, 12), (20, 21)]
    """
    ids, labels = _check_ids_and_subjects(question_ids, subjects)
    n_pairs = check_positive_int(n_pairs, name="n_pairs")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}; got {strategy!r}")
    n_strata = check_positive_int(n_strata, name="n_strata")
    eligible = _check_kept(kept, n=ids.size)
    labels = _within_components(labels, components)
    generator = as_rng(rng)

    if strategy == "uniform":
        ids, labels = ids[eligible], labels[eligible]
        groups = _groups(ids, labels)
        n_possible = _check_enough(groups, n_pairs, n_eligible=ids.size)
        positions = _uniform(groups, n_pairs, generator)
        pairs = _as_pairs(ids, positions[:, 0], positions[:, 1])
        return PairSample(pairs=pairs, strategy=strategy, n_possible=n_possible, n_eligible=ids.size)

    table = _check_difficulty(difficulty, reference=reference, n=ids.size, strategy=strategy)
    ref = table.pop(reference)
    undefined = eligible & np.isnan(ref)
    if undefined.any():
        bad = int(np.flatnonzero(undefined)[0])
        raise ValueError(
            f"difficulty[{reference!r}] is NaN for eligible question id {ids[bad]} "
            f"(position {bad}); {strategy!r} needs a reference difficulty for every kept question"
        )
    tolerance = _check_tolerances(tie_tolerance)
    ids, labels, ref = ids[eligible], labels[eligible], ref[eligible]
    ref_threshold = _tie_threshold_exact(ref, tol=tolerance.get(reference, 0.0))
    baselines = [(values[eligible], _tie_threshold_exact(values[eligible], tol=tolerance.get(name, 0.0)))
                 for name, values in table.items()]
    groups = _groups(ids, labels)
    n_possible = _check_enough(groups, n_pairs, n_eligible=ids.size)
    first, second = _enumerate(groups)
    if strategy == "stratified_gap":
        gap = _merge_within(np.abs(ref[first] - ref[second]), ref_threshold)
        chosen, stratum = _stratified(gap, n_pairs, n_strata, generator)
        order = generator.permutation(n_pairs)
        chosen, stratum = chosen[order], stratum[order]
        pairs = _as_pairs(ids, first[chosen], second[chosen])
        return PairSample(
            pairs=pairs, strategy=strategy, n_possible=n_possible, n_eligible=ids.size, stratum=stratum
        )
    if not baselines:
        raise ValueError(
            f"difficulty needs at least one baseline besides {reference!r} for 'methods_disagree'; "
            f"got only {sorted([reference])}"
        )
    n_disagree = _count_disagreements((ref, ref_threshold), baselines, first, second)
    chosen = _disagree_first(n_disagree, n_pairs, generator)
    order = generator.permutation(n_pairs)
    chosen = chosen[order]
    pairs = _as_pairs(ids, first[chosen], second[chosen])
    return PairSample(
        pairs=pairs,
        strategy=strategy,
        n_possible=n_possible,
        n_eligible=ids.size,
        n_disagree=n_disagree[chosen].astype(np.int64),
    )


# --- validation -----------------------------------------------------------------


def _check_ids_and_subjects(question_ids: ArrayLike, subjects: ArrayLike) -> tuple[NDArray[np.int64], NDArray[Any]]:
    ids = np.asarray(question_ids)
    if ids.ndim != 1:
        raise ValueError(f"question_ids must be 1-dimensional; got shape {ids.shape}")
    if ids.size and ids.dtype.kind not in "iu":
        raise ValueError(f"question_ids must be integers; got dtype {ids.dtype}")
    ids = ids.astype(np.int64)
    labels = np.asarray(subjects)
    if labels.shape != ids.shape:
        raise ValueError(
            f"subjects must have the shape of question_ids {ids.shape}; got {labels.shape}"
        )
    unique, counts = np.unique(ids, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"question_ids must be distinct; {int(unique[counts > 1][0])} repeats")
    return ids, labels


def _check_kept(kept: ArrayLike | None, *, n: int) -> BoolArray:
    if kept is None:
        return np.ones(n, dtype=bool)
    arr = np.asarray(kept)
    if arr.shape != (n,) or arr.dtype != bool:
        raise ValueError(f"kept must be a bool array of shape ({n},); got {arr.dtype} of shape {arr.shape}")
    return arr


def _within_components(labels: NDArray[Any], components: ArrayLike | None) -> NDArray[Any]:
    """Subject labels refined by component: one integer label per (subject, component)."""
    if components is None:
        return labels
    comp = np.asarray(components)
    if comp.shape != labels.shape or (comp.size and comp.dtype.kind not in "iu"):
        raise ValueError(
            f"components must be integers of shape {labels.shape}; got {comp.dtype} of shape {comp.shape}"
        )
    if labels.size == 0:
        return labels
    _, subject = np.unique(labels, return_inverse=True)
    _, block = np.unique(comp, return_inverse=True)
    return subject.astype(np.int64) * (int(block.max()) + 1) + block.astype(np.int64)


def _check_difficulty(
    difficulty: Mapping[str, object] | None, *, reference: str, n: int, strategy: str
) -> dict[str, FloatArray]:
    if difficulty is None or reference not in difficulty:
        have = [] if difficulty is None else sorted(difficulty)
        raise ValueError(f"strategy {strategy!r} needs difficulty[{reference!r}]; got keys {have}")
    table: dict[str, FloatArray] = {}
    for name, values in difficulty.items():
        arr = np.asarray(values, dtype=np.float64)
        if arr.shape != (n,):
            raise ValueError(f"difficulty[{name!r}] must have shape ({n},); got {arr.shape}")
        if np.isinf(arr).any():
            bad = int(np.flatnonzero(np.isinf(arr))[0])
            raise ValueError(f"difficulty[{name!r}] has an infinite value at position {bad}")
        table[name] = arr
    return table


def _check_enough(groups: list[NDArray[np.intp]], n_pairs: int, *, n_eligible: int) -> int:
    n_possible = int(sum(g.size * (g.size - 1) // 2 for g in groups))
    if n_pairs > n_possible:
        raise ValueError(
            ERR_TOO_FEW_PAIRS.format(n_pairs=n_pairs, n_possible=n_possible, n_eligible=n_eligible)
        )
    return n_possible


# --- kernels (clean input assumed) ----------------------------------------------


def _groups(ids: NDArray[np.int64], labels: NDArray[Any]) -> list[NDArray[np.intp]]:
    """Positions of the questions of each subject.

    Subjects come in sorted label order, positions sorted by question id (so
    results do not depend on input order).
    """
    if ids.size == 0:
        return []
    _, inverse = np.unique(labels, return_inverse=True)
    order = np.lexsort((ids, inverse))
    bounds = np.flatnonzero(np.diff(inverse[order])) + 1
    return list(np.split(order, bounds))


def _uniform(groups: list[NDArray[np.intp]], n_pairs: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Draw ``n_pairs`` distinct same-subject pairs uniformly.

    Draws ranks in [0, n_possible) without replacement and unranks each into
    (subject, i, j) with i < j in the row-major order of ``np.triu_indices``;
    returns positions of shape (n_pairs, 2).
    """
    sizes = np.array([g.size for g in groups], dtype=np.int64)
    counts = sizes * (sizes - 1) // 2
    starts = np.concatenate(([0], np.cumsum(counts)))
    ranks = rng.choice(int(starts[-1]), size=n_pairs, replace=False)
    which = np.searchsorted(starts, ranks, side="right") - 1
    out = np.empty((n_pairs, 2), dtype=np.int64)
    for g in np.unique(which):
        mask = which == g
        i, j = _unrank(ranks[mask] - starts[g], int(sizes[g]))
        out[mask, 0] = groups[g][i]
        out[mask, 1] = groups[g][j]
    return out


def _unrank(r: NDArray[np.int64], n: int) -> tuple[NDArray[np.intp], NDArray[np.int64]]:
    """Ranks r of the pairs (i, j), i < j < n, in row-major order."""
    rows = np.arange(n - 1, dtype=np.int64)
    offsets = rows * (2 * n - rows - 1) // 2  # row i starts at i (2n - i - 1) / 2
    i = np.searchsorted(offsets, r, side="right") - 1
    return i, i + 1 + (r - offsets[i])


def _enumerate(groups: list[NDArray[np.intp]]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Every same-subject pair as two position arrays, in the rank order of _uniform."""
    firsts: list[NDArray[np.intp]] = []
    seconds: list[NDArray[np.intp]] = []
    for members in groups:
        i, j = np.triu_indices(members.size, k=1)
        firsts.append(members[i])
        seconds.append(members[j])
    if not firsts:
        return np.empty(0, np.intp), np.empty(0, np.intp)
    return np.concatenate(firsts), np.concatenate(seconds)


def _stratified(
    gap: FloatArray, n_pairs: int, n_strata: int, rng: np.random.Generator
) -> tuple[NDArray[np.intp], NDArray[np.int64]]:
    """Draw pairs from equal-count strata of the gap ranking (ties at random).

    ``n_pairs`` is split as evenly as possible, the first ``n_pairs % n_strata``
    strata taking one more. ``np.array_split`` gives the first ``n % k`` strata
    one more member, so a stratum is never smaller than its quota when
    n_pairs <= len(gap).
    """
    shuffle = rng.permutation(gap.size)
    ranking = shuffle[np.argsort(gap[shuffle], kind="stable")]
    strata = np.array_split(ranking, n_strata)
    quotas = [len(q) for q in np.array_split(np.arange(n_pairs), n_strata)]
    chosen: list[NDArray[np.intp]] = []
    labels: list[NDArray[np.int64]] = []
    for s, (members, quota) in enumerate(zip(strata, quotas)):
        chosen.append(rng.choice(members, size=quota, replace=False))
        labels.append(np.full(quota, s, dtype=np.int64))
    return np.concatenate(chosen), np.concatenate(labels)


def _count_disagreements(
    ref: tuple[FloatArray, Fraction],
    baselines: list[tuple[FloatArray, Fraction]],
    first: NDArray[np.intp],
    second: NDArray[np.intp],
) -> NDArray[np.int16]:
    """Per pair, how many baselines order it strictly opposite to the reference.

    Each method comes with its absolute tie threshold; verdicts as
    :func:`scoring.pairs.harder_of_pairs` (ties and NaN never disagree).
    """
    values, threshold = ref
    ref_verdict = _verdicts(values[first], values[second], threshold)
    count = np.zeros(first.size, dtype=np.int16)
    for values, threshold in baselines:
        verdict = _verdicts(values[first], values[second], threshold)
        opposite = ((ref_verdict == FIRST) & (verdict == SECOND)) | ((ref_verdict == SECOND) & (verdict == FIRST))
        count += opposite.astype(np.int16)
    return count


def _check_tolerances(tie_tolerance: Mapping[str, float] | None) -> dict[str, float]:
    if tie_tolerance is None:
        return {}
    out = {}
    for name, value in tie_tolerance.items():
        tol = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else float("nan")
        if not np.isfinite(tol) or tol < 0:
            raise ValueError(f"tie_tolerance[{name!r}] must be a finite number >= 0; got {value!r}")
        out[name] = tol
    return out


def _disagree_first(n_disagree: NDArray[np.int16], n_pairs: int, rng: np.random.Generator) -> NDArray[np.intp]:
    """Most-disagreeing pairs first (ties at random), then the rest uniformly."""
    shuffle = rng.permutation(n_disagree.size)
    ranking = shuffle[np.argsort(-n_disagree[shuffle], kind="stable")]
    n_first = min(int((n_disagree > 0).sum()), n_pairs)
    head = ranking[:n_first]
    rest = ranking[n_first:]
    fill = rng.choice(rest, size=n_pairs - n_first, replace=False) if n_pairs > n_first else rest[:0]
    return np.concatenate([head, fill])


def _as_pairs(ids: NDArray[np.int64], first: NDArray[np.intp], second: NDArray[np.intp]) -> NDArray[np.int64]:
    a, b = ids[first], ids[second]
    return np.column_stack([np.minimum(a, b), np.maximum(a, b)]).astype(np.int64)
