"""Reads behind a study's manage page: per-evaluator progress, pace and
attention, and coverage by question identity.

Nothing here writes. Pace: the median server seconds per *vote* (skips are
not timed judgments of difficulty); an evaluator whose median is below the
study's ``speeder_seconds`` is flagged as a speeder, unless it is a
simulated evaluator (``Participation.is_simulated``: a program's speed says
nothing about its attention). Attention: an attention
check is passed when the evaluator calls the pair's ``expected_harder``
question harder, failed when they call the other one; a skip is neither (it
is counted apart), so the pass rate is ``passed / (passed + failed)``.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import datetime

from annotate.models import (
    Assignment,
    Choice,
    ConsentDecline,
    ExclusionEvent,
    Invitation,
    Judgment,
    Pair,
    Participation,
    Question,
    Study,
)
from scoring.exact import median_is_below


@dataclass(frozen=True)
class AttentionTally:
    """Attention checks answered: passed, failed (voted the other way) and skipped."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0

    @property
    def voted(self) -> int:
        return self.passed + self.failed

    @property
    def pass_rate(self) -> float | None:
        """``passed / (passed + failed)``; None before any voted check."""
        return self.passed / self.voted if self.voted else None


@dataclass(frozen=True)
class MonitorEvaluator:
    """One evaluator on the manage page (attention-check pairs included in the counts)."""

    participation_id: int
    username: str
    field_of_study: str
    education_level: str
    platform_participant_id: str
    platform_study_id: str
    platform_session_id: str
    judged: int
    skipped: int
    assigned: int  # pairs ever shown to them (judged, skipped or on screen now)
    skip_rate: float | None  # skipped / (judged + skipped); None before any decision
    median_seconds: float | None  # per vote; None before the first vote
    speeder: bool  # never for a simulated evaluator
    attention: AttentionTally
    finished: bool
    excluded_at: datetime | None
    excluded_by: str
    exclusion_reason: str
    simulated: bool = False  # votes made by a simulation, not a person


@dataclass(frozen=True)
class MonitorPair:
    """One pair, named by its questions' identity (dataset and the dataset's
    own id) in stored order, never by screen side."""

    pair_id: int
    position: int
    subject: str
    dataset_a: str
    external_a: str
    dataset_b: str
    external_b: str
    question_a: Question  # with its dataset, to show the text as evaluators see it
    question_b: Question
    attention_check: bool
    expected: str  # "A" or "B" for an attention check, else ""
    votes_a: int  # evaluators who called question A harder
    votes_b: int
    skips: int
    on_screen: int
    cells: tuple[str, ...]  # per evaluator: "A", "B", "S" (skip), "…" (on screen) or ""


@dataclass(frozen=True)
class StudyMonitor:
    study: Study
    evaluators: tuple[MonitorEvaluator, ...]
    pairs: tuple[MonitorPair, ...]
    attention: AttentionTally  # every evaluator's checks pooled
    n_votes: int  # every evaluator, attention checks included
    n_skips: int
    median_seconds: float | None  # over every vote
    n_attention_checks: int
    n_speeders: int
    n_excluded: int
    exclusion_log: tuple[ExclusionEvent, ...]
    invitations: tuple[Invitation, ...] = ()  # newest first
    n_consent_declines: int = 0  # visitors who declined the consent text (nothing else of them is stored)


#: Prolific's placeholders: Prolific replaces them with the participant's ids when it sends them to the link.
PROLIFIC_PLACEHOLDERS = ("{{%PROLIFIC_PID%}}", "{{%STUDY_ID%}}", "{{%SESSION_ID%}}")


def platform_link_query(*, study: Study) -> str:
    """The query string to append to an invitation link on Prolific: the
    study's parameter names with Prolific's placeholders, e.g.
    ``?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}``
    ("" when every parameter name is blank). Not URL-encoded: Prolific
    expects the placeholders literally."""
    names = (study.participant_param, study.study_param, study.session_param)
    parts = [f"{name}={value}" for name, value in zip(names, PROLIFIC_PLACEHOLDERS, strict=True) if name]
    return "?" + "&".join(parts) if parts else ""


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def study_monitor(*, study: Study) -> StudyMonitor:
    """Everything the manage page shows about evaluators and pairs (a handful
    of queries; the pairs x evaluators matrix is built in Python)."""
    participations = list(
        Participation.objects.filter(study=study).select_related("user", "excluded_by").order_by("created_at", "id")
    )
    pairs = list(
        Pair.objects.filter(study=study)
        .select_related("question_a__subject", "question_a__dataset", "question_b__dataset")
        .order_by("position")
    )
    pair_by_id = {p.pk: p for p in pairs}
    seconds: dict[int, list[float]] = {p.pk: [] for p in participations}
    counts = {p.pk: [0, 0] for p in participations}
    tally = {p.pk: [0, 0, 0] for p in participations}
    cell: dict[tuple[int, int], str] = {}
    for part_id, pair_id, choice, harder_id, secs in Judgment.objects.filter(pair__study=study).values_list(
        "participation_id", "pair_id", "choice", "harder_question_id", "seconds"
    ):
        pair = pair_by_id[pair_id]
        if choice == Choice.SKIP:
            counts[part_id][1] += 1
            cell[(pair_id, part_id)] = "S"
            if pair.attention_check:
                tally[part_id][2] += 1
            continue
        counts[part_id][0] += 1
        seconds[part_id].append(secs)
        cell[(pair_id, part_id)] = "A" if harder_id == pair.question_a_id else "B"
        if pair.attention_check:
            tally[part_id][0 if harder_id == pair.expected_harder_id else 1] += 1
    assigned: dict[int, int] = {p.pk: 0 for p in participations}
    for part_id, pair_id in Assignment.objects.filter(pair__study=study).values_list("participation_id", "pair_id"):
        assigned[part_id] += 1
        cell.setdefault((pair_id, part_id), "…")

    evaluators = []
    for p in participations:
        median = _median(seconds[p.pk])
        evaluators.append(MonitorEvaluator(
            participation_id=p.pk, username=p.user.get_username(),
            field_of_study=p.get_field_of_study_display(), education_level=p.get_education_level_display(),
            platform_participant_id=p.platform_participant_id, platform_study_id=p.platform_study_id,
            platform_session_id=p.platform_session_id,
            judged=counts[p.pk][0], skipped=counts[p.pk][1],
            assigned=max(assigned[p.pk], sum(counts[p.pk])),
            skip_rate=counts[p.pk][1] / sum(counts[p.pk]) if sum(counts[p.pk]) else None,
            median_seconds=median,
            speeder=not p.is_simulated and bool(median_is_below(seconds[p.pk], study.speeder_seconds)),
            attention=AttentionTally(*tally[p.pk]), finished=p.finished_at is not None,
            excluded_at=p.excluded_at, excluded_by=p.excluded_by.get_username() if p.excluded_by else "",
            exclusion_reason=p.exclusion_reason, simulated=p.is_simulated,
        ))
    rows = []
    for pair in pairs:
        marks = tuple(cell.get((pair.pk, p.pk), "") for p in participations)
        expected = ""
        if pair.attention_check:
            expected = "A" if pair.expected_harder_id == pair.question_a_id else "B"
        rows.append(MonitorPair(
            pair_id=pair.pk, position=pair.position, subject=str(pair.question_a.subject or ""),
            dataset_a=pair.question_a.dataset.name, external_a=pair.question_a.external_id,
            dataset_b=pair.question_b.dataset.name, external_b=pair.question_b.external_id,
            question_a=pair.question_a, question_b=pair.question_b,
            attention_check=pair.attention_check, expected=expected,
            votes_a=marks.count("A"), votes_b=marks.count("B"), skips=marks.count("S"), on_screen=marks.count("…"),
            cells=marks,
        ))
    pooled = AttentionTally(*(sum(t[k] for t in tally.values()) for k in range(3)))
    log = tuple(ExclusionEvent.objects.filter(participation__study=study)
                .select_related("participation__user", "by").order_by("-at", "-id"))
    return StudyMonitor(
        study=study, evaluators=tuple(evaluators), pairs=tuple(rows), attention=pooled,
        n_votes=sum(c[0] for c in counts.values()), n_skips=sum(c[1] for c in counts.values()),
        median_seconds=_median([x for values in seconds.values() for x in values]),
        n_attention_checks=sum(p.attention_check for p in pairs),
        n_speeders=sum(e.speeder for e in evaluators), n_excluded=sum(e.excluded_at is not None for e in evaluators),
        exclusion_log=log,
        invitations=tuple(Invitation.objects.filter(study=study).order_by("-created_at")),
        n_consent_declines=ConsentDecline.objects.filter(study=study).count(),
    )
