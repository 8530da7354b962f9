"""A study import checks every value's range and type with the messages of
the study forms and services, never the database's, and writes nothing when
it refuses: out-of-range seeds, counts, shares and thresholds, over-long
names and ids, NUL bytes and lone surrogates anywhere in the document."""
from __future__ import annotations

import copy

import pytest

from annotate.models import Participation, Study
from annotate.studies.services.studies import (
    ERR_ATTENTION_SHARE,
    ERR_COUNT_RANGE,
    ERR_NAME_LONG,
    ERR_SEED_RANGE,
    ERR_TARGET,
    study_create,
)
from annotate.studies.services.study_quality import (
    ERR_MIN_CHECK_SHARE,
    ERR_PARAM_NAME,
    ERR_RESUME,
    ERR_SPEEDER_SECONDS,
)
from annotate.studies.services.study_transfer import study_import
from annotate.studies.services.transfer_export import study_export
from tests.annotate.factories import make_catalog, make_evaluator
from tests.annotate.studies.quality.helpers import answer_all, set_eip

pytestmark = pytest.mark.django_db


@pytest.fixture
def document() -> dict:
    from datetime import UTC, datetime

    catalog = make_catalog(per_subject=4)
    set_eip(catalog.questions, [0.1, 0.4, 0.2, 0.9, 0.5, 0.3, 0.8, 0.7])
    study = study_create(name="Source", run=catalog.run, datasets=[catalog.dataset], n_pairs=2, seed=3,
                         attention_check_share=0.5)
    answer_all(make_evaluator(study, "ada"), lambda pair: pair.question_a_id,
               start=datetime(2026, 3, 1, tzinfo=UTC))
    return study_export(study=study)


def changed(document: dict, path: tuple, value) -> dict:
    doc = copy.deepcopy(document)
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


@pytest.mark.parametrize(("path", "value", "message"), [
    (("study", "seed"), 2**70, ERR_SEED_RANGE.format(limit=2**63 - 1, value=2**70)),
    (("study", "speeder_seconds"), -5, ERR_SPEEDER_SECONDS.format(value=-5)),
    (("study", "attention_check_share"), 0.9, ERR_ATTENTION_SHARE.format(value=0.9)),
    (("study", "target_judgments_per_pair"), 0, ERR_TARGET.format(value=0)),
    (("study", "n_pairs"), 2**40, ERR_COUNT_RANGE.format(field="n_pairs", limit=2**31 - 1, value=2**40)),
    (("study", "participant_param"), "PID;drop", ERR_PARAM_NAME.format(field="participant_param", value="PID;drop")),
    (("study", "completion_min_check_share"), 1.5, ERR_MIN_CHECK_SHARE.format(value=1.5)),
    (("study", "resume_by_participant_id"), "always",
     ERR_RESUME.format(choices=["off", "on", "same_browser"], value="always")),
])
def test_an_out_of_range_value_is_refused_with_the_forms_message(document, path, value, message):
    before = (Study.objects.count(), Participation.objects.count())
    with pytest.raises(ValueError) as error:
        study_import(document=changed(document, path, value), rename="Copy")
    assert str(error.value) == message
    assert (Study.objects.count(), Participation.objects.count()) == before


def test_a_ten_thousand_character_name_is_refused(document):
    with pytest.raises(ValueError) as error:
        study_import(document=changed(document, ("study", "name"), "n" * 10_000))
    assert str(error.value) == ERR_NAME_LONG.format(limit=200, length=10_000)
    assert Study.objects.count() == 1


@pytest.mark.parametrize(("path", "value", "where"), [
    (("evaluators", 0, "platform_participant_id"), "a\x00b", "document.evaluators[0].platform_participant_id"),
    (("study", "guidelines"), "x\ud800y", "document.study.guidelines"),
    (("evaluators", 0, "seed"), 2**64, "document.evaluators[0].seed"),
])
def test_what_no_column_can_hold_is_refused_with_its_place(document, path, value, where):
    with pytest.raises(ValueError) as error:
        study_import(document=changed(document, path, value), rename="Copy", reuse_evaluators=True)
    assert str(error.value).startswith(f"malformed study export: {where} ")
    assert Study.objects.count() == 1


def test_an_over_long_platform_id_is_refused(document):
    with pytest.raises(ValueError, match="platform_participant_id is longer than 128 characters"):
        study_import(document=changed(document, ("evaluators", 0, "platform_participant_id"), "p" * 129),
                     rename="Copy")


def test_the_unchanged_document_still_imports(document):
    assert study_import(document=document, rename="Copy", reuse_evaluators=True).study.name == "Copy"
