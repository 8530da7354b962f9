"""Adaptive studies: choose an evaluator's next pair while the study runs.

An adaptive study (:data:`~annotate.models.PairStrategy.ADAPTIVE`) draws no
pair up front. It keeps a pool of eligible questions
(:class:`~annotate.models.AdaptivePoolQuestion`, fixed at creation) and,
when an evaluator's next pair is served (:func:`adaptive_next_pair`, called by
:func:`annotate.studies.services.judging.judging_assign_next` on a POST, never on a
GET), the kernel :mod:`scoring.adaptive_pairs` chooses it from

* the study's votes so far (skips are not votes; evaluators excluded from the
  analyses and attention checks are left out), oriented by which question
  was judged harder,
* the pairs this evaluator was already shown (never shown twice), and the
  study's attention checks (never chosen as regular pairs),
* the pairs other evaluators are judging now (shown, not answered yet):
  left out while any other pair is left, since their votes are coming,
* the pool's blocks (same subject and component of the model-question graph).

The chosen pair's :class:`~annotate.models.Pair` row is made then, or found
when another evaluator's choice made it first (race-safe: the unique
constraints on the unordered pair and on the position; a conflicting insert
is skipped, ``ON CONFLICT DO NOTHING``, so it needs no savepoint, and the
pair is looked up or the insert tried again at the next free position).

When the evaluator's answer and their next assignment commit together
(:func:`annotate.studies.services.judging.judgment_submit` on a study with
no stopping rule left to check), the next pair is chosen before that
transaction (:func:`adaptive_next_ahead`, reads only), from the study's
reads with the answer counted as the committed judgment will count
(:class:`PendingAnswer`): the same votes, shown pairs and seeds as a choice
made after the commit, so the same pair, while the choice's arithmetic
holds no write lock and the answer costs one commit instead of three.

Attention checks are drawn at creation; each evaluator meets every check once,
at slots of their sequence drawn from their participation seed.

Nothing here reaches the evaluator but the pair itself.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.db.models import Max, Q, QuerySet

from annotate.core import PreparedInsert, PreparedQuery
from annotate.models import Pair, Participation, Study
from annotate.studies.services.adaptive_reads import StudyReads, study_reads, study_reads_forget
from scoring.adaptive_pairs import AdaptiveConfig, ScaleEstimate, choose_next_pair, scale_estimate
from scoring.exceptions import ConvergenceError

logger = logging.getLogger(__name__)

#: Second element of the seed sequences (with the participation seed) of an adaptive choice.
CHOICE_STREAM = 11
#: ... and of the slots at which an evaluator meets the attention checks.
CHECK_SLOT_STREAM = 12
#: Attempts at inserting a new pair before giving up (each retry re-reads the study's pairs).
INSERT_ATTEMPTS = 8


def adaptive_config(*, study: Study) -> AdaptiveConfig:
    return AdaptiveConfig(min_comparisons=study.adaptive_min_comparisons, random_share=study.adaptive_random_share)


def _check_slots(*, seed: int, total: int, n_checks: int) -> frozenset[int]:
    """The places (0-based, among the evaluator's ``total`` pairs) where they meet an attention check."""
    if n_checks <= 0 or total <= 0:
        return frozenset()
    rng = np.random.default_rng([seed, CHECK_SLOT_STREAM])
    return frozenset(int(k) for k in rng.choice(total, size=min(n_checks, total), replace=False))


def _pair_query(study_id: int, a: int, b: int) -> QuerySet[Pair]:
    same = Q(question_a_id=a, question_b_id=b) | Q(question_a_id=b, question_b_id=a)
    return Pair.objects.filter(same, study_id=study_id).order_by("pk")[:1]


_PAIR = PreparedQuery("pair of two questions", _pair_query, "study_id", "a", "b")
#: A new pair's insert: skipped, not raised, when the pair or its position is taken (no savepoint needed).
_PAIR_INSERT = PreparedInsert(Pair, skip_every_conflict=True)
_TOP = PreparedQuery("top position",
                     lambda study_id: Pair.objects.filter(study_id=study_id).values("study_id")
                     .annotate(top=Max("position")).values_list("top"),
                     "study_id")


def _next_check(*, participation: Participation, shown: list[tuple[int, int, int, bool]],
                checks: list[tuple[int, int, int]]) -> Pair | None:
    """The attention check due at the evaluator's next slot, if any (``checks``: :attr:`StudyReads.checks`)."""
    study = participation.study
    if not checks:
        return None
    slot = len(shown)
    if slot not in _check_slots(seed=participation.seed, total=study.n_pairs + len(checks), n_checks=len(checks)):
        return None
    met = {pk for pk, _, _, is_check in shown if is_check}
    left = [pk for pk, _, _ in checks if pk not in met]
    return None if not left else Pair.objects.get(pk=left[0])


def adaptive_choose(
    *, study: Study, participation: Participation, shown: list[tuple[int, int, int, bool]],
    reads: StudyReads | None = None,
) -> tuple[int, int] | None:
    """The kernel's choice for ``participation``: two question ids, or None
    when the evaluator has seen every pair of the pool. Never a pair another
    evaluator is judging now (:attr:`StudyReads.open_pairs`) while another
    pair is left. Reads only: the study's pool, votes, attention checks and
    pairs in flight
    (:func:`~annotate.studies.services.adaptive_reads.study_reads`: one
    query while the process keeps the study), unless ``reads`` are given."""
    reads = study_reads(study_id=study.pk) if reads is None else reads
    qids, blocks = reads.questions, reads.blocks
    if len(qids) < 2:
        return None
    hi, ei = _index(qids, reads.harder), _index(qids, reads.easier)
    keep = (hi >= 0) & (ei >= 0)
    estimate = _estimate(len(qids), hi[keep], ei[keep], study=study)
    mine = [(a, b) for _, a, b, _ in shown] + [(a, b) for _, a, b in reads.checks]
    in_flight = [pair for pid, pair in sorted(reads.open_pairs.items()) if pid != participation.pk]
    config = adaptive_config(study=study)
    # The pairs other evaluators are judging now are left out first (their votes are coming: several evaluators
    # given the same most informative pair at once waste all but one vote); then, when nothing else is left, not.
    for others in ([in_flight, []] if in_flight else [[]]):
        rng = np.random.default_rng([participation.seed, CHOICE_STREAM, len(shown)])
        seen = _positions(qids, mine + others)
        chosen = choose_next_pair(subjects=blocks, estimate=estimate, seen=seen, rng=rng, config=config)
        if chosen is not None:
            break
    if chosen is None:
        return None
    i, j = chosen
    a, b = int(qids[i]), int(qids[j])
    return (a, b) if rng.random() < 0.5 else (b, a)  # which question is "a": a fair coin, as at creation


#: Scale estimates kept in this process, newest last: (study id, questions, sorted vote codes) -> estimate.
_ESTIMATES: OrderedDict[tuple[int, int, bytes], ScaleEstimate] = OrderedDict()
_ESTIMATES_LOCK = threading.Lock()
#: Estimates kept (a few studies judged at once; each entry holds a study's arrays and the kernel's memo).
ESTIMATES_KEPT = 8


def _estimate(n: int, harder: np.ndarray, easier: np.ndarray, *, study: Study) -> ScaleEstimate:
    """The scale estimate of these votes, fitted once per process for each set of votes.

    The fit depends only on the multiset of (harder, easier) votes, not on
    their order, so it is kept under the study, the number of questions and
    the sorted vote codes (compared in full, not by a hash): a choice made
    while no vote has changed (a skip, another evaluator's turn) reuses the
    same estimate and the kernel's memo of it (:class:`ScaleEstimate`), and
    chooses exactly what it chose before. A new set of votes is fitted from
    the newest estimate of the same study (usually one vote away): the same
    optimum, to the fit's tolerance, in fewer Newton steps than from zeros.
    """
    key = (study.pk, n, np.sort(harder.astype(np.int64) * n + easier).tobytes())
    with _ESTIMATES_LOCK:
        kept = _ESTIMATES.get(key)
        if kept is not None:
            _ESTIMATES.move_to_end(key)
            return kept
        # The newest estimate of the same study starts the fit (usually one vote away: fewer Newton steps).
        start = next((e.b for (pk, m, _), e in reversed(_ESTIMATES.items()) if pk == study.pk and m == n), None)
    estimate = _fit_estimate(n, harder, easier, study=study, initial=start)
    with _ESTIMATES_LOCK:
        _ESTIMATES[key] = estimate
        while len(_ESTIMATES) > ESTIMATES_KEPT:
            _ESTIMATES.popitem(last=False)
    return estimate


def adaptive_estimates_forget() -> None:
    """Drop every scale estimate and every study's reads this process keeps (:func:`_estimate`,
    :func:`~annotate.studies.services.adaptive_reads.study_reads`)."""
    with _ESTIMATES_LOCK:
        _ESTIMATES.clear()
    study_reads_forget()


def _fit_estimate(n: int, harder: np.ndarray, easier: np.ndarray, *, study: Study,
                  initial: np.ndarray | None = None) -> ScaleEstimate:
    """The kernel's scale estimate, its fit started from ``initial`` (default
    zeros; the optimum does not depend on it, only the number of Newton steps
    to the fit's tolerance); if the fit does not converge, a neutral scale
    (every question at 0) that still counts each question's votes, so the
    exposure floor and the random share keep working and the evaluator's
    answer is never lost to an error."""
    try:
        return scale_estimate(n, harder, easier, initial=initial)
    except ConvergenceError as error:
        logger.warning("adaptive study %s: %s; choosing from a neutral scale", study.pk, error)
        neutral = scale_estimate(n, harder[:0], easier[:0])
        counts = np.bincount(np.concatenate([harder, easier]), minlength=n).astype(np.int64)
        return dataclasses.replace(neutral, n_comparisons=counts)


def _positions(qids: np.ndarray, pairs: list[tuple[int, int]]) -> np.ndarray:
    """The pairs of question ids as pairs of positions in ``qids``, shape (k, 2); pairs outside the pool dropped."""
    ids = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    at = np.stack([_index(qids, ids[:, 0]), _index(qids, ids[:, 1])], axis=1)
    return at[(at >= 0).all(axis=1)]


def _index(qids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Index of each id in the sorted ``qids``; -1 when absent."""
    at = np.searchsorted(qids, ids)
    at = np.minimum(at, len(qids) - 1)
    return np.where(qids[at] == ids, at, -1) if len(ids) else np.empty(0, dtype=np.int64)


def pair_get_or_create(*, study: Study, question_a_id: int, question_b_id: int) -> Pair:
    """The study's pair of these two questions (either order), made at the
    next free position when missing. Race-safe without a savepoint: an insert
    that meets the same pair or the same position made by a concurrent
    request is skipped (``ON CONFLICT DO NOTHING``); then the pair is looked
    up, and when it is not there (only the position was taken) the insert is
    tried again at the next free position."""
    for _ in range(INSERT_ATTEMPTS):
        top = next(iter(_TOP.rows(study_id=study.pk)), (None,))[0]
        pair = Pair(study=study, position=0 if top is None else top + 1, question_a_id=question_a_id,
                    question_b_id=question_b_id)
        if _PAIR_INSERT.insert(pair):
            return pair
        existing = _PAIR.objects(study_id=study.pk, a=question_a_id, b=question_b_id)
        if existing:
            return existing[0]
    raise RuntimeError(f"could not store a new pair of study {study.pk} after {INSERT_ATTEMPTS} attempts")


@dataclass(frozen=True)
class PendingAnswer:
    """An evaluator's answer on their open pair, stored in the same transaction as the assignment chosen ahead of
    it (:func:`adaptive_next_ahead`), which counts it as a vote when the study's reads will (a left or right
    choice on a regular pair by an evaluator not excluded)."""

    question_a_id: int
    question_b_id: int
    attention_check: bool
    #: The question judged harder; None for a skip.
    harder_id: int | None
    pair_id: int


@dataclass(frozen=True)
class AdaptiveNext:
    """What an adaptive study serves an evaluator next, decided by reads alone.

    At most one of ``keeps_open``, ``pair`` and ``questions`` is set; none
    when nothing is left for the evaluator.
    """

    #: Another pair of the evaluator's is still open: it stays on screen and nothing is assigned.
    keeps_open: bool = False
    #: An existing pair to assign (an attention check).
    pair: Pair | None = None
    #: The kernel's choice, question ids (a, b): its pair row is made when it is assigned (:func:`adaptive_pair_of`).
    questions: tuple[int, int] | None = None


def _next(*, participation: Participation, shown: list[tuple[int, int, int, bool]], reads: StudyReads) -> AdaptiveNext:
    """The attention check due at this slot, else the kernel's choice, else a remaining attention check."""
    study = participation.study
    check = _next_check(participation=participation, shown=shown, checks=reads.checks)
    if check is not None:
        return AdaptiveNext(pair=check)
    if sum(1 for *_, is_check in shown if not is_check) < study.n_pairs:
        chosen = adaptive_choose(study=study, participation=participation, shown=shown, reads=reads)
        if chosen is not None:
            return AdaptiveNext(questions=chosen)
    met = {pk for pk, *_, is_check in shown if is_check}
    rest = Pair.objects.filter(study_id=study.pk, attention_check=True).exclude(pk__in=met).order_by("position")
    return AdaptiveNext(pair=rest.first())


def adaptive_pair_of(*, study: Study, next_pair: AdaptiveNext) -> Pair | None:
    """The pair to assign for ``next_pair``: the kernel's choice made a Pair row when new
    (:func:`pair_get_or_create`), an existing pair as it is; None when nothing is to be assigned."""
    if next_pair.questions is not None:
        a, b = next_pair.questions
        return pair_get_or_create(study=study, question_a_id=a, question_b_id=b)
    return next_pair.pair


def adaptive_next_pair(*, participation: Participation) -> Pair | None:
    """The pair to serve next to ``participation`` in an adaptive study: the
    attention check due at this slot, else the kernel's choice (its Pair row
    made now if new), else a remaining attention check; None when nothing is
    left. Writes at most the new Pair row; the caller writes the assignment."""
    reads = study_reads(study_id=participation.study_id, mine=participation.pk)
    return adaptive_pair_of(study=participation.study,
                            next_pair=_next(participation=participation, shown=reads.shown, reads=reads))


def adaptive_next_ahead(*, participation: Participation, answer: PendingAnswer, full: bool,
                        now: datetime | None = None) -> AdaptiveNext:
    """What to serve ``participation`` once ``answer`` (on their open pair, not stored yet) is stored: reads only.

    Decides as :func:`adaptive_next_pair` would right after the answer's
    commit: nothing while another of the evaluator's pairs is open; nothing
    left when ``full`` (a stopping rule fired), when the evaluator is
    finished or has been shown all their pairs; else the next pair, chosen
    from the study's reads with ``answer`` counted as its judgment will be.
    The caller stores the answer and then the assignment
    (:func:`adaptive_pair_of`), in one transaction.
    """
    study = participation.study
    reads = study_reads(study_id=study.pk, now=now, mine=participation.pk)
    shown = reads.shown
    if reads.undecided - {answer.pair_id}:
        return AdaptiveNext(keeps_open=True)
    if full or participation.finished_at is not None or len(shown) >= study.n_pairs + len(reads.checks):
        return AdaptiveNext()
    return _next(participation=participation, shown=shown, reads=_counting(reads, answer, participation.pk))


def _counting(reads: StudyReads, answer: PendingAnswer, mine: int) -> StudyReads:
    """``reads`` with ``answer`` of participation ``mine`` among its votes, as a read after its commit gives them."""
    if answer.harder_id is None or answer.attention_check or np.isin(mine, reads.excluded):
        return reads
    easier = answer.question_b_id if answer.harder_id == answer.question_a_id else answer.question_a_id
    return dataclasses.replace(reads, harder=np.append(reads.harder, np.int64(answer.harder_id)),
                               easier=np.append(reads.easier, np.int64(easier)))
