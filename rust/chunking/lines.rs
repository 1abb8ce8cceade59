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

pub struct Lines<'t, S: ?Sized> {
    text: &'t S,
    /// Start of the 64-unit window the masks describe.
    base: usize,
    /// Newlines of the window not yet reported.
    newlines: u64,
    /// The window's newlines that end a line holding a unit outside
    /// printable ASCII.
    unprintable_ends: u64,
    /// Whether the line running out of the window holds such a unit.
    carried: bool,
    /// Where the current line starts.
    start: usize,
    done: bool,
}

pub fn lines<S: Splittable + ?Sized>(text: &S) -> Lines<'_, S> {
    let mut lines = Lines {
        text,
        base: 0,
        newlines: 0,
        unprintable_ends: 0,
        carried: false,
        start: 0,
        done: false,
    };
    lines.classify();
    lines
}

impl<S: Splittable + ?Sized> Lines<'_, S> {
    /// Reads the masks of the window at `base`; a line that ran out of the
    /// window before carries its class into it.
    fn classify(&mut self) {
        let c = self.text.classify_lines(self.base);
        let others = c.not_printable & !c.newline;
        // Adding a unit's bit to the non-newline bits carries it up to the
        // next newline (or out of the window): a newline's bit is then set
        // exactly when its line has such a unit. Missing units at the end
        // are in neither mask, so the last line carries out too.
        let (sum, out_a) = (!c.newline).overflowing_add(others);
        let (sum, out_b) = sum.overflowing_add(u64::from(self.carried));
        self.newlines = c.newline;
        self.unprintable_ends = sum & c.newline;
        self.carried = out_a | out_b;
    }
}

impl<S: Splittable + ?Sized> Iterator for Lines<'_, S> {
    type Item = Line;

    fn next(&mut self) -> Option<Line> {
        loop {
            if self.newlines != 0 {
                let bit = self.newlines.trailing_zeros();
                self.newlines &= self.newlines - 1;
                let end = self.base + bit as usize;
                let line = Line {
                    range: self.start..end,
                    printable_ascii: self.unprintable_ends & (1u64 << bit) == 0,
                };
                self.start = end + 1;
                return Some(line);
            }
            if self.done {
                return None;
            }
            self.base += 64;
            if self.base >= self.text.len() {
                // The text after the last newline is the last line.
                self.done = true;
                return Some(Line {
                    range: self.start..self.text.len(),
                    printable_ascii: !self.carried,
                });
            }
            self.classify();
        }
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

    #[test]
    fn splits_as_python() {
        let ranges: Vec<_> = lines("a\n\nb\n").map(|l| l.range).collect();
        assert_eq!(ranges, [0..1, 2..2, 3..4, 5..5]);
        let empty: Vec<_> = lines("").collect();
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
            assert_eq!(
                lines(text.as_str()).collect::<Vec<_>>(),
                naive(&text),
                "{text:?}"
            );
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
            prop_assert_eq!(lines(text.as_str()).collect::<Vec<_>>(), naive(&text));
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
            prop_assert_eq!(lines(ucs4.as_slice()).collect::<Vec<_>>(), expected);
        }
    }
}
