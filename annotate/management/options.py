"""Number options of the commands, bounded like the forms: a value the
database column cannot hold (or beyond the option's own range) is refused by
the option parser, so the ``CommandError`` names the option ("argument
--pairs: ...") and nothing is written."""
from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from annotate.core import column_field, short_echo


def column_option(model: type[models.Model], name: str, **kwargs: Any) -> Callable[[str], Any]:
    """An argparse ``type`` for a number stored in ``model``'s field ``name``.

    Parameters
    ----------
    model : Model subclass
    name : str
        A number field of ``model`` (see :func:`annotate.core.forms.column_field`).
    **kwargs
        The form field's arguments (``min_value``, ``max_value``, ...), narrowed
        to the column as :func:`annotate.core.forms.column_field` does.

    Returns
    -------
    callable (str) -> number
        Parses the option's text with the form field; raises
        ``argparse.ArgumentTypeError`` with the field's message and the first
        characters of the value, which the command parser turns into a
        ``CommandError`` naming the option.
    """
    field = column_field(model, name, **kwargs)

    def parse(text: str) -> Any:
        try:
            return field.clean(text)
        except ValidationError as error:
            raise argparse.ArgumentTypeError(f"{' '.join(error.messages)} Got {short_echo(text)!r}.") from None

    parse.__name__ = name
    return parse
