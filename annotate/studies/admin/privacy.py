"""Admin action: delete evaluators' personal data, keeping their judgments anonymous.

Wire it into ``ParticipationAdmin.actions`` (annotate/studies/admin/studies.py). It
calls :func:`annotate.studies.services.privacy.evaluator_delete_personal_data` once per
distinct evaluator of the selected participations.
"""
from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from annotate.core import counted
from annotate.models import Participation
from annotate.studies.selectors.studies import users_of_participations
from annotate.studies.services.privacy import evaluator_delete_personal_data

DONE_MESSAGE = "Deleted the personal data of {pseudonym}; {judgments} kept as {replacement}."


@admin.action(description="Delete the evaluators' personal data (judgments are kept, anonymous)",
              permissions=["delete"])
def delete_evaluator_personal_data(modeladmin: admin.ModelAdmin, request: HttpRequest,
                                   queryset: QuerySet[Participation]) -> None:
    for user in users_of_participations(participations=queryset):
        try:
            result = evaluator_delete_personal_data(user=user)
        except ValueError as error:
            modeladmin.message_user(request, str(error), messages.ERROR)
            continue
        modeladmin.message_user(request, DONE_MESSAGE.format(
            pseudonym=result.pseudonym, judgments=counted(result.judgments, "judgment"),
            replacement=result.replacement), messages.SUCCESS)
