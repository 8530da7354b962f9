"""A difficulty method against an external human difficulty label.

A *label* is one number per question from outside the response matrix: an
exam level, a human solve rate, a difficulty fitted on people's answers. This
module compares one method's difficulty with it in two ways:

* Spearman's rho over every labelled question, with a percentile bootstrap
  interval (questions resampled);
* same-subject **pair agreement** over *every* pair of labelled questions of
  one subject whose labels differ by more than a margin, counted without
  materialising the pairs: the questions of each subject are sorted by label,
  the pairs a question forms with the questions ``margin`` above it are one
  contiguous suffix, and the pairs the method orders the same way (or ties)
  are counted with a merge-sort tree of prefix dominance counts
  (``O(n log^2 n)`` time). The tree is never held whole: each level is
  built, used and dropped, so memory is a few arrays of ``n`` whatever the
  number of pairs. The bootstrap (questions resampled with multinomial
  counts, the pair structure kept) evaluates a block of replicates per pass
  over the levels, with the replicates' counts as weights.

Conventions (those of :func:`scoring.pairs.method_agreement`): a pair is
*scored* when its two labels differ by more than ``margin``; the method's
verdict on it is agree, disagree, a tie (values within the registry's tie
tolerance, merged by :func:`scoring.pairs.merge_ties`) or undefined (no value
for one of the two questions). ``agreement`` counts ties and undefined
verdicts as misses; ``agreement_excluding_ties`` is over the pairs the method
decided; ``kappa = 2 p_o - 1`` is the orientation-free Cohen's kappa of
:func:`scoring.pairs.pair_kappa` (``p_e = 1/2``).

Also here: difficulty of a *human response set* (people's credit per
question) with bootstrap intervals over persons, and pairwise judgments
derived from it.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._quantiles import column_nanquantile
from scoring._typing import FloatArray
from scoring._validation import check_int, check_number
from scoring.analyses._common import Correlation, correlation
from scoring.exact import intended_value, suffix_start_exact
from scoring.pairs import FIRST, SECOND, TIE, UNDEFINED, merge_ties

__all__ = [
    "HUMAN_DIFFICULTY_METHODS",
    "HumanDifficulty",
    "LabelComparison",
    "MarginAgreement",
    "compare_with_label",
    "human_difficulty",
    "judgments_from_responses",
    "pair_agreement_counts_slow",
]

#: How a human response set becomes a difficulty label (registry keys of :mod:`scoring.methods`).
HUMAN_DIFFICULTY_METHODS = ("accuracy", "irt_1pl")

ERR_SHAPE = "{name} must be 1-D with {n} entries (one per question); got shape {shape}"
ERR_MARGIN = "margins must be finite numbers >= 0; got {value!r}"
ERR_LEVEL = "level must be a number in (0, 1); got {value!r}"
ERR_N_BOOT = "n_boot must be an integer >= 0; got {value!r}"
ERR_TOL = "tie_tolerance must be a finite number >= 0; got {value!r}"
ERR_R = "R must be 2-D (n_questions, n_persons) with credit in [0, 1] or NaN; {detail}"
ERR_METHOD = "method must be one of {methods}; got {value!r}"
ERR_PAIRS = "pairs must be an integer array of shape (n_pairs, 2) with rows of R; {detail}"

#: Bootstrap replicates evaluated together at most.
_CHUNK = 16
#: Bytes of one (replicates x questions) float block of the bootstrap: on many questions fewer replicates
#: go together, so that memory stays a few such blocks whatever the number of questions.
_BLOCK_BYTES = 32 << 20
#: Bytes per resampled question of the Spearman bootstrap (indices, values, scipy's ranks and their sort).
_RANK_BYTES = 64
#: Queries gathered at a time when the counts are summed (bounds the temporaries to B x _SLICE floats).
_SLICE = 1 << 16


@dataclass(frozen=True)
class MarginAgreement:
    """Same-subject pair agreement of a method with a label at one margin.

    Attributes
    ----------
    margin : float
        A pair is scored when ``|label_i - label_j| > margin``.
    n_pairs : int
        Scored pairs (same subject, both labelled, labels apart by more than
        ``margin``).
    n_label_ties : int
        Same-subject pairs of labelled questions left out because their
        labels differ by at most ``margin`` (at margin 0: equal labels).
    n_agree, n_disagree, n_method_ties, n_undefined : int
        Scored pairs the method orders as the label does, the other way,
        within its tie tolerance, or not at all (no value for one question).
        They sum to ``n_pairs``.
    agreement : float or None
        ``n_agree / n_pairs`` (ties and undefined count as misses).
    agreement_excluding_ties : float or None
        ``n_agree / (n_agree + n_disagree)``.
    kappa : float or None
        ``2 * agreement_excluding_ties - 1``.
    agreement_ci, agreement_excluding_ties_ci, kappa_ci : tuple of float or None
        Percentile bootstrap intervals (questions resampled); None without
        replicates or when undefined in every replicate.
    """

    margin: float
    n_pairs: int
    n_label_ties: int
    n_agree: int
    n_disagree: int
    n_method_ties: int
    n_undefined: int
    agreement: float | None
    agreement_excluding_ties: float | None
    kappa: float | None
    agreement_ci: tuple[float, float] | None
    agreement_excluding_ties_ci: tuple[float, float] | None
    kappa_ci: tuple[float, float] | None


@dataclass(frozen=True)
class LabelComparison:
    """A method's difficulty against a label (:func:`compare_with_label`).

    Attributes
    ----------
    n_questions : int
        Labelled questions.
    n_questions_undefined : int
        Labelled questions without a value of the method.
    n_subjects : int
        Distinct subjects among the labelled questions.
    spearman : Correlation
        Spearman's rho of the method (ties merged) with the label over the
        labelled questions with a method value; positive = the method agrees.
    spearman_ci : tuple of float or None
        Percentile bootstrap interval of rho.
    margins : tuple of MarginAgreement
        One per requested margin, in the order given.
    n_boot : int
    level : float
    """

    n_questions: int
    n_questions_undefined: int
    n_subjects: int
    spearman: Correlation
    spearman_ci: tuple[float, float] | None
    margins: tuple[MarginAgreement, ...]
    n_boot: int
    level: float


# --------------------------------------------------------------------------- checks


def _vector(x: ArrayLike, *, name: str, n: int | None = None) -> FloatArray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1 or (n is not None and arr.size != n):
        raise ValueError(ERR_SHAPE.format(name=name, n=arr.size if n is None else n, shape=arr.shape))
    return arr


def _check_level(level: object) -> float:
    return check_number(level, name="level", low=0.0, high=1.0, low_open=True, high_open=True, message=ERR_LEVEL)


def _check_n_boot(n_boot: object) -> int:
    return check_int(n_boot, name="n_boot", low=0, message=ERR_N_BOOT)


def _check_margins(margins: Sequence[float]) -> tuple[float, ...]:
    out = []
    for m in margins:
        if isinstance(m, bool) or not isinstance(m, int | float | np.integer | np.floating) \
                or not math.isfinite(m) or m < 0:
            raise ValueError(ERR_MARGIN.format(value=m))
        out.append(float(m))
    return tuple(out)


# --------------------------------------------------------------------------- the counting kernel


class _Layout:
    """Labelled questions sorted by (subject, label): order, labels and the end of each one's subject."""

    def __init__(self, labels: FloatArray, subjects: NDArray[np.int64]) -> None:
        self.order = np.lexsort((labels, subjects))
        self.label = labels[self.order]
        subject = subjects[self.order]
        n = self.label.size
        self.n = n
        cuts = np.flatnonzero(subject[1:] != subject[:-1]) + 1
        self.starts = np.r_[0, cuts].astype(np.int64) if n else np.empty(0, np.int64)
        self.ends = np.r_[cuts, n].astype(np.int64) if n else np.empty(0, np.int64)
        self.seg_end = np.repeat(self.ends, self.ends - self.starts)
        self.n_subjects = int(self.starts.size)

    def suffix_start(self, margin: float) -> NDArray[np.int64]:
        """First position of the same subject whose label exceeds ``label + margin`` (exactly)."""
        out = np.empty(self.n, dtype=np.int64)
        for a, b in zip(self.starts.tolist(), self.ends.tolist()):
            out[a:b] = suffix_start_exact(self.label, margin, start=a, stop=b)
        return out

    def same_subject_pairs(self) -> int:
        sizes = self.ends - self.starts
        return int((sizes * (sizes - 1) // 2).sum())


def _ranks(v: FloatArray) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Dense ranks of the finite values (0 elsewhere) and where the values are finite."""
    defined = np.isfinite(v)
    rank = np.zeros(v.size, dtype=np.int64)
    if defined.any():
        rank[defined] = np.unique(v[defined], return_inverse=True)[1].reshape(-1)
    return rank, defined


def _gather_dot(cw: NDArray[Any], hi: NDArray[np.int64], lo: NDArray[np.int64], w: NDArray[Any],
                q: NDArray[np.int64] | None = None) -> NDArray[Any]:
    """``sum_t w[:, q_t] * (cw[:, hi_t] - cw[:, lo_t])`` per row, ``_SLICE`` queries at a time."""
    out = np.zeros(cw.shape[0], dtype=cw.dtype)
    for s in range(0, hi.size, _SLICE):
        e = s + _SLICE
        part = cw[:, hi[s:e]] - cw[:, lo[s:e]]
        part *= w[:, s:e] if q is None else w[:, q[s:e]]
        out += part.sum(axis=1)
    return out


def _pair_sums(rank: NDArray[np.int64], start: NDArray[np.int64], end: NDArray[np.int64], weights: NDArray[Any],
               weights_defined: NDArray[Any]) -> dict[str, NDArray[Any]]:
    """Weighted counts of the pairs ``(i, j)``, ``start[i] <= j < end[i]``, per row of the weights.

    ``weights`` (B, n) weigh every question, ``weights_defined`` the same
    with 0 where the method has no value; a pair weighs the product of its
    two questions' weights. Returns arrays of shape (B,): ``scored`` (every
    pair), ``defined`` (both values defined), ``agree`` (``rank[j] >
    rank[i]``) and ``ties`` (equal ranks), the last two over defined pairs.

    The dominance counts ``rank[j] > rank[i]`` over ``j < p`` come from a
    merge-sort tree over positions, one level at a time (blocks of ``2**k``
    positions sorted by rank); a level is used and dropped, so memory is a
    few arrays of ``n`` plus one ``(B, n)`` cumulative sum.
    """
    n = rank.size
    dtype = np.int64 if weights.dtype.kind in "biu" else np.float64
    n_rep = weights.shape[0]
    cw = np.zeros((n_rep, n + 1), dtype=dtype)
    np.cumsum(weights, axis=1, dtype=dtype, out=cw[:, 1:])
    scored = _gather_dot(cw, end, start, weights)
    np.cumsum(weights_defined, axis=1, dtype=dtype, out=cw[:, 1:])
    decided = _gather_dot(cw, end, start, weights_defined)
    agree = np.zeros(n_rep, dtype=dtype)
    ties = np.zeros(n_rep, dtype=dtype)
    k_rank = int(rank.max()) + 2 if n else 1
    order = np.arange(n, dtype=np.int64)
    skey = order * k_rank + rank
    k = 0
    while (1 << k) <= n:
        if k:  # blocks of 2**k sorted by rank: merge the sorted halves (a stable sort of two runs per block)
            del skey
            key = rank[order]
            key += (order >> k) * k_rank
            sub = np.argsort(key, kind="stable")
            skey = key[sub]
            del key
            order = order[sub]
            del sub
        np.cumsum(weights_defined[:, order], axis=1, dtype=dtype, out=cw[:, 1:])
        for points, sign in ((end, 1), (start, -1)):
            # a prefix [0, p) uses the level's block (p >> k) - 1 when bit k of p is set
            q = np.flatnonzero((points >> k) & 1)
            block = points[q]
            block >>= k
            block -= 1
            target = block * k_rank
            target += rank[q]
            lo = np.searchsorted(skey, target, side="left")
            mid = np.searchsorted(skey, target, side="right")
            del target
            block += 1
            block <<= k  # the block's end: hi
            ties += sign * _gather_dot(cw, mid, lo, weights_defined, q)
            del lo
            agree += sign * _gather_dot(cw, block, mid, weights_defined, q)
            del q, block, mid
        k += 1
    return {"scored": scored, "defined": decided, "agree": agree, "ties": ties}


def _ratio(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


def _percentile(values: FloatArray, level: float) -> tuple[float, float] | None:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    lo, hi = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def _chunk(n: int, *, bytes_per_value: int = 8) -> int:
    """Replicates evaluated together on ``n`` questions: at most ``_CHUNK``, a block within ``_BLOCK_BYTES``."""
    return max(1, min(_CHUNK, _BLOCK_BYTES // max(1, bytes_per_value * n)))


def _subject_codes(subjects: NDArray[np.object_]) -> NDArray[np.int64]:
    """Each subject's position among the distinct subjects (as text), sorted."""
    code: dict[str, int] = {}
    raw = np.fromiter((code.setdefault(str(s), len(code)) for s in subjects), dtype=np.int64, count=subjects.size)
    names = sorted(code)
    remap = np.empty(len(names), dtype=np.int64)
    remap[[code[s] for s in names]] = np.arange(len(names))
    return remap[raw]


def _margin_agreements(values: FloatArray, lab: FloatArray, subject_codes: NDArray[np.int64],
                       margins_t: tuple[float, ...], *, n_boot: int, level: float,
                       gen: np.random.Generator) -> tuple[list[MarginAgreement], int]:
    """Pair agreement per margin with its bootstrap (draws ``n_boot`` multinomial rows); and the subjects."""
    layout = _Layout(lab, subject_codes)
    n = layout.n
    n_same = layout.same_subject_pairs()
    rank, defined = _ranks(values[layout.order])
    starts = [layout.suffix_start(margin) for margin in margins_t]
    end = layout.seg_end
    del layout.label

    points = []
    for start in starts:
        exact = _pair_sums(rank, start, end, np.ones((1, n), dtype=np.uint8), defined.view(np.uint8)[None])
        points.append({k: int(v[0]) for k, v in exact.items()})
    reps: list[dict[str, list[FloatArray]]] = [{key: [] for key in ("scored", "agree", "defined", "ties")}
                                               for _ in margins_t]
    if n_boot and n:
        p = np.full(n, 1.0 / n)
        step = _chunk(n)
        for i in range(0, n_boot, step):
            w = gen.multinomial(n, p, size=min(step, n_boot - i))[:, layout.order].astype(np.float64)
            wd = w * defined
            for start, rep in zip(starts, reps):
                weighted = _pair_sums(rank, start, end, w, wd)
                for key, got in rep.items():
                    got.append(weighted[key])
            del w, wd

    results = []
    for margin, c, rep in zip(margins_t, points, reps):
        n_pairs, agree, ties = c["scored"], c["agree"], c["ties"]
        dis = c["defined"] - agree - ties
        p_x = _ratio(agree, agree + dis)
        ci: dict[str, tuple[float, float] | None] = {"a": None, "x": None, "k": None}
        if rep["scored"]:
            sc, ag, de = (np.concatenate(rep[key]) for key in ("scored", "agree", "defined"))
            de = de - np.concatenate(rep["ties"])  # agree + disagree
            with np.errstate(invalid="ignore", divide="ignore"):
                a_rep, x_rep = ag / sc, ag / de
            ci = {"a": _percentile(a_rep, level), "x": _percentile(x_rep, level),
                  "k": _percentile(2 * x_rep - 1, level)}
        results.append(MarginAgreement(
            margin=margin, n_pairs=n_pairs, n_label_ties=n_same - n_pairs, n_agree=agree, n_disagree=dis,
            n_method_ties=ties, n_undefined=n_pairs - agree - dis - ties, agreement=_ratio(agree, n_pairs),
            agreement_excluding_ties=p_x, kappa=None if p_x is None else (2 * agree - agree - dis) / (agree + dis),
            agreement_ci=ci["a"], agreement_excluding_ties_ci=ci["x"], kappa_ci=ci["k"],
        ))
    return results, layout.n_subjects


def compare_with_label(
    difficulty: ArrayLike,
    labels: ArrayLike,
    subjects: ArrayLike,
    *,
    margins: Sequence[float] = (0.0,),
    label_higher_is_harder: bool = True,
    tie_tolerance: float = 1e-9,
    n_boot: int = 200,
    level: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> LabelComparison:
    """Compare a method's question difficulty with a human difficulty label.

    Parameters
    ----------
    difficulty : array-like of shape (n_questions,)
        The method's difficulty, higher = harder; NaN = no value.
    labels : array-like of shape (n_questions,)
        The label; NaN = unlabelled (the question is left out everywhere).
    subjects : array-like of shape (n_questions,)
        Any subject per question, compared as text (``str``); pairs are
        formed within a subject.
    margins : sequence of float >= 0, default (0.0,)
        A pair counts when ``|label_i - label_j| > margin``, one result per
        margin.
    label_higher_is_harder : bool, default True
        Direction of the label (False for a solve rate).
    tie_tolerance : float, default 1e-9
        The method's relative tie tolerance (registry ``tie_tolerance``):
        values within ``tie_tolerance * spread`` over the labelled questions
        are merged (:func:`scoring.pairs.merge_ties`) and tie.
    n_boot : int, default 200
        Bootstrap replicates (labelled questions resampled with
        replacement, pairs formed among the resampled questions); 0 = none.
    level : float, default 0.95
        Coverage of the percentile intervals.
    rng : Generator, int or None
        Draws, in this order: ``n_boot`` rows of multinomial counts
        (``generator.multinomial(n, [1/n] * n)``, one per replicate, the
        pair bootstrap), then ``n_boot`` rows of ``integers(0, m, m)`` (the
        Spearman bootstrap over the ``m`` questions with a value); drawn a
        few rows at a time, which gives the same numbers as drawing them
        all at once.

    Returns
    -------
    LabelComparison

    Raises
    ------
    ValueError
        On shapes that differ, a negative or non-finite margin, a bad
        ``level``, ``n_boot`` or ``tie_tolerance``.

    Notes
    -----
    Nothing of size ``n_pairs`` is built, and neither is the merge-sort
    tree as a whole: each level is built, used and dropped, so memory is a
    few ``int64`` arrays of ``n_questions`` per margin plus, for the
    bootstrap, a few blocks of ``B x n_questions`` floats, where ``B``
    replicates go together (at most 16, fewer when ``n_questions`` is large:
    one block stays within 32 MiB; the Spearman bootstrap, whose ranking
    costs more per value, goes one replicate at a time from about 260,000
    questions). The point counts are exact ``int64`` sums; a replicate's
    weighted counts are whole numbers of at most ``n_questions**2 / 2``,
    exact in float64 below ``2**53`` (about 10**8 questions). Time is
    ``O(n log^2 n)`` per margin and pass, a pass evaluating ``B``
    replicates: at a million questions a pass takes tens of seconds, so a
    bootstrap of that size is slow (hours for 200 replicates and 8
    methods) but stays within the same memory.

    Examples
    --------
    >>> r = compare_with_label([1.0, 2.0, 3.0], [1, 2, 3], ["s", "s", "s"], n_boot=0)
    >>> r.margins[0].n_pairs, r.margins[0].n_agree, r.spearman.value
    (3, 3, 1.0)
    """
    d = _vector(difficulty, name="difficulty")
    lab = _vector(labels, name="labels", n=d.size)
    subj = np.asarray(subjects, dtype=object)
    if subj.ndim != 1 or subj.size != d.size:
        raise ValueError(ERR_SHAPE.format(name="subjects", n=d.size, shape=subj.shape))
    margins_t = _check_margins(margins)
    level = _check_level(level)
    n_boot = _check_n_boot(n_boot)
    if isinstance(tie_tolerance, bool) or not isinstance(tie_tolerance, int | float) \
            or not math.isfinite(tie_tolerance) or tie_tolerance < 0:
        raise ValueError(ERR_TOL.format(value=tie_tolerance))
    gen = np.random.default_rng(rng)

    keep = np.isfinite(lab)
    lab = lab[keep] if label_higher_is_harder else -lab[keep]
    values = merge_ties(d[keep], tol=float(tie_tolerance))
    margin_results, n_subjects = _margin_agreements(
        values, lab, _subject_codes(subj[keep] if not keep.all() else subj), margins_t, n_boot=n_boot, level=level,
        gen=gen)
    # the pair kernel's arrays are gone by now: the Spearman coefficient (scipy's copies) does not stack on them
    rho = correlation(values, lab, method="spearman")
    rho_ci = _spearman_ci(values, lab, n_boot=n_boot, level=level, gen=gen) if rho.defined else None
    return LabelComparison(
        n_questions=int(values.size), n_questions_undefined=int((~np.isfinite(values)).sum()), n_subjects=n_subjects,
        spearman=rho, spearman_ci=rho_ci, margins=tuple(margin_results), n_boot=n_boot, level=level,
    )


def _spearman_ci(x: FloatArray, y: FloatArray, *, n_boot: int, level: float,
                 gen: np.random.Generator) -> tuple[float, float] | None:
    from scipy import stats  # scipy.stats costs ~1 s at import: loaded where used, not at site start

    both = np.isfinite(x) & np.isfinite(y)
    x, y = x[both], y[both]
    n = x.size
    step = _chunk(n, bytes_per_value=_RANK_BYTES)
    out = []
    for i in range(0, n_boot, step):
        idx = gen.integers(0, n, size=(min(step, n_boot - i), n))
        rx = stats.rankdata(x[idx], axis=1)
        ry = stats.rankdata(y[idx], axis=1)
        del idx
        rx -= rx.mean(axis=1, keepdims=True)
        ry -= ry.mean(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append((rx * ry).sum(axis=1) / np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1)))
    return _percentile(np.concatenate(out), level) if out else None


def pair_agreement_counts_slow(
    difficulty: ArrayLike, labels: ArrayLike, subjects: ArrayLike, *, margin: float = 0.0,
    label_higher_is_harder: bool = True, tie_tolerance: float = 1e-9,
) -> dict[str, int]:
    """Enumerate every same-subject pair (a slow, obvious reference for tests).

    Returns
    -------
    dict
        ``n_pairs``, ``n_label_ties``, ``n_agree``, ``n_disagree``,
        ``n_method_ties``, ``n_undefined`` as in :class:`MarginAgreement`.
    """
    d = _vector(difficulty, name="difficulty")
    lab = _vector(labels, name="labels", n=d.size)
    subj = [str(s) for s in np.asarray(subjects, dtype=object)]
    keep = np.flatnonzero(np.isfinite(lab))
    v = merge_ties(d[keep], tol=tie_tolerance)
    lab = lab[keep] if label_higher_is_harder else -lab[keep]
    out = dict.fromkeys(("n_pairs", "n_label_ties", "n_agree", "n_disagree", "n_method_ties", "n_undefined"), 0)
    for a in range(keep.size):
        for b in range(a + 1, keep.size):
            if subj[keep[a]] != subj[keep[b]]:
                continue
            if abs(intended_value(float(lab[a])) - intended_value(float(lab[b]))) <= intended_value(margin):
                out["n_label_ties"] += 1
                continue
            out["n_pairs"] += 1
            hard, easy = (a, b) if lab[a] > lab[b] else (b, a)
            if not (np.isfinite(v[hard]) and np.isfinite(v[easy])):
                out["n_undefined"] += 1
            elif v[hard] > v[easy]:
                out["n_agree"] += 1
            elif v[hard] < v[easy]:
                out["n_disagree"] += 1
            else:
                out["n_method_ties"] += 1
    return out


# --------------------------------------------------------------------------- human response sets


@dataclass(frozen=True)
class HumanDifficulty:
    """Difficulty of questions from people's answers, with intervals over persons.

    Attributes
    ----------
    method : str
        Registry key: ``"accuracy"`` (1 - solve rate, in [0, 1]) or
        ``"irt_1pl"`` (1PL difficulty, logits); higher = harder.
    difficulty : ndarray of float64, shape (n_questions,)
        NaN where no person answered the question.
    low, high : ndarray of float64, shape (n_questions,)
        Percentile bootstrap interval (persons resampled); NaN without
        replicates.
    n_persons : int
    n_boot : int
    level : float
    """

    method: str
    difficulty: FloatArray
    low: FloatArray
    high: FloatArray
    n_persons: int
    n_boot: int
    level: float


def _check_R(R: ArrayLike) -> FloatArray:
    arr = np.asarray(R, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(ERR_R.format(detail=f"got shape {arr.shape}"))
    bad = ~np.isnan(arr) & ((arr < 0) | (arr > 1))
    if bad.any():
        i, j = (int(t[0]) for t in np.nonzero(bad))
        raise ValueError(ERR_R.format(detail=f"got {float(arr[i, j])!r} at row {i}, column {j}"))
    return arr


def _difficulty_of(R: FloatArray, method: str) -> FloatArray:
    from scoring.method_runners import MethodInput
    from scoring.methods import get_method, run_method

    out = run_method(method, MethodInput(R=R, question_groups=np.zeros(R.shape[0], dtype=np.int64)))
    spec = get_method(method)
    column = spec.difficulty_column
    assert column is not None  # both human methods give a question difficulty
    return spec.as_harder(out.question_columns[column])


def human_difficulty(
    R: ArrayLike, *, method: str = "accuracy", n_boot: int = 200, level: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> HumanDifficulty:
    """Difficulty of each question from people's credit, with bootstrap intervals.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_persons)
        Credit in [0, 1], NaN = the person did not answer.
    method : {"accuracy", "irt_1pl"}, default "accuracy"
        A registry method (:mod:`scoring.methods`) run on ``R``.
    n_boot : int, default 200
        Replicates resampling persons (columns) with replacement; 0 = none.
    level : float, default 0.95
    rng : Generator, int or None

    Returns
    -------
    HumanDifficulty

    Raises
    ------
    ValueError
        On a bad ``R`` (naming the row and column), ``method``, ``n_boot`` or
        ``level``.

    Examples
    --------
    >>> h = human_difficulty([[1, 1], [1, 0], [0, 0]], n_boot=0)
    >>> h.difficulty.tolist()
    [0.0, 0.5, 1.0]
    """
    arr = _check_R(R)
    if method not in HUMAN_DIFFICULTY_METHODS:
        raise ValueError(ERR_METHOD.format(methods=list(HUMAN_DIFFICULTY_METHODS), value=method))
    n_boot = _check_n_boot(n_boot)
    level = _check_level(level)
    gen = np.random.default_rng(rng)
    point = _difficulty_of(arr, method)
    low = np.full(arr.shape[0], np.nan)
    high = np.full(arr.shape[0], np.nan)
    if n_boot and arr.shape[1]:
        reps = np.stack([_difficulty_of(arr[:, gen.integers(0, arr.shape[1], arr.shape[1])], method)
                         for _ in range(n_boot)])
        ok = np.isfinite(reps).any(axis=0)
        if ok.any():
            low[ok], high[ok] = column_nanquantile(reps[:, ok], np.array([(1 - level) / 2, (1 + level) / 2]))
    return HumanDifficulty(method=method, difficulty=point, low=low, high=high, n_persons=int(arr.shape[1]),
                           n_boot=n_boot, level=level)


def judgments_from_responses(R: ArrayLike, pairs: ArrayLike) -> NDArray[np.int8]:
    """Pairwise "which is harder" judgments implied by people's answers.

    A person who got one question of a pair right and the other wrong (more
    credit on one) judges the one with less credit harder.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_persons)
        Credit in [0, 1], NaN = not answered.
    pairs : array-like of int, shape (n_pairs, 2)
        Rows of ``R``: ``(question_a, question_b)``.

    Returns
    -------
    ndarray of int8, shape (n_pairs, n_persons)
        :data:`scoring.pairs.FIRST` (question_a harder: less credit on it),
        ``SECOND``, ``TIE`` (equal credit: no preference) or ``UNDEFINED``
        (the person did not answer both).

    Examples
    --------
    >>> v = judgments_from_responses([[1, 0], [0, 0]], [[0, 1]])  # person 0 failed only question 1
    >>> v.tolist() == [[SECOND, TIE]]
    True
    """
    arr = _check_R(R)
    p = np.asarray(pairs)
    if p.ndim != 2 or p.shape[1] != 2 or (p.size and p.dtype.kind not in "iu"):
        raise ValueError(ERR_PAIRS.format(detail=f"got shape {p.shape}, dtype {p.dtype}"))
    if p.size and (p.min() < 0 or p.max() >= arr.shape[0]):
        raise ValueError(ERR_PAIRS.format(detail=f"got a row outside 0..{arr.shape[0] - 1}"))
    a, b = arr[p[:, 0]], arr[p[:, 1]]
    out = np.full(a.shape, int(TIE), dtype=np.int8)
    out[a < b] = FIRST
    out[a > b] = SECOND
    out[np.isnan(a) | np.isnan(b)] = UNDEFINED
    return out
