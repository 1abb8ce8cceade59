"""Token counting, as ``open_notebook.utils.token_utils`` of Open Notebook's
current release: ``o200k_base`` counts (special-token text counted as ordinary
text), computed in Rust with the vocabulary built in (no download, so no
word-count fallback is ever needed).

As the original, importing this module inside Open Notebook points
``TIKTOKEN_CACHE_DIR`` at the application's cache folder
(``open_notebook.config.TIKTOKEN_CACHE_DIR``) for the other libraries that use
tiktoken.
"""

from __future__ import annotations

import os

from fastnotebook import _core
from fastnotebook.open_notebook._app import app_installed, app_module

__all__ = ["TIKTOKEN_CACHE_DIR", "token_cost", "token_count"]

ENCODING = "o200k_base"

TIKTOKEN_CACHE_DIR: str | None = os.environ.get("TIKTOKEN_CACHE_DIR") or None
if app_installed():
    TIKTOKEN_CACHE_DIR = str(app_module("open_notebook.config", __name__).TIKTOKEN_CACHE_DIR)
    os.environ["TIKTOKEN_CACHE_DIR"] = TIKTOKEN_CACHE_DIR


def token_count(input_string: str) -> int:
    """The number of ``o200k_base`` tokens in ``input_string``."""
    return _core.token_count(input_string, ENCODING)


def token_cost(token_count: int, cost_per_million: float = 0.150) -> float:
    """The cost of ``token_count`` tokens at ``cost_per_million`` per million."""
    return cost_per_million * (token_count / 1_000_000)
