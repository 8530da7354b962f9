"""The vendored KaTeX (annotate/static/vendor/katex-0.19.1): every file its
stylesheet names is there (WhiteNoise's manifest storage fails on a missing
one), the licence travels with it, and the judging page loads this version."""
from __future__ import annotations

import re
from pathlib import Path

import annotate

KATEX = Path(annotate.__file__).parent / "static" / "vendor" / "katex-0.19.1"
TEMPLATES = Path(annotate.__file__).parent / "templates" / "annotate" / "judging"


def test_every_font_the_stylesheet_names_is_vendored():
    css = (KATEX / "katex.min.css").read_text(encoding="utf-8")
    urls = set(re.findall(r"url\(([^)]+)\)", css))
    assert len(urls) == 20  # KaTeX 0.19.1 has 20 font faces, one woff2 file each
    assert all(url.endswith(".woff2") for url in urls)
    assert all((KATEX / url).is_file() for url in urls)


def test_the_licence_and_the_scripts_are_there():
    assert "MIT License" in (KATEX / "LICENSE").read_text(encoding="utf-8")
    for name in ("katex.min.js", "katex.min.css", "contrib/auto-render.min.js"):
        assert (KATEX / name).stat().st_size > 1000, name


def test_the_judging_page_loads_the_vendored_version():
    include = (TEMPLATES / "_katex.html").read_text(encoding="utf-8")
    assert "vendor/katex-0.19.1/katex.min.js" in include and "vendor/katex-0.19.1/katex.min.css" in include
    assert "http" not in include and "cdn" not in include.lower()  # our static files only
