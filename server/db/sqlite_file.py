"""Whether an existing SQLite file is an arena database, before anything writes into it.

Alembic would happily add the arena's tables to any SQLite file (another project's database
named by a wrong ``--db``), and SQLAlchemy turns a file that is not SQLite at all into a long
traceback. ``problem`` says in one sentence what is wrong with the file, or None.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def problem(path: Path) -> str | None:
    """None when ``path`` is missing, empty, or an arena database (any version); else why not."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    if path.is_dir():
        return f"{path} is a folder, not a database file"
    try:
        raw = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master")}
        finally:
            raw.close()
    except sqlite3.OperationalError as exc:
        # An SQLite file in WAL mode needs its folder writable (the -wal and -shm files), even
        # to be read: an unwritable folder or file is this, not "not a database".
        return (
            f"cannot open {path} ({exc}): the file and its folder must be readable and "
            "writable by this user (SQLite keeps its -wal and -shm files beside it)"
        )
    except sqlite3.DatabaseError as exc:
        return f"{path} is not an SQLite database ({exc})"
    if tables and "alembic_version" not in tables:
        shown = ", ".join(sorted(tables)[:5])
        return f"{path} is an SQLite database of something else (tables: {shown}), not the arena's"
    return None
