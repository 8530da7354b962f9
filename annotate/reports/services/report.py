"""Build the alignment report of a study once, as one typed structure
(:class:`~annotate.reports.services.model.AlignmentReport`); its JSON
(``to_json()``) is documented in ``annotate/report_schema.json``."""
from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np
from django.utils import timezone

from annotate.models import RunStatus, ScoringRun, Study
from annotate.reports.selectors.alignment import StudyData, study_alignment_data
from annotate.reports.services import human
from annotate.reports.services._stats import method_verdicts
from annotate.reports.services.crowd import crowd_section
from annotate.reports.services.labels import label_section, profile_section
from annotate.reports.services.model import (
    AlignmentReport,
    ExcludedEvaluatorRow,
    GroupInfo,
    GroupMethod,
    GroupPair,
    GroupSection,
    Parameters,
    RunInfo,
    StudyInfo,
    Timing,
)
from annotate.reports.services.pools import check_thresholds, pool_section
from annotate.reports.services.scale import human_scale_section
from scoring import SKIP
from scoring._validation import check_int
from scoring.groups import compare_groups

#: 4: questions named by dataset and external id (QuestionRef.dataset; PairRow.dataset gone), a flat
#: ``parameters`` object, vs_others.pairs_skipped_by_one.
#: 3: kappa, alpha and Fleiss on pairs are orientation-free (each pair counted in both orders; kappa
#: = 2 p_o - 1 over the pairs both decided); method_summary adds agreement_excluding_ties.
#: 2: the pools section reads a stored analysis (adds status, analysis_run, computed_at, note).
#: 5: pairs_page (the JSON download pages the pairs of a large study); labels.analysis (the
#: human-label analysis over every labelled question of the run: both margins, ties, intervals),
#: labels.direction, params.label_higher_is_harder and params.label_margin.
SCHEMA_VERSION = 5
METHOD_TIE_RULE = "a method tie or undefined verdict on a scored pair counts as a miss"
TIE_RULES = ("evaluator_weight", "none")
CI_LEVEL = 0.95

ERR_STUDY = "study must be a saved Study; got {value!r}"
ERR_RUN = "run must be a ScoringRun or None; got {value!r}"
ERR_RUN_NOT_DONE = "run {run_id} is {status!r}; a report needs a finished ('done') run"
ERR_MIN_VOTES = "min_votes must be an integer >= 1; got {value!r}"
ERR_TIE_RULE = "tie_rule must be one of {choices}; got {value!r}"
ERR_N_BOOT = "n_boot must be an integer >= 1; got {value!r}"
ERR_LABEL_KEY = "label_key must be a non-empty string or None; got {value!r}"
ERR_LABEL_DIRECTION = "label_higher_is_harder must be True or False; got {value!r}"
ERR_LABEL_MARGIN = "label_margin must be a finite number >= 0; got {value!r}"
ERR_CROWD = "crowd must be True or False; got {value!r}"
ERR_RNG = "rng must be a numpy Generator, a non-negative int seed or None; got {value!r}"


def _check_int(value, *, error: str) -> int:
    return check_int(value, name="value", low=1, message=error)


def _seed(rng) -> int:
    """One bootstrap seed from ``rng`` (an int is used as is, so the report is reproducible)."""
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(0, 2**63 - 1))
    if rng is None:
        return int(np.random.default_rng().integers(0, 2**63 - 1))
    return check_int(rng, name="rng", low=0, message=ERR_RNG)


def study_alignment_report(
    *,
    study: Study,
    run: ScoringRun | None = None,
    min_votes: int = 1,
    tie_rule: str = "evaluator_weight",
    n_boot: int = 2000,
    size_thresholds: Sequence[float] = (10, 70),
    label_key: str | None = None,
    label_higher_is_harder: bool = True,
    label_margin: float = 0.2,
    rng: np.random.Generator | int | None = 0,
    crowd: bool = False,
) -> dict:
    """The report's JSON document (``annotate/report_schema.json``):
    ``alignment_report_compute(...).to_json()`` with the same arguments."""
    return alignment_report_compute(
        study=study, run=run, min_votes=min_votes, tie_rule=tie_rule, n_boot=n_boot,
        size_thresholds=size_thresholds, label_key=label_key, label_higher_is_harder=label_higher_is_harder,
        label_margin=label_margin, rng=rng, crowd=crowd,
    ).to_json()


def alignment_report_compute(
    *,
    study: Study,
    run: ScoringRun | None = None,
    min_votes: int = 1,
    tie_rule: str = "evaluator_weight",
    n_boot: int = 2000,
    size_thresholds: Sequence[float] = (10, 70),
    label_key: str | None = None,
    label_higher_is_harder: bool = True,
    label_margin: float = 0.2,
    rng: np.random.Generator | int | None = 0,
    crowd: bool = False,
) -> AlignmentReport:
    """How well each difficulty method agrees with the study's human judgments.

    Parameters
    ----------
    study : Study
    run : ScoringRun, optional
        A finished run whose ``QuestionResult`` values are compared; default
        the run the study's pairs came from. Questions the run does not score
        get an ``"undefined"`` verdict (counted, never dropped).
    min_votes : int, default 1
        Fewest votes (skips excluded) a pair needs for a consensus.
    tie_rule : {"evaluator_weight", "none"}, default "evaluator_weight"
        How an exact vote tie is resolved (:func:`scoring.consensus`).
    n_boot : int, default 2000
        Bootstrap replicates for the 95% intervals (resampling pairs).
    size_thresholds : sequence of float, default (10, 70)
        Parameter-count cut points in billions: small < 10 <= medium < 70 <=
        large. Models of unknown size are in no size pool (listed).
    label_key : str, optional
        ``Question.metadata`` key holding a human difficulty label; default:
        ``level`` or ``mmlu_level``, whichever the study's questions carry.
    label_higher_is_harder : bool, default True
        The label's direction (False for a solve rate).
    label_margin : float, default 0.2
        The label section's second margin (besides 0): a pair counts when
        its labels differ by more than the margin.
    rng : numpy.random.Generator, int or None, default 0
        Bootstrap randomness. An int seeds every method's bootstrap alike
        (the same resampled pairs for each method); a Generator supplies one
        such seed; None draws a fresh one.
    crowd : bool, default False
        Add the ``crowd`` section: judges weighted by reliability (a crowd
        Bradley-Terry fit, :mod:`annotate.reports.services.crowd`), the
        weighted consensus and scale beside the unweighted ones, and every
        method's agreement under both. Without it the report has no such
        section and is otherwise the same.

    Returns
    -------
    AlignmentReport
        Sections ``study``, ``run``, ``params``, ``methods``, ``pairs``,
        ``consensus``, ``evaluators``, ``method_summary``,
        ``reference_vs_baselines``, ``consensus_agreement``, ``mcnemar``,
        ``irr``, ``pools`` (read from a stored pools analysis; EIP is never
        rerun here), ``labels``, ``profiles``, ``timing``, ``human_scale``
        (a Bradley-Terry scale of every vote and each method against it;
        :mod:`annotate.reports.services.scale`), ``crowd`` (only with
        ``crowd=True``). Agreements are
        fractions in [0, 1]; a method tie on a scored pair is a miss. Every
        undefined value is ``None`` with an ``undefined_reason``.
        ``to_json()`` is JSON-ready (no NaN).

    Raises
    ------
    ValueError
        If ``study`` is not saved, ``run`` is not finished, or a parameter
        is out of range (the message names it and the bad value).

    References
    ----------
    EIP paper, section 3.3 and table 2 (agreement with each evaluator and
    with the consensus), figure 8 (model pools and Cohen's kappa), figure 6
    (open-weight and proprietary pools), figure 9 (difficulty per dataset).

    Examples
    --------
    >>> report = alignment_report_compute(study=study, n_boot=200)  # doctest: +SKIP
    >>> report.consensus_agreement["eip"].agreement  # doctest: +SKIP
    0.9
    """
    if not isinstance(study, Study) or study.pk is None:
        raise ValueError(ERR_STUDY.format(value=study))
    if run is not None and (not isinstance(run, ScoringRun) or run.pk is None):
        raise ValueError(ERR_RUN.format(value=run))
    run = run or study.scoring_run
    if run.status != RunStatus.DONE:
        raise ValueError(ERR_RUN_NOT_DONE.format(run_id=run.pk, status=run.status))
    min_votes = _check_int(min_votes, error=ERR_MIN_VOTES)
    if tie_rule not in TIE_RULES:
        raise ValueError(ERR_TIE_RULE.format(choices=TIE_RULES, value=tie_rule))
    n_boot = _check_int(n_boot, error=ERR_N_BOOT)
    thresholds = check_thresholds(size_thresholds)
    if label_key is not None and (not isinstance(label_key, str) or not label_key.strip()):
        raise ValueError(ERR_LABEL_KEY.format(value=label_key))
    if not isinstance(label_higher_is_harder, bool):
        raise ValueError(ERR_LABEL_DIRECTION.format(value=label_higher_is_harder))
    if isinstance(label_margin, bool) or not isinstance(label_margin, (int, float)) \
            or not math.isfinite(label_margin) or label_margin < 0:
        raise ValueError(ERR_LABEL_MARGIN.format(value=label_margin))
    if not isinstance(crowd, bool):
        raise ValueError(ERR_CROWD.format(value=crowd))
    seed = _seed(rng)

    started = time.perf_counter()
    data = study_alignment_data(study=study, run=run)
    methods = human.method_availability(data)
    available = [m.key for m in methods if m.available]
    verdicts = method_verdicts(data, data.pair_index, available)
    result, cons = human.study_consensus(data, min_votes=min_votes, tie_rule=tie_rule)
    bound_flags = human.question_bound_flags(data, available)
    pairs = human.pair_rows(data, result, verdicts, at_bound=bound_flags)
    evaluators = human.evaluator_rows(data, verdicts, min_votes=min_votes, tie_rule=tie_rule)
    per_method, mcnemar = human.consensus_methods(verdicts, cons, n_boot=n_boot, seed=seed)
    t_human = time.perf_counter()
    pools = pool_section(data, cons, size_thresholds=thresholds)
    t_pools = time.perf_counter()
    evaluator_summary = human.method_summaries(evaluators, available)
    return AlignmentReport(
        schema_version=SCHEMA_VERSION,
        generated_at=timezone.now().isoformat(),
        study=_study_info(data),
        run=RunInfo(id=run.pk, response_set=str(run.response_set), is_study_run=run.pk == study.scoring_run_id,
                    created_at=run.created_at.isoformat(), params=run.params),
        params=Parameters(min_votes=min_votes, tie_rule=tie_rule, n_boot=n_boot, ci_level=CI_LEVEL,
                          bootstrap_seed=seed, size_thresholds=thresholds, label_key=label_key,
                          method_tie_rule=METHOD_TIE_RULE, label_higher_is_harder=label_higher_is_harder,
                          label_margin=float(label_margin), crowd=True if crowd else None),
        methods=methods,
        pairs=pairs,
        consensus=human.consensus_counts(pairs),
        evaluators=evaluators,
        method_summary=evaluator_summary,
        reference_vs_baselines=human.reference_vs_baselines(evaluators, available),
        consensus_agreement=per_method,
        mcnemar=mcnemar,
        irr=human.inter_rater(data),
        pools=pools,
        labels=label_section(data, cons, label_key=label_key, available=available,
                             higher_is_harder=label_higher_is_harder, margin=float(label_margin), seed=seed),
        profiles=profile_section(data),
        timing=Timing(human_s=t_human - started, pools_s=t_pools - t_human, total_s=time.perf_counter() - started),
        excluded_evaluators=tuple(
            ExcludedEvaluatorRow(id=e.participation_id, pseudonym=e.pseudonym, excluded_at=e.excluded_at,
                                 excluded_by=e.excluded_by, reason=e.reason, n_judgments=e.n_judgments)
            for e in data.excluded
        ),
        human_scale=human_scale_section(data, available=available, n_boot=n_boot, ci_level=CI_LEVEL, seed=seed,
                                        at_bound=bound_flags),
        groups=group_section(data, verdicts, n_boot=n_boot, seed=seed),
        crowd=crowd_section(data, available=available, verdicts=verdicts, consensus=cons, unweighted=per_method,
                            min_votes=min_votes, n_boot=n_boot, ci_level=CI_LEVEL, seed=seed) if crowd else None,
    )


def group_section(data: StudyData, verdicts: dict, *, n_boot: int, seed: int) -> GroupSection | None:
    """Evaluator groups against each other and every method; None when no evaluator has a group."""
    groups = [e.group for e in data.evaluators]
    if not any(groups):
        return None
    c = compare_groups(data.human, groups, verdicts, n_boot=n_boot, level=CI_LEVEL, seed=seed)
    return GroupSection(
        groups=tuple(GroupInfo(name=g, n_evaluators=n_e, n_votes=n_v, n_pairs_decided=n_p)
                     for g, n_e, n_v, n_p in zip(c.groups, c.n_evaluators, c.n_votes, c.n_pairs_decided,
                                                 strict=True)),
        pairs=tuple(GroupPair(group_x=r.group_x, group_y=r.group_y, n=r.n, agreement=r.agreement, kappa=r.kappa,
                              agreement_ci=r.agreement_ci, kappa_ci=r.kappa_ci, undefined_reason=r.undefined_reason)
                    for r in c.pairs),
        methods=tuple(GroupMethod(group=r.group, method=r.method, n=r.n, agreement=r.agreement, kappa=r.kappa,
                                  agreement_ci=r.agreement_ci, kappa_ci=r.kappa_ci) for r in c.methods),
    )


def _study_info(data: StudyData) -> StudyInfo:
    s = data.study
    return StudyInfo(
        id=s.pk, name=s.name, status=s.status, strategy=s.strategy, seed=s.seed,
        n_pairs=len(data.pairs), n_evaluators=len(data.evaluators), n_judgments=len(data.judgment_array),
        n_votes=int((data.judgment_array[:, 2] != SKIP).sum()),
        n_skips=int((data.judgment_array[:, 2] == SKIP).sum()),
        scoring_run=s.scoring_run_id, datasets=data.datasets, subjects=data.subjects,
        n_attention_checks=data.n_attention_checks,
        n_simulated_evaluators=sum(e.simulated for e in data.evaluators),
    )
