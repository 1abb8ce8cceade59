"""Package names imported when first used (PEP 562).

A package's ``__init__`` that imports everything it exports makes every
import below it pay for all of it: ``import fastnotebook.x`` runs
``fastnotebook/__init__.py`` first. ``fastnotebook search`` answered by the
process that holds the database takes tens of milliseconds in all, less
than importing the whole drop-in (or the database package, with the SDK)
would add. A package lists its exports instead, and each is imported on
first access.
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False  # as typing's, without importing it

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``. ``exports`` maps
    each name to the module it comes from; a name that maps to
    ``f"{package}.{name}"`` is that submodule itself."""

    def attribute(name: str) -> object:
        source = exports.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(source)
        value = module if source == f"{package}.{name}" else getattr(module, name)
        setattr(sys.modules[package], name, value)  # found directly from now on
        return value

    def names() -> list[str]:
        # What the package offers, not what its ``__init__`` used.
        dunders = (name for name in vars(sys.modules[package]) if name.startswith("__"))
        return sorted({*dunders, *exports})

    return attribute, names
