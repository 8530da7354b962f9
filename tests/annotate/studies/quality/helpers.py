"""Helpers of the quality-control and crowd tests (issue 14): answer every
pair an evaluator is served, deciding by question identity."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from annotate.models import Pair, Participation, QuestionResult
from annotate.studies.services.judging import judging_screen, judgment_submit


def answer_all(
    participation: Participation,
    decide: Callable[[Pair], int | None],
    *,
    start: datetime,
    seconds: Sequence[float] | float = 30.0,
) -> int:
    """Answer every pair ``participation`` is served: ``decide(pair)`` returns
    the question id to call harder, or None to skip. The k-th answer takes
    ``seconds[k]`` (or ``seconds`` each) of server time. Returns the count."""
    now, k = start, 0
    while (screen := judging_screen(participation=participation, now=now)) is not None:
        harder = decide(screen.pair)
        choice = "skip" if harder is None else ("left" if harder == screen.left.pk else "right")
        took = seconds if isinstance(seconds, int | float) else seconds[k]
        now = now + timedelta(seconds=took)
        judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                        choice=choice, now=now)
        now += timedelta(seconds=1)
        k += 1
    return k


def set_eip(questions, values: Sequence[float]) -> None:
    """Give the questions these reference (EIP) difficulties in their run."""
    for q, value in zip(questions, values, strict=True):
        row = QuestionResult.objects.get(question=q)
        row.scores = {**row.scores, "eip": value}
        row.save(update_fields=["scores"])
