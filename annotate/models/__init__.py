"""Data model, one module per area (catalog: what was loaded; scoring: runs;
studies: the human judging side)."""
from annotate.models.catalog import (
    Dataset,
    LanguageModel,
    ModelAccess,
    Question,
    Response,
    ResponseSet,
    ResponseSetStatus,
    Subject,
)
from annotate.models.scoring import MethodResult, ModelResult, QuestionResult, RunStatus, ScoringRun

__all__ = [
    "Dataset",
    "LanguageModel",
    "MethodResult",
    "ModelAccess",
    "ModelResult",
    "Question",
    "QuestionResult",
    "Response",
    "ResponseSet",
    "ResponseSetStatus",
    "RunStatus",
    "ScoringRun",
    "Subject",
]
