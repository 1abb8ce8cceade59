"""The settings of note parsing, chunking, hashing and edges."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

__all__ = ["DEFAULT_SIZES", "HashMode", "Normalisation", "NotesConfig", "SizeLimits"]

HashMode = Literal["body", "frontmatter", "body+frontmatter"]
Normalisation = Literal["canonical", "none"]

# (target_min, target_max, hard_max, min) in tokens.
SizeLimits = tuple[int, int, int, int]

DEFAULT_SIZES: Mapping[str, SizeLimits] = MappingProxyType(
    {
        "default": (250, 400, 700, 100),
        "concept": (250, 350, 650, 100),
        "thought": (250, 350, 650, 100),
        "experience": (250, 350, 650, 100),
        "task": (200, 300, 600, 80),
        "project": (200, 300, 600, 80),
        "journal": (300, 400, 700, 120),
    }
)

_HASH_MODES = ("body", "frontmatter", "body+frontmatter")
_NORMALISATIONS = ("canonical", "none")


@dataclass(frozen=True)
class NotesConfig:
    """How notes are chunked, hashed and linked.

    ``sizes`` maps a note ``type`` (front matter) to ``(target_min, target_max,
    hard_max, min)`` in tokens of ``encoding``; the ``"default"`` key is
    required and used for every other type. A chunk grows to ``target_max``
    (it stops early only at a strong boundary once it reached ``target_min``);
    a code block or table over ``hard_max`` becomes its own chunk flagged
    ``oversized``; a piece under ``min`` merges with a neighbour of its section.
    ``overlap`` tokens of the previous chunk start each ``embed_text`` (never
    tearing a code block or table). Links under a heading named in
    ``suggestion_headings`` (case-insensitive) create no edges.
    """

    sizes: Mapping[str, SizeLimits] = field(default_factory=lambda: dict(DEFAULT_SIZES))
    overlap: int = 50
    encoding: str = "o200k_base"
    hash_mode: HashMode = "body+frontmatter"
    normalisation: Normalisation = "canonical"
    suggestion_headings: tuple[str, ...] = ("Mögliche Verbindungen", "Possible connections")
    note_scope_references: bool = False

    def __post_init__(self) -> None:
        if "default" not in self.sizes:
            raise ValueError('NotesConfig.sizes needs a "default" entry')
        for name, limits in self.sizes.items():
            if len(limits) != 4 or not all(isinstance(v, int) for v in limits):
                raise ValueError(f"sizes[{name!r}] must be four integers, got {limits!r}")
            tmin, tmax, hard, small = limits
            if not (0 < small <= tmax and 0 < tmin <= tmax <= hard):
                raise ValueError(
                    f"sizes[{name!r}] = {limits!r}: need 0 < min <= target_max and "
                    "0 < target_min <= target_max <= hard_max"
                )
        if self.overlap < 0:
            raise ValueError(f"overlap must be >= 0, got {self.overlap}")
        if self.hash_mode not in _HASH_MODES:
            raise ValueError(f"hash_mode must be one of {_HASH_MODES}, got {self.hash_mode!r}")
        if self.normalisation not in _NORMALISATIONS:
            raise ValueError(
                f"normalisation must be one of {_NORMALISATIONS}, got {self.normalisation!r}"
            )

    def limits_for(self, note_type: str | None) -> SizeLimits:
        """The size limits of a note type (``"default"`` for unknown types)."""
        if note_type is not None:
            key = note_type.strip().lower()
            if key in self.sizes:
                return self.sizes[key]
        return self.sizes["default"]
