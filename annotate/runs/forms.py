"""Forms of the results pages: parsing and field checks only."""
from __future__ import annotations

from django import forms

from annotate.core import ShortEchoChoiceField
from annotate.models import Dataset, Subject

#: ``status`` choices of the question list: every question, EIP-kept ones, excluded ones.
STATUS_CHOICES = (("", "kept and excluded"), ("kept", "kept"), ("excluded", "excluded (all solved or all failed)"))
#: ``coverage`` choices: "low" = observed by fewer than the run's ``min_models`` models (flagged).
COVERAGE_CHOICES = (("", "any coverage"), ("low", "flagged: low coverage"), ("ok", "not flagged"))
DIRECTION_CHOICES = (("desc", "highest first"), ("asc", "lowest first"))


class QuestionFilterForm(forms.Form):
    """GET search, filters, sort and page of a run's question list.

    Choices are limited to the run's own datasets and subjects and to the
    sort keys given (the registry's question columns, see
    :func:`annotate.runs.selectors.results.question_sort_choices`). An unknown
    value is a form error (the list is then shown unfiltered, with the error).
    """

    q = forms.CharField(required=False, max_length=200, label="Search",
                        widget=forms.TextInput(attrs={"placeholder": "question id or text", "type": "search"}))
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.none(), required=False, empty_label="all datasets")
    subject = forms.ModelChoiceField(queryset=Subject.objects.none(), required=False, empty_label="all subjects")
    status = ShortEchoChoiceField(choices=STATUS_CHOICES, required=False, label="EIP status")
    coverage = ShortEchoChoiceField(choices=COVERAGE_CHOICES, required=False, label="Coverage")
    sort = ShortEchoChoiceField(choices=(), required=False, label="Sort by")
    direction = ShortEchoChoiceField(choices=DIRECTION_CHOICES, required=False, label="Order")

    def __init__(self, *args, datasets, subjects, sorts: list[tuple[str, str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = datasets
        self.fields["subject"].queryset = subjects
        self.fields["sort"].choices = sorts

    def clean_q(self) -> str:
        return self.cleaned_data["q"].strip()
