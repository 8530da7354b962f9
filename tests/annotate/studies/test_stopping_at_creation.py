"""Stopping rules chosen when a study is created: the New-study page and
``create_study`` store each rule; a bad value is refused with the manage
page's message and nothing is written.

Cast: ``olga`` (researcher, creates the studies and owns the one whose
manage page is the reference).
"""
from __future__ import annotations

from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils.html import escape

from annotate.models import StoppingRules, Study
from tests.annotate.factories import client_for, make_study

pytestmark = pytest.mark.django_db

BLANK_RULES = {"target_reliability": "", "method_a": "", "method_b": "", "alpha": "0.05", "max_judgments": "",
               "budget": "", "pay_per_judgment": ""}



def page_data(catalog, **rules) -> dict:
    return {
        "name": "From the page", "run": catalog.run.pk, "datasets": [catalog.dataset.pk], "pairs_mode": "total",
        "n_pairs": 8, "strategy": "uniform", "target_judgments_per_pair": 5, "seed": 42,
        "guidelines": "Pick the harder one.", "consent_text": "I agree.", "onboarding_questions": [],
        **BLANK_RULES, **rules,
    }


def command_args(catalog, *rules: str) -> list[str]:
    return ["--name", "From the command", "--datasets", catalog.dataset.name, "--pairs", "8", "--seed", "42",
            "--run", str(catalog.run.pk), "--no-invitation", *rules]


STORED = ("target_reliability", "method_a", "method_b", "alpha", "max_judgments", "budget", "pay_per_judgment")

# Each rule as the page posts it, as the command takes it, and the row both must store.
RULES = {
    "reliability": ({"target_reliability": "0.85"}, ["--target-reliability", "0.85"],
                    (Decimal("0.850"), "", "", Decimal("0.050"), None, None, None)),
    "comparison": ({"method_a": "eip", "method_b": "simple_rank", "alpha": "0.01"},
                   ["--compare", "eip", "simple_rank", "--alpha", "0.01"],
                   (None, "eip", "simple_rank", Decimal("0.010"), None, None, None)),
    "judgment budget": ({"max_judgments": "300"}, ["--max-judgments", "300"],
                        (None, "", "", Decimal("0.050"), 300, None, None)),
    "money budget": ({"budget": "45.50", "pay_per_judgment": "0.15"},
                     ["--budget", "45.50", "--pay-per-judgment", "0.15"],
                     (None, "", "", Decimal("0.050"), None, Decimal("45.50"), Decimal("0.15"))),
}


def stored_rules(name: str) -> tuple:
    rules = StoppingRules.objects.get(study__name=name)
    assert rules.fired_at is None
    return tuple(getattr(rules, field) for field in STORED)


@pytest.mark.parametrize("rule", list(RULES))
def test_the_new_study_page_stores_each_rule(catalog, olga, rule):
    posted, _, expected = RULES[rule]
    response = client_for(olga).post(reverse("annotate:study_create"), page_data(catalog, **posted))
    assert response.status_code == 302
    assert stored_rules("From the page") == expected


@pytest.mark.parametrize("rule", list(RULES))
def test_create_study_stores_each_rule(catalog, rule):
    _, args, expected = RULES[rule]
    call_command("create_study", *command_args(catalog, *args), stdout=StringIO())
    assert stored_rules("From the command") == expected


def test_every_rule_at_once_and_none_at_all(catalog, olga):
    posted = {"target_reliability": "0.8", "method_a": "eip", "method_b": "simple_rank", "max_judgments": "500",
              "budget": "60", "pay_per_judgment": "0.12"}
    client_for(olga).post(reverse("annotate:study_create"), page_data(catalog, **posted))
    assert stored_rules("From the page") == (Decimal("0.800"), "eip", "simple_rank", Decimal("0.050"), 500,
                                             Decimal("60.00"), Decimal("0.12"))
    client_for(olga).post(reverse("annotate:study_create"), page_data(catalog, name="No rules"))
    call_command("create_study", *command_args(catalog), stdout=StringIO())
    assert Study.objects.filter(name__in=("No rules", "From the command")).count() == 2
    assert not StoppingRules.objects.filter(study__name__in=("No rules", "From the command")).exists()


def test_the_page_offers_the_rules_in_their_own_fieldset_and_the_edit_page_does_not(catalog, olga):
    page = client_for(olga).get(reverse("annotate:study_create")).content.decode()
    fieldset = page.split('<fieldset id="stopping-rules">')[1].split("</fieldset>")[0]
    for name in ("target_reliability", "method_a", "method_b", "alpha", "max_judgments", "budget",
                 "pay_per_judgment"):
        assert f'name="{name}"' in fieldset
    assert '<option value="eip">' in fieldset
    study = make_study(catalog, owner=olga)
    edit = client_for(olga).get(reverse("annotate:study_edit", kwargs={"study_id": study.pk})).content.decode()
    assert 'id="stopping-rules"' not in edit


# A bad value: the page's and the command's rules, and the message the manage page gives for it (the pages name
# the fields by their labels, the command by its own names: then a pair (pages, command)).
BAD = {
    "reliability above the field's maximum": (
        {"target_reliability": "1.2"}, ["--target-reliability", "1.2"],
        "Stopping rules not saved: Target reliability: Ensure this value is less than or equal to 0.999."),
    "reliability not a number": (
        {"target_reliability": "high"}, ["--target-reliability", "high"],
        "Stopping rules not saved: Target reliability: Enter a number."),
    "one method only": (
        {"method_a": "eip"}, ["--compare", "eip", ""],
        ("Stopping rules not saved: The first method to compare and the second method must both be set or both be "
         "blank (entered: 'eip' and '')",
         "method_a and method_b must both be set or both be blank; got 'eip' and ''")),
    "the same method twice": (
        {"method_a": "eip", "method_b": "eip"}, ["--compare", "eip", "eip"],
        ("Stopping rules not saved: The first method to compare and the second method must differ (entered: 'eip' "
         "twice)", "method_a and method_b must differ; got 'eip' twice")),
    "an unknown method": (
        {"method_a": "eip", "method_b": "astrology"}, ["--compare", "eip", "astrology"],
        "Stopping rules not saved: with method: Select a valid choice. astrology is not one of the available "
        "choices."),
    "alpha of zero": (
        {"method_a": "eip", "method_b": "simple_rank", "alpha": "0"},
        ["--compare", "eip", "simple_rank", "--alpha", "0"],
        "Stopping rules not saved: Test level α: Ensure this value is greater than or equal to 0.001."),
    "a money budget without pay": (
        {"budget": "10"}, ["--budget", "10"],
        ("Stopping rules not saved: A budget in money needs pay per judgment above 0",
         "a budget in money needs pay_per_judgment > 0")),
    "no judgment at all": (
        {"max_judgments": "0"}, ["--max-judgments", "0"],
        "Stopping rules not saved: Budget in judgments: Ensure this value is greater than or equal to 1."),
    "a third of a cent": (
        {"pay_per_judgment": "0.123"}, ["--pay-per-judgment", "0.123"],
        "Stopping rules not saved: Pay per judgment: Ensure that there are no more than 2 decimal places."),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_rule_gets_the_manage_page_message_and_nothing_is_written(catalog, olga, case):
    posted, args, message = BAD[case]
    message, command_message = message if isinstance(message, tuple) else (message, message)
    reference = make_study(catalog, owner=olga, name="Reference")
    client = client_for(olga)
    manage = client.post(reverse("annotate:study_stopping_rules", kwargs={"study_id": reference.pk}),
                         {**BLANK_RULES, **posted}, follow=True)
    assert escape(message) in manage.content.decode()
    page = client.post(reverse("annotate:study_create"), page_data(catalog, **posted))
    assert page.status_code == 400 and escape(message) in page.content.decode()
    with pytest.raises(CommandError) as refused:
        call_command("create_study", *command_args(catalog, *args), stdout=StringIO())
    assert command_message in str(refused.value)
    assert list(Study.objects.values_list("name", flat=True)) == ["Reference"]
    assert not StoppingRules.objects.exists()


def test_a_post_without_any_rule_field_creates_the_study_without_rules(catalog, olga):
    # A client that never showed the fieldset (an older page, a script) sends none of its fields.
    data = {k: v for k, v in page_data(catalog).items() if k not in BLANK_RULES}
    response = client_for(olga).post(reverse("annotate:study_create"), data)
    assert response.status_code == 302
    assert Study.objects.filter(name="From the page").exists() and not StoppingRules.objects.exists()
    # A field sent blank is read as the manage page reads it: the test level is required.
    response = client_for(olga).post(reverse("annotate:study_create"),
                                     page_data(catalog, name="Blank level", alpha=""))
    assert "Stopping rules not saved: Test level α: This field is required." in response.content.decode()
    assert not Study.objects.filter(name="Blank level").exists()
