"""How much of ``chunk_text``'s time is CPython making the chunk strings.

For each content type, the time of ``chunk_text`` over the corpus against the
time of making the same strings by slicing them, one after the other, out of a
string of the document's width (its chunks joined): the allocation, copying,
width check and freeing that any chunker returning ``str`` pays, with no
splitting at all. Best of N passes each, interleaved.

``--langchain`` adds the same floor for ``fastnotebook.langchain``'s
``RecursiveCharacterTextSplitter`` and ``CharacterTextSplitter`` (1000/200,
the benchmark's settings) over the whole corpus, with LangChain's own
``split_text`` timed in the same rounds: LangChain's time over the slicing
time is the largest speed-up any splitter returning these strings can show.

    python benches/bench_string_floor.py [--corpus DIR] [--passes N] [--langchain]
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Callable
from pathlib import Path

from loguru import logger

from fastnotebook import chunking
from fastnotebook.bench import corpus


def best_ms(job: Callable[[], object], passes: int) -> float:
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        job()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def chunking_job(texts: list[str], content_type: chunking.ContentType) -> Callable[[], object]:
    def job() -> object:
        return [chunking.chunk_text(t, content_type) for t in texts]

    return job


def slicing_job(texts: list[str], chunks: list[list[str]]) -> Callable[[], object]:
    """Slices the chunks of each text out of one string holding them, widened
    to the text's width (a character of that width appended) so that each
    slice pays the width check the text's own slices would."""
    sources: list[tuple[str, list[tuple[int, int]]]] = []
    for text, text_chunks in zip(texts, chunks, strict=True):
        widest = max(map(ord, text), default=0)
        joined = "".join(text_chunks) + (chr(widest) if widest >= 0x80 else "")
        spans, at = [], 0
        for chunk in text_chunks:
            spans.append((at, at + len(chunk)))
            at += len(chunk)
        sources.append((joined, spans))

    def job() -> object:
        return [[joined[a:b] for a, b in spans] for joined, spans in sources]

    return job


def langchain_floor(texts: list[str], passes: int) -> None:
    """LangChain's split_text, ours and the slicing floor, per class."""
    import langchain_text_splitters as lc

    from fastnotebook import langchain as fast

    settings = {"chunk_size": 1000, "chunk_overlap": 200}
    classes = {
        "RecursiveCharacterTextSplitter": {},
        "CharacterTextSplitter": {"separator": "\n\n"},
    }
    for name, extra in classes.items():
        theirs = getattr(lc, name)(**settings, **extra)
        ours = getattr(fast, name)(**settings, **extra)
        chunks = [ours.split_text(t) for t in texts]

        def split(splitter: object) -> Callable[[], object]:
            method = splitter.split_text  # type: ignore[attr-defined]
            return lambda: [method(t) for t in texts]

        jobs = {
            "langchain": split(theirs),
            "fastnotebook": split(ours),
            "slicing": slicing_job(texts, chunks),
        }
        best = dict.fromkeys(jobs, float("inf"))
        for _ in range(3):
            for job_name, job in jobs.items():
                best[job_name] = min(best[job_name], best_ms(job, passes))
        print(
            f"{name}: langchain {best['langchain']:7.2f} ms, fastnotebook "
            f"{best['fastnotebook']:6.2f} ms ({best['langchain'] / best['fastnotebook']:.1f}x), "
            f"the same {sum(map(len, chunks))} strings by slicing {best['slicing']:6.2f} ms "
            f"(at most {best['langchain'] / best['slicing']:.1f}x)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--passes", type=int, default=21)
    parser.add_argument("--langchain", action="store_true", help="add the LangChain floor")
    args = parser.parse_args()
    logger.remove()
    docs = corpus.load(args.corpus) if args.corpus else corpus.default()
    for kind in corpus.KINDS:
        texts = [d.text for d in docs.by_kind(kind)]
        if not texts:
            continue
        content_type = chunking.ContentType(kind)
        chunks = [chunking.chunk_text(t, content_type) for t in texts]
        chunking_pass, slicing = chunking_job(texts, content_type), slicing_job(texts, chunks)
        chunk_ms, slice_ms = float("inf"), float("inf")
        for _ in range(3):
            chunk_ms = min(chunk_ms, best_ms(chunking_pass, args.passes))
            slice_ms = min(slice_ms, best_ms(slicing, args.passes))
        count = sum(map(len, chunks))
        print(
            f"{kind:8} chunk_text {chunk_ms:6.2f} ms a pass; the same {count} strings "
            f"by slicing {slice_ms:6.2f} ms ({slice_ms / chunk_ms:.0%})"
        )
    if args.langchain:
        # LangChain warns on stderr for each chunk over the size.
        logging.disable(logging.WARNING)
        langchain_floor([d.text for d in docs.documents], max(3, args.passes // 4))


if __name__ == "__main__":
    main()
