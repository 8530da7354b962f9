"""Data model, one module per area (catalog: what was loaded; scoring: runs;
studies: the human judging side)."""
from annotate.models.analyses import AnalysisKind, AnalysisRun
from annotate.models.api import ApiToken
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
from annotate.models.studies import (
    Assignment,
    Choice,
    ConsentDecline,
    EducationLevel,
    ExclusionAction,
    ExclusionEvent,
    FieldOfStudy,
    Invitation,
    Judgment,
    OnboardingQuestion,
    Pair,
    PairStrategy,
    Participation,
    Study,
    StudyStatus,
)
from annotate.models.uploads import UploadJob, UploadState

__all__ = [
    "AnalysisKind",
    "AnalysisRun",
    "ApiToken",
    "Assignment",
    "Choice",
    "ConsentDecline",
    "Dataset",
    "EducationLevel",
    "ExclusionAction",
    "ExclusionEvent",
    "FieldOfStudy",
    "Invitation",
    "Judgment",
    "LanguageModel",
    "MethodResult",
    "ModelAccess",
    "ModelResult",
    "OnboardingQuestion",
    "Pair",
    "PairStrategy",
    "Participation",
    "Question",
    "QuestionResult",
    "Response",
    "ResponseSet",
    "ResponseSetStatus",
    "RunStatus",
    "ScoringRun",
    "Study",
    "StudyStatus",
    "Subject",
    "UploadJob",
    "UploadState",
]
