"""A short-lived cache in front of :func:`alignment_report_compute`.

One report page shows the tables and four plots, each its own request; without
a cache every request would recompute the report (bootstraps, leave-one-out
consensus). The cached value is the typed report itself
(:class:`~annotate.reports.services.model.AlignmentReport`). The key covers
the study, the run, every parameter, a fingerprint of the study's judgments
and evaluators and the state of the run's stored pools analyses, so a new
judgment, a new evaluator, a deleted evaluator's data or a finished pools
analysis gives a fresh report at once; the TTL only bounds memory.
"""
from __future__ import annotations

import hashlib
import json

from django.core.cache import cache

from annotate.models import ScoringRun, Study
from annotate.reports.selectors.alignment import pools_analysis_fingerprint, study_report_fingerprint
from annotate.reports.services.model import AlignmentReport
from annotate.reports.services.report import SCHEMA_VERSION, alignment_report_compute

REPORT_CACHE_SECONDS = 600


def study_alignment_report_cached(*, study: Study, run: ScoringRun | None = None, **params) -> AlignmentReport:
    """:func:`alignment_report_compute` with the same arguments, cached.

    Parameters are passed through unchanged (keyword-only, JSON-able values);
    ``rng`` must be an int seed or omitted for the result to be cacheable.
    """
    scored = run or study.scoring_run
    key_material = json.dumps(
        {
            "schema": SCHEMA_VERSION,
            "study": study.pk,
            "run": None if run is None else run.pk,
            "params": params,
            "fingerprint": study_report_fingerprint(study=study),
            "pools": pools_analysis_fingerprint(response_set=scored.response_set),
        },
        sort_keys=True,
        default=str,
    )
    key = "alignment-report:" + hashlib.sha256(key_material.encode()).hexdigest()
    report = cache.get(key)
    if report is None:
        report = alignment_report_compute(study=study, run=run, **params)
        cache.set(key, report, REPORT_CACHE_SECONDS)
    return report
