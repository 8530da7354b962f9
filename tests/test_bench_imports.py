"""The benchmarks keep up with the code they measure.

``python -m bench`` is run by hand, not by the suite, so a module that moves
breaks a benchmark silently. Every ``from X import Y`` of the project's own
packages in ``bench/`` must resolve: in the benchmark modules themselves, and
in the scripts they hand to child processes as strings.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
OURS = ("scoring", "annotate", "eipsite", "bench", "tests")


def _imports_in(tree: ast.AST, where: str) -> list[tuple[str, str, str]]:
    """``(module, name, where)`` for every project import in ``tree`` and in code strings inside it."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in OURS:
                found += [(node.module, alias.name, f"{where}:{node.lineno}") for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, "", f"{where}:{node.lineno}") for alias in node.names
                      if alias.name.split(".")[0] in OURS]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "import " in node.value:
            try:
                inner = ast.parse(node.value)
            except SyntaxError:
                continue  # prose, not a script
            found += _imports_in(inner, f"{where}:{node.lineno} (child script)")
    return found


def _all_imports() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(BENCH.glob("*.py")):
        found += _imports_in(ast.parse(path.read_text(encoding="utf-8")), str(path.relative_to(ROOT)))
    return found


def test_the_scan_sees_module_and_child_script_imports():
    code = 'from scoring.eip import eip\nCHILD = """\nimport sys\nfrom annotate.core import x\n"""\n'
    found = _imports_in(ast.parse(code), "f.py")
    assert [(m, n) for m, n, _ in found] == [("scoring.eip", "eip"), ("annotate.core", "x")]
    assert "(child script)" in found[1][2]


def test_the_benchmarks_import_something_of_ours():
    modules = {m for m, _, _ in _all_imports()}
    assert {"scoring.irt_mml", "scoring.mirt"} <= modules


@pytest.mark.parametrize(("module", "name", "where"), _all_imports(), ids=lambda v: str(v))
def test_every_project_import_in_the_benchmarks_resolves(module, name, where, db):
    imported = importlib.import_module(module)
    if name:
        assert hasattr(imported, name) or importlib.util.find_spec(f"{module}.{name}") is not None, (
            f"{where}: {module} has no {name}")
