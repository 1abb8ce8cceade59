"""``fastnotebook patch-open-notebook PATH [--undo]``: swap fastnotebook's
modules into an Open Notebook tree, or put the originals back.

Patching replaces exactly six files, ``open_notebook/utils/{chunking,
token_utils, embedding, text_utils, version_utils, context_builder}.py``, each
by a one-line alias module that makes ``open_notebook.utils.<name>`` *be*
``fastnotebook.open_notebook.<name>``. The originals are kept in
``open_notebook/utils/.fastnotebook-originals/`` (with a manifest of their
SHA-256), from which ``--undo`` restores them and which it then removes.
Nothing else in the tree is read or written.

The command refuses (exit code 2, one line per problem, nothing written) a
folder that is not an Open Notebook tree, and one whose six files are not the
versions fastnotebook.open_notebook mirrors (:data:`KNOWN_ORIGINALS`): a
module that changed upstream may have a contract the mirror does not keep.
PATH is the checkout (or image folder such as ``/app``) holding
``open_notebook/``, or the ``open_notebook`` package folder itself.

Without the ``app`` extra (whose command line this is), the same command is
``python -m fastnotebook.open_notebook.patch PATH [--undo]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastnotebook.open_notebook import MODULES

__all__ = [
    "BACKUP_DIR",
    "KNOWN_ORIGINALS",
    "PatchError",
    "add_command",
    "alias_source",
    "main",
    "patch_open_notebook",
    "run",
    "undo_patch",
]

#: The Open Notebook versions mirrored, by module: SHA-256 of the file's bytes
#: (with CRLF line ends read as LF) -> the release it comes from.
KNOWN_ORIGINALS: dict[str, dict[str, str]] = {
    "chunking": {
        "8a5e4b633cd8eeb739596aa53b1cf7d10f8e275269453d1c87da9e867b937af7": "1.14.0 (206d77ca)",
    },
    "token_utils": {
        "d9f4d1f6865a1dad0953c9024ff29164e25e1b36a48318cd99e109330744be5b": "1.14.0 (206d77ca)",
    },
    "embedding": {
        "3d757f364fb33287a46eed46d00f14d24bbaccf22bb7dfa690150b9c65bd4ecb": "1.14.0 (206d77ca)",
    },
    "text_utils": {
        "7f3df4a2081904675bbda10c556aebb7c1b1f7cb7f622115fb734ccc63bef1d9": "1.14.0 (206d77ca)",
    },
    "version_utils": {
        "80b0edec908cf38611f815013391f6b55061ca3fbb438a21559035e1b84e7b82": "1.14.0 (206d77ca)",
    },
    "context_builder": {
        "1d9710465864ed47f593c1f9dd0be0532a00a72b60ec57f427f3dc3a901d0b06": "1.14.0 (206d77ca)",
    },
}

BACKUP_DIR = ".fastnotebook-originals"
MANIFEST = "manifest.json"
_ALIAS_MARK = "# fastnotebook patch-open-notebook:"


def alias_source(name: str) -> str:
    """The alias module written in place of ``open_notebook/utils/<name>.py``."""
    return (
        f"{_ALIAS_MARK} this module is fastnotebook.open_notebook.{name} "
        "(`fastnotebook patch-open-notebook --undo` restores the original)\n"
        "import sys, importlib; "
        f'sys.modules[__name__] = importlib.import_module("fastnotebook.open_notebook.{name}")\n'
    )


class PatchError(Exception):
    """The tree is not one this command patches or restores; ``problems``
    holds one line for each reason."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def _digest(data: bytes) -> str:
    return hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


def _utils_dir(path: Path) -> Path:
    """``open_notebook/utils`` of the tree at ``path``, or PatchError."""
    if not path.is_dir():
        raise PatchError([f"{path}: not a folder"])
    for package in (path / "open_notebook", path):
        if package.name == "open_notebook" and (package / "__init__.py").is_file():
            utils = package / "utils"
            if (utils / "__init__.py").is_file():
                return utils
            raise PatchError([f"{package}: an open_notebook package without utils/__init__.py"])
    raise PatchError(
        [
            f"{path}: not an Open Notebook tree "
            "(expected open_notebook/__init__.py and open_notebook/utils/ in it)"
        ]
    )


@dataclass
class _Survey:
    """What each of the six files is: an original fastnotebook mirrors, the
    alias, or something else (a problem)."""

    utils: Path
    originals: dict[str, bytes] = field(default_factory=dict)
    aliased: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _survey(path: Path) -> _Survey:
    survey = _Survey(_utils_dir(path))
    for name in MODULES:
        file = survey.utils / f"{name}.py"
        shown = f"open_notebook/utils/{name}.py"
        if not file.is_file():
            survey.problems.append(f"{shown}: missing")
            continue
        data = file.read_bytes()
        if data.decode("utf-8", "replace") == alias_source(name):
            survey.aliased.append(name)
        elif _digest(data) in KNOWN_ORIGINALS[name]:
            survey.originals[name] = data
        else:
            known = ", ".join(sorted(set(KNOWN_ORIGINALS[name].values())))
            survey.problems.append(
                f"{shown}: sha256 {_digest(data)[:12]} is not a version "
                f"fastnotebook.open_notebook.{name} mirrors (known: Open Notebook {known})"
            )
    return survey


def _write(file: Path, data: bytes) -> None:
    """Replace ``file`` with ``data`` atomically, keeping its permissions."""
    mode = file.stat().st_mode if file.exists() else None
    fd, temp = tempfile.mkstemp(dir=file.parent, prefix=f".{file.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, file)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _read_manifest(backup: Path) -> dict[str, Any]:
    try:
        manifest: dict[str, Any] = json.loads((backup / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise PatchError([f"{backup / MANIFEST}: unreadable ({e})"]) from None
    return manifest


def patch_open_notebook(path: Path) -> list[str]:
    """Swap the six modules of the tree at ``path``; returns the names
    swapped now (empty if all already were). Raises PatchError, having
    written nothing, when the tree is not one to patch."""
    survey = _survey(path)
    backup = survey.utils / BACKUP_DIR
    if survey.aliased and not (backup / MANIFEST).is_file():
        survey.problems.append(
            f"open_notebook/utils/{BACKUP_DIR}/{MANIFEST}: missing, but "
            f"{', '.join(survey.aliased)} already swapped (originals unknown)"
        )
    if survey.problems:
        raise PatchError(survey.problems)
    if not survey.originals:
        return []
    backup.mkdir(exist_ok=True)
    manifest = _read_manifest(backup) if (backup / MANIFEST).is_file() else {"originals": {}}
    for name, data in survey.originals.items():
        _write(backup / f"{name}.py.orig", data)
        manifest["originals"][name] = _digest(data)
    _write(backup / MANIFEST, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())
    for name in survey.originals:
        _write(survey.utils / f"{name}.py", alias_source(name).encode())
    return sorted(survey.originals, key=MODULES.index)


def undo_patch(path: Path) -> list[str]:
    """Put the originals back in the tree at ``path`` and remove the backup;
    returns the names restored (empty if none was swapped). Raises
    PatchError, having written nothing, when a file or the backup is not
    as the patch left it."""
    survey = _survey(path)
    backup = survey.utils / BACKUP_DIR
    restore: dict[str, bytes] = {}
    if survey.aliased:
        manifest = _read_manifest(backup).get("originals", {})
        for name in survey.aliased:
            saved = backup / f"{name}.py.orig"
            data = saved.read_bytes() if saved.is_file() else None
            if data is None:
                survey.problems.append(f"open_notebook/utils/{BACKUP_DIR}/{saved.name}: missing")
            elif _digest(data) != manifest.get(name):
                survey.problems.append(
                    f"open_notebook/utils/{BACKUP_DIR}/{saved.name}: "
                    "changed since it was saved (sha256 differs from the manifest)"
                )
            else:
                restore[name] = data
    if survey.problems:
        raise PatchError(survey.problems)
    for name, data in restore.items():
        _write(survey.utils / f"{name}.py", data)
    if backup.is_dir():
        for name in MODULES:
            (backup / f"{name}.py.orig").unlink(missing_ok=True)
        (backup / MANIFEST).unlink(missing_ok=True)
        try:
            backup.rmdir()
        except OSError as e:  # something else was put there: leave it
            print(f"kept {backup}: {e.strerror}", file=sys.stderr)
    return sorted(restore, key=MODULES.index)


def run(path: str | os.PathLike[str], undo: bool = False) -> int:
    """The command: 0 when done (or nothing to do), 2 when refused (the
    reasons on stderr, one a line)."""
    tree = Path(path)
    try:
        changed = undo_patch(tree) if undo else patch_open_notebook(tree)
    except PatchError as e:
        verb = "restore" if undo else "patch"
        print(f"fastnotebook patch-open-notebook: will not {verb} {tree}:", file=sys.stderr)
        for line in e.problems:
            print(f"  {line}", file=sys.stderr)
        return 2
    if undo:
        done = f"restored the originals of {', '.join(changed)}" if changed else "nothing to undo"
    else:
        done = (
            f"swapped in fastnotebook.open_notebook for {', '.join(changed)}"
            if changed
            else "already patched"
        )
    print(f"{tree}: {done}")
    return 0


def _cmd(args: argparse.Namespace) -> int:
    return run(args.path, undo=args.undo)


def _arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("path", help="the Open Notebook tree (holding open_notebook/)")
    parser.add_argument(
        "--undo", action="store_true", help="restore the original modules from the backup"
    )
    parser.set_defaults(run=_cmd)
    return parser


def add_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``patch-open-notebook`` on an argparse subparsers object."""
    _arguments(
        sub.add_parser(
            "patch-open-notebook",
            help="swap fastnotebook's modules into an Open Notebook tree (or --undo)",
            description=__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m fastnotebook.open_notebook.patch PATH [--undo]``."""
    parser = argparse.ArgumentParser(
        prog="python -m fastnotebook.open_notebook.patch",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    args = _arguments(parser).parse_args(argv)
    return _cmd(args)


if __name__ == "__main__":
    sys.exit(main())
