"""``manage.py setup_demo``: idempotent, prints logins that work and links that open."""
from __future__ import annotations

import csv
import io
import itertools
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from annotate.models import (
    Assignment,
    Invitation,
    Judgment,
    Pair,
    Participation,
    Question,
    ResponseSet,
    RunStatus,
    ScoringRun,
    Study,
)
from tests.annotate.factories import n_stored_responses

pytestmark = pytest.mark.django_db

FAST_ARGS = ("--mirt-epochs", "20")


@pytest.fixture(autouse=True)
def fast_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    summary = call_command("setup_demo", *FAST_ARGS, *args, stdout=out, stderr=err)
    assert summary in out.getvalue()
    return out.getvalue(), err.getvalue()


def logins(output: str) -> dict[str, str]:
    return dict(re.findall(r"username (\S+)\s+password (\S+)", output))


def counts() -> tuple[int, ...]:
    User = get_user_model()
    return (ResponseSet.objects.count(), Question.objects.count(), n_stored_responses(),
            ScoringRun.objects.count(), Study.objects.count(), Pair.objects.count(), User.objects.count(),
            Participation.objects.count(), Invitation.objects.count())


def test_it_sets_up_the_demo_and_reuses_everything_the_second_time():
    first, progress = run("--base-url", "http://demo.example:8123/")
    assert "scoring:" in progress and "100%" in progress  # the progress bar on stderr
    assert "demo ready: EIP-demo v1 (120 questions x 24 models) loaded, run" in first
    # 3 simulated evaluators x 70 pairs = 210 votes
    assert "scored, study 'Demo study' (70 pairs) created, 210 simulated votes, 3 logins" in first
    # demo README: 120 questions, 2,868 observed cells; users: 3 logins + 3 simulated evaluators
    assert counts() == (1, 120, 2868, 1, 1, 70, 6, 4, 1)
    run_row = ScoringRun.objects.get()
    assert run_row.status == RunStatus.DONE
    study = Study.objects.get()
    assert (study.n_pairs, study.strategy, study.seed, study.scoring_run_id) == (70, "uniform", 1, run_row.pk)
    question = Question.objects.get(external_id="101")
    assert question.subject.name == "math"
    assert question.metadata == {"source_dataset": "EIP-demo", "level": "1", "answer_index": "1"}
    invitation = Invitation.objects.get()
    for line in (
        "site                http://demo.example:8123/",
        "admin               http://demo.example:8123/admin/",
        "results             http://demo.example:8123/results/",
        f"study invitation    http://demo.example:8123/join/{invitation.token}/",
    ):
        assert line in first

    passwords = logins(first)
    assert sorted(passwords) == ["admin", "evaluator", "researcher"]
    second, _ = run()
    assert "loaded" not in second and "EIP-demo v1 (120 questions x 24 models) reused" in second
    assert f"run {run_row.pk} reused" in second and "study 'Demo study' (70 pairs) reused, 0 simulated votes" in second
    assert counts() == (1, 120, 2868, 1, 1, 70, 6, 4, 1)
    assert Judgment.objects.count() == 210  # the simulated evaluators vote once
    new_passwords = logins(second)
    for username, password in new_passwords.items():
        assert password != passwords[username]
        assert Client().login(username=username, password=password), username
        assert not Client().login(username=username, password=passwords[username]), username


def test_the_printed_logins_reach_their_pages():
    output, _ = run("--password", "correct-horse-battery")
    assert set(logins(output).values()) == {"correct-horse-battery"}
    clients = {}
    for username in ("admin", "researcher", "evaluator"):
        clients[username] = Client()
        assert clients[username].login(username=username, password="correct-horse-battery")
    study = Study.objects.get()
    assert clients["admin"].get("/admin/").status_code == 200
    assert clients["researcher"].get("/results/").status_code == 200
    assert clients["researcher"].get("/admin/").status_code == 302  # not staff: admin login page
    assert clients["evaluator"].get("/results/").status_code == 403
    assert clients["evaluator"].get("/studies/").url == f"/studies/{study.pk}/"  # straight into the study
    token = re.search(r"/join/([^/\s]+)/", output).group(1)
    assert Client().get(f"/join/{token}/").status_code == 200


def test_it_loads_another_folder_keeping_every_extra_question_column(tmp_path):
    """A folder in the MMLU-Pro layout: subject in `category`, extra columns kept as metadata."""
    with open(tmp_path / "questions.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question_id", "category", "src", "mmlu_level", "question", "options_json", "answer"])
        for k in range(8):
            writer.writerow([k, "law" if k < 4 else "art", f"src-{k}", "hs" if k % 2 else "college",
                             f"Question {k}?", '["a", "b"]', "A"])
    # a failure pattern with every question kept: question k fails model j when (k + j) % 3 == 0
    with open(tmp_path / "responses_binary.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question_id", "m-one", "m-two", "m-three"])
        for k in range(8):
            writer.writerow([k, *[0 if (k + j) % 3 == 0 else 1 for j in range(3)]])
    output, _ = run("--data", str(tmp_path), "--pairs", "4", "--methods", "eip")
    assert "demo ready: " + tmp_path.name + " v1 (8 questions x 3 models) loaded" in output
    question = Question.objects.select_related("subject", "dataset").get(external_id="1")
    assert (question.subject.name, question.dataset.name) == ("law", tmp_path.name)
    assert question.metadata == {"src": "src-1", "mmlu_level": "hs"}
    assert Pair.objects.count() == 4
    assert sorted(ScoringRun.objects.get().methods.values_list("method", flat=True)) == ["accuracy", "eip"]


def test_it_refuses_a_folder_without_responses(tmp_path):
    with pytest.raises(CommandError, match=r"has no responses_binary\.csv"):
        run("--data", str(tmp_path))


def test_a_missing_data_folder_says_it_does_not_exist_and_where_a_relative_path_is_read(tmp_path):
    with pytest.raises(CommandError, match=r"data folder .*nowhere does not exist \(a relative path is read from "):
        run("--data", str(tmp_path / "nowhere"))


def test_simulated_evaluators_judge_every_pair_once_by_level_and_the_report_has_numbers():
    output, _ = run("--password", "pw-demo-1")
    study = Study.objects.get()
    simulated = Participation.objects.filter(study=study, user__username__startswith="simulated-")
    assert sorted(simulated.values_list("user__username", flat=True)) == ["simulated-1", "simulated-2", "simulated-3"]
    for participation in simulated:
        assert not participation.user.has_usable_password()
        assert sorted(participation.judgments.values_list("pair_id", flat=True)) == sorted(
            study.pairs.values_list("pk", flat=True))
        assert participation.judgments.filter(choice="skip").count() == 0
    assert "Simulated evaluators: simulated-1 to simulated-3 judged every pair" in output
    assert "they are not people and cannot log in" in output
    # A vote calls the higher-level question harder with probability 1 / (1 + exp(-2 (d + e))), d the level
    # difference and e ~ N(0, 2 * 0.5^2): for d = 2 that is above 0.9 for |e| < 0.9 (~93% of draws).
    levels = dict(Question.objects.values_list("pk", "metadata__level"))
    apart = [(j.harder_question_id, j.pair) for j in Judgment.objects.select_related("pair")
             if abs(int(levels[j.pair.question_a_id]) - int(levels[j.pair.question_b_id])) == 2]
    assert apart  # the 70 same-subject pairs hold level-1 vs level-3 pairs
    agree = sum(int(levels[harder]) == max(int(levels[p.question_a_id]), int(levels[p.question_b_id]))
                for harder, p in apart)
    assert agree / len(apart) > 0.8, (agree, len(apart))
    # the report: every pair has 3 votes, so a consensus; every method has an agreement figure
    client = Client()
    assert client.login(username="researcher", password="pw-demo-1")
    data = client.get(f"/studies/{study.pk}/report/report.json").json()
    assert (data["consensus"]["n_pairs"], data["consensus"]["n_decided"]) == (70, 70)
    assert sum(e["n_votes"] for e in data["evaluators"]) == 210
    # the simulated evaluators are marked as such in the report and on the manage page
    assert data["study"]["n_simulated_evaluators"] == 3
    assert [e["simulated"] for e in data["evaluators"]] == [True, True, True]
    page = client.get(f"/studies/{study.pk}/report/").content.decode()
    assert ('<p class="warning" id="note-simulated">All 3 evaluators are simulated: a program made their votes '
            "(seeded, from a made-up difficulty), not a person. The figures show how the report reads, not what "
            "people think.</p>") in page
    manage = client.get(f"/studies/{study.pk}/manage/").content.decode()
    assert manage.count('<span class="tag" title="a program made these votes, not a person">simulated</span>') == 3


def test_the_simulated_votes_do_not_depend_on_the_order_or_sides_pairs_are_shown_in():
    """Each simulated evaluator's vote on a pair is one seeded draw for that pair, so a second
    round of the same evaluators (new participations: a new pair order and new sides) votes the same."""
    from annotate.demo import services as demo

    run("--password", "pw-demo-1")
    study = Study.objects.get()

    def votes() -> dict[tuple[str, int], int]:
        return {(j.participation.user.username, j.pair.position): j.harder_question_id
                for j in Judgment.objects.select_related("participation__user", "pair")
                .filter(participation__user__username__startswith="simulated-")}

    first = votes()
    simulated = Participation.objects.filter(study=study, user__username__startswith="simulated-")
    Judgment.objects.filter(participation__in=simulated).delete()
    Assignment.objects.filter(participation__in=simulated).delete()
    simulated.delete()
    assert Judgment.objects.count() == 0
    assert demo._simulated_votes(study, study.scoring_run, 1) == 210
    assert votes() == first and len(first) == 210


def test_every_stored_time_is_when_setup_demo_ran_nothing_is_dated_back():
    """Load, score, create the study, then each simulated evaluator joins, reads the guidelines and votes: every
    stored time lies between the command's start and end, in that order, and each vote's seconds are its own
    submitted_at - shown_at (no invented pace)."""
    from django.utils import timezone

    before = timezone.now()
    run("--password", "pw-demo-1")
    after = timezone.now()
    study = Study.objects.select_related("scoring_run__response_set").get()
    run_ = study.scoring_run
    assert before <= run_.response_set.created_at <= run_.created_at <= run_.finished_at <= study.created_at <= after
    assert all(before <= t <= after for t in (run_.response_set.heartbeat_at, run_.heartbeat_at) if t is not None)
    assert all(before <= d.created_at <= after for d in run_.datasets_used.all())
    judgments = Judgment.objects.select_related("participation").filter(participation__study=study)
    assert judgments.count() == 210
    for j in judgments:
        p = j.participation
        assert study.created_at <= p.created_at <= p.guidelines_accepted_at <= j.shown_at <= j.submitted_at <= after
        assert j.seconds == (j.submitted_at - j.shown_at).total_seconds()
    simulated = list(Participation.objects.filter(study=study, is_simulated=True).order_by("user__username"))
    for first, second in itertools.pairwise(simulated):  # one after the other
        assert first.finished_at <= second.created_at
    assert Participation.objects.get(user__username="evaluator").created_at >= study.created_at


def test_the_monitor_flags_no_simulated_evaluator_as_a_speeder_but_a_person_as_fast():
    """The simulated evaluators vote a program's milliseconds apart; a person as fast is still flagged."""
    from datetime import timedelta

    from annotate.studies.selectors.study_monitor import study_monitor
    from annotate.studies.services.judging import judging_screen, judgment_submit

    run("--password", "pw-demo-1")
    study = Study.objects.get()
    person = Participation.objects.get(study=study, user__username="evaluator")
    Participation.objects.filter(pk=person.pk).update(guidelines_accepted_at=study.created_at)
    person.refresh_from_db()
    for _ in range(3):
        screen = judging_screen(participation=person)
        judgment_submit(participation=person, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                        choice="left", now=screen.shown_at + timedelta(seconds=1))
    monitor = study_monitor(study=study)
    by_name = {e.username: e for e in monitor.evaluators}
    assert study.speeder_seconds == 5.0
    for k in (1, 2, 3):
        e = by_name[f"simulated-{k}"]
        assert e.simulated and e.median_seconds < 5.0 and not e.speeder
    assert by_name["evaluator"].median_seconds < 5.0 and by_name["evaluator"].speeder
    assert monitor.n_speeders == 1
