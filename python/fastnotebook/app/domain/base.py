"""``ObjectModel``: a pydantic model stored as one SurrealDB record.

As ``open_notebook.domain.base.ObjectModel``: ``get``, ``get_all``, ``save``,
``delete``, ``relate``, with ids as ``table:id`` strings. Differences:

- ``get`` on a model class accepts a bare id (``"abc"`` means ``source:abc``
  for ``Source``), raises ``InvalidInputError`` for an empty or malformed id
  and ``NotFoundError`` only when the record is missing; a database failure
  stays a ``DatabaseOperationError`` instead of being reported as "not found".
- ``save`` of a record that no longer exists raises ``NotFoundError``.
- ``created``/``updated`` are set by the database schema, not by the client's
  clock.
- Vectors (the ``embedding`` fields) are never read back into models: they
  are large and the models have no field for them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from fastnotebook.app.database.record_id import (
    RecordID,
    check_identifier,
    ensure_record_id,
    with_table_prefix,
)
from fastnotebook.app.database.repository import (
    repo_create,
    repo_delete,
    repo_query,
    repo_relate,
    repo_update,
)
from fastnotebook.errors import DatabaseOperationError, InvalidInputError, NotFoundError

__all__ = ["ObjectModel"]


class ObjectModel(BaseModel):
    """A record of ``table_name``; ``id`` is None until the first ``save``."""

    model_config = ConfigDict(validate_assignment=True)

    table_name: ClassVar[str] = ""
    # Fields written even when None (others are left out of the record).
    nullable_fields: ClassVar[frozenset[str]] = frozenset()

    id: str | None = None
    created: datetime | None = None
    updated: datetime | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_string(cls, value: Any) -> Any:
        return str(value) if isinstance(value, RecordID) else value

    @classmethod
    def _table(cls) -> str:
        if not cls.table_name:
            raise InvalidInputError(f"{cls.__name__} is not stored in a table")
        return check_identifier(cls.table_name)

    @classmethod
    def record_id(cls, id: str | RecordID) -> RecordID:
        """``id`` as a record of this model's table (a bare id gets the prefix)."""
        if isinstance(id, str):
            if not id.strip():
                raise InvalidInputError("ID cannot be empty")
            id = with_table_prefix(id.strip(), cls._table())
        rid = ensure_record_id(id)
        if rid.table_name != cls._table():
            raise InvalidInputError(f"{rid} is not a {cls._table()} id")
        return rid

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Self:
        """A model from a row of ``repo_query`` (ids as strings);
        ``DatabaseOperationError`` if the row does not fit the model."""
        try:
            return cls.model_validate(row)
        except ValidationError as e:
            raise DatabaseOperationError(
                f"record {row.get('id')} does not fit {cls.__name__}: {e}"
            ) from e

    @classmethod
    async def get(cls, id: str) -> Self:
        """The record ``id``; ``NotFoundError`` if there is none."""
        rid = cls.record_id(id)
        rows = await repo_query("SELECT * OMIT embedding FROM $id;", {"id": rid})
        if not rows:
            raise NotFoundError(f"{cls._table()} with id {rid} not found")
        return cls.from_row(rows[0])

    @classmethod
    async def get_all(cls, order_by: str | None = None) -> list[Self]:
        """Every record of the table, optionally ordered by a field
        (``"updated desc"``, ``"name"``)."""
        order = ""
        if order_by:
            field, _, direction = order_by.strip().partition(" ")
            direction = direction.strip().upper() or "ASC"
            if direction not in ("ASC", "DESC"):
                raise InvalidInputError(f"invalid sort direction in {order_by!r}")
            order = f" ORDER BY {check_identifier(field, 'field name')} {direction}"
        rows = await repo_query(f"SELECT * OMIT embedding FROM {cls._table()}{order};")
        return [cls.from_row(row) for row in rows]

    def _prepare_save_data(self) -> dict[str, Any]:
        data = self.model_dump(exclude={"id", "created", "updated"})
        return {k: v for k, v in data.items() if v is not None or k in self.nullable_fields}

    async def save(self) -> None:
        """Create the record (``id`` None) or merge this model into it, then
        take the stored values (id, timestamps) back."""
        data = self._prepare_save_data()
        if self.id is None:
            rows = await repo_create(self._table(), data)
        else:
            rows = await repo_update(self._table(), self.id, data)
            if not rows:
                raise NotFoundError(f"{self.id} no longer exists")
        stored = self.from_row(rows[0])
        for name in type(self).model_fields:
            object.__setattr__(self, name, getattr(stored, name))

    async def delete(self) -> bool:
        """Delete the record; whether it existed."""
        if self.id is None:
            raise InvalidInputError("Cannot delete object without an ID")
        return bool(await repo_delete(self.record_id(self.id)))

    async def relate(
        self, relationship: str, target_id: str, data: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Create the edge ``self -relationship-> target_id``."""
        if not relationship or not target_id or not self.id:
            raise InvalidInputError("Relationship and target ID must be provided")
        return await repo_relate(self.id, relationship, target_id, data)
