"""Version helpers, as ``open_notebook.utils.version_utils`` of Open
Notebook's current release: the version in a GitHub repository's
``pyproject.toml`` (``requests``, or ``httpx`` for the async variant, 10 s
timeout), an installed distribution's version, and PEP 440 comparison.

TOML is parsed with ``tomli`` when it is installed (the application's
dependency, so that its ``TOMLDecodeError`` is the one raised), else with the
standard library's ``tomllib``.
"""

from __future__ import annotations

import importlib
import tomllib
from importlib.metadata import PackageNotFoundError, version
from typing import Any
from urllib.parse import urlparse

from packaging.version import parse as parse_version

__all__ = [
    "PackageNotFoundError",
    "compare_versions",
    "get_installed_version",
    "get_version_from_github",
    "get_version_from_github_async",
    "parse_version",
]

_TIMEOUT_SECONDS = 10


def _raw_pyproject_url(repo_url: str, branch: str) -> str:
    parsed = urlparse(repo_url)
    if "github.com" not in parsed.netloc:
        raise ValueError("Not a GitHub URL")
    parts = parsed.path.strip("/").split("/")
    if len(parts) < 2:
        raise ValueError("Invalid GitHub repository URL")
    owner, repo = parts[0], parts[1]
    return f"https://raw.githubusercontent.com/{owner}/{repo}/{branch}/pyproject.toml"


def _toml_loads(text: str) -> dict[str, Any]:
    toml: Any
    try:
        toml = importlib.import_module("tomli")
    except ImportError:
        toml = tomllib
    data: dict[str, Any] = toml.loads(text)
    return data


def _version_in(pyproject_text: str) -> str:
    data = _toml_loads(pyproject_text)
    try:
        return str(data["tool"]["poetry"]["version"])
    except KeyError:
        try:
            return str(data["project"]["version"])
        except KeyError:
            raise KeyError("Version not found in pyproject.toml") from None


async def get_version_from_github_async(repo_url: str, branch: str = "main") -> str:
    """``get_version_from_github`` with ``httpx``, for async code
    (``httpx.HTTPError`` when the file cannot be fetched)."""
    import httpx

    url = _raw_pyproject_url(repo_url, branch)
    async with httpx.AsyncClient(timeout=float(_TIMEOUT_SECONDS)) as client:
        response = await client.get(url)
        response.raise_for_status()
    return _version_in(response.text)


def get_version_from_github(repo_url: str, branch: str = "main") -> str:
    """The version in a public GitHub repository's ``pyproject.toml`` on
    ``branch`` (``tool.poetry.version``, else ``project.version``).

    Raises ``ValueError`` for a URL that is not a GitHub repository's,
    ``requests.RequestException`` when the file cannot be fetched and
    ``KeyError`` when it holds no version.
    """
    import requests

    url = _raw_pyproject_url(repo_url, branch)
    response = requests.get(url, timeout=_TIMEOUT_SECONDS)
    response.raise_for_status()
    return _version_in(response.text)


def get_installed_version(package_name: str) -> str:
    """The version of an installed distribution; ``PackageNotFoundError`` if none."""
    try:
        return version(package_name)
    except PackageNotFoundError:
        raise PackageNotFoundError(f"Package '{package_name}' not found") from None


def compare_versions(version1: str, version2: str) -> int:
    """-1, 0 or 1 as ``version1`` is lower than, equal to or higher than
    ``version2`` (PEP 440; ``packaging.version.InvalidVersion`` for an invalid one)."""
    v1, v2 = parse_version(version1), parse_version(version2)
    if v1 < v2:
        return -1
    if v1 > v2:
        return 1
    return 0
