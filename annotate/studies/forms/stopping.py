"""The manage page's stopping-rule form and its cost field: parsing and field checks only."""
from __future__ import annotations

from decimal import Decimal

from django import forms
from django.http import QueryDict

from annotate.core import column_field, form_problems
from annotate.models import StoppingRules
from annotate.studies.selectors.stopping import method_labels


def _method_choices() -> list[tuple[str, str]]:
    return [("", "–"), *method_labels().items()]


class StoppingRulesForm(forms.Form):
    """(a) target reliability, (b) two methods and the test's level, (c) a budget; blank = rule not used."""

    target_reliability = column_field(
        StoppingRules, "target_reliability", required=False, min_value=Decimal("0.001"), max_value=Decimal("0.999"),
        label="Target reliability", help_text="SSR and split-half of the human scale, e.g. 0.8.",
    )
    #: How a service's message names the two methods (:func:`annotate.core.form_add_service_error`).
    service_words = {"method_a": "the first method to compare", "method_b": "the second method"}

    method_a = forms.ChoiceField(required=False, choices=_method_choices, label="Compare method")
    method_b = forms.ChoiceField(required=False, choices=_method_choices, label="with method")
    alpha = column_field(
        StoppingRules, "alpha", min_value=Decimal("0.001"), max_value=Decimal("0.999"), initial=Decimal("0.05"),
        label="Test level α", help_text="Anytime-valid sequential sign test.",
    )
    max_judgments = column_field(StoppingRules, "max_judgments", required=False, min_value=1,
                                 label="Budget in judgments")
    budget = column_field(StoppingRules, "budget", required=False, min_value=0, label="Budget in money")
    pay_per_judgment = column_field(StoppingRules, "pay_per_judgment", required=False, min_value=0,
                                    label="Pay per judgment")

    @classmethod
    def on_creation(cls, data: QueryDict | None) -> StoppingRulesForm:
        """The New-study page's rules form: a POST that carries none of the rules' fields (a client that never
        showed them) chooses no rule, at the default test level; any field sent is read as the manage page reads it.
        """
        if data is not None and not any(name in data for name in cls.base_fields):
            data = data.copy()
            data["alpha"] = str(cls.base_fields["alpha"].initial)
        return cls(data)


#: How a refused rules form is reported.
ERR_NOT_SAVED = "Stopping rules not saved: {problems}"


def stopping_form_problems(form: StoppingRulesForm) -> str:
    """Every field error of a bound, invalid rules form on one line (``ERR_NOT_SAVED``, ``Label: message; ...``).

    The manage page, the creation page and ``create_study`` report a refused
    rule with this line, so a bad value reads the same everywhere.
    """
    return ERR_NOT_SAVED.format(problems=form_problems(form))


class CostForm(forms.Form):
    """The pay per judgment at which the manage page prices its projections (GET)."""

    pay = column_field(StoppingRules, "pay_per_judgment", required=False, min_value=0, label="Pay per judgment")
