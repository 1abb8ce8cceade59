"""Regenerate ``samples/``: the documents ``make demo`` ingests and embeds.

They are the documentation of a few Python standard-library modules, as
pydoc renders it from the modules' own docstrings (Python Software
Foundation License, which allows redistribution with its notice, shipped
as ``samples/LICENSE-PSF.txt``), in the three kinds of document the chunker
knows: pydoc's HTML pages, its plain-text pages, and Markdown guides with
YAML front matter built from the same docstrings. Run with the Python the
samples should describe (the committed ones come from CPython 3.11):

    python scripts/build_samples.py
"""

from __future__ import annotations

import importlib
import inspect
import pydoc
import shutil
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent / "samples"
HTML = (
    "subprocess",
    "tarfile",
    "shutil",
    "argparse",
    "sched",
    "logging",
    "configparser",
    "http.client",
    "email.message",
    "threading",
)
TEXT = (
    "zipfile",
    "difflib",
    "csv",
    "json",
    "fileinput",
    "pathlib",
    "datetime",
    "calendar",
    "tempfile",
    "glob",
    "pickle",
    "sqlite3",
    "urllib.parse",
)
GUIDES = (
    "secrets",
    "heapq",
    "bisect",
    "textwrap",
    "gzip",
    "statistics",
    "uuid",
    "fnmatch",
    "random",
    "string",
    "hmac",
    "base64",
    "queue",
    "graphlib",
    "fractions",
    "timeit",
    "shlex",
    "getopt",
    "locale",
    "gettext",
)

# The small set shipped in the package for `fastnotebook demo` after a pip
# install (a test checks that it equals its originals here).
PACKAGED = ROOT.parent / "python" / "fastnotebook" / "app" / "cli" / "demo_samples"
PACKAGED_FILES = (
    "LICENSE-PSF.txt",
    "python-docs/html/subprocess.html",
    "python-docs/text/difflib.txt",
    "python-docs/text/zipfile.txt",
    *(f"python-docs/guides/{name}.md" for name in GUIDES),
)


def _members(module: ModuleType) -> list[tuple[str, object]]:
    public = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    members = []
    for name in sorted(public):
        value = getattr(module, name, None)
        home = getattr(value, "__module__", None)
        defined_here = home in (module.__name__, "_" + module.__name__)
        if (inspect.isroutine(value) or inspect.isclass(value)) and defined_here:
            members.append((name, value))
    return members


def guide(module: ModuleType) -> str:
    """A Markdown page with front matter: the module's and its members' docstrings."""
    doc = inspect.getdoc(module) or ""
    synopsis = doc.splitlines()[0] if doc else module.__name__
    lines = [
        "---",
        f"title: 'The {module.__name__} module: {synopsis.rstrip('.')}'",
        f"module: {module.__name__}",
        f"python: '{sys.version_info.major}.{sys.version_info.minor}'",
        "source: pydoc (docstrings of the Python standard library)",
        "license: PSF-2.0",
        f"tags: [python, stdlib, {module.__name__}]",
        "---",
        f"# {module.__name__}",
        "",
        doc,
        "",
    ]
    for name, value in _members(module):
        kind = "class" if inspect.isclass(value) else "function"
        try:
            signature = str(inspect.signature(value))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            signature = "(...)"
        lines += [f"## {kind} `{name}{signature}`", "", inspect.getdoc(value) or "", ""]
        if inspect.isclass(value):
            for method, function in inspect.getmembers(value, inspect.isroutine):
                if method.startswith("_") or not inspect.getdoc(function):
                    continue
                lines += [f"### `{name}.{method}`", "", inspect.getdoc(function) or "", ""]
    return "\n".join(lines).rstrip() + "\n"


def main() -> None:
    docs = ROOT / "python-docs"
    if docs.exists():
        shutil.rmtree(docs)
    for folder in ("html", "text", "guides"):
        (docs / folder).mkdir(parents=True)
    html, text = pydoc.HTMLDoc(), pydoc.TextDoc()
    for name in HTML:
        module = importlib.import_module(name)
        page = html.page(pydoc.describe(module), html.document(module))
        (docs / "html" / f"{name}.html").write_text(page, encoding="utf-8")
    for name in TEXT:
        module = importlib.import_module(name)
        rendered = pydoc.plain(text.document(module))
        (docs / "text" / f"{name}.txt").write_text(rendered, encoding="utf-8")
    for name in GUIDES:
        module = importlib.import_module(name)
        (docs / "guides" / f"{name}.md").write_text(guide(module), encoding="utf-8")
    license_file = Path(inspect.getfile(inspect)).parent / "LICENSE.txt"
    shutil.copyfile(license_file, ROOT / "LICENSE-PSF.txt")
    if PACKAGED.exists():
        shutil.rmtree(PACKAGED)
    for name in PACKAGED_FILES:
        (PACKAGED / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, PACKAGED / name)
    total = sum(p.stat().st_size for p in docs.rglob("*") if p.is_file())
    print(f"wrote {sum(1 for p in docs.rglob('*') if p.is_file())} files, {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
