"""The production storage of static files gives WhiteNoise's URLs, each computed once.

The manifest is written by hand: the URLs it leads to are the expected values.
"""
from __future__ import annotations

import json

import pytest
from whitenoise.storage import CompressedManifestStaticFilesStorage

from annotate.core.static_storage import ManifestStaticStorage

HASHED = {"annotate/site.css": "annotate/site.0123abcd.css", "annotate/math.js": "annotate/math.89ef4567.js"}


@pytest.fixture
def storages(tmp_path, settings, monkeypatch):
    """(storage, calls): a storage on a hand-written manifest, and the names WhiteNoise's own ``url`` was asked for."""
    settings.DEBUG = False
    (tmp_path / "staticfiles.json").write_text(json.dumps({"paths": HASHED, "version": "1.1"}))
    storage = ManifestStaticStorage(location=str(tmp_path), base_url="/static/")
    calls = []
    original = CompressedManifestStaticFilesStorage.url

    def counted(self, name, force=False):
        calls.append(name)
        return original(self, name, force)

    monkeypatch.setattr(CompressedManifestStaticFilesStorage, "url", counted)
    return storage, calls


def test_each_url_is_the_manifests_and_is_computed_once(storages):
    storage, calls = storages
    for _ in range(3):
        assert storage.url("annotate/site.css") == "/static/annotate/site.0123abcd.css"
        assert storage.url("annotate/math.js") == "/static/annotate/math.89ef4567.js"
    assert calls == ["annotate/site.css", "annotate/math.js"]


def test_a_name_the_manifest_lacks_raises_every_time(storages):
    storage, calls = storages
    for _ in range(2):
        with pytest.raises(ValueError, match="Missing staticfiles manifest entry"):
            storage.url("annotate/missing.css")
    assert calls == ["annotate/missing.css", "annotate/missing.css"]


def test_with_debug_on_the_files_own_names_are_given(storages, settings):
    storage, _calls = storages
    assert storage.url("annotate/site.css") == "/static/annotate/site.0123abcd.css"
    settings.DEBUG = True
    assert storage.url("annotate/site.css") == "/static/annotate/site.css"
    settings.DEBUG = False
    assert storage.url("annotate/site.css") == "/static/annotate/site.0123abcd.css"


def test_a_new_manifest_from_post_processing_forgets_the_urls(storages, monkeypatch):
    storage, calls = storages
    storage.url("annotate/site.css")
    monkeypatch.setattr(CompressedManifestStaticFilesStorage, "post_process", lambda self, *a, **k: iter(()))
    assert list(storage.post_process({})) == []
    storage.url("annotate/site.css")
    assert calls == ["annotate/site.css", "annotate/site.css"]
