"""Every browser form of the studies and analyses pages, posted with bad values:
each is refused, and every message the researcher reads names the fields by
the words on the page, never by a service's argument names (``n_pairs``,
``seed=``, ``pairs_per_subject``, ``adaptive_random_share`` ...).

Cast: ``olga`` (a researcher who owns the studies), ``ada`` (an evaluator).
"""
from __future__ import annotations

import re
from io import StringIO

import numpy as np
import pytest
from django import forms
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from annotate.analyses.services import defaults
from annotate.models import AnalysisKind, AnalysisRun, Invitation, ResponseSet, StoppingRules, Study
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute
from tests.annotate.analyses.test_runs import load_matrix
from tests.annotate.factories import client_for, make_evaluator, make_study

pytestmark = pytest.mark.django_db

#: What must never reach a researcher, whatever the form.
RAW = ("n_pairs", "seed=", "per_subject", "random_share", "min_comparisons", ">=", "<=", "; got ")
BLANK_RULES = {"target_reliability": "", "method_a": "", "method_b": "", "alpha": "0.05", "max_judgments": "",
               "budget": "", "pay_per_judgment": ""}


def study_data(catalog, **overrides) -> dict:
    """A valid New-study POST (6 questions per subject: 30 same-subject pairs at most), with ``overrides``."""
    return {"name": "Fresh", "run": catalog.run.pk, "datasets": [catalog.dataset.pk], "pairs_mode": "total",
            "n_pairs": 8, "strategy": "uniform", "target_judgments_per_pair": 5, "seed": 42,
            "guidelines": "Pick the harder one.", "consent_text": "I agree.", "onboarding_questions": [],
            **BLANK_RULES, **overrides}


def quality_data(**overrides) -> dict:
    return {"speeder_seconds": "5", "participant_param": "PROLIFIC_PID", "study_param": "STUDY_ID",
            "session_param": "SESSION_ID", **overrides}


def problems(response) -> tuple[list[str], set[str]]:
    """Every error message the page shows (its forms' errors, the flash messages, the refused-rules line) and the
    field names of its forms."""
    texts: list[str] = []
    names: set[str] = set()
    keys = response.context.keys()  # a ContextList: iterating it gives its contexts, not their keys
    for key in keys:
        value = response.context[key]
        if isinstance(value, forms.BaseForm):
            names |= set(value.fields)
            texts += [m for errors in value.errors.values() for m in errors]
    texts += [m.message for m in response.context.get("messages", [])]
    texts += [response.context.get("stopping_problems") or ""]
    return [t for t in texts if t], names


def assert_in_words(response, *, expect: str | None = None) -> list[str]:
    shown, names = problems(response)
    assert shown, f"nothing was refused: {response.status_code}"
    raw = [*RAW, *(n for n in names if "_" in n)]
    for text in shown:
        bad = [r for r in raw if re.search(rf"(?<![\w']){re.escape(r)}(?![\w'])" if r[-1].isalnum() else
                                           re.escape(r), text)]
        assert not bad, f"{text!r} shows {bad}"
    if expect is not None:
        assert expect in shown, shown
    return shown


# The New-study page: (posted values, a message it must show, where one is checked).
NEW_STUDY = {
    "no pair": ({"n_pairs": "0"}, None),
    "more pairs than exist": (
        {"n_pairs": "31"},
        "Number of pairs is 31, but only 30 distinct same-subject pairs are possible from 12 eligible questions"),
    "more pairs per subject than exist": ({"n_pairs": "16", "pairs_mode": "per_subject"}, None),
    "pairs past the column": ({"n_pairs": "99999999999"}, None),
    "a negative seed": ({"seed": "-1"}, None),
    "a seed past the column": ({"seed": "99999999999999999999"}, None),
    "no judgment per pair": ({"target_judgments_per_pair": "0"}, None),
    "too many attention checks": ({"attention_check_share": "0.9"}, None),
    "no dataset": ({"datasets": []}, None),
    "adaptive per subject": ({"strategy": "adaptive", "pairs_mode": "per_subject"}, None),
    "adaptive, negative minimum": ({"strategy": "adaptive", "adaptive_min_comparisons": "-1"}, None),
    "adaptive, random share above 1": ({"strategy": "adaptive", "adaptive_random_share": "2"}, None),
    "a parameter with a space": ({"participant_param": "PROLIFIC PID"},
                                 "Participant id parameter must be letters, digits, '_' or '-' (at most 64) "
                                 "(entered: 'PROLIFIC PID')"),
    "a parameter twice": ({"participant_param": "X", "study_param": "X"}, None),
    "an ftp completion link": ({"completion_url": "ftp://example.org/done"}, None),
    "a negative speeder threshold": ({"speeder_seconds": "-1"}, None),
    "reliability above 1": ({"target_reliability": "1.2"}, None),
    "one method only": ({"method_a": "eip"}, None),
    "the same method twice": ({"method_a": "eip", "method_b": "eip"}, None),
    "a money budget without pay": ({"budget": "10"}, "A budget in money needs pay per judgment above 0"),
    "a third of a cent": ({"pay_per_judgment": "0.123"}, None),
    "a name taken": ({"name": "Taken"}, "A study named 'Taken' already exists"),
}


def test_every_refusal_of_the_study_pages_is_in_the_pages_words(catalog, olga, tmp_path):
    taken = make_study(catalog, owner=olga, name="Taken", n_pairs=4)
    client = client_for(olga)
    create = reverse("annotate:study_create")
    for case, (posted, expect) in NEW_STUDY.items():
        response = client.post(create, study_data(catalog, **posted))
        assert response.status_code == 400, case
        assert_in_words(response, expect=expect)
    assert list(Study.objects.values_list("name", flat=True)) == ["Taken"]  # nothing was written
    assert not StoppingRules.objects.exists()

    # The edit page (the same form, until the first judgment).
    edit = reverse("annotate:study_edit", kwargs={"study_id": taken.pk})
    make_study(catalog, owner=olga, name="Other", n_pairs=4)  # a name the edit may not take
    for posted in ({"n_pairs": "31"}, {"seed": "-1"}, {"name": "Other"}, {"strategy": "adaptive",
                                                                          "adaptive_random_share": "-0.5"}):
        response = client.post(edit, study_data(catalog, **{"name": "Taken", **posted}))
        assert response.status_code == 400, posted
        assert_in_words(response)
    taken.refresh_from_db()
    assert (taken.n_pairs, taken.seed, taken.name) == (4, 1, "Taken")

    # The manage page: stopping rules, crowd and completion settings, invitations, the cost of the projections.
    rules = reverse("annotate:study_stopping_rules", kwargs={"study_id": taken.pk})
    for posted in ({"method_a": "eip"}, {"method_a": "eip", "method_b": "eip"}, {"budget": "10"},
                   {"max_judgments": "0"}, {"target_reliability": "2"}, {"alpha": "1"}):
        assert_in_words(client.post(rules, {**BLANK_RULES, **posted}, follow=True))
    assert not StoppingRules.objects.exists()
    settings = reverse("annotate:study_quality_settings", kwargs={"study_id": taken.pk})
    for posted in ({"speeder_seconds": "-1"}, {"participant_param": "a b"}, {"completion_url": "ftp://x.org/"},
                   {"session_param": "STUDY_ID"}, {"completion_min_check_share": "2"},
                   {"completion_min_votes": "-3"}):
        assert_in_words(client.post(settings, quality_data(**posted), follow=True))
    invite = reverse("annotate:study_invitation_create", kwargs={"study_id": taken.pk})
    assert_in_words(client.post(invite, {"note": "x" * 300}, follow=True))
    assert not Invitation.objects.filter(note__startswith="xxx").exists()
    ada = make_evaluator(taken, "ada")
    exclude = reverse("annotate:study_evaluator_exclude", kwargs={"study_id": taken.pk, "participation_id": ada.pk})
    assert_in_words(client.post(exclude, {"reason": "  "}, follow=True),
                    expect="A reason is required to exclude an evaluator")
    manage = reverse("annotate:study_manage", kwargs={"study_id": taken.pk})
    client.post(rules, {**BLANK_RULES, "max_judgments": "50"})
    assert_in_words(client.get(manage, {"pay": "-1"}))

    # A judgment import: no file, an unknown extension, a bad row, a name taken.
    imported = reverse("annotate:study_import")
    for data in ({"run": catalog.run.pk, "name": "imp"},
                 {"run": catalog.run.pk, "name": "imp", "file_1": SimpleUploadedFile("a.txt", b"x")},
                 {"run": catalog.run.pk, "name": "Taken",
                  "file_1": SimpleUploadedFile("a.csv", b"evaluator,dataset_a,question_a,dataset_b,question_b,harder\n"
                                                        b"e1,x,q0-0,x,q0-1,a\n")}):
        response = client.post(imported, data)
        shown = problems(response)[0] + list(response.context.get("problems") or [])
        assert shown and not any(r in p for p in shown for r in RAW), shown
    assert list(Study.objects.order_by("name").values_list("name", flat=True)) == ["Other", "Taken"]


def test_every_refusal_of_the_derived_study_page_is_in_the_pages_words(olga, tmp_path):
    questions = "question_id,category\nq1,bio\nq2,bio\nq3,bio\nq4,chem\n"
    (tmp_path / "questions.csv").write_text(questions, encoding="utf-8")
    for name, text, extra in (("models", "question_id,m1,m2\nq1,1,0\nq2,0,1\nq3,1,1\nq4,0,0\n", ()),
                              ("people", "question_id,p1,p2\nq1,1,0\nq2,1,1\nq3,0,0\nq4,1,0\n", ("--human",))):
        (tmp_path / f"{name}.csv").write_text(text, encoding="utf-8")
        call_command("load_responses", "--responses", str(tmp_path / f"{name}.csv"), "--format", "wide",
                     "--dataset", "D", "--questions", str(tmp_path / "questions.csv"), "--subject-column",
                     "category", *extra, stdout=StringIO())
    models, people = ResponseSet.objects.get(name="models"), ResponseSet.objects.get(name="people")
    run = scoring_run_create(response_set=models, params={"methods": ["eip", "accuracy"]})
    scoring_run_execute(run=run)
    url = reverse("annotate:study_derive")
    client = client_for(olga)
    base = {"human_set": people.pk, "run": run.pk, "n_pairs": "5", "seed": "0", "name": "Derived"}
    for posted in ({"n_pairs": "0"}, {"seed": "-1"}, {"n_pairs": "9999999"}, {"name": "", "action": "create"},
                   {"human_set": models.pk}):
        assert_in_words(client.post(url, {**base, **posted}))
    assert not Study.objects.exists()


# The analyses pages: per kind, values its form or its service refuses.
BAD_PARAMS = {"alpha": "1.5", "seed": "-1", "repeats": "1000", "k_max": "0", "trials": "100001",
              "n_seeds": "100001", "mirt_epochs": "0", "bins": "1001", "group_by": "metadata:", "margin": "-1",
              "n_boot": "10001", "run": "-1"}


def test_every_refusal_of_the_analyses_pages_is_in_the_pages_words(olga):
    rs = load_matrix(np.array([[1, 0, 1], [0, 0, 1], [1, 1, 1], [0, 1, 0]], dtype=float), name="words",
                     datasets=["x"] * 4)
    client = client_for(olga)
    for kind in AnalysisKind.values:
        url = reverse("annotate:analysis_kind", kwargs={"kind": kind})
        base = {name: str(value) for name, value in defaults(kind).items()}
        base |= {"response_set": rs.pk, "label_higher_is_harder": "True"}
        for name in defaults(kind):
            if name in BAD_PARAMS:
                response = client.post(url, {**base, name: BAD_PARAMS[name]})
                assert response.status_code == 400, (kind, name)
                assert_in_words(response)
        if kind == AnalysisKind.DATASET_ROBUSTNESS:  # one dataset: nothing to compare
            response = client.post(url, base)
            assert_in_words(response, expect=(
                "The Robustness to datasets (E.2, table 10) analysis needs at least 2 datasets; response set "
                f"{rs} has 1. Group by subject instead."))
    assert not AnalysisRun.objects.exists()

