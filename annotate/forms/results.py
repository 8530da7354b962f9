"""Forms of the results pages: parsing and field checks only."""
from __future__ import annotations

from django import forms

from annotate.models import Dataset, Subject


class QuestionFilterForm(forms.Form):
    """GET filters of a run's question list; choices limited to the run's own
    datasets and subjects. An unknown value is a form error (the list is then
    shown unfiltered, with the error)."""

    dataset = forms.ModelChoiceField(queryset=Dataset.objects.none(), required=False, empty_label="all datasets")
    subject = forms.ModelChoiceField(queryset=Subject.objects.none(), required=False, empty_label="all subjects")

    def __init__(self, *args, datasets, subjects, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = datasets
        self.fields["subject"].queryset = subjects
