"""Forms for loading response sets (the admin upload page). Parsing and field checks only."""
from __future__ import annotations

import re
from pathlib import Path

from django import forms
from django.conf import settings

from annotate.catalog.loaders.harness import FORMATS as LOG_FORMATS
from annotate.catalog.loaders.tabular import FORMATS as _TABULAR_AND_AUTO
from annotate.core import ShortEchoChoiceField, ShortEchoMultipleChoiceField
from annotate.models import LanguageModel, ResponseSet, TextFormat
from scoring.methods import methods as registered_methods

ALPHA_RANGE = "alpha must be strictly between 0 and 1"

TABULAR_FORMATS = tuple(f for f in _TABULAR_AND_AUTO if f != "auto")
FORMAT_CHOICES = [
    ("auto", "detect from the files"),
    ("Tabular files", [
        ("wide", "wide CSV: question id column, then one column per model"),
        ("long", "long CSV/TSV: one row per question and model"),
        ("jsonl", "JSON Lines: one object per question and model"),
    ]),
    ("Evaluation-harness logs", [
        ("lm-eval", "lm-evaluation-harness --log_samples (results_*.json + samples_*.jsonl)"),
        ("inspect", "Inspect AI logs (.eval or .json)"),
        ("helm", "HELM run folders (per_instance_stats.json + run_spec.json)"),
        ("opencompass", "OpenCompass results/ with evaluation details"),
    ]),
]
BAD_COLUMN_LIST = "list column names separated by commas, e.g. src,mmlu_level"
BAD_TOKEN = "this upload is unknown or has expired; upload the files again"
RESPONSES_OR_LOGS = "give either a responses file or harness logs, not both"
NOTHING_UPLOADED = "give a responses file or harness logs"
NOT_FOR_LOGS = "{field} is for a responses file; harness logs carry their own questions and models"
LOGS_ONLY = "{field} applies to harness logs only"
WRONG_FORMAT = "{value} is a {kind} format; it cannot read {what}"
FILTER_LM_EVAL_ONLY = "the filter applies to lm-eval logs only; this upload is {value}"
SAME_FILE_NAME = "two files are named {name!r}; upload a .zip of the folder instead (it keeps the folders apart)"
_TOKEN = re.compile(r"^[0-9a-f]{32}$")
TEXT_FORMAT_CHOICES = [("", "as suggested from the texts (the preview shows it)"), *TextFormat.choices]
TEXT_FORMAT_HELP = ("how the new datasets' questions are written: plain text is shown exactly as written, "
                    "only math between $...$, $$...$$, \\(...\\) or \\[...\\] typeset; Markdown is formatted "
                    "(its * _ # ` characters are not shown). Existing datasets keep theirs; change it later "
                    "on the dataset's admin page")


def text_format_field() -> forms.ChoiceField:
    """The text format of the datasets an upload creates (blank: as suggested)."""
    return ShortEchoChoiceField(label="Question text format", choices=TEXT_FORMAT_CHOICES, required=False,
                                help_text=TEXT_FORMAT_HELP)


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """A file input that takes several files; cleans to a list (empty when none)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None) -> list:
        if isinstance(data, (list, tuple)):
            files = [super(MultipleFileField, self).clean(item, initial) for item in data if item]
        else:
            files = [super().clean(data, initial)] if data else []
        if self.required and not files:
            raise forms.ValidationError(self.error_messages["required"], code="required")
        return files


class ResponseUploadForm(forms.Form):
    """Files and options of an upload: one tabular responses file (with optional
    question and model files) or harness logs (several files and/or .zip
    archives of log folders). The loaders check the contents."""

    responses = forms.FileField(label="Responses file", required=False,
                                help_text="wide CSV, long CSV/TSV or JSON Lines")
    logs = MultipleFileField(
        label="Harness logs", required=False,
        help_text=f"evaluation-harness log files (select up to {settings.DATA_UPLOAD_MAX_NUMBER_FILES} at once) "
                  "and/or .zip archives of log folders (lm-eval: a folder per model; HELM: run folders with "
                  "schema.json); files of the same name in several folders need a .zip",
    )
    file_format = ShortEchoChoiceField(label="Format", choices=FORMAT_CHOICES, initial="auto",
                                       help_text="auto: JSON Lines by extension, long if it has model and credit "
                                              "columns; for logs, the harness is recognised from the files")
    questions = forms.FileField(
        label="Questions file", required=False,
        help_text="optional CSV: question_id, subject column, question, options_json, answer, ...",
    )
    models = forms.FileField(label="Models file", required=False,
                             help_text="optional CSV: model, parameters_b or params_b_from_name, family, access")
    dataset = forms.CharField(max_length=200, required=False,
                              help_text="dataset name; required for a wide file (e.g. MMLU-Pro); for logs, "
                                        "default the task group or task")
    subject_column = forms.CharField(max_length=200, required=False,
                                     help_text="column holding the subject (MMLU-Pro: category); default 'subject'")
    keep_columns = forms.CharField(max_length=1000, required=False,
                                   help_text="comma-separated question columns to keep (e.g. src,mmlu_level)")
    id_column = forms.CharField(max_length=200, required=False, initial="question_id",
                                help_text="question id column of a responses file; default question_id")
    model_column = forms.CharField(label="Model name column", max_length=200, required=False, initial="model",
                                   help_text="the models file's column holding the names the responses file uses "
                                             "(LiveCodeBench: model_repr); default model")
    metric = forms.CharField(max_length=200, required=False,
                             help_text="logs: the score to read when a log has several (lm-eval metric, Inspect "
                                       "scorer, HELM stat, OpenCompass key); default the task's primary metric")
    log_filter = forms.CharField(label="Filter", max_length=200, required=False,
                                 help_text="lm-eval logs: the filter to read when several were logged "
                                           "(e.g. strict-match); default the first in the task's filter_list")
    skip_invalid = forms.BooleanField(
        label="Skip values that are not scores", required=False,
        help_text="logs: skip null, pairs and dicts (the summary counts them) instead of refusing the upload",
    )
    newest_run = forms.BooleanField(
        label="Keep the newest run", required=False,
        help_text="logs: a sample logged by several runs with different scores takes the newest run's score "
                  "instead of refusing the upload (identical copies always count once)",
    )
    merge_case_variants = forms.BooleanField(
        label="Merge names that differ only by case", required=False,
        help_text="load GPT-4 and gpt-4 (models, datasets, subjects, question ids) as one, keeping the stored "
                  "spelling or the first in the upload, instead of refusing the upload",
    )
    text_format = text_format_field()
    name = forms.CharField(max_length=ResponseSet._meta.get_field("name").max_length, required=False,
                           help_text="response set name; default: the responses file name (or the first log "
                                     "file or .zip name) without extension")
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

    def clean_id_column(self) -> str:
        return self.cleaned_data["id_column"].strip() or "question_id"

    def clean_model_column(self) -> str:
        return self.cleaned_data["model_column"].strip() or "model"

    def clean_metric(self) -> str | None:
        return self.cleaned_data["metric"].strip() or None

    def clean_log_filter(self) -> str | None:
        return self.cleaned_data["log_filter"].strip() or None

    def clean_logs(self) -> list:
        files = self.cleaned_data["logs"]
        seen: set[str] = set()
        for upload in files:
            name = Path(upload.name).name
            if name in seen:
                raise forms.ValidationError(SAME_FILE_NAME.format(name=name))
            seen.add(name)
        return files

    def clean(self) -> dict:
        data = super().clean()
        responses, logs, file_format = data.get("responses"), data.get("logs") or [], data.get("file_format")
        if responses and logs:
            raise forms.ValidationError(RESPONSES_OR_LOGS)
        if not responses and not logs:
            if "logs" not in self.errors and "responses" not in self.errors:
                raise forms.ValidationError(NOTHING_UPLOADED)
            return data
        if logs:
            for field in ("questions", "models", "subject_column", "keep_columns"):
                if data.get(field):
                    self.add_error(field, NOT_FOR_LOGS.format(field=self[field].label))
            if file_format in TABULAR_FORMATS:
                self.add_error("file_format", WRONG_FORMAT.format(value=file_format, kind="tabular",
                                                                  what="harness logs"))
            elif file_format not in (None, "auto", "lm-eval") and data.get("log_filter"):
                self.add_error("log_filter", FILTER_LM_EVAL_ONLY.format(value=file_format))
        else:
            for field in ("metric", "log_filter", "skip_invalid", "newest_run"):
                if data.get(field):
                    self.add_error(field, LOGS_ONLY.format(field=self[field].label))
            if file_format in LOG_FORMATS:
                self.add_error("file_format", WRONG_FORMAT.format(value=file_format, kind="harness-log",
                                                                  what="a responses file"))
        return data


class ConfirmLoadForm(forms.Form):
    """The confirmation of a previewed upload."""

    token = forms.CharField(widget=forms.HiddenInput, max_length=32)
    text_format = text_format_field()

    def clean_token(self) -> str:
        token = self.cleaned_data["token"]
        if not _TOKEN.match(token):
            raise forms.ValidationError(BAD_TOKEN)
        return token


class ScoreNowForm(forms.Form):
    """Start a scoring run on a freshly loaded response set: methods, EIP damping, models."""

    methods = ShortEchoMultipleChoiceField(
        choices=(), required=False, widget=forms.CheckboxSelectMultiple,
        help_text="the required methods always run")
    alpha = forms.FloatField(label="Damping alpha", initial=0.85, min_value=0.0, max_value=1.0,
                             help_text="EIP damping factor, in (0, 1)")
    models = forms.ModelMultipleChoiceField(queryset=LanguageModel.objects.none(), required=False,
                                            help_text="none selected: every model of the set")

    def __init__(self, *args, models_queryset=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["methods"].choices = [(m.key, m.label) for m in registered_methods()]
        self.fields["methods"].initial = [m.key for m in registered_methods()]
        if models_queryset is not None:
            self.fields["models"].queryset = models_queryset

    def clean_alpha(self) -> float:
        alpha = self.cleaned_data["alpha"]
        if not 0.0 < alpha < 1.0:
            raise forms.ValidationError(ALPHA_RANGE)
        return alpha

    def clean_methods(self) -> list[str]:
        chosen = set(self.cleaned_data["methods"]) | {m.key for m in registered_methods() if m.required}
        return [m.key for m in registered_methods() if m.key in chosen]
