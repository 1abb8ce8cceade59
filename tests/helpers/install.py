"""An interpreter as in an install without the ``app`` extra: the prelude of a
``python -c`` script that makes every application package fail to import."""

from __future__ import annotations

# The application's packages (the `app` extra) and what they bring (PyYAML is
# a required dependency: fastnotebook.notes reads front matter with it).
APP_ONLY = ["surrealdb", "fastapi", "uvicorn", "aiohttp", "websockets", "pydantic_core"]

WITHOUT_APP = f"""
import importlib.abc, sys

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {APP_ONLY!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
"""
