"""The layers of the house, checked by reading the source (``ast``; nothing is
imported):

* a selector (``annotate/selectors/``) never imports a service, a view, an
  admin module or the API: reads do not depend on writes;
* a view (``annotate/views/``), an admin module (``annotate/admin/``), an API
  module (``annotate/api/``) or a management command never writes to the
  database itself: it calls a service;
* ``scoring/`` never imports Django (nor ``annotate``/``eipsite``): it is pure
  numpy/scipy;
* no import circle anywhere in ``annotate/`` or ``scoring/``, counting imports
  inside functions and ``if TYPE_CHECKING:`` blocks: two modules that need
  each other meet through a third (services enqueue background tasks by name,
  :mod:`annotate.core.task_names`);
* forms, template tags and the task module do not write either (tasks call
  services), and a ModelAdmin's ``save_model``/``delete_model``/actions call
  services like the rest of ``annotate/admin/``;
* a management command never imports another command module; shared command
  helpers live in ``annotate/management/`` (``progress.py``, ``lookups.py``).

What counts as a write (an attribute call; the receiver's type is unknown to
``ast``, so the rule is by name):

* ``.save()``, ``.delete()``, ``.create()``, ``.bulk_create()``,
  ``.bulk_update()``, ``.get_or_create()``, ``.update_or_create()`` on
  anything;
* ``.update()`` on a manager or queryset: the receiver is ``X.objects``, a
  chain of queryset calls (``X.objects.filter(...).update``), or a variable
  named ``queryset``/``qs``/``*_queryset``/``*_qs``. ``dict.update`` and a
  progress bar's ``update`` are not writes.

What counts as a read: any use of a model manager (``X.objects``) in a
view, an admin module or a management command, except as the first argument
of ``get_object_or_404``: a view may fetch the one object its URL names with
``get_object_or_404(Model, pk=...)`` (or ``Model.objects.select_related(...)``);
every other read (a filter, an ordering, a default choice, a lookup by name) is
a selector. (The API modules are left to the API's own branch of issue 11; only
their writes are checked.)
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

WRITE_CALLS = frozenset(
    {"save", "delete", "create", "bulk_create", "bulk_update", "get_or_create", "update_or_create"})
QUERYSET_CALLS = frozenset({
    "all", "filter", "exclude", "select_related", "prefetch_related", "order_by", "annotate", "only", "defer",
    "distinct", "using", "select_for_update", "none",
})
QUERYSET_NAME = re.compile(r"^(queryset|qs|.*_queryset|.*_qs)$")
#: Where a layer may not go, by the folder a module is in.
SELECTOR_FORBIDDEN = ("annotate.services", "annotate.views", "annotate.admin", "annotate.api")
SCORING_FORBIDDEN = ("django", "annotate", "eipsite")
COMMANDS_PACKAGE = "annotate.management.commands"
#: Folders and modules (relative to the repository) that must not write: they call a service.
NO_WRITE_FOLDERS = ("annotate/views/", "annotate/admin/", "annotate/api/", "annotate/management/commands/",
                    "annotate/forms/", "annotate/templatetags/", "annotate/tasks.py")
#: Folders whose modules read only through selectors (and get_object_or_404).
NO_READ_FOLDERS = ("annotate/views/", "annotate/admin/", "annotate/management/commands/", "annotate/forms/",
                   "annotate/templatetags/")
#: Queryset calls on a related manager (``study.pairs.filter(...)``, ``run.models_used.order_by(...)``).
RELATED_READ_CALLS = frozenset({
    "all", "filter", "exclude", "order_by", "select_related", "prefetch_related", "annotate", "values_list",
    "count", "exists", "aggregate", "first", "last", "in_bulk", "iterator", "only", "defer", "distinct",
})

# Exceptions that stay, each with its reason: (file, text on the line) -> reason. Empty today.
ALLOWED: dict[tuple[str, str], str] = {}

# ------------------------------------------------------------------------------------------
# KNOWN_PENDING -- TO BE EMPTIED BY THE INTEGRATOR OF ISSUE 11.
# Violations in files that other branches of issue 11 are rewriting at the same time as this
# one, listed only so this branch passes on its own:
# * annotate/api/tokens.py: the token writes move to a service on the django-ninja branch;
# * annotate/analyses/views.py: the file is being edited by the tidy-downloads branch; after that
#   merge the recent-runs read becomes annotate.analyses.selectors.analysis_runs_recent(kind=..., limit=20).
# (admin/catalog.py and api/uploads.py, rewritten by the upload-service branch, have no violation
# today.) An entry that no longer matches a violation fails test_known_pending_entries_are_still_needed,
# so the set cannot outlive its reason. Each entry: (file, text found on the offending line).
# ------------------------------------------------------------------------------------------
KNOWN_PENDING: set[tuple[str, str]] = {
}


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    text: str
    rule: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.text.strip()}"


def _module_name(path: str) -> str:
    parts = path.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """Every module ``tree`` imports, absolute, with its line (``from a import b``
    yields both ``a`` and ``a.b``: ``b`` may be a module)."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)] if node.level > 1 else anchor
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names if alias.name != "*"]
    return found


def _under(name: str, prefixes: tuple[str, ...]) -> str | None:
    return next((p for p in prefixes if name == p or name.startswith(p + ".")), None)


def _is_queryset(node: ast.expr) -> bool:
    """Whether ``node`` is visibly a manager or a queryset."""
    if isinstance(node, ast.Attribute) and node.attr == "objects":
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in QUERYSET_CALLS:
        return True
    return isinstance(node, ast.Name) and bool(QUERYSET_NAME.match(node.id))


def _writes(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name = node.func.attr
        if name in WRITE_CALLS or (name == "update" and _is_queryset(node.func.value)):
            found.append((node.lineno, name))
    return found


def _manager_reads(tree: ast.AST) -> list[int]:
    """Lines using ``X.objects`` outside the first argument of ``get_object_or_404``."""
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "get_object_or_404"
                and node.args):
            allowed |= {id(inner) for inner in ast.walk(node.args[0])}
        # ``X.objects.none()`` reads nothing: a form field's empty queryset until a selector fills it
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "none"
                and not node.args):
            allowed.add(id(node.func.value))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr == "objects" and id(node) not in allowed]


def _related_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """Lines reading through a related manager: ``x.rel.<queryset call>(...)`` (``rel`` not ``objects``)."""
    return [(node.lineno, f"{node.func.value.attr}.{node.func.attr}") for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in RELATED_READ_CALLS and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr != "objects"]


def check_source(source: str, path: str) -> list[Violation]:
    """The violations in one module, ``path`` relative to the repository root
    (it decides which rules apply)."""
    tree = ast.parse(source, filename=path)
    lines = source.splitlines()
    module = _module_name(path)
    violations = []

    def add(line: int, rule: str) -> None:
        violations.append(Violation(path, line, lines[line - 1] if line <= len(lines) else "", rule))

    imports = _imported_modules(tree, module, path.endswith("/__init__.py"))
    if path.startswith("annotate/selectors/"):
        for line, name in imports:
            if layer := _under(name, SELECTOR_FORBIDDEN):
                add(line, f"a selector imports {layer} (selectors never depend on services, views, admin or API)")
    if path.startswith("scoring/"):
        for line, name in imports:
            if layer := _under(name, SCORING_FORBIDDEN):
                add(line, f"scoring/ imports {layer} (scoring is pure numpy/scipy)")
    if path.startswith("annotate/management/commands/"):
        for line, name in imports:
            command = name.removeprefix(COMMANDS_PACKAGE + ".")
            if command != name and "." not in command and name != module:
                add(line, f"a command imports another command ({name}); share code through annotate/management/")
    if path.startswith(NO_WRITE_FOLDERS):
        for line, name in _writes(tree):
            add(line, f".{name}() writes to the database outside a service")
    if path.startswith(NO_READ_FOLDERS):
        for line in _manager_reads(tree):
            add(line, "reads through .objects outside a selector")
        for line, call in _related_reads(tree):
            add(line, f"reads through a related manager (.{call}) outside a selector")
    return sorted(set(violations), key=lambda v: (v.path, v.line, v.rule))


def _python_files() -> list[Path]:
    return sorted(p for folder in ("annotate", "scoring") for p in (ROOT / folder).rglob("*.py")
                  if "migrations" not in p.parts)


def all_violations() -> list[Violation]:
    found = []
    for path in _python_files():
        relative = path.relative_to(ROOT).as_posix()
        found += check_source(path.read_text(encoding="utf-8"), relative)
    return found


def _matches(violation: Violation, entries) -> bool:
    return any(violation.path == path and text in violation.text for path, text in entries)


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Module -> the modules of ``sources`` it imports anywhere (functions and type-only blocks
    included). ``sources`` maps a module name to ``(source, is_package)``. ``from a import b``
    counts as importing ``a.b`` when that is a module of ``sources``, else ``a``."""
    graph = {}
    for module, (source, is_package) in sources.items():
        package = module if is_package else module.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name in sources}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)] if node.level > 1 else anchor
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in node.names:
                    name = f"{base}.{alias.name}"
                    if name in sources:
                        targets.add(name)
                    elif base in sources:
                        targets.add(base)
        targets.discard(module)
        graph[module] = targets
    return graph


def import_circles(sources: dict[str, tuple[str, bool]]) -> list[list[str]]:
    """The import circles (strongly connected components of :func:`import_graph`), each sorted."""
    graph = import_graph(sources)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(circles)


def _sources() -> dict[str, tuple[str, bool]]:
    return {_module_name(p.relative_to(ROOT).as_posix()): (p.read_text(encoding="utf-8"), p.name == "__init__.py")
            for p in _python_files()}


# --- the house ---------------------------------------------------------------------------


def test_no_import_circle_in_annotate_or_scoring():
    circles = import_circles(_sources())
    assert circles == [], "import circles (make the two meet through a third module):\n" + "\n".join(
        " <-> ".join(c) for c in circles)


@pytest.mark.parametrize(("sources", "expected"), [
    # a top-level import one way, an import inside a function the other way
    ({"annotate.tasks": ("from annotate.runs.services.scoring import run\n", False),
      "annotate.runs.services.scoring": ("def enqueue():\n    from annotate.tasks import run_scoring\n", False)},
     [["annotate.runs.services.scoring", "annotate.tasks"]]),
    # a type-only import closes a circle too; relative imports are resolved
    ({"annotate.catalog.loaders.base": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                "    from annotate.catalog.loaders.dense import Cells\n", False),
      "annotate.catalog.loaders.dense": ("from .base import COLUMNS\n", False)},
     [["annotate.catalog.loaders.base", "annotate.catalog.loaders.dense"]]),
    # three modules around
    ({"scoring.a": ("import scoring.b\n", False), "scoring.b": ("from scoring import c\n", False),
      "scoring": ("", True), "scoring.c": ("def f():\n    from scoring.a import g\n", False)},
     [["scoring.a", "scoring.b", "scoring.c"]]),
    # meeting through a name: no circle
    ({"annotate.tasks": ("from annotate.runs.services.scoring import run\n", False),
      "annotate.runs.services.scoring": ("from annotate.core.task_names import task_enqueue\n", False),
      "annotate.core.task_names": ("from importlib import import_module\n", False)}, []),
    # a package importing its submodule, which takes a sibling's name from the package's submodule: no circle
    ({"annotate.reports.services": ("from annotate.reports.services.report import r\n", True),
      "annotate.reports.services.report": ("from annotate.reports.services import labels\n", False),
      "annotate.reports.services.labels": ("", False)}, []),
])
def test_the_circle_check_finds_circles_through_functions_and_type_only_imports(sources, expected):
    assert import_circles(sources) == expected


# --- the layers ----------------------------------------------------------------------------


def test_the_layers_are_kept():
    violations = [v for v in all_violations() if not _matches(v, ALLOWED) and not _matches(v, KNOWN_PENDING)]
    assert not violations, "layer violations (file:line: rule: code):\n" + "\n".join(map(str, violations))


def test_known_pending_entries_are_still_needed():
    violations = all_violations()
    stale = sorted(e for e in KNOWN_PENDING if not _matches_entry(e, violations))
    assert not stale, f"KNOWN_PENDING entries that match no violation any more (remove them): {stale}"


def test_allowed_exceptions_are_still_needed_and_give_a_reason():
    violations = all_violations()
    for entry, reason in ALLOWED.items():
        assert reason.strip(), f"ALLOWED {entry} gives no reason"
        assert _matches_entry(entry, violations), f"ALLOWED {entry} matches no violation any more (remove it)"


def _matches_entry(entry: tuple[str, str], violations: list[Violation]) -> bool:
    return any(_matches(v, [entry]) for v in violations)


def test_it_reads_every_layer():
    # The walk finds the folders the rules are about (a renamed folder must not silence a rule).
    paths = {p.relative_to(ROOT).as_posix() for p in _python_files()}
    for folder in ("annotate/selectors/", "annotate/views/", "annotate/admin/", "annotate/api/",
                   "annotate/management/commands/", "scoring/"):
        assert any(p.startswith(folder) for p in paths), folder


# --- the checker catches what it should ---------------------------------------------------


@pytest.mark.parametrize(("path", "source", "expected"), [
    ("annotate/selectors/x.py", "import os\nfrom annotate.runs.services.scoring import DEFAULT_PARAMS\n",
     [(2, "a selector imports annotate.services")]),
    ("annotate/selectors/x.py", "from annotate import views\n", [(1, "a selector imports annotate.views")]),
    ("annotate/selectors/x.py", "from ..api import tokens\n", [(1, "a selector imports annotate.api")]),
    ("annotate/selectors/x.py", "import annotate.studies.admin.studies\n", [(1, "a selector imports annotate.admin")]),
    ("annotate/selectors/__init__.py", "from ..services import scoring\n",
     [(1, "a selector imports annotate.services")]),
    ("annotate/management/commands/__init__.py", "from . import b\n",
     [(1, "a command imports another command (annotate.management.commands.b)")]),
    ("scoring/eip.py", "import numpy as np\nfrom django.db import models\n", [(2, "scoring/ imports django")]),
    ("scoring/sub/m.py", "import django\n", [(1, "scoring/ imports django")]),
    ("annotate/management/commands/a.py", "from annotate.management.commands.b import helper\n",
     [(1, "a command imports another command (annotate.management.commands.b)")]),
    ("annotate/management/commands/a.py", "from .b import helper\n",
     [(1, "a command imports another command (annotate.management.commands.b)")]),
    ("annotate/views/x.py", "def v(request, study):\n    study.name = 'x'\n    study.save()\n",
     [(3, ".save() writes")]),
    ("annotate/admin/x.py", "def act(self, request, queryset):\n    queryset.update(status='closed')\n",
     [(2, ".update() writes")]),
    ("annotate/api/x.py", "Token.objects.filter(pk=1).update(last_used_at=now)\nToken.objects.create(name='a')\n",
     [(1, ".update() writes"), (2, ".create() writes")]),
    ("annotate/management/commands/x.py", "Study.objects.get_or_create(name='a')\nrow.delete()\n",
     [(1, ".get_or_create() writes"), (1, "reads through .objects"), (2, ".delete() writes")]),
    ("annotate/views/x.py", "Pair.objects.bulk_create(pairs)\nStudy.objects.update_or_create(name='a')\n",
     [(1, ".bulk_create() writes"), (1, "reads through .objects"), (2, ".update_or_create() writes"),
      (2, "reads through .objects")]),
    ("annotate/views/x.py", "def v(request):\n    rows = Study.objects.filter(status='open')\n",
     [(2, "reads through .objects outside a selector")]),
    ("annotate/management/commands/x.py", "user = get_user_model().objects.filter(username=name).first()\n",
     [(1, "reads through .objects outside a selector")]),
    ("annotate/admin/x.py", "x = get_object_or_404(Study, pk=Study.objects.count())\n",
     [(1, "reads through .objects outside a selector")]),
    ("annotate/admin/x.py", "class A:\n    def save_model(self, request, obj, form, change):\n        obj.save()\n",
     [(3, ".save() writes")]),
    ("annotate/admin/x.py", "class A:\n    def save_formset(self, request, form, formset, change):\n"
                            "        formset.save()\n", [(3, ".save() writes")]),
    ("annotate/forms/x.py", "class F:\n    def save(self):\n        self.instance.save()\n",
     [(3, ".save() writes")]),
    ("annotate/templatetags/x.py", "def tag(study):\n    study.pairs.all().delete()\n",
     [(2, ".delete() writes"), (2, "reads through a related manager (.pairs.all)")]),
    ("annotate/views/x.py", "def v(request, study):\n    subjects = study.subjects.order_by('name')\n",
     [(2, "reads through a related manager (.subjects.order_by) outside a selector")]),
    ("annotate/forms/x.py", "def initial(study):\n    return list(study.members.all())\n",
     [(2, "reads through a related manager (.members.all)")]),
    ("annotate/management/commands/x.py", "n = study.pool.count()\n", [(1, "reads through a related manager")]),
    ("annotate/tasks.py", "def run(run_id):\n    ScoringRun.objects.filter(pk=run_id).update(status='done')\n",
     [(2, ".update() writes")]),
])
def test_the_checker_names_file_and_line_of_a_violation(path, source, expected):
    found = check_source(source, path)
    assert [(v.path, v.line) for v in found] == [(path, line) for line, _ in expected]
    for v, (_, rule) in zip(found, expected, strict=True):
        assert v.rule.startswith(rule), v
        assert str(v).startswith(f"{path}:{v.line}: {rule}")


@pytest.mark.parametrize(("path", "source"), [
    # selectors may use models, other selectors and scoring
    ("annotate/selectors/x.py", "from annotate.models import Study\nfrom annotate.catalog.selectors.catalog import f\n"
                                "from scoring.methods import methods\n"),
    # a request's parameters and a form's data are not related managers
    ("annotate/forms/x.py", "run = forms.ModelChoiceField(queryset=ScoringRun.objects.none())\n"),
    ("annotate/views/x.py", "page = request.GET.get('page')\nname = form.cleaned_data.get('name')\n"
                            "rows = table.rows[:10]\n"),
    # a dict, a set and a progress bar are updated, not the database
    ("annotate/views/x.py", "context = {}\ncontext.update(a=1)\nseen = set()\nseen.update([1])\n"),
    ("annotate/management/commands/x.py", "bar.update(done - bar.n)\nbars[0].update(3)\n"),
    # service calls, selector calls and the URL's object are fine
    ("annotate/views/x.py", "from annotate.studies.services.studies import study_create\n"
                            "study = study_create(name='a')\nrows = study_get_by_key(key='a')\n"),
    ("annotate/views/x.py", "study = get_object_or_404(Study, pk=study_id)\n"
                            "run = get_object_or_404(ScoringRun.objects.select_related('response_set'), pk=run_id)\n"),
    # the API's reads are its own branch's business (its writes are checked)
    ("annotate/api/x.py", "rows = Study.objects.filter(pk=1).first()\n"),
    # a command may import its shared helpers and itself
    ("annotate/management/commands/a.py", "from annotate.management.progress import TqdmStream\n"
                                          "from annotate.management.lookups import study_from_option\n"),
    # the same calls elsewhere are a service's business
    ("annotate/services/x.py", "Study.objects.create(name='a')\nqueryset.update(status='x')\n"),
    ("scoring/x.py", "import numpy as np\nfrom scipy import stats\n"),
])
def test_the_checker_accepts_what_the_layers_allow(path, source):
    assert check_source(source, path) == []


def test_a_violation_in_a_real_module_would_fail_the_house_test(tmp_path, monkeypatch):
    # The house test itself, on a copy of the tree with one added write: it must fail and name the line.
    view = ROOT / "annotate" / "views" / "home.py"
    source = view.read_text(encoding="utf-8") + "\n\ndef _bad(study):\n    study.delete()\n"
    n_lines = source.count("\n") + (0 if source.endswith("\n") else 1)
    real_read_text = Path.read_text

    def read_text(self, *args, **kwargs):
        return source if self == view else real_read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_text)
    with pytest.raises(AssertionError) as info:
        test_the_layers_are_kept()
    assert f"annotate/studies/views/home.py:{n_lines}: .delete() writes to the database outside a service" in str(info.value)


def _is_overload(node: ast.stmt) -> bool:
    decorators = getattr(node, "decorator_list", [])
    return any((isinstance(d, ast.Name) and d.id == "overload")
               or (isinstance(d, ast.Attribute) and d.attr == "overload") for d in decorators)


def _redefinitions(source: str, path: str) -> list[str]:
    """Functions or classes defined twice in one body (the later one silently wins:
    a merge that keeps both halves of a conflict does exactly this)."""
    found = []

    def visit(body: list[ast.stmt], where: str) -> None:
        seen: dict[str, int] = {}
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if _is_overload(node):  # typing.overload signatures precede the one real definition
                    continue
                if node.name in seen:
                    found.append(f"{path}:{node.lineno}: {where}{node.name} already defined at line {seen[node.name]}")
                seen.setdefault(node.name, node.lineno)
                if isinstance(node, ast.ClassDef):
                    visit(node.body, f"{node.name}.")

    visit(ast.parse(source).body, "")
    return found


def test_no_module_defines_a_function_or_class_twice():
    paths = [p for top in ("annotate", "scoring", "eipsite", "bench", "scripts") for p in (ROOT / top).rglob("*.py")
             if "migrations" not in p.parts]
    assert len(paths) > 100
    found = [line for p in paths for line in _redefinitions(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))]
    assert found == []


def test_the_redefinition_check_names_file_and_line():
    source = "def a():\n    pass\n\n\nclass K:\n    def m(self): ...\n    def m(self): ...\n\n\ndef a():\n    pass\n"
    assert _redefinitions(source, "x.py") == ["x.py:7: K.m already defined at line 6",
                                              "x.py:10: a already defined at line 1"]


@pytest.mark.parametrize("decorator", ["overload", "typing.overload"])
def test_overload_signatures_are_not_redefinitions_but_a_second_body_is(decorator):
    source = (f"class K:\n    @{decorator}\n    def m(self, i: int) -> int: ...\n"
              f"    @{decorator}\n    def m(self, i: str) -> str: ...\n"
              "    def m(self, i): return i\n    def m(self, i): return 2 * i\n")
    assert _redefinitions(source, "x.py") == ["x.py:7: K.m already defined at line 6"]
