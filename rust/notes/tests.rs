//! Unit tests of the note rules.

use super::plan::{self, Limits};
use super::scan::{self, RawLinkKind};
use super::{frontmatter_end, normalise};
use crate::tokens::Encoding;

const LIMITS: Limits = Limits {
    target_min: 250,
    target_max: 400,
    hard_max: 700,
    min: 100,
};

fn links_of(text: &str) -> Vec<(RawLinkKind, String)> {
    let st = scan::structure(text);
    scan::links(&st, &["Possible connections".to_string()])
        .into_iter()
        .map(|l| (l.kind, text[l.inner.0..l.inner.1].to_string()))
        .collect()
}

fn plan_of(text: &str) -> Vec<plan::Planned> {
    plan::plan_text(text, LIMITS, 50, Encoding::O200kBase.tokenizer())
}

fn assert_tiles(text: &str, planned: &[plan::Planned]) {
    let mut pos = 0;
    for p in planned {
        assert_eq!(p.start, pos, "chunks must tile the text");
        assert!(p.end > p.start);
        assert!(p.overlap_start <= p.start);
        pos = p.end;
    }
    assert_eq!(pos, text.len());
}

#[test]
fn frontmatter_block_ends_after_the_closing_line() {
    assert_eq!(frontmatter_end("---\na: 1\n---\nbody"), 13);
    assert_eq!(frontmatter_end("---\r\na: 1\r\n...\r\nbody"), 16);
    assert_eq!(frontmatter_end("\u{feff}---\na: 1\n---\n"), 16);
    assert_eq!(frontmatter_end("---\nnever closed\n"), 0);
    assert_eq!(frontmatter_end("--- \nx\n---"), 10);
    assert_eq!(frontmatter_end("----\na\n---\n"), 0);
    assert_eq!(frontmatter_end(""), 0);
    assert_eq!(frontmatter_end("body ---\n---\n"), 0);
}

#[test]
fn normalise_trims_and_collapses_blank_runs() {
    assert_eq!(normalise("a  \r\n\r\n\r\n\tb\t\n", true), "a\n\n\tb\n");
    assert_eq!(normalise("a  \r\n\r\n\r\nb", false), "a\n\n\nb");
    assert_eq!(normalise("", true), "");
}

#[test]
fn every_link_form_is_found_outside_code() {
    let text = "[[A]] [[B|shown]] [[C#h]] [[D^b]] ![[E]] [x](F%20G.md) ![i](img.png)\n\
                `[[not]]` ``[[nor `x` this]]``\n\
                ```\n[[fenced]]\n```\n\
                ~~~~\n[[tilde]]\n~~~\n[[still fenced]]\n~~~~\n\
                [[after]]";
    let found = links_of(text);
    let inners: Vec<&str> = found.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(
        inners,
        ["A", "B|shown", "C#h", "D^b", "E", "x", "i", "after"]
    );
    assert_eq!(found[4].0, RawLinkKind::WikiEmbed);
    assert_eq!(found[5].0, RawLinkKind::Markdown);
    assert_eq!(found[6].0, RawLinkKind::MarkdownEmbed);
}

#[test]
fn unclosed_code_span_is_literal() {
    let found = links_of("a ` b [[x]]\n\nc `` d ` [[y]]");
    assert_eq!(found.len(), 2);
}

#[test]
fn suggestion_sections_are_flagged() {
    let text = "## Notes\n[[a]]\n## Possible connections:\n- [[b]]\n### sub\n[[c]]\n## Next\n[[d]]";
    let st = scan::structure(text);
    let flags: Vec<bool> = scan::links(&st, &["possible connections".to_string()])
        .iter()
        .map(|l| l.in_suggestions)
        .collect();
    assert_eq!(flags, [false, true, true, false]);
}

#[test]
fn headings_in_code_are_not_headings() {
    let st = scan::structure("# Title #\n```\n# not\n```\n## Two ##\n#hashtag\n");
    let titles: Vec<&str> = st.headings.iter().map(|h| st.heading_title(h)).collect();
    assert_eq!(titles, ["Title", "Two"]);
}

#[test]
fn code_block_is_never_split_and_flagged_when_oversized() {
    let mut text = String::from("## Code\n\nIntro paragraph.\n\n```rust\n");
    for k in 0..400 {
        text.push_str(&format!("let value_{k} = compute({k}, \"text\");\n\n"));
    }
    text.push_str("```\n\nAfter the code.\n");
    let planned = plan_of(&text);
    assert_tiles(&text, &planned);
    let fence_start = text.find("```rust").unwrap_or(0);
    let fence_end = text.rfind("```\n").unwrap_or(0) + 4;
    let holder: Vec<_> = planned
        .iter()
        .filter(|p| p.start < fence_end && p.end > fence_start)
        .collect();
    assert_eq!(holder.len(), 1, "one chunk holds the whole code block");
    assert!(holder[0].start <= fence_start && holder[0].end >= fence_end);
    assert!(holder[0].oversized);
    assert_eq!(holder[0].block, Some(plan::BlockKind::Code));
}

#[test]
fn tables_stay_whole_and_lists_split_at_items() {
    let mut text = String::from("| a | b |\n|---|---|\n");
    for k in 0..60 {
        text.push_str(&format!("| row {k} | value number {k} here |\n"));
    }
    text.push('\n');
    for k in 0..120 {
        text.push_str(&format!("- item {k} says something about lists\n"));
    }
    let planned = plan_of(&text);
    assert_tiles(&text, &planned);
    let table_end = text.find("\n\n").unwrap_or(0) + 2;
    assert!(planned.iter().any(|p| p.start == 0 && p.end >= table_end));
    for p in &planned {
        let body = &text[p.start..p.end];
        assert!(
            body.starts_with("| a") || body.starts_with("- item"),
            "{body:?}"
        );
        assert!(p.tokens <= LIMITS.hard_max);
    }
}

#[test]
fn sections_split_at_h2_and_h3() {
    let para = "Words of a paragraph that is long enough to stand alone. ".repeat(25);
    let text = format!("# T\n\n{para}\n\n## A\n\n{para}\n\n### B\n\n{para}\n");
    let planned = plan_of(&text);
    assert_tiles(&text, &planned);
    let starts: Vec<&str> = planned
        .iter()
        .map(|p| &text[p.start..(p.start + 4).min(p.end)])
        .collect();
    assert_eq!(starts, ["# T\n", "## A", "### "]);
    assert_eq!(planned[2].path.len(), 3);
}

#[test]
fn quotes_of_two_lines_are_their_own_chunk() {
    let text = "Para one.\n\n> [!note] Title\n> body line\n\nPara two.\n";
    let planned = plan_of(text);
    assert_tiles(text, &planned);
    assert_eq!(planned.len(), 3);
    assert!(planned[1].own);
}

#[test]
fn overlap_never_starts_inside_code() {
    let mut text = String::new();
    for k in 0..30 {
        text.push_str(&format!(
            "Paragraph {k} with some words in it to count.\n\n"
        ));
        if k % 10 == 9 {
            text.push_str("```\ncode line one\ncode line two\n```\n\n");
        }
    }
    let planned = plan::plan_text(
        &text,
        Limits {
            target_min: 40,
            target_max: 60,
            hard_max: 100,
            min: 10,
        },
        20,
        Encoding::O200kBase.tokenizer(),
    );
    assert_tiles(&text, &planned);
    let st = scan::structure(&text);
    for p in &planned {
        let line = st.lines.partition_point(|l| l.end <= p.overlap_start);
        let inside =
            st.kinds[line] == scan::LineKind::Fence && st.lines[line].start != p.overlap_start;
        assert!(!inside, "overlap starts inside a code block");
    }
}

/// CPU time of this thread: unlike the wall clock, not stretched by other
/// processes on a loaded machine.
fn thread_cpu_time() -> std::time::Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec for the call's duration.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    std::time::Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

#[test]
fn thread_cpu_time_counts_work_not_sleep() {
    let before = thread_cpu_time();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let slept = thread_cpu_time() - before;
    let mut x = 0u64;
    let busy_from = std::time::Instant::now();
    while busy_from.elapsed() < std::time::Duration::from_millis(50) {
        x = std::hint::black_box(x.wrapping_add(1));
    }
    let busy = thread_cpu_time() - before - slept;
    assert!(slept < std::time::Duration::from_millis(100), "{slept:?}");
    assert!(busy > std::time::Duration::ZERO, "{busy:?}");
}

#[test]
fn hostile_inputs_are_linear_and_safe() {
    let tokenizer = Encoding::O200kBase.tokenizer();
    let inputs = [
        "[[".repeat(100_000),
        "`".repeat(100_000),
        "` ".repeat(50_000),
        "[a](".repeat(30_000),
        "![[x|".repeat(30_000),
        (0..2_000)
            .map(|d| format!("{}- item\n", "  ".repeat(d)))
            .collect(),
        ">".repeat(50_000) + "\n" + &"> ```\n".repeat(1000),
        "x".repeat(200_000),
        "| a |\n|---|\n".to_string() + &"| b |\n".repeat(20_000),
    ];
    for text in &inputs {
        let started = thread_cpu_time();
        let st = scan::structure(text);
        let _ = scan::links(&st, &[]);
        let planned = plan::plan(text, &st, LIMITS, 50, tokenizer);
        assert_tiles(text, &planned);
        // Quadratic work on inputs of this size would take minutes.
        assert!(
            (thread_cpu_time() - started).as_secs() < 30,
            "too slow: {:?}",
            &text[..20]
        );
    }
}

#[test]
fn wikilink_parts() {
    let p = scan::split_wiki("Note#Head|shown");
    assert_eq!(
        (p.target, p.heading, p.block, p.display),
        ("Note", Some("Head"), None, Some("shown"))
    );
    let p = scan::split_wiki(" Note #^b1");
    assert_eq!((p.target, p.heading, p.block), ("Note", None, Some("b1")));
    let p = scan::split_wiki("Note^b2");
    assert_eq!((p.target, p.block), ("Note", Some("b2")));
    let p = scan::split_wiki("T1\\|alias");
    assert_eq!((p.target, p.display), ("T1", Some("alias")));
    let p = scan::split_wiki("#");
    assert_eq!((p.target, p.heading), ("", None));
}

#[test]
fn unquote_decodes_ascii_runs_as_python_does() {
    use super::links::unquote;
    assert_eq!(unquote("a%20b"), "a b");
    assert_eq!(unquote("caf%C3%A9"), "café");
    assert_eq!(unquote("%zz%4"), "%zz%4");
    assert_eq!(unquote("%E2%82x"), "\u{fffd}x");
    assert_eq!(unquote("%ED%A0%80"), "\u{fffd}\u{fffd}\u{fffd}");
    assert_eq!(unquote("é%41%"), "éA%");
    assert_eq!(unquote("plain"), "plain");
}

#[test]
fn markdown_targets_are_md_files_without_a_scheme() {
    use super::links::markdown_target;
    let t = markdown_target(" <sub/a%20b.md#Sec%201> ").unwrap();
    assert_eq!(
        (t.target.as_str(), t.heading.as_deref(), t.block),
        ("sub/a b.md", Some("Sec 1"), None)
    );
    let t = markdown_target("x.MD#^blk").unwrap();
    assert_eq!(
        (t.target.as_str(), t.block.as_deref()),
        ("x.MD", Some("blk"))
    );
    assert_eq!(markdown_target("x.md#^").unwrap().block, None);
    assert!(markdown_target("https://e.com/a.md").is_none());
    assert!(markdown_target("#local").is_none());
    assert!(markdown_target("<>").is_none());
    assert!(markdown_target("a.png").is_none());
    assert!(markdown_target("\u{1c}a.md\u{1f}").is_some());
}

#[test]
fn attachment_extensions() {
    use super::links::{extension, is_attachment_extension};
    assert_eq!(extension("dir.v2/pic.png"), Some("png"));
    assert_eq!(extension("dir.v2/note"), None);
    assert!(is_attachment_extension("canvas"));
    assert!(!is_attachment_extension("md"));
}

#[test]
fn limits_must_be_ordered() {
    assert!(Limits::new(250, 400, 700, 100).is_ok());
    assert!(Limits::new(1, 1, 1, 1).is_ok());
    for (a, b, c, d) in [
        (0, 400, 700, 100),
        (250, 400, 700, 0),
        (500, 400, 700, 100),
        (250, 400, 300, 100),
        (250, 400, 700, 401),
    ] {
        let err = Limits::new(a, b, c, d).unwrap_err().to_string();
        assert!(err.contains("need 0 < min"), "{err}");
    }
}

#[test]
fn first_h1_text_skips_code_and_empty_titles() {
    let text = "```\n# not this\n```\n#\n## two\n# One *h*\nbody\n";
    let st = scan::structure(text);
    assert_eq!(scan::first_h1_text(&st), Some("One *h*"));
    assert_eq!(scan::first_h1_text(&scan::structure("no heading\n")), None);
}
