"""A short-lived cache in front of :func:`study_alignment_report`.

One report page shows the tables and four plots, each its own request; without
a cache every request would recompute the report (bootstraps and model-pool
EIP reruns). The key covers the study, the run, every parameter and a
fingerprint of the study's judgments and evaluators, so a new judgment, a new
evaluator or a deleted evaluator's data gives a fresh report at once; the TTL
only bounds memory.
"""
from __future__ import annotations

import hashlib
import json

from django.core.cache import cache
from django.db.models import Count, Max

from annotate.models import Judgment, Participation, ScoringRun, Study
from annotate.services.alignment.report import SCHEMA_VERSION, study_alignment_report

REPORT_CACHE_SECONDS = 600


def _fingerprint(study: Study) -> list:
    judgments = Judgment.objects.filter(pair__study=study).aggregate(n=Count("id"), last=Max("id"))
    evaluators = Participation.objects.filter(study=study).aggregate(
        n=Count("id"), last_user=Max("user_id"), last=Max("id")
    )
    return [judgments["n"], judgments["last"], evaluators["n"], evaluators["last_user"], evaluators["last"]]


def study_alignment_report_cached(*, study: Study, run: ScoringRun | None = None, **params) -> dict:
    """:func:`study_alignment_report` with the same arguments, cached.

    Parameters are passed through unchanged (keyword-only, JSON-able values);
    ``rng`` must be an int seed or omitted for the result to be cacheable.
    """
    key_material = json.dumps(
        {
            "schema": SCHEMA_VERSION,
            "study": study.pk,
            "run": None if run is None else run.pk,
            "params": params,
            "fingerprint": _fingerprint(study),
        },
        sort_keys=True,
        default=str,
    )
    key = "alignment-report:" + hashlib.sha256(key_material.encode()).hexdigest()
    report = cache.get(key)
    if report is None:
        report = study_alignment_report(study=study, run=run, **params)
        cache.set(key, report, REPORT_CACHE_SECONDS)
    return report
