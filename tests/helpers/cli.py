"""The ``fastnotebook`` command line in a subprocess, with the zero-cost fake
model, and the summary tables it prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FAKE = {
    "FASTNOTEBOOK_EMBEDDING_PROVIDER": "fastnotebook-fake",
    "FASTNOTEBOOK_EMBEDDING_CONFIG": json.dumps({"dimension": 16, "delay": 0.005}),
    "FASTNOTEBOOK_FULL_TEXT_SEARCH": "0",
}


def environment(**env: str) -> dict[str, str]:
    """This process's environment with the fake model and ``env``, and no
    database, fault or data folder of its own unless ``env`` sets them."""
    chosen = {**os.environ, **FAKE, **env}
    for name in ("SURREAL_URL", "FASTNOTEBOOK_FAULT", "FASTNOTEBOOK_DATA_DIR"):
        if name not in env:
            chosen.pop(name, None)
    return chosen


def cli(*args: str, data_dir: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "fastnotebook", *args]
    if data_dir is not None:
        command += ["--data-dir", str(data_dir)]
    return subprocess.run(
        command, env=environment(**env), capture_output=True, text=True, timeout=300, check=False
    )


def row(output: str, label: str) -> list[str]:
    """The cells of the summary table's row ``label``."""
    for line in output.splitlines():
        cells = line.split()
        if cells and cells[0] == label:
            return cells[1:]
    raise AssertionError(f"no row {label!r} in:\n{output}")
