"""The alignment report's parameters (page, downloads and the pools button)."""
from __future__ import annotations

from django import forms

from annotate.core import TIE_RULE_LABELS, ShortEchoChoiceField, ShortEchoTypedChoiceField

#: Characters of a refused value repeated on the refusal page.
VALUE_ECHO = 40
ERR_RUN_CHOICE = ("run {value} is not one the report can use: pick a finished run that scores every question "
                  "of the study's pairs")


class ReportParamsForm(forms.Form):
    """``run`` is a select of the runs given (see
    :func:`annotate.runs.selectors.scoring.study_report_runs`); blank = the
    study's own run. An id not among them is a form error."""

    run = ShortEchoTypedChoiceField(required=False, coerce=int, empty_value=None, label="Scoring run",
                                    error_messages={"invalid_choice": ERR_RUN_CHOICE.format(value="%(value)s")})
    min_votes = forms.IntegerField(required=False, min_value=1, max_value=1000, initial=1,
                                   label="Min. votes per pair")
    tie_rule = ShortEchoChoiceField(required=False, choices=list(TIE_RULE_LABELS.items()), label="Tie rule")
    n_boot = forms.IntegerField(required=False, min_value=1, max_value=20000, initial=2000,
                                label="Bootstrap resamples")
    crowd = forms.BooleanField(required=False, label="Judges weighted by reliability",
                               help_text="Adds a section: each evaluator's reliability (crowd Bradley-Terry), every "
                                         "method unweighted and weighted.")

    def __init__(self, *args, runs: list[tuple[int, str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["run"].choices = [("", "the study's run"), *runs]

    def accepted(self, name: str) -> str:
        """What the query string's ``name`` accepts, in words (for the refusal page of a bad value)."""
        field = self.fields[name]
        if isinstance(field, forms.IntegerField):
            return f"a whole number from {field.min_value} to {field.max_value}, or nothing for {field.initial}"
        if isinstance(field, forms.ChoiceField):
            values = [str(value) for value, _ in field.choices if value != ""]
            blank = " (or nothing for the study's run)" if name == "run" else " (or nothing for the default)"
            return ("one of " + ", ".join(values) if values else "no value: this study has no other run") + blank
        return "any value (true unless false, 0 or nothing)"

    def refusals(self) -> list[str]:
        """One sentence for each refused parameter: which one, the value given, why, and what it accepts."""
        reasons = []
        for name, errors in self.errors.items():
            if name not in self.fields:
                reasons.append(" ".join(errors))
                continue
            value = str(self.data.get(name, ""))
            shown = value if len(value) <= VALUE_ECHO else value[:VALUE_ECHO] + "\u2026"
            reasons.append(f"{self.fields[name].label} (?{name}={shown!r}): {' '.join(errors)} "
                           f"Accepted: {self.accepted(name)}.")
        return reasons
