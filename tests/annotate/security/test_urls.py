"""Walk every URL pattern of the site as every kind of visitor.

The URL patterns come from the resolver (``get_resolver().url_patterns``,
recursively), so a page added later is walked too; a pattern that the access
table below does not classify fails the walk (add it to ``ACCESS``).

Cast: ``anonymous``; ``evaluator`` (``evaluator-ada1``, onboarded in study A,
two answers given and a third pair on screen); ``other_evaluator``
(``evaluator-bo3``, in study B only); ``researcher`` (``rita``, researcher
group, owner of no study and added to none: an outsider to every study, so
every study page, download and API endpoint answers 404); ``admin``
(``root``, superuser). ``evaluator-bob2`` also judges in study A: the evaluator must never see his pseudonym.

Every path parameter is filled with the id of a real object of study A (or
the first object of the admin's model); every view is requested with GET and,
when it accepts writes, with an empty POST. For the four roles other than
admin the walk ends with the database exactly as it started: refused writes
change nothing.

Every HTML (or SVG) answer is also searched for the unescaped markup planted in
question texts, ids, subjects, dataset, model and study names: uploaded text
must always be shown as text.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import models as dj_models
from django.http import HttpResponse
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver, include, path

from annotate.api.services import api_token_create
from annotate.models import (
    Assignment,
    Dataset,
    Invitation,
    Judgment,
    LanguageModel,
    Participation,
    Question,
    Study,
    Subject,
    UploadJob,
)
from annotate.runs.services.scoring import scoring_run_create, scoring_run_enqueue
from annotate.studies.services.judging import judging_screen, judgment_submit
from annotate.studies.services.participation import ensure_role_groups, invitation_create
from tests.annotate.factories import make_catalog, make_evaluator, make_study, make_user

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

ROLES = ("anonymous", "evaluator", "other_evaluator", "researcher", "admin")
MARKUP = '<script>alert("xss")</script><img src=x onerror=alert(1)>'
UNESCAPED = ("<script>alert(", "<img src=x onerror")
LOGIN_PREFIXES = ("/accounts/login/", "/admin/login/")
DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


# --- outcomes ------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What a response must look like: a status set and, for redirects, where to."""

    name: str
    check: Callable[[object], bool]


def _location(response) -> str:
    return response.get("Location", "") if response.status_code in (301, 302, 303) else ""


OK = Outcome("ok (200, or a redirect that is not to a login page)",
             lambda r: r.status_code == 200 or (r.status_code == 302 and not _location(r).startswith(LOGIN_PREFIXES)))
LOGIN = Outcome("sent to a login page", lambda r: r.status_code == 302 and _location(r).startswith(LOGIN_PREFIXES))
FORBIDDEN = Outcome("403", lambda r: r.status_code == 403)
NOT_FOUND = Outcome("404", lambda r: r.status_code == 404)
UNAUTHORIZED = Outcome("401", lambda r: r.status_code == 401)
NOT_ALLOWED = Outcome("405", lambda r: r.status_code == 405)
BAD_INPUT = Outcome("400 (past the access check; the empty input refused)", lambda r: r.status_code == 400)
REACHED = Outcome("reached (200, 302 not to login, or 400 for the empty form)",
                  lambda r: OK.check(r) or r.status_code == 400)
ADMIN_REACHED = Outcome("reached (200, 302 not to login, or 403 where a read-only model admin refuses add/delete)",
                        lambda r: OK.check(r) or r.status_code == 403)


@dataclass(frozen=True)
class Access:
    """Expected outcome per role for GET and for an empty POST (None: not sent)."""

    label: str
    get: dict[str, Outcome]
    post: dict[str, Outcome] | None = None


def everyone(outcome: Outcome) -> dict[str, Outcome]:
    return dict.fromkeys(ROLES, outcome)


def roles(anonymous, evaluator, other_evaluator, researcher, admin) -> dict[str, Outcome]:
    return dict(zip(ROLES, (anonymous, evaluator, other_evaluator, researcher, admin)))


PUBLIC = Access("public page", everyone(OK))
LOGGED_IN = Access("any logged-in user", roles(LOGIN, OK, OK, OK, OK))
LOGOUT = Access("log out (POST only; then to the login page)", everyone(NOT_ALLOWED), everyone(LOGIN))
INVITATION = Access("invitation link: anyone holding it may join (join POSTs are tested in the judging tests)",
                    everyone(OK))
OWN_STUDY = Access("the study's own evaluators only",
                   roles(LOGIN, OK, NOT_FOUND, NOT_FOUND, NOT_FOUND))
OWN_STUDY_FORM = Access("the study's own evaluators only (form)",
                        roles(LOGIN, OK, NOT_FOUND, NOT_FOUND, NOT_FOUND),
                        roles(LOGIN, REACHED, NOT_FOUND, NOT_FOUND, NOT_FOUND))
STAFF_PAGE = Access("staff page", roles(LOGIN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK))
RESEARCHER_PAGE = Access("researchers and staff", roles(LOGIN, FORBIDDEN, FORBIDDEN, OK, OK))
RESEARCHER_THEN_STAFF_WRITE = Access(
    "staff write behind the researcher gate (POST only)",
    roles(LOGIN, FORBIDDEN, FORBIDDEN, NOT_ALLOWED, NOT_ALLOWED),
    roles(LOGIN, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
)
RESEARCHER_START = Access("researchers and staff; a valid POST starts a computation (derived results only)",
                          roles(LOGIN, FORBIDDEN, FORBIDDEN, OK, OK),
                          roles(LOGIN, FORBIDDEN, FORBIDDEN, BAD_INPUT, BAD_INPUT))
RESEARCHER_NOT_READY = Access("researchers and staff; the fixture's run is not finished, so 404",
                              roles(LOGIN, FORBIDDEN, FORBIDDEN, NOT_FOUND, NOT_FOUND))
STUDY_PAGE = Access("the study's owner, members and staff (rita is an outsider: 404)",
                    roles(LOGIN, FORBIDDEN, FORBIDDEN, NOT_FOUND, OK))
STUDY_FORM = Access("the study's owner, members and staff (form; rita is an outsider: 404)",
                    roles(LOGIN, FORBIDDEN, FORBIDDEN, NOT_FOUND, OK),
                    roles(LOGIN, FORBIDDEN, FORBIDDEN, NOT_FOUND, OK))
STUDY_WRITE = Access("the study's owner, members and staff (POST only; rita is an outsider: 404)",
                     roles(LOGIN, FORBIDDEN, FORBIDDEN, NOT_FOUND, NOT_ALLOWED),
                     roles(LOGIN, FORBIDDEN, FORBIDDEN, NOT_FOUND, OK))
STUDY_WRITE_FORM = Access("the study's owner, members and staff (POST only; rita is an outsider: 404); an empty "
                          "POST re-shows the manage page with the form's errors (400)",
                          roles(LOGIN, FORBIDDEN, FORBIDDEN, NOT_FOUND, NOT_ALLOWED),
                          roles(LOGIN, FORBIDDEN, FORBIDDEN, NOT_FOUND, BAD_INPUT))
STUDY_QUEUE = Access("the study's owner, members and staff (POST only); a valid POST queues a computation",
                     roles(LOGIN, FORBIDDEN, FORBIDDEN, NOT_FOUND, NOT_ALLOWED),
                     roles(LOGIN, FORBIDDEN, FORBIDDEN, NOT_FOUND, BAD_INPUT))
RESEARCHER_FORM = Access("researchers and staff (form)", roles(LOGIN, FORBIDDEN, FORBIDDEN, OK, OK),
                         roles(LOGIN, FORBIDDEN, FORBIDDEN, OK, OK))
RESEARCHER_FORM_REFUSED = Access("researchers and staff (form); an empty POST re-shows it with its errors (400)",
                                 roles(LOGIN, FORBIDDEN, FORBIDDEN, OK, OK),
                                 roles(LOGIN, FORBIDDEN, FORBIDDEN, BAD_INPUT, BAD_INPUT))
RESEARCHER_QUERY = Access("researchers and staff; without its query parameters, 400",
                          roles(LOGIN, FORBIDDEN, FORBIDDEN, BAD_INPUT, BAD_INPUT))
RESEARCHER_POST = Access("researchers and staff (POST only; answers JSON, writes nothing)",
                         roles(LOGIN, FORBIDDEN, FORBIDDEN, NOT_ALLOWED, NOT_ALLOWED),
                         roles(LOGIN, FORBIDDEN, FORBIDDEN, OK, OK))
API_PUBLIC = Access("API description", everyone(OK))
API_STAFF_READ = Access("API, staff", roles(UNAUTHORIZED, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK))
API_STAFF_READ_WRITE = Access("API, staff", roles(UNAUTHORIZED, FORBIDDEN, FORBIDDEN, FORBIDDEN, OK),
                              roles(UNAUTHORIZED, FORBIDDEN, FORBIDDEN, FORBIDDEN, BAD_INPUT))
API_STAFF_WRITE = Access("API, staff (POST only)", everyone(NOT_ALLOWED),
                         roles(UNAUTHORIZED, FORBIDDEN, FORBIDDEN, FORBIDDEN, BAD_INPUT))
API_RESEARCHER = Access("API, researchers and staff", roles(UNAUTHORIZED, FORBIDDEN, FORBIDDEN, OK, OK))
API_STUDY = Access("API, the study's owner, members and staff (rita is an outsider: 404)",
                   roles(UNAUTHORIZED, FORBIDDEN, FORBIDDEN, NOT_FOUND, OK))
API_RESEARCHER_WRITE = Access("API, researchers and staff (POST only); a valid POST queues an analysis",
                              everyone(NOT_ALLOWED), roles(UNAUTHORIZED, FORBIDDEN, FORBIDDEN, BAD_INPUT, BAD_INPUT))
API_RESEARCHER_CREATE = Access("API, researchers and staff (POST only); a valid POST writes a closed study",
                               everyone(NOT_ALLOWED), roles(UNAUTHORIZED, FORBIDDEN, FORBIDDEN, BAD_INPUT, BAD_INPUT))
API_UNKNOWN = Access("API, a path no endpoint has (the catch-all): a JSON 404 for anyone, any method",
                     everyone(NOT_FOUND), everyone(NOT_FOUND))
ADMIN = Access("admin: staff only", roles(LOGIN, LOGIN, LOGIN, LOGIN, ADMIN_REACHED),
               roles(LOGIN, LOGIN, LOGIN, LOGIN, None))  # the admin's own writes are not replayed
ADMIN_MISSING = Access("admin, a page that does not exist", roles(LOGIN, LOGIN, LOGIN, LOGIN, NOT_FOUND))
ADMIN_LOGIN = Access("admin login page", everyone(OK))
ADMIN_LOGOUT = Access("admin log out (POST only; a GET by non-staff goes to the admin index)",
                      roles(OK, OK, OK, OK, NOT_ALLOWED))
ADMIN_NO_QUERY = Access("admin autocomplete without its query", roles(LOGIN, LOGIN, LOGIN, LOGIN, FORBIDDEN))
ADMIN_NO_PAGE = Access("admin view-on-site of a model without pages", roles(LOGIN, LOGIN, LOGIN, LOGIN, NOT_FOUND))

ACCESS: dict[str, Access] = {
    # Django's auth views (and the admin's login, placed first so that a refused login answers 400)
    "login": PUBLIC,
    "admin_login": ADMIN_LOGIN,
    "logout": LOGOUT,
    "password_change": Access("any logged-in user (form)", roles(LOGIN, OK, OK, OK, OK),
                              roles(LOGIN, REACHED, REACHED, REACHED, REACHED)),
    "password_change_done": LOGGED_IN,
    "password_reset": PUBLIC,
    "password_reset_done": PUBLIC,
    "password_reset_confirm": PUBLIC,
    "password_reset_complete": PUBLIC,
    # the site
    "annotate:home": PUBLIC,
    "annotate:study_join": INVITATION,
    "annotate:study_join_fresh": Access("start fresh on an invitation (POST only: it signs out; tested in the "
                                        "judging tests)", everyone(NOT_ALLOWED)),
    "annotate:study_join_declined": Access("after declining consent: a page for anyone holding the link",
                                           everyone(OK), everyone(NOT_ALLOWED)),
    "annotate:studies": LOGGED_IN,
    "annotate:study_entry": OWN_STUDY,
    "annotate:study_onboarding": OWN_STUDY_FORM,
    "annotate:study_guidelines": OWN_STUDY_FORM,
    "annotate:study_judge": OWN_STUDY_FORM,
    "annotate:study_done": OWN_STUDY,
    "annotate:study_closed": OWN_STUDY,
    "annotate:study_create": RESEARCHER_FORM_REFUSED,
    "annotate:study_derive": RESEARCHER_FORM_REFUSED,
    "annotate:study_import": RESEARCHER_FORM_REFUSED,
    "annotate:study_scope_counts": RESEARCHER_QUERY,
    "annotate:markdown_preview": RESEARCHER_POST,
    "annotate:study_edit": STUDY_FORM,
    "annotate:study_manage": STUDY_PAGE,
    "annotate:study_status": STUDY_WRITE_FORM,
    "annotate:study_invitation_create": STUDY_WRITE,
    "annotate:study_invitation_revoke": STUDY_WRITE,
    "annotate:study_status_confirm": STUDY_PAGE,
    "annotate:study_quality_settings": STUDY_WRITE_FORM,
    "annotate:study_stopping_rules": STUDY_WRITE_FORM,
    "annotate:study_evaluator_exclude": STUDY_WRITE_FORM,
    "annotate:study_evaluator_restore": STUDY_WRITE_FORM,
    # results (scoring runs) and reports
    "annotate:results": RESEARCHER_PAGE,
    "annotate:response_set_score": RESEARCHER_THEN_STAFF_WRITE,
    "annotate:run_detail": RESEARCHER_PAGE,
    "annotate:run_models": RESEARCHER_PAGE,
    "annotate:run_questions": RESEARCHER_PAGE,
    "annotate:run_questions_csv": RESEARCHER_PAGE,
    "annotate:run_questions_parquet": RESEARCHER_PAGE,
    "annotate:run_models_csv": RESEARCHER_PAGE,
    "annotate:run_models_parquet": RESEARCHER_PAGE,
    "annotate:run_codebook": RESEARCHER_PAGE,
    "annotate:run_tables_zip": RESEARCHER_PAGE,
    "annotate:study_report": STUDY_PAGE,
    "annotate:study_report_json": STUDY_PAGE,
    "annotate:study_report_csv": STUDY_PAGE,
    "annotate:study_report_zip": STUDY_PAGE,
    "annotate:study_report_pools": STUDY_QUEUE,
    "annotate:study_judgments_csv": STUDY_PAGE,
    "annotate:study_report_pairs_csv": STUDY_PAGE,
    "annotate:study_report_plot": STUDY_PAGE,
    "annotate:study_report_table_csv": STUDY_PAGE,
    # analyses (queued in the fixture)
    "annotate:analyses": RESEARCHER_PAGE,
    "annotate:analysis_kind": RESEARCHER_START,
    "annotate:analysis_run": RESEARCHER_PAGE,
    "annotate:analysis_run_json": RESEARCHER_NOT_READY,
    "annotate:analysis_run_csv": RESEARCHER_NOT_READY,
    "annotate:analysis_run_table_csv": RESEARCHER_NOT_READY,
    "annotate:analysis_run_codebook": RESEARCHER_NOT_READY,
    "annotate:analysis_run_zip": RESEARCHER_NOT_READY,
    "annotate:analysis_run_plot": RESEARCHER_NOT_READY,
    # the JSON API (session-authenticated here; tokens are tested in api/test_tokens.py)
    "annotate:api_openapi": API_PUBLIC,
    "annotate:api_docs": RESEARCHER_PAGE,  # the interactive docs page of the generated OpenAPI document
    "annotate:api_response_sets": API_STAFF_READ_WRITE,
    "annotate:api_response_set": API_STAFF_READ,
    "annotate:api_scoring_runs": API_STAFF_WRITE,
    "annotate:api_scoring_run": API_STAFF_READ,
    "annotate:api_upload": API_STAFF_READ,
    "annotate:api_scoring_run_questions": API_RESEARCHER,
    "annotate:api_scoring_run_models": API_RESEARCHER,
    "annotate:api_studies": API_RESEARCHER,
    "annotate:api_study_derive": API_RESEARCHER_CREATE,
    "annotate:api_study_import": API_RESEARCHER_CREATE,
    "annotate:api_study_report": API_STUDY,
    "annotate:api_study_judgments": API_STUDY,
    "annotate:api_response_set_human": API_STAFF_WRITE,
    "annotate:api_human_labels": API_RESEARCHER_WRITE,
    "annotate:api_analysis_run": API_RESEARCHER,
    "annotate:api_not_found": API_UNKNOWN,
}
ADMIN_SPECIAL = {
    "admin:login": ADMIN_LOGIN,
    "admin:logout": ADMIN_LOGOUT,
    "admin/logout/": ADMIN_LOGOUT,  # the same view, placed first so that it also forgets the evaluator
    "admin:autocomplete": ADMIN_NO_QUERY,
    "admin:view_on_site": ADMIN_NO_PAGE,
    "admin:annotate_responseset_upload_preview": ADMIN_MISSING,  # an unknown upload token
    "admin/(?P<url>.*)$": ADMIN_MISSING,  # the catch-all
}


# --- the URL patterns ------------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    key: str  # "namespace:name", or the full route of an unnamed pattern
    route: str  # the full pattern text, e.g. "studies/<int:study_id>/judge/"
    pattern: URLPattern
    namespace: str | None


def all_routes() -> list[Route]:
    found: list[Route] = []

    def walk(patterns, prefix: str, namespace: str | None) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                inner = ":".join(x for x in (namespace, p.namespace) if x) or None
                walk(p.url_patterns, prefix + str(p.pattern), inner)
            else:
                route = prefix + str(p.pattern)
                key = f"{namespace}:{p.name}" if namespace and p.name else (p.name or route)
                found.append(Route(key=key, route=route, pattern=p, namespace=namespace))

    walk(get_resolver().url_patterns, "", None)
    return found


def access_of(route: Route) -> Access | None:
    if route.key in ADMIN_SPECIAL:
        return ADMIN_SPECIAL[route.key]
    if route.namespace == "admin":
        return ADMIN
    return ACCESS.get(route.key)


# --- the cast and its objects ----------------------------------------------------------


@dataclass
class Cast:
    users: dict[str, object]
    study_a: Study
    params: dict[str, str]


def answer(participation: Participation, choices: list[str]) -> None:
    for choice in choices:
        screen = judging_screen(participation=participation)
        judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                        choice=choice)


@pytest.fixture
def cast() -> Cast:
    catalog = make_catalog(per_subject=4, with_text=" " + MARKUP)
    Dataset.objects.filter(pk=catalog.dataset.pk).update(name=f"bench {MARKUP}")
    Subject.objects.filter(pk=catalog.subjects[0].pk).update(name=f"Maths {MARKUP}")
    LanguageModel.objects.filter(pk=catalog.models[0].pk).update(name=f"model {MARKUP}")
    for question in Question.objects.filter(dataset=catalog.dataset):
        question.external_id = f"{question.external_id}{MARKUP}"
        question.save(update_fields=["external_id"])
    study_a = make_study(catalog, n_pairs=6, name=f"Study A {MARKUP}")
    study_b = make_study(catalog, n_pairs=2, name="Study B")
    invitation = invitation_create(study=study_a, note=f"for {MARKUP}")
    invitation_create(study=study_b)
    ada = make_evaluator(study_a, "evaluator-ada1")
    answer(ada, ["left", "skip"])
    judging_screen(participation=ada)  # a third pair on her screen
    answer(make_evaluator(study_a, "evaluator-bob2"), ["right"])
    bo = make_evaluator(study_b, "evaluator-bo3")
    researchers, _ = ensure_role_groups()
    rita = make_user("rita")
    rita.groups.add(researchers)
    root = make_user("root", staff=True)
    root.is_superuser = True
    root.save()
    api_token_create(user=root, name="walk")
    with override_settings(TASKS=DATABASE_TASKS):  # a queued task row for the task admin
        scoring_run_enqueue(run=scoring_run_create(response_set=catalog.response_set))
    params = {
        **_analysis_params(catalog.response_set),
        "study_id": str(study_a.pk),
        "invitation_id": str(invitation.pk),
        "participation_id": str(ada.pk),
        "token": invitation.token,
        "response_set_id": str(catalog.response_set.pk),
        "run_id": str(catalog.run.pk),
        **dict.fromkeys(("upload_id", "job_id"), str(UploadJob.objects.create(token="a" * 32).pk)),  # queued
        "table": "timing",
        "key": "consensus",
        "name": "agreement",
        "fmt": "png",
        "uidb64": "MQ",
        "app_label": "annotate",
        "url": "no-such-page/",
        "content_type_id": str(ContentType.objects.get_for_model(Study).pk),
        "id": str(ada.user.pk),
    }
    users = {"anonymous": None, "evaluator": ada.user, "other_evaluator": bo.user, "researcher": rita, "admin": root}
    return Cast(users=users, study_a=study_a, params=params)


def _analysis_params(response_set) -> dict[str, str]:
    """A queued analysis run, when the app has analyses."""
    try:
        run_model = apps.get_model("annotate", "AnalysisRun")
    except LookupError:
        return {}
    run = run_model.objects.create(kind="efficiency", response_set=response_set, params={}, params_key="0" * 64)
    return {"analysis_id": str(run.pk), "kind": "efficiency"}


_PARAM = re.compile(r"<(?:(\w+):)?(\w+)>|\(\?P<(\w+)>[^)]*\)")


def _admin_model(route: str) -> type[dj_models.Model] | None:
    match = re.match(r"admin/(\w+)/(\w+)/", route)
    if not match:
        return None
    try:
        return apps.get_model(match.group(1), match.group(2))
    except LookupError:
        return None


def fill(route: Route, cast: Cast) -> str:
    """The route with every parameter replaced by a real id (fails on an unknown parameter)."""
    text = route.route.replace("^", "").replace("$", "")  # regex anchors of re_path patterns

    def value(match: re.Match) -> str:
        name = match.group(2) or match.group(3)
        if route.key == "password_reset_confirm" and name == "token":
            return "set-password"
        if route.key == "admin:annotate_responseset_upload_preview":
            return "0" * 32
        if name == "object_id":  # the first object of the admin's model (view-on-site: a study)
            model = _admin_model(route.route) or Study
            first = model._default_manager.order_by("pk").first()
            assert first is not None, f"the walk's fixture has no {model.__name__} for {route.key}"
            return str(first.pk)
        assert name in cast.params, f"{route.key}: no value for the path parameter {name!r}; add it to the fixture"
        return cast.params[name]

    return "/" + _PARAM.sub(value, text)


def client_for(cast: Cast, role: str) -> Client:
    client = Client()
    if cast.users[role] is not None:
        client.force_login(cast.users[role])
    return client


def snapshot() -> tuple:
    """Everything a refused write could have changed."""
    counts = tuple(m._default_manager.count() for m in apps.get_app_config("annotate").get_models())
    return (
        counts,
        get_user_model().objects.count(),
        tuple(Study.objects.order_by("pk").values_list("status", "name")),
        tuple(Invitation.objects.order_by("pk").values_list("revoked_at", flat=True)),
        tuple(Participation.objects.order_by("pk").values_list(
            "field_of_study", "education_level", "onboarded_at", "guidelines_accepted_at", "finished_at")),
        tuple(Judgment.objects.order_by("pk").values_list("choice", "submitted_at")),
        tuple(Assignment.objects.order_by("pk").values_list("pair_id", "shown_at")),
    )


# --- the walk ------------------------------------------------------------------------------


def test_every_url_pattern_is_classified():
    unclassified = sorted(r.key for r in all_routes() if access_of(r) is None)
    assert unclassified == [], f"classify these URL patterns in ACCESS: {unclassified}"


def walk(cast: Cast, role: str) -> list[str]:
    """Request every classified pattern as ``role``; the list of violations."""
    routes = [r for r in all_routes() if access_of(r) is not None]
    failures: list[str] = []
    requests = [(r, "get") for r in routes] + [(r, "post") for r in routes if access_of(r).post is not None]
    for route, method in requests:
        access = access_of(route)
        expected = (access.get if method == "get" else access.post).get(role)
        if expected is None:
            continue
        url = fill(route, cast)
        response = getattr(client_for(cast, role), method)(url)
        if not expected.check(response):
            failures.append(f"{method.upper()} {url} [{route.key}, {access.label}] as {role}: "
                            f"{response.status_code} {_location(response)}; expected {expected.name}")
            continue
        content_type = response.get("Content-Type", "")
        if response.status_code == 200 and content_type.startswith(("text/html", "image/svg")):
            body = response.content.decode("utf-8", errors="replace")
            for raw in UNESCAPED:
                if raw in body:
                    failures.append(f"{method.upper()} {url} as {role}: shows uploaded markup unescaped ({raw!r})")
            if role == "evaluator" and "evaluator-bob2" in body:
                failures.append(f"{method.upper()} {url} as {role}: shows another evaluator's pseudonym")
    return failures


@pytest.mark.parametrize("role", ROLES)
def test_the_walk(cast, role):
    before = snapshot()
    failures = walk(cast, role)
    assert failures == [], "\n".join(failures)
    if role != "admin":
        assert snapshot() == before, f"a request as {role} changed the database"


# --- the walk itself can fail --------------------------------------------------------------


def leaky(request):
    """A page that forgot its access check and echoes a question text raw."""
    return HttpResponse(f"<p>{Question.objects.first().text}</p>")


urlpatterns = [path("leak/", leaky, name="leaky"), path("", include("eipsite.urls"))]


@override_settings(ROOT_URLCONF=__name__)
def test_a_new_unclassified_page_fails_the_walk():
    assert "leaky" in [r.key for r in all_routes() if access_of(r) is None]


@override_settings(ROOT_URLCONF=__name__)
def test_a_page_without_its_access_check_fails_the_walk(cast, monkeypatch):
    monkeypatch.setitem(ACCESS, "leaky", STAFF_PAGE)
    failures = walk(cast, "evaluator")
    assert any(f.startswith("GET /leak/ [leaky, staff page] as evaluator: 200") for f in failures), failures
    failures = walk(cast, "admin")
    assert any(f.startswith("GET /leak/ as admin: shows uploaded markup unescaped") for f in failures), failures
