//! A lower bound on the token count, for telling that a long text exceeds a
//! chunk size without running BPE over its first `limit` tokens.
//!
//! Call a *word start* a visible ASCII character other than `/` (`!` to `~`)
//! that begins the text or follows a space or a newline. No piece of either
//! encoding's split pattern holds two word starts, so there are at least as
//! many pieces as word starts, and every piece is at least one token:
//!
//! - a piece holds whitespace after a non-whitespace character only in
//!   ` ?[^\s\p{L}\p{N}]+[\r\n/]*`, and then only `\r`, `\n` or `/` follow
//!   it, none of which is a word start;
//! - the letter alternatives hold whitespace as their first character only,
//!   the digit one none, and the whitespace ones nothing else.
//!
//! Two word starts `i < j` in one piece would put the whitespace before `j`
//! after the non-whitespace `i` and before a word start: impossible. The
//! bound is a pass of 64-byte masks; on prose it is about three quarters of
//! the count.

use crate::text;

/// The word starts of `text`, counted until there are more than `limit`
/// (then some number above `limit`).
pub fn words_up_to(text: &str, limit: usize) -> usize {
    let mut words = 0;
    // The start of the text counts as following whitespace.
    let mut after_space = 1u64;
    for window in text.as_bytes().chunks(64) {
        let classes = text::classify(window);
        let present = u64::MAX >> (64 - window.len());
        let starts = !classes.not_graphic & !text::byte_mask(window, b'/') & present;
        let spaces = classes.space | classes.newline;
        words += (starts & ((spaces << 1) | after_space)).count_ones() as usize;
        if words > limit {
            break;
        }
        after_space = spaces >> (window.len() - 1) & 1;
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;
    use proptest::prelude::*;

    fn words(text: &str) -> usize {
        words_up_to(text, usize::MAX)
    }

    #[test]
    fn counts_word_starts() {
        assert_eq!(words(""), 0);
        assert_eq!(words("one two\nthree"), 3);
        assert_eq!(words("  (a) /b \t c"), 2, "tabs and slashes start none");
        let long = "word ".repeat(100);
        assert_eq!(words(&long), 100);
        assert!(words_up_to(&long, 10) > 10);
    }

    fn assert_bounds(text: &str) {
        for encoding in Encoding::ALL {
            let count = encoding.tokenizer().count(text);
            assert!(
                words(text) <= count,
                "{text:?} {encoding:?}: {count} tokens"
            );
        }
    }

    #[test]
    fn bounds_the_cases_that_come_close() {
        // A slash after a newline can end the piece before it: one o200k token
        // each, which counting `/` would make two words.
        for text in [
            "/\n/",
            ".\n/",
            "*/\n/",
            ".\n\n/",
            "a\n \nb",
            "it's don't",
            "x \n y",
        ] {
            assert_bounds(text);
        }
    }

    #[test]
    fn bounds_every_short_string_of_the_characters_that_matter() {
        let alphabet = ['/', '\n', '-', 'a', ' ', '\r', '\'', '1', '\u{e9}'];
        for len in 1..=5u32 {
            for code in 0..alphabet.len().pow(len) {
                let text: String = (0..len)
                    .map(|k| alphabet[code / alphabet.len().pow(k) % alphabet.len()])
                    .collect();
                assert_bounds(&text);
            }
        }
    }

    proptest! {
        #[test]
        fn never_above_the_count(
            parts in proptest::collection::vec(
                prop_oneof![
                    proptest::sample::select(&[
                        " ", "\n", "\r", "\t", "/", "'s", "-", "--", "\u{b}", "\u{a0}", "\u{3000}",
                        "\u{300}", "é", "日本", "😀", "123", "x", "Word", "()", "\n\n", "  ",
                    ][..]).prop_map(str::to_string),
                    "[ -~]{1,8}",
                ],
                0..60,
            )
        ) {
            assert_bounds(&parts.concat());
        }
    }
}
