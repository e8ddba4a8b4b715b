"""The database handle: engine, unit-of-work sessions and programmatic Alembic migrations.

Two stores, SQLite (aiosqlite) and PostgreSQL (asyncpg); a URL naming anything else, or a
driver that is not installed, is refused in one line (``check_database_url``). Everything
SQLite-specific lives here. SQLite allows one writer at a time; WAL lets readers run alongside
it, a busy timeout makes a second writer (the CLI, an admin request) wait instead of failing,
and the high-rate writes (moves) go through one writer task, ``database.recorder``, which
commits them in short batches (server/db/recorder.py), on a thread of their own with a
synchronous connection (server/db/writer_thread.py); the same writer serves PostgreSQL, from
the event loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from ply_arena.server.db.commit_hooks import take_callbacks
from ply_arena.server.db.recorder import Recorder
from ply_arena.server.db.writer_thread import WriterThread
from ply_arena.server.settings import SettingsError, shown_db_url

_SERVER_DIR = Path(__file__).resolve().parent.parent
#: How long a writer waits for SQLite's write lock before failing.
SQLITE_BUSY_TIMEOUT_MS = 10_000
#: The advisory lock key of the migrations (PostgreSQL): any 64-bit number no other lock uses
#: (the ratings' is in server/ratings/service.py, the admin token's in repositories/bots.py).
MIGRATIONS_LOCK_KEY = 0x706C7961_6D696772  # "plya" "migr"


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        # NORMAL is durable in WAL mode except for the last commits on power loss, and avoids an
        # fsync per move.
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    finally:
        cursor.close()


def alembic_config() -> Config:
    """The Alembic configuration shipped inside the package (server/alembic.ini)."""
    cfg = Config(str(_SERVER_DIR / "alembic.ini"))
    cfg.set_main_option("script_location", str(_SERVER_DIR / "migrations"))
    return cfg


def _upgrade(connection: Connection, revision: str) -> None:
    cfg = alembic_config()
    cfg.attributes["connection"] = connection
    command.upgrade(cfg, revision)


class DatabaseUnavailableError(SettingsError):
    """The database cannot be reached (no server there, wrong credentials, no such database);
    the message names it (without its password) and the reason."""


class DatabaseURLError(SettingsError):
    """The database URL names a store or driver this server does not run on, or a driver that
    is not installed; the message says what to write or install instead."""


#: The stores Ply Arena runs on, each with the asynchronous driver it uses.
DRIVERS = {"sqlite": "aiosqlite", "postgresql": "asyncpg"}


def _reason(error: BaseException) -> str:
    """The driver's own words, first line only (SQLAlchemy appends its background links)."""
    original = getattr(error, "orig", None) or error
    return (str(original).strip().splitlines() or [type(original).__name__])[0]


def check_database_url(url: str) -> None:
    """Refuse, in one line that says what to do, a store or driver this server does not run on,
    and a driver that is not installed (:class:`DatabaseURLError`)."""
    parsed = make_url(url)
    backend, driver = parsed.get_backend_name(), parsed.get_driver_name()
    expected = DRIVERS.get(backend)
    if expected is None:
        raise DatabaseURLError(
            f"Ply Arena stores its data in SQLite or PostgreSQL, not {backend}: give an "
            "sqlite+aiosqlite:///FILE or postgresql+asyncpg://USER@HOST/DB URL"
        )
    if driver != expected:
        raise DatabaseURLError(
            f"Ply Arena talks to {backend} through {expected}, not {driver}: write the URL as "
            f"{backend}+{expected}://..."
        )
    try:
        __import__(driver)
    except ImportError:
        how = f"pip install {driver}"
        if backend == "postgresql":
            how += " (the arena's 'postgres' extra: pip install -e '.[postgres]' in its folder)"
        raise DatabaseURLError(
            f"the database URL needs the Python package {driver!r}, which is not installed: {how}"
        ) from None


class Database:
    """One engine plus a session factory. ``session()`` is the unit of work."""

    def __init__(self, url: str) -> None:
        self.url = url
        parsed = make_url(url)
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        check_database_url(url)
        options: dict[str, Any] = {}
        if self.is_sqlite:
            # The driver's own lock wait is a second line behind busy_timeout.
            options["connect_args"] = {"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}
            if parsed.database and parsed.database != ":memory:":
                Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        self.engine: AsyncEngine = create_async_engine(url, **options)
        if self.is_sqlite:
            event.listen(self.engine.sync_engine, "connect", _sqlite_on_connect)
        self._sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        #: Where the recorder runs its batches on an SQLite file (server/db/writer_thread.py);
        #: None for PostgreSQL (asyncpg talks to it from the event loop, no thread to cross)
        #: and for an in-memory database (another connection would see another database).
        self.writer_thread: WriterThread | None = None
        if self.is_sqlite and parsed.database not in (None, "", ":memory:"):
            self.writer_thread = WriterThread(
                parsed.set(drivername="sqlite"), _sqlite_on_connect, SQLITE_BUSY_TIMEOUT_MS / 1000
            )
        #: The single writer for high-rate writes (moves); see server/db/recorder.py.
        self.recorder = Recorder(self)

    async def migrate(self, revision: str = "head") -> None:
        """Bring the schema up to ``revision`` (Alembic upgrade), on this engine's connection.

        The first thing every command and the server do with a database: one that cannot be
        reached is said in one line (:class:`DatabaseUnavailableError`), not a driver traceback.
        """
        try:
            conn = await self.engine.connect()
        except (OSError, DBAPIError) as error:
            raise DatabaseUnavailableError(
                f"cannot open the database {shown_db_url(self.url)}: {_reason(error)}; check "
                "that its server runs and that the URL names it (a password with @ / : # in it "
                "goes percent-encoded: @ is %40)"
            ) from None
        try:
            if self.is_sqlite:
                # A migration that copies a table others refer to (a batch: SQLite has little
                # ALTER TABLE) needs foreign keys off, and the pragma is ignored inside a
                # transaction; they are checked, and turned on again, below.
                await conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
                await conn.commit()
            async with conn.begin():
                if not self.is_sqlite:
                    # Several processes starting at once on one database (arena serve
                    # --workers): one migrates, the others wait here and then find the schema
                    # at its head. Held until this transaction ends (Alembic's DDL is in it).
                    await conn.execute(
                        text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATIONS_LOCK_KEY}
                    )
                await conn.run_sync(_upgrade, revision)
                if self.is_sqlite:
                    broken = (await conn.exec_driver_sql("PRAGMA foreign_key_check")).all()
                    if broken:
                        raise RuntimeError(f"the migration broke foreign keys: {broken[:5]}")
        except DBAPIError as error:
            if "permission denied" not in _reason(error):
                raise
            # PostgreSQL 15 and later: only a database's owner may create tables in its public
            # schema, and a database made without -O belongs to the superuser.
            user = make_url(self.url).username or "the arena's role"
            raise DatabaseUnavailableError(
                f"cannot create the arena's tables in {shown_db_url(self.url)}: "
                f"{_reason(error)}; make {user} the database's owner (createdb -O {user} ..., or "
                f"ALTER DATABASE ... OWNER TO {user}) or GRANT CREATE ON SCHEMA public TO {user}"
            ) from None
        finally:
            if self.is_sqlite:
                await conn.rollback()
                await conn.exec_driver_sql("PRAGMA foreign_keys=ON")
                await conn.commit()
            await conn.close()

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session that commits when the block ends normally and rolls back on error.

        Work done in it may ask to hear of the commit: ``after_commit(session, callback)``; the
        callbacks run right after a successful commit (and never after a rollback), before the
        block's caller goes on: an in-memory copy of stored data can follow exactly what is
        stored.
        """
        async with self._sessions() as session:
            try:
                yield session
                await session.commit()
            except BaseException:
                await session.rollback()
                raise
            for callback in take_callbacks(session):
                callback()

    async def dispose(self) -> None:
        """Commit the recorder's queued writes, then close every connection."""
        await self.recorder.close()
        if self.writer_thread is not None:
            await self.writer_thread.close()
        await self.engine.dispose()
