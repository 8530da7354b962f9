"""A domain's declared surface: the names other domains may import from it.

Each domain package (``annotate/<domain>/__init__.py``) maps every public name
to the module that defines it, and exposes the map through :func:`lazy_surface`:
``from annotate.catalog import response_matrix`` imports the defining module
when the name is first used, so importing a domain package costs nothing and
no package pulls in its whole domain (or closes an import circle) at start-up.
The architecture test refuses any import from another domain that does not go
through this map.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module


def lazy_surface(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """Module ``__getattr__`` and ``__dir__`` for a domain package's surface.

    Parameters
    ----------
    package : str
        The domain package's dotted name (its ``__name__``).
    names : mapping of str to str
        Public name -> ``"dotted.module"`` (the attribute of the same name) or
        ``"dotted.module:attribute"`` (exported under another name).

    Returns
    -------
    (getattr, dir)
        ``getattr(name)`` imports and returns the named object, looked up on
        every access (a test that patches the defining module is seen);
        ``dir()`` lists the public names.

    Raises
    ------
    AttributeError
        From ``getattr`` for a name not in ``names``, naming the package.
    """

    def __getattr__(name: str) -> object:
        try:
            target = names[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r} (not in its __all__)") from None
        module, _, attribute = target.partition(":")
        return getattr(import_module(module), attribute or name)

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__
