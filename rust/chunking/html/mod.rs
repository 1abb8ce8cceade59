//! Header-aware HTML splitting, as langchain-text-splitters 1.1.3's
//! `HTMLHeaderTextSplitter`, which parses with BeautifulSoup 4.15.0 and
//! Python 3.11.7's `html.parser`.
//!
//! [`tokenizer`] reproduces `html.parser` with BeautifulSoup's handlers,
//! [`tree`] BeautifulSoup's tree building; this module walks the tree as
//! `_generate_documents` does. Tags are created in document order, which is
//! the pre-order of the tree, so the depth-first walk is a loop over the tags
//! in creation order (no recursion, however deep the nesting).
//!
//! For every tag under the first `<body>` (or under the document when there
//! is none), its text is its direct strings (text, comments, CDATA,
//! declarations, processing instructions, script and style content),
//! stripped, the empty ones dropped, joined with `" "`. A tag without text is
//! skipped. A header tag closes the running chunk (tags' texts joined with
//! `"  \n"`), drops the active headers of its level or deeper, and is a
//! document of its own; any other tag drops the active headers found deeper
//! in the tree than itself, then joins the chunk (or is a document of its
//! own with `return_each_element`).
//!
//! Known differences from the reference: none in the parsing and splitting.
//! Tag names are lowercased as Python 3.11 does (Unicode 14, final sigma
//! included, see `tokenizer::python_lower_into`). Outside of them:
//! - inputs of 4 GiB or more are refused ([`Error::UnsupportedText`]);
//! - BeautifulSoup raises `UnicodeEncodeError` (from its "looks like a file
//!   name" warning check) on a text of at most 256 characters without `<`
//!   or newline, not starting with `http:`/`https:` without a space, that
//!   holds a lone surrogate. Here surrogates arrive as private-use stand-ins,
//!   so only the binding, which knows them, could raise likewise.
//!
//! Errors: markup `html.parser` rejects (a marked section `<![` without a
//! known keyword) gives [`Error::MarkupRejected`], as BeautifulSoup raises
//! `ParserRejectedMarkup`; a decimal character reference of more than 4300
//! digits gives [`Error::UnsupportedText`], as Python's `int()` raises
//! `ValueError` there.

mod casing;
pub mod entities;
mod tokenizer;
mod tree;

use std::cmp::Ordering;
use std::ops::Range;

use super::Section;
use crate::error::{Error, Result};
use crate::unicode;
use tokenizer::Tokenizer;
use tree::Tree;

/// Open Notebook's headers: `h1`, `h2`, `h3`.
pub fn open_notebook_headers() -> Vec<(String, String)> {
    [("h1", "Header 1"), ("h2", "Header 2"), ("h3", "Header 3")]
        .iter()
        .map(|&(t, n)| (t.to_string(), n.to_string()))
        .collect()
}

/// A Python `int`, as `int(s)` parses it: sign and decimal digits without
/// leading zeros (empty for zero).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Level {
    negative: bool,
    digits: String,
}

impl Ord for Level {
    fn cmp(&self, other: &Self) -> Ordering {
        let magnitude = self
            .digits
            .len()
            .cmp(&other.digits.len())
            .then_with(|| self.digits.cmp(&other.digits));
        match (self.negative, other.negative) {
            (false, false) => magnitude,
            (true, true) => magnitude.reverse(),
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
        }
    }
}

impl PartialOrd for Level {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The value of a Unicode decimal digit (`str.isdecimal()`).
fn decimal_value(c: char) -> Option<u8> {
    if c.is_ascii_digit() {
        return Some(c as u8 - b'0');
    }
    let cp = c as u32;
    unicode::DECIMAL_RANGES
        .iter()
        .find(|&&(lo, hi)| lo <= cp && cp <= hi)
        // Decimal digits come in runs of ten, from zero up.
        .map(|&(lo, _)| ((cp - lo) % 10) as u8)
}

/// Python's `int(s)` (base 10): surrounding whitespace, a sign, Unicode
/// decimal digits, single underscores between digits, at most 4300 digits.
fn parse_int(s: &str) -> std::result::Result<Level, String> {
    let invalid = || format!("invalid literal for int() with base 10: {s:?}");
    let body = unicode::strip(s);
    let (negative, rest) = match body.chars().next() {
        Some('-') => (true, &body[1..]),
        Some('+') => (false, &body[1..]),
        _ => (false, body),
    };
    let mut digits = String::new();
    let mut count = 0usize;
    let mut after_digit = false;
    let mut after_underscore = false;
    for c in rest.chars() {
        if c == '_' {
            if !after_digit {
                return Err(invalid());
            }
            after_digit = false;
            after_underscore = true;
            continue;
        }
        let Some(d) = decimal_value(c) else {
            return Err(invalid());
        };
        count += 1;
        after_digit = true;
        after_underscore = false;
        if !(digits.is_empty() && d == 0) {
            digits.push(char::from(b'0' + d));
        }
    }
    if count == 0 || after_underscore {
        return Err(invalid());
    }
    if count > 4300 {
        return Err(format!(
            "Exceeds the limit (4300 digits) for integer string conversion: value has {count} digits"
        ));
    }
    let negative = negative && !digits.is_empty();
    Ok(Level { negative, digits })
}

#[derive(Clone, Debug)]
struct HeaderTag {
    tag: String,
    level: Level,
    /// Index into `HtmlHeaderSplitter::names`.
    name: usize,
}

/// A document of the walk: its text's range in the output, and its headers
/// as (index into `HtmlHeaderSplitter::names`, range of their text).
struct Span {
    range: Range<usize>,
    metadata: Vec<(usize, Range<usize>)>,
}

/// langchain's `HTMLHeaderTextSplitter`.
#[derive(Clone, Debug)]
pub struct HtmlHeaderSplitter {
    /// One entry per distinct tag; the name is the last one given for it.
    headers: Vec<HeaderTag>,
    names: Vec<String>,
    return_each_element: bool,
}

/// A header in force: `active_headers[name] = (text, level, dom_depth)`,
/// its text a range of the walk's output.
struct Active {
    name: usize,
    text: Range<usize>,
    header: usize,
    depth: u32,
}

impl HtmlHeaderSplitter {
    /// `headers_to_split_on` pairs a tag ("h2") with a metadata name; the
    /// level of a tag is `int(tag[1:])`, which must parse.
    pub fn new(
        headers_to_split_on: Vec<(String, String)>,
        return_each_element: bool,
    ) -> Result<Self> {
        let mut headers: Vec<HeaderTag> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        for (tag, name) in headers_to_split_on {
            let tail = tag.char_indices().nth(1).map_or("", |(o, _)| &tag[o..]);
            let level = parse_int(tail).map_err(Error::InvalidArgument)?;
            let name = match names.iter().position(|n| *n == name) {
                Some(i) => i,
                None => {
                    names.push(name);
                    names.len() - 1
                }
            };
            match headers.iter_mut().find(|h| h.tag == tag) {
                Some(h) => h.name = name,
                None => headers.push(HeaderTag { tag, level, name }),
            }
        }
        Ok(Self {
            headers,
            names,
            return_each_element,
        })
    }

    /// `split_text(html)`: `(page_content, metadata)` of each document.
    pub fn split(&self, html: &str) -> Result<Vec<Section>> {
        let mut text = String::new();
        let spans = self.walk(html, &mut text, true)?;
        let piece = |r: &Range<usize>| text.get(r.clone()).unwrap_or_default().to_string();
        Ok(spans
            .iter()
            .map(|s| Section {
                content: piece(&s.range),
                metadata: s
                    .metadata
                    .iter()
                    .map(|(name, r)| (self.names[*name].clone(), piece(r)))
                    .collect(),
            })
            .collect())
    }

    /// The documents' texts appended to `out`, one after the other, and
    /// their ranges there (increasing and adjacent); no metadata.
    ///
    /// Why: `chunk_text` drops the metadata and splits the texts again; made
    /// straight into the buffer it splits, they cost one copy out of the
    /// tree, no string each and no copies of the headers.
    pub fn split_into(&self, html: &str, out: &mut String) -> Result<Vec<Range<usize>>> {
        let spans = self.walk(html, out, false)?;
        Ok(spans.into_iter().map(|s| s.range).collect())
    }

    /// The walk of `_generate_documents`: each document's text is written
    /// to `out`, and its headers, when `with_metadata`, are ranges of `out`
    /// (the text of the header tag that set them).
    fn walk(&self, html: &str, out: &mut String, with_metadata: bool) -> Result<Vec<Span>> {
        if u32::try_from(html.len()).is_err() {
            // Tags and strings are counted in `u32`.
            return Err(Error::UnsupportedText(
                "HTML text of 4 GiB or more is not supported".into(),
            ));
        }
        let mut tokenizer = Tokenizer::new(html, Tree::new(html));
        tokenizer.run()?;
        let mut tree = tokenizer.sink;
        tree.finish();

        // Name id -> index into `self.headers`.
        let header_ids: Vec<u32> = self
            .headers
            .iter()
            .map(|h| tree.names.intern(&h.tag))
            .collect();
        let mut header_of = vec![u32::MAX; tree.names.len()];
        for (i, &id) in header_ids.iter().enumerate() {
            header_of[id as usize] = i as u32;
        }

        let (start, end) = match tree.body {
            Some((b, e)) => (b as usize, e as usize),
            None => (0, tree.nodes.len()),
        };

        // At most the strings and a separator (" " or "  \n") before each:
        // no growth while writing.
        out.reserve(tree.piece_bytes + 3 * tree.pieces.len());
        let mut spans = Vec::new();
        let mut active: Vec<Active> = Vec::new();
        // Where the running chunk starts in `out`, when one is open. A tag's
        // text is never empty, so an open chunk is never empty either.
        let mut chunk: Option<usize> = None;
        let each = self.return_each_element;
        let metadata = |active: &[Active]| -> Vec<(usize, Range<usize>)> {
            if !with_metadata {
                return Vec::new();
            }
            active.iter().map(|a| (a.name, a.text.clone())).collect()
        };

        for node in tree.nodes.get(start..end).unwrap_or(&[]) {
            if node.first == u32::MAX {
                continue;
            }
            let header = header_of
                .get(node.name as usize)
                .copied()
                .unwrap_or(u32::MAX);
            if header == u32::MAX {
                // Most tags sit under every active header: no rewrite then.
                if active.iter().any(|a| node.depth < a.depth) {
                    active.retain(|a| node.depth >= a.depth);
                }
                if !each {
                    // The usual case: straight into the chunk.
                    match chunk {
                        Some(_) => out.push_str("  \n"),
                        None => chunk = Some(out.len()),
                    }
                    tree.write_text(node, out);
                    continue;
                }
                let from = out.len();
                tree.write_text(node, out);
                spans.push(Span {
                    range: from..out.len(),
                    metadata: metadata(&active),
                });
                continue;
            }
            let header = header as usize;
            if let Some(from) = chunk.take() {
                spans.push(Span {
                    range: from..out.len(),
                    metadata: metadata(&active),
                });
            }
            let from = out.len();
            tree.write_text(node, out);
            let text = from..out.len();
            let level = &self.headers[header].level;
            active.retain(|a| self.headers[a.header].level < *level);
            let name = self.headers[header].name;
            let entry = Active {
                name,
                text: text.clone(),
                header,
                depth: node.depth,
            };
            match active.iter_mut().find(|a| a.name == name) {
                Some(a) => *a = entry,
                None => active.push(entry),
            }
            spans.push(Span {
                range: text,
                metadata: metadata(&active),
            });
        }
        if let Some(from) = chunk {
            spans.push(Span {
                range: from..out.len(),
                metadata: metadata(&active),
            });
        }
        Ok(spans)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splitter(each: bool) -> HtmlHeaderSplitter {
        HtmlHeaderSplitter::new(open_notebook_headers(), each).expect("valid headers")
    }

    /// `(content, [(name, value)])` of each section.
    fn split(html: &str, each: bool) -> Vec<(String, Vec<(String, String)>)> {
        splitter(each)
            .split(html)
            .expect("accepted")
            .into_iter()
            .map(|s| (s.content, s.metadata))
            .collect()
    }

    /// The contents alone, aggregated.
    fn contents(html: &str) -> Vec<String> {
        split(html, false).into_iter().map(|(c, _)| c).collect()
    }

    fn meta(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|&(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn langchain_docstring_example() {
        let html = "<html><body><h1>Intro</h1><p>Welcome</p><h2>Background</h2>\
                    <p>Details</p><h1>End</h1><p>Bye</p></body></html>";
        let h1 = |v| ("Header 1", v);
        let expected = vec![
            ("Intro".to_string(), meta(&[h1("Intro")])),
            ("Welcome".to_string(), meta(&[h1("Intro")])),
            (
                "Background".to_string(),
                meta(&[h1("Intro"), ("Header 2", "Background")]),
            ),
            (
                "Details".to_string(),
                meta(&[h1("Intro"), ("Header 2", "Background")]),
            ),
            ("End".to_string(), meta(&[h1("End")])),
            ("Bye".to_string(), meta(&[h1("End")])),
        ];
        assert_eq!(split(html, false), expected);
        assert_eq!(split(html, true), expected);
    }

    #[test]
    fn chunks_join_tags_and_strings() {
        // Direct strings of a tag are joined with " ", tags with "  \n"; a
        // tag's text comes before its children's (pre-order).
        assert_eq!(contents("<p>a<p>b</p>c</p>d"), ["d  \na c  \nb"]);
        assert_eq!(
            split("<p>a<p>b</p>c</p>d", true),
            [
                ("d".to_string(), vec![]),
                ("a c".to_string(), vec![]),
                ("b".to_string(), vec![])
            ]
        );
        assert_eq!(contents("<p>one</p>\r\n<p>two</p>"), ["one  \ntwo"]);
        assert!(contents("").is_empty());
        assert!(contents("  <p> \n </p> ").is_empty());
    }

    #[test]
    fn headers_out_of_scope_are_dropped_by_depth_and_level() {
        assert_eq!(
            split(
                "<div><h1>A</h1><div><h2>B</h2></div><p>shallow</p></div>",
                false
            ),
            [
                ("A".to_string(), meta(&[("Header 1", "A")])),
                (
                    "B".to_string(),
                    meta(&[("Header 1", "A"), ("Header 2", "B")])
                ),
                ("shallow".to_string(), meta(&[("Header 1", "A")])),
            ]
        );
        assert_eq!(
            split("<h2>B</h2><h1>A</h1><h3>C</h3><p>x</p>", false),
            [
                ("B".to_string(), meta(&[("Header 2", "B")])),
                ("A".to_string(), meta(&[("Header 1", "A")])),
                (
                    "C".to_string(),
                    meta(&[("Header 1", "A"), ("Header 3", "C")])
                ),
                (
                    "x".to_string(),
                    meta(&[("Header 1", "A"), ("Header 3", "C")])
                ),
            ]
        );
    }

    #[test]
    fn shared_header_names_update_in_place() {
        let s = HtmlHeaderSplitter::new(
            vec![
                ("h3".into(), "X".into()),
                ("h1".into(), "A".into()),
                ("h2".into(), "A".into()),
            ],
            false,
        )
        .expect("valid");
        let out = s
            .split("<h3>c</h3><h1>a</h1><h3>c2</h3><h2>b</h2>")
            .expect("ok");
        let last = out.last().expect("sections");
        // "A" keeps its place before "X"; h2 removed h3's entry.
        assert_eq!(last.metadata, meta(&[("A", "b")]));
        let third = &out[2];
        assert_eq!(third.metadata, meta(&[("A", "a"), ("X", "c2")]));
    }

    #[test]
    fn only_the_first_body_is_walked() {
        assert_eq!(
            contents("<head><title>T</title></head>x<body><p>in</p></body><p>after</p>"),
            ["in"]
        );
        assert!(contents("<body/>text").is_empty());
        assert_eq!(contents("<body>a</body><body>b</body>"), ["a"]);
    }

    #[test]
    fn every_kind_of_string_is_text() {
        assert_eq!(
            contents("<p>a<!--c-->b<!x>c<?pi>d<![CDATA[e]]>f<![if x]>g<!DOCTYPE html>h</p>"),
            ["a c b x c pi d e f if x g html h"]
        );
        assert_eq!(
            contents("<p>a<script>x<y</script>b<style>s</style></p>"),
            ["a b  \nx<y  \ns"]
        );
        assert_eq!(contents("<!doctypehtml>"), ["tml"]);
    }

    #[test]
    fn references() {
        assert_eq!(
            contents("&#128;&#x80;&#0;&#x110000;&#xD800;&#65&#x41g&amp&lt;&bogus;x&amp-y"),
            ["\u{20ac}\u{20ac}\u{fffd}\u{fffd}\u{fffd}AAg&<&bogusx&-y"]
        );
        assert_eq!(
            contents("&#129;&#999999999999999999999;"),
            ["\u{81}\u{fffd}"]
        );
        assert_eq!(contents("a&amp.b"), ["a&.b"]);
        // At the very end, `[-.a-zA-Z0-9]*` gives back its last `.`.
        assert_eq!(contents("x&amp.a"), ["x&.a"]);
        assert!(matches!(
            splitter(false).split(&format!("&#{};", "1".repeat(4301))),
            Err(Error::UnsupportedText(_))
        ));
        assert_eq!(contents(&format!("&#x{};", "1".repeat(5000))), ["\u{fffd}"]);
    }

    #[test]
    fn second_pass_quirks() {
        // `&x` as the whole rest loses its `&`; longer, it stays.
        assert_eq!(contents("x &a"), ["x a"]);
        assert_eq!(contents("x &ab"), ["x &ab"]);
        assert_eq!(contents("x &"), ["x &"]);
        // A bad `&#` with a `;` later ends the first pass; a second one ends
        // the second pass, and the rest of the document is text.
        assert_eq!(contents("a &#12a; <b>bold</b>"), ["a &#12a;  \nbold"]);
        assert_eq!(contents("&#q;<p>a</p>"), ["&#q;  \na"]);
        assert_eq!(contents("&#q; &#r;<p>a</p>"), ["&#q; &#r;<p>a</p>"]);
        // Incomplete constructs become text up to the next `>` or `<`.
        assert_eq!(contents("<p>a<!-- unterminated"), ["a<!-- unterminated"]);
        assert_eq!(contents("<p>a</p"), ["a</p"]);
        assert_eq!(contents("<p>a<"), ["a<"]);
        assert_eq!(contents("text <"), ["text <"]);
        // An unclosed script swallows the rest.
        assert_eq!(contents("<p>a<script>never closed</p><h1>T</h1>"), ["a"]);
    }

    #[test]
    fn void_and_self_closing_tags() {
        assert_eq!(contents("<br>a</br>b"), ["ab"]);
        assert_eq!(contents("a</br>b"), ["a b"]);
        assert_eq!(contents("a</x>b"), ["a b"]);
        assert_eq!(contents("<h1/>a<h2/>b"), ["a b"]);
        assert_eq!(contents("<img src=x>a<p>b"), ["a  \nb"]);
    }

    #[test]
    fn start_tag_edge_cases() {
        assert_eq!(contents("<a href='x>y'>t</a><a b='x>u"), ["<a b='x>u  \nt"]);
        assert_eq!(contents("<a b= 'x>t"), ["t"]);
        // `=+\s*` then a value `/`: no self-closing tag (BeautifulSoup's
        // output).
        assert_eq!(contents("<p>a<b v== />c</b>d</p>"), ["a d  \nc"]);
        assert_eq!(contents("<a b=='x>t"), ["t"]);
        assert_eq!(contents("<a\u{0}b>c"), ["<a\u{0}b>c"]);
        // Tag names end only at ASCII \t\n\r\f, space, / and >.
        assert_eq!(
            contents("<h1\u{a0}>not a header</h1\u{a0}><h1\u{b}>nor this</h1>"),
            ["not a header  \nnor this"]
        );
        assert_eq!(contents("</>x</ p>y</3>z"), ["x y 3 z"]);
        assert_eq!(
            contents("<p>a<script>1</\u{17f}cript>2</script>3</p>"),
            ["a 3  \n1</\u{17f}cript>2"]
        );
    }

    #[test]
    fn rejected_markup() {
        for bad in ["<![ x]>", "<![foo[x]]>", "a<![1"] {
            assert!(
                matches!(splitter(false).split(bad), Err(Error::MarkupRejected(_))),
                "{bad:?}"
            );
        }
        // Incomplete, not rejected.
        assert_eq!(contents("a<![cdata"), ["a<![cdata"]);
    }

    #[test]
    fn deep_nesting_needs_no_recursion() {
        let n = 100_000;
        let html = format!("{}x{}", "<div>".repeat(n), "</div>".repeat(n));
        assert_eq!(contents(&html), ["x"]);
        let html = "<h1>t</h1><div>y".repeat(n);
        assert_eq!(splitter(true).split(&html).expect("ok").len(), 2 * n);
    }

    #[test]
    fn header_levels_parse_as_python_int() {
        assert_eq!(parse_int("1").expect("int").digits, "1");
        assert_eq!(parse_int(" +01 ").expect("int").digits, "1");
        assert_eq!(parse_int("1_0").expect("int").digits, "10");
        assert_eq!(parse_int("\u{661}").expect("int").digits, "1");
        assert!(parse_int("-0").expect("int") == parse_int("0").expect("int"));
        assert!(parse_int("-2").expect("int") < parse_int("-1").expect("int"));
        assert!(parse_int("99999999999999999999999").expect("int") > parse_int("7").expect("int"));
        for bad in ["", "_1", "1_", "1__0", "x", "- 1", "1\u{0}", "\u{200b}1"] {
            assert!(parse_int(bad).is_err(), "{bad:?}");
        }
        assert!(parse_int(&"1".repeat(4300)).is_ok());
        assert!(parse_int(&"1".repeat(4301)).is_err());
        assert!(HtmlHeaderSplitter::new(vec![("header".into(), "H".into())], false).is_err());
        assert!(HtmlHeaderSplitter::new(vec![("".into(), "H".into())], false).is_err());
        assert!(HtmlHeaderSplitter::new(vec![("H1".into(), "H".into())], false).is_ok());
    }

    #[test]
    fn unusual_levels_compare_as_python_ints() {
        let s = HtmlHeaderSplitter::new(
            vec![("h01".into(), "A".into()), ("h1".into(), "B".into())],
            false,
        )
        .expect("valid");
        // `h01` is never produced lowercased differently; both have level 1.
        let out = s.split("<h01>a</h01><h1>b</h1>").expect("ok");
        assert_eq!(out[1].metadata, meta(&[("B", "b")]));
    }
}
