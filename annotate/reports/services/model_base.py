"""The JSON walk behind the report's typed structure.

Every class of :mod:`annotate.reports.services.model` (and of its sections in
sibling modules, such as :mod:`annotate.reports.services.model_crowd`) is a
frozen dataclass deriving from :class:`_Json`, whose field names are the JSON
keys, so ``to_json``/``from_json`` are one generic walk. A value with its own
``to_json``/``from_json`` (the report's pair rows) is walked through them.
"""
from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

#: Field metadata: leave the key out of the JSON when the value is None.
OMIT_NONE = {"omit_none": True}


class _Json:
    """``to_json``/``from_json`` for a dataclass whose fields are the JSON keys."""

    def to_json(self) -> dict[str, Any]:
        out = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None and f.metadata.get("omit_none"):
                continue
            out[f.name] = _plain(value)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]):
        hints = typing.get_type_hints(cls)
        fields = dataclasses.fields(cls)  # type: ignore[arg-type]
        kwargs = {f.name: _build(hints[f.name], data.get(f.name)) for f in fields
                  if f.name in data or not f.metadata.get("omit_none")}
        return cls(**kwargs)


def _plain(value: Any) -> Any:
    if hasattr(value, "to_json") and not isinstance(value, type):  # a _Json dataclass or the report's pair rows
        return value.to_json()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _build(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return _build(options[0], value) if len(options) == 1 else value
    if isinstance(hint, type) and hasattr(hint, "from_json"):
        return hint.from_json(value)
    if origin is tuple:
        args = typing.get_args(hint)
        return tuple(_build(args[0], v) for v in value) if len(args) == 2 and args[1] is Ellipsis else tuple(value)
    if origin is dict:
        args = typing.get_args(hint)
        return {k: _build(args[1], v) for k, v in value.items()} if args else dict(value)
    return value
