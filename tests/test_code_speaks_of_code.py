"""Comments and docstrings speak of the code, not of the project's history.

An issue number ("issue 16", "issues 11 and 12", "#42") in a comment or a
docstring sends the reader to a tracker instead of explaining the code; that
history belongs in commit messages and ``docs/``. Checked by reading the
source: Python comments (``tokenize``) and docstrings (``ast``) under
``annotate/``, ``scoring/``, ``eipsite/`` and ``bench/``, template comments
(``{# #}``, ``{% comment %}``, ``<!-- -->``) and the site's own CSS and
JavaScript comments. String values the code uses (a hex colour, an HTML
entity) are not comments and are not read.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYTHON_FOLDERS = ("annotate", "scoring", "eipsite", "bench")
#: "issue 16", "Issues 11 and 12", "issue #4553", or a bare "#42" (a word boundary before "#").
CITATION = re.compile(r"\bissues?\s+#?\d+|(?<![\w&#/])#\d+\b", re.IGNORECASE)
TEMPLATE_COMMENT = re.compile(r"\{#.*?#\}|\{%\s*comment\s*%\}.*?\{%\s*endcomment\s*%\}|<!--.*?-->", re.DOTALL)
BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
LINE_COMMENT = re.compile(r"(?<![:\"'])//[^\n]*")


def _docstrings(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                found.append((first.lineno, first.value.value))
    return found


def python_citations(source: str, path: str) -> list[str]:
    """``path:line: text`` of every citation in a Python module's comments and docstrings."""
    texts = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(source).readline)
             if tok.type == tokenize.COMMENT]
    texts += _docstrings(ast.parse(source, filename=path))
    return _cited(texts, path)


def text_citations(source: str, path: str) -> list[str]:
    """The same for a template (its comments) or a CSS/JavaScript file (its comments)."""
    patterns = [TEMPLATE_COMMENT] if path.endswith(".html") else [BLOCK_COMMENT, LINE_COMMENT]
    texts = [(source.count("\n", 0, m.start()) + 1, m.group(0)) for p in patterns for m in p.finditer(source)]
    return _cited(texts, path)


def _cited(texts: list[tuple[int, str]], path: str) -> list[str]:
    out = []
    for line, text in texts:
        for match in CITATION.finditer(text):
            out.append(f"{path}:{line + text.count(chr(10), 0, match.start())}: {match.group(0)!r}")
    return sorted(set(out))


def _files() -> list[Path]:
    python = [p for folder in PYTHON_FOLDERS for p in (ROOT / folder).rglob("*.py") if "migrations" not in p.parts]
    templates = list((ROOT / "annotate" / "templates").rglob("*.html"))
    static = [p for ext in ("*.css", "*.js") for p in (ROOT / "annotate" / "static" / "annotate").rglob(ext)]
    return sorted(python + templates + static)


def test_no_comment_or_docstring_cites_an_issue():
    files = _files()
    assert len(files) > 150
    found = []
    for p in files:
        relative = p.relative_to(ROOT).as_posix()
        source = p.read_text(encoding="utf-8")
        found += python_citations(source, relative) if p.suffix == ".py" else text_citations(source, relative)
    assert found == [], "issue citations in comments or docstrings (say what the code does; history goes to " \
                        "commit messages and docs/):\n" + "\n".join(found)


@pytest.mark.parametrize(("source", "expected"), [
    ('"""Loading (issue 3)."""\n', ["m.py:1: 'issue 3'"]),
    ("x = 1  # see Issue #12\n", ["m.py:1: 'Issue #12'"]),
    ("def f():\n    '''Changed in issues 11 and 12.'''\n", ["m.py:2: 'issues 11'"]),
    ("class K:\n    \"\"\"A.\n\n    Fixes #7.\n    \"\"\"\n", ["m.py:4: '#7'"]),
    ("#: the limit (issue 16, point 2)\nLIMIT = 3\n", ["m.py:1: 'issue 16'"]),
])
def test_the_checker_finds_a_citation_and_names_its_line(source, expected):
    assert python_citations(source, "m.py") == expected


@pytest.mark.parametrize("source", [
    'COLOUR = "#2b6cb0"\nENTITY = "&#36;"\nTITLE = "issue 3"  # a value, not a comment\n',
    "# the upstream fix: https://github.com/org/repo/pull/3145\n",
    '"""An issue with the data: 3 rows."""\n',
])
def test_the_checker_leaves_code_values_and_links_alone(source):
    assert python_citations(source, "m.py") == []


@pytest.mark.parametrize(("path", "source", "expected"), [
    ("t.html", "<p>x</p>\n{# kept for issue 4 #}\n<!-- see #12 -->\n", ["t.html:2: 'issue 4'", "t.html:3: '#12'"]),
    ("s.css", "a { color: #123456; }\n/* --- judging (issue 4) --- */\n", ["s.css:2: 'issue 4'"]),
    ("s.js", "const url = 'https://x/#1';\n// issue 9: focus\n", ["s.js:2: 'issue 9'"]),
    ("t.html", '<a href="#top">issue 5 of the journal</a>\n', []),
])
def test_the_checker_reads_template_css_and_script_comments(path, source, expected):
    assert text_citations(source, path) == expected
