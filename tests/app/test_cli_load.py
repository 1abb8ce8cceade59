"""Concurrent commands on one embedded database, and the process exit that
once aborted them.

The ``surrealdb`` package's native module keeps tokio worker threads that may
take the GIL while the interpreter shuts down; CPython ends such a thread
with ``pthread_exit``, and the forced unwind through Rust aborts the process
("panic in a function that cannot unwind", SIGABRT) after its work is done
(docs/ROBUSTNESS.md). The command line ends with ``os._exit`` once its
output is flushed, so that shutdown never runs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from helpers.cli import FAKE, cli
from helpers.pipeline import write_corpus

COMMANDS = [
    ["embed", "--quiet", "--rebuild", "all"],
    ["search", "topic1 detail", "-k", "2"],
    ["sources", "list"],
    ["search", "topic2 detail"],
]


def test_concurrent_commands_on_one_database_end_cleanly(tmp_path: Path) -> None:
    write_corpus(tmp_path / "corpus", documents=6, paragraphs=3)
    data = tmp_path / "data"
    assert cli("ingest", str(tmp_path / "corpus"), "-q", data_dir=data).returncode == 0
    assert cli("embed", "-q", data_dir=data).returncode == 0
    runs = []
    with ThreadPoolExecutor(len(COMMANDS)) as pool:
        for _ in range(2):
            runs += list(pool.map(lambda args: cli(*args, data_dir=data), COMMANDS))
    for run in runs:
        assert "panicked" not in run.stderr and "Traceback" not in run.stderr, run.stderr
        assert run.returncode in (0, 1), (run.args, run.returncode, run.stderr)
        if run.returncode == 1:
            # The one failure a second process may meet: the store's lock.
            (line,) = run.stderr.strip().splitlines()
            assert "is in use by another process (pid " in line, line
    assert sum(run.returncode == 0 for run in runs) >= 2
    final = cli("embed", "-q", data_dir=data)
    assert (final.returncode, final.stderr) == (0, "")


# An embedded database left open when the process ends: the case
# that aborted 3 of 24 such processes when they shut down normally (none of 24
# through exit_now): twelve runs catch a regression four times in five.
ENDING = """
import asyncio, sys
from surrealdb import AsyncSurreal
from fastnotebook.app.cli import exit_now

async def main() -> None:
    db = AsyncSurreal("mem://")
    await db.connect()
    await db.use("a", "b")
    for i in range(30):
        await db.query_raw("CREATE t CONTENT {x: $s};", {"s": "abc" * 100})
    await db.query_raw("SELECT * FROM t;")

asyncio.run(main())
print("done")
exit_now(0)
"""


def test_the_command_line_exit_skips_the_shutdown_that_aborted() -> None:
    def one(_: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(ENDING)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**FAKE, "PATH": "/usr/bin:/bin"},
            check=False,
        )

    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(one, range(12)))
    for run in runs:
        assert (run.returncode, run.stdout, run.stderr) == (0, "done\n", ""), run.stderr
