"""Admin for studies, invitations, participations and judgments.

Judgments and assignments are read-only here: answers are final and the
table is the audit trail. Invitations are revoked through the service.

A study's scope (datasets, subjects, pairs) can change only until its first
judgment, and only through :func:`annotate.studies.services.scope.study_scope_update`
(which draws the pairs again); from then on the fields are read-only and the
page says why. Pairs are never edited, added or deleted one by one.
"""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from annotate.core import ERR_NAME_HOLDS, RefusedFormStatusMixin, ServiceWritesAdmin, ascii_int, name_text_problem
from annotate.models import (
    Assignment,
    Invitation,
    Judgment,
    OnboardingQuestion,
    Pair,
    Participation,
    Study,
    StudyStatus,
)
from annotate.studies.admin.privacy import delete_evaluator_personal_data
from annotate.studies.selectors.studies import can_manage_study, studies_visible_to, study_scope_frozen
from annotate.studies.services.participation import invitation_delete, invitation_revoke, invitation_save
from annotate.studies.services.scope import (
    StudyScopeFrozenError,
    study_scope_guard,
    study_scope_update,
    study_scope_validate,
)
from annotate.studies.services.studies import (
    ERR_ONBOARDING,
    STUDY_SETTINGS,
    study_delete,
    study_set_status,
    study_settings_update,
)

SCOPE_FIELDS = ("datasets", "subjects")
SCOPE_OPEN = (
    "No judgment yet: the datasets and subjects may still change; saving a change draws the pairs again "
    "(same run, seed, strategy and number of pairs). The first judgment freezes them."
)


class PairInline(admin.TabularInline):
    """A study's pairs: drawn by the service, never edited, added or deleted here."""

    model = Pair
    fields = ("position", "question_a", "question_b", "stratum", "attention_check", "expected_harder")
    readonly_fields = fields
    can_delete = False
    extra = 0
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class StudyAdminForm(forms.ModelForm):
    """Shows why a scope change is refused (frozen study, or a scope without
    enough pairs) next to the fields, before anything is saved."""

    #: Ticked boxes, not JSON: the questions the onboarding page asks, in the order listed here.
    onboarding_questions = forms.MultipleChoiceField(
        choices=OnboardingQuestion.choices, required=False, widget=forms.CheckboxSelectMultiple,
        label="Onboarding questions",
        help_text="The background questions evaluators answer before the guidelines (none ticked: none asked).")

    class Meta:
        model = Study
        fields = ("name", "datasets", "subjects", "target_judgments_per_pair", "guidelines", "consent_text",
                  "onboarding_questions", "members", "status")

    def clean_name(self) -> str:
        value = self.cleaned_data["name"]
        problem = name_text_problem(value)
        if problem is not None:
            raise forms.ValidationError(ERR_NAME_HOLDS.format(label="name", problem=problem))
        return value

    def clean_onboarding_questions(self) -> list[str]:
        value = self.cleaned_data["onboarding_questions"]
        if any(q not in OnboardingQuestion.values for q in value):
            raise forms.ValidationError(ERR_ONBOARDING.format(choices=OnboardingQuestion.values, value=value))
        return [q for q in OnboardingQuestion.values if q in value]

    def clean(self) -> dict:
        cleaned = super().clean()
        scope_fields = [f for f in SCOPE_FIELDS if f in self.fields]
        if self.instance.pk is None or not scope_fields or not set(scope_fields) & set(self.changed_data):
            return cleaned
        if any(f not in cleaned for f in scope_fields):
            return cleaned  # a field error is already shown
        try:
            study_scope_validate(study=self.instance, datasets=cleaned["datasets"], subjects=cleaned["subjects"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None
        return cleaned


@admin.register(Study)
class StudyAdmin(RefusedFormStatusMixin, admin.ModelAdmin):
    form = StudyAdminForm
    list_display = ("name", "status", "strategy", "n_pairs", "target_judgments_per_pair", "scoring_run", "created_at")
    list_filter = ("status", "strategy")
    search_fields = ("name",)
    list_select_related = ("scoring_run",)
    fields = (
        "name", "scope", "datasets", "subjects", "scoring_run", "strategy", "seed", "n_pairs", "include_unkept",
        "include_low_coverage", "pairs_per_subject", "target_judgments_per_pair", "guidelines", "consent_text",
        "onboarding_questions", "status", "created_by", "members", "created_at", "closed_at", "attention_check_share",
        "speeder_seconds", "participant_param", "study_param", "session_param", "completion_code", "completion_url",
    )
    readonly_fields = (
        "scope", "scoring_run", "strategy", "seed", "n_pairs", "include_unkept", "include_low_coverage",
        "pairs_per_subject", "created_by", "created_at", "closed_at", "attention_check_share", "speeder_seconds",
        "participant_param", "study_param", "session_param", "completion_code", "completion_url",
    )
    filter_horizontal = (*SCOPE_FIELDS, "members")
    inlines = [PairInline]
    actions = ["close_studies", "open_studies"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Study]:
        """Only the studies the user may manage (the one rule: ``studies_visible_to``)."""
        return studies_visible_to(user=request.user)

    def has_change_permission(self, request: HttpRequest, obj: Study | None = None) -> bool:
        allowed = super().has_change_permission(request, obj)
        return allowed and (obj is None or can_manage_study(user=request.user, study=obj))

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context=None) -> HttpResponse:
        """A study is created on the study page (its pairs are sampled by the service), not here."""
        return redirect("annotate:study_create")

    def get_readonly_fields(self, request: HttpRequest, obj: Study | None = None) -> tuple[str, ...]:
        readonly = tuple(super().get_readonly_fields(request, obj))
        if obj is not None and study_scope_frozen(study=obj):
            return (*readonly, *SCOPE_FIELDS)
        return readonly

    @admin.display(description="scope")
    def scope(self, obj: Study) -> str:
        """Whether the datasets, subjects and pairs may still change, and why not."""
        try:
            study_scope_guard(study=obj)
        except StudyScopeFrozenError as exc:
            return str(exc)
        return SCOPE_OPEN

    def save_model(self, request: HttpRequest, obj: Study, form: forms.ModelForm, change: bool) -> None:
        """Save through the study service: a status change closes or reopens the
        study as the manage page does (``closed_at`` stamped or cleared)."""
        changed = set(form.changed_data)
        study_settings_update(
            study=obj, changes={f: form.cleaned_data[f] for f in STUDY_SETTINGS if f in changed},
            members=form.cleaned_data["members"] if "members" in changed else None,
            status=form.cleaned_data["status"] if "status" in changed else None,
        )
        obj.refresh_from_db()
        if change and not set(SCOPE_FIELDS) & set(form.fields) and self._posts_other_scope(request, obj):
            # The study was judged after this page was opened: the scope fields
            # are read-only now, so the posted change is ignored; say why.
            try:
                study_scope_guard(study=obj)
            except StudyScopeFrozenError as exc:
                self.message_user(request, str(exc), messages.ERROR)

    @staticmethod
    def _posts_other_scope(request: HttpRequest, obj: Study) -> bool:
        for name in SCOPE_FIELDS:
            if name not in request.POST:
                continue
            posted = {ascii_int(v) for v in request.POST.getlist(name)} - {None}
            if posted != set(getattr(obj, name).values_list("pk", flat=True)):
                return True
        return False

    def save_related(self, request: HttpRequest, form: forms.ModelForm, formsets, change: bool) -> None:
        """The scope through :func:`study_scope_update` (which draws the pairs again);
        co-researchers were saved with the settings; the pairs inline is read-only."""
        if change and set(SCOPE_FIELDS) & set(form.changed_data):
            study_scope_update(
                study=form.instance, datasets=form.cleaned_data["datasets"], subjects=form.cleaned_data["subjects"]
            )
        for formset in formsets:  # the read-only pairs inline: nothing is saved, nothing to log
            formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []

    def delete_model(self, request: HttpRequest, obj: Study) -> None:
        self.delete_queryset(request, [obj])

    def delete_queryset(self, request: HttpRequest, queryset) -> None:
        """Delete through :func:`study_delete`, which refuses a study with evaluators."""
        for study in queryset:
            try:
                study_delete(study=study)
            except ValueError as error:
                self.message_user(request, str(error), messages.ERROR)

    @admin.action(description="Close the selected studies")
    def close_studies(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        for study in queryset:
            study_set_status(study=study, status=StudyStatus.CLOSED)

    @admin.action(description="Open the selected studies")
    def open_studies(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        for study in queryset:
            study_set_status(study=study, status=StudyStatus.OPEN)


@admin.register(Invitation)
class InvitationAdmin(ServiceWritesAdmin):
    save_service = staticmethod(invitation_save)
    delete_service = staticmethod(invitation_delete)
    list_display = ("id", "study", "note", "created_at", "revoked_at")
    list_filter = ("study",)
    search_fields = ("note", "study__name")
    list_select_related = ("study",)
    readonly_fields = ("token", "created_by", "created_at", "revoked_at")
    actions = ["revoke"]

    @admin.action(description="Revoke the selected invitations")
    def revoke(self, request: HttpRequest, queryset: QuerySet[Invitation]) -> None:
        for invitation in queryset:
            invitation_revoke(invitation=invitation)


@admin.register(Participation)
class ParticipationAdmin(admin.ModelAdmin):
    list_display = ("user", "study", "field_of_study", "education_level", "onboarded_at", "finished_at")
    list_filter = ("study", "field_of_study", "education_level")
    search_fields = ("user__username", "study__name")
    list_select_related = ("user", "study")
    actions = [delete_evaluator_personal_data]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # an evaluator joins through an invitation link (a service)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        """Viewed, never edited: onboarding, consent, exclusion and serving state change only through services."""
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        """Only the personal-data action (a service); a participation itself is never deleted here."""
        return obj is None and super().has_delete_permission(request)

    def get_actions(self, request: HttpRequest) -> dict:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def delete_model(self, request: HttpRequest, obj: Participation) -> None:
        raise PermissionDenied("a participation is never deleted here; delete the evaluator's personal data")

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Participation]) -> None:
        raise PermissionDenied("a participation is never deleted here; delete the evaluator's personal data")

    readonly_fields = (
        "study", "user", "invitation", "seed", "onboarded_at", "guidelines_accepted_at", "finished_at", "created_at",
        "platform_participant_id", "platform_study_id", "platform_session_id", "excluded_at", "excluded_by",
        "exclusion_reason",
    )


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    list_display = ("id", "participation", "pair", "choice", "harder_question", "seconds", "submitted_at")
    list_filter = ("choice", "pair__study")
    search_fields = ("participation__user__username",)
    list_select_related = ("participation__user", "participation__study", "pair")


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    list_display = ("id", "participation", "pair", "left_question", "shown_at")
    list_filter = ("pair__study",)
    list_select_related = ("participation__user", "participation__study", "pair")
