"""Forms of the judging side: parsing and field checks only."""
from __future__ import annotations

from django import forms

from annotate.core import SECONDS_MAX, IdsModelMultipleChoiceField, ShortEchoChoiceField
from annotate.models import (
    Choice,
    EducationLevel,
    ExclusionEvent,
    FieldOfStudy,
    OnboardingQuestion,
    ResumeByParticipantId,
    StudyStatus,
    Subject,
)
from annotate.studies.selectors.judging_tokens import TOKEN_RE


class OnboardingForm(forms.Form):
    field_of_study = ShortEchoChoiceField(
        choices=[("", "Choose…"), *FieldOfStudy.choices], label="Field of study"
    )
    education_level = ShortEchoChoiceField(
        choices=[("", "Choose…"), *EducationLevel.choices], label="Education level"
    )
    qualified_subjects = IdsModelMultipleChoiceField(
        queryset=Subject.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        required=False,
        label="Subjects you feel qualified to judge",
        help_text="You will still see every subject; skip the pairs you cannot judge.",
    )

    def __init__(self, *args, subjects, asked=tuple(OnboardingQuestion.values), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["qualified_subjects"].queryset = subjects
        for name in OnboardingQuestion.values:
            if name not in asked:
                del self.fields[name]  # the study does not ask it


class JudgmentForm(forms.Form):
    """The pair and displayed left question travel with the answer, as the
    evaluator's opaque tokens (:mod:`annotate.studies.selectors.judging_tokens`), and
    are checked against what the server served."""

    pair = forms.RegexField(regex=TOKEN_RE)
    left = forms.RegexField(regex=TOKEN_RE)
    choice = ShortEchoChoiceField(choices=Choice.choices)
    client_ms = forms.IntegerField(required=False, min_value=0, max_value=2**31 - 1)

    def client_seconds(self) -> float | None:
        ms = self.cleaned_data.get("client_ms")
        return None if ms is None else ms / 1000.0


class InvitationForm(forms.Form):
    note = forms.CharField(max_length=200, required=False, label="Note (who gets this link)")


class StudyStatusForm(forms.Form):
    status = ShortEchoChoiceField(choices=StudyStatus.choices)


#: Longest exclusion reason (the column's length); the service refuses a longer one as well.
REASON_MAX = ExclusionEvent._meta.get_field("reason").max_length


class ExclusionForm(forms.Form):
    reason = forms.CharField(label="Reason", strip=True, max_length=REASON_MAX)  # the service requires it


class RestoreForm(forms.Form):
    reason = forms.CharField(required=False, label="Reason (optional)", strip=True, max_length=REASON_MAX)


class StudyQualitySettingsForm(forms.Form):
    """Speeder threshold, crowd-platform parameter names, completion code and URL."""

    speeder_seconds = forms.FloatField(
        min_value=0, max_value=SECONDS_MAX, label="Speeder threshold (s)",
        help_text="Flag an evaluator whose median seconds per vote is below this.",
    )
    participant_param = forms.CharField(max_length=64, required=False, label="Participant id parameter")
    study_param = forms.CharField(max_length=64, required=False, label="Study id parameter")
    session_param = forms.CharField(max_length=64, required=False, label="Session id parameter")
    completion_code = forms.CharField(max_length=100, required=False, label="Completion code")
    completion_url = forms.URLField(max_length=500, required=False, label="Completion URL", assume_scheme="https")
    completion_min_votes = forms.IntegerField(
        min_value=0, max_value=2**31 - 1, required=False, label="Code needs answered pairs",
        help_text="At least this many answered pairs (skips do not count) earn the completion code.",
    )
    completion_min_check_share = forms.FloatField(
        min_value=0, max_value=1, required=False, label="Code needs attention checks passed (share)",
        help_text="1 = every attention check shown answered and passed; a skip is not a pass.",
    )
    completion_min_seconds = forms.FloatField(
        min_value=0, max_value=SECONDS_MAX, required=False, label="Code needs seconds on pairs",
        help_text="Server seconds on pairs, summed over votes and skips.",
    )
    screened_out_url = forms.URLField(
        max_length=500, required=False, label="Return URL (no code)", assume_scheme="https",
        help_text="Offered to a participant who did not earn the code (the platform's return or screened-out link).",
    )
    resume_by_participant_id = ShortEchoChoiceField(
        choices=ResumeByParticipantId.choices, required=False, label="Resume by participant id",
        help_text="On: continue in any browser (anyone with the link and the id can). Same browser: only where "
                  "they joined. Off: a known id never signs in.",
    )

    def clean_resume_by_participant_id(self) -> str | None:
        return self.cleaned_data.get("resume_by_participant_id") or None  # absent: unchanged
