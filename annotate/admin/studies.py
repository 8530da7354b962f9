"""Admin for studies, invitations, participations and judgments.

Judgments and assignments are read-only here: answers are final and the
table is the audit trail. Invitations are revoked through the service.
"""
from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from annotate.admin.privacy import delete_evaluator_personal_data
from annotate.models import Assignment, Invitation, Judgment, Pair, Participation, Study, StudyStatus
from annotate.services.studies import invitation_revoke, study_set_status


class PairInline(admin.TabularInline):
    model = Pair
    fields = ("position", "question_a", "question_b", "stratum")
    readonly_fields = fields
    can_delete = False
    extra = 0
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ("name", "status", "strategy", "n_pairs", "target_judgments_per_pair", "scoring_run", "created_at")
    list_filter = ("status", "strategy")
    search_fields = ("name",)
    list_select_related = ("scoring_run",)
    readonly_fields = (
        "scoring_run", "strategy", "seed", "n_pairs", "include_unkept", "created_by", "created_at", "closed_at",
    )
    filter_horizontal = ("datasets", "subjects")
    inlines = [PairInline]
    actions = ["close_studies", "open_studies"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # pairs are sampled by the create_study command / service

    @admin.action(description="Close the selected studies")
    def close_studies(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        for study in queryset:
            study_set_status(study=study, status=StudyStatus.CLOSED)

    @admin.action(description="Open the selected studies")
    def open_studies(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        for study in queryset:
            study_set_status(study=study, status=StudyStatus.OPEN)


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
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
    readonly_fields = (
        "study", "user", "invitation", "seed", "onboarded_at", "guidelines_accepted_at", "finished_at", "created_at",
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
