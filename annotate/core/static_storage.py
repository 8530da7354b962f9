"""The production storage of static files: WhiteNoise's compressed manifest
storage, remembering the URL of each file it was asked for.

``{% static %}`` asks the storage for a URL every time a page is rendered;
with a manifest that means looking the file's hashed name up, splitting and
joining the URL, about as much as the rest of a small page's variables
together (the judging page names seven files). A file's URL cannot change
while the storage lives: the manifest is read when the storage is made, and
Django makes a new storage when a setting it depends on changes
(``STORAGES``, ``STATIC_ROOT``, ``STATIC_URL``). The URLs are forgotten when
``collectstatic`` writes a new manifest, and kept apart by ``DEBUG`` (which
the manifest storage reads at each call: with it on, the files' own names).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.conf import settings
from whitenoise.storage import CompressedManifestStaticFilesStorage

#: At most this many URLs are kept (templates name a few dozen files).
MAX_REMEMBERED_URLS = 1024


class ManifestStaticStorage(CompressedManifestStaticFilesStorage):
    """:class:`whitenoise.storage.CompressedManifestStaticFilesStorage` whose
    :meth:`url` computes each file's URL once.

    A name the manifest lacks raises as before, every time (nothing is
    remembered for it).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._urls: dict[tuple[str, bool, bool], str] = {}

    def url(self, name: str, force: bool = False) -> str:
        key = (name, force, settings.DEBUG)
        url = self._urls.get(key)
        if url is None:
            url = super().url(name, force)
            if len(self._urls) < MAX_REMEMBERED_URLS:
                self._urls[key] = url
        return url

    def post_process(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        self._urls.clear()
        yield from super().post_process(*args, **kwargs)
        self._urls.clear()
