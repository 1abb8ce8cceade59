//! Text cleaning as Open Notebook's `text_utils`: printable-text filtering
//! and the `<think>...</think>` blocks that reasoning models emit.
//!
//! Each function reproduces a sequence of Python regex substitutions and
//! `str` methods in one or two linear passes; the comments give the Python
//! step each part stands for.

use memchr::memmem;

use crate::unicode;

/// `re.sub(r"[^\x00-\x7F]+", "", text)`.
pub fn remove_non_ascii(text: &str) -> String {
    text.chars().filter(char::is_ascii).collect()
}

/// The original's five steps:
/// 1. `[\u2000-\u200B\u202F\u205F\u3000]` -> space;
/// 2. `[\u2028\u2029\r]` -> `\n`;
/// 3. drop general category C* except `\n` and `\t`;
/// 4. `\xa0` -> space, then `str.strip()`;
/// 5. drop what is not `\w`, `\s` or one of `.,!?-\n\t`.
///
/// Steps 1-4 map or drop characters one at a time (the mapped characters
/// fall in no later step's class), so they run as one pass before the strip.
pub fn remove_non_printable(text: &str) -> String {
    let mapped: String = text.chars().filter_map(map_printable).collect();
    let stripped = unicode::strip(&mapped);
    stripped.chars().filter(|&c| keep_after_strip(c)).collect()
}

/// Steps 1-4 (without the strip) for one character.
fn map_printable(c: char) -> Option<char> {
    match c {
        '\u{2000}'..='\u{200B}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{a0}' => Some(' '),
        '\u{2028}' | '\u{2029}' | '\r' => Some('\n'),
        '\n' | '\t' => Some(c),
        _ if unicode::is_other(c) => None,
        _ => Some(c),
    }
}

/// Step 5: `[^\w\s.,!?\-\n\t]` is removed.
fn keep_after_strip(c: char) -> bool {
    matches!(c, '.' | ',' | '!' | '?' | '-') || unicode::is_word(c) || unicode::is_space(c)
}

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";
/// Longer content is returned untouched, as the original does.
pub const MAX_THINKING_INPUT_CHARS: usize = 100_000;

/// `(thinking, cleaned)` for a model answer; `None` when the answer is
/// returned as it is (no think block, or longer than the limit).
pub fn parse_thinking(content: &str) -> Option<(String, String)> {
    if unicode::char_len(content) > MAX_THINKING_INPUT_CHARS {
        return None;
    }
    let blocks = think_blocks(content);
    if !blocks.is_empty() {
        // "\n\n".join(m.strip() for m in THINK_PATTERN.findall(content))
        let thinking = blocks
            .iter()
            .map(|b| unicode::strip(&content[b.inner.clone()]))
            .collect::<Vec<_>>()
            .join("\n\n");
        // THINK_PATTERN.sub("", content)
        let mut removed = String::with_capacity(content.len());
        let mut at = 0;
        for block in &blocks {
            removed.push_str(&content[at..block.outer.start]);
            at = block.outer.end;
        }
        removed.push_str(&content[at..]);
        let cleaned = collapse_blank_lines(&removed);
        return Some((thinking, unicode::strip(&cleaned).to_string()));
    }
    // Malformed: `^(.*?)</think>` -- the text before the first closing tag.
    let close = memmem::find(content.as_bytes(), CLOSE.as_bytes())?;
    Some((
        unicode::strip(&content[..close]).to_string(),
        unicode::strip(&content[close + CLOSE.len()..]).to_string(),
    ))
}

struct Block {
    outer: std::ops::Range<usize>,
    inner: std::ops::Range<usize>,
}

/// Non-overlapping matches of `<think>(.*?)</think>` (DOTALL).
fn think_blocks(content: &str) -> Vec<Block> {
    let bytes = content.as_bytes();
    let (open, close) = (memmem::Finder::new(OPEN), memmem::Finder::new(CLOSE));
    let mut blocks = Vec::new();
    let mut from = 0;
    while let Some(start) = open.find(&bytes[from..]).map(|i| from + i) {
        let inner_start = start + OPEN.len();
        // No closing tag after this opening one: none after a later one either.
        let Some(end) = close.find(&bytes[inner_start..]).map(|i| inner_start + i) else {
            break;
        };
        blocks.push(Block {
            outer: start..end + CLOSE.len(),
            inner: inner_start..end,
        });
        from = end + CLOSE.len();
    }
    blocks
}

/// `re.sub(r"\n\s*\n\s*\n", "\n\n", text)`: in every whitespace run holding
/// three or more newlines, the stretch from its first to its last newline
/// becomes two newlines (greedy `\s*` backtracks to the last `\n`).
fn collapse_blank_lines(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut from = 0;
    // Only runs that start at a newline matter: jump from newline to newline.
    while let Some(first) = memchr::memchr(b'\n', &bytes[from..]).map(|i| from + i) {
        let mut newlines = 1;
        let mut last_newline = first;
        let mut end = first + 1;
        for c in text[end..].chars().take_while(|&c| unicode::is_space(c)) {
            if c == '\n' {
                newlines += 1;
                last_newline = end;
            }
            end += c.len_utf8();
        }
        if newlines >= 3 {
            out.push_str(&text[copied..first]);
            out.push_str("\n\n");
            copied = last_newline + 1;
        }
        from = end;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_ascii_runs_are_removed() {
        assert_eq!(remove_non_ascii("café ☃ naïve\x7f"), "caf  nave\x7f");
    }

    #[test]
    fn non_printable_follows_the_five_steps() {
        assert_eq!(
            remove_non_printable("\u{a0} Hello,\u{2003}world!\u{200b} "),
            "Hello, world!"
        );
        assert_eq!(remove_non_printable("a\r\nb\u{2028}c\u{7}d"), "a\n\nb\ncd");
        assert_eq!(remove_non_printable("x@y#z (é) [1]"), "xyz é 1");
        assert_eq!(remove_non_printable("\u{3000}\t tab\t"), "tab");
    }

    #[test]
    fn think_blocks_are_extracted_and_removed() {
        let (thinking, cleaned) =
            parse_thinking("<think> a </think>Answer\n\n\n\nmore<think>b</think>").expect("blocks");
        assert_eq!(thinking, "a\n\nb");
        assert_eq!(cleaned, "Answer\n\nmore");
    }

    #[test]
    fn malformed_output_without_opening_tag() {
        let (thinking, cleaned) = parse_thinking("reasoning </think> answer ").expect("malformed");
        assert_eq!(
            (thinking.as_str(), cleaned.as_str()),
            ("reasoning", "answer")
        );
        assert!(parse_thinking("no tags here").is_none());
    }

    #[test]
    fn unclosed_opening_tag_falls_back_to_malformed_rule() {
        assert!(parse_thinking("<think>never closed").is_none());
        let (thinking, cleaned) = parse_thinking("x</think>y<think>z").expect("malformed");
        assert_eq!((thinking.as_str(), cleaned.as_str()), ("x", "y<think>z"));
    }

    #[test]
    fn blank_line_runs_keep_trailing_spaces() {
        assert_eq!(collapse_blank_lines("a\n \n\t\n  b"), "a\n\n  b");
        assert_eq!(collapse_blank_lines("a\n\nb"), "a\n\nb");
        assert_eq!(collapse_blank_lines("a\n\u{2028}\n\nb\n\n\n"), "a\n\nb\n\n");
    }

    #[test]
    fn long_content_is_left_alone() {
        assert!(parse_thinking(&"<think>x</think>".repeat(10_000)).is_none());
    }
}
