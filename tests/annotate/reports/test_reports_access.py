"""Who can see and download reports, and what the page and downloads hold.

Cast: ``owner`` (staff), ``rhea`` (researcher group, added to the study), ``ada`` (evaluator in
the study), ``plain`` (logged in, no role), anonymous visitors.
"""
from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from tests.annotate.factories import client_for, make_evaluator, make_user
from tests.annotate.reports.test_report import build_study

pytestmark = pytest.mark.django_db

BOM = b"\xef\xbb\xbf"


def report_urls(study_id: int) -> list[str]:
    kw = {"study_id": study_id}
    return [
        reverse("annotate:study_report", kwargs=kw),
        reverse("annotate:study_report_json", kwargs=kw),
        reverse("annotate:study_report_csv", kwargs=kw),
        reverse("annotate:study_judgments_csv", kwargs=kw),
        *(reverse("annotate:study_report_plot", kwargs={**kw, "name": n, "fmt": f})
          for n in ("agreement", "heatmap", "profiles", "pools") for f in ("png", "svg")),
    ]


@pytest.fixture
def cast():
    study, _ = build_study()
    owner = make_user("owner", staff=True)
    rhea = make_user("rhea")
    rhea.groups.add(Group.objects.get_or_create(name="researcher")[0])
    study.members.add(rhea)
    ada = make_evaluator(study, "ada-2")
    plain = make_user("plain")
    return study, owner, rhea, ada.user, plain



def test_anonymous_visitors_are_sent_to_login(cast):
    study = cast[0]
    for url in report_urls(study.pk):
        response = Client().get(url)
        assert response.status_code == 302 and response.url == f"{reverse('login')}?next={url}", url


def test_evaluators_and_users_without_a_role_get_403_everywhere(cast):
    study, _, _, ada, plain = cast
    for user in (ada, plain):
        client = client_for(user)
        for url in report_urls(study.pk):
            assert client.get(url).status_code == 403, (user.username, url)


def test_admins_and_researchers_can_see_and_download_everything(cast):
    study, owner, rhea = cast[:3]
    for user in (owner, rhea):
        client = client_for(user)
        for url in report_urls(study.pk):
            response = client.get(url + "?n_boot=20")
            assert response.status_code == 200, (user.username, url)


def test_the_page_shows_table_2_the_tests_and_the_plots(cast):
    study, _, rhea = cast[:3]
    page = client_for(rhea).get(reverse("annotate:study_report", kwargs={"study_id": study.pk}) + "?n_boot=20")
    html = page.content.decode()
    assert "Agreement with each evaluator and with the consensus (%)" in html
    assert '<th class="num" title="dee">V4</th>' in html
    assert 'title="no pair has a verdict FIRST or SECOND from both' in html
    assert "Agreement excluding the method&#x27;s ties (%)" in html
    assert "kappa on pairs is orientation-free" in html
    assert "McNemar p" in html and "Krippendorff" in html and "Model pools" in html
    svg, png = (reverse("annotate:study_report_plot", kwargs={"study_id": study.pk, "name": "heatmap", "fmt": fmt})
                for fmt in ("svg", "png"))
    assert f'<img src="{svg}?n_boot=20"' in html and f'href="{png}?n_boot=20?download"' not in html
    assert f'<a href="{svg}?n_boot=20"' in html  # the plot opens full size
    assert "mean over 3 of 4 evaluators; 1 undefined" in html


def test_downloads_have_the_right_types_and_names(cast):
    study, owner = cast[:2]
    client = client_for(owner)
    kw = {"study_id": study.pk}
    csv = client.get(reverse("annotate:study_report_csv", kwargs=kw) + "?n_boot=20")
    assert csv["Content-Type"] == "text/csv; charset=utf-8" and not csv.content.startswith(BOM)
    stem = f"study-{study.pk}_run-{study.scoring_run_id}_minvotes-1_ties-evaluator-weight_boot-20-seed-0_label-none"
    assert csv["Content-Disposition"] == f'attachment; filename="{stem}_report.csv"'
    judgments = client.get(reverse("annotate:study_judgments_csv", kwargs=kw))
    body = b"".join(judgments.streaming_content)  # streamed from the database
    assert not body.startswith(BOM) and body.count(b"\r\n") == 14
    svg = client.get(reverse("annotate:study_report_plot", kwargs={**kw, "name": "agreement", "fmt": "svg"})
                     + "?n_boot=20")
    assert svg["Content-Type"] == "image/svg+xml" and svg["Content-Disposition"].startswith("inline")


def test_bad_parameters_and_unknown_plots_are_refused(cast):
    study, owner = cast[:2]
    client = client_for(owner)
    page = reverse("annotate:study_report", kwargs={"study_id": study.pk})
    assert client.get(page + "?min_votes=0").status_code == 400
    assert client.get(page + "?tie_rule=coin").status_code == 400
    assert client.get(page + "?run=999999").status_code == 400  # not among the run picker's choices
    plot = reverse("annotate:study_report_plot", kwargs={"study_id": study.pk, "name": "pie", "fmt": "png"})
    assert client.get(plot).status_code == 404
    assert client.get(reverse("annotate:study_report", kwargs={"study_id": 999999})).status_code == 404


def test_a_run_that_is_not_finished_gives_400_with_the_reason(cast):
    study, owner = cast[:2]
    run = study.scoring_run
    run.status = "failed"
    run.save()
    response = client_for(owner).get(reverse("annotate:study_report_json", kwargs={"study_id": study.pk}))
    assert response.status_code == 400
    assert f"run {run.pk} is 'failed'" in response.content.decode()


def _section(html: str, key: str) -> str:
    start = html.index(f'id="table-{key}"')
    return html[start:html.index("</section>", start)]


def test_the_page_shows_each_note_once_background_labels_and_plural_votes(cast):
    study, _, rhea = cast[:3]
    url = reverse("annotate:study_report", kwargs={"study_id": study.pk})
    html = client_for(rhea).get(url + "?n_boot=20").content.decode()
    for key in ("table2", "kappa"):
        notes = re.findall(r"<li>(.*?)</li>", _section(html, key).split('class="muted small notes"')[1])
        texts = [note.split(": ", 1)[1] for note in notes]
        assert len(texts) == len(set(texts)), (key, notes)  # each distinct note once
    assert re.search(r"<li>EIP(, [^:]+)*: evaluator mean over", _section(html, "table2"))
    evaluators = _section(html, "evaluators")
    # make_evaluator onboards everyone as field "mathematics", level "master_student"
    assert "master_student" not in evaluators and ">Master&#x27;s student</td>" in evaluators
    assert ">Mathematics</td>" in evaluators and ">mathematics</td>" not in evaluators
    assert "(min. 1 vote per pair," in html and "min. 1 votes" not in html
    assert "(min. 2 votes per pair," in client_for(rhea).get(
        reverse("annotate:study_report", kwargs={"study_id": study.pk}) + "?n_boot=20&min_votes=2").content.decode()


def test_merged_notes_groups_labels_that_share_a_note():
    from annotate.reports.services.table_cells import merged_notes

    notes = ("EIP: evaluator mean over all 4 evaluators", "Accuracy: evaluator mean over all 4 evaluators",
             "1PL: evaluator mean over 3 of 4 evaluators; 1 undefined", "Spearman over all pairs.",
             "Spearman over all pairs.")
    assert merged_notes(notes) == ("EIP, Accuracy: evaluator mean over all 4 evaluators",
                                   "1PL: evaluator mean over 3 of 4 evaluators; 1 undefined",
                                   "Spearman over all pairs.")


def test_refused_report_settings_get_a_page_that_names_each_field_and_the_way_back(cast):
    study, owner = cast[:2]
    page = reverse("annotate:study_report", kwargs={"study_id": study.pk})
    response = client_for(owner).get(page + "?min_votes=abc&n_boot=0")
    assert response.status_code == 400
    body = response.content.decode()
    assert "<h1>These report settings are not accepted</h1>" in body
    assert ("<li>Min. votes per pair (?min_votes='abc'): Enter a whole number. Accepted: a whole number "
            "from 1 to 1000, or nothing for 1.</li>") in body.replace("&#x27;", "'")
    assert ("<li>Bootstrap resamples (?n_boot='0'): Ensure this value is greater than or equal to 1. Accepted: a "
            "whole number from 1 to 20000, or nothing for 2000.</li>") in body.replace("&#x27;", "'")
    assert f'<a href="{page}">Open the report with its default settings</a>' in body
    assert '<a class="brand"' in body  # the site's page, not bare text
    csv = client_for(owner).get(reverse("annotate:study_report_json", kwargs={"study_id": study.pk}) + "?min_votes=0")
    assert csv.status_code == 400 and csv.json()["error"].startswith("Bad report parameters:")


def download_urls(study_id: int) -> dict[str, str]:
    """Every download of the report that reads the report's parameters, by the file name it is asked as."""
    kw = {"study_id": study_id}
    urls = [reverse(f"annotate:study_report_{name}", kwargs=kw) for name in ("csv", "zip", "pairs_csv")]
    urls += [reverse("annotate:study_report_table_csv", kwargs={**kw, "key": "consensus"})]
    urls += [reverse("annotate:study_report_plot", kwargs={**kw, "name": "agreement", "fmt": fmt})
             for fmt in ("png", "svg")]
    return {url.rsplit("/", 1)[-1]: url for url in urls}


#: (query string, the parameter named, the value echoed, what the page says it accepts)
BAD_DOWNLOAD_QUERIES = [
    ("n_boot=many", "n_boot", "many", "a whole number from 1 to 20000"),
    ("min_votes=0", "min_votes", "0", "a whole number from 1 to 1000"),
    ("tie_rule=coin", "tie_rule", "coin", "one of evaluator_weight, none"),
    ("run=abc", "run", "abc", "(or nothing for the study&#x27;s run)"),
]


@pytest.mark.parametrize(("query", "name", "value", "accepted"), BAD_DOWNLOAD_QUERIES,
                         ids=[q[0] for q in BAD_DOWNLOAD_QUERIES])
def test_a_download_with_a_bad_parameter_is_the_sites_400_page_naming_it_its_value_and_what_is_accepted(
        cast, query, name, value, accepted):
    study, owner = cast[:2]
    client = client_for(owner)
    for file_name, url in download_urls(study.pk).items():
        response = client.get(f"{url}?{query}")
        body = response.content.decode()
        assert response.status_code == 400, (url, body[:300])
        assert response["Content-Type"].startswith("text/html") and '<a class="brand"' in body, url
        assert "<h1>These report settings are not accepted</h1>" in body, url
        assert f"The download <strong>{file_name}</strong> of the alignment report" in body, url
        reason = re.search(r'<ul id="reasons"><li>(.*?)</li>', body).group(1)
        assert f"(?{name}=&#x27;{value}&#x27;)" in reason and accepted in reason, (url, reason)
        assert f'<a href="{reverse("annotate:study_report", kwargs={"study_id": study.pk})}">' in body


def test_a_download_of_a_report_that_cannot_be_drawn_says_why_on_the_sites_page(cast):
    study, owner = cast[:2]
    run = study.scoring_run
    run.status = "failed"
    run.save()
    for file_name, url in download_urls(study.pk).items():
        response = client_for(owner).get(url)
        body = response.content.decode()
        assert response.status_code == 400 and '<a class="brand"' in body, url
        assert "<h1>No report can be drawn yet</h1>" in body and f"run {run.pk} is &#x27;failed&#x27;" in body
        assert f"The download <strong>{file_name}</strong>" in body


def test_a_report_that_cannot_be_drawn_says_why_on_the_sites_page(cast):
    study, owner = cast[:2]
    run = study.scoring_run
    run.status = "failed"
    run.save()
    response = client_for(owner).get(reverse("annotate:study_report", kwargs={"study_id": study.pk}))
    assert response.status_code == 400
    body = response.content.decode()
    assert "<h1>No report can be drawn yet</h1>" in body and f"run {run.pk} is &#x27;failed&#x27;" in body
