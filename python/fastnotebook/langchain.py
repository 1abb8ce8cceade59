"""langchain-text-splitters' classes, split in Rust: one import line to change.

``from fastnotebook.langchain import RecursiveCharacterTextSplitter`` in place of
``from langchain_text_splitters import RecursiveCharacterTextSplitter``. Each
class here is a subclass of the LangChain class of the same name, constructed
the same way (it *is* that class, with ``split_text`` and ``create_documents``
done in Rust when that gives exactly the same result), so it goes wherever a
LangChain splitter or ``BaseDocumentTransformer`` goes.

The Rust path is taken only when it is exactly equivalent; otherwise the
LangChain implementation itself runs (the slower path, never a different
result). Each class decides that in one method, ``_rust_splitter``:

- lengths: ``len`` (the default), or a count made by ``from_tiktoken_encoder``
  for ``o200k_base`` / ``cl100k_base`` (our exact BPE), on text holding none of
  the encoding's special tokens (nor any string ``allowed_special`` /
  ``disallowed_special`` names: tiktoken raises on those, or counts them as
  one token). Any other ``length_function`` is Python's to evaluate.
- separators: literal, or regular expressions that match only one literal
  string (``"\\nclass "``, ``"\\nsetClass\\\\("``); with ``keep_separator=False``
  such a pattern must be its own literal (LangChain re-joins chunks with the
  pattern's text). Anything else (``"\\n#{1,6} "``, anchors, look-arounds) is
  Python's ``re``.
- sizes: ``int`` chunk sizes and overlaps.

See docs/langchain.md for the table of what runs where.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

try:
    import langchain_text_splitters as _lc
    from langchain_core.documents import Document
    from langchain_text_splitters import (
        ElementType,
        HeaderType,
        HTMLSectionSplitter,
        HTMLSemanticPreservingSplitter,
        JSFrameworkTextSplitter,
        Language,
        LineType,
        TextSplitter,
        Tokenizer,
        split_text_on_tokens,
    )
except ImportError as _err:  # pragma: no cover - depends on the install
    raise ImportError(
        "fastnotebook.langchain needs langchain-text-splitters: "
        "pip install 'fastnotebook[langchain]'"
    ) from _err

from fastnotebook import _core

if TYPE_CHECKING:
    from collections.abc import Collection
    from collections.abc import Set as AbstractSet

__all__ = [
    "CharacterTextSplitter",
    "ElementType",
    "ExperimentalMarkdownSyntaxTextSplitter",
    "HTMLHeaderTextSplitter",
    "HTMLSectionSplitter",
    "HTMLSemanticPreservingSplitter",
    "HeaderType",
    "JSFrameworkTextSplitter",
    "Language",
    "LatexTextSplitter",
    "LineType",
    "MarkdownHeaderTextSplitter",
    "MarkdownTextSplitter",
    "PythonCodeTextSplitter",
    "RecursiveCharacterTextSplitter",
    "RecursiveJsonSplitter",
    "TextSplitter",
    "TokenTextSplitter",
    "Tokenizer",
    "split_text_on_tokens",
]

# The encodings whose counts the core computes exactly.
_RUST_ENCODINGS = frozenset({"o200k_base", "cl100k_base"})

# Types whose copy.deepcopy is the object itself: a dict of these keys and
# values deep-copies to a shallow copy.
_ATOMIC: frozenset[type] = frozenset(
    {str, int, float, bool, type(None), bytes, complex, range, type(Ellipsis)}
)


class _TiktokenLength:
    """LangChain's tiktoken length function (it is what is called), tagged
    with what the Rust path needs to count the same: the encoding's name and
    the strings on which tiktoken does something else than count ordinary
    text (special tokens, and any string the caller allowed or disallowed)."""

    __slots__ = ("_count", "encoding_name", "special")

    def __init__(self, count: Callable[[str], int], encoding_name: str, special: frozenset[str]):
        self._count = count
        self.encoding_name = encoding_name
        self.special = special

    def __call__(self, text: str) -> int:
        return self._count(text)


def _special_strings(
    encoding: Any,
    allowed_special: Literal["all"] | AbstractSet[str] | None,
    disallowed_special: Literal["all"] | Collection[str],
) -> frozenset[str]:
    special: set[str] = set(encoding.special_tokens_set)
    for named in (allowed_special, disallowed_special):
        if named is not None and named != "all":
            special.update(str(s) for s in named)
    return frozenset(special)


def _tiktoken_encoding(encoding_name: str, model_name: str | None) -> Any:
    import tiktoken

    _register_shipped_vocabulary(encoding_name, model_name)
    if model_name is not None:
        return tiktoken.encoding_for_model(model_name)
    return tiktoken.get_encoding(encoding_name)


def _shipped_ranks(name: str) -> Callable[[str, str | None], dict[bytes, int]]:
    """A stand-in for ``tiktoken.load.load_tiktoken_bpe`` that reads the
    vocabulary built into the extension: it checks that the ``.tiktoken`` file
    those ranks make has the SHA-256 tiktoken expects of the file it would
    download, and raises ``ValueError`` if not."""
    import base64
    import hashlib

    tokens = _core._tiktoken_ranks(name)

    def load(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash is not None:
            digest = hashlib.sha256()
            for rank, token in enumerate(tokens):
                digest.update(base64.b64encode(token) + b" %d\n" % rank)
            if digest.hexdigest() != expected_hash:
                raise ValueError(f"the built-in {name} vocabulary is not {blobpath}")
        return {token: rank for rank, token in enumerate(tokens)}

    return load


def _register_shipped_vocabulary(encoding_name: str, model_name: str | None = None) -> None:
    """Puts ``o200k_base`` / ``cl100k_base`` (the encoding of ``model_name``
    when given) in tiktoken's registry, built by tiktoken's own constructor
    from the vocabulary built into the extension, so that tiktoken finds it
    and downloads nothing. Other encodings, one tiktoken already holds, and
    a tiktoken whose constructor expects another file are left to tiktoken."""
    import tiktoken
    import tiktoken.registry

    if model_name is not None:
        try:
            encoding_name = tiktoken.encoding_name_for_model(model_name)
        except KeyError:
            return
    if encoding_name not in _RUST_ENCODINGS or encoding_name in tiktoken.registry.ENCODINGS:
        return
    from tiktoken_ext import openai_public

    with tiktoken.registry._lock:
        if encoding_name in tiktoken.registry.ENCODINGS:
            return
        constructor = getattr(openai_public, encoding_name, None)
        loader = openai_public.load_tiktoken_bpe
        if constructor is None:
            return
        # The constructor names the file and its hash; the loader it calls
        # is the one to replace, for this call only (under tiktoken's lock).
        openai_public.load_tiktoken_bpe = _shipped_ranks(encoding_name)
        try:
            spec = constructor()
        except ValueError:
            return
        finally:
            openai_public.load_tiktoken_bpe = loader
        tiktoken.registry.ENCODINGS[encoding_name] = tiktoken.Encoding(**spec)


def _holds_special(text: str, special: frozenset[str]) -> bool:
    return any(s in text for s in special)


def _length_encoding(length_function: Any) -> tuple[bool, str | None, frozenset[str]] | None:
    """``(True, None, {})`` for ``len``, ``(True, encoding, special)`` for a
    length the core counts exactly; ``None`` when only Python can."""
    if length_function is len:
        return (True, None, frozenset())
    if (
        isinstance(length_function, _TiktokenLength)
        and length_function.encoding_name in _RUST_ENCODINGS
    ):
        return (True, length_function.encoding_name, length_function.special)
    return None


def _regex_literal(pattern: str) -> str | None:
    """The one string the regular expression matches, when it matches only
    one (a sequence of literal characters, parsed by Python's own ``re``
    parser, with no flags); else ``None``."""
    try:
        parser: Any = re._parser  # type: ignore[attr-defined]
        parsed = parser.parse(pattern)
        literal_op = re._constants.LITERAL  # type: ignore[attr-defined]
    except (AttributeError, re.error):
        return None
    if parsed.state.flags & ~re.UNICODE:
        return None
    chars = []
    for op, value in parsed:
        if op is not literal_op:
            return None
        chars.append(chr(value))
    return "".join(chars)


def _literal_separators(
    separators: Sequence[Any], is_separator_regex: Any, keep_separator: Any
) -> list[str] | None:
    """The separators as literal strings splitting the same way, or ``None``."""
    if not all(type(s) is str for s in separators):
        return None
    if not is_separator_regex:
        return list(separators)
    literals = []
    for pattern in separators:
        literal = _regex_literal(pattern)
        # Without keep_separator, chunks are re-joined with the pattern's text.
        if literal is None or (not keep_separator and literal != pattern):
            return None
        literals.append(literal)
    return literals


def _keep_mode(keep_separator: Any) -> Literal["start", "end"] | None:
    if keep_separator == "end":
        return "end"
    return "start" if keep_separator else None


def _sizes_are_ints(*sizes: Any) -> bool:
    """Whether the sizes are plain ints the core takes (LangChain's checks of
    their signs have passed in its constructor)."""
    return all(type(s) is int and 0 <= s < 2**62 for s in sizes)


# --- Documents -----------------------------------------------------------------

_TEMPLATE = Document(page_content="", metadata={})


def _fast_documents_work() -> bool:
    """Whether the core makes ``Document``s equal in every attribute to the
    ones ``Document(page_content=..., metadata=...)`` makes (pydantic's
    ``model_construct`` route); checked once, against the installed versions."""
    if any("__new__" in vars(c) for c in type(_TEMPLATE).__mro__ if c is not object):
        return False
    if getattr(Document, "__pydantic_post_init__", None) is not None:
        return False
    try:
        made = _core.langchain_section_documents(_TEMPLATE, [("x é", {"k": "v"})])[0]
    except (TypeError, AttributeError):
        return False
    ref = Document(page_content="x é", metadata={"k": "v"})
    return (
        type(made) is type(ref)
        and made.__dict__ == ref.__dict__
        and list(made.__dict__) == list(ref.__dict__)
        and made.model_fields_set == ref.model_fields_set
        and made.__pydantic_extra__ == ref.__pydantic_extra__
        and made.__pydantic_private__ == ref.__pydantic_private__
        and made == ref
    )


_FAST_DOCUMENTS = _fast_documents_work()


def _flat(metadata: dict[Any, Any]) -> bool:
    """Whether ``copy.deepcopy(metadata)`` equals ``dict(metadata)``."""
    return all(type(k) in _ATOMIC and type(v) in _ATOMIC for k, v in metadata.items())


_EMPTY_TEMPLATE = Document(page_content="")


def _section_documents(
    sections: list[tuple[str, dict[str, str]]], template: Document = _TEMPLATE
) -> list[Document]:
    if _FAST_DOCUMENTS:
        return _core.langchain_section_documents(template, sections)
    if template is _EMPTY_TEMPLATE:
        docs = []
        for content, metadata in sections:
            doc = Document(page_content="")
            doc.metadata.update(metadata)
            doc.page_content = content
            docs.append(doc)
        return docs
    return [Document(page_content=c, metadata=m) for c, m in sections]


class _FastCreateDocuments(TextSplitter):
    """``create_documents`` (and so ``split_documents`` and
    ``transform_documents``) with the ``Document``s made in Rust; the same
    documents, metadata copies and ``start_index`` as LangChain's."""

    def create_documents(
        self, texts: list[str], metadatas: list[dict[Any, Any]] | None = None
    ) -> list[Document]:
        metas = metadatas or [{}] * len(texts)
        n = len(texts)
        if (
            not _FAST_DOCUMENTS
            or len(metas) < n
            or not _sizes_are_ints(self._chunk_overlap)
            or not all(type(t) is str for t in texts)
            or not all(type(m) is dict for m in metas[:n])
        ):
            return super().create_documents(texts, metadatas)
        chunk_lists = self._split_all(list(texts))
        return _core.langchain_documents(
            _TEMPLATE,
            list(texts),
            chunk_lists,
            list(metas[:n]),
            [_flat(m) for m in metas[:n]],
            bool(self._add_start_index),
            self._chunk_overlap,
        )

    def _split_all(self, texts: list[str]) -> list[list[str]]:
        """``[self.split_text(t) for t in texts]``."""
        chunk_lists = []
        for text in texts:
            chunks = self.split_text(text)
            chunk_lists.append(chunks if type(chunks) is list else list(chunks))
        return chunk_lists


class _TiktokenLengths(TextSplitter):
    """``from_tiktoken_encoder`` whose length function the Rust path knows."""

    @staticmethod
    def _tiktoken_length_function(
        encoding_name: str = "gpt2",
        model_name: str | None = None,
        allowed_special: Literal["all"] | AbstractSet[str] | None = None,
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> Callable[[str], int]:
        _register_shipped_vocabulary(encoding_name, model_name)
        count = _lc.TextSplitter._tiktoken_length_function(
            encoding_name, model_name, allowed_special, disallowed_special
        )
        encoding = _tiktoken_encoding(encoding_name, model_name)
        special = _special_strings(encoding, allowed_special, disallowed_special)
        return _TiktokenLength(count, encoding.name, special)


class _CachedPlan:
    """The Rust splitter an instance's current settings call for, remade
    when a setting changes."""

    _fastnotebook_plan: tuple[tuple[Any, ...], Any] | None = None

    def _cached(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        cached = self._fastnotebook_plan
        if cached is not None and cached[0] == key:
            return cached[1]
        value = make()
        self._fastnotebook_plan = (key, value)
        return value


# --- Character splitters -------------------------------------------------------


class _SeparatorPlan(_CachedPlan):
    """The Rust path of the two separator-based splitters: ``_MODE`` is the
    core's name of the splitting, ``_separator_list`` the separators to try."""

    _MODE: Literal["recursive", "character"]

    @abstractmethod
    def _separator_list(self) -> list[str]: ...

    def _rust_splitter(self) -> tuple[Any, frozenset[str]] | None:
        """The Rust splitter exactly equivalent to this one's settings, and
        the strings a text must not hold for it to apply; ``None``: LangChain's."""
        settings: Any = self
        key = (
            tuple(self._separator_list()),
            settings._is_separator_regex,
            settings._keep_separator,
            settings._chunk_size,
            settings._chunk_overlap,
            settings._strip_whitespace,
            settings._length_function,
        )

        def make() -> tuple[Any, frozenset[str]] | None:
            length = _length_encoding(settings._length_function)
            separators = _literal_separators(
                self._separator_list(), settings._is_separator_regex, settings._keep_separator
            )
            if (
                length is None
                or not separators
                or not _sizes_are_ints(settings._chunk_size, settings._chunk_overlap)
            ):
                return None
            splitter = _core.LangchainSplitter(
                self._MODE,
                settings._chunk_size,
                settings._chunk_overlap,
                separators,
                _keep_mode(settings._keep_separator),
                bool(settings._strip_whitespace),
                length[1],
            )
            return splitter, length[2]

        plan: tuple[Any, frozenset[str]] | None = self._cached(key, make)
        return plan

    def split_text(self, text: str) -> list[str]:
        plan = self._rust_splitter()
        if plan is None or not isinstance(text, str) or _holds_special(text, plan[1]):
            fallback: list[str] = super().split_text(text)  # type: ignore[misc]
            return fallback
        chunks: list[str] = plan[0].split_text(text)
        return chunks


class RecursiveCharacterTextSplitter(
    _FastCreateDocuments, _TiktokenLengths, _SeparatorPlan, _lc.RecursiveCharacterTextSplitter
):
    """langchain-text-splitters' ``RecursiveCharacterTextSplitter``."""

    _MODE = "recursive"

    def _separator_list(self) -> list[str]:
        return list(self._separators)


class CharacterTextSplitter(
    _FastCreateDocuments, _TiktokenLengths, _SeparatorPlan, _lc.CharacterTextSplitter
):
    """langchain-text-splitters' ``CharacterTextSplitter``."""

    _MODE = "character"

    def _separator_list(self) -> list[str]:
        return [self._separator]


class MarkdownTextSplitter(RecursiveCharacterTextSplitter, _lc.MarkdownTextSplitter):
    """langchain-text-splitters' ``MarkdownTextSplitter`` (literal separators)."""


class PythonCodeTextSplitter(RecursiveCharacterTextSplitter, _lc.PythonCodeTextSplitter):
    """langchain-text-splitters' ``PythonCodeTextSplitter``."""


class LatexTextSplitter(RecursiveCharacterTextSplitter, _lc.LatexTextSplitter):
    """langchain-text-splitters' ``LatexTextSplitter`` (literal separators)."""


class TokenTextSplitter(_FastCreateDocuments, _TiktokenLengths, _CachedPlan, _lc.TokenTextSplitter):
    """langchain-text-splitters' ``TokenTextSplitter``."""

    def __init__(
        self,
        encoding_name: str = "gpt2",
        model_name: str | None = None,
        allowed_special: Literal["all"] | AbstractSet[str] | None = None,
        disallowed_special: Literal["all"] | Collection[str] = "all",
        **kwargs: Any,
    ) -> None:
        _register_shipped_vocabulary(encoding_name, model_name)
        super().__init__(encoding_name, model_name, allowed_special, disallowed_special, **kwargs)

    def _rust_splitter(self) -> tuple[str, frozenset[str]] | None:
        """The encoding the core splits with and the strings a text must not
        hold for it to; ``None``: LangChain's."""
        encoding = self._tokenizer
        key = (
            encoding,
            self._chunk_size,
            self._chunk_overlap,
            self._allowed_special,
            self._disallowed_special,
        )

        def make() -> tuple[str, frozenset[str]] | None:
            import tiktoken

            name = getattr(encoding, "name", None)
            if (
                name not in _RUST_ENCODINGS
                or tiktoken.get_encoding(name) is not encoding
                or not _sizes_are_ints(self._chunk_size, self._chunk_overlap)
                # LangChain raises for these, at split time.
                or self._chunk_overlap >= self._chunk_size
            ):
                return None
            special = _special_strings(encoding, self._allowed_special, self._disallowed_special)
            return name, special

        plan: tuple[str, frozenset[str]] | None = self._cached(key, make)
        return plan

    def split_text(self, text: str) -> list[str]:
        plan = self._rust_splitter()
        if plan is None or not isinstance(text, str) or _holds_special(text, plan[1]):
            return super().split_text(text)
        chunks: list[str] = _core.token_windows(
            text, plan[0], self._chunk_size, self._chunk_overlap
        )
        return chunks


# --- Header splitters ----------------------------------------------------------


class MarkdownHeaderTextSplitter(_CachedPlan, _lc.MarkdownHeaderTextSplitter):
    """langchain-text-splitters' ``MarkdownHeaderTextSplitter``."""

    def _rust_splitter(self) -> Any:
        """The Rust splitter for these settings; ``None``: LangChain's (custom
        header patterns, headers without a metadata name)."""
        headers = self.headers_to_split_on
        key = (
            tuple(tuple(h) for h in headers),
            self.return_each_line,
            self.strip_headers,
            tuple(self.custom_header_patterns.items()),
        )

        def make() -> Any:
            if self.custom_header_patterns or not all(
                len(h) == 2 and type(h[0]) is str and type(h[1]) is str and h[0] for h in headers
            ):
                return None
            try:
                return _core.MarkdownHeaderSplitter(
                    [(h[0], h[1]) for h in headers],
                    bool(self.return_each_line),
                    bool(self.strip_headers),
                )
            except ValueError:
                return None

        return self._cached(key, make)

    def split_text(self, text: str) -> list[Document]:
        splitter = self._rust_splitter()
        if splitter is None or not isinstance(text, str):
            return super().split_text(text)
        return _section_documents(splitter.split_text(text))


class ExperimentalMarkdownSyntaxTextSplitter(
    _CachedPlan, _lc.ExperimentalMarkdownSyntaxTextSplitter
):
    """langchain-text-splitters' ``ExperimentalMarkdownSyntaxTextSplitter``,
    the state it keeps between calls included (``chunks``, the list
    ``split_text`` returns and clears on its next call; ``current_chunk``;
    ``current_header_stack``)."""

    def _rust_splitter(self) -> Any:
        """The Rust splitter for these settings; ``None``: LangChain's."""
        headers = self.splittable_headers
        key = (tuple(headers.items()), self.strip_headers, self.return_each_line)

        def make() -> Any:
            if not all(type(k) is str and type(v) is str for k, v in headers.items()):
                return None
            try:
                return _core.MarkdownSyntaxSplitter(
                    list(headers.items()), bool(self.strip_headers), bool(self.return_each_line)
                )
            except (ValueError, UnicodeError):
                return None

        return self._cached(key, make)

    def split_text(self, text: str) -> list[Document]:
        splitter = self._rust_splitter()
        if splitter is None or not isinstance(text, str) or type(self.chunks) is not list:
            return super().split_text(text)
        sections, stack = splitter.split_text(text)
        # LangChain's chunks are made empty and grown by assignment: only
        # page_content is among their fields set; its lines are made whole.
        template = _EMPTY_TEMPLATE if not self.return_each_line else _TEMPLATE
        docs = _section_documents(sections, template)
        self.current_chunk = Document(page_content="")
        self.current_header_stack = list(stack)
        if self.return_each_line:
            # The chunks the lines came from stay LangChain's business: rebuild
            # them the way it does when someone looks (rarely); the lines are
            # what is returned.
            chunk_sections, _ = _core.MarkdownSyntaxSplitter(
                list(self.splittable_headers.items()), bool(self.strip_headers), False
            ).split_text(text)
            self.chunks.clear()
            self.chunks.extend(_section_documents(chunk_sections, _EMPTY_TEMPLATE))
            return docs
        self.chunks.clear()
        self.chunks.extend(docs)
        return self.chunks


class HTMLHeaderTextSplitter(_CachedPlan, _lc.HTMLHeaderTextSplitter):
    """langchain-text-splitters' ``HTMLHeaderTextSplitter``: ``split_text``,
    ``split_text_from_file`` and ``split_text_from_url`` parse in Rust."""

    def _rust_splitter(self) -> Any:
        """The Rust splitter for the headers LangChain's walk uses
        (``header_tags`` and ``header_mapping``); ``None``: LangChain's."""
        tags = self.header_tags
        mapping = self.header_mapping
        key = (tuple(tags), tuple(mapping.items()), self.return_each_element)

        def make() -> Any:
            if not all(type(t) is str and type(mapping.get(t)) is str for t in tags):
                return None
            if set(mapping) != set(tags) or len(set(tags)) != len(tags):
                return None
            try:
                return _core.HtmlHeaderSplitter(
                    [(t, mapping[t]) for t in tags], bool(self.return_each_element)
                )
            except ValueError:
                return None

        return self._cached(key, make)

    def _generate_documents(self, html_content: str) -> Iterator[Document]:
        splitter = self._rust_splitter()
        if splitter is not None and isinstance(html_content, str):
            try:
                sections = splitter.split_text(html_content)
            except _core.MarkupRejectedError:
                pass  # LangChain's own parse raises its own error
            else:
                return iter(_section_documents(sections))
        return super()._generate_documents(html_content)


class RecursiveJsonSplitter(_lc.RecursiveJsonSplitter):
    """langchain-text-splitters' ``RecursiveJsonSplitter``: LangChain's
    splitting, with ``create_documents``' ``Document``s made in Rust."""

    def create_documents(
        self,
        texts: list[dict[str, Any]],
        convert_lists: bool = False,
        ensure_ascii: bool = True,
        metadatas: list[dict[Any, Any]] | None = None,
    ) -> list[Document]:
        metas = metadatas or [{}] * len(texts)
        n = len(texts)
        if not _FAST_DOCUMENTS or len(metas) < n or not all(type(m) is dict for m in metas[:n]):
            return super().create_documents(texts, convert_lists, ensure_ascii, metadatas)
        chunk_lists = [
            self.split_text(json_data=t, convert_lists=convert_lists, ensure_ascii=ensure_ascii)
            for t in texts
        ]
        return _core.langchain_documents(
            _TEMPLATE,
            [""] * n,
            chunk_lists,
            list(metas[:n]),
            [_flat(m) for m in metas[:n]],
            False,
            0,
        )
