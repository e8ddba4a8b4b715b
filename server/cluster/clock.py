"""The database's clock, in seconds since the Unix epoch, as an SQL expression.

Leases are compared on one clock: the database's. Processes on machines whose clocks disagree
by seconds would otherwise disagree on whose lease has run out, and a process could take over
matches whose owner is alive.
"""

from __future__ import annotations

from sqlalchemy import Double, cast, func
from sqlalchemy.sql.elements import ColumnElement

#: julianday() of the Unix epoch (SQLite counts days since noon, 4714 BC).
_UNIX_EPOCH_JULIAN_DAY = 2440587.5


def database_seconds(dialect_name: str) -> ColumnElement[float]:
    """Now on the database's clock, in seconds (a float): ``clock_timestamp()`` on PostgreSQL
    (the moment of the statement, not of the transaction's start as ``now()``), ``julianday``
    on SQLite (millisecond precision)."""
    if dialect_name == "postgresql":
        return cast(func.extract("epoch", func.clock_timestamp()), Double)
    return cast((func.julianday("now") - _UNIX_EPOCH_JULIAN_DAY) * 86400.0, Double)
