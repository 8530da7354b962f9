"""axe-core on every evaluator and researcher page (issue 14, point 8): no
violation of "serious" or "critical" impact. Each page's summary (and every
violation found, whatever its impact) is printed: run with ``-s`` to read it.

Cast: a visitor with the invitation link, ``eve`` who joins through it,
``root`` (staff) for the researcher pages.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from annotate.analyses import services as analyses
from annotate.models import Question, StudyStatus
from annotate.studies.services.judging import judging_screen, judgment_submit
from annotate.studies.services.participation import invitation_create
from annotate.studies.services.studies import study_set_status
from tests.annotate.factories import make_evaluator, make_user
from tests.browser.axe import BLOCKING, axe_violations, summary
from tests.browser.flow import latex_study, log_in_as, math_done

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


class Audit:
    """Run axe page by page, print as it goes, fail at the end with every blocking violation."""

    def __init__(self, page: Page):
        self.page = page
        self.blocking: list[str] = []
        self.other: list[str] = []  # moderate and minor findings

    def check(self, label: str, *, status: int | None = None, response=None) -> None:
        if status is not None:
            assert response is not None and response.status == status, (label, response and response.status)
        violations = axe_violations(self.page)
        print(summary(label, violations))
        for v in violations:
            print(f"  [{v['impact']}] {v['id']}: {v['help']} -> {[' '.join(n['target']) for n in v['nodes'][:5]]}")
            if v.get("impact") in BLOCKING:
                self.blocking.append(f"{label}: {v['id']} ({v['impact']})")
            else:
                self.other.append(f"{label}: {v['id']} ({v['impact']})")

    def visit(self, url: str, label: str, *, status: int = 200) -> None:
        response = self.page.goto(url)
        self.check(label, status=status, response=response)

    def done(self, *, every_impact: bool = False) -> None:
        """Fail on serious or critical findings; with ``every_impact`` on moderate and minor ones too."""
        assert not self.blocking, self.blocking
        if every_impact:
            assert not self.other, self.other


def test_every_evaluator_page_passes_axe(live_server, page: Page):
    study = latex_study(n_pairs=2)
    invitation = invitation_create(study=study)
    base = live_server.url
    page.set_default_timeout(30_000)
    audit = Audit(page)

    audit.visit(f"{base}/join/{invitation.token}/", "join / consent")
    page.screenshot(path="/tmp/h14c_join.png", full_page=True)
    page.click("#consent-decline")
    expect(page.locator("h1")).to_have_text("You are not taking part")
    audit.check("consent declined")
    page.screenshot(path="/tmp/h14c_declined.png")
    audit.visit(f"{base}/join/not-a-token/", "invitation not valid", status=404)

    page.goto(f"{base}/join/{invitation.token}/")
    page.click("#join-start")
    expect(page.locator("h1")).to_have_text("About you")
    audit.check("onboarding")
    page.click("#onboarding-next")  # nothing chosen: the form with its errors
    audit.check("onboarding with errors")
    page.select_option("select[name=field_of_study]", index=1)
    page.select_option("select[name=education_level]", index=1)
    page.click("#onboarding-next")
    expect(page.locator("h1")).to_have_text("Guidelines")
    audit.check("guidelines")
    page.click("#start-judging")
    expect(page.locator("h1")).to_have_text("Which question is harder?")
    math_done(page)
    audit.check("judge (math typeset)")
    for _ in range(2):
        pair = page.locator("input[name=pair]").get_attribute("value")
        page.click("#choose-left")
        page.wait_for_function(
            "p => { const el = document.querySelector('input[name=pair]'); return !el || el.value !== p; }", arg=pair)
    expect(page.locator("h1")).to_have_text("All done — thank you!")
    audit.check("done")

    study_set_status(study=study, status=StudyStatus.CLOSED)
    audit.visit(f"{base}/studies/{study.pk}/closed/", "closed (participant)")
    page.context.clear_cookies()
    audit.visit(f"{base}/join/{invitation.token}/", "closed (invitation link)")
    page.screenshot(path="/tmp/h14c_closed_link.png")

    other = latex_study(n_pairs=1, name="Blank pair")
    Question.objects.filter(pk=other.pairs.get().question_a_id).update(text="")
    log_in_as(page, base, make_evaluator(other, "eve-blank").user)
    audit.visit(f"{base}/studies/{other.pk}/judge/", "pair unavailable (blank side)", status=409)
    audit.done(every_impact=True)


def test_every_researcher_page_passes_axe(live_server, page: Page):
    study = latex_study(n_pairs=3)
    invitation_create(study=study, note="class of 2026")
    for name, choice in (("eve", "left"), ("eli", "right")):  # two evaluators judge every pair
        participation = make_evaluator(study, name)
        while (screen := judging_screen(participation=participation)) is not None:
            judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                            choice=choice)
    run = study.scoring_run
    queued = analyses.analysis_run_create(kind="efficiency", response_set=run.response_set)
    done = analyses.analysis_run_execute(run=analyses.analysis_run_create(kind="rank_changes",
                                                                          response_set=run.response_set))
    base = live_server.url
    page.set_default_timeout(60_000)
    audit = Audit(page)

    audit.visit(f"{base}/accounts/login/", "login")
    audit.visit(f"{base}/no-such-page/", "404", status=404)
    log_in_as(page, base, make_evaluator(study, "eva").user)
    audit.visit(f"{base}/results/", "403 (an evaluator on a researcher page)", status=403)
    page.context.clear_cookies()

    root = make_user("root", staff=True)
    log_in_as(page, base, root)
    audit.visit(f"{base}/", "home")
    audit.visit(f"{base}/studies/", "studies")
    audit.visit(f"{base}/studies/new/derived/", "study from people's answers")
    audit.visit(f"{base}/studies/new/imported/?run={study.scoring_run_id}", "import judgments")
    audit.visit(f"{base}/studies/{study.pk}/manage/", "manage")
    audit.visit(f"{base}/studies/{study.pk}/report/", "report")
    page.screenshot(path="/tmp/h14c_report.png", full_page=True)
    audit.visit(f"{base}/results/", "results")
    audit.visit(f"{base}/results/runs/{run.pk}/", "run detail")
    audit.visit(f"{base}/results/runs/{run.pk}/models/", "run models")
    audit.visit(f"{base}/results/runs/{run.pk}/questions/", "run questions")
    audit.visit(f"{base}/analyses/", "analyses")
    audit.visit(f"{base}/analyses/efficiency/", "analysis kind")
    audit.visit(f"{base}/analyses/human_labels/", "human labels")
    audit.visit(f"{base}/analyses/runs/{queued.pk}/", "analysis run (queued)")
    audit.visit(f"{base}/analyses/runs/{done.pk}/", f"analysis run ({done.status})")
    audit.visit(f"{base}/analyses/rank_changes/", "analysis kind with a result")
    audit.done(every_impact=True)
