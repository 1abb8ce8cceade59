"""Open Notebook's own test suite, as is and with fastnotebook swapped in.

Copies an Open Notebook checkout twice into a temporary folder, runs
``fastnotebook patch-open-notebook`` on the second copy, runs ``pytest tests``
in each (with an interpreter that has Open Notebook's dependencies and
fastnotebook installed), and compares: every test that passes on the original
must pass swapped. A regression is reported with the test's id and the
module it points at (the ``fastnotebook.open_notebook`` module in its
traceback, else the ``open_notebook.utils`` modules its file uses).

    python scripts/open_notebook_suite.py --src /path/to/open-notebook \\
        --python /path/to/venv/bin/python [--json out.json]

``--src`` defaults to ``FASTNOTEBOOK_OPEN_NOTEBOOK_SRC``, ``--python`` to
``FASTNOTEBOOK_OPEN_NOTEBOOK_PYTHON`` (else this interpreter). Both runs get
the same environment, with tiktoken's cache pointed at a folder holding the
``o200k_base`` vocabulary (found offline, as ``fastnotebook.bench.reference``
finds it), so that the original counts tokens with tiktoken rather than its
offline word-count estimate. Exit code 0 when nothing regressed, 1 otherwise,
2 when the suite could not be run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fastnotebook.open_notebook import MODULES
from fastnotebook.open_notebook.patch import PatchError, patch_open_notebook

SRC_ENV = "FASTNOTEBOOK_OPEN_NOTEBOOK_SRC"
PYTHON_ENV = "FASTNOTEBOOK_OPEN_NOTEBOOK_PYTHON"
#: tiktoken's download address for the vocabulary; its cache file is named by
#: the SHA-1 of this string.
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
#: Folders a checkout may hold that the tests never read.
SKIPPED_DIRS = {".git", "node_modules", ".venv", "__pycache__"}
RUN_TIMEOUT_SECONDS = 1200


class SuiteError(Exception):
    """The suite could not be run (not a test failure)."""


@dataclass
class Regression:
    test: str
    outcome: str
    modules: list[str]
    message: str


@dataclass
class Comparison:
    original: dict[str, int]
    swapped: dict[str, int]
    regressions: list[Regression] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.regressions

    def summary(self) -> str:
        def counts(c: dict[str, int]) -> str:
            return ", ".join(f"{n} {k}" for k, n in sorted(c.items()))

        lines = [
            f"original: {counts(self.original)}",
            f"swapped:  {counts(self.swapped)}",
        ]
        for r in self.regressions:
            lines.append(
                f"REGRESSION {r.test} [{', '.join(r.modules) or 'module unknown'}]: "
                f"{r.outcome}: {r.message}"
            )
        for test in self.fixed:
            lines.append(f"passes only swapped: {test}")
        return "\n".join(lines)


def tiktoken_cache(folder: Path) -> Path:
    """A tiktoken cache folder holding ``o200k_base`` under the name tiktoken
    looks for."""
    from fastnotebook.bench.reference import _vocabulary_file

    folder.mkdir(parents=True, exist_ok=True)
    target = folder / hashlib.sha1(O200K_URL.encode()).hexdigest()
    shutil.copyfile(_vocabulary_file("o200k_base"), target)
    return folder


def copy_tree(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, ignore=lambda _d, names: [n for n in names if n in SKIPPED_DIRS])
    return dest


def check_interpreter(python: str) -> None:
    probe = "import fastnotebook.open_notebook, langchain_text_splitters, pytest, pytest_asyncio"
    try:
        done = subprocess.run([python, "-c", probe], capture_output=True, text=True)
    except OSError as e:
        raise SuiteError(f"{python} cannot run the suite: {e.strerror}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        raise SuiteError(
            f"{python} cannot run the suite (needs Open Notebook's dependencies, pytest, "
            f"pytest-asyncio and fastnotebook): {last}"
        )


def check_swapped(python: str, tree: Path, env: dict[str, str]) -> None:
    """Each ``open_notebook.utils.<name>`` of the patched tree must be
    fastnotebook's module."""
    probe = (
        "import importlib\n"
        f"for name in {list(MODULES)!r}:\n"
        "    m = importlib.import_module('open_notebook.utils.' + name)\n"
        "    assert m.__name__ == 'fastnotebook.open_notebook.' + name, (name, m.__name__)\n"
    )
    done = subprocess.run([python, "-c", probe], cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SuiteError(f"the swap is not in effect in {tree}: {done.stderr.strip()[-500:]}")


def run_pytest(
    python: str, tree: Path, env: dict[str, str], report: Path
) -> dict[str, tuple[str, str]]:
    """Runs ``pytest tests`` in ``tree``: test id -> (outcome, message)."""
    command = [
        python,
        "-m",
        "pytest",
        "tests",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--junitxml={report}",
        "-o",
        "junit_family=xunit1",
    ]
    try:
        subprocess.run(
            command,
            cwd=tree,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=RUN_TIMEOUT_SECONDS,
        )
    except subprocess.TimeoutExpired:
        raise SuiteError(f"pytest in {tree} took over {RUN_TIMEOUT_SECONDS} s") from None
    if not report.is_file():
        raise SuiteError(f"pytest in {tree} wrote no report (did it start?)")
    return parse_junit(report)


def parse_junit(report: Path) -> dict[str, tuple[str, str]]:
    results: dict[str, tuple[str, str]] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        file = case.get("file") or case.get("classname", "").replace(".", "/") + ".py"
        classname = case.get("classname", "")
        parts = [file]
        # classname is "tests.test_x.TestClass" (or "tests.test_x" for functions).
        module_path = file[:-3].replace("/", ".") if file.endswith(".py") else ""
        if classname and module_path and classname.startswith(module_path + "."):
            parts.append(classname[len(module_path) + 1 :])
        parts.append(case.get("name", "?"))
        test = "::".join(parts)
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                message = ((child.get("message") or "") + "\n" + (child.text or "")).strip()
                break
        if case.get("name") == "" and outcome == "passed":
            continue
        # A collection error is a testcase with an error and no real name.
        results[test] = (outcome, message)
    return results


def modules_of(test: str, message: str, tree: Path) -> list[str]:
    """The mirrored modules a failing test points at: those in its
    traceback, else those its test file refers to."""
    named = re.findall(r"fastnotebook/open_notebook/(\w+)\.py", message)
    found = [m for m in MODULES if m in named]
    if found:
        return [f"fastnotebook.open_notebook.{m}" for m in found]
    try:
        source = (tree / test.split("::")[0]).read_text(encoding="utf-8")
    except OSError:
        return []
    return [f"open_notebook.utils.{m}" for m in MODULES if f"utils.{m}" in source]


def counts(results: dict[str, tuple[str, str]]) -> dict[str, int]:
    tally: dict[str, int] = {}
    for outcome, _ in results.values():
        tally[outcome] = tally.get(outcome, 0) + 1
    return tally


def compare(src: Path, python: str, workdir: Path) -> Comparison:
    if not (src / "open_notebook" / "utils").is_dir() or not (src / "tests").is_dir():
        raise SuiteError(f"{src} is not an Open Notebook checkout (open_notebook/utils, tests)")
    check_interpreter(python)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPEN_NOTEBOOK_CHUNK")}
    env.pop("OPEN_NOTEBOOK_MIN_CHUNK_SIZE", None)
    env.pop("OPEN_NOTEBOOK_EMBEDDING_BATCH_SIZE", None)
    env.pop("PYTHONPATH", None)
    env["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache(workdir / "tiktoken-cache"))
    original = copy_tree(src, workdir / "original")
    swapped = copy_tree(src, workdir / "swapped")
    try:
        patch_open_notebook(swapped)
    except PatchError as e:
        raise SuiteError("patch-open-notebook refused the tree:\n" + str(e)) from None
    check_swapped(python, swapped, env)
    before = run_pytest(python, original, env, workdir / "original.xml")
    after = run_pytest(python, swapped, env, workdir / "swapped.xml")
    result = Comparison(counts(before), counts(after))
    for test, (outcome, _) in sorted(before.items()):
        if outcome != "passed":
            continue
        now, message = after.get(test, ("missing", "not run on the swapped tree"))
        if now != "passed":
            first = message.strip().splitlines()[0] if message.strip() else ""
            result.regressions.append(
                Regression(test, now, modules_of(test, message, swapped), first[:300])
            )
    result.fixed = sorted(
        t for t, (o, _) in after.items() if o == "passed" and before.get(t, ("",))[0] != "passed"
    )
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=os.environ.get(SRC_ENV), help=f"checkout (${SRC_ENV})")
    parser.add_argument(
        "--python",
        default=os.environ.get(PYTHON_ENV, sys.executable),
        help=f"interpreter with Open Notebook's dependencies (${PYTHON_ENV})",
    )
    parser.add_argument("--json", help="write the comparison here as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copies")
    args = parser.parse_args(argv)
    if not args.src:
        print(f"no checkout: pass --src or set {SRC_ENV}", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="open-notebook-suite-"))
    try:
        result = compare(Path(args.src), args.python, workdir)
    except SuiteError as e:
        print(f"open_notebook_suite: {e}", file=sys.stderr)
        return 2
    finally:
        if args.keep:
            print(f"copies kept in {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print(result.summary())
    if args.json:
        data = asdict(result)
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
