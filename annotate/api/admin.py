"""Admin for API tokens: list and revoke. Tokens are created by
``manage.py create_api_token`` (the key is shown once and never stored)."""
from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from annotate.api.services import api_token_delete, api_token_revoke, api_token_save
from annotate.core import ServiceWritesAdmin
from annotate.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(ServiceWritesAdmin):
    save_service = staticmethod(api_token_save)
    delete_service = staticmethod(api_token_delete)
    list_display = ("prefix", "user", "name", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("user__username", "name", "prefix")
    list_select_related = ("user",)
    readonly_fields = ("user", "prefix", "key_hash", "created_at", "last_used_at", "revoked_at")
    fields = ("user", "name", "prefix", "key_hash", "created_at", "last_used_at", "revoked_at")
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # manage.py create_api_token shows the key once

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        for token in queryset:
            api_token_revoke(token=token)
