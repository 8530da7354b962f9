"""The browser form of a judgment import: a run, a name, and up to four files, each with its group."""
from __future__ import annotations

from django import forms

from annotate.core import sentence_start
from annotate.models import ScoringRun
from annotate.studies.forms.studies import RunChoiceField
from annotate.studies.selectors.study_scope import scoring_runs_finished
from annotate.studies.services.judgment_import import GROUP_MAX_CHARS, import_file_read

#: How many files one browser import takes (e.g. one Label Studio export per group).
FILE_SLOTS = 4
FORMAT_LABELS = {"": "From the file name (.csv, .jsonl, .json = Label Studio)", "csv": "CSV",
                 "jsonl": "JSON Lines", "label-studio": "Label Studio JSON export (pairwise project)"}
ERR_NO_FILE = "Choose at least one file."
ERR_GROUP_WITHOUT_FILE = "A group is given here but no file."


class JudgmentImportForm(forms.Form):
    """Files of pairwise judgments made elsewhere, and the run whose methods the report compares."""

    run = RunChoiceField(queryset=ScoringRun.objects.none(), label="Scoring run to compare",
                         empty_label="Choose a finished run…",
                         help_text="Its questions are the ones the files may name; its methods are what the report "
                                   "compares with the judgments.")
    name = forms.CharField(max_length=200, label="Study name")
    format = forms.ChoiceField(choices=list(FORMAT_LABELS.items()), required=False, label="Format",
                               help_text="The same for every file.")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["run"].queryset = scoring_runs_finished()
        for k in range(1, FILE_SLOTS + 1):
            self.fields[f"file_{k}"] = forms.FileField(required=False, label=f"File {k}")
            self.fields[f"group_{k}"] = forms.CharField(
                required=False, max_length=GROUP_MAX_CHARS, label="Group",
                help_text="e.g. crowd, experts, LLM judge")

    def slots(self) -> list[tuple[forms.BoundField, forms.BoundField]]:
        """(file, group) bound fields in order, for the template."""
        return [(self[f"file_{k}"], self[f"group_{k}"]) for k in range(1, FILE_SLOTS + 1)]

    def clean(self) -> dict:
        data = super().clean()
        files = []
        for k in range(1, FILE_SLOTS + 1):
            upload, group = data.get(f"file_{k}"), (data.get(f"group_{k}") or "").strip()
            if upload is None:
                if group:
                    self.add_error(f"group_{k}", ERR_GROUP_WITHOUT_FILE)
                continue
            try:
                files.append(import_file_read(name=str(upload.name), size=upload.size, read=upload.read,
                                              format=data.get("format") or None, group=group))
            except ValueError as error:
                self.add_error(f"file_{k}", f"{sentence_start(str(error))}.")  # the file's name as uploaded
        if not files and not self.errors:
            raise forms.ValidationError(ERR_NO_FILE)
        data["files"] = files
        return data
