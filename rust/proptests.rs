//! Property tests of every public entry of the core, checking the same
//! invariants as the fuzz targets (the checks live in
//! `fuzz/src/invariants.rs`, included here), on generated inputs built from
//! the characters and constructs that matter to each entry.

use proptest::prelude::*;

use crate as fnb;
#[path = "../fuzz/src/invariants.rs"]
mod invariants;

use fnb::chunking::ChunkSizes;
use fnb::chunking::detect::ContentType;
use fnb::chunking::html::{self, HtmlHeaderSplitter};
use fnb::chunking::recursive::CharLength;
use fnb::tokens::Encoding;

/// Texts made of pieces from `palette`.
fn text_of(palette: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(palette), 0..max).prop_map(|v| v.concat())
}

const GENERAL: &[&str] = &[
    "a",
    "b",
    "word",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\t",
    "\r\n",
    ". ",
    ", ",
    "é",
    "日本",
    "😀",
    "\u{3000}",
    "\u{a0}",
    "\u{200b}",
    "\u{0}",
    "\u{7}",
    "\u{85}",
    "\u{2028}",
    "#",
    "# ",
    "## ",
    "###",
    "`",
    "```",
    "~~~",
    "<",
    ">",
    "</",
    "<p>",
    "</p>",
    "<h1>",
    "</h1>",
    "<h2>",
    "<div>",
    "<body>",
    "&amp;",
    "&#",
    "&#x41;",
    "<!--",
    "-->",
    "<![",
    "<script>",
    "</script>",
    "1234567",
    "'s",
    "\u{fffd}",
    "\u{10ffff}",
    "\u{f0000}",
];

const MARKDOWN: &[&str] = &[
    "#", "##", "###", "####", " ", "x", "title", "\n", "\n\n", "  ", "\t", "```", "~~~", "`",
    "\u{200b}", "\u{7}", "\u{a0}", "=", "ab", "é", "- ", "> ",
];

const NOTE: &[&str] = &[
    "[[",
    "]]",
    "A",
    "b.png",
    "#h",
    "^b",
    "|",
    "![[",
    "[x](",
    "y.md",
    ")",
    "\n",
    "\n\n",
    "## ",
    "Possible connections",
    "```",
    "`",
    " ",
    "é",
    "%20",
    "- ",
    "> ",
    "word",
];

const DETECT: &[&str] = &[
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
    "<body",
    "<div",
    "<p>",
    "<table",
];

const THINKING: &[&str] = &[
    "<think>", "</think>", "<thi", "nk>", "x", " ", "\n", "\n\n", "\n \n", "\t", "\u{3000}",
    "\u{2028}", "é", "\u{7}", "\u{0}", "a.b", "?!",
];

/// Longer answers: whitespace runs across the 64-unit blocks the blank-line
/// scan works in, and the pieces left between think blocks.
const LONG_THINKING: &[&str] = &[
    "<think>",
    "</think>",
    "\n",
    "\n\n",
    "\n \n",
    " ",
    "\t",
    "\u{3000}",
    "\u{85}",
    "\u{1c}",
    "\u{200b}",
    "𝄞",
    "é",
    "x",
    "0123456789abcdefghijklmnopqrstuvwxyz",
    "                ",
];

fn separators() -> impl Strategy<Value = Vec<String>> {
    const SEPS: &[&str] = &[
        "\n\n", "\n", ". ", ", ", " ", "", "a", "aa", "ab", "\u{3000}", "é",
    ];
    proptest::collection::vec(proptest::sample::select(SEPS), 0..5)
        .prop_map(|v| v.into_iter().map(str::to_string).collect())
}

/// Well-formed HTML inside `<body>`: lowercase text, tags, attributes whose
/// values are uppercase (so that a leaked value would show); `script` and
/// `style` hold text only (their content is raw text).
fn html_tree() -> impl Strategy<Value = (String, String)> {
    let leaf = (
        "[a-z0-9é日 \n]{0,12}",
        proptest::sample::select(&["", "script", "style"][..]),
    )
        .prop_map(|(t, raw)| match raw {
            "" => (t.clone(), t),
            tag => (format!("<{tag}>{t}</{tag}>"), t),
        });
    leaf.prop_recursive(5, 64, 6, |inner| {
        (
            proptest::sample::select(
                &[
                    "div", "p", "span", "h1", "h2", "h3", "b", "section", "li", "td", "title",
                ][..],
            ),
            "[A-Z]{0,6}",
            proptest::collection::vec(inner, 0..6),
        )
            .prop_map(|(tag, value, children)| {
                let mut html = format!("<{tag} class=\"{value}\" data-x={value}X>");
                let mut text = String::new();
                for (h, t) in children {
                    html.push_str(&h);
                    text.push_str(&t);
                    text.push(' ');
                }
                html.push_str(&format!("</{tag}>"));
                (html, text)
            })
    })
}

fn sorted_non_ws(s: &str) -> Vec<char> {
    let mut v: Vec<char> = invariants::non_ws(s).chars().collect();
    v.sort_unstable();
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn detection(text in text_of(DETECT, 80), path in "[a-zA-Z./\u{212a}]{0,10}") {
        invariants::check_detect(&text, &path);
    }

    #[test]
    fn note_graph(text in text_of(NOTE, 80)) {
        invariants::check_note_graph(&text);
    }

    #[test]
    fn recursive_splitter(
        text in text_of(GENERAL, 80),
        size in 0usize..40,
        overlap in 0usize..40,
        seps in separators(),
        keep in 0u8..3,
        strip in any::<bool>(),
    ) {
        invariants::check_recursive(&text, size, overlap, &seps, invariants::keep(keep), strip);
    }

    #[test]
    fn markdown_splitter(text in text_of(MARKDOWN, 60), set in 0u8..4, each in any::<bool>(), strip in any::<bool>()) {
        let sets: [&[(&str, &str)]; 4] = [
            &[("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")],
            &[("##", "A"), ("#", "A"), ("####", "B")],
            &[("=", "Eq"), ("ab", "AB"), ("#", "H")],
            &[("#", "H1"), ("", "empty")],
        ];
        let headers = sets[usize::from(set)]
            .iter()
            .map(|&(m, n)| (m.to_string(), n.to_string()))
            .collect();
        invariants::check_markdown(&text, headers, each, strip);
    }

    #[test]
    fn html_splitter_on_anything(text in text_of(GENERAL, 60)) {
        invariants::check_html(&text);
    }

    #[test]
    fn html_splitter_keeps_all_body_text(
        trees in proptest::collection::vec(html_tree(), 0..4),
        head in any::<bool>(),
    ) {
        let body: String = trees.iter().map(|(h, _)| h.as_str()).collect();
        let expected: String = trees.iter().map(|(_, t)| t.as_str()).collect();
        let html = if head {
            format!("<html><head><title>HEAD</title></head><body>{body}</body></html>TAIL")
        } else {
            body
        };
        invariants::check_html(&html);
        let splitter = HtmlHeaderSplitter::new(html::open_notebook_headers(), false).expect("valid");
        let sections = splitter.split(&html).expect("well-formed");
        let got: String = sections.iter().map(|s| s.content.as_str()).collect();
        // Every text character of the body, and nothing of the markup.
        prop_assert_eq!(sorted_non_ws(&got), sorted_non_ws(&expected));
    }

    #[test]
    fn chunk_text_in_characters(
        text in text_of(GENERAL, 120),
        ct in 0u8..4,
        size in 1usize..60,
        overlap in 0usize..60,
        min in proptest::option::of(0usize..8),
    ) {
        invariants::check_chunk_text(
            &text,
            invariants::content_type(ct),
            None,
            invariants::sizes(size, overlap, min),
            &CharLength,
            false,
        );
    }

    #[test]
    fn chunk_text_at_open_notebook_sizes(text in text_of(GENERAL, 600), ct in 0u8..4) {
        invariants::check_chunk_text(
            &text,
            invariants::content_type(ct),
            None,
            ChunkSizes::CHARS,
            &CharLength,
            false,
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    #[test]
    fn chunk_text_in_tokens(
        text in text_of(GENERAL, 120),
        ct in 0u8..4,
        size in 1usize..30,
        overlap in 0usize..30,
        min in proptest::option::of(0usize..6),
        cl100k in any::<bool>(),
    ) {
        let encoding = if cl100k { Encoding::Cl100kBase } else { Encoding::O200kBase };
        invariants::check_chunk_text(
            &text,
            invariants::content_type(ct),
            None,
            invariants::sizes(size, overlap, min),
            &invariants::token_length(encoding),
            true,
        );
    }

    #[test]
    fn token_counts(text in text_of(GENERAL, 60), raw in "\\PC{0,40}") {
        for encoding in Encoding::ALL {
            invariants::check_tokens(&text, encoding);
            invariants::check_tokens(&raw, encoding);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn mean_pooling_f64(
        data in proptest::collection::vec(
            prop_oneof![any::<f64>(), -10.0f64..10.0, Just(0.0), Just(1e-300), Just(1e300)],
            0..40,
        ),
        dim in 0usize..6,
        scales in proptest::collection::vec(any::<i8>(), 0..10),
    ) {
        invariants::check_mean_pool(&data, dim, &scales);
    }

    #[test]
    fn mean_pooling_f32(
        data in proptest::collection::vec(
            prop_oneof![any::<f32>(), -10.0f32..10.0, Just(0.0), Just(f32::MIN_POSITIVE)],
            0..40,
        ),
        dim in 0usize..6,
        scales in proptest::collection::vec(any::<i8>(), 0..10),
    ) {
        invariants::check_mean_pool(&data, dim, &scales);
    }

    #[test]
    fn token_pooling(
        hidden in proptest::collection::vec(-100.0f32..100.0, 0..40),
        mask in proptest::collection::vec(-2i64..3, 0..10),
        dim in 0usize..6,
    ) {
        invariants::check_token_pool(&hidden, &mask, dim);
        let tokens = mask.len().min(hidden.len() / dim.max(1));
        invariants::check_token_pool(&hidden[..tokens * dim], &mask[..tokens], dim);
    }

    #[test]
    fn segment_offsets(offsets in proptest::collection::vec(-2i64..8, 0..6), rows in 0usize..8) {
        invariants::check_offsets(&offsets, rows);
    }

    #[test]
    fn cleaners(
        text in text_of(THINKING, 40),
        raw in "\\PC{0,30}",
        long in text_of(LONG_THINKING, 200),
    ) {
        invariants::check_cleaning(&text);
        invariants::check_cleaning(&raw);
        invariants::check_cleaning(&long);
    }

    #[test]
    fn transcoding(units in proptest::collection::vec(
        prop_oneof![
            0u32..0x80,
            0x80u32..0x100,
            0xD800u32..0xE000,
            0u32..0x11_0000,
            0xF0000u32..0x11_0000,
            0x11_0000u32..0x20_0000,
        ],
        0..40,
    )) {
        invariants::check_transcode(&units);
    }
}

#[test]
fn every_window_in_use_refuses_surrogates() {
    // 64 private-use windows all in use, and a lone surrogate: refused.
    let mut units: Vec<u32> = (0..64).map(|w| 0xF0000 + w * 0x800).collect();
    units.push(0xD800);
    invariants::check_transcode(&units);
    let refused = fnb::text::transcode(
        fnb::text::CodeUnits::Ucs4(&units),
        fnb::text::Surrogates::Map,
    );
    assert!(refused.is_err());
}

#[test]
fn aligner_finds_overlapping_and_repeated_chunks() {
    let chunks = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(invariants::aligns("aaaa", &chunks(&["aa", "aa"])));
    assert!(invariants::aligns("abcde", &chunks(&["abc", "cde"])));
    assert!(!invariants::aligns("abcde", &chunks(&["ab", "de"])));
    assert!(!invariants::aligns("abc", &chunks(&["bc", "ab"])));
    assert!(invariants::aligns("", &[]));
}

#[test]
fn content_types_cover_all() {
    let all: Vec<Option<ContentType>> = (0..4).map(invariants::content_type).collect();
    assert_eq!(
        all,
        [
            None,
            Some(ContentType::Plain),
            Some(ContentType::Markdown),
            Some(ContentType::Html)
        ]
    );
}

/// The inputs kept from fuzz findings (`tests/regressions/<target>/`), each
/// replayed through its target's checks.
#[test]
fn fuzz_regression_inputs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let mut replayed = 0;
    for target in invariants::TARGETS {
        let Ok(dir) = std::fs::read_dir(root.join(target)) else {
            continue;
        };
        for entry in dir.flatten() {
            let data = std::fs::read(entry.path()).expect("readable regression input");
            invariants::fuzz_one(target, &data);
            replayed += 1;
        }
    }
    assert!(replayed > 0, "no regression input under {}", root.display());
}

/// Found by these property tests: a whitespace-only indivisible piece (chunk
/// size 1) made `strip_chunks` compute an offset from the empty literal
/// `strip` returns, an overflow in debug builds.
#[test]
fn regression_whitespace_piece_at_chunk_size_one() {
    let sizes = invariants::sizes(1, 0, None);
    let out =
        fnb::chunking::chunk_text(" a b ", Some(ContentType::Plain), None, sizes, &CharLength)
            .expect("chunks");
    let texts: Vec<&str> = out.chunks.iter().map(|c| out.text(" a b ", c)).collect();
    assert_eq!(texts, ["a", "b"]);
}

/// Found by these property tests: a UCS-4 code unit past U+10FFFF made the
/// private-use window scan shift by 64 (an overflow in debug builds); it is
/// refused as no character.
#[test]
fn regression_code_unit_past_the_last_plane() {
    for units in [vec![0x11_0000u32], vec![0xD800, 0x1F_FFFF]] {
        let result = fnb::text::transcode(
            fnb::text::CodeUnits::Ucs4(&units),
            fnb::text::Surrogates::Map,
        );
        assert!(matches!(result, Err(fnb::error::Error::UnsupportedText(_))));
    }
}
