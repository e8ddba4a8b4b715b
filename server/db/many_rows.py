"""Many rows into one table, ``insert_rows(connection, table, rows)``, and one statement over
many rows, ``run_many(connection, statement, rows)``: the recorder's hot writes.

The same rows as ``connection.execute(insert(table), rows)`` (an executemany), stored the same
way, but on SQLite as one multi-row ``INSERT ... VALUES (...), (...)`` per chunk. An executemany
runs SQLite once per row, and the ``sqlite3`` module lets go of the GIL around every one of
them: on the recorder's thread, with the event loop busy on the main thread, each row then
waits for the GIL to come back (docs/benchmarks.md measured 60 rows taking 350 ms that way,
against 23 ms as one statement), and SQLAlchemy's per-row parameter processing costs more than
the insert. Compiling a multi-row ``insert().values([...])`` through SQLAlchemy costs more still
(28 ms for 300 rows), so the statement text is built here, once per table, columns and row
count, and each value goes through the column type's own bind processor, as SQLAlchemy would
send it. PostgreSQL keeps the executemany: asyncpg already sends it as one pipelined batch.

On SQLite both go to the driver's cursor directly, past SQLAlchemy's execution machinery
(about 40 us a statement for a plain one and 200 us for an executemany of a compiled Core
statement, against the 10-30 us SQLite takes to run it); ``run_many`` compiles its statement
once. A driver error is raised as SQLAlchemy's (``sqlalchemy.exc.IntegrityError``, ...), as
SQLAlchemy would raise it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from sqlalchemy import Column, Connection, Executable, Table, insert
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError

#: SQLite's limit on parameters in one statement (SQLITE_MAX_VARIABLE_NUMBER): 32766 since
#: 3.32, 999 before.
_MAX_PARAMETERS = 32_766 if sqlite3.sqlite_version_info >= (3, 32) else 999
#: Rows per statement at most, whatever the columns (a statement's text grows with its rows).
_MAX_ROWS = 500

Processor = Callable[[Any], Any] | None


def insert_rows(connection: Connection, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert ``rows`` (dicts with the same keys; other columns take their defaults)."""
    if not rows:
        return
    if connection.dialect.name != "sqlite":
        connection.execute(insert(table), list(rows))
        return
    names = tuple(rows[0])
    plan = _plan(table, names, connection.dialect)
    if plan is None:  # a default computed in SQL: SQLAlchemy knows how
        connection.execute(insert(table), list(rows))
        return
    per_statement = max(1, min(_MAX_ROWS, _MAX_PARAMETERS // len(plan.columns)))
    for start in range(0, len(rows), per_statement):
        chunk = rows[start : start + per_statement]
        values: list[Any] = []
        for row in chunk:
            for name, process in plan.given:
                values.append(row[name] if process is None else process(row[name]))
            for default, process in plan.defaults:
                values.append(default() if process is None else process(default()))
        _execute(connection, plan.sql(len(chunk)), values)


def run_many(
    connection: Connection, statement: Executable, rows: Sequence[Mapping[str, Any]]
) -> None:
    """``connection.execute(statement, rows)`` (an executemany of a statement whose parameters
    are all ``bindparam``s named in each row), the same rows changed."""
    if not rows:
        return
    if not _direct(connection):
        connection.execute(statement, list(rows))
        return
    compiled = _compiled(statement, connection.dialect)
    parameters = [
        tuple(
            row[name] if process is None else process(row[name])
            for name, process in compiled.parameters
        )
        for row in rows
    ]
    cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.executemany(compiled.sql, parameters)
    except sqlite3.Error as error:
        raise DBAPIError.instance(compiled.sql, None, error, sqlite3.Error) from error
    finally:
        cursor.close()


def fetch_all(
    connection: Connection, statement: Executable, parameters: Mapping[str, Any]
) -> list[tuple[Any, ...]]:
    """``connection.execute(statement, parameters).all()`` as plain tuples, for a statement
    whose parameters are all plain ``bindparam``s (no expanding IN lists)."""
    if not _direct(connection):
        return [tuple(row) for row in connection.execute(statement, dict(parameters))]
    compiled = _compiled(statement, connection.dialect)
    values = [
        parameters[name] if process is None else process(parameters[name])
        for name, process in compiled.parameters
    ]
    cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(compiled.sql, values)
        return list(cursor.fetchall())
    except sqlite3.Error as error:
        raise DBAPIError.instance(compiled.sql, None, error, sqlite3.Error) from error
    finally:
        cursor.close()


def _compiled(statement: Executable, dialect: Dialect) -> _Compiled:
    key = (statement, dialect.name)
    compiled = _COMPILED.get(key)
    if compiled is None:
        compiled = _COMPILED[key] = _Compiled(statement, dialect)
    return compiled


class _Compiled:
    """A Core statement compiled once for one dialect: its text and its parameters in order."""

    def __init__(self, statement: Executable, dialect: Dialect) -> None:
        compiled = statement.compile(dialect=dialect)  # type: ignore[attr-defined]
        self.sql: str = compiled.string
        self.parameters: list[tuple[str, Processor]] = [
            (name, compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect))
            for name in compiled.positiontup
        ]


_COMPILED: dict[tuple[Executable, str], _Compiled] = {}


def _direct(connection: Connection) -> bool:
    """Whether the connection's driver is the standard library's ``sqlite3`` (the recorder's
    thread), which can be called directly; aiosqlite (a bulk write on an async session, in
    tools and tests) goes through SQLAlchemy."""
    return connection.dialect.driver == "pysqlite"


def _execute(connection: Connection, sql: str, values: list[Any]) -> None:
    """One statement on the SQLite driver's own connection, in the connection's transaction."""
    if not _direct(connection):
        connection.exec_driver_sql(sql, tuple(values))
        return
    driver = connection.connection.driver_connection
    try:
        driver.execute(sql, values)  # type: ignore[union-attr]
    except sqlite3.Error as error:
        raise DBAPIError.instance(sql, None, error, sqlite3.Error) from error


class _Plan:
    """How to insert rows with these keys into one table: columns in order, processors."""

    def __init__(self, table: Table, names: tuple[str, ...], dialect: Dialect) -> None:
        given = [table.c[name] for name in names]
        defaulted = [c for c in table.columns if c.name not in names and c.default is not None]
        self.given = [(c.name, _processor(c, dialect)) for c in given]
        self.defaults = [(_default_of(c), _processor(c, dialect)) for c in defaulted]
        self.columns = given + defaulted
        quote = dialect.identifier_preparer.quote
        self._head = (
            f"INSERT INTO {quote(table.name)} ({', '.join(quote(c.name) for c in self.columns)}) "
            "VALUES "
        )
        self._group = "(" + ", ".join("?" * len(self.columns)) + ")"

    def sql(self, rows: int) -> str:
        return _sql(self._head, self._group, rows)


@lru_cache(maxsize=256)
def _sql(head: str, group: str, rows: int) -> str:
    return head + ", ".join([group] * rows)


_PLANS: dict[tuple[Table, tuple[str, ...], str], _Plan | None] = {}


def _plan(table: Table, names: tuple[str, ...], dialect: Dialect) -> _Plan | None:
    key = (table, names, dialect.name)
    if key not in _PLANS:
        defaults = [c.default for c in table.columns if c.name not in names and c.default]
        simple = all(d.is_scalar or d.is_callable for d in defaults)
        _PLANS[key] = _Plan(table, names, dialect) if simple else None
    return _PLANS[key]


def _processor(column: Column[Any], dialect: Dialect) -> Processor:
    processor: Processor = column.type.dialect_impl(dialect).bind_processor(dialect)
    return processor


def _default_of(column: Column[Any]) -> Callable[[], Any]:
    """The column's Python-side default as a function of nothing (as SQLAlchemy applies it to a
    row without the column)."""
    default = column.default
    assert default is not None
    arg = default.arg  # type: ignore[attr-defined]
    if default.is_callable:
        # SQLAlchemy wraps a default of no arguments to take the execution context.
        return lambda: arg(None)
    return lambda: arg
