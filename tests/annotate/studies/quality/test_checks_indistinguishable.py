"""Nothing a participant can see separates an attention check from a regular
pair: every field of the judging form, the page's markup, the URLs it posts
to and redirects to, and the place in the evaluator's order.

One evaluator judges a study of 24 regular pairs and 6 checks through the
judging page. For every field, no single threshold on its values (read as
numbers when they are numbers, else as text) puts all checks on one side and
all regular pairs on the other. With 6 checks among 30 pairs, a field of
values unrelated to the groups is separable with probability 2 / C(30, 6) ~
3e-6; the database ids the form carried before are separable by
construction (checks are created after the pairs), which the control case
shows.
"""
from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Pair
from annotate.studies.services.studies import study_create
from tests.annotate.factories import make_catalog, make_evaluator
from tests.annotate.judging_forms import form_ids
from tests.annotate.studies.quality.helpers import set_eip

pytestmark = pytest.mark.django_db
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
INPUT_RE = re.compile(r"<input\b([^>]*)>")
ATTR_RE = re.compile(r'(\w[\w-]*)="([^"]*)"')
QUESTION_RE = re.compile(r'<div class="question-text">.*?</div>|<ol class="options".*?</ol>', re.S)
TOKEN_RE = re.compile(r"\b[0-9a-f]{16}\b")
CSRF_RE = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')


def _key(value: str) -> tuple[int, float | str]:
    try:
        return (0, float(value))
    except ValueError:
        return (1, value)


def separable(group_a: list[str], group_b: list[str]) -> bool:
    """Whether one threshold on the values (numbers as numbers, else text) puts
    every value of one group strictly below every value of the other."""
    a, b = sorted(map(_key, group_a)), sorted(map(_key, group_b))
    if not a or not b:
        return False
    return a[-1] < b[0] or b[-1] < a[0]


def skeleton(html: str) -> str:
    """The page with what must differ from pair to pair blanked: the question
    texts and options, the opaque tokens, the CSRF token and every number."""
    html = QUESTION_RE.sub("QUESTION", html)
    html = CSRF_RE.sub("CSRF", html)
    html = TOKEN_RE.sub("TOKEN", html)
    return re.sub(r"\d+", "0", html)


@pytest.fixture
def study():
    catalog = make_catalog(per_subject=20)
    set_eip(catalog.questions, [((k * 7) % 40) / 40 for k in range(40)])  # distinct, shuffled difficulties
    study = study_create(name="Blind", run=catalog.run, datasets=[catalog.dataset], n_pairs=24, seed=11,
                         attention_check_share=0.2)
    assert Pair.objects.filter(study=study, attention_check=True).count() == 6  # round(0.2 * 24 / 0.8)
    return study


def test_no_field_of_the_judging_page_separates_checks_from_pairs(study):
    participation = make_evaluator(study, "ada")
    participation.seed = 20261206
    participation.save(update_fields=["seed"])
    client = Client()
    client.force_login(participation.user)
    judge = reverse("annotate:study_judge", kwargs={"study_id": study.pk})
    is_check = dict(Pair.objects.filter(study=study).values_list("pk", "attention_check"))
    fields: dict[bool, dict[str, list[str]]] = {False: {}, True: {}}
    skeletons: dict[bool, set[str]] = {False: set(), True: set()}
    redirects: dict[bool, set[str]] = {False: set(), True: set()}
    pair_ids: dict[bool, list[str]] = {False: [], True: []}
    step = 0
    while True:
        page = client.get(judge)
        if page.status_code == 302:
            break
        html = page.content.decode()
        pair_id, _left_id = form_ids(client, study, html)
        group = is_check[pair_id]
        pair_ids[group].append(str(pair_id))
        values = fields[group]
        values.setdefault("order", []).append(str(step))
        for attributes in INPUT_RE.findall(html):
            attrs = dict(ATTR_RE.findall(attributes))
            name = attrs.get("name", "?")
            for attr, value in attrs.items():
                values.setdefault(f"{name}.{attr}", []).append(value)
        for action in re.findall(r'<form[^>]*action="([^"]*)"', html):
            values.setdefault("form.action", []).append(action)
        skeletons[group].add(skeleton(html))
        data = {name: dict(ATTR_RE.findall(a)).get("value", "") for a in INPUT_RE.findall(html)
                if (name := dict(ATTR_RE.findall(a)).get("name")) in ("pair", "left")}
        answer = client.post(judge, {**data, "choice": "left"})
        assert answer.status_code == 302
        redirects[group].add(answer.url)
        step += 1
    assert (len(pair_ids[False]), len(pair_ids[True])) == (24, 6)
    # The control: the database ids the form used to carry tell the checks apart.
    assert separable(pair_ids[False], pair_ids[True])
    assert set(fields[False]) == set(fields[True])  # the same fields, attributes and hidden inputs
    separating = [name for name in fields[False] if separable(fields[False][name], fields[True][name])]
    assert separating == []
    assert len(skeletons[False] | skeletons[True]) == 1  # one markup, whatever the pair
    assert redirects[False] == redirects[True] == {judge}
