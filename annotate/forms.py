"""Forms for loading response sets (the admin upload page). Parsing and field checks only."""
from __future__ import annotations

import re

from django import forms

from annotate.models import ResponseSet

FORMAT_CHOICES = [
    ("auto", "detect from the file (JSON Lines by extension; long if it has model and credit columns)"),
    ("wide", "wide CSV: question id column, then one column per model"),
    ("long", "long CSV/TSV: one row per question and model"),
    ("jsonl", "JSON Lines: one object per question and model"),
]
BAD_COLUMN_LIST = "list column names separated by commas, e.g. src,mmlu_level"
BAD_TOKEN = "this upload is unknown or has expired; upload the files again"
_TOKEN = re.compile(r"^[0-9a-f]{32}$")


class ResponseUploadForm(forms.Form):
    """Files and options of an upload; the loaders check the contents."""

    responses = forms.FileField(label="Responses file")
    file_format = forms.ChoiceField(label="Format", choices=FORMAT_CHOICES, initial="auto")
    questions = forms.FileField(
        label="Questions file", required=False,
        help_text="optional CSV: question_id, subject column, question, options_json, answer, ...",
    )
    models = forms.FileField(label="Models file", required=False,
                             help_text="optional CSV: model, parameters_b or params_b_from_name, family, access")
    dataset = forms.CharField(max_length=200, required=False,
                              help_text="dataset name; required for a wide file (e.g. MMLU-Pro)")
    subject_column = forms.CharField(max_length=200, required=False,
                                     help_text="column holding the subject (MMLU-Pro: category); default 'subject'")
    keep_columns = forms.CharField(max_length=1000, required=False,
                                   help_text="comma-separated question columns to keep (e.g. src,mmlu_level)")
    id_column = forms.CharField(max_length=200, initial="question_id")
    name = forms.CharField(max_length=ResponseSet._meta.get_field("name").max_length, required=False,
                           help_text="response set name; default: the responses file name without extension")
    new_version = forms.BooleanField(label="Load as a new version", required=False,
                                     help_text="same name, version + 1; earlier versions are marked superseded")

    def clean_keep_columns(self) -> list[str]:
        raw = self.cleaned_data["keep_columns"]
        columns = [c.strip() for c in raw.split(",")] if raw.strip() else []
        if any(not c for c in columns):
            raise forms.ValidationError(BAD_COLUMN_LIST)
        return columns

    def clean_subject_column(self) -> str | None:
        return self.cleaned_data["subject_column"].strip() or None

    def clean_dataset(self) -> str | None:
        return self.cleaned_data["dataset"].strip() or None

    def clean_name(self) -> str | None:
        return self.cleaned_data["name"].strip() or None


class ConfirmLoadForm(forms.Form):
    """The confirmation of a previewed upload."""

    token = forms.CharField(widget=forms.HiddenInput, max_length=32)

    def clean_token(self) -> str:
        token = self.cleaned_data["token"]
        if not _TOKEN.match(token):
            raise forms.ValidationError(BAD_TOKEN)
        return token
