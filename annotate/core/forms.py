"""Form fields that refuse, as a form error, values the database cannot hold
(see :mod:`annotate.core.storable`)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations

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


class _ColumnDecimalField(forms.DecimalField):
    """A ``DecimalField`` that reads a signed zero ("-0", "-0.00") as zero."""

    def to_python(self, value: Any) -> Any:
        number = super().to_python(value)
        return number.copy_abs() if number is not None and number.is_zero() else number


#: The attribute a form field built by :func:`column_field` carries: the model field it is stored in.
COLUMN_ATTR = "column"


def column_field(model: type[models.Model], name: str, **kwargs: Any) -> forms.Field:
    """A form field for a number stored in ``model``'s field ``name``, refusing what that column cannot hold.

    Parameters
    ----------
    model : Model subclass
    name : str
        An ``IntegerField``-family, ``DecimalField`` or ``FloatField`` of ``model``.
    **kwargs
        The form field's arguments (label, required, min_value, ...). ``min_value``
        and ``max_value`` are narrowed to the column's integer range (the
        portable one, as on PostgreSQL: 32 bits for ``IntegerField``);
        ``decimal_places`` to the column's; ``max_digits`` is the column's.

    Returns
    -------
    forms.Field
        A ``forms.IntegerField``, ``forms.DecimalField`` (a signed zero read as
        zero) or ``forms.FloatField`` (the last two refuse NaN and infinities), with the model field in its
        ``column`` attribute.

    Raises
    ------
    TypeError
        If the model field is not a number.
    """
    column = model._meta.get_field(name)
    if isinstance(column, models.DecimalField):
        places = min(kwargs.pop("decimal_places", column.decimal_places), column.decimal_places)
        field: forms.Field = _ColumnDecimalField(max_digits=column.max_digits, decimal_places=places, **kwargs)
    elif isinstance(column, models.IntegerField):
        low, high = BaseDatabaseOperations.integer_field_ranges[column.get_internal_type()]
        given_low, given_high = kwargs.pop("min_value", None), kwargs.pop("max_value", None)
        field = forms.IntegerField(min_value=low if given_low is None else max(low, given_low),
                                   max_value=high if given_high is None else min(high, given_high), **kwargs)
    elif isinstance(column, models.FloatField):
        field = forms.FloatField(**kwargs)
    else:
        raise TypeError(f"{model.__name__}.{name} is not a number field")
    setattr(field, COLUMN_ATTR, column)
    return field


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
