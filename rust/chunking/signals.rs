//! What the content-type heuristics look for, found by hand-written scanners.
//!
//! Open Notebook evaluates a dozen regular expressions with Python's `re`;
//! running them as regexes costs a dozen passes over the sample. These
//! scanners give the same answers (the same non-overlapping match counts,
//! the same existence tests) in one or two linear passes. Why each is exact,
//! in Python `re` terms (`\s` Unicode whitespace, `.` anything but `\n`,
//! multi-line `^` at the start and after each `\n`):
//!
//! - `^#{1,6}\s+.+` can only match where a line starts with 1-6 `#` and a
//!   space. Greedy `\s+` may cross newlines; the match then ends at the end of
//!   the line holding the first non-space character, or, when only spaces
//!   follow to the end, right after the last character that is not `\n`.
//!   The next match is looked for after that end.
//! - `\[.+?\]\(.+?\)` lies within one line. From a `[`, the lazy scan takes
//!   the first `](` that leaves a character between, and needs a `)` with a
//!   character before it on the same line; if the first `](` has none, no
//!   later one can.
//! - `^[\*\-\+]\s+` and `^\d+\.\s+` consume only a marker and whitespace, so
//!   no counted line start lies inside an earlier match: they count lines.
//! - `` `[^`]+` `` exists iff two consecutive backticks are not adjacent.
//! - `\*\*.+?\*\*` exists iff, on some line, the last `**` starts at least
//!   one character after the first one ends (likewise `__`).
//! - The HTML patterns are tested at each `<`.
//!
//! The tests check every count against the `regex` crate running the
//! original patterns with CPython's character classes, on generated text.

use memchr::{memchr, memchr_iter, memmem};

use crate::unicode;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HtmlSignals {
    /// `<!DOCTYPE\s+html`, ignoring case.
    pub doctype: bool,
    /// `<html[\s>]`, ignoring case.
    pub html_tag: bool,
    /// `<h[1-6][\s>]`, ignoring case.
    pub header_tag: bool,
    /// `</\w+>`.
    pub closing_tag: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MarkdownSignals {
    /// Matches of `^#{1,6}\s+.+`.
    pub headers: usize,
    /// Matches of `\[.+?\]\(.+?\)`.
    pub links: usize,
    /// `^```` occurs.
    pub fence: bool,
    /// `` `[^`]+` `` occurs.
    pub inline_code: bool,
    /// Matches of `^[\*\-\+]\s+` plus matches of `^\d+\.\s+`.
    pub list_items: usize,
    /// `\*\*.+?\*\*|__.+?__` occurs.
    pub emphasis: bool,
    /// `^>\s+` occurs.
    pub quote: bool,
}

fn char_at(text: &str, at: usize) -> Option<char> {
    text.get(at..).and_then(|rest| rest.chars().next())
}

fn space_at(text: &str, at: usize) -> bool {
    char_at(text, at).is_some_and(unicode::is_space)
}

fn starts_with_ci(text: &str, at: usize, word: &str) -> bool {
    text.as_bytes()
        .get(at..at + word.len())
        .is_some_and(|w| w.eq_ignore_ascii_case(word.as_bytes()))
}

fn space_or_gt_at(text: &str, at: usize) -> bool {
    text.as_bytes().get(at) == Some(&b'>') || space_at(text, at)
}

/// The byte offset after the Python-whitespace run starting at `at`.
fn skip_spaces(text: &str, at: usize) -> usize {
    let rest = text.get(at..).unwrap_or("");
    at + (rest.len() - unicode::strip_start(rest).len())
}

pub fn html_signals(text: &str) -> HtmlSignals {
    let mut s = HtmlSignals::default();
    let bytes = text.as_bytes();
    for at in memchr_iter(b'<', bytes) {
        let next = at + 1;
        match bytes.get(next) {
            Some(b'!') if starts_with_ci(text, next + 1, "doctype") => {
                let after = next + 1 + "doctype".len();
                let end = skip_spaces(text, after);
                s.doctype |= end > after && starts_with_ci(text, end, "html");
            }
            Some(b'/') => {
                let mut end = next + 1;
                while let Some(c) = char_at(text, end).filter(|&c| unicode::is_word(c)) {
                    end += c.len_utf8();
                }
                s.closing_tag |= end > next + 1 && bytes.get(end) == Some(&b'>');
            }
            Some(b'h' | b'H') => {
                s.html_tag |= starts_with_ci(text, next, "html") && space_or_gt_at(text, next + 4);
                s.header_tag |= matches!(bytes.get(next + 1), Some(b'1'..=b'6'))
                    && space_or_gt_at(text, next + 2);
            }
            _ => {}
        }
    }
    s
}

/// Start and end (without the `\n`) of every line.
fn lines(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = 0;
    memchr_iter(b'\n', text.as_bytes())
        .map(Some)
        .chain(std::iter::once(None))
        .map(move |nl| {
            let line = (start, nl.unwrap_or(text.len()));
            start = line.1 + 1;
            line
        })
}

pub fn markdown_signals(text: &str) -> MarkdownSignals {
    let mut s = MarkdownSignals {
        headers: count_headers(text),
        links: 0,
        fence: false,
        inline_code: has_inline_code(text),
        list_items: 0,
        emphasis: false,
        quote: false,
    };
    for (start, end) in lines(text) {
        let line = &text[start..end];
        let bytes = line.as_bytes();
        match bytes.first() {
            Some(b'`') => s.fence |= line.starts_with("```"),
            Some(b'*' | b'-' | b'+') => s.list_items += usize::from(space_at(text, start + 1)),
            Some(b'>') => s.quote |= space_at(text, start + 1),
            _ => {
                let digits = skip_decimal(line);
                if digits > 0 && bytes.get(digits) == Some(&b'.') {
                    s.list_items += usize::from(space_at(text, start + digits + 1));
                }
            }
        }
        s.links += count_links(line);
        s.emphasis |= has_pair(line, b'*') || has_pair(line, b'_');
    }
    s
}

/// The byte length of the run of Python decimal digits starting `line`.
fn skip_decimal(line: &str) -> usize {
    line.char_indices()
        .find(|&(_, c)| !unicode::is_decimal(c))
        .map_or(line.len(), |(i, _)| i)
}

fn count_headers(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut count = 0;
    let mut resume = 0; // the end of the last match
    for (start, _) in lines(text) {
        if start < resume {
            continue;
        }
        let hashes = bytes[start..]
            .iter()
            .take(7)
            .take_while(|&&b| b == b'#')
            .count();
        if hashes == 0 || hashes > 6 || !space_at(text, start + hashes) {
            continue;
        }
        let spaces_from = start + hashes;
        let spaces_end = skip_spaces(text, spaces_from);
        if spaces_end < text.len() {
            // `.+` runs from the first non-space character to the line's end.
            count += 1;
            resume = memchr(b'\n', &bytes[spaces_end..]).map_or(text.len(), |i| spaces_end + i);
            continue;
        }
        // Only spaces to the end: `\s+` gives back characters until `.` can
        // take one that is not `\n`, after at least one space.
        let first_space = char_at(text, spaces_from).map_or(1, char::len_utf8);
        let tail = &text[spaces_from + first_space..];
        if let Some((i, c)) = tail.char_indices().rev().find(|&(_, c)| c != '\n') {
            count += 1;
            resume = spaces_from + first_space + i + c.len_utf8();
        }
    }
    count
}

/// Non-overlapping matches of `\[.+?\]\(.+?\)` within one line.
fn count_links(line: &str) -> usize {
    let bytes = line.as_bytes();
    let Some(first_open) = memchr(b'[', bytes) else {
        return 0;
    };
    let closers: Vec<usize> = memmem::find_iter(&bytes[first_open..], b"](")
        .map(|i| first_open + i)
        .collect();
    if closers.is_empty() {
        return 0;
    }
    let mut count = 0;
    let mut from = first_open;
    let mut next_closer = 0;
    while let Some(open) = memchr(b'[', &bytes[from..]).map(|i| from + i) {
        // `.+?` takes at least one character after `[`.
        let Some(c) = char_at(line, open + 1) else {
            break;
        };
        let earliest = open + 1 + c.len_utf8();
        while closers.get(next_closer).is_some_and(|&j| j < earliest) {
            next_closer += 1;
        }
        let Some(&close) = closers.get(next_closer) else {
            break;
        };
        // Then `.+?\)`: one character at least, then the first `)`.
        let paren = char_at(line, close + 2).and_then(|c| {
            let after = close + 2 + c.len_utf8();
            memchr(b')', &bytes[after..]).map(|i| after + i)
        });
        match paren {
            Some(p) => {
                count += 1;
                from = p + 1;
            }
            None => break, // no later `](` can find a `)` either
        }
    }
    count
}

/// Whether `\*\*.+?\*\*` (for `pair` b'*') matches within the line.
fn has_pair(line: &str, pair: u8) -> bool {
    let bytes = line.as_bytes();
    let doubled = |i: usize| bytes.get(i + 1) == Some(&pair);
    let Some(first) = memchr_iter(pair, bytes).find(|&i| doubled(i)) else {
        return false;
    };
    let Some(last) = memchr::memrchr_iter(pair, bytes).find(|&i| doubled(i)) else {
        return false;
    };
    char_at(line, first + 2).is_some_and(|c| last >= first + 2 + c.len_utf8())
}

fn has_inline_code(text: &str) -> bool {
    let mut previous: Option<usize> = None;
    for at in memchr_iter(b'`', text.as_bytes()) {
        if previous.is_some_and(|p| at > p + 1) {
            return true;
        }
        previous = Some(at);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use regex::Regex;

    /// The original patterns, as regexes with CPython's classes: the oracle.
    fn python_re(pattern: &str) -> Regex {
        let class = |ranges: &[(u32, u32)]| {
            let mut out = String::from("[");
            for &(lo, hi) in ranges {
                out.push_str(&format!("\\x{{{lo:X}}}-\\x{{{hi:X}}}"));
            }
            out + "]"
        };
        let expanded = pattern
            .replace("{W}", &class(unicode::WORD_RANGES))
            .replace("{D}", &class(unicode::DECIMAL_RANGES))
            .replace("{S}", &class(unicode::SPACE_RANGES));
        Regex::new(&expanded).expect("oracle pattern compiles")
    }

    const ORACLE: [&str; 12] = [
        "<![Dd][Oo][Cc][Tt][Yy][Pp][Ee]{S}+[Hh][Tt][Mm][Ll]",
        "<[Hh][Tt][Mm][Ll](?:{S}|>)",
        "<[Hh][1-6](?:{S}|>)",
        "</{W}+>",
        "(?m)^#{1,6}{S}+.+",
        r"\[.+?\]\(.+?\)",
        "(?m)^```",
        "`[^`]+`",
        r"(?m)^[\*\-\+]{S}+",
        r"(?m)^{D}+\.{S}+",
        r"\*\*.+?\*\*|__.+?__",
        "(?m)^>{S}+",
    ];

    fn count(i: usize, text: &str) -> usize {
        static COMPILED: std::sync::LazyLock<Vec<Regex>> =
            std::sync::LazyLock::new(|| ORACLE.iter().map(|p| python_re(p)).collect());
        COMPILED[i].find_iter(text).count()
    }

    fn oracle_html(text: &str) -> HtmlSignals {
        HtmlSignals {
            doctype: count(0, text) > 0,
            html_tag: count(1, text) > 0,
            header_tag: count(2, text) > 0,
            closing_tag: count(3, text) > 0,
        }
    }

    fn oracle_markdown(text: &str) -> MarkdownSignals {
        MarkdownSignals {
            headers: count(4, text),
            links: count(5, text),
            fence: count(6, text) > 0,
            inline_code: count(7, text) > 0,
            list_items: count(8, text) + count(9, text),
            emphasis: count(10, text) > 0,
            quote: count(11, text) > 0,
        }
    }

    const PIECES: &[&str] = &[
        "#",
        "# ",
        "##",
        "####### ",
        "\n",
        " ",
        "\t",
        "\u{a0}",
        "\u{3000}",
        "\u{2028}",
        "\u{85}",
        "[",
        "]",
        "(",
        ")",
        "](",
        "`",
        "```",
        "*",
        "**",
        "_",
        "__",
        "-",
        "+",
        ">",
        "1",
        "12.",
        "\u{661}",
        ".",
        "<",
        "</",
        ">",
        "!",
        "<!DOCTYPE",
        "<!doctype",
        "html",
        "HTML",
        "<h",
        "<H",
        "3",
        "7",
        "/",
        "a",
        "é",
        "日",
        "x",
        "\u{212a}",
    ];

    fn text_strategy() -> impl Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(PIECES), 0..60).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn scanners_agree_with_the_original_patterns(text in text_strategy()) {
            prop_assert_eq!(html_signals(&text), oracle_html(&text));
            prop_assert_eq!(markdown_signals(&text), oracle_markdown(&text));
        }
    }

    #[test]
    fn header_whitespace_may_span_lines() {
        // `\s+` crosses the newline: the first match swallows the second line.
        assert_eq!(count_headers("#\n# a\n# b"), 2);
        assert_eq!(count_headers("# \n\n"), 0);
        assert_eq!(count_headers("#  "), 1);
        assert_eq!(count_headers("####### x\n###### y"), 1);
    }

    #[test]
    fn links_take_the_first_closing_bracket() {
        assert_eq!(count_links("[a](b) [c](d)"), 2);
        assert_eq!(count_links("[](x)"), 0);
        assert_eq!(count_links("[a]() x)"), 1);
        assert_eq!(count_links("[[[[[[[["), 0);
    }
}
