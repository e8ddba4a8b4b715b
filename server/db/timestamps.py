"""Timestamps stored in UTC and read back timezone-aware, on SQLite and on PostgreSQL.

PostgreSQL keeps them as ``timestamp with time zone``. SQLite has no date type: SQLAlchemy
stores text, by default without an offset, and reads it back naive. Here the text carries its
offset (``2026-11-27 01:55:14.672573+00:00``), so the file says what its times mean to any
reader, and the fixed width and the one offset keep text order equal to time order (the match
lists sort and page on it). Migration 0008 appended the offset to the values stored before.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

#: SQLite's text for a UTC moment: SQLAlchemy's default format plus the offset.
SQLITE_FORMAT = (
    "%(year)04d-%(month)02d-%(day)02d %(hour)02d:%(minute)02d:%(second)02d.%(microsecond)06d+00:00"
)


class UTCDateTime(TypeDecorator[datetime]):
    """A moment in UTC: written from an aware datetime (a naive one is taken as UTC, as every
    time this server makes is), read back aware in UTC."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            # Parsed back with datetime.fromisoformat, which reads the offset (and, for text
            # stored before migration 0008, its absence).
            return dialect.type_descriptor(
                sqlite.DATETIME(timezone=True, storage_format=SQLITE_FORMAT)
            )
        return dialect.type_descriptor(DateTime(timezone=True))

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return as_utc(value)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return as_utc(value)


def as_utc(moment: datetime) -> datetime:
    """The same moment in UTC; a naive datetime is taken to be in UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
