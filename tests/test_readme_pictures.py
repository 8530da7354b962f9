"""The README's pictures are current: each one was taken (scripts/screenshots.py)
after the last change of every template and style sheet it shows.

The check compares content hashes recorded in docs/img/manifest.json when the
pictures were taken, not file times, so it decides the same way in a fresh
clone (where every file has the clone's time)."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "docs" / "img" / "manifest.json"
STALE = ("{picture} is older than {shown} (changed since the picture was taken): "
         "run .venv/bin/python scripts/screenshots.py")


def _screenshots():
    spec = importlib.util.spec_from_file_location("screenshots", ROOT / "scripts" / "screenshots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def readme_pictures() -> list[str]:
    return sorted(set(re.findall(r"\(docs/img/([\w-]+\.png)\)", (ROOT / "README.md").read_text(encoding="utf-8"))))


def stale_pictures(manifest: dict, root: Path = ROOT) -> list[str]:
    """One message per README picture that is missing from the manifest, replaced since, or older than a file
    it shows."""
    problems = []
    for picture in readme_pictures():
        entry = manifest.get(picture)
        if entry is None:
            problems.append(f"{picture} is not in {MANIFEST.name}: run .venv/bin/python scripts/screenshots.py")
            continue
        if _sha256(root / "docs" / "img" / picture) != entry["sha256"]:
            problems.append(f"{picture} was replaced by hand: run .venv/bin/python scripts/screenshots.py")
        for shown, digest in entry["shows"].items():
            path = root / shown
            if not path.is_file() or _sha256(path) != digest:
                problems.append(STALE.format(picture=picture, shown=shown))
    return problems


def test_the_readme_shows_the_three_pictures_the_script_takes():
    assert readme_pictures() == sorted(f"{name}.png" for name in _screenshots().README_SHOTS)


def test_every_readme_picture_is_newer_than_the_templates_it_shows():
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    assert stale_pictures(manifest) == []
    # the manifest names what the script says each picture shows
    assert {p: sorted(e["shows"]) for p, e in manifest.items()} == {
        f"{name}.png": sorted(shown) for name, shown in _screenshots().SHOWN.items()}


def test_a_changed_template_makes_its_picture_stale():
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    changed = dict(manifest)
    changed["report.png"] = {**manifest["report.png"],
                             "shows": {**manifest["report.png"]["shows"],
                                       "annotate/templates/annotate/reports/report.html": "0" * 64}}
    assert stale_pictures(changed) == [STALE.format(picture="report.png",
                                                    shown="annotate/templates/annotate/reports/report.html")]
    del changed["judging.png"]
    assert any(p.startswith("judging.png is not in") for p in stale_pictures(changed))
