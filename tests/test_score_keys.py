"""Every literal key the code reads from a stored score dict (``QuestionResult.scores``, ``ModelResult.scores``)
is a column the method registry declares: a misspelt or stale key silently reads nothing (``.get`` returns the
default), so the class is caught here, by reading the source.

A score dict is recognised by its name (anything called ``*score*``) or by where it comes from: a name bound,
in the same function, to an expression that reads ``QuestionResult`` / ``ModelResult`` rows or their ``scores``
field (``dict(QuestionResult.objects...values_list("question_id", "scores"))``, ``for s in ...``). Database
lookups into the stored JSON written as literals (``"scores__eip_scaled"``) are checked too."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from scoring.methods import methods

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("annotate", "scoring", "bench", "scripts", "eipsite")
#: Keys of other "score" dicts that are not stored method columns (a harness's per-sample scorer output).
NOT_STORED = {Path("annotate/catalog/loaders/harness/inspect_ai.py")}


def registry_columns() -> tuple[frozenset[str], frozenset[str]]:
    question = frozenset(c for m in methods() for c in m.question_columns)
    model = frozenset(c for m in methods() for c in m.model_columns)
    return question, model


def _origin(source: str) -> str | None:
    """'question', 'model' or 'any' when ``source`` reads stored scores, else None."""
    if "QuestionResult" in source:
        return "question"
    if "ModelResult" in source:
        return "model"
    if "'scores'" in source or '"scores"' in source or ".scores" in source:
        return "any"
    return None


def _bound_names(target: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def literal_score_reads(tree: ast.AST) -> list[tuple[int, str, str]]:
    """``(line, key, origin)`` of each ``x.get("key")`` / ``x["key"]`` on a score dict ``x``."""
    found = []
    scopes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module)]
    for scope in scopes:
        tainted: dict[str, str] = {}
        for node in ast.walk(scope):
            pairs = []
            if isinstance(node, ast.Assign):
                pairs = [(t, node.value) for t in node.targets]
            elif isinstance(node, ast.For | ast.comprehension):
                pairs = [(node.target, node.iter)]
            for target, value in pairs:
                origin = _origin(ast.unparse(value))
                if origin is not None:
                    tainted.update(dict.fromkeys(_bound_names(target), origin))
        for node in ast.walk(scope):
            receiver = key = None
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                receiver, key = node.func.value, node.args[0].value
            elif (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                  and isinstance(node.slice.value, str)):
                receiver, key = node.value, node.slice.value
            if receiver is None:
                continue
            names = set(_bound_names(receiver))
            origins = {tainted[n] for n in names if n in tainted}
            if "score" in ast.unparse(receiver).lower():
                origins.add("any")
            for origin in origins:
                found.append((node.lineno, key, origin))
    return sorted(set(found))


def json_lookups(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, key)`` of each database lookup into the stored scores written as a literal, ``"scores__key"``."""
    return [(node.lineno, m.group(1)) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            for m in [re.match(r"scores__(\w+?)(?:__\w+)?$", node.value)] if m]


def wrong_keys(path: Path, source: str) -> list[str]:
    question, model = registry_columns()
    allowed = {"question": question, "model": model, "any": question | model}
    tree = ast.parse(source)
    return ([f"{path}:{line}: score key {key!r} is not a registry column ({origin} scores)"
             for line, key, origin in literal_score_reads(tree) if key not in allowed[origin]]
            + [f"{path}:{line}: score lookup key {key!r} is not a registry column"
               for line, key in json_lookups(tree) if key not in allowed["any"]])


def test_every_literal_score_key_in_the_code_is_a_registry_column():
    problems, n_files = [], 0
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if "migrations" in relative.parts or relative in NOT_STORED:
                continue
            n_files += 1
            problems += wrong_keys(relative, path.read_text(encoding="utf-8"))
    assert n_files > 100
    assert problems == []


def test_the_scan_catches_a_question_score_read_by_a_model_column_or_a_made_up_key():
    """The demo once read the question scores by "accuracy" (a model column) and got 0.0 for every question."""
    old_demo = '''
def _human_difficulty(run, question_ids):
    errors = dict(QuestionResult.objects.filter(run=run).values_list("question_id", "scores"))
    return {pk: float((errors.get(pk) or {}).get("accuracy", 0.0)) for pk in question_ids}

def other(rows):
    for pk, scores in rows:
        yield scores["eip_scaled"], scores["eip_scled"]

def lookup(run):
    return QuestionResult.objects.filter(run=run).values_list("scores__eip_scaled", "scores__irt1pl")
'''
    assert wrong_keys(Path("x.py"), old_demo) == [
        "x.py:4: score key 'accuracy' is not a registry column (question scores)",
        "x.py:8: score key 'eip_scled' is not a registry column (any scores)",
        "x.py:11: score lookup key 'irt1pl' is not a registry column",
    ]
