//! Text cleaning as Open Notebook's `text_utils`: printable-text filtering
//! and the `<think>...</think>` blocks that reasoning models emit; and the
//! normalization esperanto applies to every text it sends for embedding.
//!
//! Each function reproduces a sequence of Python regex substitutions and
//! `str` methods in one or two linear passes; the comments give the Python
//! step each part stands for.

use std::ops::Range;

use crate::text::{AsciiFinder, CodeUnit, UnitClasses, classify};
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

/// The result of [`parse_thinking`]: each text as the pieces it is made of,
/// in order -- slices of the content, and the `"\n\n"` that joins blocks or
/// replaces a run of blank lines ([`CodeUnit::PARAGRAPH_BREAK`]).
#[derive(Debug, PartialEq, Eq)]
pub struct Thinking<'a, T> {
    pub thinking: Vec<&'a [T]>,
    pub cleaned: Vec<&'a [T]>,
}

/// `(thinking, cleaned)` for a model answer given as the code units of a
/// Python `str` (one code point each, lone surrogates included); `None` when
/// the answer is returned as it is (no think block, or longer than the
/// limit). Nothing is copied: the result points into `content`.
pub fn parse_thinking<T: CodeUnit>(content: &[T]) -> Option<Thinking<'_, T>> {
    if content.len() > MAX_THINKING_INPUT_CHARS {
        return None;
    }
    let blocks = think_blocks(content);
    if !blocks.is_empty() {
        // "\n\n".join(m.strip() for m in THINK_PATTERN.findall(content))
        let mut thinking = Vec::with_capacity(2 * blocks.len());
        for block in &blocks {
            if !thinking.is_empty() {
                thinking.push(T::PARAGRAPH_BREAK);
            }
            thinking.push(strip(&content[block.inner.clone()]));
        }
        // THINK_PATTERN.sub("", content)
        let mut removed = Vec::with_capacity(blocks.len() + 1);
        let mut at = 0;
        for block in &blocks {
            removed.push(&content[at..block.outer.start]);
            at = block.outer.end;
        }
        removed.push(&content[at..]);
        let cleaned = strip_pieces(collapse_blank_lines(&removed));
        return Some(Thinking { thinking, cleaned });
    }
    // Malformed: `^(.*?)</think>` -- the text before the first closing tag.
    let close = AsciiFinder::new(CLOSE).find(content)?;
    Some(Thinking {
        thinking: vec![strip(&content[..close])],
        cleaned: vec![strip(&content[close + CLOSE.len()..])],
    })
}

struct Block {
    outer: Range<usize>,
    inner: Range<usize>,
}

/// Non-overlapping matches of `<think>(.*?)</think>` (DOTALL).
fn think_blocks<T: CodeUnit>(content: &[T]) -> Vec<Block> {
    let (open, close) = (AsciiFinder::new(OPEN), AsciiFinder::new(CLOSE));
    let mut blocks = Vec::new();
    let mut from = 0;
    while let Some(start) = content
        .get(from..)
        .and_then(|c| open.find(c))
        .map(|i| from + i)
    {
        let inner_start = start + OPEN.len();
        // No closing tag after this opening one: none after a later one either.
        let Some(end) = content
            .get(inner_start..)
            .and_then(|c| close.find(c))
            .map(|i| inner_start + i)
        else {
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

/// A text as esperanto's embedding models send it (`EmbeddingModel._clean_text`):
/// 1. `re.sub(r"\s+", " ", text)`;
/// 2. `re.sub(r"\s+([.,])", r"\1", text)`;
/// 3. `re.sub(r"\.{2,}", ".", text)`;
/// 4. `re.sub(r"[\n\r]+", " ", text)`;
/// 5. `str.strip()`.
///
/// After step 1 the only whitespace left is single spaces, so step 4 has
/// nothing to do and step 2 drops a space before `.` or `,`. One pass: a
/// run of whitespace is held back until the next unit decides it (dropped
/// at the start, before `.` or `,`, and at the end: steps 2 and 5), and a
/// dot right after a dot is dropped (step 3, which sees the text with those
/// spaces already gone).
pub fn normalize_embedding_input<T: CodeUnit>(units: &[T]) -> Vec<T> {
    let (space, dot, comma) = (T::from(b' '), T::from(b'.'), T::from(b','));
    let mut out = Vec::with_capacity(units.len());
    let mut pending_space = false;
    for &unit in units {
        if is_space(unit) {
            pending_space = true;
            continue;
        }
        let punctuation = unit == dot || unit == comma;
        if pending_space && !punctuation && !out.is_empty() {
            out.push(space);
        }
        pending_space = false;
        if !(unit == dot && out.last() == Some(&dot)) {
            out.push(unit);
        }
    }
    out
}

/// `str.isspace()` for one code unit (a lone surrogate is not a space).
#[inline(always)]
fn is_space<T: CodeUnit>(unit: T) -> bool {
    match unit.code_point() {
        cp @ 0..=0x20 => matches!(cp, 0x09..=0x0D | 0x1C..=0x20),
        0x21..=0x84 => false,
        cp => char::from_u32(cp).is_some_and(unicode::is_space),
    }
}

/// `str.strip()`.
fn strip<T: CodeUnit>(units: &[T]) -> &[T] {
    strip_end(strip_start(units))
}

fn strip_start<T: CodeUnit>(units: &[T]) -> &[T] {
    let start = units
        .iter()
        .position(|&u| !is_space(u))
        .unwrap_or(units.len());
    &units[start..]
}

fn strip_end<T: CodeUnit>(units: &[T]) -> &[T] {
    let end = units
        .iter()
        .rposition(|&u| !is_space(u))
        .map_or(0, |i| i + 1);
    &units[..end]
}

/// `str.strip()` of the text the pieces make up together.
fn strip_pieces<T: CodeUnit>(mut pieces: Vec<&[T]>) -> Vec<&[T]> {
    let blank = pieces
        .iter()
        .position(|p| !strip_start(p).is_empty())
        .unwrap_or(pieces.len());
    pieces.drain(..blank);
    if let Some(first) = pieces.first_mut() {
        *first = strip_start(first);
    }
    while let Some(last) = pieces.last_mut() {
        *last = strip_end(last);
        if !last.is_empty() {
            break;
        }
        pieces.pop();
    }
    pieces
}

/// A position in a text made of pieces: unit `unit` of piece `piece`
/// (`unit` may be the piece's length: its end).
#[derive(Clone, Copy, Debug, Default)]
struct At {
    piece: usize,
    unit: usize,
}

impl At {
    fn after(self) -> At {
        At {
            piece: self.piece,
            unit: self.unit + 1,
        }
    }
}

/// Appends the text from `from` to `to` (not included) to `out`.
fn push_between<'a, T>(out: &mut Vec<&'a [T]>, pieces: &[&'a [T]], from: At, to: At) {
    let slices = pieces
        .iter()
        .enumerate()
        .take(to.piece + 1)
        .skip(from.piece)
        .map(|(piece, units)| {
            let start = if piece == from.piece { from.unit } else { 0 };
            let end = if piece == to.piece {
                to.unit
            } else {
                units.len()
            };
            units.get(start..end).unwrap_or_default()
        });
    out.extend(slices.filter(|s| !s.is_empty()));
}

/// A run of whitespace that starts at a newline.
struct Run {
    newlines: usize,
    last_newline: At,
    /// The first unit after the run (or the end of the text).
    end: At,
}

/// The whitespace run that starts at the newline `first`.
fn run_from<T: CodeUnit>(pieces: &[&[T]], first: At) -> Run {
    let newline = T::from(b'\n');
    let mut run = Run {
        newlines: 1,
        last_newline: first,
        end: first.after(),
    };
    for (piece, units) in pieces.iter().enumerate().skip(first.piece) {
        let start = if piece == first.piece {
            first.unit + 1
        } else {
            0
        };
        for (unit, &u) in units.iter().enumerate().skip(start) {
            if !is_space(u) {
                run.end = At { piece, unit };
                return run;
            }
            if u == newline {
                run.newlines += 1;
                run.last_newline = At { piece, unit };
            }
        }
        run.end = At {
            piece,
            unit: units.len(),
        };
    }
    run
}

/// The newlines from which a whitespace run with three or more may start,
/// found 64 units at a time. Bit masks rule out whole blocks: those where no
/// run of non-graphic units (a superset of whitespace runs) holds three
/// newlines, and where the run reaching the block's end, which may go on in
/// the next one, holds none. That is most blocks of most text, passed over
/// without a branch per newline (a newline followed by a space or not is a
/// coin toss for the branch predictor); the newlines of the other blocks
/// are all yielded, for [`run_from`] to measure their runs exactly.
struct RunStarts<'a, T> {
    units: &'a [T],
    /// The unit bit 0 of `mask` stands for.
    base: usize,
    mask: u64,
    /// Where the next block starts.
    next: usize,
}

impl<'a, T: CodeUnit> RunStarts<'a, T> {
    fn new(units: &'a [T], from: usize) -> Self {
        Self {
            units,
            base: from,
            mask: 0,
            next: from,
        }
    }

    /// Leaves out the newlines before `at`.
    fn skip_to(&mut self, at: usize) {
        if at >= self.next {
            self.mask = 0;
            self.next = at;
        } else if at > self.base {
            // at - base < 64: `next` is at most 64 past `base`.
            self.mask &= u64::MAX << (at - self.base);
        }
    }

    /// The newlines of a block if a run of three may lie there, else none.
    fn candidates(classes: UnitClasses) -> u64 {
        let (runs, newlines) = (classes.not_graphic, classes.newline);
        // Adding a run's newlines to it carries from the first one through
        // the run (and no further): the sum keeps the newlines after it.
        let second = runs.wrapping_add(newlines) & newlines;
        let third = runs.wrapping_add(second) & second;
        let last_run = !u64::MAX.checked_shr(runs.leading_ones()).unwrap_or(0);
        if third != 0 || newlines & last_run != 0 {
            newlines
        } else {
            0
        }
    }
}

impl<T: CodeUnit> Iterator for RunStarts<'_, T> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            let rest = self.units.get(self.next..).filter(|r| !r.is_empty())?;
            let mut classes = classify(rest);
            if rest.len() < 64 {
                // The end of the piece: a run reaching it may go on in the
                // next piece, as past the end of a block.
                classes.not_graphic |= u64::MAX << rest.len();
            }
            self.mask = Self::candidates(classes);
            self.base = self.next;
            self.next += rest.len().min(64);
        }
        let at = self.base + self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

/// `re.sub(r"\n\s*\n\s*\n", "\n\n", text)` for the text the pieces make up
/// together: in every whitespace run holding three or more newlines, the
/// stretch from its first to its last newline becomes two newlines (greedy
/// `\s*` backtracks to the last `\n`).
fn collapse_blank_lines<'a, T: CodeUnit>(pieces: &[&'a [T]]) -> Vec<&'a [T]> {
    let mut out = Vec::with_capacity(pieces.len());
    let mut copied = At::default();
    let mut from = At::default();
    // Only runs that start at a newline matter: jump from newline to newline.
    while let Some(units) = pieces.get(from.piece) {
        let mut starts = RunStarts::new(units, from.unit);
        let mut next = At {
            piece: from.piece + 1,
            unit: 0,
        };
        while let Some(unit) = starts.next() {
            if units.get(unit + 1).is_some_and(|&u| !is_space(u)) {
                continue; // The commonest run: one newline.
            }
            let first = At {
                piece: from.piece,
                unit,
            };
            let run = run_from(pieces, first);
            if run.newlines >= 3 {
                push_between(&mut out, pieces, copied, first);
                out.push(T::PARAGRAPH_BREAK);
                copied = run.last_newline.after();
            }
            if run.end.piece != from.piece {
                // The run went on past this piece: go on after it.
                next = run.end;
                break;
            }
            starts.skip_to(run.end.unit);
        }
        from = next;
    }
    let end = At {
        piece: pieces.len().saturating_sub(1),
        unit: pieces.last().map_or(0, |p| p.len()),
    };
    push_between(&mut out, pieces, copied, end);
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

    fn embedding_input(text: &str) -> String {
        let units: Vec<u32> = text.chars().map(u32::from).collect();
        normalize_embedding_input(&units)
            .into_iter()
            .map(|u| char::from_u32(u).unwrap())
            .collect()
    }

    #[test]
    fn embedding_input_follows_the_five_steps() {
        assert_eq!(embedding_input("  a \t\n b  "), "a b");
        assert_eq!(embedding_input("end .  next , and"), "end. next, and");
        assert_eq!(embedding_input("wait... what . . ."), "wait. what.");
        assert_eq!(embedding_input(" .. ,, x"), ".,, x");
        assert_eq!(embedding_input("a.\u{a0}.b\u{2003}c\u{1c}"), "a.b c");
        assert_eq!(embedding_input("\r\n\u{85}"), "");
        assert_eq!(embedding_input("\u{200b}zero width"), "\u{200b}zero width");
    }

    #[test]
    fn embedding_input_keeps_lone_surrogates() {
        let units: Vec<u16> = vec![0xD800, 0x20, 0x2E, 0x20, 0xDC00];
        assert_eq!(
            normalize_embedding_input(&units),
            vec![0xD800, 0x2E, 0x20, 0xDC00]
        );
    }

    /// The code points of text given as pieces.
    fn joined<T: CodeUnit>(pieces: &[&[T]]) -> Vec<u32> {
        pieces
            .concat()
            .into_iter()
            .map(CodeUnit::code_point)
            .collect()
    }

    /// `parse_thinking` on `units` in every representation they fit in
    /// (which must agree), as code points.
    fn parse_units(units: &[u32]) -> Option<(Vec<u32>, Vec<u32>)> {
        let of = |t: Thinking<'_, u32>| (joined(&t.thinking), joined(&t.cleaned));
        let wide = parse_thinking(units).map(of);
        if units.iter().all(|&u| u < 0x1_0000) {
            let ucs2: Vec<u16> = units.iter().map(|&u| u as u16).collect();
            let of = |t: Thinking<'_, u16>| (joined(&t.thinking), joined(&t.cleaned));
            assert_eq!(parse_thinking(&ucs2).map(of), wide, "UCS-2 {units:x?}");
        }
        if units.iter().all(|&u| u < 0x100) {
            let latin1: Vec<u8> = units.iter().map(|&u| u as u8).collect();
            let of = |t: Thinking<'_, u8>| (joined(&t.thinking), joined(&t.cleaned));
            assert_eq!(parse_thinking(&latin1).map(of), wide, "Latin-1 {units:x?}");
        }
        wide
    }

    /// `parse_thinking` on a Rust string, as strings.
    fn parse(content: &str) -> Option<(String, String)> {
        let units: Vec<u32> = content.chars().map(u32::from).collect();
        let text = |cps: Vec<u32>| cps.into_iter().filter_map(char::from_u32).collect();
        parse_units(&units).map(|(thinking, cleaned)| (text(thinking), text(cleaned)))
    }

    fn pair(thinking: &str, cleaned: &str) -> Option<(String, String)> {
        Some((thinking.to_string(), cleaned.to_string()))
    }

    #[test]
    fn think_blocks_are_extracted_and_removed() {
        assert_eq!(
            parse("<think> a </think>Answer\n\n\n\nmore<think>b</think>"),
            pair("a\n\nb", "Answer\n\nmore")
        );
        assert_eq!(
            parse("<think>\u{3000}é\u{85}</think>☃ <think></think>x<think> </think>"),
            pair("é\n\n\n\n", "☃ x")
        );
        assert_eq!(
            parse("<think>𝄞 clef</think>\u{2028}\n𝄞"),
            pair("𝄞 clef", "𝄞")
        );
        assert_eq!(parse("<think></think>"), pair("", ""));
    }

    #[test]
    fn malformed_output_without_opening_tag() {
        assert_eq!(
            parse("reasoning </think> answer "),
            pair("reasoning", "answer")
        );
        assert_eq!(
            parse("\u{3000}ré\u{1f}\n</think></think>\u{85}☃"),
            pair("ré", "</think>\u{85}☃")
        );
        assert_eq!(parse("</think>"), pair("", ""));
        assert!(parse("no tags here").is_none());
        assert!(parse("é ☃ 𝄞 <think </THINK> think>").is_none());
        assert!(parse("").is_none());
    }

    #[test]
    fn unclosed_opening_tag_falls_back_to_malformed_rule() {
        assert!(parse("<think>never closed").is_none());
        assert_eq!(parse("x</think>y<think>z"), pair("x", "y<think>z"));
    }

    #[test]
    fn blank_line_runs_collapse_across_removed_blocks() {
        let collapse = |s: &str| parse(&format!("<think></think>{s}")).map(|(_, c)| c);
        assert_eq!(collapse("a\n \n\t\n  b"), Some("a\n\n  b".into()));
        assert_eq!(collapse("a\n\nb"), Some("a\n\nb".into()));
        assert_eq!(
            collapse("a\n\u{2028}\n\nb\n\n\nc"),
            Some("a\n\nb\n\nc".into())
        );
        // Unicode whitespace inside the run: \u{3000}, \x1c-\x1f, \x85.
        assert_eq!(
            collapse("a\n\u{3000}\n\x1c\x1d\n\x1e\x1f\u{85}\n\u{3000}b"),
            Some("a\n\n\u{3000}b".into())
        );
        // Not whitespace: the run ends at a ZERO WIDTH SPACE.
        assert_eq!(
            collapse("a\n\n\u{200b}\n\nb"),
            Some("a\n\n\u{200b}\n\nb".into())
        );
        // A run interrupted by blocks still counts as one.
        assert_eq!(
            parse("a\n<think>x</think> \n<think>y</think>\n \u{3000}b\n<think>z</think>\n"),
            pair("x\n\ny\n\nz", "a\n\n \u{3000}b")
        );
        assert_eq!(
            parse("<think>x</think>\n\n<think>y</think>\n\n\n<think>z</think>"),
            pair("x\n\ny\n\nz", "")
        );
    }

    #[test]
    fn lone_surrogates_are_kept_and_are_not_space() {
        // A Rust str has no lone surrogates: they replace the '?'s here.
        let with = |s: &str, lone: &[(usize, u32)]| {
            let mut units: Vec<u32> = s.chars().map(u32::from).collect();
            for &(at, u) in lone {
                units[at] = u;
            }
            units
        };
        let content = with(
            "<think>? why</think> caf?\n?\n\n\n x",
            &[(7, 0xDC80), (24, 0xDCE9), (26, 0xD800)],
        );
        let (thinking, cleaned) = parse_units(&content).expect("block");
        assert_eq!(thinking, with("? why", &[(0, 0xDC80)]));
        assert_eq!(cleaned, with("caf?\n?\n\n x", &[(3, 0xDCE9), (5, 0xD800)]));
        let stripped = with("? </think> ?", &[(0, 0xDFFF), (11, 0xD83D)]);
        assert_eq!(parse_units(&stripped), Some((vec![0xDFFF], vec![0xD83D])));
        assert!(parse_units(&[0xD800, 0x0A, 0xDFFF, 0x3C]).is_none());
    }

    #[test]
    fn needles_straddling_wide_units_are_skipped() {
        let tag: Vec<u32> = CLOSE.chars().map(u32::from).collect();
        let ucs2_tag: Vec<u16> = tag.iter().map(|&u| u as u16).collect();
        // UCS-2: units whose bytes hold "</think>" one byte off, then the
        // real tag.
        let mut content: Vec<u16> = tag.iter().map(|&u| (u << 8) as u16).collect();
        content.extend([0x0A00, 0x20, 0x61]);
        let thinking_len = content.len();
        content.extend(&ucs2_tag);
        content.push(0x62);
        if cfg!(target_endian = "little") {
            let bytes = u16::bytes_of(&content);
            assert_eq!(
                memchr::memmem::find(bytes, u16::bytes_of(&ucs2_tag)),
                Some(1)
            );
        }
        let of = |t: Thinking<'_, u16>| (joined(&t.thinking), joined(&t.cleaned));
        let (thinking, cleaned) = parse_thinking(&content).map(of).expect("tag");
        assert_eq!(thinking.len(), thinking_len);
        assert_eq!(cleaned, [0x62]);
        assert!(parse_thinking(&content[..thinking_len]).is_none());
        // UCS-4: the tag's bytes at every offset inside the units (even past
        // U+10FFFF, which no str holds).
        for shift in [8, 16, 24] {
            let mut units: Vec<u32> = tag.iter().map(|&u| u << shift).collect();
            units.push(0);
            assert!(parse_units(&units).is_none(), "shift {shift}");
        }
        // Newlines: bytes 0x0A inside wider units are not newlines.
        let collapse = |units: &[u32]| parse_units(units).map(|(_, c)| c);
        let mut blank = vec![
            0x0A00, 0x0A, 0x0A_0000, 0x0A, 0x0A0A, 0x0A, 0x20, 0x0A, 0x3000, 0x0A, 0x78,
        ];
        assert_eq!(collapse(&blank), None);
        blank.splice(0..0, "<think></think>".chars().map(u32::from));
        assert_eq!(
            collapse(&blank),
            Some(vec![
                0x0A00, 0x0A, 0x0A_0000, 0x0A, 0x0A0A, 0x0A, 0x0A, 0x78
            ])
        );
    }

    #[test]
    fn long_content_is_left_alone() {
        let content = "<think>x</think>".repeat(10_000);
        assert!(parse(&content).is_none());
        assert!(parse(&content[..MAX_THINKING_INPUT_CHARS]).is_some());
    }
}
