"""The browser form of a judgment import: a run, a name, and up to four files, each with its group."""
from __future__ import annotations

from django import forms

from annotate.models import ScoringRun
from annotate.studies.forms.studies import RunChoiceField
from annotate.studies.selectors.study_scope import scoring_runs_finished
from annotate.studies.services.judgment_import import (
    GROUP_MAX_CHARS,
    MAX_IMPORT_BYTES,
    ImportFile,
    format_from_name,
)

#: How many files one browser import takes (e.g. one Label Studio export per group).
FILE_SLOTS = 4
FORMAT_LABELS = {"": "From the file name (.csv, .jsonl, .json = Label Studio)", "csv": "CSV",
                 "jsonl": "JSON Lines", "label-studio": "Label Studio JSON export (pairwise project)"}
ERR_NO_FILE = "Choose at least one file."
ERR_GROUP_WITHOUT_FILE = "A group is given here but no file."
ERR_SIZE = "{name} is {size:,} bytes; at most {limit:,} are accepted."
ERR_FORMAT = "Cannot tell the format of {name} from its extension (.csv, .jsonl, or .json for Label Studio); choose it."


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
            if upload.size is not None and upload.size > MAX_IMPORT_BYTES:
                self.add_error(f"file_{k}", ERR_SIZE.format(name=upload.name, size=upload.size,
                                                            limit=MAX_IMPORT_BYTES))
                continue
            fmt = data.get("format") or format_from_name(str(upload.name))
            if fmt is None:
                self.add_error(f"file_{k}", ERR_FORMAT.format(name=upload.name))
                continue
            files.append(ImportFile(name=str(upload.name), data=upload.read(), format=fmt, group=group))
        if not files and not self.errors:
            raise forms.ValidationError(ERR_NO_FILE)
        data["files"] = files
        return data
