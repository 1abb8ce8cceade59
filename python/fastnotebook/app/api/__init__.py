"""The HTTP API (FastAPI): ``create_app()``, served by ``fastnotebook serve``."""

from fastnotebook.app.api.app import create_app, serve

__all__ = ["create_app", "serve"]
