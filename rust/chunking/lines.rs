//! The lines of a text, as Python's `str.split("\n")`, each with whether it is
//! printable ASCII (0x20-0x7E) throughout.
//!
//! One pass classifies 64 units (bytes of a `str`) at a time into two bit masks (newlines, and
//! bytes outside printable ASCII); a line then costs a few bit operations
//! instead of a loop over its bytes. Markdown lines are short, so the
//! per-line cost is what matters.

use std::ops::Range;

use super::splittable::Splittable;

/// A line: its range in the text (the `\n` excluded) and whether every
/// unit in it is printable ASCII.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub range: Range<usize>,
    pub printable_ascii: bool,
}

/// Calls `f` with each line, in order. (The caller's loop is this one's
/// body: the window's masks stay in registers, as an iterator's state did
/// not.)
#[inline(always)]
pub fn for_each_line<S: Splittable + ?Sized>(text: &S, mut f: impl FnMut(Line)) {
    let mut base = 0;
    let mut start = 0;
    // Whether the line running into the window holds a unit outside
    // printable ASCII.
    let mut carried = false;
    loop {
        let c = text.classify_lines(base);
        // The end of the text ends the last line: a newline past the text's
        // units (which are in neither mask) in its window.
        let last = text.len() - base < 64;
        let newline = if last {
            c.newline | 1u64 << (text.len() - base)
        } else {
            c.newline
        };
        let others = c.not_printable & !newline;
        // Adding a unit's bit to the non-newline bits carries it up to the
        // next newline (or out of the window): a newline's bit is then set
        // exactly when its line has such a unit.
        let (sum, out_a) = (!newline).overflowing_add(others);
        let (sum, out_b) = sum.overflowing_add(u64::from(carried));
        let unprintable_ends = sum & newline;
        carried = out_a | out_b;
        let mut newlines = newline;
        while newlines != 0 {
            let bit = newlines.trailing_zeros();
            newlines &= newlines - 1;
            let end = base + bit as usize;
            f(Line {
                range: start..end,
                printable_ascii: unprintable_ends & (1u64 << bit) == 0,
            });
            start = end + 1;
        }
        if last {
            return;
        }
        base += 64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(text: &str) -> Vec<Line> {
        let mut start = 0;
        text.split('\n')
            .map(|line| {
                let range = start..start + line.len();
                start = range.end + 1;
                Line {
                    range,
                    printable_ascii: line.bytes().all(|b| (0x20..0x7f).contains(&b)),
                }
            })
            .collect()
    }

    fn lines<S: Splittable + ?Sized>(text: &S) -> Vec<Line> {
        let mut lines = Vec::new();
        for_each_line(text, |line| lines.push(line));
        lines
    }

    #[test]
    fn splits_as_python() {
        let ranges: Vec<_> = lines("a\n\nb\n").into_iter().map(|l| l.range).collect();
        assert_eq!(ranges, [0..1, 2..2, 3..4, 5..5]);
        let empty = lines("");
        assert_eq!(empty.len(), 1);
        assert_eq!(empty[0].range, 0..0);
    }

    #[test]
    fn lines_across_windows() {
        for text in [
            "x".repeat(63) + "\n" + &"y".repeat(200),
            "x".repeat(64) + "\n\t" + &"y".repeat(130) + "\n",
            "\u{e9}".repeat(100) + "\n" + &"z".repeat(64),
            format!(
                "{}\x7f{}\n{}",
                "a".repeat(70),
                "b".repeat(70),
                "c".repeat(64)
            ),
            "\n".repeat(130),
        ] {
            assert_eq!(lines(text.as_str()), naive(&text), "{text:?}");
        }
    }

    proptest! {
        #[test]
        fn equals_the_naive_split(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just("\n".to_string()),
                    "[ -~]{0,80}",
                    "[\\x00-\\x1f\\x7f\\u{80}-\\u{10ffff}]{1,3}",
                ],
                0..40,
            )
        ) {
            let text = parts.concat();
            prop_assert_eq!(lines(text.as_str()), naive(&text));
            // The same lines in code units, where offsets count characters.
            let in_chars = |byte: usize| text[..byte].chars().count();
            let expected: Vec<Line> = naive(&text)
                .into_iter()
                .map(|l| Line {
                    range: in_chars(l.range.start)..in_chars(l.range.end),
                    printable_ascii: l.printable_ascii,
                })
                .collect();
            let ucs4: Vec<u32> = text.chars().map(u32::from).collect();
            prop_assert_eq!(lines(ucs4.as_slice()), expected);
        }
    }
}
