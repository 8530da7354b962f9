"""Study export/import (schema 4) carries the platform ids, the attention
checks, the quality and crowd settings and the exclusions; a version-3 file
still imports (no checks, no ids, default settings)."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

from annotate.models import ExclusionEvent, Pair, Participation
from annotate.reports.services.report import alignment_report_compute
from annotate.studies.services.studies import study_create
from annotate.studies.services.study_quality import participation_exclude, study_quality_settings_update
from annotate.studies.services.study_transfer import study_import
from annotate.studies.services.transfer_export import study_export
from tests.annotate.factories import make_catalog, make_evaluator, make_user
from tests.annotate.studies.quality.helpers import answer_all, set_eip

pytestmark = pytest.mark.django_db
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
EIP = [0.1, 0.4, 0.2, 0.9, 0.5, 0.3, 0.8, 0.7]  # as in test_attention_checks: two qualifying checks


@pytest.fixture
def study():
    catalog = make_catalog(per_subject=4)
    set_eip(catalog.questions, EIP)
    study = study_create(name="Portable", run=catalog.run, datasets=[catalog.dataset], n_pairs=2, seed=3,
                         attention_check_share=0.5)
    study_quality_settings_update(study=study, speeder_seconds=7.5, participant_param="PROLIFIC_PID",
                                  study_param="STUDY_ID", session_param="SESSION_ID", completion_code="CODE9",
                                  completion_url="https://example.org/done?cc=CODE9")
    ada, bob = make_evaluator(study, "evaluator-ada"), make_evaluator(study, "evaluator-bob")
    Participation.objects.filter(pk=ada.pk).update(platform_participant_id="pid-ada", platform_study_id="st",
                                                   platform_session_id="se-1")
    for evaluator in (ada, bob):
        answer_all(evaluator, lambda pair: pair.question_a_id, start=START)
    participation_exclude(participation=bob, reason="too fast", by=make_user("owner", staff=True))
    return study


def test_a_round_trip_keeps_ids_checks_settings_and_exclusions(study):
    document = study_export(study=study)
    assert document["schema_version"] == 4
    imported = study_import(document=document, rename="Portable copy", reuse_evaluators=True).study
    for field in ("speeder_seconds", "attention_check_share", "participant_param", "study_param", "session_param",
                  "completion_code", "completion_url"):
        assert getattr(imported, field) == getattr(study, field), field
    checks = {(p.position, p.question_a.external_id, p.question_b.external_id, p.expected_harder.external_id)
              for p in Pair.objects.filter(study=imported, attention_check=True).select_related(
                  "question_a", "question_b", "expected_harder")}
    assert checks == {(p.position, p.question_a.external_id, p.question_b.external_id, p.expected_harder.external_id)
                      for p in Pair.objects.filter(study=study, attention_check=True)}
    assert len(checks) == 2
    ada = Participation.objects.get(study=imported, user__username="evaluator-ada")
    assert (ada.platform_participant_id, ada.platform_study_id, ada.platform_session_id) == ("pid-ada", "st", "se-1")
    bob = Participation.objects.get(study=imported, user__username="evaluator-bob")
    assert (bob.exclusion_reason, bob.excluded_by.username, bob.excluded_at is not None) == ("too fast", "owner", True)
    assert list(ExclusionEvent.objects.filter(participation=bob).values_list("action", "reason")) == [
        ("exclude", "too fast")]
    original = alignment_report_compute(study=study, n_boot=50, rng=1)
    copy = alignment_report_compute(study=imported, n_boot=50, rng=1)
    assert (copy.study.n_votes, copy.study.n_attention_checks) == (original.study.n_votes, 2) == (2, 2)
    assert [e.pseudonym for e in copy.excluded_evaluators] == ["evaluator-bob"]
    # Export -> import -> export gives the same document but for its source and name.
    again = study_export(study=imported)
    for doc in (document, again):
        doc.pop("source")
        doc["study"].pop("name")
    assert again == document


def test_a_version_3_file_imports_with_no_checks_ids_or_exclusions(study):
    document = study_export(study=study)
    document["schema_version"] = 3
    for name in ("speeder_seconds", "attention_check_share", "participant_param", "study_param", "session_param",
                 "completion_code", "completion_url"):
        del document["study"][name]
    checks = {p["position"] for p in document["pairs"] if p["attention_check"]}
    document["pairs"] = [{k: v for k, v in p.items() if k not in ("attention_check", "expected_harder")}
                         for p in document["pairs"] if p["position"] not in checks]
    kept = {p["position"] for p in document["pairs"]}
    for e in document["evaluators"]:
        for name in ("platform_participant_id", "platform_study_id", "platform_session_id", "excluded_at",
                     "excluded_by", "exclusion_reason", "exclusion_events"):
            del e[name]
        e["assignments"] = [a for a in e["assignments"] if a["pair"] in kept]
        e["judgments"] = [j for j in e["judgments"] if j["pair"] in kept]
    imported = study_import(document=document, rename="Old copy", reuse_evaluators=True).study
    assert (imported.speeder_seconds, imported.attention_check_share, imported.participant_param) == (
        5.0, 0.0, "PROLIFIC_PID")
    assert (imported.completion_code, imported.completion_url) == ("", "")
    assert not Pair.objects.filter(study=imported, attention_check=True).exists()
    assert set(Participation.objects.filter(study=imported).values_list(
        "platform_participant_id", "excluded_at")) == {("", None)}


def test_a_check_without_its_expected_answer_is_refused(study):
    document = study_export(study=study)
    check = next(p for p in document["pairs"] if p["attention_check"])
    check["expected_harder"] = None
    with pytest.raises(ValueError, match=rf"pair {check['position']}: an attention check needs expected_harder"):
        study_import(document=document, rename="Broken", reuse_evaluators=True)
