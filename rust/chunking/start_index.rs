//! Where each chunk starts in its text, as langchain-text-splitters'
//! `create_documents` reports it in `start_index`: the chunk is searched for
//! from the previous chunk's start plus its length less the overlap (never
//! before 0), and the first hit is taken, or -1 when there is none (the
//! search after a miss then starts from -1 plus the missing chunk's length
//! less the overlap).
//!
//! Texts and chunks are taken as the code units of Python strings (Latin-1,
//! UCS-2 or UCS-4, lone surrogates included) so that offsets are code points
//! and a search compares exactly what `str.find` compares.

use crate::for_width;
use crate::text::{CodeUnit, CodeUnits, UnitFinder};

/// `text.find(needle, from)` for code units: the code-point index of the
/// first occurrence of `needle` that starts at `from` or later.
pub fn find_from<T: CodeUnit>(text: &[T], needle: CodeUnits<'_>, from: usize) -> Option<usize> {
    let needle_len = for_width!(needle, |u| u.len());
    // As `str.find`: nothing starts past the end, the empty string anywhere
    // up to it.
    if from > text.len() || needle_len > text.len() - from {
        return None;
    }
    if needle_len == 0 {
        return Some(from);
    }
    let widened;
    let units: &[T] = match T::units_of(needle) {
        Some(units) => units,
        None => {
            // A needle holding a code point the text's units cannot hold
            // does not occur in it.
            widened = for_width!(needle, |u| u
                .iter()
                .map(|c| T::from_code_point(c.code_point()))
                .collect::<Option<Vec<T>>>())?;
            &widened
        }
    };
    // A chunk mostly starts at `from` or a few units after it: the first
    // places holding its first unit are compared directly, since building a
    // substring searcher costs more than such a short search. A bounded
    // number of comparisons keeps the search linear.
    let mut at = from;
    for _ in 0..QUICK_TRIES {
        let i = at + text.get(at..)?.iter().position(|&u| u == units[0])?;
        if text.get(i..)?.starts_with(units) {
            return Some(i);
        }
        at = i + 1;
        if units.len() > text.len() - at {
            return None;
        }
    }
    let finder = UnitFinder::new(Some(T::bytes_of(units)), std::mem::size_of::<T>());
    finder.find(T::bytes_of(text), at)
}

/// How many candidate starts [`find_from`] compares before it builds a
/// substring searcher.
const QUICK_TRIES: usize = 8;

/// The `start_index` of each chunk of one text, in turn.
#[derive(Clone, Copy, Debug)]
pub struct StartIndex {
    index: i64,
    previous_len: i64,
    overlap: i64,
}

impl StartIndex {
    /// For the chunks of one text split with `chunk_overlap` `overlap`.
    pub fn new(overlap: i64) -> Self {
        StartIndex {
            index: 0,
            previous_len: 0,
            overlap,
        }
    }

    /// The start of the next chunk, `chunk`, in `text` (-1 when it is not
    /// found).
    pub fn next<T: CodeUnit>(&mut self, text: &[T], chunk: CodeUnits<'_>) -> i64 {
        let from = (self.index + self.previous_len - self.overlap).max(0);
        self.index = usize::try_from(from)
            .ok()
            .and_then(|from| find_from(text, chunk, from))
            .and_then(|at| i64::try_from(at).ok())
            .unwrap_or(-1);
        self.previous_len = i64::try_from(for_width!(chunk, |u| u.len())).unwrap_or(i64::MAX);
        self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `str.find` on code points, the obvious way.
    fn naive(text: &[u32], needle: &[u32], from: usize) -> Option<usize> {
        if from > text.len() {
            return None;
        }
        (from..=text.len()).find(|&i| text[i..].starts_with(needle))
    }

    fn cps(s: &str) -> Vec<u32> {
        s.chars().map(|c| c as u32).collect()
    }

    /// The starts LangChain's loop gives, on code points.
    fn langchain(text: &[u32], chunks: &[Vec<u32>], overlap: i64) -> Vec<i64> {
        let (mut index, mut previous) = (0i64, 0i64);
        chunks
            .iter()
            .map(|c| {
                let from = (index + previous - overlap).max(0) as usize;
                index = naive(text, c, from).map_or(-1, |i| i as i64);
                previous = c.len() as i64;
                index
            })
            .collect()
    }

    fn starts<T: CodeUnit>(text: &[T], chunks: &[CodeUnits<'_>], overlap: i64) -> Vec<i64> {
        let mut start = StartIndex::new(overlap);
        chunks.iter().map(|&c| start.next(text, c)).collect()
    }

    #[test]
    fn finds_as_str_find_does() {
        let text = cps("abcabc");
        let t = &text[..];
        assert_eq!(find_from(t, CodeUnits::Latin1(b"abc"), 0), Some(0));
        assert_eq!(find_from(t, CodeUnits::Latin1(b"abc"), 1), Some(3));
        assert_eq!(find_from(t, CodeUnits::Latin1(b"abc"), 4), None);
        assert_eq!(find_from(t, CodeUnits::Latin1(b""), 6), Some(6));
        assert_eq!(find_from(t, CodeUnits::Latin1(b""), 7), None);
        assert_eq!(find_from(t, CodeUnits::Latin1(b"abcabcx"), 0), None);
        // A needle wider than the text's units cannot occur in it.
        assert_eq!(find_from(b"abc", CodeUnits::Ucs2(&[0x3B1]), 0), None);
        // A narrower needle is widened.
        let greek: Vec<u16> = "xαβé".encode_utf16().collect();
        assert_eq!(find_from(&greek, CodeUnits::Latin1(&[0xE9]), 0), Some(3));
        assert_eq!(
            find_from(&greek, CodeUnits::Ucs2(&[0x3B1, 0x3B2]), 0),
            Some(1)
        );
    }

    #[test]
    fn lone_surrogates_are_units_like_any_other() {
        let text: Vec<u16> = vec![0x61, 0xD800, 0x62, 0xD800, 0xDC00];
        assert_eq!(
            find_from(&text, CodeUnits::Ucs2(&[0xD800, 0x62]), 0),
            Some(1)
        );
        assert_eq!(find_from(&text, CodeUnits::Ucs2(&[0xD800]), 2), Some(3));
        assert_eq!(find_from(&text, CodeUnits::Ucs2(&[0xDC00]), 0), Some(4));
    }

    #[test]
    fn many_false_starts_reach_the_searcher() {
        let mut text = "ab".repeat(40);
        text.push_str("abc");
        let t = text.as_bytes();
        assert_eq!(find_from(t, CodeUnits::Latin1(b"abc"), 0), Some(80));
        assert_eq!(find_from(t, CodeUnits::Latin1(b"abc"), 81), None);
        assert_eq!(find_from(t, CodeUnits::Latin1(b"abd"), 0), None);
        assert_eq!(find_from(t, CodeUnits::Latin1(b"ba"), 7), Some(7));
    }

    #[test]
    fn hits_never_straddle_units() {
        // In (little-endian) UCS-2 memory, 0x4241 0x4443 holds the bytes
        // 42 43 of the needle 0x4342 across two units.
        let text: Vec<u16> = vec![0x4241, 0x4443, 0x4342];
        assert_eq!(find_from(&text, CodeUnits::Ucs2(&[0x4342]), 0), Some(2));
    }

    #[test]
    fn starts_follow_langchain() {
        let text = "one two three four two three five";
        let chunks = ["one two", "two three", "three four", "two three", "five"];
        let units: Vec<CodeUnits<'_>> = chunks
            .iter()
            .map(|c| CodeUnits::Latin1(c.as_bytes()))
            .collect();
        let wide: Vec<Vec<u32>> = chunks.iter().map(|c| cps(c)).collect();
        for overlap in [0, 3, 5, 100, -4] {
            assert_eq!(
                starts(text.as_bytes(), &units, overlap),
                langchain(&cps(text), &wide, overlap),
                "overlap {overlap}"
            );
        }
        assert_eq!(starts(text.as_bytes(), &units, 5), [0, 4, 8, 19, 29]);
    }

    #[test]
    fn a_miss_gives_minus_one_and_the_search_goes_on() {
        let text = "aaaa bbbb aaaa";
        let chunks = [&b"aaaa"[..], b"zzzz", b"aaaa", b"bbbb"];
        let units: Vec<CodeUnits<'_>> = chunks.iter().map(|&c| CodeUnits::Latin1(c)).collect();
        // After the miss the search starts at -1 + 4 - 0 = 3: the next
        // "aaaa" is the last one, and "bbbb" is then not found.
        assert_eq!(starts(text.as_bytes(), &units, 0), [0, -1, 10, -1]);
        let wide: Vec<Vec<u32>> = chunks
            .iter()
            .map(|c| c.iter().map(|&b| b as u32).collect())
            .collect();
        assert_eq!(
            starts(text.as_bytes(), &units, 0),
            langchain(&cps(text), &wide, 0)
        );
    }

    proptest::proptest! {
        #[test]
        fn starts_match_the_naive_loop(
            text in proptest::collection::vec(proptest::sample::select(vec![0x61u32, 0x62, 0xE9, 0x3B1, 0xD800, 0x1F600]), 0..40),
            cuts in proptest::collection::vec((0usize..40, 0usize..12), 0..8),
            overlap in -3i64..8,
        ) {
            let chunks: Vec<Vec<u32>> = cuts
                .iter()
                .map(|&(a, n)| {
                    let a = a.min(text.len());
                    text[a..(a + n).min(text.len())].to_vec()
                })
                .collect();
            let units: Vec<CodeUnits<'_>> = chunks.iter().map(|c| CodeUnits::Ucs4(c)).collect();
            proptest::prop_assert_eq!(starts(&text, &units, overlap), langchain(&text, &chunks, overlap));
        }
    }
}
