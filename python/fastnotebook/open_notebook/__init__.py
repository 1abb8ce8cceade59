"""Open Notebook's current ``open_notebook.utils`` modules, on fastnotebook's core.

``fastnotebook.open_notebook.<name>`` mirrors ``open_notebook.utils.<name>`` of
Open Notebook's current release (1.14, commit 206d77ca) for six modules:
``chunking``, ``token_utils``, ``embedding``, ``text_utils``, ``version_utils``
and ``context_builder``. Same public names, module-level constants,
signatures, defaults, environment variables, warnings and exceptions; the
chunking, token counting, pooling and text cleaning run in Rust.

The parts that belong to the application (its ``Source``/``Note``/``Notebook``
records, its ``model_manager``, its exceptions) are imported from the
installed ``open_notebook`` package when they are first needed, so that inside
Open Notebook its own objects (and its configured embedding model) are used.

``fastnotebook.chunking`` and the other top-level modules keep following the
2025 release (1500/225-character chunks); this package is the current contract.
``fastnotebook patch-open-notebook PATH`` swaps these six modules into an
Open Notebook checkout (see ``fastnotebook.open_notebook.patch``).
"""

from __future__ import annotations

#: The modules of ``open_notebook/utils`` this package mirrors.
MODULES: tuple[str, ...] = (
    "chunking",
    "token_utils",
    "embedding",
    "text_utils",
    "version_utils",
    "context_builder",
)

__all__ = ["MODULES"]
