"""``manage.py load_responses``: load a response set from files through the upload
service (:mod:`annotate.catalog.services.uploads`), the same one the admin page and the API use."""
from __future__ import annotations

import time
from argparse import ArgumentParser
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotate.catalog import (
    HARNESS_FORMATS,
    TABULAR_FORMATS,
    CheckedUpload,
    LoadError,
    LoadPreview,
    UploadOptions,
    UploadSource,
    problems_text,
    response_set_mark_human,
    upload_check,
    upload_load,
)
from annotate.core import counted
from annotate.management.progress import TqdmStream
from annotate.models import TextFormat

FOLDER_OR_RESPONSES = "give exactly one of --folder, --responses and --logs"
FOLDER_ONLY_OPTION = (
    "--{option} is for --responses; a --folder is read as responses_binary.csv, questions.csv, models.csv"
)
NOT_FOR_LOGS = "--{option} does not apply to --logs (harness logs carry their own questions and models)"
LOGS_ONLY_OPTION = "--{option} applies to --logs only"
WRONG_FORMAT = "--format {value} is a {kind} format; it cannot read {source}"


class Command(BaseCommand):
    help = (
        "Load model responses (credit in [0, 1] per question and model) from a folder in the "
        "MMLU-Pro layout, from explicit files, or from evaluation-harness logs, in one transaction."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--folder", type=Path, help="folder with responses_binary.csv, questions.csv, models.csv")
        parser.add_argument("--responses", type=Path, help="responses file (wide CSV, long CSV/TSV or JSON Lines)")
        parser.add_argument("--logs", type=Path, nargs="+",
                            help="evaluation-harness logs (files or folders): lm-eval, Inspect AI, HELM, OpenCompass")
        parser.add_argument("--format", dest="file_format", choices=[*TABULAR_FORMATS, *HARNESS_FORMATS],
                            default="auto",
                            help="format of --responses (wide, long, jsonl) or --logs (lm-eval, inspect, helm, "
                                 "opencompass); default: auto, detected from the files")
        parser.add_argument("--metric", help="--logs: which logged score to read (default: the task's primary)")
        parser.add_argument("--filter", dest="log_filter", help="--logs with lm-eval: which filter to read")
        parser.add_argument("--skip-invalid", action="store_true",
                            help="--logs: skip values that are not scores (counted in the notes) instead of refusing")
        parser.add_argument("--newest-run", action="store_true",
                            help="--logs: a sample logged by several runs with different scores takes the newest "
                                 "run's score instead of refusing the load (identical copies always count once)")
        parser.add_argument("--merge-case-variants", action="store_true",
                            help="load names that differ only by case (GPT-4, gpt-4) as one, keeping the stored "
                                 "spelling or the first in the files, instead of refusing the load")
        parser.add_argument("--text-format", choices=TextFormat.values,
                            help="how the new datasets' question text is written: plain (shown as written, only "
                                 "delimited math typeset) or markdown; default: suggested from the texts (printed)")
        parser.add_argument("--questions", type=Path, help="question metadata file (CSV)")
        parser.add_argument("--models", type=Path, help="model metadata file (CSV)")
        parser.add_argument("--dataset",
                            help="dataset name (required for wide files; default for long rows without one)")
        parser.add_argument("--subject-column", help="column holding the subject (MMLU-Pro: category)")
        parser.add_argument("--keep-columns", default="", help="comma-separated question columns kept into metadata")
        parser.add_argument("--id-column", default="question_id", help="question id column (default question_id)")
        parser.add_argument("--model-column", default="model",
                            help="the models file's model name column (default model; LiveCodeBench: model_repr)")
        parser.add_argument("--name", help="response set name (default: the folder name, the responses file stem, "
                                           "or the first log's file or folder name without extension)")
        parser.add_argument("--new-version", action="store_true",
                            help="load as a new version of an existing name; earlier versions become superseded")
        parser.add_argument("--dry-run", action="store_true", help="check and preview only; write nothing")
        parser.add_argument("--human", action="store_true",
                            help="the rows are people's answers (one 'model' per person): mark the set as human, "
                                 "so it is never scored as LLMs and serves as a human difficulty label")

    def handle(self, *args, **options) -> str:
        # call_command() passes keyword options through without argparse's type=Path.
        for key in ("folder", "responses", "questions", "models"):
            if options[key] is not None:
                options[key] = Path(options[key])
        if options["logs"] is not None:
            options["logs"] = [Path(p) for p in options["logs"]]
        folder, responses, logs = options["folder"], options["responses"], options["logs"]
        if sum(source is not None for source in (folder, responses, logs)) != 1:
            raise CommandError(FOLDER_OR_RESPONSES)
        self._check_options(options)
        started = time.perf_counter()
        try:
            checked = upload_check(source=self._source(options), options=self._options(options))
            preview = checked.preview
            self._report(preview, options["verbosity"])
            if options["dry_run"]:
                return f"Dry run: {self._counts(preview, human=bool(options.get('human')))}; " \
                       f"nothing was written. {preview.diagnostics(human=bool(options.get('human')))}"
            response_set = self._load(checked, options)
            if options.get("human"):
                response_set = response_set_mark_human(response_set=response_set)
        except LoadError as error:
            raise CommandError(problems_text(error)) from error
        except ValueError as error:
            raise CommandError(str(error)) from error
        seconds = time.perf_counter() - started
        human = " (marked as human)" if response_set.is_human else ""
        name = (f"; as a human difficulty label it is human:{response_set.pk}" if response_set.is_human else "")
        counts = self._counts(preview, human=response_set.is_human)
        return (f"Loaded {response_set}{human}: {counts} in {seconds:.1f} s. "
                f"{preview.diagnostics(human=response_set.is_human)} Response set id {response_set.pk}{name}.")

    @staticmethod
    def _check_options(options: dict) -> None:
        file_format = options["file_format"]
        if options["folder"] is not None:
            for option in ("questions", "models"):
                if options[option] is not None:
                    raise CommandError(FOLDER_ONLY_OPTION.format(option=option))
            if file_format not in ("auto", "wide"):
                raise CommandError(FOLDER_ONLY_OPTION.format(option="format"))
        if options["logs"] is not None:
            for option, given in (("questions", options["questions"]), ("models", options["models"]),
                                  ("subject-column", options["subject_column"]),
                                  ("keep-columns", options["keep_columns"]),
                                  ("model-column", options.get("model_column", "model") != "model")):
                if given:
                    raise CommandError(NOT_FOR_LOGS.format(option=option))
            if file_format in TABULAR_FORMATS and file_format != "auto":
                raise CommandError(WRONG_FORMAT.format(value=file_format, kind="tabular", source="--logs"))
        else:
            for option, given in (("metric", options["metric"]), ("filter", options["log_filter"]),
                                  ("skip-invalid", options["skip_invalid"]),
                                  ("newest-run", options["newest_run"])):
                if given:
                    raise CommandError(LOGS_ONLY_OPTION.format(option=option))
            if file_format in HARNESS_FORMATS:
                source = "--folder" if options["folder"] is not None else "--responses"
                raise CommandError(WRONG_FORMAT.format(value=file_format, kind="harness-log", source=source))

    @staticmethod
    def _source(options: dict) -> UploadSource:
        return UploadSource(responses=options["responses"], questions=options["questions"],
                            models=options["models"], folder=options["folder"], logs=tuple(options["logs"] or ()))

    @staticmethod
    def _options(options: dict) -> UploadOptions:
        keep = tuple(c.strip() for c in options["keep_columns"].split(",") if c.strip())
        return UploadOptions.of({**options, "keep_columns": keep})

    def _load(self, checked: CheckedUpload, options: dict):
        bar = tqdm(total=checked.parsed.observed_counts()[0], unit="rows", file=TqdmStream(self.stderr),
                   disable=options["verbosity"] == 0, mininterval=0.5)

        def progress(done: int, total: int) -> None:
            bar.update(done - bar.n)

        try:
            return upload_load(checked=checked, progress=progress, text_format=options.get("text_format"))
        finally:
            bar.close()

    def _report(self, preview: LoadPreview, verbosity: int) -> None:
        if verbosity < 1:
            return
        for note in preview.notes:
            self.stderr.write(f"note: {note}")
        for shown in preview.text_formats:
            kept = f"keeps {shown.stored_label}" if shown.stored else f"suggested {shown.suggestion.reason}"
            self.stderr.write(f"question text of {shown.dataset}: {kept}")

    @staticmethod
    def _counts(preview: LoadPreview, *, human: bool = False) -> str:
        who = ("person", "persons") if human else ("model", "models")  # a human set's columns are people
        return (
            f"{counted(preview.n_responses, 'response')} ({counted(preview.n_questions, 'question')} x "
            f"{counted(preview.n_models, *who)} with a response); new: {counted(preview.questions_new, 'question')}, "
            f"{counted(preview.models_new, *who)}, {counted(preview.subjects_new, 'subject')}"
        )
