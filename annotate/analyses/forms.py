"""The analyses pages' parameter forms: one field per parameter of an analysis."""
from __future__ import annotations

from django import forms
from django.utils.text import capfirst

from annotate.analyses.services import NEEDS_RESPONSE_SET, SCALING_GRIDS, check_params, defaults
from annotate.analyses.services.human_labels import check_label, label_keys
from annotate.analyses.services.params import MARGIN_MAX, check_groups, check_param, int_bounds
from annotate.catalog import response_sets_loaded
from annotate.core import (
    ALPHA_HIGH,
    ALPHA_LOW,
    ShortEchoChoiceField,
    ShortEchoTypedChoiceField,
    form_add_service_error,
    label,
    service_error_text,
)
from annotate.reports import response_sets_human, scoring_runs_for_labels


def _label_choices(response_set=None) -> list[tuple[str, object]]:
    """The labels of ``response_set``: its question metadata columns (with type and coverage) and the human sets.

    Without a set, the columns of every loaded model set, one group per set.
    """
    sets = [response_set] if response_set is not None else list(response_sets_loaded().filter(is_human=False))
    groups: list[tuple[str, object]] = []
    for rs in sets:
        columns = [(f"metadata:{k.key}",
                    f"{k.key} (question metadata: {k.kind}, {k.n_labelled:,} of {k.n_questions:,} questions)")
                   for k in label_keys(response_set=rs)]
        groups.append((f"Question metadata columns of {rs}", columns or [("", "none: no numeric or level column")]))
    humans = [(f"human:{rs.pk}", f"{rs} (set {rs.pk}, people's answers)") for rs in response_sets_human()]
    # first a blank choice: with no column named like a difficulty the page preselects nothing, so the browser
    # does not preselect the first column (an answer position, an id) as if it were a label
    return [("", "choose a label"), *groups, ("Human response sets", humans or [("", "none loaded")])]


#: Labels of the integer parameters that are not the parameter's own label.
INT_LABELS = {"n_boot": "bootstrap replicates"}


def _run_choices(response_set=None) -> list[tuple[int, str]]:
    """The scoring run a label analysis reads: 0 (the set's newest finished run) or one finished run."""
    runs = scoring_runs_for_labels(response_set=response_set)
    named = [(run.pk, f"run {run.pk} of {run.response_set} (finished {run.finished_at:%Y-%m-%d %H:%M})"
              if run.finished_at else f"run {run.pk} of {run.response_set}") for run in runs]
    return [(0, "the newest finished run of the response set"), *named]


def _field(kind: str, name: str, response_set=None) -> forms.Field:
    if name == "run":
        return ShortEchoTypedChoiceField(choices=_run_choices(response_set), coerce=int, label="scoring run",
                                         help_text="whose methods are compared with the label")
    bounds = int_bounds(kind, name)
    if bounds is not None:  # the service's range, so a refused value is an error of its own field
        return forms.IntegerField(min_value=bounds[0], max_value=bounds[1],
                                  label=INT_LABELS.get(name, label(name, "param")))
    if name == "alpha":
        return forms.FloatField(min_value=ALPHA_LOW, max_value=ALPHA_HIGH, label="damping factor α (EIP)",
                                help_text="in (0, 1)")
    if name in ("skip_irt", "include_excluded"):
        return forms.BooleanField(required=False, label=label(name, "param"))
    if name == "grid":
        return ShortEchoChoiceField(choices=[(g, f"{g} (up to {max(q for q, _ in s):,} x {max(m for _, m in s):,})")
                                          for g, s in SCALING_GRIDS.items()])
    if name == "density_model":
        return ShortEchoChoiceField(choices=[("1pl", "1PL"), ("uniform", "uniform")], label="density model")
    if name == "group_by":
        return forms.CharField(max_length=120, label="group by",
                               help_text="dataset, subject, or metadata:KEY (KEY = a question metadata column)")
    if name == "label":
        return ShortEchoChoiceField(choices=_label_choices(response_set), label="human label",
                                    help_text="a question metadata column of the response set (type and coverage), "
                                              "or a response set of people's answers; a column is preselected "
                                              "only when its name says difficulty (level, difficulty, grade, "
                                              "...) and not answer, option or id")
    if name == "label_higher_is_harder":
        return ShortEchoTypedChoiceField(
            choices=[(True, "higher = harder (a level, a difficulty)"),
                     (False, "higher = easier (a solve rate)")],
            coerce=lambda v: v in (True, "True"), widget=forms.RadioSelect, label="label direction",
            help_text="for a metadata column; a human response set is read as a difficulty")
    if name == "margin":
        return forms.FloatField(min_value=0.0, max_value=MARGIN_MAX, label="label margin",
                                help_text="pairs also counted only when their labels differ by more than this")
    if name == "human_method":
        return ShortEchoChoiceField(choices=[("accuracy", "solve rate"), ("irt_1pl", "1PL")],
                                    label="human difficulty")
    raise ValueError(f"no form field for the {kind} parameter {name!r}")


def _param_cleaner(kind: str, name: str):
    """The service's check of one parameter, so a bad value is an error of its own field, in the form's words."""
    def clean_param(self):
        value = self.cleaned_data[name]
        try:
            check_param(kind, name, value)
        except ValueError as exc:
            raise forms.ValidationError(service_error_text(self, exc)) from None
        return value
    return clean_param


def analysis_form_class(kind: str, *, response_set=None) -> type[forms.Form]:
    """A form with a response-set choice (for analyses of stored data) and one
    field per parameter of ``kind``; ``clean`` runs the service's checks.

    ``response_set`` is the set the page is about: a human-label form offers
    only its metadata columns (every loaded set's when None)."""
    fields: dict[str, object] = {}
    if kind in NEEDS_RESPONSE_SET:
        loaded = response_sets_loaded()
        fields["response_set"] = forms.ModelChoiceField(
            queryset=loaded.filter(is_human=False) if kind == "human_labels" else loaded,
            label="Response set")
    params = defaults(kind)
    for name in params:
        fields[name] = field = _field(kind, name, response_set)
        if field.label:
            field.label = capfirst(field.label)
        fields[f"clean_{name}"] = _param_cleaner(kind, name)

    def clean(self):
        data = super(form_class, self).clean()
        if not self.errors:
            try:
                data["params"] = check_params(kind, {k: data[k] for k in params})
                check_groups(kind, response_set=data.get("response_set"), params=data["params"])
                if kind == "human_labels" and data.get("response_set") is not None:
                    check_label(response_set=data["response_set"], label=data["params"]["label"])
            except ValueError as exc:
                form_add_service_error(self, exc)
        return data

    form_class = type(f"{kind.title()}Form", (forms.Form,), {**fields, "clean": clean})
    return form_class
