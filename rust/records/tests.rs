use super::*;
use crate::tokens::TokenLength;

fn options(strategy: Strategy, size: usize, overlap: usize) -> Options {
    Options {
        strategy,
        chunk_size: size,
        overlap,
        max_size: size,
        unit: UnitName::Chars,
        encoding: Encoding::O200kBase,
        context_headers: ContextHeaders::Breadcrumb,
        doc_id: Some("doc".to_string()),
        min_chunk_size: None,
    }
}

fn tokens() -> TokenLength {
    TokenLength::new(Encoding::O200kBase.tokenizer(), None)
}

fn recursive() -> Strategy {
    Strategy::Recursive {
        separators: Vec::new(),
        keep: KeepSeparator::Start,
    }
}

#[test]
fn records_are_spans_with_code_point_offsets_and_lines() {
    let source = "é line one\nline two\n\nthird 😀 paragraph here";
    let records = chunk(
        source,
        &options(recursive(), 12, 0),
        &CharLength,
        Some(&tokens()),
    )
    .unwrap()
    .records;
    let chars: Vec<char> = source.chars().collect();
    for r in &records {
        let text: String = chars[r.start..r.end].iter().collect();
        assert_eq!(text, r.text(source));
        assert_eq!(r.char_count, r.end - r.start);
        let line = 1 + chars[..r.start].iter().filter(|&&c| c == '\n').count();
        assert_eq!(r.start_line, line);
        assert!(r.id.starts_with("doc:"));
    }
    assert_eq!(records.last().unwrap().end_line, 4);
}

#[test]
fn punctuation_only_chunks_fold_into_a_neighbour() {
    let split = Split {
        chunks: vec![Raw::span(0..5), Raw::span(6..9), Raw::span(10..15)],
        ..Split::default()
    };
    let source = "alpha --- omega";
    let records = finish(
        source,
        split,
        &options(recursive(), 20, 0),
        &CharLength,
        Some(&tokens()),
    );
    let texts: Vec<&str> = records.iter().map(|r| r.text(source)).collect();
    assert_eq!(texts, ["alpha ---", "omega"]);
}

#[test]
fn punctuation_only_chunks_without_room_are_dropped_or_go_forward() {
    let source = "alpha --- omega";
    let split = Split {
        chunks: vec![Raw::span(0..5), Raw::span(6..9), Raw::span(10..15)],
        ..Split::default()
    };
    let records = finish(
        source,
        split,
        &options(recursive(), 9, 0),
        &CharLength,
        Some(&tokens()),
    );
    let texts: Vec<&str> = records.iter().map(|r| r.text(source)).collect();
    assert_eq!(texts, ["alpha ---", "omega"]);
    let split = Split {
        chunks: vec![Raw::span(0..5), Raw::span(6..9), Raw::span(10..15)],
        ..Split::default()
    };
    let records = finish(
        source,
        split,
        &options(recursive(), 5, 0),
        &CharLength,
        Some(&tokens()),
    );
    let texts: Vec<&str> = records.iter().map(|r| r.text(source)).collect();
    assert_eq!(texts, ["alpha", "omega"]);
}

#[test]
fn overlap_starts_at_a_word_within_the_budget() {
    let source = "one two three four five six";
    let split = Split {
        chunks: vec![Raw::span(0..13), Raw::span(14..27)],
        ..Split::default()
    };
    let records = finish(
        source,
        split,
        &options(recursive(), 20, 7),
        &CharLength,
        Some(&tokens()),
    );
    // "three " is 6 characters; "two three " would be 10.
    assert_eq!(records[1].text(source), "three four five six");
}

#[test]
fn overlap_never_starts_inside_a_whole_block() {
    let source = "aaa ```x y z``` bbb";
    let split = Split {
        chunks: vec![Raw::span(0..15), Raw::span(16..19)],
        whole_blocks: std::iter::once(4..15).collect(),
        ..Split::default()
    };
    let records = finish(
        source,
        split,
        &options(recursive(), 30, 8),
        &CharLength,
        Some(&tokens()),
    );
    assert_eq!(records[1].text(source), "bbb");
}

#[test]
fn chunks_above_the_hard_maximum_are_split() {
    let source = "word ".repeat(50);
    let split = Split {
        chunks: vec![Raw::span(0..source.len())],
        ..Split::default()
    };
    let records = finish(
        &source,
        split,
        &options(recursive(), 23, 0),
        &CharLength,
        Some(&tokens()),
    );
    assert!(records.len() > 5);
    assert!(records.iter().all(|r| r.char_count <= 23));
}

#[test]
fn ids_are_stable_and_depend_on_the_options() {
    let a = chunk_id(Some("d"), "k", 0, 3, "abc");
    assert_eq!(a, chunk_id(Some("d"), "k", 0, 3, "abc"));
    assert_ne!(a, chunk_id(Some("d"), "k2", 0, 3, "abc"));
    assert_ne!(a, chunk_id(Some("d"), "k", 1, 4, "abc"));
    assert_eq!(chunk_id(None, "k", 0, 3, "abc").len(), 16);
    // The values are part of the contract: they must not change.
    assert_eq!(stable_hash(&[b"abc"]), 0x4d8c_5b67_a7ea_fab6);
    assert_eq!(
        chunk_id(Some("d"), "k", 0, 3, "abc"),
        format!(
            "d:{:016x}",
            stable_hash(&[b"d", b"k", &0u64.to_le_bytes(), &3u64.to_le_bytes(), b"abc"])
        )
    );
    assert_ne!(stable_hash(&[b"ab", b"c"]), stable_hash(&[b"a", b"bc"]));
}

#[test]
fn context_headers() {
    let hs = vec![
        Heading {
            level: 1,
            text: "A".into(),
        },
        Heading {
            level: 3,
            text: "C".into(),
        },
    ];
    assert_eq!(ContextHeaders::Breadcrumb.header(&hs), "A > C");
    assert_eq!(ContextHeaders::Full.header(&hs), "# A\n### C");
    assert_eq!(ContextHeaders::Parent.header(&hs), "C");
    assert_eq!(ContextHeaders::Off.header(&hs), "");
    assert_eq!(ContextHeaders::Parent.header(&[]), "");
}

#[test]
fn token_windows_cover_the_text() {
    let source = "The quick brown fox jumps over the lazy dog. ".repeat(20);
    let mut o = options(Strategy::Token, 16, 4);
    o.unit = UnitName::Tokens;
    let t = tokens();
    let records = chunk(&source, &o, &t, Some(&t)).unwrap().records;
    let ids = Encoding::O200kBase.tokenizer().encode(&source);
    assert_eq!(records.len(), (ids.len() - 16).div_ceil(12) + 1);
    assert_eq!(records.last().unwrap().range.end, source.len());
}

#[test]
fn front_matter_subset() {
    use strategies::frontmatter::{parse, split_off};
    let yaml =
        "a: 1\nb: 'x'\nc:\n  - p\n  - q: 2\n    r: [1, two]\nd: {e: true}\nf: >\n  one\n  two\n";
    let Value::Map(entries) = parse(yaml) else {
        panic!("not a map")
    };
    let get = |k: &str| entries.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(get("a"), Some(Value::Int(1)));
    assert_eq!(get("b"), Some(Value::Str("x".into())));
    assert_eq!(
        get("c"),
        Some(Value::List(vec![
            Value::Str("p".into()),
            Value::Map(vec![
                ("q".into(), Value::Int(2)),
                (
                    "r".into(),
                    Value::List(vec![Value::Int(1), Value::Str("two".into())])
                ),
            ]),
        ]))
    );
    assert_eq!(
        get("d"),
        Some(Value::Map(vec![("e".into(), Value::Bool(true))]))
    );
    assert_eq!(get("f"), Some(Value::Str("one two\n".into())));
    assert_eq!(split_off("---\na: 1\n---\nbody").0, 13);
    assert_eq!(split_off("---\nno end\n").0, 0);
    assert_eq!(split_off("text\n---\n").0, 0);
}

#[test]
fn markdown_headings_skip_code_and_follow_setext() {
    let text = "Title\n=====\n\n```\n# no\n```\n\n    # no\n\n## Sub ##\n\n- # no\n";
    let hs: Vec<(u8, String)> = strategies::markdown::headings(text)
        .into_iter()
        .map(|(l, t, _)| (l, t))
        .collect();
    assert_eq!(hs, [(1, "Title".to_string()), (2, "Sub".to_string())]);
}

#[test]
fn sentence_boundaries() {
    let text = "Dr. Smith paid $3.50 for it. Was it \"cheap?\" Yes! e.g. this \
                stays. J. R. R. Tolkien wrote... and wrote. 你好。再见！Done (really.) Next\n\nPara";
    let got: Vec<&str> = strategies::sentence::sentences(text)
        .into_iter()
        .map(|r| &text[r])
        .collect();
    assert_eq!(
        got,
        [
            "Dr. Smith paid $3.50 for it.",
            "Was it \"cheap?\"",
            "Yes!",
            "e.g. this stays.",
            "J. R. R. Tolkien wrote... and wrote.",
            "你好。",
            "再见！",
            "Done (really.)",
            "Next",
            "Para",
        ]
    );
}

/// Pieces of many scripts: clusters of several code points, and marks on
/// their own (which join whatever precedes them).
const SCRIPTS: &[&str] = &[
    "e\u{301}",
    "a\u{308}\u{304}",
    "\u{301}",
    "word",
    "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}",
    "\u{1f3f3}\u{fe0f}\u{200d}\u{1f308}",
    "\u{1f44d}\u{1f3fd}",
    "\u{1f1eb}\u{1f1f7}",
    "\u{1f1e9}",
    "\u{200d}",
    "\u{915}\u{94d}\u{937}",
    "\u{939}\u{93f}",
    "\u{93f}",
    "\u{94d}",
    "\u{e20}\u{e32}",
    "\u{e44}\u{e17}",
    "\u{e31}",
    "\u{e48}",
    "\u{1100}\u{1161}\u{11a8}",
    "\u{11ab}",
    "\u{d55c}",
    "\u{5d1}\u{5b0}\u{5bc}",
    "\u{5e8}\u{5b5}",
    "\u{5b4}",
    "\u{59e}",
    " ",
    "\n",
    "\n\n",
    "\r\n",
    ". ",
    "# ",
];

fn scripts_text() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    proptest::collection::vec(proptest::sample::select(SCRIPTS), 0..120).prop_map(|v| v.concat())
}

/// Each chunk starts and ends between clusters unless the cluster it cuts
/// alone exceeds `max`, and its own text is within `max` (a character alone
/// may exceed it).
fn check_cuts<L: LengthFunction<str>>(source: &str, records: &[Record], max: usize, length: &L) {
    use unicode_segmentation::UnicodeSegmentation;
    let clusters: Vec<Range<usize>> = source
        .grapheme_indices(true)
        .map(|(i, g)| i..i + g.len())
        .collect();
    for r in records {
        for at in [r.range.start, r.range.end] {
            if let Some(c) = clusters.iter().find(|c| c.start < at && at < c.end) {
                assert!(
                    length.length(&source[c.clone()]) > max,
                    "cut at {at} inside {:?} of {source:?}",
                    &source[c.clone()]
                );
            }
        }
        let text = r.text(source);
        assert!(
            length.length(text) <= max || text.chars().count() == 1,
            "{text:?} over {max} in {source:?}"
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    #[test]
    fn cuts_fall_between_grapheme_clusters(
        text in scripts_text(),
        which in 0usize..4,
        in_tokens in proptest::prelude::any::<bool>(),
        size in 2usize..40,
        tenth in 0usize..4,
    ) {
        let strategy = [recursive(), Strategy::Token, Strategy::Markdown, Strategy::Sentence][which].clone();
        let in_tokens = in_tokens || strategy == Strategy::Token;
        let mut o = options(strategy, size, size * tenth / 10);
        let t = tokens();
        if in_tokens {
            o.unit = UnitName::Tokens;
            let records = chunk(&text, &o, &t, Some(&t)).unwrap().records;
            check_cuts(&text, &records, size, &t);
        } else {
            let records = chunk(&text, &o, &CharLength, Some(&t)).unwrap().records;
            check_cuts(&text, &records, size, &CharLength);
        }
    }
}

#[test]
fn token_windows_start_on_a_letter_not_its_mark() {
    // Pointed Hebrew: a window of the sliding tokens starts between a letter
    // and its mark; the chunk starts at the letter and keeps to the maximum.
    let word = "\u{5d1}\u{59e}\u{5e9}\u{5c1}\u{5b8}\u{5dc}\u{5d5}\u{5b9}\u{5dd} ";
    let source = word.repeat(300);
    let mut o = options(Strategy::Token, 40, 4);
    o.unit = UnitName::Tokens;
    let t = tokens();
    let records = chunk(&source, &o, &t, Some(&t)).unwrap().records;
    check_cuts(&source, &records, 40, &t);
    assert_eq!(records.last().unwrap().range.end, source.len());
}

fn sentences(keep: KeepSeparator) -> Strategy {
    Strategy::Recursive {
        separators: ["\n\n", "\n", ". ", "? ", "! ", " ", ""]
            .map(String::from)
            .to_vec(),
        keep,
    }
}

fn texts(source: &str, strategy: Strategy, size: usize) -> Vec<String> {
    chunk(
        source,
        &options(strategy, size, 0),
        &CharLength,
        Some(&tokens()),
    )
    .unwrap()
    .records
    .iter()
    .map(|r| r.text(source).to_string())
    .collect()
}

#[test]
fn keep_separator_end_leaves_sentence_ends_with_their_sentence() {
    let source = "One two three. Four five six? Seven eight nine! Ten eleven.";
    let end = texts(source, sentences(KeepSeparator::End), 32);
    assert_eq!(
        end,
        [
            "One two three.",
            "Four five six?",
            "Seven eight nine! Ten eleven."
        ]
    );
    // Kept at the start, the punctuation opens the next chunk instead.
    let start = texts(source, sentences(KeepSeparator::Start), 32);
    assert_eq!(
        start,
        [
            "One two three",
            ". Four five six",
            "? Seven eight nine! Ten eleven."
        ]
    );
}

#[test]
fn keep_separator_end_keeps_the_ids_of_the_default_apart() {
    let source = "Alpha beta. Gamma delta. Epsilon zeta.";
    let id = |strategy| {
        chunk(
            source,
            &options(strategy, 400, 0),
            &CharLength,
            Some(&tokens()),
        )
        .unwrap()
        .records[0]
            .id
            .clone()
    };
    let default = options(recursive(), 400, 0).id_key();
    assert_eq!(
        default,
        "Recursive { separators: [] }|400|0|400|Chars|o200k_base"
    );
    assert_ne!(
        id(sentences(KeepSeparator::End)),
        id(sentences(KeepSeparator::Start))
    );
}

#[test]
fn keep_separator_parses_start_and_end_only() {
    assert_eq!("end".parse::<KeepSeparator>().unwrap(), KeepSeparator::End);
    assert_eq!(
        "start".parse::<KeepSeparator>().unwrap(),
        KeepSeparator::Start
    );
    assert!("discard".parse::<KeepSeparator>().is_err());
}
