"""axe-core on the Django admin pages the site uses and on the API docs: no
violation of any impact (critical, serious, moderate or minor). Each page's summary (and every
violation found, whatever its impact) is printed: run with ``-s`` to read it.

Cast: ``root`` (staff, superuser) for the admin; ``rhea`` (researcher, not
staff), who may read the API docs.
"""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from annotate.analyses import services as analyses
from annotate.catalog.services import upload_jobs, upload_store as ustore
from annotate.models import (
    AnalysisRun,
    ApiToken,
    Invitation,
    Judgment,
    Participation,
    Question,
    ResponseSet,
    UploadJob,
)
from annotate.studies.services.participation import invitation_create
from tests.annotate.factories import make_researcher
from tests.annotate.report_cast import judged_study
from tests.browser.flow import log_in_as
from tests.browser.test_accessibility_browser import Audit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RESPONSES = b"question_id,m1,m2\nq1,1,0\nq2,,0.5\n"
QUESTIONS = b"question_id,category,question\nq1,math,What is 2+2?\nq2,law,Is it legal?\n"


@pytest.fixture(autouse=True)
def upload_root(tmp_path, monkeypatch):
    monkeypatch.setattr(ustore, "UPLOAD_ROOT", tmp_path / "uploads")


def test_every_admin_page_the_site_uses_passes_axe(live_server, page: Page, tmp_path):
    study = judged_study(n_evaluators=2)
    invitation_create(study=study, note="class of 2026")
    analyses.analysis_run_execute(run=analyses.analysis_run_create(kind="rank_changes",
                                                                    response_set=study.scoring_run.response_set))
    root = get_user_model().objects.create_superuser("root", password=None)
    token = ApiToken.objects.create(user=root, name="scripts", key_hash="0" * 64, prefix="abcd1234")
    base = live_server.url
    page.set_default_timeout(30_000)
    audit = Audit(page)

    page.goto(f"{base}/admin/login/")
    audit.check("admin login")
    log_in_as(page, base, root)
    audit.visit(f"{base}/admin/", "admin index")
    audit.visit(f"{base}/admin/annotate/", "admin app index")
    for model, obj in (("responseset", ResponseSet.objects.first()), ("scoringrun", study.scoring_run),
                       ("study", study), ("participation", Participation.objects.first()),
                       ("judgment", Judgment.objects.first()), ("invitation", Invitation.objects.first()),
                       ("question", Question.objects.first()), ("analysisrun", AnalysisRun.objects.first()),
                       ("dataset", None), ("subject", None), ("languagemodel", None), ("questionresult", None),
                       ("modelresult", None), ("assignment", None), ("apitoken", token)):
        audit.visit(f"{base}/admin/annotate/{model}/", f"admin {model} list")
        if obj is not None:
            audit.visit(f"{base}/admin/annotate/{model}/{obj.pk}/change/", f"admin {model} change")
    audit.visit(f"{base}/admin/annotate/responseset/?q=responses", "admin response set search")
    audit.visit(f"{base}/admin/annotate/responseset/{ResponseSet.objects.first().pk}/delete/",
                "admin response set delete")
    audit.visit(f"{base}/admin/auth/user/", "admin users")
    audit.visit(f"{base}/admin/auth/user/{root.pk}/change/", "admin user change")

    # upload -> preview -> job (done, with "score now"); a job still queued; a bad file's problems
    audit.visit(f"{base}/admin/annotate/responseset/upload/", "admin upload")
    (tmp_path / "scores.csv").write_bytes(RESPONSES)
    (tmp_path / "questions.csv").write_bytes(QUESTIONS)
    page.set_input_files("input[name=responses]", str(tmp_path / "scores.csv"))
    page.set_input_files("input[name=questions]", str(tmp_path / "questions.csv"))
    page.fill("input[name=dataset]", "Demo")
    page.fill("input[name=subject_column]", "category")
    page.locator("form input[type=submit]").last.click()
    expect(page.locator("h1")).to_contain_text("review")
    audit.check("admin upload preview")
    page.locator("form input[type=submit]").last.click()
    expect(page.locator("#upload-state")).to_be_visible()
    job = UploadJob.objects.get()
    if job.state != "done":  # no worker beside the live server: the page shows the upload in progress
        assert page.locator("meta[http-equiv=refresh]").count() == 0
        page.click("#autorefresh-stop")  # the reload can be stopped (WCAG 2.2.1); axe then reads a still page
        expect(page.locator("#autorefresh-stop")).to_have_count(0)
        expect(page.locator("p.autorefresh")).to_have_text("Reloading stopped. ")
        audit.check("admin upload in progress")
        upload_jobs.upload_job_run(job=job)
        page.reload()
    expect(page.locator("#upload-state")).to_have_attribute("data-state", "done")
    audit.check("admin upload done (score now)")
    queued = UploadJob.objects.create(token="f" * 32, state="queued", n_total=10, n_done=3, created_by=root)
    page.goto(f"{base}/admin/annotate/responseset/upload/job/{queued.pk}/")
    page.screenshot(path="/tmp/h25b_upload_in_progress.png")
    assert page.locator("meta[http-equiv=refresh]").count() == 0
    page.click("#autorefresh-stop")
    audit.check("admin upload queued")
    (tmp_path / "bad.csv").write_bytes(b"question_id,m1\nq1,7\n")
    page.goto(f"{base}/admin/annotate/responseset/upload/")
    page.set_input_files("input[name=responses]", str(tmp_path / "bad.csv"))
    page.fill("input[name=dataset]", "Bad")
    page.locator("form input[type=submit]").last.click()
    audit.check("admin upload problems")
    audit.done(every_impact=True)


def test_the_api_docs_pass_axe_for_staff_and_researchers(live_server, page: Page):
    base = live_server.url
    page.set_default_timeout(30_000)
    audit = Audit(page)
    for user in (get_user_model().objects.create_superuser("root", password=None), make_researcher("rhea")):
        page.context.clear_cookies()
        log_in_as(page, base, user)
        response = page.goto(f"{base}/api/docs/")
        assert response is not None and response.status == 200, user
        page.wait_for_selector(".swagger-ui .opblock")
        audit.check(f"API docs ({user.username})")
        page.locator(".opblock-summary").first.click()  # an operation unfolded: parameters, responses
        page.wait_for_selector(".opblock-body")
        audit.check(f"API docs, an operation open ({user.username})")
    audit.done(every_impact=True)
