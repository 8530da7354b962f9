"""A number beyond what its column holds, posted on the New-study page, the
manage page's stopping rules or its ``?pay=``, or in an imported file, gets a
clear error of that field and writes nothing; the manage page and the admin
delete page still render, also for a money rule stored beyond its digits
before the forms checked them (migration 0024 drops it)."""
from __future__ import annotations

from decimal import Decimal, InvalidOperation

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse
from django.utils.html import escape

from annotate.models import Participation, StoppingRules, Study
from annotate.studies.services.judgment_import import SECONDS_MAX, ImportFile, JudgmentImportError, judgments_import
from annotate.studies.services.stopping import StoppingInput, stopping_rules_set
from tests.annotate.factories import client_for, make_study
from tests.annotate.studies.test_judgment_import import (
    _csv,
    run as run,  # the fixture
)
from tests.annotate.studies.test_stopping_at_creation import BLANK_RULES, page_data

DIGITS_12 = "Ensure that there are no more than 12 digits in total."
BEFORE_POINT_10 = "Ensure that there are no more than 10 digits before the decimal point."
BEFORE_POINT_6 = "Ensure that there are no more than 6 digits before the decimal point."
DIGITS_8 = "Ensure that there are no more than 8 digits in total."
INT_MAX = "Ensure this value is less than or equal to 2147483647."
# Posted rules, and the message the page shows for them.
TOO_LARGE = {
    "budget 10^10 at pay 0.5": ({"budget": "10000000000", "pay_per_judgment": "0.5"},
                                f"Budget in money: {BEFORE_POINT_10}"),
    "pay 10^6": ({"pay_per_judgment": "1000000"}, f"Pay per judgment: {BEFORE_POINT_6}"),
    "budget of 20 nines": ({"budget": "9" * 20, "pay_per_judgment": "1"}, f"Budget in money: {DIGITS_12}"),
    "budget and pay 1e309": ({"budget": "1e309", "pay_per_judgment": "1e309"},
                             f"Budget in money: {DIGITS_12}; Pay per judgment: {DIGITS_8}"),
    "judgments of 20 nines": ({"max_judgments": "9" * 20}, f"Budget in judgments: {INT_MAX}"),
    "judgments 2^31": ({"max_judgments": str(2**31)}, f"Budget in judgments: {INT_MAX}"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", list(TOO_LARGE))
def test_the_new_study_page_refuses_a_rule_beyond_its_column_and_writes_nothing(catalog, olga, case):
    posted, message = TOO_LARGE[case]
    page = client_for(olga).post(reverse("annotate:study_create"), page_data(catalog, **posted))
    assert page.status_code == 400
    assert escape(f"Stopping rules not saved: {message}") in page.content.decode()
    assert not Study.objects.exists() and not StoppingRules.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("case", list(TOO_LARGE))
def test_the_manage_page_refuses_a_rule_beyond_its_column_and_still_renders(catalog, olga, case):
    posted, message = TOO_LARGE[case]
    study = make_study(catalog, owner=olga)
    stopping_rules_set(study=study, values=StoppingInput(alpha=Decimal("0.05"), max_judgments=40))
    before = list(StoppingRules.objects.values())
    page = client_for(olga).post(reverse("annotate:study_stopping_rules", kwargs={"study_id": study.pk}),
                                 {**BLANK_RULES, **posted}, follow=True)
    assert page.status_code == 400
    assert escape(f"Stopping rules not saved: {message}") in page.content.decode()
    assert "Stopping rules saved." not in page.content.decode()
    assert list(StoppingRules.objects.values()) == before


@pytest.mark.django_db
def test_the_largest_money_rule_is_stored_and_the_manage_page_prices_it(catalog, olga):
    study = make_study(catalog, owner=olga)
    client = client_for(olga)
    url = reverse("annotate:study_stopping_rules", kwargs={"study_id": study.pk})
    page = client.post(url, {**BLANK_RULES, "budget": "9999999999.99", "pay_per_judgment": "999999.99"},
                       follow=True)
    assert page.status_code == 200 and "Stopping rules saved." in page.content.decode()
    rules = StoppingRules.objects.get(study=study)
    assert (rules.budget, rules.pay_per_judgment) == (Decimal("9999999999.99"), Decimal("999999.99"))


PAY_REFUSED = {
    "1e309": DIGITS_8, "-5": "Ensure this value is greater than or equal to 0.", "abc": "Enter a number.",
    "NaN": "Enter a number.", "Infinity": "Enter a number.", "0.001": "Ensure that there are no more than 2 "
    "decimal places.", "1000000": BEFORE_POINT_6,
}


@pytest.mark.django_db
@pytest.mark.parametrize("pay", list(PAY_REFUSED))
def test_a_pay_the_column_cannot_hold_is_named_on_the_manage_page(catalog, olga, pay):
    study = make_study(catalog, owner=olga)
    stopping_rules_set(study=study, values=StoppingInput(alpha=Decimal("0.05"), max_judgments=40,
                                                         pay_per_judgment=Decimal("0.25")))
    page = client_for(olga).get(reverse("annotate:study_manage", kwargs={"study_id": study.pk}), {"pay": pay})
    assert page.status_code == 400
    html = page.content.decode()
    error = html.split('id="cost-form-error"')[1].split("</p>")[0]
    assert escape(PAY_REFUSED[pay]) in error and "Pay per judgment" in error
    assert "the costs below are at this pay" not in html


@pytest.mark.django_db
@pytest.mark.parametrize("pay", ["-0", "-0.00", "0.5"])
def test_a_pay_the_column_holds_prices_the_projections_without_a_sign_on_zero(catalog, olga, pay):
    study = make_study(catalog, owner=olga)
    stopping_rules_set(study=study, values=StoppingInput(alpha=Decimal("0.05"), max_judgments=40))
    page = client_for(olga).get(reverse("annotate:study_manage", kwargs={"study_id": study.pk}), {"pay": pay})
    html = page.content.decode()
    assert page.status_code == 200 and 'id="cost-form-error"' not in html
    cost = html.split('id="cost-budget"')[1].split("</td>")[0]
    assert ("-0" not in cost) and (Decimal(pay) * 40 == Decimal(cost.split(">", 1)[1].strip().replace(",", "")))


# --- judgments made elsewhere: seconds --------------------------------------------------------------------

def _import_with_seconds(run, seconds: str, submitted_at: str = "2026-11-01T10:00:00Z"):
    rows = [line.split(",") for line in _csv().decode().splitlines()]
    rows[2][7], rows[2][8] = seconds, submitted_at  # row 3 of the file
    data = ("\n".join(",".join(r) for r in rows) + "\n").encode()
    return judgments_import(files=[ImportFile("judgments.csv", data, "csv")], run=run, name="limits")


@pytest.mark.django_db
@pytest.mark.parametrize(("seconds", "submitted_at", "column", "message"), [
    ("99999999999999999999", "2026-11-01T10:00:00Z", "seconds",
     f"'99999999999999999999' is more than {SECONDS_MAX:,} seconds"),
    (str(SECONDS_MAX + 1), "2026-11-01T10:00:00Z", "seconds", f"'{SECONDS_MAX + 1}' is more than {SECONDS_MAX:,} "
                                                              "seconds"),
    ("1e309", "2026-11-01T10:00:00Z", "seconds", "'1e309' is not a number >= 0"),
    ("NaN", "2026-11-01T10:00:00Z", "seconds", "'NaN' is not a number >= 0"),
    ("60", "0001-01-01T00:00:30Z", "submitted_at",
     "'60' seconds before submitted_at '0001-01-01T00:00:30Z' is before the year 1"),
    ("0", "0001-01-01T00:00:00+05:00", "submitted_at",
     "'0' seconds before submitted_at '0001-01-01T00:00:00+05:00' is before the year 1"),
])
def test_imported_seconds_beyond_a_year_or_before_the_year_1_are_named_and_nothing_is_written(
        run, seconds, submitted_at, column, message):
    with pytest.raises(JudgmentImportError) as info:
        _import_with_seconds(run, seconds, submitted_at)
    assert info.value.problems == [f"judgments.csv, row 3, column {column}: {message}"]
    assert Study.objects.count() == 0 and Participation.objects.count() == 0


@pytest.mark.django_db
def test_imported_seconds_of_a_year_are_stored(run):
    study = _import_with_seconds(run, str(SECONDS_MAX))
    assert max(study.pairs.values_list("judgments__seconds", flat=True)) == SECONDS_MAX


# --- a money rule stored beyond its digits before the forms checked them ------------------------------------

@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "sqlite", reason="PostgreSQL's numeric(12, 2) never stored such a value")
def test_a_money_rule_stored_beyond_its_digits_is_dropped_and_the_pages_render(catalog, olga):
    keep = make_study(catalog, owner=olga, name="in range")
    stopping_rules_set(study=keep, values=StoppingInput(alpha=Decimal("0.05"), budget=Decimal("9999999999.99"),
                                                        pay_per_judgment=Decimal("999999.99")))
    broken = {}
    for name, budget, pay in (("budget 1e10", "1e10", "0.5"), ("pay 1e6", "10", "1000000"),
                              ("budget inf", "1e309", "1"), ("both huge", "1e20", "1e20")):
        study = make_study(catalog, owner=olga, name=name)
        stopping_rules_set(study=study, values=StoppingInput(alpha=Decimal("0.05"), max_judgments=40))
        with connection.cursor() as cursor:  # as the old forms let the service store it
            cursor.execute("UPDATE annotate_stoppingrules SET budget = %s, pay_per_judgment = %s WHERE study_id = %s",
                           [budget, pay, study.pk])
        broken[name] = study
    for study in broken.values():  # what made the manage page and the admin delete page fail
        with pytest.raises(InvalidOperation):
            StoppingRules.objects.get(study=study)
    executor = MigrationExecutor(connection)
    executor.migrate([("annotate", "0023_participation_is_simulated")])
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([("annotate", "0024_stopping_money_in_range")])
    kept = StoppingRules.objects.get(study=keep)
    assert (kept.budget, kept.pay_per_judgment) == (Decimal("9999999999.99"), Decimal("999999.99"))
    admin = client_for(get_user_model().objects.create_superuser("root", password="x" * 12))
    for study in broken.values():
        rules = StoppingRules.objects.get(study=study)
        assert (rules.budget, rules.pay_per_judgment, rules.max_judgments) == (None, None, 40)
        page = client_for(olga).get(reverse("annotate:study_manage", kwargs={"study_id": study.pk}))
        assert page.status_code == 200 and 'id="stopping-table"' in page.content.decode()
        delete = admin.get(reverse("admin:annotate_study_delete", args=[study.pk]))
        assert delete.status_code == 200 and str(rules) in delete.content.decode()


@pytest.mark.django_db
def test_an_imported_time_without_offset_is_read_as_utc(run):
    study = _import_with_seconds(run, "30", "2026-11-02T08:00:00")
    judgment = Participation.objects.get(study=study, platform_participant_id="c1").judgments.order_by("pk")[1]
    assert judgment.submitted_at.isoformat() == "2026-11-02T08:00:00+00:00"
    assert judgment.shown_at.isoformat() == "2026-11-02T07:59:30+00:00"
