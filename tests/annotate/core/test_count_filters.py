"""Every count a page prints goes through the ``count`` filter (``annotate_numbers``): 316929 reads "316,929".

A template expression names a count by its last attribute: ``n_*`` (``n_pairs``, ``n_votes``), or one of the
monitor's and the completion summary's counts. Such an expression printed bare (no filter) is a count without
its thousands separator. Filters that do not print the number (``pluralize``) and form fields are left alone.
"""
from __future__ import annotations

import re
from pathlib import Path

import annotate
from annotate.templatetags.annotate_numbers import count

TEMPLATES = Path(annotate.__file__).parent / "templates"
COUNT_NAME = re.compile(r"(?:^|\.)(?:n_[a-z_]+|judged|skipped|assigned|passed|voted|failed|count)$")
EXPRESSION = re.compile(r"\{\{\s*([^}|\s]+)\s*(\|[^}]*)?\}\}")


def _bare_counts() -> list[str]:
    found = []
    for path in sorted(TEMPLATES.rglob("*.html")):
        name = path.relative_to(TEMPLATES).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in EXPRESSION.finditer(line):
                expression, filters = match.group(1), match.group(2)
                if COUNT_NAME.search(expression) and not expression.startswith(("form.", "f.")) and not filters:
                    found.append(f"{name}:{number}: {match.group(0)}")
    return found


def test_no_template_prints_a_count_without_the_count_filter():
    assert _bare_counts() == []


def test_the_scan_finds_a_bare_count():
    assert COUNT_NAME.search("monitor.n_votes") and COUNT_NAME.search("e.judged")
    assert not COUNT_NAME.search("study.seed") and not COUNT_NAME.search("e.participation_id")
    assert EXPRESSION.fullmatch("{{ live.n_pairs }}").group(2) is None


def test_the_count_filter_separates_thousands():
    assert (count(316929), count(1500), count(999), count(None)) == ("316,929", "1,500", "999", "–")
