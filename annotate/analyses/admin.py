"""Admin for the paper's analysis runs: read-only; runs start from the analyses pages."""
from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from annotate.analyses.services.runs import analysis_run_delete
from annotate.core import ServiceWritesAdmin, json_display
from annotate.models import AnalysisRun


@admin.register(AnalysisRun)
class AnalysisRunAdmin(ServiceWritesAdmin):
    delete_service = staticmethod(analysis_run_delete)
    list_display = ("id", "kind", "response_set", "status", "progress", "created_by", "created_at", "duration_s")
    list_filter = ("kind", "status")
    list_select_related = ("response_set", "created_by")
    search_fields = ("kind", "response_set__name")
    exclude = ("result", "params")  # the parameters are shown formatted; the result on its own pages
    parameters = json_display("params", "parameters")
    readonly_fields = (
        "kind", "response_set", "parameters", "params_key", "status", "progress", "message",
        "error", "created_by", "created_at", "started_at", "finished_at", "duration_s",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
