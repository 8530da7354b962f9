"""Fit and finish of the researcher pages: codes as words, one number style,
styled error pages with DEBUG off and on, the favicon.

Cast: ``owner`` (staff), ``rhea`` (researcher), ``ada`` (evaluator).
"""
from __future__ import annotations

import html as html_lib
import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.staticfiles import finders
from django.test import Client, override_settings
from django.urls import path, reverse
from django.utils import timezone

from annotate.core.labels import label, method_notes, optimizer_message
from annotate.models import MethodResult, ResponseSet, RunStatus, ScoringRun
from annotate.reports.services.table_cells import Cell
from annotate.templatetags.annotate_numbers import cell_text, change, count, percent, rank, sci, score
from eipsite.urls import urlpatterns as site_urlpatterns
from tests.annotate.factories import make_evaluator, make_user
from tests.annotate.reports.test_report import build_study

MINUS = "\u2212"
RAW_CODES = ("no_consensus", "tie_resolved", "evaluator_weight", "same_subject_pairs_of_study_questions",
             "CONVERGENCE", "objective: 1312.2425262561549", "abilities_at_bound", "dangling_models")


def _boom(request):
    raise RuntimeError("kaboom")


# This module is also a URLconf (``@pytest.mark.urls``): the site's routes plus one that fails.
urlpatterns = [path("boom/", _boom), *site_urlpatterns]
handler400 = "annotate.core.views.errors.bad_request"
handler403 = "annotate.core.views.errors.permission_denied"
handler404 = "annotate.core.views.errors.page_not_found"
handler500 = "annotate.core.views.errors.server_error"


def visible_text(html: str) -> str:
    """What a reader sees: tags (and their attributes, option values) removed."""
    body = html[html.index("<body"):]
    return html_lib.unescape(re.sub(r"<[^>]+>", " ", body))


# --- number filters (unit) ---------------------------------------------------------------

def test_counts_have_thousands_separators_and_no_decimals():
    assert count(1234567) == "1,234,567"
    assert count(12.0) == "12"
    assert count(-1234) == f"{MINUS}1,234"
    assert count(None) == "–" and count(float("nan")) == "–"


def test_scores_use_fixed_decimals_and_the_minus_sign():
    assert score(0.123456) == "0.123"
    assert score(-0.25, 2) == f"{MINUS}0.25"
    assert score(-0.0004, 3) == "0.000"  # rounds to zero: no sign
    assert score(1234.5, 1) == "1234.5"
    assert score(None) == "–" and score(float("inf")) == "–"
    assert percent(0.1234) == "12.3"


def test_ranks_are_whole_and_changes_signed():
    assert rank(3.0) == "3" and rank(2) == "2" and rank(None) == "–"
    assert change(2) == "+2" and change(-3) == f"{MINUS}3" and change(0) == "0"


def test_tiny_values_in_scientific_notation_with_superscripts():
    assert sci(0.000241) == "2.41 × 10⁻⁴"
    assert sci(-12345.0) == f"{MINUS}1.23 × 10⁴"
    assert sci(1.5) == "1.50"


def test_report_cells_follow_the_page_style():
    assert cell_text(Cell(12345, "12345")) == "12,345"
    assert cell_text(Cell(-0.31, "-0.31")) == f"{MINUS}0.31"
    assert cell_text(Cell("majority", "majority")) == "majority"
    assert [cell_text(Cell(-0.001, t)) for t in ("-0.00", "-0", "-0.0%")] == ["0.00", "0", "0.0%"]
    assert cell_text(Cell(-0.01, "-0.01")) == f"{MINUS}0.01"


# --- labels (unit) -----------------------------------------------------------------------

def test_codes_have_one_label_each_and_unknown_codes_read_as_words():
    assert label("no_consensus", "consensus") == "no consensus"
    assert label("tie_resolved", "consensus") == "vote tie resolved by evaluator weight"
    assert label("evaluator_weight", "tie_rule") == "resolve by evaluator weight"
    assert label("same_subject_pairs_of_study_questions", "scope") == "All same-subject pairs"
    assert label("brand_new_code", "consensus") == "brand new code"
    assert label(None, "consensus") == ""


def test_scipy_messages_and_method_notes_read_as_words():
    assert optimizer_message("CONVERGENCE: RELATIVE REDUCTION OF F <= FACTR*EPSMCH") == \
        "converged (objective stopped improving)"
    assert optimizer_message("CONVERGENCE: NORM OF PROJECTED GRADIENT <= PGTOL") == \
        "converged (gradient small enough)"
    # The 2PL Newton fit's own messages (scoring._irt_newton.NEWTON_*_MESSAGE).
    assert optimizer_message("CONVERGENCE: projected gradient 1.06e-12 <= tol 1.0e-09 after 11 Newton "
                             "iterations") == "converged (gradient small enough)"
    assert optimizer_message("ITERATIONS REACHED LIMIT (max_iter=1): projected gradient 2.00e-01 > tol "
                             "1.0e-09") == "stopped at the iteration limit"
    assert optimizer_message("LINE SEARCH FAILED after 3 Newton iterations: ...") == "stopped: the line search failed"
    assert method_notes({"objective": 1312.2425262561549, "abilities_at_bound": 1200,
                         "elbo_last_10pct_mean_per_seed": [-2526.7, -2544.0]}) == [
        ("final objective", "1,312.2"), ("abilities at the bound", "1,200"),
        ("per seed", f"{MINUS}2,526.7, {MINUS}2,544.0")]


# --- pages --------------------------------------------------------------------------------

@pytest.fixture
def researcher():
    user = make_user("rhea")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_the_report_page_shows_no_raw_code(researcher):
    study, _ = build_study()
    study.members.add(get_user_model().objects.get(username="rhea"))  # researchers see only their studies
    html = researcher.get(reverse("annotate:study_report", kwargs={"study_id": study.pk}) + "?n_boot=50")
    assert html.status_code == 200
    text = visible_text(html.content.decode())
    for code in RAW_CODES:
        assert code not in text, code
    assert "vote ties: resolve by evaluator weight" in text
    assert "by majority" in text and "with no consensus" in text
    csv = researcher.get(reverse("annotate:study_report_zip", kwargs={"study_id": study.pk}) + "?n_boot=50")
    assert csv.status_code == 200  # the downloads keep their codes (tested with the report files)


@pytest.mark.django_db
def test_the_pairs_table_labels_how_each_consensus_was_reached(researcher):
    study, _ = build_study()
    study.members.add(get_user_model().objects.get(username="rhea"))
    html = researcher.get(reverse("annotate:study_report", kwargs={"study_id": study.pk}) + "?n_boot=50")
    section = html.content.decode()
    section = section[section.index('id="table-pairs"'):]
    section = section[:section.index("</section>")]
    text = visible_text("<body>" + section)
    assert "majority" in text
    assert "tie_resolved" not in text and "no_consensus" not in text


@pytest.mark.django_db
def test_the_run_page_shows_method_notes_in_words(researcher):
    rs = ResponseSet.objects.create(name="bench", file_name="b.csv", checksum="d" * 64, file_format="wide")
    run = ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE, finished_at=timezone.now(),
                                    params={"alpha": 0.85, "tol": 1e-10})
    MethodResult.objects.create(run=run, method="irt_1pl", n_iter=16, converged=True, residual=0.000241,
                                duration_s=0.03, notes={
                                    "objective": 1312.2425262561549,
                                    "message": "CONVERGENCE: RELATIVE REDUCTION OF F <= FACTR*EPSMCH",
                                    "abilities_at_bound": 0, "difficulties_at_bound": 5})
    text = visible_text(researcher.get(reverse("annotate:run_detail", kwargs={"run_id": run.pk})).content.decode())
    for code in RAW_CODES:
        assert code not in text, code
    assert "final objective: 1,312.2" in text
    assert "optimizer: converged (objective stopped improving)" in text
    assert "difficulties at the bound: 5" in text
    assert "2.41 × 10⁻⁴" in text


# --- error pages ----------------------------------------------------------------------------

@pytest.mark.django_db
@pytest.mark.urls(__name__)
@pytest.mark.parametrize("debug", [False, True])
def test_error_pages_are_styled_with_debug_off_and_on(debug):
    with override_settings(DEBUG=debug):
        anonymous = Client(raise_request_exception=False)
        evaluator = Client(raise_request_exception=False)
        study, _ = build_study(judgments=(), evaluators=())
        evaluator.force_login(make_evaluator(study, "ada").user)
        cases = {
            404: anonymous.get("/no-such-page/"),
            403: evaluator.get(reverse("annotate:results")),
            400: anonymous.get("/", HTTP_HOST="not-allowed.example"),
            500: anonymous.get("/boom/"),
        }
        for status, response in cases.items():
            assert response.status_code == status, (debug, status)
            assert f"{status}.html" in [t.name for t in response.templates], (debug, status)
            page = response.content.decode()
            assert 'id="reason"' in page and page.count("<h1>") == 1
            assert "annotate/favicon.svg" in page  # extends base.html
            assert "Traceback" not in page and "kaboom" not in page


@pytest.mark.django_db
@pytest.mark.urls(__name__)
@override_settings(DEBUG=True)
def test_with_debug_on_a_missing_slash_still_redirects_first():
    response = Client().get(reverse("annotate:results").rstrip("/"))
    assert response.status_code == 301


def test_the_favicon_is_a_static_svg_linked_from_every_page(client, db):
    found = finders.find("annotate/favicon.svg")
    assert found is not None
    with open(found, encoding="utf-8") as svg:
        assert svg.read().startswith("<svg xmlns=\"http://www.w3.org/2000/svg\"")
    page = client.get(reverse("login")).content.decode()
    assert '<link rel="icon" type="image/svg+xml" href="/static/annotate/favicon.svg">' in page


def test_analysis_parameters_and_kinds_read_as_words():
    from annotate.core.labels import params_text
    from annotate.templatetags.annotate_labels import analysis_label

    assert params_text({"alpha": 0.85, "skip_irt": False, "group_by": "metadata:level", "k_max": 1500}) == [
        ("α (EIP damping)", "0.85"), ("skip IRT", "no"), ("grouped by", "level (question metadata)"),
        ("most models left out", "1,500")]
    assert analysis_label("rank_changes") == "EIP against accuracy (3.2, appendix G, figure 5)"
    assert analysis_label("retired_kind") == "retired kind"
