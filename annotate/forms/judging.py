"""Forms of the judging side: parsing and field checks only."""
from __future__ import annotations

from django import forms

from annotate.models import Choice, EducationLevel, FieldOfStudy, OnboardingQuestion, StudyStatus, Subject


class OnboardingForm(forms.Form):
    field_of_study = forms.ChoiceField(
        choices=[("", "Choose…"), *FieldOfStudy.choices], label="Field of study"
    )
    education_level = forms.ChoiceField(
        choices=[("", "Choose…"), *EducationLevel.choices], label="Education level"
    )
    qualified_subjects = forms.ModelMultipleChoiceField(
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
    """The pair and displayed left question travel with the answer and are
    checked against what the server served."""

    pair = forms.IntegerField(min_value=1)
    left = forms.IntegerField(min_value=1)
    choice = forms.ChoiceField(choices=Choice.choices)
    client_ms = forms.IntegerField(required=False, min_value=0)

    def client_seconds(self) -> float | None:
        ms = self.cleaned_data.get("client_ms")
        return None if ms is None else ms / 1000.0


class InvitationForm(forms.Form):
    note = forms.CharField(max_length=200, required=False, label="Note (who gets this link)")


class StudyStatusForm(forms.Form):
    status = forms.ChoiceField(choices=StudyStatus.choices)


class ExclusionForm(forms.Form):
    reason = forms.CharField(label="Reason", strip=True)  # the service requires it, and keeps 500 characters


class RestoreForm(forms.Form):
    reason = forms.CharField(required=False, label="Reason (optional)", strip=True)


class StudyQualitySettingsForm(forms.Form):
    """Speeder threshold, crowd-platform parameter names, completion code and URL."""

    speeder_seconds = forms.FloatField(
        min_value=0, label="Speeder threshold (s)",
        help_text="Flag an evaluator whose median seconds per vote is below this.",
    )
    participant_param = forms.CharField(max_length=64, required=False, label="Participant id parameter")
    study_param = forms.CharField(max_length=64, required=False, label="Study id parameter")
    session_param = forms.CharField(max_length=64, required=False, label="Session id parameter")
    completion_code = forms.CharField(max_length=100, required=False, label="Completion code")
    completion_url = forms.URLField(max_length=500, required=False, label="Completion URL", assume_scheme="https")
