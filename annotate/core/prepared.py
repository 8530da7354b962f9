"""Reads whose SQL is compiled once and run again with new values.

Building a queryset and compiling it to SQL costs the ORM far more than a
small indexed query costs the database (several milliseconds for a row of
counts made of subqueries, against a fraction of one to run it). A
:class:`PreparedQuery` is defined by an ordinary queryset, built by a
function of named parameters; the first time it runs on a database
connection the ORM compiles it once, with a distinct marker value for each
parameter, and the markers' places in the SQL parameters are recorded. Later
calls send the same SQL with the actual values and convert the rows as the
ORM would (its converters, its related-model populators), so the answer is
the queryset's own, without building it again.

Only integer parameters are marked (ids, counts, seeds); everything else in
the queryset is fixed when it is defined. The SQL is compiled per connection
object (each has its own vendor, time zone and converters): Django keeps one
per thread, and it outlives the database sessions it opens and closes, so a
server thread compiles each read once whether its database connection is
kept between requests or not.
"""
from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import Model, QuerySet
from django.db.models.query import ModelIterable, get_related_populators

ERR_UNMARKED = "prepared query {name!r}: parameter {param!r} does not reach the SQL as a parameter"
ERR_NOT_INT = "prepared query {name!r}: parameter {param!r} must be an int; got {value!r}"
ERR_PARAMS = "prepared query {name!r} takes {expected}; got {given}"
#: Marker values stand for the parameters while the SQL is compiled: distinct, and within the range of a 32-bit
#: integer column (the ORM folds a comparison with a value out of a column's range into a constant condition).
_MARKER_BASE = 0x5EED_0000


@dataclass(frozen=True)
class _Compiled:
    sql: str
    #: Per SQL parameter: (True, (parameter name, its type)) or (False, the fixed value).
    slots: tuple[tuple[bool, Any], ...]
    compiler: Any
    converters: dict
    #: For querysets of model instances: (model, init fields, start, end, related populators, annotation columns).
    models: tuple | None


class PreparedQuery:
    """A read compiled once per database connection.

    Parameters
    ----------
    name : str
        For error messages.
    build : callable
        ``build(**params) -> QuerySet``: the query, with every parameter
        used as a plain integer value (a filter on an id, a count).
    params : tuple of str
        The parameter names ``build`` takes.

    Notes
    -----
    ``rows`` returns the ``values_list``/``values`` tuples in SELECT order;
    ``objects`` returns model instances (with ``select_related`` rows
    populated) as iterating the queryset would.
    """

    def __init__(self, name: str, build: Callable[..., QuerySet], *params: str) -> None:
        self.name = name
        self.build = build
        self.params = params
        self._compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def _compile(self, using: str) -> _Compiled:
        connection = connections[using]
        compiled = self._compiled.get(connection)
        if compiled is not None:
            return compiled
        markers = {name: _MARKER_BASE + k for k, name in enumerate(self.params)}
        queryset = self.build(**markers)
        compiler = queryset.query.get_compiler(using=using)
        sql, params = compiler.as_sql()
        by_marker = {value: name for name, value in markers.items()}
        # A marked parameter keeps the type the backend gave it (psycopg's Int4 for a 32-bit column).
        slots = tuple((True, (by_marker[int(p)], type(p))) if isinstance(p, int) and int(p) in by_marker
                      else (False, p) for p in params)
        used = {value[0] for marked, value in slots if marked}
        for param in self.params:
            if param not in used:
                raise ValueError(ERR_UNMARKED.format(name=self.name, param=param))
        fields = [s[0] for s in compiler.select[0:compiler.col_count]]
        converters = compiler.get_converters(fields)
        models = None
        if compiler.klass_info is not None and queryset._iterable_class is ModelIterable:
            info = compiler.klass_info
            start, end = info["select_fields"][0], info["select_fields"][-1] + 1
            init = [f[0].target.attname for f in compiler.select[start:end]]
            models = (info["model"], init, start, end, get_related_populators(info, compiler.select, using),
                      dict(compiler.annotation_col_map or {}))
        compiled = _Compiled(sql=sql, slots=slots, compiler=compiler, converters=converters, models=models)
        with self._lock:
            self._compiled[connection] = compiled
        return compiled

    def _execute(self, using: str, values: dict[str, int]) -> tuple[_Compiled, list]:
        if set(values) != set(self.params):
            raise TypeError(ERR_PARAMS.format(name=self.name, expected=sorted(self.params), given=sorted(values)))
        for param, value in values.items():
            if type(value) is not int:
                raise TypeError(ERR_NOT_INT.format(name=self.name, param=param, value=value))
        compiled = self._compile(using)
        params = []
        for marked, slot in compiled.slots:
            if not marked:
                params.append(slot)
                continue
            name, kind = slot
            params.append(values[name] if kind is int else kind(values[name]))
        with connections[using].cursor() as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchall()
        if compiled.converters:
            rows = [tuple(row) for row in compiled.compiler.apply_converters(rows, compiled.converters)]
        return compiled, rows

    def rows(self, using: str = "default", **values: int) -> list[tuple]:
        """The query's rows (tuples in SELECT order), converted as the ORM converts them."""
        return self._execute(using, values)[1]

    def objects(self, using: str = "default", **values: int) -> list[Model]:
        """The query's model instances, as iterating the queryset gives them."""
        compiled, rows = self._execute(using, values)
        if compiled.models is None:
            raise TypeError(f"prepared query {self.name!r} does not select model instances")
        model, init, start, end, populators, annotations = compiled.models
        out = []
        for row in rows:
            obj = model.from_db(using, init, row[start:end])
            for populator in populators:
                populator.populate(row, obj)
            for attr, at in annotations.items():
                setattr(obj, attr, row[at])
            out.append(obj)
        return out
