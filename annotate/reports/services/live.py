"""The live numbers of a study's manage page, from the report's own functions.

Read through :func:`annotate.reports.selectors.alignment.study_alignment_data`, so
attention-check pairs and excluded evaluators are left out exactly as in the
report; consensus and Krippendorff's alpha are the report's
(:func:`~annotate.reports.services.human.study_consensus`,
:func:`~annotate.reports.services.human.inter_rater`: orientation-free,
each pair counted in both orders). No bootstrap, no method verdicts: cheap
enough for every page view.
"""
from __future__ import annotations

from dataclasses import dataclass

from annotate.models import Study
from annotate.reports.selectors.alignment import study_alignment_data
from annotate.reports.services import human
from annotate.reports.services.model import KrippendorffAlpha
from scoring import SKIP


@dataclass(frozen=True)
class LiveCounts:
    """Counts over the analysed pairs and evaluators.

    Attributes
    ----------
    n_votes, n_skips : int
        Judgments of the evaluators not excluded, on non attention-check pairs.
    n_pairs : int
        Pairs in the analysis (attention checks not counted).
    n_consensus : int
        Pairs with a consensus (majority or tie resolved) at ``min_votes`` 1.
    alpha : KrippendorffAlpha
        Krippendorff's alpha so far (``value`` None with a reason when undefined).
    """

    n_votes: int
    n_skips: int
    n_pairs: int
    n_consensus: int
    alpha: KrippendorffAlpha


def study_live_counts(*, study: Study, min_votes: int = 1, tie_rule: str = "evaluator_weight") -> LiveCounts:
    """Votes, skips, pairs with a consensus and Krippendorff's alpha so far,
    with the report's defaults (``min_votes`` 1, ``tie_rule`` "evaluator_weight")."""
    data = study_alignment_data(study=study, run=study.scoring_run)
    result, _ = human.study_consensus(data, min_votes=min_votes, tie_rule=tie_rule)
    n_skips = int((data.judgment_array[:, 2] == SKIP).sum())
    return LiveCounts(
        n_votes=len(data.judgment_array) - n_skips,
        n_skips=n_skips,
        n_pairs=len(data.pairs),
        n_consensus=sum(p.winner is not None for p in result.pairs),
        alpha=human.inter_rater(data).krippendorff_alpha,
    )
