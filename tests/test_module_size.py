"""No module under ``annotate/`` or ``scoring/`` (migrations aside) is longer than 800 lines.

A longer module usually holds two responsibilities: split it along them.
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 800


def module_lengths() -> dict[str, int]:
    """Lines per module, by path relative to the repository."""
    return {p.relative_to(ROOT).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
            for top in ("annotate", "scoring") for p in (ROOT / top).rglob("*.py") if "migrations" not in p.parts}


def test_no_module_is_longer_than_800_lines():
    lengths = module_lengths()
    assert len(lengths) > 150  # the walk found the tree
    too_long = {path: n for path, n in sorted(lengths.items()) if n > MAX_LINES}
    assert too_long == {}, f"modules over {MAX_LINES} lines (split them by responsibility): {too_long}"


def test_the_count_is_of_lines_not_bytes(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("x = 1\n" * 800 + "y = 2", encoding="utf-8")
    assert len(module.read_text(encoding="utf-8").splitlines()) == 801 > MAX_LINES
