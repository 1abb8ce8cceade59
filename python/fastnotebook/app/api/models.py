"""Request bodies of the HTTP API."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from fastnotebook.context_builder import DEFAULT_PRIORITY_WEIGHTS, ContextConfig

__all__ = ["ContextConfigBody", "ContextRequest", "SearchRequest"]

# An inclusion level must contain one of these (matched as substrings, as the
# builder matches them), so that a typo is a 422 rather than a silent default.
LEVEL_WORDS = ("not in", "insights", "full content")


def _check_levels(levels: dict[str, str], what: str) -> dict[str, str]:
    for item_id, level in levels.items():
        if not item_id.strip():
            raise ValueError(f"a {what} id is empty")
        if not any(word in level for word in LEVEL_WORDS):
            raise ValueError(
                f"{what} {item_id!r}: unknown inclusion level {level!r} "
                f"(use one containing {', '.join(repr(w) for w in LEVEL_WORDS)})"
            )
    return levels


class ContextConfigBody(BaseModel):
    """``ContextConfig`` as JSON."""

    model_config = ConfigDict(extra="forbid")

    sources: dict[str, str] = Field(default_factory=dict)
    notes: dict[str, str] = Field(default_factory=dict)
    include_insights: bool = True
    include_notes: bool = True
    max_tokens: int | None = Field(default=None, ge=1)
    priority_weights: dict[Literal["source", "note", "insight"], int] | None = None

    @field_validator("sources")
    @classmethod
    def _source_levels(cls, v: dict[str, str]) -> dict[str, str]:
        return _check_levels(v, "source")

    @field_validator("notes")
    @classmethod
    def _note_levels(cls, v: dict[str, str]) -> dict[str, str]:
        return _check_levels(v, "note")

    def to_config(self) -> ContextConfig:
        weights = DEFAULT_PRIORITY_WEIGHTS | dict(self.priority_weights or {})
        return ContextConfig(
            sources=dict(self.sources),
            notes=dict(self.notes),
            include_insights=self.include_insights,
            include_notes=self.include_notes,
            max_tokens=self.max_tokens,
            priority_weights=weights,
        )


class ContextRequest(BaseModel):
    """The body of ``POST /chat/context``."""

    model_config = ConfigDict(extra="forbid")

    notebook_id: str = Field(min_length=1)
    context_config: ContextConfigBody = Field(default_factory=ContextConfigBody)


class SearchRequest(BaseModel):
    """``POST /search``: a vector search as ``fastnotebook search`` asks it."""

    model_config = ConfigDict(extra="forbid")

    query: str
    k: int = Field(default=10, ge=1)
    min_score: float = 0.2
    mode: Literal["auto", "exact", "ann"] = "auto"
