"""Ray is optional: nothing imports it unless the Ray engine runs, and without
it the engine fails in one line naming the extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fastnotebook.app.pipeline import ray_engine
from fastnotebook.errors import ConfigurationError


def test_the_application_does_not_import_ray() -> None:
    code = (
        "import sys\n"
        "import fastnotebook.app.cli, fastnotebook.app.pipeline, fastnotebook.app.api\n"
        "from fastnotebook.app.cli import build_parser\n"
        "build_parser().parse_args(['embed', '--engine', 'ray'])\n"
        "import fastnotebook.app.pipeline.ray_engine\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith(('ray.', 'pyarrow'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_without_ray_the_engine_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'fastnotebook\[ray\]'"):
        ray_engine.require_ray()


def test_without_ray_the_command_is_one_line(tmp_path: Path) -> None:
    # A site directory whose `ray` cannot be imported, first on the path.
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "__init__.py").write_text("raise ImportError('no ray here', name='ray')\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fastnotebook",
            "embed",
            "--engine",
            "ray",
            "--input",
            str(tmp_path),
            "--parquet",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={
            "PYTHONPATH": str(tmp_path),
            "PATH": "/usr/bin:/bin",
            "FASTNOTEBOOK_EMBEDDING_PROVIDER": "fastnotebook-fake",
        },
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'fastnotebook[ray]'" in lines[0], done.stderr
