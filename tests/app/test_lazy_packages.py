"""The application packages that import their names on first use
(``fastnotebook._lazy``): every exported name resolves to its module's own
object, ``dir()`` shows them, and importing the package imports none of
them (nor the SurrealDB SDK)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

PACKAGES = ["fastnotebook.app.database", "fastnotebook.app.cli"]


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_name_is_its_modules_own(name: str) -> None:
    package = importlib.import_module(name)
    for export in package.__all__:
        value = getattr(package, export)
        # The object one of the package's modules defines or imports (the
        # SDK's RecordID) under that name.
        sources = [m for m in list(sys.modules) if m.startswith(f"{name}.")]
        assert any(getattr(sys.modules[m], export, None) is value for m in sources), export
    assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError, match=f"module '{name}' has no attribute 'nope'"):
        package.nope  # noqa: B018


@pytest.mark.parametrize("name", PACKAGES)
def test_importing_the_package_imports_none_of_it(name: str) -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", f"import sys, {name}; print(' '.join(sorted(sys.modules)))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    ours = [m for m in loaded if m.startswith(f"{name}.")]
    assert ours == []
    assert not [m for m in loaded if m.split(".")[0] in ("surrealdb", "numpy", "loguru")]
