"""Judging, end to end through the views: invitation, onboarding, guidelines,
one answer per pair, skips, the target per pair, PRG, forged forms, CSRF.

Cast: ``ada`` and ``bo`` are evaluators, ``owner`` is staff.
"""
from __future__ import annotations

import re

import pytest
from django.core import signing
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotate.models import Assignment, Choice, Judgment, Pair, Participation, Question, StudyStatus
from annotate.studies.selectors.studies import evaluator_pair_key
from annotate.studies.services.participation import (
    invitation_create,
    invitation_revoke,
    participation_accept_guidelines,
    participation_onboard,
)
from annotate.studies.services.studies import study_set_status
from annotate.studies.views.judging import UNSAVED_SALT
from tests.annotate.factories import make_catalog, make_evaluator, make_study
from tests.annotate.judging_forms import form_data, form_ids, token_of

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    """Invitation 404s count towards the rate limit (annotate/core/ratelimit.py),
    kept in the cache across tests; start every test with none."""
    cache.clear()

AGREE = {"consent": "yes"}  # the join page's "I agree" button


def judge_url(study) -> str:
    return reverse("annotate:study_judge", kwargs={"study_id": study.pk})


def shown(client: Client, study) -> tuple[int, int]:
    """(pair id, left question id) of the judging page."""
    response = client.get(judge_url(study))
    assert response.status_code == 200, response.status_code
    return form_ids(client, study, response.content.decode())


def answer(client: Client, study, pair_id: int, left_id: int, choice: str = "left", **extra):
    return client.post(judge_url(study), form_data(client, study, pair_id, left_id, choice, **extra))


@pytest.fixture
def study():
    return make_study(make_catalog(per_subject=4), n_pairs=8, seed=3)


@pytest.fixture
def ada(study):
    participation = make_evaluator(study, "ada")
    client = Client()
    client.force_login(participation.user)
    return participation, client


# --- invitation -----------------------------------------------------------------


def test_it_creates_a_pseudonymous_evaluator_on_joining_by_invitation(study):
    invitation = invitation_create(study=study)
    client = Client()
    url = reverse("annotate:study_join", kwargs={"token": invitation.token})
    assert client.get(url).status_code == 200
    assert Participation.objects.count() == 0  # a GET (link preview) creates nobody
    response = client.post(url, AGREE)
    assert response.status_code == 302
    participation = Participation.objects.get()
    user = participation.user
    assert re.fullmatch(r"evaluator-[0-9a-f]{4}", user.username)
    assert user.email == "" and not user.has_usable_password()
    assert user.groups.filter(name="evaluator").exists()
    assert participation.invitation == invitation
    assert response.url == reverse("annotate:study_entry", kwargs={"study_id": study.pk})
    assert client.get(response.url).url == reverse("annotate:study_onboarding", kwargs={"study_id": study.pk})


def test_it_resumes_the_same_evaluator_in_the_same_browser(study):
    invitation = invitation_create(study=study)
    client = Client()
    url = reverse("annotate:study_join", kwargs={"token": invitation.token})
    client.post(url, AGREE)
    first = Participation.objects.get()
    assert client.get(url).status_code == 302  # logged in: straight back in
    del client.cookies["sessionid"]  # the session expired; the resume cookie stays
    assert "eip_evaluator" in client.cookies
    page = client.get(url)  # a link preview signs nobody in: the page offers to continue
    assert page.status_code == 200 and "_auth_user_id" not in client.session
    assert f"Continue as {first.user.username}" in page.content.decode()
    response = client.post(url)
    assert response.status_code == 302
    assert Participation.objects.count() == 1
    assert int(client.session["_auth_user_id"]) == first.user_id


def test_a_new_browser_gets_a_new_evaluator(study):
    invitation = invitation_create(study=study)
    url = reverse("annotate:study_join", kwargs={"token": invitation.token})
    Client().post(url, AGREE)
    Client().post(url, AGREE)
    assert Participation.objects.count() == 2
    assert len({p.user.username for p in Participation.objects.all()}) == 2


def test_a_revoked_or_unknown_invitation_admits_nobody(study):
    invitation = invitation_create(study=study)
    invitation_revoke(invitation=invitation)
    client = Client()
    url = reverse("annotate:study_join", kwargs={"token": invitation.token})
    assert client.get(url).status_code == 404
    assert client.post(url, AGREE).status_code == 404
    assert client.get(reverse("annotate:study_join", kwargs={"token": "x" * 43})).status_code == 404
    assert Participation.objects.count() == 0


def test_a_closed_study_admits_no_new_evaluator(study):
    invitation = invitation_create(study=study)
    study_set_status(study=study, status=StudyStatus.CLOSED)
    response = Client().post(reverse("annotate:study_join", kwargs={"token": invitation.token}), AGREE)
    assert response.status_code == 200 and "This study is closed" in response.content.decode()
    assert Participation.objects.count() == 0


# --- onboarding and guidelines --------------------------------------------------


def test_onboarding_then_guidelines_then_judging(study):
    participation = make_evaluator(study, "cy", ready=False)
    client = Client()
    client.force_login(participation.user)
    entry = reverse("annotate:study_entry", kwargs={"study_id": study.pk})
    assert client.get(entry).url == reverse("annotate:study_onboarding", kwargs={"study_id": study.pk})
    assert client.get(judge_url(study)).url == reverse("annotate:study_onboarding", kwargs={"study_id": study.pk})
    page = client.get(reverse("annotate:study_onboarding", kwargs={"study_id": study.pk})).content.decode()
    for label in ("Computer Science", "Humanities", "Arts", "Associate", "Bachelor&#x27;s student", "PhD student",
                  "Mathematics", "Physics"):
        assert label in page
    bad = client.post(reverse("annotate:study_onboarding", kwargs={"study_id": study.pk}),
                      {"field_of_study": "astrology"})
    assert bad.status_code == 400 and "Select a valid choice" in bad.content.decode()
    physics = study.subjects.get(name="Physics")
    response = client.post(
        reverse("annotate:study_onboarding", kwargs={"study_id": study.pk}),
        {"field_of_study": "engineering", "education_level": "phd_student", "qualified_subjects": [physics.pk]},
    )
    assert response.url == reverse("annotate:study_guidelines", kwargs={"study_id": study.pk})
    participation.refresh_from_db()
    assert (participation.field_of_study, participation.education_level) == ("engineering", "phd_student")
    assert list(participation.qualified_subjects.all()) == [physics]
    assert client.get(entry).url == reverse("annotate:study_guidelines", kwargs={"study_id": study.pk})
    guidelines = client.get(reverse("annotate:study_guidelines", kwargs={"study_id": study.pk})).content.decode()
    assert "Your answers are final" in guidelines
    response = client.post(reverse("annotate:study_guidelines", kwargs={"study_id": study.pk}))
    assert response.url == judge_url(study)
    assert client.get(entry).url == judge_url(study)


# --- judging --------------------------------------------------------------------


def test_a_refresh_shows_the_same_pair_the_same_way_round(study, ada):
    participation, client = ada
    first = shown(client, study)
    assert shown(client, study) == first
    assert Assignment.objects.filter(participation=participation).count() == 1
    # Placement follows the per-participation seed, as documented.
    pair_id, left_id = first
    pair = study.pairs.get(pk=pair_id)
    _, a_left = evaluator_pair_key(seed=participation.seed, pair_id=pair_id)
    assert left_id == (pair.question_a_id if a_left else pair.question_b_id)


def test_each_evaluator_gets_their_own_order(study, ada):
    participation, _ = ada
    others = [make_evaluator(study, f"e{k}") for k in range(6)]
    orders = set()
    for p in [participation, *others]:
        keys = {pair.pk: evaluator_pair_key(seed=p.seed, pair_id=pair.pk)[0] for pair in study.pairs.all()}
        orders.add(tuple(sorted(keys, key=keys.get)))
    assert len(orders) > 1  # 7 evaluators, 8! orders: all equal only by a ~1e-32 coincidence


def test_it_stores_one_judgment_with_the_displayed_order_and_redirects(study, ada):
    _participation, client = ada
    pair_id, left_id = shown(client, study)
    response = answer(client, study, pair_id, left_id, "right", client_ms="4250")
    assert response.status_code == 302 and response.url == judge_url(study)
    judgment = Judgment.objects.get()
    pair = judgment.pair
    right_id = pair.question_b_id if left_id == pair.question_a_id else pair.question_a_id
    assert (judgment.pair_id, judgment.left_question_id, judgment.choice) == (pair_id, left_id, Choice.RIGHT)
    assert judgment.harder_question_id == right_id
    assert judgment.client_seconds == pytest.approx(4.25, abs=1e-9)
    assert judgment.seconds >= 0
    assert shown(client, study)[0] != pair_id


def test_it_ignores_a_second_submission_of_the_same_pair(study, ada):
    _, client = ada
    pair_id, left_id = shown(client, study)
    first = answer(client, study, pair_id, left_id, "left")
    second = answer(client, study, pair_id, left_id, "right")  # double click, back button, stale tab
    assert first.status_code == second.status_code == 302
    assert second.url == judge_url(study)
    judgment = Judgment.objects.get()
    assert judgment.choice == Choice.LEFT  # answers are final


def test_a_second_tab_with_another_answer_is_told_which_answer_was_kept(study, ada):
    participation, client = ada
    pair_id, left_id = shown(client, study)  # tab 1
    assert shown(client, study) == (pair_id, left_id)  # tab 2 shows the same pair the same way round
    answer(client, study, pair_id, left_id, "left")  # tab 1 answers
    page = client.post(judge_url(study), form_data(client, study, pair_id, left_id, "right"), follow=True)
    text = page.content.decode()
    assert ("This pair was already answered in another tab or window; your first answer (left / top is harder) "
            "was kept and this one was not saved.") in text
    # One judgment, the first; one vote on the pair; the next page is the next pair.
    judgment = Judgment.objects.get(participation=participation)
    assert (judgment.pair_id, judgment.choice) == (pair_id, Choice.LEFT)
    assert Pair.objects.get(pk=pair_id).n_votes == 1
    assert form_ids(client, study, text)[0] != pair_id
    # The notice is shown once.
    assert "another tab" not in client.get(judge_url(study)).content.decode()


def test_a_second_tab_with_the_same_answer_or_a_skip_after_an_answer(study, ada):
    participation, client = ada
    pair_id, left_id = shown(client, study)
    answer(client, study, pair_id, left_id, "skip")
    same = client.post(judge_url(study), form_data(client, study, pair_id, left_id, "skip"), follow=True)
    assert "another tab" not in same.content.decode()  # nothing lost: no notice
    other = client.post(judge_url(study), form_data(client, study, pair_id, left_id, "left"), follow=True)
    assert "your first answer (skip — not qualified) was kept" in other.content.decode()
    assert list(Judgment.objects.filter(participation=participation).values_list("pair_id", "choice")) == [
        (pair_id, Choice.SKIP)]
    assert Pair.objects.get(pk=pair_id).n_votes == 0  # a skip is no vote, and the later "left" added none


def test_a_forged_pair_from_another_study_is_404_and_stores_nothing(study, ada):
    _, client = ada
    other = make_study(make_catalog(per_subject=3), n_pairs=2)
    foreign = other.pairs.first()
    shown(client, study)
    response = answer(client, study, foreign.pk, foreign.question_a_id)
    assert response.status_code == 404
    assert Judgment.objects.count() == 0


def test_a_forged_left_question_is_400_and_stores_nothing(study, ada):
    _, client = ada
    pair_id, left_id = shown(client, study)
    pair = study.pairs.get(pk=pair_id)
    right_id = pair.question_b_id if left_id == pair.question_a_id else pair.question_a_id
    assert answer(client, study, pair_id, right_id).status_code == 400  # swapped sides
    assert answer(client, study, pair_id, 999_999).status_code == 400  # not in the pair
    assert answer(client, study, pair_id, left_id, "both").status_code == 400  # unknown choice
    assert answer(client, study, "x", left_id).status_code == 400
    assert Judgment.objects.count() == 0


def test_a_pair_never_shown_cannot_be_answered(study, ada):
    _, client = ada
    pair_id, _ = shown(client, study)
    unseen = study.pairs.exclude(pk=pair_id).first()
    assert answer(client, study, unseen.pk, unseen.question_a_id).status_code == 400
    assert Judgment.objects.count() == 0


def test_a_skip_is_recorded_not_shown_again_and_stays_open_for_others(study, ada):
    _participation, client = ada
    pair_id, left_id = shown(client, study)
    answer(client, study, pair_id, left_id, "skip")
    skip = Judgment.objects.get()
    assert (skip.choice, skip.harder_question_id) == (Choice.SKIP, None)
    seen = set()
    for _ in range(7):
        pid, lid = shown(client, study)
        seen.add(pid)
        answer(client, study, pid, lid, "left")
    assert pair_id not in seen
    assert client.get(judge_url(study)).url == reverse("annotate:study_done", kwargs={"study_id": study.pk})
    bo = make_evaluator(study, "bo")
    bo_client = Client()
    bo_client.force_login(bo.user)
    offered = set()
    for _ in range(8):
        pid, lid = shown(bo_client, study)
        offered.add(pid)
        answer(bo_client, study, pid, lid, "right")
    assert pair_id in offered


def test_progress_counts_judged_skipped_and_remaining(study, ada):
    _, client = ada
    for choice in ("left", "skip", "right"):
        pid, lid = shown(client, study)
        answer(client, study, pid, lid, choice)
    page = client.get(judge_url(study)).content.decode()
    assert "Judged 2" in page and "Skipped 1" in page and "Remaining 5" in page


def test_a_finished_evaluator_sees_the_done_page(study, ada):
    participation, client = ada
    for _ in range(8):
        pid, lid = shown(client, study)
        answer(client, study, pid, lid, "left")
    response = client.get(judge_url(study), follow=True)
    assert response.redirect_chain[-1][0] == reverse("annotate:study_done", kwargs={"study_id": study.pk})
    body = response.content.decode()
    assert "All done" in body and "Judged 8" in body and "Remaining 0" in body
    participation.refresh_from_db()
    assert participation.finished_at is not None
    assert Judgment.objects.filter(participation=participation).count() == 8


def test_a_full_pair_is_not_offered_to_new_evaluators(ada):
    # Target 1 vote per pair, 2 pairs in one subject.
    study = make_study(make_catalog(subjects=("Mathematics",), per_subject=3), n_pairs=2, target=1)
    x1, x2, x3 = (make_evaluator(study, name) for name in ("x1", "x2", "x3"))
    c1, c2, c3 = Client(), Client(), Client()
    for participation, client in ((x1, c1), (x2, c2), (x3, c3)):
        client.force_login(participation.user)
    held = shown(c2, study)  # on x2's screen before the pairs fill up
    for _ in range(2):
        answer(c1, study, *shown(c1, study), "left")  # x1 brings both pairs to the target
    assert shown(c2, study) == held  # x2 keeps the pair on screen ...
    answer(c2, study, *held, "right")
    done = reverse("annotate:study_done", kwargs={"study_id": study.pk})
    assert c2.get(judge_url(study)).url == done  # ... but is not offered the other one
    assert "Judged 1" in c2.get(done).content.decode()
    assert c3.get(judge_url(study)).url == done  # x3 gets nothing
    assert Judgment.objects.filter(participation=x3).count() == 0


def test_a_full_pair_already_on_screen_survives_the_target(ada):
    study = make_study(make_catalog(subjects=("Mathematics",), per_subject=2), n_pairs=1, target=1)
    first, second = (make_evaluator(study, name) for name in ("y1", "y2"))
    c1, c2 = Client(), Client()
    c1.force_login(first.user)
    c2.force_login(second.user)
    p1, l1 = shown(c1, study)
    p2, l2 = shown(c2, study)
    assert p1 == p2  # the only pair
    answer(c1, study, p1, l1, "left")  # target reached
    assert shown(c2, study) == (p2, l2)  # still on y2's screen
    answer(c2, study, p2, l2, "right")
    assert Judgment.objects.filter(pair_id=p1).count() == 2


def test_a_closed_study_stores_nothing_and_says_so(study, ada):
    _, client = ada
    pair_id, left_id = shown(client, study)
    study_set_status(study=study, status=StudyStatus.CLOSED)
    response = answer(client, study, pair_id, left_id)
    assert response.status_code == 302
    assert response.url == reverse("annotate:study_closed", kwargs={"study_id": study.pk})
    assert "This study is closed" in client.get(response.url).content.decode()
    assert Judgment.objects.count() == 0


# --- sessions and CSRF ----------------------------------------------------------


UNSAVED = "Your session had expired, so your last answer was not saved. Here is the same pair again."


def login_url_back_to(url: str) -> str:
    """The login URL that returns to ``url`` (its ``?`` and ``=`` escaped, ``/`` kept)."""
    return f"{reverse('login')}?next={url.replace('?', '%3F').replace('=', '%3D')}"


def test_an_expired_session_sends_the_answer_to_login_and_back_with_the_pair_pending(study, ada, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    participation, client = ada
    answer(client, study, *shown(client, study))  # one answer saved before the session expires
    pair_id, left_id = shown(client, study)
    client.logout()
    response = answer(client, study, pair_id, left_id, choice="right")
    assert response.status_code == 302
    back = f"{judge_url(study)}?unsaved={token_of(participation, pair_id)}"
    assert response.url == login_url_back_to(back)
    assert Judgment.objects.count() == 1
    login_page = client.get(response.url).content.decode()
    assert f'name="next" value="{back}"' in login_page
    participation.user.set_password("pw-Correct-horse-9")
    participation.user.save()
    logged_in = client.post(response.url, {"username": "ada", "password": "pw-Correct-horse-9", "next": back})
    assert logged_in.url == back
    page = client.get(back, follow=True)
    assert page.redirect_chain == [(judge_url(study), 302)]  # the message is shown under the plain URL
    body = page.content.decode()
    assert body.count(UNSAVED) == 1
    assert form_ids(client, study, body) == (pair_id, left_id)
    assert Judgment.objects.count() == 1
    assert UNSAVED not in client.get(judge_url(study)).content.decode()  # said once
    answer(client, study, pair_id, left_id, choice="right")
    assert Judgment.objects.get(participation=participation, pair_id=pair_id).choice == Choice.RIGHT


def test_an_anonymous_get_goes_to_login_without_a_marker(study):
    response = Client().get(judge_url(study))
    assert response.url == f"{reverse('login')}?next={judge_url(study)}"


def test_the_message_is_only_given_for_the_pair_on_screen(study, ada):
    participation, client = ada
    first = shown(client, study)
    answer(client, study, *first)  # the marked pair was answered meanwhile (another tab)
    pair_id, _ = shown(client, study)
    assert pair_id != first[0]
    for marker in (token_of(participation, first[0]), str(first[0]), "x", "", "99999999999999999999"):
        page = client.get(f"{judge_url(study)}?unsaved={marker}", follow=True)
        assert page.redirect_chain == [(judge_url(study), 302)]
        assert UNSAVED not in page.content.decode()
        assert shown(client, study)[0] == pair_id
    assert Judgment.objects.count() == 1


def test_an_evaluator_back_through_the_invitation_link_is_told_too(study):
    invitation = invitation_create(study=study)
    join = reverse("annotate:study_join", kwargs={"token": invitation.token})
    client = Client()
    client.post(join, AGREE)
    participation = Participation.objects.get()
    participation_onboard(participation=participation, field_of_study="arts", education_level="phd",
                          qualified_subjects=[])
    participation_accept_guidelines(participation=participation)
    pair_id, left_id = shown(client, study)
    del client.cookies["sessionid"]  # the session expired; the resume cookie stays
    response = answer(client, study, pair_id, left_id)
    assert response.url == login_url_back_to(f"{judge_url(study)}?unsaved={token_of(participation, pair_id)}")
    assert "eip_unsaved" in client.cookies
    page = client.post(join, follow=True)  # no password: back through the link
    assert [url for url, _ in page.redirect_chain] == [
        reverse("annotate:study_entry", kwargs={"study_id": study.pk}), judge_url(study)]
    body = page.content.decode()
    assert body.count(UNSAVED) == 1
    assert form_ids(client, study, body) == (pair_id, left_id)
    assert client.cookies["eip_unsaved"].value == ""  # deleted: said once
    assert UNSAVED not in client.get(judge_url(study)).content.decode()
    assert Judgment.objects.count() == 0


def test_an_invitation_evaluator_whose_csrf_cookie_went_too_is_told_after_the_link(study, settings):
    settings.CSRF_FAILURE_VIEW = "annotate.studies.views.judging.csrf_failure"
    invitation = invitation_create(study=study)
    join = reverse("annotate:study_join", kwargs={"token": invitation.token})
    client = Client(enforce_csrf_checks=True)
    client.get(join)
    client.post(join, {"csrfmiddlewaretoken": client.cookies["csrftoken"].value, **AGREE})
    participation = Participation.objects.get()
    participation_onboard(participation=participation, field_of_study="arts", education_level="phd",
                          qualified_subjects=[])
    participation_accept_guidelines(participation=participation)
    pair_id, left_id = shown(client, study)
    del client.cookies["sessionid"]
    del client.cookies["csrftoken"]
    response = answer(client, study, pair_id, left_id)
    assert response.status_code == 403 and "not saved" in response.content.decode()
    assert "eip_unsaved" in client.cookies
    client.get(join)  # a fresh CSRF cookie
    page = client.post(join, {"csrfmiddlewaretoken": client.cookies["csrftoken"].value}, follow=True)
    assert page.content.decode().count(UNSAVED) == 1
    assert shown(client, study) == (pair_id, left_id)
    assert Judgment.objects.count() == 0


def test_the_invitation_cookie_speaks_only_to_its_own_evaluator_and_study(study, ada):
    participation, client = ada
    other = make_evaluator(study, "bo")
    pair_id, _ = shown(client, study)
    marker = token_of(participation, pair_id)

    def told(cookie: dict) -> bool:
        client.cookies["eip_unsaved"] = signing.dumps(cookie, salt=UNSAVED_SALT)
        return UNSAVED in client.get(judge_url(study)).content.decode()

    assert told({"u": participation.user_id, "s": study.pk, "p": marker})  # the control
    assert not told({"u": other.user_id, "s": study.pk, "p": marker})  # another evaluator on this browser
    assert not told({"u": participation.user_id, "s": study.pk + 1, "p": marker})
    client.cookies["eip_unsaved"] = signing.dumps({"u": participation.user_id, "s": study.pk, "p": marker})
    assert UNSAVED not in client.get(judge_url(study)).content.decode()  # signed for another purpose


def test_a_csrf_failure_shows_a_friendly_page_and_loses_nothing(study, ada, settings):
    settings.CSRF_FAILURE_VIEW = "annotate.studies.views.judging.csrf_failure"
    participation, _ = ada
    client = Client(enforce_csrf_checks=True)
    client.force_login(participation.user)
    pair_id, left_id = shown(client, study)
    response = answer(client, study, pair_id, left_id)  # no CSRF token
    assert response.status_code == 403
    body = response.content.decode()
    back = f"{judge_url(study)}?unsaved={token_of(participation, pair_id)}"
    assert "not saved" in body and reverse("annotate:study_entry", kwargs={"study_id": study.pk}) in body
    assert f'id="csrf-continue" href="{back}"' in body
    assert Judgment.objects.count() == 0
    page = client.get(back, follow=True)
    assert page.content.decode().count(UNSAVED) == 1
    assert shown(client, study) == (pair_id, left_id)
    anonymous = Client(enforce_csrf_checks=True).post(judge_url(study), {"pair": token_of(participation, pair_id)})
    assert anonymous.status_code == 403
    assert f'{login_url_back_to(back)}"' in anonymous.content.decode()
    guidelines = reverse("annotate:study_guidelines", kwargs={"study_id": study.pk})
    elsewhere = Client(enforce_csrf_checks=True).post(guidelines)
    assert f"{reverse('login')}?next=/studies/{study.pk}/\"" in elsewhere.content.decode()


# --- database invariants --------------------------------------------------------


def test_the_database_refuses_a_second_judgment_and_inconsistent_rows(study, ada):
    from django.db import IntegrityError, transaction
    from django.utils import timezone

    participation, client = ada
    pair_id, left_id = shown(client, study)
    answer(client, study, pair_id, left_id, "left")
    pair = study.pairs.get(pk=pair_id)
    other_id = pair.question_b_id if left_id == pair.question_a_id else pair.question_a_id
    now = timezone.now()
    base = {"participation": participation, "pair": pair, "left_question_id": left_id, "shown_at": now,
            "submitted_at": now, "seconds": 1.0}
    with pytest.raises(IntegrityError), transaction.atomic():  # one judgment per evaluator and pair
        Judgment.objects.create(choice="right", harder_question_id=other_id, **base)
    bo = make_evaluator(study, "bo")
    base["participation"] = bo
    for choice, harder in (("left", other_id), ("right", left_id), ("right", None), ("skip", left_id)):
        with pytest.raises(IntegrityError), transaction.atomic():  # harder must follow the choice
            Judgment.objects.create(choice=choice, harder_question_id=harder, **base)
    with pytest.raises(IntegrityError), transaction.atomic():  # an unordered pair is stored once, in either order
        Pair.objects.create(study=study, position=99, question_a_id=pair.question_b_id,
                            question_b_id=pair.question_a_id)
    assert Judgment.objects.count() == 1


def test_question_text_and_options_are_escaped():
    study = make_study(make_catalog(per_subject=2, with_text=" <script>alert(1)</script> & <b>bold</b>"), n_pairs=2)
    participation = make_evaluator(study, "eve")
    client = Client()
    client.force_login(participation.user)
    Question.objects.update(options=["<img src=x onerror=alert(2)>", "plain"])
    body = client.get(judge_url(study)).content.decode()
    assert "<script>alert(1)" not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<b>bold</b>" not in body and "&amp; &lt;b&gt;bold&lt;/b&gt;" in body
    assert "<img src=x" not in body and "&lt;img src=x onerror=alert(2)&gt;" in body


@pytest.mark.parametrize("field", ["choice", "client_ms"])
@pytest.mark.parametrize("value", ["a\x00b", "x" * 10_000, "99999999999999999999", "-1"])
def test_an_answer_with_a_hostile_field_on_the_pair_on_screen_is_refused_without_a_write(study, ada, field, value):
    participation, client = ada
    pair_id, left_id = shown(client, study)
    before = (Judgment.objects.count(), Assignment.objects.count(), list(Pair.objects.values_list("n_votes")))
    data = form_data(client, study, pair_id, left_id, "left", client_ms="1200")
    data[field] = value
    response = client.post(judge_url(study), data)
    assert 400 <= response.status_code < 500 or (response.status_code == 200 and b"harder" in response.content)
    assert (Judgment.objects.count(), Assignment.objects.count(),
            list(Pair.objects.values_list("n_votes"))) == before
    assert answer(client, study, pair_id, left_id, "left", client_ms="1200").status_code == 302  # the pair still open
    assert Judgment.objects.filter(participation=participation, pair_id=pair_id).count() == 1
