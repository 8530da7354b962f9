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


#: The most characters of a refused value an error message repeats.
ECHO_CHARS = 80


def short_echo(value: object, limit: int = ECHO_CHARS) -> str:
    """``value`` as text, cut to its first ``limit`` characters and "…" when longer.

    Parameters
    ----------
    value : object
        A value a form refused (``str()`` of it is shown).
    limit : int, default 80
        Characters kept.

    Returns
    -------
    str
        The text itself when at most ``limit`` characters long.

    Examples
    --------
    >>> short_echo("x" * 100, 3)
    'xxx…'
    """
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _short_params(error: ValidationError) -> ValidationError:
    for item in error.error_list:
        if isinstance(item.params, dict) and "value" in item.params:
            item.params = {**item.params, "value": short_echo(item.params["value"])}
    return error


class _ShortEcho:
    """A choice field whose "not one of the choices" error repeats at most
    :data:`ECHO_CHARS` characters of the refused value (a tampered value may be
    thousands of characters long)."""

    def validate(self, value: Any) -> None:
        try:
            super().validate(value)  # type: ignore[misc]
        except ValidationError as error:
            raise _short_params(error) from None


class ShortEchoChoiceField(_ShortEcho, forms.ChoiceField):
    """``forms.ChoiceField`` with a bounded echo (:class:`_ShortEcho`)."""


class ShortEchoTypedChoiceField(_ShortEcho, forms.TypedChoiceField):
    """``forms.TypedChoiceField`` with a bounded echo (:class:`_ShortEcho`)."""


class ShortEchoMultipleChoiceField(_ShortEcho, forms.MultipleChoiceField):
    """``forms.MultipleChoiceField`` with a bounded echo (:class:`_ShortEcho`)."""
