"""What the compiled core says about itself: its version (Cargo.toml's, the
only place it is written), the encodings it knows, and how it refuses others."""

from __future__ import annotations

import importlib.metadata
import tomllib
from collections.abc import Callable

import pytest

from fastnotebook import _core
from fastnotebook.token_utils import ENCODINGS
from helpers.corpus import ROOT


def test_the_version_is_cargos() -> None:
    cargo = tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))
    assert _core.__version__ == cargo["package"]["version"]
    # The installed distribution's version, which maturin also takes from there.
    assert _core.__version__ == importlib.metadata.version("fastnotebook")


def test_the_encodings_are_the_token_utils_ones() -> None:
    assert _core.ENCODINGS == ENCODINGS
    for name in _core.ENCODINGS:
        assert _core.token_count("hello world", name) == 2


@pytest.mark.parametrize(
    "call",
    [
        lambda: _core.token_count("x", "gpt2"),
        lambda: _core.token_counts(["x"], "gpt2"),
        lambda: _core.encode_ordinary("x", "gpt2"),
        lambda: _core.chunk_text("x", unit="tokens", encoding="gpt2"),
        lambda: _core.chunk_texts(["x"], unit="tokens", encoding="gpt2"),
    ],
)
def test_every_function_refuses_an_unknown_encoding_alike(call: Callable[[], object]) -> None:
    with pytest.raises(ValueError) as raised:
        call()
    assert str(raised.value) == (
        'unknown encoding "gpt2"; choose one of ' + ", ".join(_core.ENCODINGS)
    )


def test_the_encoding_is_only_read_for_tokens() -> None:
    assert _core.chunk_text("x", unit="chars", encoding="gpt2")[0] == ["x"]
