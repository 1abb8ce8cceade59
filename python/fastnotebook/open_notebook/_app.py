"""Access to the installed Open Notebook application (``open_notebook``).

The mirrored modules reach the application's own objects through here, when a
call needs them. If Open Notebook is not installed, the call fails with a
``ModuleNotFoundError`` that says so; if it is installed but fails to import,
that error propagates. Nothing falls back to fastnotebook's own database or
model manager: inside the application, its configuration is the only one.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType


def app_installed() -> bool:
    """Whether a package ``open_notebook`` is imported or can be."""
    if "open_notebook" in sys.modules:
        return sys.modules["open_notebook"] is not None
    try:
        return importlib.util.find_spec("open_notebook") is not None
    except (ImportError, ValueError):
        return False


def app_module(name: str, needed_by: str) -> ModuleType:
    """The application's module ``name`` (e.g. ``open_notebook.ai.models``).

    Raises ``ModuleNotFoundError`` naming ``needed_by`` when Open Notebook is
    not installed.
    """
    if not app_installed():
        raise ModuleNotFoundError(
            f"{needed_by} needs Open Notebook's {name}, and the package open_notebook is "
            "not installed: fastnotebook.open_notebook mirrors Open Notebook's utils and "
            "runs inside the application (for standalone use, see fastnotebook.embedding "
            "and fastnotebook.context_builder)",
            name="open_notebook",
        )
    return importlib.import_module(name)
