"""Admin for scoring runs and their results: read-only; results are written
only by the scoring service, and a finished run never changes (reports name the
run they used). The only way to drop results is deleting the whole run (which
a study built on it prevents).

The "run scoring" action starts a new run with the same settings through the
task worker (``manage.py run_worker``).
"""
from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from annotate.core import ServiceWritesAdmin, json_display
from annotate.models import MethodResult, ModelResult, QuestionResult, ScoringRun
from annotate.runs.services.scoring import scoring_run_delete, scoring_run_request_again

#: The admin pages that delete whole runs (with every result row of them).
RUN_DELETE_VIEWS = frozenset({"annotate_scoringrun_delete", "annotate_scoringrun_changelist"})
QUEUED_MESSAGE = "Queued {count} new scoring run(s): {ids}. The task worker runs them; see the results page."
ALREADY_ACTIVE_MESSAGE = "Not queued again: identical run(s) {ids} are already queued or running."


class ReadOnlyResultInline(admin.TabularInline):
    """A run's result rows, shown and never edited, added or deleted one by one."""

    can_delete = False
    extra = 0

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class MethodResultInline(ReadOnlyResultInline):
    model = MethodResult
    fields = ("method", "n_iter", "converged", "residual", "duration_s", "notes_shown")
    readonly_fields = fields
    notes_shown = json_display("notes", "notes")


class ModelResultInline(ReadOnlyResultInline):
    model = ModelResult
    fields = ("model", "n_observed", "scores_shown")
    readonly_fields = fields
    scores_shown = json_display("scores", "scores")


@admin.register(ScoringRun)
class ScoringRunAdmin(ServiceWritesAdmin):
    delete_service = staticmethod(scoring_run_delete)
    list_display = ("id", "response_set", "status", "progress_percent", "created_by", "created_at", "finished_at")
    list_filter = ("status", "response_set")
    list_select_related = ("response_set", "created_by")
    search_fields = ("response_set__name", "error")
    readonly_fields = ("response_set", "models_used", "datasets_used", "parameters", "status", "progress", "error",
                       "created_by", "created_at", "finished_at", "fit_diagnostics")
    exclude = ("params", "diagnostics")  # shown formatted, never as JSON
    parameters = json_display("params", "parameters")
    fit_diagnostics = json_display("diagnostics", "diagnostics")
    inlines = [MethodResultInline, ModelResultInline]
    actions = ["run_scoring"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # runs start from the results page, the action below or score_responses

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    @admin.display(description="progress")
    def progress_percent(self, obj: ScoringRun) -> str:
        return f"{100 * obj.progress:.0f}%"

    @admin.action(description="Run scoring again (new runs with the same settings)")
    def run_scoring(self, request: HttpRequest, queryset: QuerySet[ScoringRun]) -> None:
        created, active = [], []
        for run in queryset.select_related("response_set"):
            outcome = scoring_run_request_again(run=run, user=request.user)
            (created if outcome.created else active).append(outcome.run.pk)
        if created:
            self.message_user(request, QUEUED_MESSAGE.format(count=len(created), ids=created), messages.SUCCESS)
        if active:
            self.message_user(request, ALREADY_ACTIVE_MESSAGE.format(ids=sorted(set(active))), messages.WARNING)


class ReadOnlyResultAdmin(admin.ModelAdmin):
    """Result rows of a run: viewable, never added or changed, and deleted only
    with their whole run (the run's delete page and its "delete selected"
    action ask this admin about every result row they would remove)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        match = request.resolver_match
        deleting_runs = match is not None and match.url_name in RUN_DELETE_VIEWS
        return deleting_runs and super().has_delete_permission(request, obj)


@admin.register(QuestionResult)
class QuestionResultAdmin(ReadOnlyResultAdmin):
    list_display = ("id", "run", "question", "kept", "n_observed")
    list_filter = ("run", "kept")
    list_select_related = ("run__response_set", "question__dataset")
    search_fields = ("question__external_id",)
    show_full_result_count = False
    exclude = ("scores",)
    readonly_fields = ("scores_shown",)
    scores_shown = json_display("scores", "scores")


@admin.register(ModelResult)
class ModelResultAdmin(ReadOnlyResultAdmin):
    list_display = ("id", "run", "model", "n_observed")
    list_filter = ("run",)
    list_select_related = ("run__response_set", "model")
    search_fields = ("model__name",)
    exclude = ("scores",)
    readonly_fields = ("scores_shown",)
    scores_shown = json_display("scores", "scores")
