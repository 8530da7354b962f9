"""Request and response shapes of the JSON API, as pydantic (ninja) models.

The OpenAPI document at ``/api/openapi.json`` is generated from these and
from the endpoints' signatures (:mod:`annotate.api.views`). Input checks that
must answer with one of our own messages raise ``ValueError`` from a
``mode="before"`` validator; the API's validation-error handler
(:mod:`annotate.api.errors`) answers with that message as is.
"""
from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from django.conf import settings
from ninja import Field, Schema
from pydantic import (
    BaseModel,
    ConfigDict,
    PlainSerializer,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from annotate.api.errors import ERR_JSON
from annotate.core import ID_MAX, short_echo
from annotate.models import ResponseSetStatus, RunStatus, StudyStatus, UploadState

FORMATS = ("json", "csv")
RUN_KEYS = ("response_set", "model_ids", "dataset_ids", "params")
ERR_KEYS = "unknown key(s) {keys}; known: {known}"
ERR_RESPONSE_SET = "response_set must be the id of an existing response set; got {value!r}"
ERR_FORMAT = "format must be one of {formats}; got {value!r}"
ERR_INT = "{name} must be an integer; got {value!r}"

#: A time as ``datetime.isoformat()`` writes it (microseconds and offset kept).
IsoTime = Annotated[
    datetime,
    PlainSerializer(lambda value: value.isoformat(), return_type=str),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
#: A database id: positive and within the 64-bit id column (a larger one is refused before any query).
Id = Annotated[int, Field(ge=1, le=ID_MAX)]
#: The largest count a (portable, 32-bit) integer column holds.
INT32_MAX = 2**31 - 1


# --- errors ------------------------------------------------------------------------------


class Problem(Schema):
    """One problem of a refused upload, located in the uploaded file."""

    file: str
    row: int | None = Field(None, description="1-based line as an editor shows it")
    column: str | None = None
    message: str


class Error(Schema):
    """Every 4xx answer: a message, and for a refused upload its problems or field errors."""

    error: str
    problems: list[Problem] | None = Field(None, description="a refused upload: every problem found")
    fields: dict[str, list[str]] | None = Field(None, description="invalid upload fields: field -> messages")


# --- response sets -------------------------------------------------------------------------


class ResponseSet(Schema):
    id: Id
    name: str
    version: int
    status: ResponseSetStatus
    file_name: str
    file_format: str
    checksum: str = Field(description="SHA-256 of the uploaded files")
    n_questions: int
    n_models: int
    n_responses: int
    created_at: IsoTime | None
    notes: list[str]
    is_human: bool = Field(False, description="people's answers (one 'model' per person), never scored as LLMs")


class ResponseSetList(Schema):
    response_sets: list[ResponseSet] = Field(description="newest first, at most 500")


class UploadStatus(Schema):
    """An upload the task worker parses and loads; poll until ``state`` is done or failed."""

    id: Id
    state: UploadState = Field(description="queued, parsing, loading, done or failed")
    n_done: int = Field(description="responses written so far")
    n_total: int = Field(description="responses to write (0 until parsed)")
    error: str = Field(description="why the load failed; blank otherwise")
    problems: list[Problem] = Field(description="a refused upload: every problem found, by file, row and column")
    response_set: int | None = Field(description="the loaded response set's id, once done")
    response_set_url: str | None = Field(description="its API URL, once done")
    created_at: IsoTime | None


class UploadFields(Schema):
    """The text fields of an upload (multipart form); the files are separate parts.

    Checked further by :class:`annotate.catalog.forms.ResponseUploadForm`, the form of
    the admin upload page: an invalid value answers 400 with ``fields``.
    """

    file_format: str = Field("auto", description="auto, wide, long or jsonl (the loader's formats)")
    dataset: str = Field("", description="dataset name; required for a wide file")
    subject_column: str = Field("", description="column holding the subject; default 'subject'")
    keep_columns: str = Field("", description="comma-separated question columns to keep")
    id_column: str = Field("question_id", description="question id column of a responses file")
    model_column: str = Field("model", description="model name column of the models file (LiveCodeBench: "
                                                   "model_repr)")
    metric: str = Field("", description="harness logs: the metric to read when a log has several")
    log_filter: str = Field("", description="lm-evaluation-harness logs: the filter to read when there are several")
    skip_invalid: bool = Field(False, description="harness logs: leave out samples the harness marked invalid")
    newest_run: bool = Field(False, description="harness logs: when two runs log the same sample differently, "
                                               "keep the newest run's record (default: refuse the upload)")
    merge_case_variants: bool = Field(False, description="load names that differ only by case (GPT-4, gpt-4) "
                                                         "as one instead of refusing the upload")
    text_format: str = Field("", description="plain or markdown: how the new datasets' question text is written "
                                             "(plain: shown as written, only delimited math typeset); blank: the "
                                             "suggestion of the preview's text_formats")
    name: str = Field("", description="response set name; default: the responses file name without extension")
    new_version: bool = Field(False, description="same name, version + 1; earlier versions are marked superseded")
    dry_run: bool = Field(False, description="check and preview only; nothing is written")

    @field_validator("file_format", mode="after")
    @classmethod
    def blank_is_auto(cls, value: str) -> str:
        return value.strip() or "auto"


class Preview(Schema):
    """What a load would write (a dry run); nothing was written."""

    name: str | None
    version: int
    supersedes: str | None
    checksum: str
    file_format: str
    n_responses: int
    n_questions: int
    n_models: int
    questions_new: int
    questions_existing: int
    models_new: int
    models_existing: int
    subjects_new: int
    datasets_new: int
    notes: list[str]
    text_formats: dict[str, str] = Field(
        default_factory=dict, description="each dataset's text format: a new one's suggestion (plain or markdown), "
                                          "an existing one's stored format")


class DryRun(Schema):
    dry_run: Literal[True]
    preview: Preview


# --- scoring runs ----------------------------------------------------------------------------


class RunRequest(BaseModel):
    """Start a scoring run: the response set, optionally a subset of models and datasets.

    A plain pydantic model (not a ninja ``Schema``, which hands validators a
    wrapped object): the before-validator sees the JSON body as sent.
    """

    model_config = ConfigDict(extra="forbid")

    response_set: Id
    model_ids: list[Id] | None = Field(None, description="default: every model of the set; at most "
                                       "MAX_ID_LIST_LENGTH ids (setting, default 10000)",
                                       json_schema_extra={"maxItems": settings.MAX_ID_LIST_LENGTH})
    dataset_ids: list[Id] | None = Field(None, description="default: every dataset of the set; at most "
                                         "MAX_ID_LIST_LENGTH ids (setting, default 10000)",
                                         json_schema_extra={"maxItems": settings.MAX_ID_LIST_LENGTH})
    params: dict[str, Any] | None = Field(
        None, description="alpha (EIP damping, default 0.85), tol (default 1e-10), mirt_epochs, mirt_seed, "
        "mirt_seeds (MIRT fits, default 5), methods"
    )

    @model_validator(mode="before")
    @classmethod
    def known_keys_and_an_id(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError(ERR_JSON)
        unknown = sorted(set(data) - set(RUN_KEYS))
        if unknown:
            raise ValueError(ERR_KEYS.format(keys=unknown, known=list(RUN_KEYS)))
        value = data.get("response_set")
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(ERR_RESPONSE_SET.format(value=short_echo(value) if isinstance(value, str) else value))
        return data


class MethodSummary(Schema):
    method: str = Field(description="method key (scoring.methods registry)")
    label: str = Field(description="the method's display label")
    n_iter: int | None
    converged: bool | None
    residual: float | None
    duration_s: float


class ScoringRun(Schema):
    id: Id
    response_set: Id
    status: RunStatus
    progress: float = Field(description="0..1", json_schema_extra={"minimum": 0, "maximum": 1})
    error: str
    params: dict[str, Any]
    created_at: IsoTime | None
    finished_at: IsoTime | None
    methods: list[MethodSummary]


# --- studies, reports, judgments -----------------------------------------------------------------


class Study(Schema):
    id: Id
    name: str
    status: StudyStatus
    strategy: str
    n_pairs: int = Field(description="pairs of the study; an adaptive study's pairs per evaluator")
    target_judgments_per_pair: int
    adaptive_min_comparisons: int | None = Field(
        None, description="adaptive study: comparisons every question gets before informative pairs (else null)")
    adaptive_random_share: float | None = Field(
        None, description="adaptive study: share of pairs drawn at random (else null)")
    scoring_run: Id
    created_at: IsoTime | None
    closed_at: IsoTime | None
    n_evaluators: int | None
    n_judgments: int | None = Field(description="votes, skips excluded")


class StudyList(Schema):
    studies: list[Study] = Field(description="newest first")


class TableQuery(Schema):
    format: Literal["csv", "parquet"] = Field("csv", description="csv (default, tidy) or parquet")


class FormatQuery(Schema):
    format: Literal["json", "csv"] = Field("json", description="json (default) or csv (formula-guarded cells)")

    @field_validator("format", mode="before")
    @classmethod
    def one_of_the_formats(cls, value: Any) -> Any:
        if value not in FORMATS:
            raise ValueError(ERR_FORMAT.format(formats=list(FORMATS), value=value))
        return value


class ReportQuery(FormatQuery):
    """The report page's parameters."""

    run: Id | None = Field(None, description="compare another finished scoring run (default: the study's own)")
    min_votes: int = Field(1, ge=1, le=1000, description="fewest votes a pair needs for a consensus")
    tie_rule: Literal["evaluator_weight", "none"] = "evaluator_weight"
    n_boot: int = Field(2000, ge=1, le=20000, description="bootstrap replicates for the 95% intervals")
    pairs_offset: int = Field(0, ge=0, le=ID_MAX, description="first pair (0-based) of the page of pairs the JSON "
                              "holds (pairs_page says which; the CSV and pairs.csv hold every pair)")
    crowd: bool = Field(False, description="add the crowd section: judges weighted by reliability (crowd "
                        "Bradley-Terry), each method unweighted and weighted")

    @field_validator("run", "min_votes", "n_boot", "pairs_offset", mode="before")
    @classmethod
    def an_integer(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None or isinstance(value, int):
            return value
        try:
            return int(value)
        except (TypeError, ValueError):
            raise ValueError(ERR_INT.format(name=info.field_name, value=short_echo(value))) from None


class Report(BaseModel):
    """The alignment report; its full schema is ``annotate/report_schema.json``.

    A plain pydantic model (not a ninja ``Schema``, whose attribute getter drops
    undeclared keys), so every section of the report reaches the client.
    """

    model_config = ConfigDict(extra="allow")

    schema_version: int
    study: dict[str, Any]
    run: dict[str, Any]
    parameters: dict[str, Any] = Field(description="what the report was computed with: study, scoring_run, "
                                       "min_votes, tie_rule, label_key, label_direction, n_boot, bootstrap_seed, "
                                       "scale_n_boot (the human scale's replicates: n_boot, at most 200), "
                                       "label_n_boot (the label analysis's own)")


class Judgment(Schema):
    study: str
    pair_id: Id
    pair_position: int
    subject: str
    dataset_a: str = Field(description="dataset of question a (two datasets may share external ids)")
    question_a: str = Field(description="external id of question a in dataset_a")
    dataset_b: str = Field(description="dataset of question b")
    question_b: str = Field(description="external id of question b in dataset_b")
    left_dataset: str
    left_question: str = Field(description="external id of the question shown on the left, in left_dataset")
    right_dataset: str
    right_question: str
    choice: Literal["left", "right", "skip"]
    harder_dataset: str = Field(description="dataset of the question called harder; empty for a skip")
    harder_question: str = Field(description="external id of the question called harder; empty for a skip")
    verdict: Literal["a", "b", "skip"]
    evaluator: str = Field(description="pseudonym")
    field_of_study: str
    education_level: str
    shown_at: str = Field(json_schema_extra={"format": "date-time"})
    submitted_at: str = Field(json_schema_extra={"format": "date-time"})
    seconds: float
    client_seconds: float | None


class JudgmentList(Schema):
    study: Id
    judgments: list[Judgment] = Field(description="one row per judgment or skip, by pair then evaluator")


# --- human labels -----------------------------------------------------------------------


class HumanFlag(BaseModel):
    """Mark a response set as people's answers (or clear the mark)."""

    model_config = ConfigDict(extra="forbid")

    is_human: bool = Field(description="true: one 'model' per person, never scored as LLMs")


class HumanLabelRequest(BaseModel):
    """Compare every method of a scoring run with a human difficulty label."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(description="metadata:KEY (a question metadata column) or human:ID (a human response set)")
    label_higher_is_harder: bool | None = Field(None, description="metadata label direction (default true)")
    margin: float | None = Field(None, description="label margin besides 0 (default 0.2)")
    n_boot: int | None = Field(None, ge=0, le=INT32_MAX, description="bootstrap replicates (default 200)")
    run: int | None = Field(None, ge=0, le=ID_MAX, description="scoring run id (default 0: the newest finished one)")
    human_method: str | None = Field(None, description="human:ID labels: accuracy (solve rate) or irt_1pl")
    seed: int | None = Field(None, ge=0, le=ID_MAX, description="seed of the bootstrap (default 0)")


class AnalysisRunOut(Schema):
    id: Id
    kind: str
    response_set: int | None
    status: RunStatus
    progress: float = Field(description="0..1", json_schema_extra={"minimum": 0, "maximum": 1})
    error: str
    params: dict[str, Any]
    result: dict[str, Any] | None = Field(description="the analysis result once done (same as its result.json)")


# --- derived studies ---------------------------------------------------------------------------------


class DerivedStudyRequest(BaseModel):
    """Derive a study's judgments from a human response set."""

    model_config = ConfigDict(extra="forbid")

    human_response_set: Id = Field(description="id of a loaded response set marked as human")
    run: Id = Field(description="id of a finished scoring run of a model set (the methods compared)")
    name: str = Field("", description="name of the new study (required unless dry_run)")
    n_pairs: int = Field(500, ge=1, le=INT32_MAX,
                         description="pairs to draw (fewer when fewer same-subject pairs exist)")
    seed: int = Field(0, ge=0, le=ID_MAX, description="seed of the uniform pair draw")
    dry_run: bool = Field(False, description="count the pairs and judgments; write nothing")


class DerivedStudyOut(BaseModel):
    """The counts of a derived study (a preview when ``study`` is null)."""

    study: int | None = Field(description="id of the created study; null for a dry run")
    rule: str = Field(description="the pairing rule")
    n_persons: int
    n_questions_shared: int
    n_subjects: int
    n_possible_pairs: int
    n_pairs: int
    n_votes: int = Field(description="person x pair cells with one answer right and the other wrong")
    n_no_information: int = Field(description="cells with equal credit on both (stored as skips)")
    n_unanswered: int = Field(description="cells where the person did not answer both (no judgment)")
    n_persons_with_judgments: int


# --- imported studies --------------------------------------------------------------------------------


class ImportFields(Schema):
    """The text fields of a judgment import (multipart form); the files are ``files`` parts."""

    run: Id = Field(description="id of a finished scoring run (the methods the report compares)")
    name: str = Field(description="name of the new study")
    format: Literal["csv", "jsonl", "label-studio"] | None = Field(
        None, description="format of every file (default: by extension: .csv, .jsonl, .json = Label Studio): "
                          "CSV or JSON Lines (evaluator, group, dataset_a, question_a, dataset_b, "
                    "question_b, harder = a/b/skip, submitted_at, seconds) or a Label Studio pairwise export")
    group: str = Field("", max_length=100, description="group of every evaluator without a group value")


class ImportedStudyOut(Schema):
    study: Id
    n_pairs: int
    n_evaluators: int
    n_judgments: int = Field(description="votes and skips")
