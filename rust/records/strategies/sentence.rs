//! Sentences packed up to the size, with whole sentences as overlap.
//!
//! A sentence ends:
//! - after `.`, `!`, `?`, `…`, `‽` and other scripts' enders (Arabic `؟`,
//!   `۔`, Devanagari `।` `॥`, Ethiopic `።` `፧`, Myanmar `။`, Armenian `։`),
//!   a run of them (`?!`, `...`), then any closing quotes and brackets
//!   (`"` `'` `”` `’` `»` `)` `]` `}` `」` `』` `）` ...), when whitespace or
//!   the end follows;
//! - right after CJK enders (`。` `！` `？` `｡` `．`) and their closers, with
//!   no space needed;
//! - at a blank line.
//!
//! A `.` does not end a sentence inside a number (`3.14`, no space follows),
//! after a title abbreviation (`Mr.`, `Dr.`, `Prof.`, `St.`, `Fig.`, `No.`,
//! `vs.` ...), after a single letter (`J. R. R. Tolkien`), or when the next
//! word starts with a lowercase letter or a digit (`e.g. this`, `etc. and`,
//! `approx. 5`, `... and then`).

use std::ops::Range;

use crate::chunking::recursive::LengthFunction;
use crate::records::{Options, Raw, Split, split_to_max};

const ENDERS: &[char] = &[
    '.', '!', '?', '…', '‽', '؟', '۔', '।', '॥', '።', '፧', '။', '։', '‼', '⁇', '⁈', '⁉',
];
const CJK_ENDERS: &[char] = &['。', '！', '？', '｡', '．'];
const CLOSERS: &[char] = &[
    '"', '\'', '”', '’', '»', '›', ')', ']', '}', '」', '』', '）', '】', '〕', '〉', '》', '〗',
    '〙', '〛', '＂', '＇', '］', '｝',
];
/// Abbreviations after which a `.` never ends a sentence (lowercase).
const TITLES: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "gen", "gov", "rep", "sen", "lt",
    "col", "capt", "sgt", "rev", "hon", "fig", "figs", "no", "nos", "vol", "vols", "vs", "cf",
    "al", "approx", "dept", "est", "inc", "ltd", "co", "corp", "jan", "feb", "mar", "apr", "jun",
    "jul", "aug", "sep", "sept", "oct", "nov", "dec", "p", "pp", "ch", "sec", "eq", "eqs", "ed",
    "eds", "e.g", "i.e", "etc", "ca",
];

fn is_space(c: char) -> bool {
    crate::unicode::is_space(c)
}

/// The word before byte `at` (back to whitespace or an opening bracket).
fn word_before(text: &str, at: usize) -> &str {
    let start = text[..at]
        .char_indices()
        .rev()
        .find(|&(_, c)| is_space(c) || matches!(c, '(' | '[' | '{' | '"' | '“' | '\''))
        .map_or(0, |(i, c)| i + c.len_utf8());
    &text[start..at]
}

/// Whether the `.` ending at `dot_end` (a run of one dot) after `word`
/// leaves the sentence open, given the next non-space character.
fn dot_continues(word: &str, next: Option<char>) -> bool {
    let lower = word.to_lowercase();
    if TITLES.contains(&lower.as_str()) {
        return true;
    }
    let letters = word.chars().filter(|c| c.is_alphabetic()).count();
    if letters == 1 && word.chars().count() == 1 {
        // An initial.
        return true;
    }
    next.is_some_and(|c| c.is_lowercase() || c.is_ascii_digit())
}

/// The sentences of `text` (byte ranges, stripped; the text between them is
/// whitespace).
pub fn sentences(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut chars = text.char_indices().peekable();
    // Newlines since the last non-space character.
    let mut newlines = 0;
    let mut last_end = 0;
    while let Some((i, c)) = chars.next() {
        if is_space(c) {
            if c == '\n' {
                newlines += 1;
                if newlines >= 2
                    && let Some(s) = start.take()
                {
                    out.push(s..last_end);
                }
            }
            continue;
        }
        newlines = 0;
        if start.is_none() {
            start = Some(i);
        }
        last_end = i + c.len_utf8();
        let cjk = CJK_ENDERS.contains(&c);
        if !cjk && !ENDERS.contains(&c) {
            continue;
        }
        // The run of enders, then the closers.
        let mut end = last_end;
        let mut dots = usize::from(c == '.');
        let mut run = 1;
        while let Some(&(j, d)) = chars.peek() {
            if ENDERS.contains(&d) || CJK_ENDERS.contains(&d) {
                dots += usize::from(d == '.');
                run += 1;
                end = j + d.len_utf8();
                chars.next();
            } else {
                break;
            }
        }
        while let Some(&(j, d)) = chars.peek() {
            if CLOSERS.contains(&d) {
                end = j + d.len_utf8();
                chars.next();
            } else {
                break;
            }
        }
        last_end = end;
        let followed_by_space = chars.peek().is_none_or(|&(_, d)| is_space(d));
        if !cjk && !followed_by_space {
            continue;
        }
        let next = text[end..].chars().find(|&d| !is_space(d));
        if c == '.' && run == dots {
            let word = word_before(text, i);
            let continues = if dots == 1 {
                dot_continues(word, next)
            } else {
                // An ellipsis: the sentence goes on before a lowercase word.
                next.is_some_and(char::is_lowercase)
            };
            if continues {
                continue;
            }
        }
        if let Some(s) = start.take() {
            out.push(s..end);
        }
    }
    if let Some(s) = start {
        out.push(s..last_end);
    }
    out
}

pub fn split<L: LengthFunction<str>>(source: &str, options: &Options, length: &L) -> Split {
    let sents = sentences(source);
    // Each sentence's length, and with the gap before it.
    let alone: Vec<usize> = sents
        .iter()
        .map(|r| length.length_up_to(&source[r.clone()], options.max_size))
        .collect();
    let joined: Vec<usize> = sents
        .iter()
        .enumerate()
        .map(|(i, r)| match i {
            0 => alone[0],
            _ => length.length_up_to(&source[sents[i - 1].end..r.end], options.max_size),
        })
        .collect();
    let size = options.chunk_size;
    // Sentences a..=b: the sum of their lengths (with the gaps), which the
    // exact length of the span confirms.
    let sum = |a: usize, b: usize| alone[a] + joined[a + 1..=b].iter().sum::<usize>();
    let fits = |a: usize, b: usize| {
        sum(a, b) <= size && !length.exceeds(&source[sents[a].start..sents[b].end], size)
    };
    let mut chunks: Vec<Raw> = Vec::new();
    let mut next = 0;
    // The first sentence of the overlap taken from the previous chunk.
    let mut first = 0;
    while next < sents.len() {
        if alone[next] > size || length.exceeds(&source[sents[next].clone()], size) {
            // A sentence longer than the size: split on its own.
            for r in split_to_max(source, sents[next].clone(), size, length) {
                chunks.push(Raw::span(r));
            }
            next += 1;
            first = next;
            continue;
        }
        // Drop overlap sentences until the first new one fits.
        while first < next && !fits(first, next) {
            first += 1;
        }
        let mut last = next;
        let mut total = sum(first, next);
        while last + 1 < sents.len() && total + joined[last + 1] <= size {
            last += 1;
            total += joined[last];
        }
        while last > next && !fits(first, last) {
            last -= 1;
        }
        let mut raw = Raw::span(sents[first].start..sents[last].end);
        raw.own_start = sents[next].start;
        chunks.push(raw);
        next = last + 1;
        // The overlap: the last sentences of this chunk within `overlap`,
        // fewer than all of its sentences.
        first = next;
        if options.overlap > 0 {
            while first > raw_first(&chunks, &sents) + 1
                && !length.exceeds(
                    &source[sents[first - 1].start..sents[last].end],
                    options.overlap,
                )
            {
                first -= 1;
            }
        }
    }
    Split {
        chunks,
        overlapped: true,
        ..Split::default()
    }
}

/// The index of the first sentence of the last chunk.
fn raw_first(chunks: &[Raw], sents: &[Range<usize>]) -> usize {
    let start = chunks.last().map_or(0, |c| c.range.start);
    sents.partition_point(|s| s.start < start)
}
