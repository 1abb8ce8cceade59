"""Version helpers, a drop-in for ``open_notebook.utils.version_utils``.

``get_version_from_github`` reads ``pyproject.toml`` from a repository's branch
on GitHub's raw-content host. The host can be changed (argument ``raw_base_url``
or the environment variable ``FASTNOTEBOOK_GITHUB_RAW_URL``), e.g. to a mirror
or a local test server.
"""

from __future__ import annotations

import asyncio
import os
import time
import tomllib
from importlib.metadata import PackageNotFoundError, version
from typing import Any
from urllib.parse import urlparse

from packaging.version import InvalidVersion
from packaging.version import parse as parse_version

__all__ = [
    "InvalidVersion",
    "PackageNotFoundError",
    "compare_versions",
    "get_installed_version",
    "get_version_from_github",
    "get_version_from_github_async",
]

RAW_BASE_URL = "https://raw.githubusercontent.com"
RAW_BASE_URL_ENV = "FASTNOTEBOOK_GITHUB_RAW_URL"
TIMEOUT_SECONDS = 10.0


def _pyproject_url(repo_url: str, branch: str, raw_base_url: str | None) -> str:
    parsed = urlparse(repo_url)
    if "github.com" not in parsed.netloc:
        raise ValueError("Not a GitHub URL")
    parts = parsed.path.strip("/").split("/")
    if len(parts) < 2:
        raise ValueError("Invalid GitHub repository URL")
    owner, repo = parts[0], parts[1]
    base = (raw_base_url or os.environ.get(RAW_BASE_URL_ENV) or RAW_BASE_URL).rstrip("/")
    return f"{base}/{owner}/{repo}/{branch}/pyproject.toml"


def _version_in(pyproject_text: str) -> str:
    data: dict[str, Any] = tomllib.loads(pyproject_text)
    try:
        return str(data["tool"]["poetry"]["version"])
    except KeyError:
        try:
            return str(data["project"]["version"])
        except KeyError:
            raise KeyError("Version not found in pyproject.toml") from None


def get_version_from_github(
    repo_url: str, branch: str = "main", raw_base_url: str | None = None
) -> str:
    """The version in a public GitHub repository's ``pyproject.toml``
    (``tool.poetry.version``, else ``project.version``).

    Raises ``ValueError`` for a URL that is not a GitHub repository,
    ``requests.RequestException`` when the file cannot be fetched (including
    ``requests.Timeout`` when it takes more than 10 s in all),
    ``tomllib.TOMLDecodeError`` for malformed TOML and ``KeyError`` when no version
    is found.
    """
    import requests

    url = _pyproject_url(repo_url, branch, raw_base_url)
    deadline = time.monotonic() + TIMEOUT_SECONDS
    with requests.get(url, timeout=TIMEOUT_SECONDS, stream=True) as response:
        response.raise_for_status()
        body = bytearray()
        for piece in response.iter_content(chunk_size=65536):
            body += piece
            if time.monotonic() > deadline:
                raise requests.Timeout(f"{url} took more than {TIMEOUT_SECONDS:g} s")
        text = body.decode(response.encoding or "utf-8", errors="replace")
    return _version_in(text)


async def get_version_from_github_async(
    repo_url: str, branch: str = "main", raw_base_url: str | None = None
) -> str:
    """``get_version_from_github`` with httpx, for async code (``httpx.HTTPError``
    when the file cannot be fetched, ``httpx.TimeoutException`` after 10 s in all)."""
    import httpx

    url = _pyproject_url(repo_url, branch, raw_base_url)
    async with httpx.AsyncClient(timeout=TIMEOUT_SECONDS) as client:
        try:
            async with asyncio.timeout(TIMEOUT_SECONDS):
                response = await client.get(url)
        except TimeoutError:
            raise httpx.TimeoutException(f"{url} took more than {TIMEOUT_SECONDS:g} s") from None
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
    ``version2`` under PEP 440; ``InvalidVersion`` for an invalid one.

    >>> compare_versions("1.2.0", "1.10")
    -1
    """
    v1, v2 = parse_version(version1), parse_version(version2)
    if v1 < v2:
        return -1
    if v1 > v2:
        return 1
    return 0
