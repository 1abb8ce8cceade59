//! Extended grapheme cluster boundaries (Unicode UAX #29, as the
//! `unicode-segmentation` crate implements it) at given byte offsets.
//!
//! Each question looks at most [`WINDOW`] bytes either side of the offset,
//! so asking about every chunk boundary of a text stays linear in the text,
//! whatever it holds. A decision that needs more context than that (a run of
//! more than [`WINDOW`] bytes of regional indicators, or of extenders between
//! an emoji and a joiner, or a cluster longer than [`WINDOW`] bytes) takes
//! the character boundary as a cluster boundary.

use unicode_segmentation::GraphemeCursor;

/// How far a question looks, in bytes, before and after the offset.
pub const WINDOW: usize = 4096;

/// Grapheme cluster boundaries of one text.
#[derive(Clone, Copy, Debug)]
pub struct Graphemes<'a> {
    source: &'a str,
}

impl<'a> Graphemes<'a> {
    pub fn new(source: &'a str) -> Self {
        Graphemes { source }
    }

    /// The text around `at` that a question reads, and its start.
    fn window(&self, at: usize) -> (&'a str, usize) {
        let lo = floor_char(self.source, at.saturating_sub(WINDOW));
        let hi = ceil_char(self.source, at.saturating_add(WINDOW));
        (&self.source[lo..hi], lo)
    }

    /// Whether byte `at` lies between two clusters (the ends of the text do).
    pub fn is_boundary(&self, at: usize) -> bool {
        let s = self.source;
        if at == 0 || at >= s.len() {
            return true;
        }
        if !s.is_char_boundary(at) {
            return false;
        }
        let b = s.as_bytes();
        // Below U+0300 there is no extender, spacing mark or prepended
        // character: between an ASCII character and one of those, only
        // CR LF holds together.
        if b[at - 1] < 0x80 && b[at] < 0xCC {
            return !(b[at - 1] == b'\r' && b[at] == b'\n');
        }
        let (chunk, lo) = self.window(at);
        GraphemeCursor::new(at, s.len(), true)
            .is_boundary(chunk, lo)
            .unwrap_or(true)
    }

    /// The last boundary at or before `at`.
    pub fn floor(&self, at: usize) -> usize {
        let at = at.min(self.source.len());
        if self.is_boundary(at) {
            return at;
        }
        self.prev(at)
    }

    /// The first boundary at or after `at`.
    pub fn ceil(&self, at: usize) -> usize {
        let at = at.min(self.source.len());
        if self.is_boundary(at) {
            return at;
        }
        self.next(at)
    }

    /// The last boundary before `at` (0 at the start).
    pub fn prev(&self, at: usize) -> usize {
        let s = self.source;
        let at = at.min(s.len());
        if at == 0 {
            return 0;
        }
        if !s.is_char_boundary(at) {
            return self.floor(floor_char(s, at));
        }
        let (chunk, lo) = self.window(at);
        match GraphemeCursor::new(at, s.len(), true).prev_boundary(chunk, lo) {
            Ok(Some(p)) => p,
            Ok(None) => 0,
            Err(_) => floor_char(s, at - 1),
        }
    }

    /// The first boundary after `at` (the length at the end).
    pub fn next(&self, at: usize) -> usize {
        let s = self.source;
        if at >= s.len() {
            return s.len();
        }
        if !s.is_char_boundary(at) {
            return self.ceil(ceil_char(s, at));
        }
        let (chunk, lo) = self.window(at);
        match GraphemeCursor::new(at, s.len(), true).next_boundary(chunk, lo) {
            Ok(Some(n)) => n,
            Ok(None) => s.len(),
            Err(_) => ceil_char(s, at + 1),
        }
    }
}

fn floor_char(s: &str, mut at: usize) -> usize {
    at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_char(s: &str, mut at: usize) -> usize {
    at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use unicode_segmentation::UnicodeSegmentation;

    fn boundaries(s: &str) -> Vec<usize> {
        let mut v: Vec<usize> = s.grapheme_indices(true).map(|(i, _)| i).collect();
        v.push(s.len());
        v
    }

    #[test]
    fn agrees_with_the_crate_iterator() {
        for s in [
            "",
            "abc",
            "a\r\nb",
            "בְּרֵאשִׁית ב֞",
            "👨\u{200d}👩\u{200d}👧 ok",
            "🇫🇷🇩🇪🇮",
            "क्षत्रिय हिन्दी",
            "ภาษาไทย",
            "\u{1100}\u{1161}\u{11a8}",
            " \u{301}x",
            "e\u{301}\u{302}",
        ] {
            let g = Graphemes::new(s);
            let expected = boundaries(s);
            let got: Vec<usize> = (0..=s.len()).filter(|&i| g.is_boundary(i)).collect();
            assert_eq!(got, expected, "{s:?}");
            for i in 0..=s.len() {
                let floor = *expected.iter().rev().find(|&&b| b <= i).unwrap();
                let ceil = *expected.iter().find(|&&b| b >= i).unwrap();
                assert_eq!(g.floor(i), floor, "{s:?} {i}");
                assert_eq!(g.ceil(i), ceil, "{s:?} {i}");
            }
        }
    }

    #[test]
    fn a_cluster_longer_than_the_window_is_cut_at_characters() {
        let s = format!("a{}b", "\u{301}".repeat(WINDOW));
        let g = Graphemes::new(&s);
        let mid = 1 + WINDOW; // a character boundary inside the one cluster
        assert!(!g.is_boundary(mid));
        assert_eq!(g.floor(mid), mid - 2);
        assert_eq!(g.ceil(mid), mid + 2);
        assert_eq!(g.ceil(1), 3);
    }
}
