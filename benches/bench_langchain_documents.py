"""The cost of one LangChain ``Document`` by each route ``fastnotebook.langchain``
could take: the core's copy of a template instance (what it uses), pydantic's
``model_construct`` and the ``Document(...)`` constructor, each called per
document. Best of ``--repeats`` runs, the garbage collector off (a collection
in the middle of a run would be timed, not the route).

    python benches/bench_langchain_documents.py [--documents N] [--repeats N]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

from langchain_core.documents import Document

from fastnotebook import _core
from fastnotebook.langchain import _TEMPLATE


def best(run: Callable[[], Any], repeats: int) -> float:
    """The shortest of ``repeats`` timings of ``run`` in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    n: int = args.documents
    sections = [(f"chunk number {i} " * 3, {"h1": "title"}) for i in range(n)]
    construct = Document.model_construct
    routes: dict[str, Callable[[], Any]] = {
        "core (template copy)": lambda: _core.langchain_section_documents(_TEMPLATE, sections),
        "Document.model_construct": lambda: [
            construct(page_content=c, metadata=m) for c, m in sections
        ],
        "Document(page_content=, metadata=)": lambda: [
            Document(page_content=c, metadata=m) for c, m in sections
        ],
    }
    gc.disable()
    try:
        for name, run in routes.items():
            seconds = best(run, args.repeats)
            print(f"{name:36s} {seconds * 1e3:8.1f} ms {seconds / n * 1e9:7.0f} ns/document")
    finally:
        gc.enable()


if __name__ == "__main__":
    main()
