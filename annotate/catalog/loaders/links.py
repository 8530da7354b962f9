"""Refuse symbolic links among files read from disk (``manage.py load_responses``).

The admin and the API never unpack a link from an uploaded ``.zip``
(:data:`annotate.catalog.services.upload_store.ZIP_LINK_MEMBER`); the command-line loaders
follow the same rule for ``--folder``, ``--logs`` and the files given to
``--responses``/``--questions``/``--models``: a link could point anywhere on
the machine (outside the folder), so a link is refused, naming it, before any
file is read.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from annotate.catalog.loaders.base import LoadError, Problem

LINK_REFUSED = (
    "is a symbolic link (to {target!r}); links are not followed (the admin refuses them too): "
    "give the files themselves"
)
#: Links listed in one error before the rest are only counted.
MAX_LISTED_LINKS = 20


def _target(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def links_under(paths: Iterable[Path]) -> list[Path]:
    """Every symbolic link among ``paths`` and, for folders, below them.

    Folders are walked without following links; a link to a folder is
    reported and not entered. Sorted by path within each given path.
    """
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_symlink():
            found.append(path)
            continue
        if not path.is_dir():
            continue
        for root, dirs, files in os.walk(path, followlinks=False):
            for name in sorted(dirs + files):
                child = Path(root) / name
                if child.is_symlink():
                    found.append(child)
    return found


def refuse_links(paths: Iterable[Path]) -> None:
    """Raise :class:`LoadError` naming every symbolic link among or below ``paths``.

    Parameters
    ----------
    paths : iterable of Path
        Files and folders about to be read.

    Raises
    ------
    LoadError
        One problem per link (file = the link's path), nothing read.
    """
    links = links_under(paths)
    if links:
        problems = [Problem(file=str(link), message=LINK_REFUSED.format(target=_target(link)))
                    for link in links[:MAX_LISTED_LINKS]]
        raise LoadError(problems, n_unlisted=len(links) - len(problems))
