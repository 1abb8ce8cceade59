"""The three splitters ``chunk_text`` is built from, usable on their own.

- ``RecursiveSplitter(chunk_size=4000, chunk_overlap=200, separators=None,
  keep_separator=True, strip_whitespace=True)``: langchain's
  ``RecursiveCharacterTextSplitter`` with literal separators and ``len`` as
  length; ``split_text(text) -> list[str]``. ``keep_separator`` is ``True`` /
  ``"start"`` (separator starts the next piece), ``"end"`` or ``False``.
- ``MarkdownHeaderSplitter(headers_to_split_on, return_each_line=False,
  strip_headers=True)``: langchain's ``MarkdownHeaderTextSplitter``;
  ``split_text(text) -> list[tuple[page_content, metadata]]``.
- ``HtmlHeaderSplitter(headers_to_split_on, return_each_element=False)``:
  langchain's ``HTMLHeaderTextSplitter`` (BeautifulSoup with ``html.parser``);
  ``split_text(text) -> list[tuple[page_content, metadata]]``.

Each gives the same output as the langchain class with the same parameters.
"""

from fastnotebook._core import HtmlHeaderSplitter, MarkdownHeaderSplitter, RecursiveSplitter

__all__ = ["HtmlHeaderSplitter", "MarkdownHeaderSplitter", "RecursiveSplitter"]
