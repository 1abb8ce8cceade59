"""Parity of ``fastnotebook._core.HtmlHeaderSplitter`` with langchain's
``HTMLHeaderTextSplitter`` (langchain-text-splitters 1.1.3, BeautifulSoup
4.15.0, Python 3.11's ``html.parser``): same documents, same order, same
``page_content``, same metadata (keys, values and key order), and the same
errors.

The reference is slow (well under 1 MB/s), so each input is parsed by
BeautifulSoup once and the parse is shared by the configurations compared
(see ``_shared_soup``): the parse does not depend on the configuration and the
splitter only reads the tree.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bs4
import pytest
from bs4.exceptions import ParserRejectedMarkup
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_text_splitters import HTMLHeaderTextSplitter

from fastnotebook._core import HtmlHeaderSplitter, MarkupRejectedError
from helpers.corpus import CORPUS, corpus_files, read

OPEN_NOTEBOOK = [("h1", "Header 1"), ("h2", "Header 2"), ("h3", "Header 3")]
SPARSE = [("h2", "A"), ("h4", "B")]
CONFIGS = [
    (OPEN_NOTEBOOK, False),
    (OPEN_NOTEBOOK, True),
    (SPARSE, False),
    (SPARSE, True),
]

Outcome = tuple[str, Any]

_real_soup = bs4.BeautifulSoup


@contextlib.contextmanager
def _shared_soup() -> Iterator[None]:
    """Within the block, ``BeautifulSoup(markup, "html.parser")`` parses each
    markup once (langchain imports ``bs4.BeautifulSoup`` at each call)."""
    cache: dict[str, Any] = {}

    def soup(markup: str, features: str) -> Any:
        assert features == "html.parser"
        if markup not in cache:
            cache[markup] = _real_soup(markup, features)
        return cache[markup]

    saved = bs4.BeautifulSoup
    bs4.BeautifulSoup = soup  # type: ignore[misc,assignment]
    try:
        yield
    finally:
        bs4.BeautifulSoup = saved  # type: ignore[misc]


def reference(text: str, headers: list[tuple[str, str]], each: bool) -> Outcome:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            docs = HTMLHeaderTextSplitter(headers, each).split_text(text)
        except ParserRejectedMarkup:
            return ("rejected", None)
        except ValueError:
            return ("value-error", None)
    return ("ok", [(d.page_content, list(d.metadata.items())) for d in docs])


def ours(text: str, headers: list[tuple[str, str]], each: bool) -> Outcome:
    try:
        docs = HtmlHeaderSplitter(headers, each).split_text(text)
    except MarkupRejectedError:
        return ("rejected", None)
    except ValueError:
        return ("value-error", None)
    return ("ok", [(content, list(meta.items())) for content, meta in docs])


def assert_parity(text: str, configs: list[tuple[list[tuple[str, str]], bool]] = CONFIGS) -> None:
    with _shared_soup():
        for headers, each in configs:
            want = reference(text, headers, each)
            got = ours(text, headers, each)
            assert got == want, f"headers={headers} each={each} text={text[:300]!r}"


# --------------------------------------------------------------------- corpus


def _corpus_files() -> list[Any]:
    files = [p for kind in ("html", "md", "txt") for p in corpus_files(kind) if p.is_file()]
    if not files:
        return [
            pytest.param(
                None,
                marks=pytest.mark.skip(
                    reason=f"shared corpus not found at {CORPUS} (set FASTNOTEBOOK_CORPUS to "
                    "the folder holding html/, md/ and txt/)"
                ),
                id="corpus-absent",
            )
        ]
    return [pytest.param(p, id=f"{p.parent.name}/{p.name}") for p in files]


@pytest.mark.parametrize("path", _corpus_files())
def test_corpus_document(path: Path) -> None:
    """Every corpus document, Markdown and text ones too (as HTML): Open
    Notebook's configuration, and the other headers one by one."""
    assert_parity(read(path), [CONFIGS[0], CONFIGS[3]])


# ------------------------------------------------------------- tricky cases

TRICKY = [
    "",
    "   ",
    "plain text only",
    "<html><body><h1>Intro</h1><p>Welcome</p><h2>Background</h2><p>Details</p>"
    "<h1>End</h1><p>Bye</p></body></html>",
    # Nesting, no implicit closing, depth-based scope of headers.
    "<p>a<p>b</p>c</p>d",
    "<div><h1>A</h1><div><h2>B</h2></div><p>shallow</p></div><p>after</p>",
    "<h2>B</h2><h1>A</h1><h3>C</h3><p>x</p><h4>D</h4><p>y</p>",
    "<h1>a</h1><h1>b<h2>c</h2>d</h1>e",
    "<h1></h1><p>no header text</p><h1> </h1>x",
    # body selection.
    "<head><title>T</title></head>x<body><p>in</p></body><p>after</p>",
    "<body/>text",
    "<body>a</body><body>b</body>",
    "<div><body>inner</body></div>outer",
    # Every kind of string.
    "<p>a<!--c-->b<!x>c<?pi>d<![CDATA[e]]>f<![if x]>g<!DOCTYPE html>h</p>",
    "<p>a<script>x<y</script>b<style>s</style><template>t</template></p>",
    "<!doctypehtml><!DOCTYPE><!doctype x>",
    "<p>a<![CDATA[]]>b<![cdata x] ] >c<![endif]>d</p>",
    # References.
    "&#128;&#x80;&#0;&#x110000;&#xD800;&#65&#x41g&amp&lt;&bogus;x&amp-y",
    "&#129;&#x8d;&#999999999999999999999;&#x" + "f" * 40 + ";",
    "a&amp.b x&amp.a",
    "&#" + "1" * 4301 + ";",
    "&#x" + "1" * 5000 + ";",
    "& &; &#; &#x; &#xg; &#1a; &;",
    # The two passes of html.parser.
    "x &a",
    "x &ab",
    "x &",
    "a &#12a; <b>bold</b>",
    "&#q;<p>a</p>",
    "&#q; &#r;<p>a</p>",
    "<p>a<!-- unterminated",
    "<p>a</p",
    "<p>a<b",
    "<p>a<",
    "text <",
    "<p>a<script>never closed</p><h1>T</h1>",
    "&#q;<p>a<script>never closed</p>",
    "<p>a<!-- x <h1>b</h1>",
    "&#q;<p>a<!-- x <h1>b</h1>",
    "<?pi without end <h1>x</h1>",
    "<!doctype html <h1>x</h1>",
    "<![if x <h1>y</h1>",
    "&#q;<![if x <h1>y</h1>",
    "&#q;<a b='<h1>x</h1>",
    # Void and self-closing tags.
    "<br>a</br>b",
    "a</br>b",
    "a</x>b",
    "<h1/>a<h2/>b",
    "<img src=x>a<p>b<br/>c</br>d",
    "<br><br></br>a</br>b</br>c",
    # Start tags and attributes.
    "<a href='x>y'>t</a><a b='x>u",
    "<a b= 'x>t",
    "<a b=='x>t",
    "<a b='x>t",
    "<a b=\"x\" c='y' d=e f>t</a>",
    "<a b=c/>t<a/ >u<a / / >v<a //>w",
    "<a\x00b>c",
    '<a"\x00x>c',
    "<h1\u00a0>not a header</h1\u00a0><h1\x0b>nor this</h1>",
    "<H1>Upper</H1><p>x</p>",
    "</>x</ p>y</3>z</p x=1>w",
    "<p>a<script>1</\u017fcript>2</script>3</p>",
    "<style>x</STYLE >y",
    "<script>a</script\x0b>b</script>c",
    "<p\u3000class=x>t</p>",
    "<p>one</p>\r\n<p>two</p>\r<p>three</p>",
    "<h2>\u00e9\u00e8</h2>\u4e2d\u6587<h3>\U0001f600</h3>",
    "<p>\ud7ff\ue000\uffff</p>",
    # Rejected markup.
    "<![ x]>",
    "<![foo[x]]>",
    "a<![1",
    "<p>fine</p><![unknown[x]]>",
    "a<![cdata",
]


@pytest.mark.parametrize("text", TRICKY)
def test_tricky_case(text: str) -> None:
    assert_parity(text)


def test_rejected_markup_raises_the_dedicated_error() -> None:
    assert ours("<![ x]>", OPEN_NOTEBOOK, False) == ("rejected", None)
    with pytest.raises(MarkupRejectedError):
        HtmlHeaderSplitter(OPEN_NOTEBOOK).split_text("<![foo[x]]>")
    assert issubclass(MarkupRejectedError, ValueError)


def test_deep_nesting() -> None:
    n = 100_000
    text = "<div>" * n + "x" + "</div>" * n
    assert HtmlHeaderSplitter(OPEN_NOTEBOOK).split_text(text) == [("x", {})]
    assert_parity("<div>" * 500 + "<h1>t</h1>" + "<p>x" * 300, CONFIGS[:1])


def test_lone_surrogates_are_ordinary_text() -> None:
    # (Without a "<" or a newline, up to 256 characters, BeautifulSoup's
    # filename check raises UnicodeEncodeError on them: not compared here.)
    for text in [
        "<h1>a\udc80b</h1><p>\udc80</p>",
        "<t\udc80>x</t\udc80>y<p \ud800=1>z",
        "\ud83d<p>\ude00 &#55296; \udfff",
        "<h2>\ud800\udc00</h2>" + "\udc80" * 300,
    ]:
        assert_parity(text)


def test_many_failed_start_tags() -> None:
    """Tags that never end, each starting inside the previous one."""
    assert_parity("&#;" + "<a b" * 1500, CONFIGS[:1])
    assert_parity("&#;" + "<a b='<a b='" * 300 + "c", CONFIGS[:1])


def test_tag_names_lowercase_as_python() -> None:
    """Start and end tags match when Python's ``str.lower`` says so, for
    characters with case mappings and ones newer than Unicode 14."""
    chars = [chr(c) for c in range(0x80, 0x2D00) if chr(c).lower() != chr(c)][::7]
    chars += ["\u0130", "\u03a3", "\u1e9e", "\u2126", "\u212a", "\u212b"]
    chars += ["\u1c89", "\ua7cb", "\ua7cc", "\ua7dc", "\U00010d50", "\U00016ea0"]
    parts = []
    for c in chars:
        parts.append(f"<p>a<t{c}x>b</t{c.lower()}x>c</p>")
        parts.append(f"<p>a<t{c.lower()}>b</t{c}>c</p>")
    # The final sigma depends on the neighbours' properties in Unicode 14.
    for c in ["", "b", "\u00ad", "\u0295", "\u0345", "\u02b0", "\U0001171e", "\u1c8a", "'"]:
        for end in ("\u03c3", "\u03c2"):
            parts.append(f"<p>a<x\u03a3{c}>b</x{end}{c}>c</p>")
            parts.append(f"<p>a<{c}\u03a3x>b</{c}{end}x>c</p>")
    assert_parity("".join(parts), CONFIGS[:1])


@pytest.mark.parametrize(
    "tag",
    [
        "h1",
        "H1",
        "h01",
        "h+1",
        "h 1 ",
        "h1_0",
        "h\u0661",
        "h-1",
        "x1",
        "h",
        "",
        "hx",
        "h1.0",
        "h1__0",
        "h_1",
        "h\u200b1",
        "h" + "9" * 4300,
        "h" + "9" * 4301,
        "h9999999999999999999999",
    ],
)
def test_header_tags_validate_as_int(tag: str) -> None:
    try:
        HTMLHeaderTextSplitter([(tag, "X")])
        want_error = False
    except ValueError:
        want_error = True
    if want_error:
        with pytest.raises(ValueError):
            HtmlHeaderSplitter([(tag, "X")])
    else:
        HtmlHeaderSplitter([(tag, "X")])


def test_unusual_header_configurations() -> None:
    text = (
        "<h01>a</h01><p>p1</p><h+1>b</h+1><h1>c</h1><h1_0>d</h1_0><div><h-1>e</h-1>"
        "<h99999999999999999999999>f</h99999999999999999999999></div><p>g</p><h2>h</h2>"
    )
    for headers in (
        [("h01", "A"), ("h+1", "B"), ("h1", "C"), ("h1_0", "D"), ("h-1", "E")],
        [("h99999999999999999999999", "Z"), ("h2", "A"), ("h1", "A")],
        [("h1", "A"), ("h1", "B"), ("h2", "A")],
        [("h2", "B"), ("h1", "A"), ("h2", "A")],
        [],
    ):
        assert_parity(text, [(headers, False), (headers, True)])


# ---------------------------------------------------------------- hypothesis

NAMES = [
    "p",
    "div",
    "span",
    "a",
    "b",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "H1",
    "h2 ",
    "body",
    "BODY",
    "script",
    "style",
    "SCRIPT",
    "template",
    "pre",
    "br",
    "img",
    "hr",
    "html",
    "head",
    "x",
]
ATTRS = [
    "",
    " a",
    " a=b",
    " a='x>y'",
    ' a="q"',
    " a= 'open",
    " a=='x",
    ' a="<h1>"',
    " b = c",
    "/",
    " /",
    "\x00",
    "\u00a0c=d",
    " a='",
    ' a="',
    "=x",
]
ENDINGS = [">", ">", ">", "/>", " />", "/ >", "", " x", "\n>"]
END_ENDINGS = [">", " >", " x>", "", "\x0b>"]
FRAGMENTS = [
    "<!-- c -->",
    "<!--",
    "-->",
    "--!>",
    "<!x>",
    "<!DOCTYPE html>",
    "<!doctype",
    "<?pi?>",
    "<?",
    "<![CDATA[d]]>",
    "<![CDATA[",
    "]]>",
    "<![if x]>",
    "<![endif]>",
    "<![",
    "<![ x",
    "&amp;",
    "&amp",
    "&lt;",
    "&#65;",
    "&#x41;",
    "&#",
    "&#x",
    "&#12a;",
    "&#128;",
    "&#0;",
    "&#xD800;",
    "&bogus;",
    "&",
    ";",
    "&a",
    "&a.b",
    "</>",
    "</ p>",
    "</3>",
    "<",
    ">",
    "</",
    "\r\n",
    "\u017f",
    "\u2028",
    "\u00a0",
    "'",
    '"',
    "=",
]
TEXT = st.text(alphabet=st.sampled_from("ab c\n\t\u00e9\u03a3\u4e2d<>&;#/='\"-!"), max_size=6)


@st.composite
def start_tag(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(NAMES))
    attrs = "".join(draw(st.lists(st.sampled_from(ATTRS), max_size=3)))
    return f"<{name}{attrs}{draw(st.sampled_from(ENDINGS))}"


@st.composite
def end_tag(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(NAMES))
    return f"</{name}{draw(st.sampled_from(END_ENDINGS))}"


PIECES = st.one_of(start_tag(), end_tag(), st.sampled_from(FRAGMENTS), TEXT)
DOCUMENTS = st.lists(PIECES, max_size=25).map("".join)
RAW = st.lists(
    st.sampled_from(
        [*"<>/='\"ab!-?&#;x1 \t\n[]", "h1", "h2", "\u00a0", "\x00", "script", "CDATA", "br", "body"]
    ),
    max_size=40,
).map("".join)
FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(DOCUMENTS)
def test_generated_documents(text: str) -> None:
    assert_parity(text)


@FAST
@given(RAW)
def test_generated_raw_markup(text: str) -> None:
    assert_parity(text)


@settings(max_examples=80, deadline=None)
@given(st.lists(PIECES, max_size=10).map("".join), st.sampled_from(["&#q;", "<a", "<!--", ""]))
def test_generated_second_pass(text: str, prefix: str) -> None:
    """A broken construct first: the rest goes through ``close()``'s pass."""
    assert_parity(prefix + text)
