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
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec for the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

/// MB/s of `f` over `docs`: the best of three rounds, each of whole passes
/// over the documents for at least a fifth of a second (the scheduler's
/// account advances in ticks of a few ms: one pass alone is too short).
fn rate(docs: &[String], mut f: impl FnMut(&str) -> usize) -> f64 {
    let bytes: usize = docs.iter().map(|d| d.len()).sum();
    let mut best = 0f64;
    let mut sink = 0;
    for _ in 0..3 {
        let t = cpu_seconds();
        let mut passes = 0;
        while passes == 0 || cpu_seconds() - t < 0.2 {
            for d in docs {
                sink += f(d);
            }
            passes += 1;
        }
        best = best.max((bytes * passes) as f64 / (cpu_seconds() - t) / 1e6);
    }
    std::hint::black_box(sink);
    best
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
            // Pieces by length: 1-2 bytes, front table's, longer; tokens of
            // the longer ones.
            let (mut short, mut front_sized, mut longer, mut longer_tokens) = (0, 0, 0, 0);
            for d in &docs {
                tok.for_each_piece(d, |p| {
                    pieces += 1;
                    match p.len() {
                        0..=2 => short += 1,
                        3..=cache::MAX_FRONT => front_sized += 1,
                        _ => {
                            longer += 1;
                            longer_tokens += tok.vocab.get(p).is_some() as usize;
                        }
                    }
                    if tok.vocab.get(p).is_none() {
                        others.push(p.to_vec())
                    }
                });
            }
            let other_bytes: usize = others.iter().map(|p| p.len()).sum();
            let all_bytes: usize = docs.iter().map(|d| d.len()).sum();
            let merge_share = rate(&docs[..1], |_| {
                others.iter().map(|p| bpe::count(&tok.vocab, p)).sum()
            }) * all_bytes as f64
                / docs[0].len() as f64;
            println!(
                "{folder:5} {:12} {pieces} pieces, {} not tokens ({other_bytes} bytes), merged uncached at {merge_share:.0} MB/s of the whole text",
                enc.name(),
                others.len()
            );
            println!(
                "{folder:5} {:12} pieces of 1-2 bytes {short}, 3-{} bytes {front_sized}, longer {longer} ({longer_tokens} tokens)",
                enc.name(),
                cache::MAX_FRONT
            );
            // The front table's hit rate over two passes (the second as
            // `count` sees it in the rate loop).
            let mut front = cache::PieceCache::new();
            let (mut hits, mut lookups) = (0usize, 0usize);
            for _ in 0..2 {
                (hits, lookups) = (0, 0);
                for d in &docs {
                    tok.for_each_piece(d, |p| {
                        if (3..=cache::MAX_FRONT).contains(&p.len()) {
                            let key = cache::FrontKey::of(p);
                            lookups += 1;
                            if front.front_get(&key).is_some() {
                                hits += 1;
                            } else {
                                front.front_put(key, 1);
                            }
                        }
                    });
                }
            }
            println!(
                "{folder:5} {:12} front table: {lookups} lookups a pass ({:.1}% of the pieces), {:.1}% hits",
                enc.name(),
                100.0 * lookups as f64 / pieces as f64,
                100.0 * hits as f64 / lookups.max(1) as f64
            );
            let count = rate(&docs, |d| tok.count(d));
            println!(
                "{folder:5} {:12} split {split:7.1} MB/s, +hash {hashed:7.1}, +lookup {whole:7.1}, count {count:7.1}",
                enc.name()
            );
        }
    }
}
