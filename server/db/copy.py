"""``arena db copy``: every row of one arena database into another, empty one (SQLite to
PostgreSQL when a course outgrows one machine; the other way for a copy to take home).

Both are migrated to the same head first, so the tables and columns match one for one. Tables go
in foreign-key order, rows in primary-key order, in batches; the target's writes are one
transaction, so a failed copy leaves the target as empty as it was. Values pass through the
models' types (timestamps stay the same UTC moments, JSON the same documents). On PostgreSQL the
id sequences are moved past the copied ids afterwards, or the next bot created would collide.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import Integer, Table, func, insert, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from ply_arena.server.db.database import Database
from ply_arena.server.db.models import Base

#: Rows read and written at a time: large enough for few round trips, small enough to keep a
#: big moves table out of memory.
BATCH_ROWS = 5000


class CopyRefusedError(RuntimeError):
    """The copy cannot start (the target holds data); the message says why and what to do."""


@dataclass
class Copied:
    #: Rows copied, by table, in the order they were copied.
    rows: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.rows.values())


def _tables() -> list[Table]:
    """The arena's tables, parents before children (Alembic's own table is not copied: each
    side was migrated to head already)."""
    return list(Base.metadata.sorted_tables)


async def _rows_in(connection: AsyncConnection, table: Table) -> int:
    return int(await connection.scalar(select(func.count()).select_from(table)) or 0)


async def copy_database(
    source_url: str,
    target_url: str,
    *,
    progress: Callable[[str, int, int], None] | None = None,
) -> Copied:
    """Copy every row of ``source_url`` into ``target_url`` (which must hold no arena data).

    ``progress(table, done, total)`` is called after each batch.
    """
    source, target = Database(source_url), Database(target_url)
    try:
        await source.migrate()
        await target.migrate()
        copied = Copied()
        async with source.engine.connect() as reader, target.engine.begin() as writer:
            filled = [t.name for t in _tables() if await _rows_in(writer, t)]
            if filled:
                raise CopyRefusedError(
                    f"the target database already holds data (tables {', '.join(filled)}); "
                    "copy into a new, empty database (a server started on it, or any arena "
                    "command, fills it: on PostgreSQL drop and create it again, dropdb NAME "
                    "and createdb -O ROLE NAME)"
                )
            for table in _tables():
                total = await _rows_in(reader, table)
                done = 0
                result = await reader.stream(select(table).order_by(*table.primary_key.columns))
                async for batch in result.mappings().partitions(BATCH_ROWS):
                    await writer.execute(insert(table), [dict(row) for row in batch])
                    done += len(batch)
                    if progress is not None:
                        progress(table.name, done, total)
                copied.rows[table.name] = done
            if writer.dialect.name == "postgresql":
                await _move_sequences(writer)
        return copied
    finally:
        await source.dispose()
        await target.dispose()


async def _move_sequences(connection: AsyncConnection) -> None:
    """Set each serial id's sequence to the largest copied id (the copy gave ids explicitly,
    which PostgreSQL's sequences do not see)."""
    for table in _tables():
        keys = list(table.primary_key.columns)
        if len(keys) != 1 or not isinstance(keys[0].type, Integer):
            continue
        if table.autoincrement_column is None:
            continue
        column = keys[0].name
        await connection.execute(
            text(
                f"SELECT setval(pg_get_serial_sequence('{table.name}', '{column}'), "
                f"COALESCE(MAX({column}), 1), MAX({column}) IS NOT NULL) FROM {table.name}"
            )
        )
