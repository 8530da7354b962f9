"""The study list (/studies/): every column true for every kind of study.

One study of each kind: fixed pairs (open, and one filled by its budget rule),
a draft, adaptive, imported, derived. Each row is read from the page's table
and compared with what the study is, counted here by hand.
"""
from __future__ import annotations

import re
from html import unescape

import pytest
from django.urls import reverse

from annotate.models import LanguageModel, PairStrategy, ResponseSet, StudyStatus
from annotate.studies.services.derived import derived_study_create
from annotate.studies.services.judgment_import import ImportFile, judgments_import
from annotate.studies.services.scope import ERR_ADAPTIVE_TOO_MANY
from annotate.studies.services.stopping import StoppingInput, stopping_rules_set
from annotate.studies.services.studies import study_create
from tests.annotate.factories import client_for, judge, make_catalog, make_evaluator, make_study, write_responses

pytestmark = pytest.mark.django_db

ROW = re.compile(r"<tr><td>(.*?)</tr>", re.S)
CELL = re.compile(r"<td[^>]*>(.*?)</td>", re.S)


def _rows(client) -> dict[str, list[str]]:
    """The table's rows by study name: the text of each cell."""
    page = client.get(reverse("annotate:studies")).content.decode()
    rows = {}
    for row in ROW.findall(page):
        cells = [" ".join(unescape(re.sub(r"<[^>]+>", "", c)).split()) for c in CELL.findall("<td>" + row)]
        rows[cells[0]] = cells[1:5]
    return rows


def _adaptive(catalog, *, per_evaluator: int, name: str = "Adaptive"):
    return study_create(name=name, run=catalog.run, datasets=[catalog.dataset], n_pairs=per_evaluator, seed=5,
                        strategy=PairStrategy.ADAPTIVE, status=StudyStatus.OPEN)


def _imported(catalog):
    q = catalog.questions  # Mathematics q0-0..q0-5, Physics q1-0..q1-5
    header = "evaluator,dataset_a,question_a,dataset_b,question_b,harder\n"
    d = catalog.dataset.name
    lines = [f"e1,{d},{a.external_id},{d},{b.external_id},a\n" for a, b in ((q[0], q[1]), (q[2], q[3]), (q[6], q[7]))]
    return judgments_import(files=[ImportFile("votes.csv", (header + "".join(lines)).encode(), "csv")],
                            run=catalog.run, name="Imported")


def _derived(catalog):
    people = [LanguageModel.objects.create(name=f"person-{k}") for k in range(3)]
    human = ResponseSet.objects.create(name="exam answers", file_name="p.csv", checksum="f" * 64, file_format="csv",
                                       is_human=True)
    write_responses(human, [(q, p, float((i + 2 * j) % 3 == 0)) for i, q in enumerate(catalog.questions)
                            for j, p in enumerate(people)])
    study, _ = derived_study_create(human_set_id=human.pk, run=catalog.run, name="Derived", n_pairs=4)
    return study


def test_every_kind_of_study_shows_its_true_status_strategy_and_pairs(catalog, olga):
    fixed = make_study(catalog, n_pairs=5, name="Fixed", owner=olga)
    full = make_study(catalog, n_pairs=4, name="Budget", owner=olga)
    stopping_rules_set(study=full, values=StoppingInput(max_judgments=2))
    judge(make_evaluator(full, "eve"), ["left", "right"])
    draft = study_create(name="Draft", run=catalog.run, datasets=[catalog.dataset], n_pairs=3, seed=2,
                         status=StudyStatus.DRAFT, strategy=PairStrategy.STRATIFIED_GAP)
    adaptive = _adaptive(catalog, per_evaluator=9)
    imported = _imported(catalog)
    derived = _derived(catalog)
    for study in (draft, adaptive, imported, derived):
        study.members.add(olga)
    rows = _rows(client_for(olga))
    # 12 questions, two subjects of 6: the adaptive pool holds them all.
    assert rows == {
        "Fixed": ["open", "uniform random same-subject pairs", "5", "0"],
        "Budget": ["full", "uniform random same-subject pairs", "4", "1"],
        "Draft": ["draft", "stratified by EIP difficulty gap", "3", "0"],
        "Adaptive": ["open", "adaptive: each next pair chosen from the judgments so far",
                     "9 per evaluator, from a pool of 12 questions", "0"],
        "Imported": ["closed", "imported judgments", "3", "1"],
        "Derived": ["closed", "derived from the answers in exam answers", str(derived.pairs.count()), "3"],
    }
    assert fixed.pk and imported.pairs.count() == 3 and derived.pairs.count() >= 1


def test_a_closed_study_whose_rule_fired_is_closed_not_full(catalog, olga):
    study = make_study(catalog, n_pairs=4, name="Stopped", owner=olga)
    stopping_rules_set(study=study, values=StoppingInput(max_judgments=1))
    judge(make_evaluator(study, "eve"), ["left"])
    study.status = StudyStatus.CLOSED
    study.save(update_fields=["status"])
    assert _rows(client_for(olga))["Stopped"][0] == "closed"


def test_counts_in_the_list_have_thousands_separators(catalog, olga):
    big = make_catalog(per_subject=50)  # 100 questions, 2 x 1,225 same-subject pairs
    study = study_create(name="Big", run=big.run, datasets=[big.dataset], n_pairs=1500, seed=1,
                         strategy=PairStrategy.ADAPTIVE, created_by=olga)
    assert study.n_pairs == 1500
    assert _rows(client_for(olga))["Big"][2] == "1,500 per evaluator, from a pool of 100 questions"


def test_an_adaptive_study_refuses_more_pairs_per_evaluator_than_its_pool_holds(catalog):
    # Two subjects of 6 questions: 2 x (6 x 5 / 2) = 30 distinct same-subject pairs.
    _adaptive(catalog, per_evaluator=30, name="Every pair")
    with pytest.raises(ValueError) as error:
        _adaptive(catalog, per_evaluator=100_000, name="Absurd")
    assert str(error.value) == ERR_ADAPTIVE_TOO_MANY.format(n_possible=30, value=100_000, pool="12 questions",
                                                        possible="30 distinct same-subject pairs")
    assert str(error.value).startswith("n_pairs must be at most 30 in this adaptive study")
    assert str(error.value).endswith("its pool of 12 questions holds 30 distinct same-subject pairs; got 100,000")
    with pytest.raises(ValueError):
        _adaptive(catalog, per_evaluator=31, name="One too many")
