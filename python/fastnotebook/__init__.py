"""fastnotebook: the text preparation of Open Notebook's ``utils``, in Rust.

``from fastnotebook import chunk_text`` works like
``from open_notebook.utils import chunk_text``; the submodules mirror the
original's (``fastnotebook.chunking`` for ``open_notebook.utils.chunking``) and
are attributes of the package. Exceptions: ``fastnotebook.errors``. The
application (database, pipeline, API, CLI) is ``fastnotebook.app``, imported
only when asked for.
"""

from fastnotebook._lazy import lazy_exports

TYPE_CHECKING = False  # as typing's, which takes longer to import than the rest

if TYPE_CHECKING:
    from fastnotebook import (
        chunkers as chunkers,
    )
    from fastnotebook import (
        chunking as chunking,
    )
    from fastnotebook import (
        chunking_config as chunking_config,
    )
    from fastnotebook import (
        context_builder as context_builder,
    )
    from fastnotebook import (
        embedding as embedding,
    )
    from fastnotebook import (
        errors as errors,
    )
    from fastnotebook import (
        splitters as splitters,
    )
    from fastnotebook import (
        text_utils as text_utils,
    )
    from fastnotebook import (
        token_utils as token_utils,
    )
    from fastnotebook import (
        version_utils as version_utils,
    )
    from fastnotebook.chunkers import Chunk, achunk_many, chunk, chunk_many
    from fastnotebook.chunking import (
        CHUNK_SIZE,
        ContentType,
        chunk_text,
        chunk_texts,
        detect_content_type,
        detect_content_type_from_extension,
        detect_content_type_from_heuristics,
    )
    from fastnotebook.embedding import (
        generate_embedding,
        generate_embeddings,
        mean_pool_embeddings,
    )
    from fastnotebook.text_utils import (
        clean_thinking_content,
        extract_text_content,
        parse_thinking_content,
        remove_non_ascii,
        remove_non_printable,
    )
    from fastnotebook.token_utils import token_cost, token_count, token_counts
    from fastnotebook.version_utils import (
        compare_versions,
        get_installed_version,
        get_version_from_github,
    )

    __version__: str

# The original's ``open_notebook.utils`` re-exports, plus ``chunk_texts`` and
# ``token_counts``, and the chunk records (``chunk``, ``chunk_many``,
# ``achunk_many``, ``Chunk``); the submodules above are public too.
__all__ = [  # noqa: RUF022 -- grouped by submodule, as the original's
    "CHUNK_SIZE",
    "ContentType",
    "chunk_text",
    "chunk_texts",
    "detect_content_type",
    "detect_content_type_from_extension",
    "detect_content_type_from_heuristics",
    "generate_embedding",
    "generate_embeddings",
    "mean_pool_embeddings",
    "remove_non_ascii",
    "remove_non_printable",
    "parse_thinking_content",
    "clean_thinking_content",
    "extract_text_content",
    "token_count",
    "token_cost",
    "token_counts",
    "compare_versions",
    "get_installed_version",
    "get_version_from_github",
    "Chunk",
    "chunk",
    "chunk_many",
    "achunk_many",
]

if not TYPE_CHECKING:  # checkers see the imports above, not a __getattr__
    # Imported on first use (``fastnotebook._lazy``): ``import fastnotebook`` and
    # every ``fastnotebook.<module>`` below it cost a few milliseconds, not the
    # whole drop-in's imports.
    _SUBMODULES = (
        "chunkers",
        "chunking",
        "chunking_config",
        "context_builder",
        "embedding",
        "errors",
        "splitters",
        "text_utils",
        "token_utils",
        "version_utils",
    )
    _FROM = {
        "chunkers": ("Chunk", "chunk", "chunk_many", "achunk_many"),
        "chunking": (
            "CHUNK_SIZE",
            "ContentType",
            "chunk_text",
            "chunk_texts",
            "detect_content_type",
            "detect_content_type_from_extension",
            "detect_content_type_from_heuristics",
        ),
        "embedding": ("generate_embedding", "generate_embeddings", "mean_pool_embeddings"),
        "text_utils": (
            "remove_non_ascii",
            "remove_non_printable",
            "parse_thinking_content",
            "clean_thinking_content",
            "extract_text_content",
        ),
        "token_utils": ("token_count", "token_cost", "token_counts"),
        "version_utils": ("compare_versions", "get_installed_version", "get_version_from_github"),
    }
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "__version__": "fastnotebook._version",
            **{name: f"{__name__}.{name}" for name in _SUBMODULES},
            **{name: f"{__name__}.{module}" for module, names in _FROM.items() for name in names},
        },
    )
