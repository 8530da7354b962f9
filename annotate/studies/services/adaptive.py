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
constraints on the unordered pair and on the position, with a retry on
``IntegrityError``).

Attention checks are drawn at creation; each evaluator meets every check once,
at slots of their sequence drawn from their participation seed.

Nothing here reaches the evaluator but the pair itself.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
from collections import OrderedDict

import numpy as np
from django.db import IntegrityError, transaction
from django.db.models import Max, Q, QuerySet

from annotate.core import PreparedQuery
from annotate.models import Assignment, Pair, Participation, Study
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


#: An evaluator's shown pairs, compiled once (:class:`annotate.core.PreparedQuery`). The study's pool, votes and
#: attention checks come in one statement (:func:`annotate.studies.services.adaptive_reads.study_reads`).
_SHOWN = PreparedQuery(
    "shown pairs",
    lambda mine: Assignment.objects.filter(participation_id=mine).order_by("shown_at", "id")
    .values_list("pair_id", "pair__question_a_id", "pair__question_b_id", "pair__attention_check"),
    "mine",
)


def _pair_query(study_id: int, a: int, b: int) -> QuerySet[Pair]:
    same = Q(question_a_id=a, question_b_id=b) | Q(question_a_id=b, question_b_id=a)
    return Pair.objects.filter(same, study_id=study_id).order_by("pk")[:1]


_PAIR = PreparedQuery("pair of two questions", _pair_query, "study_id", "a", "b")
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
    next free position when missing. Race-safe: a concurrent insert of the
    same pair (or at the same position) raises ``IntegrityError`` in a
    savepoint, and the lookup runs again."""
    for _ in range(INSERT_ATTEMPTS):
        existing = _PAIR.objects(study_id=study.pk, a=question_a_id, b=question_b_id)
        if existing:
            return existing[0]
        top = next(iter(_TOP.rows(study_id=study.pk)), (None,))[0]
        try:
            with transaction.atomic():
                return Pair.objects.create(study=study, position=0 if top is None else top + 1,
                                           question_a_id=question_a_id, question_b_id=question_b_id)
        except IntegrityError:
            continue
    raise RuntimeError(f"could not store a new pair of study {study.pk} after {INSERT_ATTEMPTS} attempts")


def adaptive_next_pair(*, participation: Participation) -> Pair | None:
    """The pair to serve next to ``participation`` in an adaptive study: the
    attention check due at this slot, else the kernel's choice (its Pair row
    made now if new), else a remaining attention check; None when nothing is
    left. Writes at most the new Pair row; the caller writes the assignment."""
    study = participation.study
    shown = [(pk, a, b, bool(check)) for pk, a, b, check in _SHOWN.rows(mine=participation.pk)]
    n_regular = sum(1 for *_, check in shown if not check)
    reads = study_reads(study_id=study.pk)
    check = _next_check(participation=participation, shown=shown, checks=reads.checks)
    if check is not None:
        return check
    if n_regular < study.n_pairs:
        chosen = adaptive_choose(study=study, participation=participation, shown=shown, reads=reads)
        if chosen is not None:
            return pair_get_or_create(study=study, question_a_id=chosen[0], question_b_id=chosen[1])
    met = {pk for pk, *_, is_check in shown if is_check}
    rest = Pair.objects.filter(study_id=study.pk, attention_check=True).exclude(pk__in=met).order_by("position")
    return rest.first()
