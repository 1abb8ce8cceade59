"""version_utils: PEP 440 ordering as packaging, GitHub lookups against a local server."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import threading
import time
import tomllib
from collections.abc import Iterator

import httpx
import pytest
import requests
from packaging.version import InvalidVersion, Version

import fastnotebook
from fastnotebook.version_utils import (
    PackageNotFoundError,
    compare_versions,
    get_installed_version,
    get_version_from_github,
    get_version_from_github_async,
)

ORDERED = [
    "1!0.1",
    "0.9",
    "1.0.dev0",
    "1.0a1.dev1",
    "1.0a1",
    "1.0a2",
    "1.0b1",
    "1.0rc1",
    "1.0",
    "1.0+local.1",
    "1.0+local.2",
    "1.0.post1.dev0",
    "1.0.post1",
    "1.0.1",
    "1.1",
    "1.10",
    "2",
]


def test_versions_order_as_packaging() -> None:
    pairs = [(a, b) for a in ORDERED for b in [*ORDERED, "1.0.0", "1!0.1.0", "v1.0", "1.0-1"]]
    for a, b in pairs:
        expected = (Version(a) > Version(b)) - (Version(a) < Version(b))
        assert compare_versions(a, b) == expected, (a, b)
    assert compare_versions("1.0", "1.0.0") == 0
    assert compare_versions("2.0", "10.0") == -1


def test_invalid_versions_raise_packaging_error() -> None:
    with pytest.raises(InvalidVersion):
        compare_versions("not a version", "1.0")


def test_installed_version() -> None:
    assert get_installed_version("packaging")
    with pytest.raises(PackageNotFoundError, match="Package 'no-such-package-xyz' not found"):
        get_installed_version("no-such-package-xyz")


PAGES: dict[str, tuple[int, bytes, float]] = {
    "/o/poetry/main/pyproject.toml": (
        200,
        b'[tool.poetry]\nversion = "1.2.3"\n[project]\nversion="9"',
        0,
    ),
    "/o/pep621/dev/pyproject.toml": (200, b'[project]\nname = "x"\nversion = "0.4.0"\n', 0),
    "/o/none/main/pyproject.toml": (200, b'[project]\nname = "x"\n', 0),
    "/o/bad/main/pyproject.toml": (200, b"[project\nversion = ", 0),
    "/o/slow/main/pyproject.toml": (200, b'[project]\nversion = "1"\n', 12.0),
}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status, body, delay = PAGES.get(self.path, (404, b"not found", 0))
        time.sleep(delay)
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def both(repo: str, branch: str, base: str) -> tuple[object, object]:
    results: list[object] = []
    for call in (
        lambda: get_version_from_github(repo, branch, raw_base_url=base),
        lambda: asyncio.run(get_version_from_github_async(repo, branch, raw_base_url=base)),
    ):
        try:
            results.append(call())
        except Exception as e:
            results.append(e)
    return results[0], results[1]


def test_poetry_and_pep621_versions(server: str) -> None:
    assert both("https://github.com/o/poetry", "main", server) == ("1.2.3", "1.2.3")
    assert both("https://github.com/o/pep621/tree/x", "dev", server) == ("0.4.0", "0.4.0")


def test_environment_variable_overrides_the_host(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FASTNOTEBOOK_GITHUB_RAW_URL", server)
    assert get_version_from_github("https://github.com/o/poetry") == "1.2.3"


def test_missing_version_malformed_toml_and_404(server: str) -> None:
    sync, async_ = both("https://github.com/o/none", "main", server)
    assert isinstance(sync, KeyError) and isinstance(async_, KeyError)
    assert "Version not found in pyproject.toml" in str(sync)
    sync, async_ = both("https://github.com/o/bad", "main", server)
    assert isinstance(sync, tomllib.TOMLDecodeError) and isinstance(async_, tomllib.TOMLDecodeError)
    sync, async_ = both("https://github.com/o/missing", "main", server)
    assert isinstance(sync, requests.HTTPError) and isinstance(async_, httpx.HTTPStatusError)


def test_slow_server_times_out(server: str) -> None:
    start = time.monotonic()
    sync, async_ = both("https://github.com/o/slow", "main", server)
    assert isinstance(sync, requests.Timeout)
    assert isinstance(async_, httpx.TimeoutException)
    assert time.monotonic() - start < 30


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://gitlab.com/o/r", "Not a GitHub URL"),
        ("not a url", "Not a GitHub URL"),
        ("https://github.com/only-owner", "Invalid GitHub repository URL"),
    ],
)
def test_bad_urls(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        get_version_from_github(url)
    with pytest.raises(ValueError, match=message):
        asyncio.run(get_version_from_github_async(url))


def test_top_level_exports() -> None:
    assert fastnotebook.compare_versions is compare_versions
    assert fastnotebook.get_version_from_github is get_version_from_github
