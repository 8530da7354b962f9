"""Results pages: who sees them, the leaderboard, the question list, escaping.

Cast: ``owner`` (staff), ``rita`` (researcher), ``eve`` (evaluator), anonymous.
"""
from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group
from django.test import Client, override_settings
from django.urls import reverse

from annotate.models import Dataset, LanguageModel, ModelResult, Question, ResponseSet, RunStatus, ScoringRun, Subject
from annotate.runs import views
from annotate.runs.services import scoring as service
from tests.annotate.factories import client_for, make_user, write_responses

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert('owned')</script>"
IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
RUN_PAGES = ("run_detail", "run_models", "run_questions")

# credit of models (m1, m2, m3) per question; q1 is solved by all, q3 failed by all
CELLS = {
    ("q1", "algebra"): (1, 1, 1),
    ("q2", "algebra"): (1, 0, 0),
    ("q3", "algebra"): (0, 0, 0),
    ("q4", "biology"): (1, 1, 0),
    ("q5", "biology"): (0, 1, 0),
    ("q6", "biology"): (1, 0, 1),
}


@pytest.fixture
def scored():
    dataset = Dataset.objects.create(name="Bench")
    subjects = {name: Subject.objects.create(name=name) for name in ("algebra", "biology")}
    models = [LanguageModel.objects.create(name=f"m{k}", family="Fam", parameters_b=7.0 * k) for k in (1, 2, 3)]
    rs = ResponseSet.objects.create(name="bench", file_name="b.csv", checksum="b" * 64, file_format="wide")
    cells = []
    for (external_id, subject), credits in CELLS.items():
        text = f"{SCRIPT} question {external_id}" if external_id == "q4" else f"Plain question {external_id}"
        q = Question.objects.create(dataset=dataset, subject=subjects[subject], external_id=external_id, text=text)
        cells += [(q, m, c) for m, c in zip(models, credits)]
    write_responses(rs, cells)
    run = service.scoring_run_create(response_set=rs, params={"mirt_epochs": 30})
    service.scoring_run_execute(run=run)
    return run, subjects


@pytest.fixture
def cast():
    researchers, evaluators = (Group.objects.get_or_create(name=n)[0] for n in ("researcher", "evaluator"))
    owner = make_user("owner", staff=True)
    rita = make_user("rita")
    rita.groups.add(researchers)
    eve = make_user("eve")
    eve.groups.add(evaluators)
    return owner, rita, eve



def _urls(run: ScoringRun) -> list[str]:
    return [reverse("annotate:results"),
            *(reverse(f"annotate:{name}", kwargs={"run_id": run.pk}) for name in RUN_PAGES)]


def test_staff_and_researchers_see_every_page(scored, cast):
    owner, rita, _ = cast
    for user in (owner, rita):
        client = client_for(user)
        for url in _urls(scored[0]):
            assert client.get(url).status_code == 200, (user.username, url)


def test_evaluators_get_403_and_anonymous_visitors_the_login_page(scored, cast):
    eve = cast[2]
    for url in _urls(scored[0]):
        assert client_for(eve).get(url).status_code == 403, url
        response = Client().get(url)
        assert response.status_code == 302 and response.url == f"{reverse('login')}?next={url}"
    score = reverse("annotate:response_set_score", kwargs={"response_set_id": scored[0].response_set_id})
    assert client_for(eve).post(score).status_code == 403
    assert Client().post(score).status_code == 302


def test_only_staff_can_start_a_run_and_it_redirects(scored, cast):
    owner, rita, _ = cast
    run = scored[0]
    score = reverse("annotate:response_set_score", kwargs={"response_set_id": run.response_set_id})
    assert b"Score again with the default settings" not in client_for(rita).get(reverse("annotate:results")).content
    assert client_for(rita).post(score).status_code == 403
    assert client_for(owner).get(score).status_code == 405  # POST only
    client = client_for(owner)
    assert b"Score again with the default settings" in client.get(reverse("annotate:results")).content
    with override_settings(TASKS=IMMEDIATE):
        response = client.post(score)
    assert response.status_code == 302 and response.url == reverse("annotate:results")
    new = ScoringRun.objects.exclude(pk=run.pk).get()
    assert (new.status, new.created_by) == (RunStatus.DONE, owner)
    page = client.get(reverse("annotate:results")).content.decode()
    assert service.ScoringRun.objects.count() == 2
    assert f"Scoring run {new.pk} of bench v1 is queued" in page  # the message after the redirect


def _question_ids(html: str) -> list[str]:
    return re.findall(r"<td>(q\d)</td>", html)


def test_the_question_list_filters_by_subject_and_marks_excluded_questions(scored, cast):
    run, subjects = scored
    client = client_for(cast[1])
    url = reverse("annotate:run_questions", kwargs={"run_id": run.pk})
    everything = client.get(url).content.decode()
    assert sorted(_question_ids(everything)) == ["q1", "q2", "q3", "q4", "q5", "q6"]
    biology = client.get(url, {"subject": subjects["biology"].pk}).content.decode()
    assert sorted(_question_ids(biology)) == ["q4", "q5", "q6"]
    algebra = client.get(url, {"subject": subjects["algebra"].pk}).content.decode()
    assert sorted(_question_ids(algebra)) == ["q1", "q2", "q3"]
    assert algebra.count("excluded: all solved") == 1 and algebra.count("excluded: all failed") == 1
    row_of_q1 = re.search(r"<td>q1</td>.*?</tr>", algebra, re.S).group(0)
    assert "excluded: all solved" in row_of_q1
    row_of_q3 = re.search(r"<td>q3</td>.*?</tr>", algebra, re.S).group(0)
    assert "excluded: all failed" in row_of_q3
    assert "excluded" not in re.search(r"<td>q2</td>.*?</tr>", algebra, re.S).group(0)
    unknown = client.get(url, {"subject": 999999})
    assert unknown.status_code == 200 and sorted(_question_ids(unknown.content.decode())) == sorted(
        _question_ids(everything))


def test_the_question_list_paginates_and_keeps_the_filter(scored, cast, monkeypatch):
    run, subjects = scored
    monkeypatch.setattr(views, "QUESTIONS_PER_PAGE", 2)
    client = client_for(cast[1])
    url = reverse("annotate:run_questions", kwargs={"run_id": run.pk})
    first = client.get(url, {"subject": subjects["biology"].pk}).content.decode()
    assert len(_question_ids(first)) == 2
    assert '<span id="page-of">questions 1–2 of 3 · page 1 of 2</span>' in first
    assert f"?subject={subjects['biology'].pk}&amp;page=2" in first
    second = client.get(url, {"subject": subjects["biology"].pk, "page": 2}).content.decode()
    assert len(_question_ids(second)) == 1


def test_loaded_text_is_escaped(scored, cast):
    page = client_for(cast[1]).get(reverse("annotate:run_questions", kwargs={"run_id": scored[0].pk})).content.decode()
    assert SCRIPT not in page
    assert "&lt;script&gt;alert('owned')&lt;/script&gt; question q4" in page  # escaped text, quotes kept as written


def test_the_leaderboard_ranks_by_eip_beside_accuracy(cast):
    """Hand-set results where EIP and accuracy disagree: EIP ranks a1, b2, c3;
    accuracy ranks b1, a2, c3; so the rank change (accuracy - EIP) is +1, -1, 0."""
    dataset = Dataset.objects.create(name="D")
    rs = ResponseSet.objects.create(name="hand", file_name="h.csv", checksum="h" * 64, file_format="wide")
    run = ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE, progress=1.0)
    run.datasets_used.add(dataset)
    for name, eip_value, acc in (("alpha-7b", 0.5, 0.6), ("beta-13b", 0.3, 0.7), ("gamma-1b", 0.2, 0.5)):
        model = LanguageModel.objects.create(name=name, family=name.split("-")[0], access="open_weight")
        ModelResult.objects.create(run=run, model=model, n_observed=10,
                                   scores={"eip": eip_value, "eip_scaled": 100 * eip_value, "accuracy": acc})
    html = client_for(cast[0]).get(reverse("annotate:run_models", kwargs={"run_id": run.pk})).content.decode()
    rows = re.findall(r"<tr><td class=\"num\">(\d)</td><td>([a-z0-9-]+)</td>.*?</tr>", html, re.S)
    assert rows == [("1", "alpha-7b"), ("2", "beta-13b"), ("3", "gamma-1b")]
    cells = {name: re.search(rf"<td>{name}</td>.*?</tr>", html, re.S).group(0) for _, name in rows}
    assert '<td class="num">2</td>\n      <td class="num">+1</td>' in cells["alpha-7b"]
    assert '<td class="num">1</td>\n      <td class="num">−1</td>' in cells["beta-13b"]
    assert '<td class="num">3</td>\n      <td class="num">0</td>' in cells["gamma-1b"]
    assert "open-weight" in cells["alpha-7b"]


def test_the_leaderboard_is_paginated_with_ranks_over_every_model(cast, monkeypatch):
    """5 models, 2 per page: EIP 0.9, 0.8, ..., 0.5 ranks them 1..5 in name order
    m0..m4; page 2 holds ranks 3 and 4, page 3 rank 5; a page past the end shows
    the last one."""
    monkeypatch.setattr(views, "MODELS_PER_PAGE", 2)
    rs = ResponseSet.objects.create(name="many", file_name="m.csv", checksum="m" * 64, file_format="wide")
    run = ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE, progress=1.0)
    for k in range(5):
        model = LanguageModel.objects.create(name=f"m{k}")
        ModelResult.objects.create(run=run, model=model, n_observed=10,
                                   scores={"eip": 0.9 - 0.1 * k, "eip_scaled": 90 - 10 * k, "accuracy": 0.5})
    client = client_for(cast[1])
    url = reverse("annotate:run_models", kwargs={"run_id": run.pk})

    def page(query: str) -> tuple[list[tuple[str, str]], str]:
        html = client.get(url + query).content.decode()
        return re.findall(r"<tr><td class=\"num\">(\d)</td><td>(m\d)</td>", html), html

    rows, html = page("")
    assert rows == [("1", "m0"), ("2", "m1")]
    assert "models 1–2 of 5 · page 1 of 3" in html and 'href="?page=2" rel="next"' in html
    assert page("?page=2")[0] == [("3", "m2"), ("4", "m3")]
    assert "models 5–5 of 5 · page 3 of 3" in page("?page=3")[1]
    assert page("?page=3")[0] == [("5", "m4")]
    assert page("?page=99")[0] == [("5", "m4")]
    assert page("?page=x")[0] == [("1", "m0"), ("2", "m1")]


def test_a_one_page_leaderboard_has_no_page_links(cast):
    rs = ResponseSet.objects.create(name="few", file_name="f.csv", checksum="f" * 64, file_format="wide")
    run = ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE, progress=1.0)
    ModelResult.objects.create(run=run, model=LanguageModel.objects.create(name="solo"), n_observed=1,
                               scores={"eip": 0.5, "eip_scaled": 50, "accuracy": 0.5})
    html = client_for(cast[1]).get(reverse("annotate:run_models", kwargs={"run_id": run.pk})).content.decode()
    assert "leaderboard-pages" not in html and views.MODELS_PER_PAGE == 100


def test_the_leaderboard_explains_ties_and_labels_mirt_as_a_norm(cast):
    """EIP 0.4, 0.4, 0.2: competition ranking gives 1, 1, 3 (ties share the
    best rank, the next is skipped), tied models listed by name."""
    rs = ResponseSet.objects.create(name="ties", file_name="t.csv", checksum="t" * 64, file_format="wide")
    run = ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE, progress=1.0)
    for name, eip_value in (("zeta-1b", 0.4), ("eta-2b", 0.4), ("theta-3b", 0.2)):
        model = LanguageModel.objects.create(name=name)
        ModelResult.objects.create(run=run, model=model, n_observed=10, scores={
            "eip": eip_value, "eip_scaled": 100 * eip_value, "accuracy": 0.5,
            "irt_mirt": 100.0 if name == "theta-3b" else 0.0})
    html = client_for(cast[1]).get(reverse("annotate:run_models", kwargs={"run_id": run.pk})).content.decode()
    rows = re.findall(r"<tr><td class=\"num\">(\d)</td><td>([a-z0-9-]+)</td>", html)
    assert rows == [("1", "eta-2b"), ("1", "zeta-1b"), ("3", "theta-3b")]
    assert "share the best rank of their group and the next rank is skipped" in html
    assert "Multidimensional IRT |θ| 0–100" in html and "MIRT 0–100" not in html
    assert "It ignores the vector&#x27;s direction" in html
    assert "does not order models by skill" in html


def test_the_run_page_lists_every_method(scored, cast):
    html = client_for(cast[1]).get(reverse("annotate:run_detail", kwargs={"run_id": scored[0].pk})).content.decode()
    for label in ("EIP", "Simple rank", "Accuracy", "Dataset-weighted accuracy", "1PL IRT", "2PL IRT",
                  "Multidimensional IRT"):
        assert f"<td>{label}</td>" in html
    assert "L1 residual" in html and "kept: 4" in html
    assert "MIRT 30 epochs (seed 0; mean of 5 fits, seeds 0 to 4)." in html


def test_the_home_page_links_each_role_to_its_pages(cast):
    owner, rita, eve = cast
    home = reverse("annotate:home")
    staff_page = client_for(owner).get(home).content.decode()
    for url in (reverse("admin:index"), reverse("admin:annotate_responseset_upload"), reverse("annotate:results"),
                reverse("annotate:studies")):
        assert f'href="{url}"' in staff_page
    researcher_page = client_for(rita).get(home).content.decode()
    assert f'href="{reverse("annotate:results")}"' in researcher_page and 'href="/admin/"' not in researcher_page
    evaluator_page = client_for(eve).get(home).content.decode()
    assert f'href="{reverse("annotate:studies")}"' in evaluator_page
    assert f'href="{reverse("annotate:results")}"' not in evaluator_page
    assert f'href="{reverse("annotate:results")}"' not in Client().get(home).content.decode()


def test_a_failed_or_pending_run_says_what_it_is_and_what_to_do(scored, cast):
    _, rita, _ = cast
    run = scored[0]
    failed = ScoringRun.objects.create(response_set=run.response_set, status=RunStatus.FAILED,
                                       error="The run stopped while computing EIP: out of memory (MemoryError).")
    queued = ScoringRun.objects.create(response_set=run.response_set, status=RunStatus.QUEUED)
    page = client_for(rita).get(reverse("annotate:run_detail", kwargs={"run_id": failed.pk})).content.decode()
    assert ("This run failed: The run stopped while computing EIP: out of memory (MemoryError). It has no scores; "
            "start a new run from the") in page
    assert "once it is done" not in page
    page = client_for(rita).get(reverse("annotate:run_detail", kwargs={"run_id": queued.pk})).content.decode()
    assert "This run is queued. Scores appear here once it is done." in page
