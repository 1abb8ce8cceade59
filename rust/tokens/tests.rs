//! Differential tests: the hand-written pre-tokenizers against tiktoken's
//! patterns run by fancy-regex (as tiktoken runs them), and the token ids
//! against tiktoken-rs's `CoreBPE` (tiktoken's own encoder, vendored).

use proptest::prelude::*;

use super::*;

const CL100K_PAT: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

fn oracle_regex(enc: Encoding) -> &'static fancy_regex::Regex {
    static O: OnceLock<fancy_regex::Regex> = OnceLock::new();
    static C: OnceLock<fancy_regex::Regex> = OnceLock::new();
    match enc {
        Encoding::O200kBase => O.get_or_init(|| {
            fancy_regex::Regex::new(tiktoken_rs::O200K_BASE_PAT_STR).expect("pattern")
        }),
        Encoding::Cl100kBase => {
            C.get_or_init(|| fancy_regex::Regex::new(CL100K_PAT).expect("pattern"))
        }
    }
}

fn oracle_pieces(enc: Encoding, text: &str) -> Vec<String> {
    oracle_regex(enc)
        .find_iter(text)
        .map(|m| m.expect("regex ran").as_str().to_owned())
        .collect()
}

fn our_pieces(enc: Encoding, text: &str) -> Vec<String> {
    let mut v = Vec::new();
    enc.tokenizer().for_each_piece(text, |p| {
        v.push(String::from_utf8(p.to_vec()).expect("pieces are on char boundaries"))
    });
    v
}

fn oracle_bpe(enc: Encoding) -> &'static tiktoken_rs::CoreBPE {
    match enc {
        Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
    }
}

fn check(text: &str) {
    for enc in Encoding::ALL {
        assert_eq!(
            our_pieces(enc, text),
            oracle_pieces(enc, text),
            "{} pieces of {text:?}",
            enc.name()
        );
        let ids = enc.tokenizer().encode(text);
        assert_eq!(
            ids,
            oracle_bpe(enc).encode_ordinary(text),
            "{} ids of {text:?}",
            enc.name()
        );
        assert_eq!(enc.tokenizer().count(text), ids.len());
        assert_eq!(enc.tokenizer().decode_bytes(&ids), text.as_bytes());
    }
}

#[test]
fn names() {
    for enc in Encoding::ALL {
        assert_eq!(enc.name().parse(), Ok(enc));
    }
    assert_eq!(
        "gpt2".parse::<Encoding>(),
        Err(crate::error::Error::InvalidArgument(
            "unknown encoding \"gpt2\"; choose one of o200k_base, cl100k_base".into()
        ))
    );
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Tokenizer>();
}

#[test]
fn token_length_is_a_length_function() {
    use crate::chunking::recursive::LengthFunction;
    let length = TokenLength::new(Encoding::O200kBase.tokenizer(), None);
    assert_eq!(length.length("hello world"), 2);
    assert_eq!(length.length(""), 0);
    let cl = TokenLength::new(Encoding::Cl100kBase.tokenizer(), None);
    assert_eq!(cl.length("hello world"), 2);
}

/// `exceeds` skips counting text of at most `limit` bytes: the answer is
/// still the count's, at every limit around it.
#[test]
fn exceeds_agrees_with_the_count() {
    use crate::chunking::recursive::LengthFunction;
    let length = TokenLength::new(Encoding::O200kBase.tokenizer(), None);
    for text in [
        "",
        "a",
        "hello world",
        "日本語のテキスト",
        "😀😀😀",
        "  \n\n  x",
        "abc def ghi",
    ] {
        let n = length.length(text);
        for limit in 0..text.len() + 3 {
            assert_eq!(length.exceeds(text, limit), n > limit, "{text:?} {limit}");
        }
    }
}

#[test]
fn vocab_sizes() {
    assert_eq!(Encoding::O200kBase.tokenizer().vocab().len(), 199_998);
    assert_eq!(Encoding::Cl100kBase.tokenizer().vocab().len(), 100_256);
}

#[test]
fn known_ids() {
    let o = Encoding::O200kBase.tokenizer();
    let c = Encoding::Cl100kBase.tokenizer();
    assert_eq!(c.encode("hello world"), vec![15339, 1917]);
    assert_eq!(o.encode("hello world"), vec![24912, 2375]);
    // Special tokens are ordinary text.
    assert_eq!(
        c.encode("<|endoftext|>"),
        vec![27, 91, 8862, 728, 428, 91, 29]
    );
    assert_eq!(o.count(""), 0);
}

#[test]
fn contraction_folds_are_the_regex_crates() {
    use regex_syntax::hir::{Class, HirKind};
    for (letter, expected) in [
        ('s', &['S', 's', '\u{17F}'][..]),
        ('t', &['T', 't']),
        ('r', &['R', 'r']),
        ('e', &['E', 'e']),
        ('v', &['V', 'v']),
        ('m', &['M', 'm']),
        ('l', &['L', 'l']),
        ('d', &['D', 'd']),
    ] {
        let hir = regex_syntax::Parser::new()
            .parse(&format!("(?i:{letter})"))
            .expect("parses");
        let HirKind::Class(Class::Unicode(class)) = hir.kind() else {
            panic!("{letter}: {hir:?}")
        };
        let chars: Vec<char> = class
            .ranges()
            .iter()
            .flat_map(|r| r.start()..=r.end())
            .collect();
        assert_eq!(chars, expected, "{letter}");
    }
}

const EDGE_CASES: &[&str] = &[
    "",
    " ",
    "  ",
    "a",
    "hello world",
    "Hello World HELLO WORLD hELLO",
    "  leading and trailing  ",
    "tabs\tand\t\tmore\t",
    "line\nbreaks\r\nand\n\n\nmore\r\r\n \n  x",
    "trailing newline\n",
    "trailing spaces then newline   \n   ",
    " \n ",
    "\n",
    "\r\n",
    "a\u{a0}b\u{3000}c\u{2028}d \u{a0} e\u{85}f",
    "\u{a0}\u{a0}x",
    "\t\tx",
    "don't I'll we've they're she's he'd I'm",
    "DON'T I'LL WE'VE THEY'RE SHE'S HE'D I'M",
    "'s 'S 'ſ 'K 'K 'T 'Re 'rE 'LL 'Ll 'lL 'VE 'M 'D 'x 'st",
    "its'ſ it'ſt IT'ſ ſ'ſ",
    "'",
    "''",
    "'s",
    "a's",
    "A'S",
    "ǅemal ǈubljana ǋ ǅ'S",
    "1 12 123 1234 12345 123456 1,234,567.89",
    "٣٤٥٦ ⅷⅸ ½¾ ²³",
    "x1y22z333",
    "$100 (hello) [world] {foo} <bar> \"quoted\" 'single'",
    "((((hello))))",
    "!!!\n\n///\n/x",
    "a/b//c///\n/",
    "path/to/file.txt",
    "https://example.com/a?b=c&d=e#f",
    "foo.bar_baz-qux",
    "emoji 😀😃😄 👨‍👩‍👧‍👦 🇫🇷",
    "中文字符串测试。日本語のテキスト、かな。한국어 텍스트",
    "中A 中a Aa 中Ａ",
    "Ελληνικά κείμενο ΚΕΊΜΕΝΟ",
    "Кириллица ТЕКСТ текст",
    "עברית ערבית العربية",
    "हिन्दी देवनागरी",
    "e\u{301} \u{301}e \u{301}\u{302}x Ä\u{308}\u{308} \u{301}",
    " \u{301}",
    "!\u{301}",
    "\u{301}",
    "a\u{301}B\u{301}c",
    "AB\u{301}CD",
    "ÀÉÎÕÜ àéîõü ÀéÎõÜ",
    "ǅ Ǆ ǆ ᾈ ᾀ",
    "ʰʱʲ ˢ Aʰ aʰ ʰA",
    "<|endoftext|><|fim_prefix|><|fim_middle|><|fim_suffix|><|endofprompt|>",
    "\u{fffd}\u{fffd}",
    "\u{0}\u{1}\u{7f}\u{80}\u{9f}",
    "\u{1C89}\u{10D50}\u{16100} \u{10940}\u{1E6C0}\u{323B0}",
    "\u{E000}\u{F8FF}\u{F0000}\u{10FFFF}",
    "   \u{3000}\u{3000}  ",
    "x \n\t\u{a0}\u{2028}\r\n \u{3000}y",
    "x\u{2028}\u{2029}y",
    " \r\n \r\n x",
    " !\n\n",
    " !\r\n/",
    "a\r\n/b",
];

#[test]
fn edge_cases_match_tiktoken() {
    for text in EDGE_CASES {
        check(text);
    }
}

#[test]
fn class_boundaries_alone_and_in_context() {
    // The first and last code point of every class range and their
    // neighbours (every code point in release builds), alone, after a space,
    // between letters, doubled, after an apostrophe.
    let mut cps: Vec<u32> = if cfg!(debug_assertions) {
        tables::CLASS_RANGES
            .iter()
            .flat_map(|&(a, b, _)| [a.saturating_sub(1), a, b, b + 1])
            .collect()
    } else {
        (0..=0x10FFFF).collect()
    };
    cps.dedup();
    let mut batch = String::new();
    for cp in cps {
        let Some(c) = char::from_u32(cp) else {
            continue;
        };
        for template in ["{}", " {}x", "A{}b", "{}{}a", "'{}"] {
            batch.push_str(&template.replace("{}", c.encode_utf8(&mut [0; 4])));
            batch.push('\u{3000}');
        }
        if batch.len() > 1 << 16 {
            for enc in Encoding::ALL {
                assert_eq!(our_pieces(enc, &batch), oracle_pieces(enc, &batch));
            }
            batch.clear();
        }
    }
    for enc in Encoding::ALL {
        assert_eq!(our_pieces(enc, &batch), oracle_pieces(enc, &batch));
    }
}

/// Characters of every class the patterns distinguish, and the ones their
/// special cases name.
fn alphabet() -> Vec<char> {
    let mut v: Vec<char> = " \t\n\r\u{b}\u{c}\u{85}\u{a0}\u{3000}\u{2028}\u{2029}\u{1680}"
        .chars()
        .collect();
    v.extend("aAbBzZsStTrReEvVmMlLdDkK'’/\\.,;:!?-_()[]{}<>|\"#$%&*+=@^`~".chars());
    v.extend("0123456789٣⅛½²".chars());
    v.extend("ſKǅǈʰˢ々〆ªºàÀßÿĀāΩωЖж中文字ㄱ가あア".chars());
    v.extend("\u{301}\u{302}\u{308}\u{903}\u{20DD}\u{64B}".chars());
    v.extend("😀👍\u{200d}\u{fe0f}\u{fffd}\u{0}\u{7f}\u{ad}\u{10FFFF}\u{1C89}\u{10940}".chars());
    v
}

fn text_strategy() -> impl Strategy<Value = String> {
    let alphabet = alphabet();
    prop::collection::vec(
        prop_oneof![
            8 => prop::sample::select(alphabet),
            1 => any::<char>(),
        ],
        0..40,
    )
    .prop_map(|cs| cs.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn random_text_matches_tiktoken(text in text_strategy()) {
        check(&text);
    }
}

fn corpus_dirs() -> Vec<std::path::PathBuf> {
    let root = std::env::var_os("FASTNOTEBOOK_CORPUS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "/work/shared/corpus".into());
    ["html", "md", "txt"]
        .iter()
        .map(|d| root.join(d))
        .filter(|d| d.is_dir())
        .collect()
}

#[test]
fn corpus_matches_tiktoken() {
    let mut files = 0;
    for dir in corpus_dirs() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .expect("readable corpus")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        // A sample in debug builds; the Python tests cover every file.
        for path in entries
            .iter()
            .step_by(if cfg!(debug_assertions) { 10 } else { 1 })
        {
            let bytes = std::fs::read(path).expect("readable file");
            let text = String::from_utf8_lossy(&bytes);
            for enc in Encoding::ALL {
                let expected = oracle_bpe(enc).encode_ordinary(&text);
                assert_eq!(
                    enc.tokenizer().encode(&text),
                    expected,
                    "{} {}",
                    enc.name(),
                    path.display()
                );
                // The count path (batches, fast paths, the piece cache), twice:
                // the second time most merges come from the cache.
                for _ in 0..2 {
                    assert_eq!(enc.tokenizer().count(&text), expected.len());
                }
                if !expected.is_empty() {
                    let half = expected.len() / 2;
                    assert!(enc.tokenizer().count_up_to(&text, half) > half);
                }
            }
            files += 1;
        }
    }
    eprintln!("compared {files} corpus files");
}

/// Megabyte-sized worst cases complete (a quadratic merge would take hours;
/// the benchmark reports the times).
#[test]
fn worst_cases_complete() {
    // Debug builds are ~20x slower than release: 10 MB there, 2 MB here.
    let mb = if cfg!(debug_assertions) { 2 } else { 10 };
    let size = mb << 20;
    let cases: Vec<(&str, String)> = vec![
        ("a", "a".repeat(size)),
        ("digits", "1234567890".repeat(size / 10)),
        ("cjk", "中".repeat(size / 3)),
        ("punct", "!@#$%^&*()-=+[]{};:,.<>?/|~`".repeat(size / 28)),
        ("spaces", " ".repeat(size)),
        ("newlines", "\n".repeat(size)),
    ];
    for (name, text) in &cases {
        for enc in Encoding::ALL {
            assert!(enc.tokenizer().count(text) > 0, "{} {name}", enc.name());
        }
    }
    // Exactness of the heap merge on a long piece against the oracle.
    let text = "ab".repeat(5000) + &"中".repeat(2000);
    check(&text);
}

/// The byte ranges of token windows are the bytes of the windows of the
/// encoded ids, boundaries inside merged pieces included.
#[test]
fn token_windows_are_the_bytes_of_id_windows() {
    let texts = [
        String::new(),
        "a".to_string(),
        "Hello world, this is a test of windows.\n\n  Indented   text\ttabs".repeat(7),
        "日本語のテキスト 😀 é ".repeat(13),
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbb"
            .repeat(3),
        "x".repeat(700),
    ];
    for encoding in Encoding::ALL {
        let tokenizer = encoding.tokenizer();
        for text in &texts {
            let ids = tokenizer.encode(text);
            for (size, step) in [(1, 1), (2, 1), (3, 2), (5, 5), (7, 3), (50, 40)] {
                let mut expected = Vec::new();
                let mut start = 0;
                while start < ids.len() {
                    let end = (start + size).min(ids.len());
                    expected.push(tokenizer.decode_bytes(&ids[start..end]));
                    if end == ids.len() {
                        break;
                    }
                    start += step;
                }
                let got: Vec<Vec<u8>> = tokenizer
                    .token_windows(text, size, step)
                    .into_iter()
                    .map(|r| text.as_bytes()[r].to_vec())
                    .collect();
                assert_eq!(got, expected, "{encoding:?} {size} {step} {text:?}");
            }
        }
    }
}

/// The pair bitmap says what the pair-rank table says, for every pair.
#[test]
fn pair_bits_are_the_pair_ranks() {
    for enc in Encoding::ALL {
        let v = enc.tokenizer().vocab();
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                assert_eq!(v.is_pair(a, b), v.pair_rank(a, b) != vocab::NO_RANK);
            }
        }
    }
}
