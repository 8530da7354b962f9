"""Every number a form accepts fits the column it is stored in: each integer
or decimal field of each form of the site is bounded (its model field's
digits, places and integer range when it is stored), and refuses one unit or
one digit beyond, 1e309, NaN, infinities and huge integers with an error of
that field; a signed zero is zero."""
from __future__ import annotations

import importlib
import pkgutil
from decimal import Decimal

import pytest
from django import forms
from django.core.exceptions import ValidationError
from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations

import annotate
from annotate.core.forms import COLUMN_ATTR, column_field
from annotate.models import StoppingRules, Study

NOT_NUMBERS = ("1e309", "-1e309", "NaN", "nan", "Infinity", "-inf", "sNaN", "abc", "1e99999999999")
HUGE = ("99999999999999999999", str(2**63), str(2**64 + 1), "9" * 400)


def _forms() -> list[type[forms.Form]]:
    """Every ``forms.Form`` subclass defined in a module of ``annotate``."""
    for module in pkgutil.walk_packages(annotate.__path__, "annotate."):
        if "forms" in module.name.split("."):
            importlib.import_module(module.name)
    found, todo = [], [forms.Form]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("annotate."):
            found.append(cls)
    return sorted(found, key=lambda c: f"{c.__module__}.{c.__qualname__}")


NUMBER_FIELDS = [(f"{form.__qualname__}.{name}", field) for form in _forms()
                 for name, field in form.base_fields.items()
                 if isinstance(field, forms.IntegerField)]  # FloatField and DecimalField are IntegerFields


def test_the_forms_found_include_the_study_and_stopping_forms():
    names = {name for name, _ in NUMBER_FIELDS}
    assert {"StudyForm.n_pairs", "StudyForm.seed", "StoppingRulesForm.budget", "StoppingRulesForm.pay_per_judgment",
            "StoppingRulesForm.max_judgments", "CostForm.pay", "StudyQualitySettingsForm.completion_min_votes",
            "StudyForm.speeder_seconds"} <= names


def _refused(field: forms.Field, value: str) -> bool:
    try:
        field.clean(value)
    except ValidationError:
        return True
    return False


def _largest(field: forms.Field) -> Decimal | int:
    """The largest value ``field`` accepts: its maximum, or all nines in its digits and places."""
    if isinstance(field, forms.DecimalField):
        places = field.decimal_places
        nines = Decimal(10) ** (field.max_digits - places) - Decimal(1).scaleb(-places)
        return nines if field.max_value is None else min(nines, Decimal(field.max_value))
    return field.max_value


@pytest.mark.parametrize(("where", "field"), NUMBER_FIELDS, ids=[n for n, _ in NUMBER_FIELDS])
def test_a_number_field_refuses_what_its_column_cannot_hold(where, field):
    for value in NOT_NUMBERS:
        assert _refused(field, value), f"{where} accepts {value!r}"
    if isinstance(field, forms.FloatField):  # forms.FloatField is an IntegerField
        return  # a float column holds every finite double, and the field refuses the rest
    for value in HUGE:
        assert _refused(field, value), f"{where} accepts {value[:30]!r}"
    if isinstance(field, forms.DecimalField):
        assert field.max_digits is not None and field.decimal_places is not None, f"{where} has no digit limit"
        unit = Decimal(1).scaleb(-field.decimal_places)
    else:
        assert field.max_value is not None and field.min_value is not None, f"{where} has no range"
        unit = 1
    largest = _largest(field)
    assert field.clean(str(largest)) == largest
    assert _refused(field, str(largest + unit)), f"{where} accepts one unit above {largest}"
    assert _refused(field, str(largest * 10 + 9)), f"{where} accepts one digit more than {largest}"
    if field.min_value is None or field.min_value <= 0:
        zero = field.clean("-0")
        assert zero == 0 and not Decimal(zero).is_signed(), f"{where} keeps the sign of -0"
    else:
        assert _refused(field, "-0")
    column = getattr(field, COLUMN_ATTR, None)
    if column is not None:  # what the form accepts, the model field takes
        column.run_validators(column.to_python(largest))
        if field.min_value is not None:
            column.run_validators(column.to_python(field.min_value))
        if isinstance(column, models.DecimalField):
            assert field.max_digits <= column.max_digits and field.decimal_places <= column.decimal_places
        else:
            low, high = BaseDatabaseOperations.integer_field_ranges[column.get_internal_type()]
            assert low <= field.min_value and field.max_value <= high


def test_the_stored_fields_of_the_study_and_stopping_forms_are_bound_to_their_columns():
    from annotate.studies.forms.stopping import CostForm, StoppingRulesForm
    from annotate.studies.forms.studies import StudyForm
    bound = {(form.__name__, name): getattr(field, COLUMN_ATTR, None)
             for form in (StudyForm, StoppingRulesForm, CostForm) for name, field in form.base_fields.items()
             if isinstance(field, forms.IntegerField) and not isinstance(field, forms.FloatField)}
    assert bound == {
        ("StudyForm", "n_pairs"): Study._meta.get_field("n_pairs"),
        ("StudyForm", "adaptive_min_comparisons"): Study._meta.get_field("adaptive_min_comparisons"),
        ("StudyForm", "target_judgments_per_pair"): Study._meta.get_field("target_judgments_per_pair"),
        ("StudyForm", "seed"): Study._meta.get_field("seed"),
        **{("StoppingRulesForm", name): StoppingRules._meta.get_field(name)
           for name in ("target_reliability", "alpha", "max_judgments", "budget", "pay_per_judgment")},
        ("CostForm", "pay"): StoppingRules._meta.get_field("pay_per_judgment"),
    }


def test_column_field_takes_the_narrower_of_the_given_and_the_column_limits():
    money = column_field(StoppingRules, "budget", min_value=0, decimal_places=4)
    assert (money.max_digits, money.decimal_places) == (12, 2)
    count = column_field(Study, "n_pairs", min_value=1, max_value=10**12)
    assert (count.min_value, count.max_value) == (1, 2**31 - 1)
    seed = column_field(Study, "seed")
    assert (seed.min_value, seed.max_value) == (-(2**63), 2**63 - 1)
    with pytest.raises(TypeError, match=r"Study\.name is not a number field"):
        column_field(Study, "name")
