"""The house, checked by reading the source (``ast``; nothing is imported).

``annotate/`` is split by domain (``core``, ``catalog``, ``runs``, ``studies``,
``reports``, ``analyses``, ``api``, ``demo``); inside each domain by kind
(``selectors``, ``services``, ``views``, ``forms``, ``admin``, ``tasks``). The rules:

* **doors**: a module imports another domain only through that domain's
  surface, ``from annotate.<domain> import <name>`` with ``<name>`` in the
  domain's ``__all__`` (its ``_SURFACE`` map); the site's wiring is the one
  exception (``annotate/urls.py`` imports the domains' ``views`` modules,
  ``annotate/admin/__init__.py`` their ``admin`` modules). ``core`` imports no
  other domain;
* a selector never imports a service, a view, a form, an admin module or the
  API, directly or through a surface: reads do not depend on writes;
* a view, an admin module (its ``save_model``/``save_formset``/actions
  included), an API module, a management command, a form, a template tag or a
  task never writes to the database itself: it calls a service;
* the same modules (tasks and the API aside) read only through selectors,
  related managers (``study.pairs.filter(...)``) included;
* ``scoring/`` never imports Django (nor ``annotate``/``eipsite``);
* no import circle anywhere in ``annotate/`` or ``scoring/``, counting imports
  inside functions and ``if TYPE_CHECKING:`` blocks, an import through a
  surface counting as an import of the module that defines the name;
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

What counts as a read: any use of a model manager (``X.objects``), except as
the first argument of ``get_object_or_404`` (a view may fetch the one object
its URL names), and a queryset call on a related manager.
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
#: The domain packages of ``annotate/``.
DOMAINS = ("core", "catalog", "runs", "studies", "reports", "analyses", "api", "demo")
#: Which domains each domain may import (through their surfaces); the README's code map says the same.
DOMAIN_IMPORTS = {
    "core": set(),
    "catalog": {"core", "runs"},
    "runs": {"core", "catalog", "studies"},
    "studies": {"core", "catalog", "runs", "reports", "analyses"},
    "reports": {"core", "catalog", "runs", "studies", "analyses"},
    "analyses": {"core", "catalog", "reports", "studies"},
    "api": {"core", "catalog", "runs", "studies", "reports", "analyses"},
    "demo": {"core", "catalog", "runs", "studies"},
}
#: The kinds of module inside a domain: ``annotate/<domain>/<kind>.py`` or ``annotate/<domain>/<kind>/...``.
KINDS = ("selectors", "services", "views", "forms", "admin", "tasks")
#: What a selector may not import (by kind; the API's own modules count as views).
SELECTOR_FORBIDDEN_KINDS = ("services", "views", "forms", "admin", "api")
SCORING_FORBIDDEN = ("django", "annotate", "eipsite")
COMMANDS_PACKAGE = "annotate.management.commands"
#: Kinds that must not write (they call a service), and that must read only through selectors.
NO_WRITE_KINDS = ("views", "admin", "api", "commands", "forms", "templatetags", "tasks")
NO_READ_KINDS = ("views", "admin", "commands", "forms", "templatetags")
#: The site's wiring, which Django makes import the domains' views and admin modules themselves.
WIRING = {"annotate.urls": "views", "annotate.admin": "admin"}
#: Queryset calls on a related manager (``study.pairs.filter(...)``, ``run.models_used.order_by(...)``).
RELATED_READ_CALLS = frozenset({
    "all", "filter", "exclude", "order_by", "select_related", "prefetch_related", "annotate", "values_list",
    "count", "exists", "aggregate", "first", "last", "in_bulk", "iterator", "only", "defer", "distinct",
})

# Exceptions that stay, each with its reason: (file, text on the line) -> reason. Empty today.
ALLOWED: dict[tuple[str, str], str] = {}


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


def domain_of(module: str) -> str | None:
    """The domain a dotted module name belongs to (``None`` outside the domains)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "annotate" and parts[1] in DOMAINS else None


def kind_of(module: str) -> str | None:
    """The kind of a module: a domain's ``selectors``/``services``/``views``/``forms``/``admin``/
    ``tasks``, the API's own modules (``api``), ``commands``, ``templatetags``; ``None`` otherwise."""
    parts = module.split(".")
    if module.startswith(COMMANDS_PACKAGE):
        return "commands"
    if len(parts) > 1 and parts[:2] == ["annotate", "templatetags"]:
        return "templatetags"
    if len(parts) > 1 and parts[:2] == ["annotate", "admin"]:
        return "admin"
    if domain_of(module) and len(parts) > 2 and parts[2] in KINDS:
        return parts[2]
    if domain_of(module) == "api" and len(parts) > 2:
        return "api"
    return None


def surface_of(source: str) -> dict[str, str]:
    """A domain package's ``_SURFACE`` map (public name -> ``module`` or ``module:attribute``)."""
    for node in ast.parse(source).body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_SURFACE" for t in node.targets)):
            return ast.literal_eval(node.value)
    return {}


def _surfaces() -> dict[str, dict[str, str]]:
    return {f"annotate.{d}": surface_of((ROOT / "annotate" / d / "__init__.py").read_text(encoding="utf-8"))
            for d in DOMAINS}


def _resolve(base: str, name: str, surfaces: dict[str, dict[str, str]]) -> str:
    """The module ``from base import name`` really reaches (through a surface, its defining module)."""
    if base in surfaces and name in surfaces[base]:
        return surfaces[base][name].partition(":")[0]
    return f"{base}.{name}"


def _imports(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str, str | None]]:
    """Every import of ``tree``, absolute: ``(line, module, name)``; ``name`` is ``None`` for
    ``import a.b`` and the imported name for ``from a import name``."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)] if node.level > 1 else anchor
                base = ".".join([*anchor, base] if base else anchor)
            found += [(node.lineno, base, alias.name) for alias in node.names]
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


def _door_violations(module: str, imports: list[tuple[int, str, str | None]],
                     surfaces: dict[str, dict[str, str]]) -> list[tuple[int, str]]:
    """Imports of another domain that do not go through its surface."""
    here = domain_of(module)
    found = []
    for line, base, name in imports:
        target = base if name is None else _resolve(base, name, surfaces) if base in surfaces else f"{base}.{name}"
        there = domain_of(base)
        if there is None or there == here:
            continue
        if here == "core":
            found.append((line, f"core imports another domain ({base}); core is the base every domain stands on"))
            continue
        if here is not None and there not in DOMAIN_IMPORTS.get(here, set()):
            found.append((line, f"the {here} domain imports the {there} domain, which DOMAIN_IMPORTS does not allow"))
            continue
        if WIRING.get(module) and kind_of(target) == WIRING[module]:
            continue
        if name is None or base != f"annotate.{there}":
            what = base if name is None else f"{base}.{name}"
            found.append((line, f"imports {what} past the {there} domain's surface "
                                f"(use from annotate.{there} import <name in its __all__>)"))
        elif name not in surfaces.get(base, {}):
            found.append((line, f"imports {name!r} from annotate.{there}, which its __all__ does not declare"))
    return found


def check_source(source: str, path: str, surfaces: dict[str, dict[str, str]] | None = None) -> list[Violation]:
    """The violations in one module, ``path`` relative to the repository root
    (it decides which rules apply); ``surfaces`` are the domains' surfaces (default: the tree's)."""
    surfaces = _surfaces() if surfaces is None else surfaces
    tree = ast.parse(source, filename=path)
    lines = source.splitlines()
    module = _module_name(path)
    kind = kind_of(module)
    violations = []

    def add(line: int, rule: str) -> None:
        violations.append(Violation(path, line, lines[line - 1] if line <= len(lines) else "", rule))

    imports = _imports(tree, module, path.endswith("/__init__.py"))
    if path.startswith("annotate/"):
        for line, rule in _door_violations(module, imports, surfaces):
            add(line, rule)
    if kind == "selectors":
        for line, base, name in imports:
            if name and base in surfaces:
                target = _resolve(base, name, surfaces)
            else:  # ``from annotate.x import views`` names a module; ``from annotate.x.views import f`` a name
                target = f"{base}.{name}" if name and kind_of(base) is None else base
            if domain_of(target) and (layer := kind_of(target)) in SELECTOR_FORBIDDEN_KINDS:
                add(line, f"a selector imports {target} ({layer}: selectors never depend on services, views, "
                          "forms, admin or the API)")
    if path.startswith("scoring/"):
        for line, base, name in imports:
            for target in (base, f"{base}.{name}") if name else (base,):
                if layer := _under(target, SCORING_FORBIDDEN):
                    add(line, f"scoring/ imports {layer} (scoring is pure numpy/scipy)")
                    break
    if kind == "commands":
        for line, base, name in imports:
            for target in (base, f"{base}.{name}") if name else (base,):
                command = target.removeprefix(COMMANDS_PACKAGE + ".")
                if command != target and "." not in command and target != module:
                    add(line, f"a command imports another command ({target}); share code through annotate/management/")
    if kind in NO_WRITE_KINDS:
        for line, name in _writes(tree):
            add(line, f".{name}() writes to the database outside a service")
    if kind in NO_READ_KINDS:
        for line in _manager_reads(tree):
            add(line, "reads through .objects outside a selector")
        for line, call in _related_reads(tree):
            add(line, f"reads through a related manager (.{call}) outside a selector")
    return sorted(set(violations), key=lambda v: (v.path, v.line, v.rule))


def _python_files() -> list[Path]:
    return sorted(p for folder in ("annotate", "scoring") for p in (ROOT / folder).rglob("*.py")
                  if "migrations" not in p.parts)


def all_violations() -> list[Violation]:
    surfaces = _surfaces()
    found = []
    for path in _python_files():
        relative = path.relative_to(ROOT).as_posix()
        found += check_source(path.read_text(encoding="utf-8"), relative, surfaces)
    return found


def _matches(violation: Violation, entries) -> bool:
    return any(violation.path == path and text in violation.text for path, text in entries)


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Module -> the modules of ``sources`` it imports anywhere (functions and type-only blocks
    included). ``sources`` maps a module name to ``(source, is_package)``. ``from a import b``
    counts as importing ``a.b`` when that is a module of ``sources``, the module that defines
    ``b`` when ``a`` is a domain package that declares ``b`` in its surface, else ``a``."""
    surfaces = {m: surface_of(src) for m, (src, is_package) in sources.items() if is_package}
    graph = {}
    for module, (source, is_package) in sources.items():
        targets = set()
        for _, base, name in _imports(ast.parse(source), module, is_package):
            if name is None:
                if base in sources:
                    targets.add(base)
                continue
            full = _resolve(base, name, surfaces)
            if full in sources:
                targets.add(full)
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
    ({"annotate.runs.tasks": ("from annotate.runs.services.scoring import run\n", False),
      "annotate.runs.services.scoring": ("def enqueue():\n    from annotate.runs.tasks import run_scoring\n", False)},
     [["annotate.runs.services.scoring", "annotate.runs.tasks"]]),
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
    ({"annotate.runs.tasks": ("from annotate.runs.services.scoring import run\n", False),
      "annotate.runs.services.scoring": ("from annotate.core.task_names import task_enqueue\n", False),
      "annotate.core.task_names": ("from importlib import import_module\n", False)}, []),
    # a package importing its submodule, which takes a sibling's name from the package's submodule: no circle
    ({"annotate.reports.services": ("from annotate.reports.services.report import r\n", True),
      "annotate.reports.services.report": ("from annotate.reports.services import labels\n", False),
      "annotate.reports.services.labels": ("", False)}, []),
    # an import through a surface reaches the defining module: two domains that need each other's modules
    ({"annotate.runs": ("_SURFACE = {'f': 'annotate.runs.services.scoring'}\n", True),
      "annotate.catalog": ("_SURFACE = {'g': 'annotate.catalog.services.uploads'}\n", True),
      "annotate.runs.services.scoring": ("from annotate.catalog import g\n", False),
      "annotate.catalog.services.uploads": ("def h():\n    from annotate.runs import f\n", False)},
     [["annotate.catalog.services.uploads", "annotate.runs.services.scoring"]]),
    # ... and two surfaces that only point at each other's unrelated modules close no circle
    ({"annotate.runs": ("_SURFACE = {'f': 'annotate.runs.services.sort_keys'}\n", True),
      "annotate.catalog": ("_SURFACE = {'g': 'annotate.catalog.services.uploads'}\n", True),
      "annotate.runs.services.scoring": ("from annotate.catalog import g\n", False),
      "annotate.runs.services.sort_keys": ("", False),
      "annotate.catalog.services.uploads": ("def h():\n    from annotate.runs import f\n", False)}, []),
])
def test_the_circle_check_finds_circles_through_functions_type_only_imports_and_surfaces(sources, expected):
    assert import_circles(sources) == expected


# --- the doors -----------------------------------------------------------------------------


def test_every_domain_declares_its_surface_and_every_name_resolves():
    from importlib import import_module

    for domain, surface in _surfaces().items():
        package = import_module(domain)
        assert surface, f"{domain} declares no _SURFACE"
        assert package.__all__ == sorted(surface), domain
        for name, target in surface.items():
            module, _, attribute = target.partition(":")
            assert domain_of(module) == domain_of(domain), f"{domain}.{name} points outside its domain: {target}"
            assert getattr(package, name) is getattr(import_module(module), attribute or name), f"{domain}.{name}"


def test_every_surface_name_is_used_outside_its_domain():
    # A door nothing walks through is dead code: the surface lists what other domains use, no more.
    surfaces = _surfaces()
    used = {(base, name) for module, (source, is_package) in _sources().items()
            for _, base, name in _imports(ast.parse(source), module, is_package)
            if base in surfaces and domain_of(module) != domain_of(base)}
    unused = sorted(f"{d}.{n}" for d, s in surfaces.items() for n in s if (d, n) not in used)
    assert unused == []


def test_a_missing_surface_name_fails_loudly():
    import annotate.catalog

    with pytest.raises(AttributeError, match=r"'annotate\.catalog' has no attribute 'upload_check_private'"):
        annotate.catalog.upload_check_private  # noqa: B018


# --- the layers ----------------------------------------------------------------------------


def test_the_layers_are_kept():
    violations = [v for v in all_violations() if not _matches(v, ALLOWED)]
    assert not violations, "layer violations (file:line: rule: code):\n" + "\n".join(map(str, violations))


def test_allowed_exceptions_are_still_needed_and_give_a_reason():
    violations = all_violations()
    for entry, reason in ALLOWED.items():
        assert reason.strip(), f"ALLOWED {entry} gives no reason"
        assert _matches_entry(entry, violations), f"ALLOWED {entry} matches no violation any more (remove it)"


def _matches_entry(entry: tuple[str, str], violations: list[Violation]) -> bool:
    return any(_matches(v, [entry]) for v in violations)


def test_it_reads_every_layer_of_every_domain():
    # The walk finds the folders the rules are about (a renamed folder must not silence a rule).
    kinds = {(domain_of(m), kind_of(m)) for m in _sources()}
    for domain in DOMAINS:
        assert (domain, None) in kinds or any(d == domain for d, _ in kinds), domain
    for kind in ("selectors", "services", "views", "forms", "admin", "tasks", "api", "commands", "templatetags"):
        assert any(k == kind for _, k in kinds), kind
    assert any(m.startswith("scoring.") for m in _sources())


# --- the checker catches what it should ---------------------------------------------------

SURFACES = {"annotate.runs": {"scoring_run_create": "annotate.runs.services.scoring",
                              "run_method_results": "annotate.runs.selectors.scoring"},
            "annotate.catalog": {"response_matrix": "annotate.catalog.selectors.matrix"},
            "annotate.studies": {"user_role": "annotate.studies.selectors.studies"},
            "annotate.core": {"file_response": "annotate.core.http"}}


@pytest.mark.parametrize(("path", "source", "expected"), [
    ("annotate/runs/selectors/x.py", "import os\nfrom annotate.runs.services.scoring import DEFAULT_PARAMS\n",
     [(2, "a selector imports annotate.runs.services.scoring (services")]),
    ("annotate/studies/selectors/x.py", "from annotate.runs import scoring_run_create\n",
     [(1, "a selector imports annotate.runs.services.scoring (services")]),
    ("annotate/runs/selectors/x.py", "from annotate.runs import views\n",
     [(1, "a selector imports annotate.runs.views (views")]),
    ("annotate/api/selectors.py", "from . import views\n", [(1, "a selector imports annotate.api.views (views")]),
    ("annotate/studies/selectors/__init__.py", "from ..forms import judging\n",
     [(1, "a selector imports annotate.studies.forms")]),
    ("annotate/catalog/selectors/x.py", "from annotate.catalog.admin import catalog\n",
     [(1, "a selector imports annotate.catalog.admin")]),
    ("annotate/catalog/services/x.py", "from annotate.runs.services.scoring import scoring_run_create\n",
     [(1, "imports annotate.runs.services.scoring.scoring_run_create past the runs domain's surface")]),
    ("annotate/catalog/services/x.py", "import annotate.runs.services.scoring\n",
     [(1, "imports annotate.runs.services.scoring past the runs domain's surface")]),
    ("annotate/catalog/services/x.py", "def f():\n    from annotate.runs import scoring_run_execute\n",
     [(2, "imports 'scoring_run_execute' from annotate.runs, which its __all__ does not declare")]),
    ("annotate/management/commands/x.py", "from annotate.studies.selectors.studies import user_role\n",
     [(1, "imports annotate.studies.selectors.studies.user_role past the studies domain's surface")]),
    ("annotate/templatetags/x.py", "from ..catalog.selectors.matrix import response_matrix\n",
     [(1, "imports annotate.catalog.selectors.matrix.response_matrix past the catalog domain's surface")]),
    ("annotate/core/http.py", "from annotate.studies import user_role\n", [(1, "core imports another domain")]),
    ("annotate/urls.py", "from annotate.runs.services import scoring\n",
     [(1, "imports annotate.runs.services.scoring past the runs domain's surface")]),
    ("annotate/admin/__init__.py", "from annotate.runs import views\n",
     [(1, "imports 'views' from annotate.runs, which its __all__ does not declare")]),
    ("annotate/catalog/services/x.py", "from annotate.reports import report_methods\n",
     [(1, "the catalog domain imports the reports domain, which DOMAIN_IMPORTS does not allow")]),
    ("annotate/management/commands/__init__.py", "from . import b\n",
     [(1, "a command imports another command (annotate.management.commands.b)")]),
    ("scoring/eip.py", "import numpy as np\nfrom django.db import models\n", [(2, "scoring/ imports django")]),
    ("scoring/sub/m.py", "import django\n", [(1, "scoring/ imports django")]),
    ("annotate/management/commands/a.py", "from annotate.management.commands.b import helper\n",
     [(1, "a command imports another command (annotate.management.commands.b)")]),
    ("annotate/management/commands/a.py", "from .b import helper\n",
     [(1, "a command imports another command (annotate.management.commands.b)")]),
    ("annotate/studies/views/x.py", "def v(request, study):\n    study.name = 'x'\n    study.save()\n",
     [(3, ".save() writes")]),
    ("annotate/runs/views.py", "def v(request, run):\n    run.delete()\n", [(2, ".delete() writes")]),
    ("annotate/studies/admin/x.py", "def act(self, request, queryset):\n    queryset.update(status='closed')\n",
     [(2, ".update() writes")]),
    ("annotate/api/x.py", "Token.objects.filter(pk=1).update(last_used_at=now)\nToken.objects.create(name='a')\n",
     [(1, ".update() writes"), (2, ".create() writes")]),
    ("annotate/management/commands/x.py", "Study.objects.get_or_create(name='a')\nrow.delete()\n",
     [(1, ".get_or_create() writes"), (1, "reads through .objects"), (2, ".delete() writes")]),
    ("annotate/reports/views.py", "Pair.objects.bulk_create(pairs)\nStudy.objects.update_or_create(name='a')\n",
     [(1, ".bulk_create() writes"), (1, "reads through .objects"), (2, ".update_or_create() writes"),
      (2, "reads through .objects")]),
    ("annotate/studies/views/x.py", "def v(request):\n    rows = Study.objects.filter(status='open')\n",
     [(2, "reads through .objects outside a selector")]),
    ("annotate/management/commands/x.py", "user = get_user_model().objects.filter(username=name).first()\n",
     [(1, "reads through .objects outside a selector")]),
    ("annotate/runs/admin.py", "x = get_object_or_404(Study, pk=Study.objects.count())\n",
     [(1, "reads through .objects outside a selector")]),
    ("annotate/studies/admin/x.py",
     "class A:\n    def save_model(self, request, obj, form, change):\n        obj.save()\n", [(3, ".save() writes")]),
    ("annotate/catalog/admin/x.py", "class A:\n    def save_formset(self, request, form, formset, change):\n"
                                    "        formset.save()\n", [(3, ".save() writes")]),
    ("annotate/admin/__init__.py", "def delete_model(self, request, obj):\n    obj.delete()\n",
     [(2, ".delete() writes")]),
    ("annotate/studies/forms/x.py", "class F:\n    def save(self):\n        self.instance.save()\n",
     [(3, ".save() writes")]),
    ("annotate/catalog/forms.py", "class F:\n    def save(self):\n        self.instance.save()\n",
     [(3, ".save() writes")]),
    ("annotate/templatetags/x.py", "def tag(study):\n    study.pairs.all().delete()\n",
     [(2, ".delete() writes"), (2, "reads through a related manager (.pairs.all)")]),
    ("annotate/studies/views/x.py", "def v(request, study):\n    subjects = study.subjects.order_by('name')\n",
     [(2, "reads through a related manager (.subjects.order_by) outside a selector")]),
    ("annotate/studies/forms/x.py", "def initial(study):\n    return list(study.members.all())\n",
     [(2, "reads through a related manager (.members.all)")]),
    ("annotate/management/commands/x.py", "n = study.pool.count()\n", [(1, "reads through a related manager")]),
    ("annotate/runs/tasks.py", "def run(run_id):\n    ScoringRun.objects.filter(pk=run_id).update(status='done')\n",
     [(2, ".update() writes")]),
])
def test_the_checker_names_file_and_line_of_a_violation(path, source, expected):
    found = check_source(source, path, SURFACES)
    assert [(v.path, v.line) for v in found] == [(path, line) for line, _ in expected]
    for v, (_, rule) in zip(found, expected, strict=True):
        assert v.rule.startswith(rule), v
        assert str(v).startswith(f"{path}:{v.line}: {rule}")


@pytest.mark.parametrize(("path", "source"), [
    # selectors may use models, their own domain's selectors, other domains' surfaced selectors and scoring
    ("annotate/runs/selectors/x.py", "from annotate.models import Study\n"
                                     "from annotate.runs.selectors.scoring import f\n"
                                     "from annotate.catalog import response_matrix\n"
                                     "from scoring.methods import methods\n"),
    # through a surface, any domain reaches another's declared names
    ("annotate/catalog/services/x.py", "def f():\n    from annotate.runs import scoring_run_create\n"),
    ("annotate/management/commands/x.py", "from annotate.studies import user_role\n"
                                          "from annotate.core import file_response\n"),
    # the wiring imports views and admin modules, as Django needs
    ("annotate/urls.py", "from annotate.runs import views as results\nfrom annotate.studies.views import judging\n"),
    ("annotate/admin/__init__.py", "from annotate.runs import admin as runs_admin\n"
                                   "from annotate.studies.admin import studies\n"),
    # a domain inside itself is free
    ("annotate/studies/services/x.py", "from annotate.studies.selectors.completion import completion_status\n"),
    # a request's parameters and a form's data are not related managers
    ("annotate/studies/forms/x.py", "run = forms.ModelChoiceField(queryset=ScoringRun.objects.none())\n"),
    ("annotate/runs/views.py", "page = request.GET.get('page')\nname = form.cleaned_data.get('name')\n"
                               "rows = table.rows[:10]\n"),
    # a dict, a set and a progress bar are updated, not the database
    ("annotate/runs/views.py", "context = {}\ncontext.update(a=1)\nseen = set()\nseen.update([1])\n"),
    ("annotate/management/commands/x.py", "bar.update(done - bar.n)\nbars[0].update(3)\n"),
    # service calls, selector calls and the URL's object are fine
    ("annotate/studies/views/x.py", "from annotate.studies.services.studies import study_create\n"
                                    "study = study_create(name='a')\nrows = study_get_by_key(key='a')\n"),
    ("annotate/studies/views/x.py", "study = get_object_or_404(Study, pk=study_id)\nrun = get_object_or_404("
                                    "ScoringRun.objects.select_related('response_set'), pk=run_id)\n"),
    # the API's reads are its own business (its writes are checked)
    ("annotate/api/x.py", "rows = Study.objects.filter(pk=1).first()\n"),
    # a command may import its shared helpers and itself
    ("annotate/management/commands/a.py", "from annotate.management.progress import TqdmStream\n"
                                          "from annotate.management.lookups import study_from_option\n"),
    # the same calls in a service are its business
    ("annotate/studies/services/x.py", "Study.objects.create(name='a')\nqueryset.update(status='x')\n"),
    ("scoring/x.py", "import numpy as np\nfrom scipy import stats\n"),
])
def test_the_checker_accepts_what_the_house_allows(path, source):
    assert check_source(source, path, SURFACES) == []


def test_a_violation_in_a_real_module_would_fail_the_house_test(tmp_path, monkeypatch):
    # The house test itself, on a copy of the tree with one added write: it must fail and name the line.
    view = ROOT / "annotate" / "studies" / "views" / "home.py"
    source = view.read_text(encoding="utf-8") + "\n\ndef _bad(study):\n    study.delete()\n"
    n_lines = source.count("\n") + (0 if source.endswith("\n") else 1)
    real_read_text = Path.read_text

    def read_text(self, *args, **kwargs):
        return source if self == view else real_read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_text)
    with pytest.raises(AssertionError) as info:
        test_the_layers_are_kept()
    expected = f"annotate/studies/views/home.py:{n_lines}: .delete() writes to the database outside a service"
    assert expected in str(info.value)


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
