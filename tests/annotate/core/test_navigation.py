"""Navigation by role, the study list with report links, links between a
study's manage page and its report, and the 403/404 pages.

Cast: ``owner`` (staff), ``rita`` (researcher), ``ada`` (evaluator in the
study), ``plain`` (logged in, no role), anonymous visitors.
"""
from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse, set_script_prefix

from annotate.models import Pair
from tests.annotate.factories import client_for, make_catalog, make_evaluator, make_study, make_user

pytestmark = pytest.mark.django_db

NAV = re.compile(r'<nav class="sections"[^>]*>(.*?)</nav>', re.S)
LINK = re.compile(r'<a href="([^"]+)"[^>]*>([^<]+)</a>')


@pytest.fixture
def cast():
    rita = make_user("rita")
    rita.groups.add(Group.objects.get_or_create(name="researcher")[0])
    study = make_study(make_catalog(per_subject=4), n_pairs=4, name="Main", owner=rita)
    owner = make_user("owner", staff=True)
    ada = make_evaluator(study, "ada").user
    plain = make_user("plain")
    return {"study": study, "owner": owner, "rita": rita, "ada": ada, "plain": plain}



def nav_links(body: str) -> list[tuple[str, str]]:
    """(label, url) of the section links in the top bar; [] when there is no bar."""
    match = NAV.search(body)
    return [] if match is None else [(label.replace("&amp;", "&"), url) for url, label in LINK.findall(match[1])]


def test_it_shows_each_role_its_sections(cast):
    expected = {
        "owner": [("Results", "/results/"), ("Studies", "/studies/"), ("Analyses", "/analyses/"), ("Admin", "/admin/")],
        "rita": [("Results", "/results/"), ("Studies & reports", "/studies/"), ("Analyses", "/analyses/")],
        "ada": [("My studies", "/studies/")],
        "plain": [],
    }
    for who, links in expected.items():
        body = client_for(cast[who]).get(reverse("annotate:home")).content.decode()
        assert nav_links(body) == links, who
    assert nav_links(client_for().get(reverse("annotate:home")).content.decode()) == []


def test_it_marks_the_current_section(cast):
    body = client_for(cast["rita"]).get(reverse("annotate:analyses")).content.decode()
    assert '<a href="/analyses/" aria-current="page">Analyses</a>' in body
    assert '<a href="/results/">Results</a>' in body


def test_a_researcher_sees_their_study_with_links_to_manage_it_and_its_report(cast):
    study = cast["study"]
    response = client_for(cast["rita"]).get(reverse("annotate:studies"))
    body = response.content.decode()
    assert response.status_code == 200
    assert "You are not part of any study" not in body
    assert f'href="/studies/{study.pk}/report/"' in body and "Main" in body
    assert f'href="/studies/{study.pk}/manage/"' in body


def test_staff_see_manage_and_report_links_and_the_two_pages_link_to_each_other(cast):
    study = cast["study"]
    client = client_for(cast["owner"])
    listing = client.get(reverse("annotate:studies")).content.decode()
    assert f'href="/studies/{study.pk}/manage/"' in listing and f'href="/studies/{study.pk}/report/"' in listing
    manage = client.get(reverse("annotate:study_manage", kwargs={"study_id": study.pk})).content.decode()
    assert f'<a href="/studies/{study.pk}/report/" id="report-link">' in manage


def test_the_report_links_back_to_manage_for_everyone_who_may_see_it():
    from tests.annotate.reports.test_report import build_study  # a study with votes, so it has a report

    study, _ = build_study()
    rhea = make_user("rhea")
    rhea.groups.add(Group.objects.get_or_create(name="researcher")[0])
    study.members.add(rhea)
    url = reverse("annotate:study_report", kwargs={"study_id": study.pk})
    manage = f'href="/studies/{study.pk}/manage/" id="manage-link"'
    assert manage in client_for(make_user("boss", staff=True)).get(url).content.decode()
    researcher_page = client_for(rhea).get(url).content.decode()
    assert manage in researcher_page and 'href="/studies/"' in researcher_page


def test_the_manage_page_shows_external_question_ids_and_evaluator_pseudonyms(cast):
    study = cast["study"]
    url = reverse("annotate:study_manage", kwargs={"study_id": study.pk})
    body = client_for(cast["owner"]).get(url).content.decode()
    matrix = body[body.index('class="matrix"'):]
    for pair in Pair.objects.filter(study=study).select_related("question_a__dataset", "question_b__dataset"):
        # make_catalog names questions q<subject>-<k>; the database ids are plain integers. Each question by
        # its identity, dataset and external id, in its own column, above its text as evaluators see it.
        a, b = pair.question_a, pair.question_b
        cells = re.findall(r'<td class="pair-question"><span class="question-id">([^<]*)</span>', matrix)
        assert f"{a.dataset.name}:{a.external_id}" in cells and f"{b.dataset.name}:{b.external_id}" in cells
        assert re.search(rf'<span class="question-id">{re.escape(a.dataset.name)}:{re.escape(a.external_id)}</span>'
                         rf'<div class="question-text question-clip"><p class="plain-text">'
                         rf'{re.escape(a.text)}</p>', matrix)
        assert f"<td>{pair.question_a_id}</td><td>{pair.question_b_id}</td>" not in matrix
    assert re.search(r'<th class="evaluator-head" title="evaluator 1: ada">ada</th>', matrix)


def test_a_forbidden_page_says_why_and_offers_home_and_another_login(cast):
    url = reverse("annotate:analyses")
    response = client_for(cast["ada"]).get(url)
    body = response.content.decode()
    assert response.status_code == 403
    assert "You are not allowed to see this page" in body and "logged in as <strong>ada</strong>" in body
    assert '<a href="/">Home</a>' in body and f'href="/accounts/login/?next={url}"' in body


def test_a_missing_page_says_so_and_offers_home_and_another_login(cast):
    response = client_for(cast["rita"]).get("/studies/999999/report/")
    body = response.content.decode()
    assert response.status_code == 404
    assert "Page not found" in body and "<code>/studies/999999/report/</code>" in body
    assert '<a href="/">Home</a>' in body and "Log in as another user" in body
    assert nav_links(body)[0] == ("Results", "/results/")  # the page keeps the visitor's navigation


@pytest.mark.parametrize(("groups", "links"), [
    (("evaluator",), [("My studies", "/studies/")]),
    (("evaluator", "researcher"), [("Results", "/results/"), ("Studies & reports", "/studies/"),
                                   ("Analyses", "/analyses/")]),
    ((), []),
])
def test_the_judging_page_shows_the_navigation_of_the_participants_groups(cast, groups, links):
    study = cast["study"]
    user = make_evaluator(study, "eve").user
    user.groups.set([Group.objects.get_or_create(name=name)[0] for name in groups])
    response = client_for(user).get(reverse("annotate:study_judge", kwargs={"study_id": study.pk}))
    assert response.status_code == 200
    assert nav_links(response.content.decode()) == links


def test_the_links_follow_the_script_prefix_and_the_current_page_of_each_request(cast):
    """The links are reversed once per script prefix and the bar rendered once per current section: a page served
    under a prefix, then the same pages without it, each get their own."""
    rita = client_for(cast["rita"])
    set_script_prefix("/eip/")  # as the WSGI handler sets it from SCRIPT_NAME (the test client does not)
    try:
        body = rita.get(reverse("annotate:analyses")).content.decode()
    finally:
        set_script_prefix("/")
    assert nav_links(body) == [("Results", "/eip/results/"), ("Studies & reports", "/eip/studies/"),
                               ("Analyses", "/eip/analyses/")]
    for url, current in ((reverse("annotate:analyses"), "/analyses/"), (reverse("annotate:results"), "/results/")):
        body = rita.get(url).content.decode()
        assert nav_links(body)[0] == ("Results", "/results/")
        assert re.findall(r'<a href="([^"]+)" aria-current="page">', body) == [current]


BRAND = re.compile(r'<a class="brand" href="([^"]+)">([^<]+)</a>')
TITLE = re.compile(r"<title>([^<]*)</title>")


def test_evaluators_and_visitors_see_a_neutral_site_name_researchers_the_method(cast):
    study = cast["study"]
    judge = reverse("annotate:study_judge", kwargs={"study_id": study.pk})
    for who, pages in {"ada": ("annotate:home", judge, "annotate:studies"), "plain": ("annotate:home",),
                       None: ("annotate:home", "login")}.items():
        client = client_for(cast[who]) if who else client_for()
        for page in pages:
            response = client.get(page if page.startswith("/") else reverse(page), follow=True)
            assert response.status_code == 200, (who, page)
            body = response.content.decode()
            assert BRAND.findall(body) == [("/", "Question comparison")], (who, page)
            assert "EIP" not in body, (who, page)  # neither the name of the method under test nor any other
    for who in ("owner", "rita"):
        body = client_for(cast[who]).get(reverse("annotate:home")).content.decode()
        assert BRAND.findall(body) == [("/", "EIP alignment")], who
        assert TITLE.findall(body) == ["EIP human alignment"], who


def test_the_login_page_offers_no_log_in_link_to_itself(cast):
    body = client_for().get(reverse("login")).content.decode()
    assert body.count(f'href="{reverse("login")}"') == 0 and body.count("<h1>Log in</h1>") == 1
    assert 'action="/logout/"' not in body
    signed_in = client_for(cast["ada"]).get(reverse("login")).content.decode()
    assert "Log out</button>" in signed_in  # someone logged in still sees who they are and can log out
