"""Every page that takes a form, refused: a POST that is refused (a form that
does not validate, or a service that says no) answers 400 with the page itself,
its error shown and what was typed kept, and writes nothing.

Two walks. ``REFUSALS`` posts an invalid form to each researcher and staff page
(and the evaluator's onboarding, the login and password forms) and checks the status, the error, the typed
values and the row count of every model. The sweep posts an empty form to every
URL of the site (and the admin's upload pages) and fails on any answer that
re-shows a bound form with errors under another status than 400, so a page
added later is checked too. A third walk GETs every URL with a query string
of junk parameters: a refusal is a page of the site (the report's downloads
too), never bare text.

Cast: ``olga`` (researcher, owns the draft study), ``root`` (superuser: the
admin pages and the sweep), ``ada`` (evaluator of olga's study, not yet
onboarded), an anonymous visitor (the login and password-reset forms).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import SimpleUploadedFile
from django.forms import BaseForm
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils.html import escape

from annotate.catalog.services.human import response_set_mark_human
from annotate.models import LanguageModel, Participation, ResponseSet, Study, UploadJob, UploadState
from tests.annotate.factories import (
    Catalog,
    client_for,
    make_catalog,
    make_evaluator,
    make_researcher,
    make_study,
    make_user,
    write_responses,
)

pytestmark = pytest.mark.django_db


@dataclass
class Cast:
    catalog: Catalog
    other: Catalog  # a second dataset, which no human set shares
    study: Study
    ada: Participation
    human: ResponseSet  # people's answers to the catalog's questions
    human_apart: ResponseSet  # people's answers to the other dataset's questions only
    job: UploadJob  # a finished upload of the catalog's response set
    root: AbstractBaseUser
    clients: dict[str, Client]


def _human_set(catalog: Catalog, name: str) -> ResponseSet:
    people = [LanguageModel.objects.get_or_create(name=f"person-{k}")[0] for k in range(3)]
    response_set = ResponseSet.objects.create(name=name, file_name="p.csv", checksum=name.rjust(64, "0"),
                                              file_format="csv")
    write_responses(response_set, [(q, p, float((i * 3 + j) % 2)) for i, q in enumerate(catalog.questions)
                                   for j, p in enumerate(people)])
    return response_set_mark_human(response_set=response_set)


@pytest.fixture
def cast() -> Cast:
    catalog = make_catalog(per_subject=6)
    other = make_catalog(per_subject=2)
    olga = make_researcher("olga")
    study = make_study(catalog, n_pairs=6, name="Draft", owner=olga)
    root = make_user("root", staff=True)
    root.is_superuser = True
    root.save()
    ada = make_evaluator(study, "ada", ready=False)
    job = UploadJob.objects.create(token="d" * 32, state=UploadState.DONE, response_set=catalog.response_set)
    return Cast(catalog=catalog, other=other, study=study, ada=ada, human=_human_set(catalog, "people"),
                human_apart=_human_set(other, "people-apart"), job=job, root=root,
                clients={"olga": client_for(olga), "root": client_for(root), "ada": client_for(ada.user),
                         "anonymous": Client()})


def row_counts() -> dict[str, int]:
    """The number of rows of every model of the app, and of users."""
    models = [*apps.get_app_config("annotate").get_models(), get_user_model()]
    return {model._meta.label: model._default_manager.count() for model in models}


def study_form(cast: Cast, **overrides) -> dict:
    """A valid New-study form on the cast's catalog, with ``overrides``."""
    data = {"name": "Typed study name", "run": cast.catalog.run.pk, "datasets": [cast.catalog.dataset.pk],
            "pairs_mode": "total", "n_pairs": 8, "strategy": "uniform", "target_judgments_per_pair": 5, "seed": 42,
            "guidelines": "Pick the harder one.", "consent_text": "I agree.",
            "onboarding_questions": ["field_of_study", "education_level", "qualified_subjects"]}
    return {**data, **overrides}


def judgments_csv(dataset: str, question_b: str) -> SimpleUploadedFile:
    """A judgments file of one row, comparing question q0-0 of ``dataset`` with ``question_b``."""
    text = ("evaluator,dataset_a,question_a,dataset_b,question_b,harder\n"
            f"e1,{dataset},q0-0,{dataset},{question_b},a\n")
    return SimpleUploadedFile("judgments.csv", text.encode())


@dataclass(frozen=True)
class Refusal:
    """One refused POST: where, as whom, what it sends, what must come back."""

    url: Callable[[Cast], str]
    data: Callable[[Cast], dict]
    error: str  # shown on the page (as HTML-escaped text)
    kept: tuple[str, ...] = ()  # typed values the page must show again
    who: str = "olga"


def _url(name: str, **kwargs: Callable[[Cast], object]) -> Callable[[Cast], str]:
    return lambda cast: reverse(name, kwargs={key: value(cast) for key, value in kwargs.items()})


STUDY = {"study_id": lambda cast: cast.study.pk}
MIN_1 = "Ensure this value is greater than or equal to 1."
MIN_0 = "Ensure this value is greater than or equal to 0."

REFUSALS = {
    "New study: more pairs than exist (the sampler's refusal)": Refusal(
        _url("annotate:study_create"), lambda c: study_form(c, n_pairs=31),
        "only 30 distinct same-subject pairs are possible", ('value="Typed study name"', 'value="31"')),
    "Edit study: no pairs": Refusal(
        _url("annotate:study_edit", **STUDY), lambda c: study_form(c, n_pairs=0), MIN_1,
        ('value="Typed study name"', 'value="0"')),
    "Derived study: no pairs": Refusal(
        _url("annotate:study_derive"),
        lambda c: {"human_set": c.human.pk, "run": c.catalog.run.pk, "n_pairs": "0", "seed": "0",
                   "name": "Typed derived", "action": "preview"}, MIN_1, ('value="Typed derived"', 'value="0"')),
    "Derived study: sets that share no question (the service's refusal)": Refusal(
        _url("annotate:study_derive"),
        lambda c: {"human_set": c.human_apart.pk, "run": c.catalog.run.pk, "n_pairs": "5", "seed": "7",
                   "name": "Typed apart", "action": "create"}, "share no two questions of one subject",
        ('value="Typed apart"', 'value="7"')),
    "Derived study: create without a name (the service's refusal)": Refusal(
        _url("annotate:study_derive"),
        lambda c: {"human_set": c.human.pk, "run": c.catalog.run.pk, "n_pairs": "5", "seed": "13", "name": "",
                   "action": "create"}, "needs a name", ('value="13"',)),
    "Judgment import: no file": Refusal(
        _url("annotate:study_import"), lambda c: {"run": c.catalog.run.pk, "name": "Typed import"},
        "Choose at least one file.", ('value="Typed import"',)),
    "Judgment import: a row naming an unknown question (the service's list of problems)": Refusal(
        _url("annotate:study_import"),
        lambda c: {"run": c.catalog.run.pk, "name": "Typed problems",
                   "file_1": judgments_csv(c.catalog.dataset.name, "q9-9")},
        "1 problem; nothing was imported.", ('value="Typed problems"', "no question &#x27;q9-9&#x27;")),
    "Manage page, stopping rules: a negative budget": Refusal(
        _url("annotate:study_stopping_rules", **STUDY),
        lambda c: {"target_reliability": "0.8", "alpha": "0.05", "budget": "-1"}, MIN_0,
        ('value="0.8"', 'value="-1"')),
    "Manage page, invitation: a note over 200 characters": Refusal(
        _url("annotate:study_invitation_create", **STUDY), lambda c: {"note": "n" * 201},
        "Ensure this value has at most 200 characters (it has 201).", ('value="' + "n" * 201 + '"',)),
    "Manage page, settings: a negative speeder threshold": Refusal(
        _url("annotate:study_quality_settings", **STUDY),
        lambda c: {"speeder_seconds": "-2", "completion_code": "TYPED-CODE"}, MIN_0,
        ('value="TYPED-CODE"', 'value="-2"')),
    "Manage page, status: no such status": Refusal(
        _url("annotate:study_status", **STUDY), lambda c: {"status": "finished"}, "Select a valid choice"),
    "Manage page, exclusion: a blank reason": Refusal(
        _url("annotate:study_evaluator_exclude", **STUDY, participation_id=lambda c: c.ada.pk),
        lambda c: {"reason": "   "}, "A reason is required to exclude an evaluator"),
    "Analyses: a damping alpha above 1": Refusal(
        _url("annotate:analysis_kind", kind=lambda c: "rank_changes"),
        lambda c: {"response_set": c.catalog.response_set.pk, "alpha": "1.5"}, "alpha", ('value="1.5"',)),
    "Admin, upload: no file": Refusal(
        _url("admin:annotate_responseset_upload"),
        lambda c: {"file_format": "wide", "dataset": "Typed dataset", "id_column": "question_id", "name": ""},
        "give a responses file or harness logs", ('value="Typed dataset"',), who="root"),
    "Admin, score now: a damping alpha above 1": Refusal(
        lambda c: reverse("admin:annotate_responseset_upload_job", args=[c.job.pk]),
        lambda c: {"methods": ["eip", "accuracy"], "alpha": "1.5"}, "Ensure this value is less than or equal to 1.0.",
        ('value="1.5"',), who="root"),
    "Admin, add a dataset: no name": Refusal(
        _url("admin:annotate_dataset_add"),
        lambda c: {"name": "", "description": "typed description", "text_format": "plain"},
        "This field is required.", ("typed description",), who="root"),
    "Admin, change a dataset: a name another dataset has": Refusal(
        lambda c: reverse("admin:annotate_dataset_change", args=[c.catalog.dataset.pk]),
        lambda c: {"name": c.other.dataset.name, "description": "typed again", "text_format": "plain"},
        "Dataset with this Name already exists.", ("typed again",), who="root"),
    "Admin, change a study: a blank name": Refusal(
        lambda c: reverse("admin:annotate_study_change", args=[c.study.pk]),
        lambda c: {"name": "", "guidelines": "typed guidelines", "consent_text": "ok", "status": "draft",
                   "datasets": [c.catalog.dataset.pk], "pair_set-TOTAL_FORMS": "0",
                   "pair_set-INITIAL_FORMS": "0"},
        "This field is required.", ("typed guidelines",), who="root"),
    "Log in: a wrong password": Refusal(
        _url("login"), lambda c: {"username": "olga", "password": "wrong"},
        "Your username and password did not match.", ('value="olga"',), who="anonymous"),
    "Admin log in: a wrong password": Refusal(
        _url("admin:login"), lambda c: {"username": "root", "password": "wrong"},
        "Please enter the correct username and password for a staff account.", ('value="root"',),
        who="anonymous"),
    "Password change: a wrong old password": Refusal(
        _url("password_change"),
        lambda c: {"old_password": "wrong", "new_password1": "a-Long-pass-123", "new_password2": "a-Long-pass-123"},
        "Your old password was entered incorrectly."),
    "Password reset: not an e-mail address": Refusal(
        _url("password_reset"), lambda c: {"email": "not-an-address"}, "Enter a valid email address.",
        ('value="not-an-address"',), who="anonymous"),
    "Onboarding: a field of study that does not exist": Refusal(
        _url("annotate:study_onboarding", **STUDY),
        lambda c: {"field_of_study": "alchemy", "education_level": "master_student"},
        "Select a valid choice", who="ada"),
}


@pytest.mark.parametrize("case", REFUSALS.values(), ids=REFUSALS.keys())
def test_a_refused_post_is_a_400_with_its_error_and_what_was_typed_and_writes_nothing(cast, case):
    before = row_counts()
    response = cast.clients[case.who].post(case.url(cast), case.data(cast))
    html = response.content.decode()
    assert response.status_code == 400, html[:2000]
    assert escape(case.error) in html or case.error in html, re.findall(r"errorlist[^<]*<li>([^<]*)", html)
    for typed in case.kept:
        assert typed in html, typed
    assert row_counts() == before


def test_a_preview_that_is_not_refused_stays_200_and_writes_nothing(cast):
    before = row_counts()
    response = cast.clients["olga"].post(reverse("annotate:study_derive"), {
        "human_set": cast.human.pk, "run": cast.catalog.run.pk, "n_pairs": "5", "seed": "0", "action": "preview"})
    assert response.status_code == 200
    assert 'id="preview-pairs">5<' in response.content.decode()
    assert row_counts() == before


# --- the sweep: every URL, an empty POST ----------------------------------------------------------

_PARAM = re.compile(r"<(?:\w+:)?(\w+)>")
#: The admin's own pages (their add and change forms are walked above); its upload pages are the site's.
ADMIN_SWEPT = ("admin:annotate_responseset_upload", "admin:annotate_responseset_upload_job")


def _routes() -> list[tuple[str, str]]:
    """(URL name, or the route of an unnamed pattern; route) of every pattern but the API's and the admin's
    own (its upload pages are walked)."""
    found = []

    def walk(patterns, prefix: str, namespace: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern), ":".join(x for x in (namespace, p.namespace) if x))
            elif isinstance(p, URLPattern):
                route = prefix + str(p.pattern)
                name = (f"{namespace}:{p.name}" if namespace else p.name) if p.name else route
                if not route.startswith("api/") and (namespace != "admin" or name in ADMIN_SWEPT):
                    found.append((name, route))

    walk(get_resolver().url_patterns, "", "")
    return found


def _refused_forms(response) -> list[BaseForm]:
    """The bound forms with errors the response's templates were given (an admin form wraps its own)."""
    found = []
    for context in response.context or []:
        for value in context.flatten().values():
            form = getattr(value, "form", value)  # the admin's AdminForm
            if isinstance(form, BaseForm) and form.is_bound and form.errors:
                found.append(form)
    return found


def _params(cast: Cast) -> dict[str, str]:
    return {"study_id": str(cast.study.pk), "run_id": str(cast.catalog.run.pk),
            "response_set_id": str(cast.catalog.response_set.pk), "participation_id": str(cast.ada.pk),
            "invitation_id": "0", "analysis_id": "0", "kind": "rank_changes", "token": "no-such-token",
            "key": "consensus", "name": "agreement", "fmt": "png", "table": "timing", "job_id": str(cast.job.pk),
            "uidb64": "MQ"}


def test_no_page_shows_a_refused_form_under_another_status_than_400(cast):
    params = _params(cast)
    wrong, refused = [], []
    for name, route in _routes():
        names = _PARAM.findall(route)
        assert set(names) <= set(params), f"{name}: give the sweep a value for {set(names) - set(params)}"
        url = "/" + _PARAM.sub(lambda m: params[m.group(1)], route)
        response = client_for(cast.root).post(url, {})  # a client each: "start fresh" signs out
        if _refused_forms(response):
            refused.append(name)
            if response.status_code != 400:
                wrong.append(f"POST {url} ({name}): a refused form with status {response.status_code}")
    assert wrong == []
    # The sweep does see the refusals (an empty form is refused by each of these pages).
    assert {"annotate:study_create", "annotate:study_derive", "annotate:study_import", "annotate:study_edit",
            "annotate:study_stopping_rules", "annotate:analysis_kind", "admin:annotate_responseset_upload",
            "admin:annotate_responseset_upload_job", "login", "admin_login", "password_change",
            "password_reset"} <= set(refused), refused


# --- the sweep: no refused POST is a bare text page -------------------------------------------------

#: What a form may post that no page accepts: an empty form, and fields of the wrong kind (a judging answer
#: with tokens that name nothing, a run that is not a number).
REFUSED_BODIES = ({}, {"pair": "x", "left": "y", "choice": "left", "run": "abc", "query": "n_boot=1"})


def test_no_refused_post_is_a_bare_text_page(cast):
    """A browser that posts a form and is refused gets a page of the site (or of its admin) that says why, never
    a bare line of text; a JSON endpoint answers JSON."""
    eve = make_evaluator(cast.study, "eve")  # onboarded: her POST to the judging page is an answer
    params = _params(cast)
    bare, seen = [], set()
    for name, route in _routes():
        url = "/" + _PARAM.sub(lambda m: params[m.group(1)], route)
        for who in (cast.root, eve.user):
            for body in REFUSED_BODIES:
                response = client_for(who).post(url, body)
                if response.status_code != 400 or response["Content-Type"].startswith("application/json"):
                    continue
                seen.add(name)
                if not re.search(r"<html[\s>]", response.content.decode()):  # the site's or the admin's page
                    bare.append(f"POST {url} ({name}) as {who.get_username()}: {response.content[:120]!r}")
    assert bare == []
    # The sweep does reach the refusals it is about (each of these refuses one of the bodies).
    assert {"annotate:study_report_pools", "annotate:study_judge", "annotate:study_create"} <= seen, seen


# --- the sweep: no refused GET is a bare text page --------------------------------------------------

#: A query string no page or download accepts: the report's parameters and page numbers of the wrong kind.
JUNK_QUERY = {"run": "abc", "min_votes": "0", "tie_rule": "coin", "n_boot": "many", "page": "zz",
              "pairs_offset": "-1", "pairs_page": "0", "download": "1"}
#: The report's downloads that read its parameters (report.json answers JSON).
REPORT_DOWNLOADS = {"annotate:study_report_csv", "annotate:study_report_zip", "annotate:study_report_pairs_csv",
                    "annotate:study_report_table_csv", "annotate:study_report_plot"}


def test_no_refused_get_is_a_bare_text_page(cast):
    """A link followed with a bad query string (a page or a download) is refused on a page of the site that
    says why, never a bare line of text; a JSON endpoint answers JSON."""
    params = _params(cast)
    bare, seen = [], set()
    for name, route in _routes():
        url = "/" + _PARAM.sub(lambda m: params[m.group(1)], route)
        response = client_for(cast.root).get(url, JUNK_QUERY)
        if response.status_code != 400 or response["Content-Type"].startswith("application/json"):
            continue
        seen.add(name)
        if not re.search(r"<html[\s>]", response.content.decode()):  # the site's or the admin's page
            bare.append(f"GET {url}?{'&'.join(f'{k}={v}' for k, v in JUNK_QUERY.items())} ({name}): "
                        f"{response.content[:120]!r}")
    assert bare == []
    # The sweep does reach the refusals it is about: the report page and each of its downloads.
    assert {"annotate:study_report", *REPORT_DOWNLOADS} <= seen, seen


def test_a_refused_answer_says_nothing_was_saved_on_the_sites_page_with_the_way_back(cast):
    eve = make_evaluator(cast.study, "eve")
    before = row_counts()
    response = client_for(eve.user).post(reverse("annotate:study_judge", kwargs={"study_id": cast.study.pk}),
                                         {"pair": "x" * 10, "left": "y" * 10, "choice": "left"})
    html = response.content.decode()
    assert response.status_code == 400
    assert "<h1>Your answer was not saved</h1>" in html
    assert escape("This answer could not be read. Go back to the study page and try again.") in html \
        or escape("This answer does not match the pair you were shown. Nothing was saved.") in html
    assert f'href="{reverse("annotate:study_judge", kwargs={"study_id": cast.study.pk})}"' in html
    assert row_counts() == before


def test_a_refused_model_pools_request_says_why_on_the_report_s_page(cast):
    url = reverse("annotate:study_report_pools", kwargs={"study_id": cast.study.pk})
    before = row_counts()
    response = cast.clients["olga"].post(url, {"run": "abc"})
    html = response.content.decode()
    assert response.status_code == 400
    assert "<h1>No model-pool analysis was queued</h1>" in html
    assert escape("Say which scoring run's model pools to compute (the form's 'run' field).") in html
    assert f'<a href="{reverse("annotate:study_report", kwargs={"study_id": cast.study.pk})}">' in html
    assert row_counts() == before
