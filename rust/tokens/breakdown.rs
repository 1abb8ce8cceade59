//! Where the time of `count` goes, stage by stage, on a folder of documents:
//! `FASTNOTEBOOK_CORPUS=../shared/corpus cargo test --release --lib
//! tokens::breakdown -- --ignored --nocapture` (see docs/performance.md).

use super::*;

fn docs(folder: &str) -> Vec<String> {
    let root = std::env::var("FASTNOTEBOOK_CORPUS").unwrap_or_else(|_| "../shared/corpus".into());
    let mut paths: Vec<_> = std::fs::read_dir(format!("{root}/{folder}"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    paths.sort();
    paths
        .iter()
        .filter_map(|p| std::fs::read(p).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect()
}

/// Seconds this thread has run on a CPU (from the scheduler's own account):
/// on a shared machine, wall time also counts the time other processes had
/// the core.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e9)
}

fn rate(docs: &[String], mut f: impl FnMut(&str) -> usize) -> f64 {
    let bytes: usize = docs.iter().map(|d| d.len()).sum();
    let mut best = f64::INFINITY;
    let mut sink = 0;
    for _ in 0..5 {
        let t = cpu_seconds();
        for d in docs {
            sink += f(d);
        }
        best = best.min(cpu_seconds() - t);
    }
    std::hint::black_box(sink);
    bytes as f64 / best / 1e6
}

#[test]
#[ignore = "a measurement, not a test: run with --ignored --nocapture"]
fn breakdown() {
    for folder in ["html", "md", "txt"] {
        let docs = docs(folder);
        if docs.is_empty() {
            continue;
        }
        for enc in Encoding::ALL {
            let tok = enc.tokenizer();
            let t = classes::table();
            let split = rate(&docs, |d| {
                let b = d.as_bytes();
                let mut i = 0;
                let mut n = 0;
                while i < b.len() {
                    i = match enc {
                        Encoding::O200kBase => pretokenize::o200k_next(t, b, i),
                        Encoding::Cl100kBase => pretokenize::cl100k_next(t, b, i),
                    };
                    n += 1;
                }
                n
            });
            let hashed = rate(&docs, |d| {
                let mut n = 0u64;
                tok.for_each_piece(d, |p| {
                    if p.len() >= 3 {
                        n ^= vocab::hash(p)
                    }
                });
                n as usize
            });
            let whole = rate(&docs, |d| {
                let mut n = 0;
                tok.for_each_piece(d, |p| n += tok.vocab.get(p).is_some() as usize);
                n
            });
            // The pieces that are not tokens, merged without the cache.
            let mut others: Vec<Vec<u8>> = Vec::new();
            let mut pieces = 0usize;
            for d in &docs {
                tok.for_each_piece(d, |p| {
                    pieces += 1;
                    if tok.vocab.get(p).is_none() {
                        others.push(p.to_vec())
                    }
                });
            }
            let other_bytes: usize = others.iter().map(|p| p.len()).sum();
            let all_bytes: usize = docs.iter().map(|d| d.len()).sum();
            let mut best = f64::INFINITY;
            for _ in 0..5 {
                let t = cpu_seconds();
                let mut sink = 0;
                for p in &others {
                    sink += bpe::count(&tok.vocab, p);
                }
                std::hint::black_box(sink);
                best = best.min(cpu_seconds() - t);
            }
            let merge_share = all_bytes as f64 / 1e6 / best;
            println!(
                "{folder:5} {:12} {pieces} pieces, {} not tokens ({other_bytes} bytes), merged uncached at {merge_share:.0} MB/s of the whole text",
                enc.name(),
                others.len()
            );
            let count = rate(&docs, |d| tok.count(d));
            println!(
                "{folder:5} {:12} split {split:7.1} MB/s, +hash {hashed:7.1}, +lookup {whole:7.1}, count {count:7.1}",
                enc.name()
            );
        }
    }
}
