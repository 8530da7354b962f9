"""Options shared by the commands.

Number options are bounded like the forms: a value the database column cannot
hold (or beyond the option's own range) is refused by the option parser, so
the ``CommandError`` names the option ("argument --pairs: ...") and nothing is
written. ``--base-url`` says where people reach the site, for the links a
command prints; it defaults to the ``SITE_URL`` setting."""
from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
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


ERR_BASE_URL = "--base-url must start with http:// or https://; got {value!r}"


def add_base_url_option(parser: argparse.ArgumentParser, *, purpose: str) -> None:
    """Add ``--base-url``: where people reach the site, for ``purpose`` (the links the command prints).

    Its default is the ``SITE_URL`` setting (the environment variable of the
    same name, ``eipsite/settings.py``), read when the command runs.
    """
    parser.add_argument("--base-url", default=settings.SITE_URL, metavar="URL",
                        help=f"where the site is served, for {purpose} (default: the SITE_URL setting, "
                             "%(default)s)")


def checked_base_url(value: str) -> str:
    """The ``--base-url`` option's value without its trailing slash, checked before anything is written.

    Parameters
    ----------
    value : str
        ``http://`` or ``https://``, a host, an optional port and path prefix.

    Returns
    -------
    str
        ``value`` without its trailing slash: a printed link is this, then the
        site's path (from ``reverse``, starting with /).

    Raises
    ------
    CommandError
        If ``value`` does not start with ``http://`` or ``https://``
        (:data:`ERR_BASE_URL`).
    """
    if not value.startswith(("http://", "https://")):
        raise CommandError(ERR_BASE_URL.format(value=value))
    return value.rstrip("/")
