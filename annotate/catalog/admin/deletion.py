"""The response-set delete pages of the admin: counts only, deleted by the task worker.

Django's own delete page lists every object it would remove, which never
finishes for a set of a million responses. :class:`BackgroundDeleteMixin`
replaces it (and the "delete selected" action) with a page of counts
(:func:`annotate.catalog.selectors.deletion.response_set_delete_counts`) and, on
confirmation, the background deletion of
:func:`annotate.catalog.services.deletion.response_set_delete_request`.
"""
from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from annotate.catalog.selectors.deletion import response_set_delete_counts
from annotate.catalog.services.deletion import USED_BY_STUDIES, response_set_delete_request
from annotate.core import counted
from annotate.models import ResponseSet

DELETE_QUEUED_MESSAGE = (
    "Deleting {sets} in the background ({responses}); they disappear from this list when the "
    "task worker is done."
)
CONFIRM_FIELD = "confirm_delete"


class BackgroundDeleteMixin:
    """For ``ResponseSetAdmin``: delete pages with counts only, deletion by the task worker."""

    def get_actions(self, request: HttpRequest) -> dict:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def delete_model(self, request: HttpRequest, obj: ResponseSet) -> None:
        """Deleting goes through the counts page (:meth:`delete_view`): hand the set to the worker."""
        response_set_delete_request(response_sets=[obj])

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ResponseSet]) -> None:
        response_set_delete_request(response_sets=list(queryset))

    @admin.action(description="Delete selected response sets (in the background)", permissions=["delete"])
    def delete_in_background(self, request: HttpRequest, queryset: QuerySet[ResponseSet]) -> HttpResponse:
        return self._delete_confirm(request, list(queryset.order_by("name", "version")), action=True)

    def delete_view(self, request: HttpRequest, object_id: str, extra_context: dict | None = None) -> HttpResponse:
        response_set = self.get_object(request, object_id)
        if response_set is None:
            raise Http404(f"no response set {object_id!r}")
        if not self.has_delete_permission(request, response_set):
            raise PermissionDenied
        return self._delete_confirm(request, [response_set], action=False)

    def _delete_confirm(self, request: HttpRequest, sets: list[ResponseSet], *, action: bool) -> HttpResponse:
        changelist = reverse("admin:annotate_responseset_changelist")
        counts = [response_set_delete_counts(response_set=s) for s in sets]
        if request.method == "POST" and request.POST.get(CONFIRM_FIELD) == "yes":
            try:
                response_set_delete_request(response_sets=sets)
            except ValueError as error:
                self.message_user(request, str(error), messages.ERROR)
            else:
                self.message_user(request, DELETE_QUEUED_MESSAGE.format(
                    sets=", ".join(str(s) for s in sets),
                    responses=counted(sum(c.n_responses for c in counts), "response")),
                    messages.SUCCESS)
            return HttpResponseRedirect(changelist)
        blocked = [USED_BY_STUDIES.format(response_set=c.response_set, studies=", ".join(c.blocking_studies))
                   for c in counts if c.blocking_studies]
        totals = {key: sum(getattr(c, key) for c in counts)
                  for key in ("n_questions", "n_models", "n_responses", "n_scoring_runs", "n_analysis_runs")}
        context = {
            **self.admin_site.each_context(request),
            "opts": ResponseSet._meta, "title": "Delete response sets?" if action else "Delete response set?",
            "counts": counts, "totals": totals, "blocked": blocked, "action": action, "confirm_field": CONFIRM_FIELD,
            "changelist": changelist,
        }
        return TemplateResponse(request, "annotate/admin/responseset_delete.html", context)
