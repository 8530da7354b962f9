"""Form fields that refuse, as a form error, values the database cannot hold
(see :mod:`annotate.core.storable`)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from annotate.core.storable import id_or_none


class IdsModelMultipleChoiceField(forms.ModelMultipleChoiceField):
    """A ``ModelMultipleChoiceField`` that refuses a value that is not an id
    (too large, signed, with other characters) with its own "invalid_pk_value"
    error before any query."""

    def _check_values(self, value: Iterable[Any]) -> Any:
        for pk in value:
            if id_or_none(pk) is None:
                raise ValidationError(self.error_messages["invalid_pk_value"], code="invalid_pk_value",
                                      params={"pk": str(pk)[:40]})
        return super()._check_values(value)
