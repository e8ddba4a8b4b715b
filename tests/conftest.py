"""Shared fixtures for every test package: a real uvicorn server on a free port with a real
database (an SQLite file, or a PostgreSQL database with ``--store postgresql``), and helpers to
make bots.

Usage::

    def test_something(live_server, create_bot):
        name, token = create_bot()            # a new enabled bot via POST /api/bots; token once
        name2, token2 = create_bot("alice")   # or with a chosen name
        live_server.url        # "http://127.0.0.1:<port>"
        live_server.ws_url     # "ws://127.0.0.1:<port>/ws"
        live_server.api("GET", "/api/matches", params={"bot": name}).json()
        live_server.api("POST", "/api/bots", admin=True, json={"name": "x"})  # admin bearer added
        live_server.admin_token, live_server.db_url
        live_server.db_path    # the SQLite file (None on PostgreSQL)
        live_server.db_option  # what --db takes for it: db_path, else db_url
        live_server.app.state.referee / .settings   # same process: inspect freely
        open_database(live_server.db_url)   # the server's database from the test's event loop
        live_server.stop()     # optional; teardown stops it (stop ends running matches as aborted)

    def test_other(start_server):
        srv = start_server(hello_timeout_s=0.5)   # any Settings field; same tmp_path db by default
        srv.stop()
        srv2 = start_server()                     # restart on the same database
        start_server(db_url="sqlite+aiosqlite:///...")   # or another one
        start_server(send_buffer=4096)            # small kernel send buffer (slow-consumer tests)

    async def test_storage(database):          # a migrated Database on db_url, in the test's loop
        async with database.session() as s:    # (the same database live_server uses, if both are)
            ...

    async def test_replay(database, store_match):   # a random legal match written through the
        m = await store_match(database, game="connect_four", seed=3)   # repositories
        m.match_id, m.bots, m.events, m.payoffs, m.termination, m.final_position

``browser`` (async): a headless Chromium driven by Playwright for the page tests (see
``_browser.py``); ``page = await browser.page(width, height)``, ``await browser.shot(page, name)``,
``browser.dialogs`` and ``browser.console_errors``. Debian's ``chromium`` from PATH, headless, with
``--no-sandbox``; when Playwright or the browser is missing the test is skipped with the reason,
except where ``ARENA_REQUIRE_BROWSER=1`` (``.ci/run`` sets it after installing the browser): there
it fails. Screenshots go to ``test-screenshots/`` (or ``$ARENA_SCREENSHOTS``), which git ignores.

Fixtures: ``admin_token`` (str), ``db_url`` (a fresh, empty database: see the stores below),
``db_store`` (``"sqlite"`` or ``"postgresql"``: the run's store), ``start_server``
(factory, every server it started is stopped at teardown), ``live_server`` (one started
server), ``create_bot`` (``create_bot(name=None) -> (name, token)`` on ``live_server``),
``database`` (async: a migrated ``ply_arena.server.db.Database`` on ``db_url``, disposed at
teardown), ``open_database`` (``open_database(url) -> Database`` in the test's event loop,
disposed at teardown: a test must not use a server's own ``app.state.database``, whose
connections belong to the server's event loop, and asyncpg's cannot be used from another),
``store_match`` (async ``store_match(database, game=..., seed=..., bots=None,
max_plies=None, finish=True)``: plays seeded random legal moves, dice included, and stores them as
the referee would; ``max_plies`` stops early with termination ``move_limit``; ``finish=False``
leaves it running).

The server runs uvicorn (the same configuration as ``arena serve``) in a background thread with
its own event loop, listening on a socket bound to port 0, so tests may be sync or async and use
real ``websockets`` / ``httpx`` clients against it.

Stores: ``pytest --store sqlite`` (the default; ``ARENA_TEST_STORE=postgresql`` changes the
default) or ``pytest --store postgresql``. With ``sqlite``, ``db_url`` is
``sqlite+aiosqlite:///<tmp_path>/arena.db`` and every test runs. With ``postgresql``, a throwaway
PostgreSQL cluster (``_postgres.py``: Debian's binaries, in a temporary folder, on a free port of
127.0.0.1; started at the first test that needs it, stopped and removed at the end of the session)
gives each test a fresh empty database, ``postgresql+asyncpg://arena@127.0.0.1:PORT/tN_<test>``,
dropped at teardown (after the servers and ``database`` that use it: they depend on ``db_url``, so
they are torn down first). That run collects only the storage-facing tests: those whose fixtures
include ``db_url`` (directly or through ``database``, ``start_server``, ``live_server``, ...) and
that are not marked ``@pytest.mark.sqlite_only("why")`` (a test about the SQLite file itself: its
pragmas, its bytes, the server mark beside it, a path given to ``--db``); the others are
deselected, and the count of each kind is printed after the collection. A test that starts a
server of its own (``arena serve`` in a subprocess: ``start_server_process(db_url)``, plain
uvicorn) gives it ``db_url`` rather than an SQLite file or URL it makes up, so that it runs on
either store. The converse, ``@pytest.mark.postgresql_only`` (what only PostgreSQL has: its
roles and privileges), is deselected in the SQLite pass.
"""

from __future__ import annotations

import itertools
import os
import random
import shutil
import socket
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from _browser import Browser
from _browser import launch as launch_browser
from _postgres import PostgresCluster, PostgresUnavailable
from starlette.applications import Starlette

from ply_arena.server.app import create_app, make_server
from ply_arena.server.db.database import Database
from ply_arena.server.settings import Settings

ADMIN_TOKEN = "test-admin-token-0123456789"
ROOT = Path(__file__).resolve().parents[1]
_names = itertools.count(1)


@dataclass
class LiveServer:
    url: str
    ws_url: str
    db_url: str
    db_path: Path | None
    admin_token: str
    app: Starlette
    settings: Settings
    _server: uvicorn.Server = field(repr=False)
    _thread: threading.Thread = field(repr=False)
    _client: httpx.Client = field(repr=False)

    def api(self, method: str, path: str, *, admin: bool = False, **kwargs: Any) -> httpx.Response:
        """An HTTP request to this server; ``admin=True`` adds the admin bearer token."""
        headers = dict(kwargs.pop("headers", None) or {})
        if admin:
            headers["Authorization"] = f"Bearer {self.admin_token}"
        return self._client.request(method, path, headers=headers, **kwargs)

    def create_bot(self, name: str | None = None) -> tuple[str, str]:
        """A new bot through the REST API: (name, token)."""
        name = name or f"bot{next(_names)}"
        response = self.api("POST", "/api/bots", admin=True, json={"name": name})
        assert response.status_code == 201, response.text
        return name, response.json()["token"]

    @property
    def db_option(self) -> str:
        """What ``--db`` takes for this server's database: the SQLite file, else the URL."""
        return str(self.db_path) if self.db_path is not None else self.db_url

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.should_exit = True
            self._thread.join(timeout=30)
            assert not self._thread.is_alive(), "the server did not stop within 30 s"
        self._client.close()


def _sqlite_path(db_url: str) -> Path | None:
    _, _, path = db_url.partition(":///")
    return Path(path) if path and path != ":memory:" else None


def launch(settings: Settings, *, send_buffer: int | None = None) -> LiveServer:
    """Start create_app(settings) under uvicorn in a thread; returns once it accepts requests.

    ``send_buffer`` fixes SO_SNDBUF of every accepted connection (Linux copies it from the
    listening socket), so that a client that stops reading blocks the server's writes after a
    few KiB instead of the several MiB the kernel would otherwise buffer.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if send_buffer is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    settings.host, settings.port = "127.0.0.1", port
    app = create_app(settings)
    server = make_server(app, settings, log_level="warning")
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"uvicorn-{port}", daemon=True
    )
    thread.start()
    # started is set after the lifespan startup (migrations, referee) has completed.
    for _ in range(3000):
        if server.started or not thread.is_alive():
            break
        threading.Event().wait(0.01)
    if not server.started:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        raise RuntimeError("the test server did not start (see the captured log above)")
    url = f"http://127.0.0.1:{port}"
    return LiveServer(
        url=url,
        ws_url=f"ws://127.0.0.1:{port}/ws",
        db_url=settings.db_url,
        db_path=_sqlite_path(settings.db_url),
        admin_token=settings.admin_token or "",
        app=app,
        settings=settings,
        _server=server,
        _thread=thread,
        _client=httpx.Client(base_url=url, timeout=30),
    )


# --- the store: --store sqlite | postgresql ---------------------------------------------------

STORES = ("sqlite", "postgresql")
#: A test is storage-facing when its fixtures include this one.
STORAGE_FIXTURE = "db_url"


def pytest_addoption(parser: pytest.Parser) -> None:
    default = os.environ.get("ARENA_TEST_STORE") or "sqlite"
    parser.addoption(
        "--store",
        choices=STORES,
        default=default,
        help=(
            "the database the storage-facing tests run on: sqlite (files under tmp_path; every "
            "test runs) or postgresql (a throwaway cluster; only the tests that use db_url and "
            "are not marked sqlite_only run). Default: $ARENA_TEST_STORE, else sqlite."
        ),
    )


def pytest_configure(config: pytest.Config) -> None:
    if _store(config) not in STORES:  # from ARENA_TEST_STORE: argparse did not check it
        raise pytest.UsageError(
            f"ARENA_TEST_STORE={_store(config)!r}: expected one of {', '.join(STORES)}"
        )
    config.addinivalue_line(
        "markers",
        "sqlite_only(reason): a test about the SQLite file itself; deselected with "
        "--store postgresql",
    )
    config.addinivalue_line(
        "markers",
        "postgresql_only: a test of what only PostgreSQL has (roles, privileges); run by "
        "--store postgresql only (it needs db_url)",
    )


def _store(config: pytest.Config) -> str:
    return str(config.getoption("store"))


def pytest_report_header(config: pytest.Config) -> str:
    if _store(config) == "postgresql":
        return "store: postgresql (a throwaway cluster, a database per storage-facing test)"
    return "store: sqlite (a file per test; --store postgresql for PostgreSQL)"


def _sqlite_only_reason(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("sqlite_only")
    if marker is None:
        return None
    reason = marker.kwargs.get("reason") or (marker.args[0] if marker.args else "")
    if not reason:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.sqlite_only needs a reason")
    return str(reason)


_DESELECTED = pytest.StashKey[tuple[int, int]]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With --store postgresql, deselect the tests marked sqlite_only and those that are not
    storage-facing (no db_url among their fixtures)."""
    marked = {id(item) for item in items if _sqlite_only_reason(item) is not None}
    if _store(config) != "postgresql":
        # The few tests of what only PostgreSQL does (its roles and privileges) run in the
        # PostgreSQL pass only.
        postgresql_only = [i for i in items if i.get_closest_marker("postgresql_only")]
        if postgresql_only:
            config.hook.pytest_deselected(items=postgresql_only)
            items[:] = [i for i in items if not i.get_closest_marker("postgresql_only")]
        return
    kept: list[pytest.Item] = []
    sqlite_only: list[pytest.Item] = []
    not_storage: list[pytest.Item] = []
    for item in items:
        if id(item) in marked:
            sqlite_only.append(item)
        elif STORAGE_FIXTURE not in getattr(item, "fixturenames", ()):
            not_storage.append(item)
        else:
            kept.append(item)
    config.stash[_DESELECTED] = (len(not_storage), len(sqlite_only))
    if sqlite_only or not_storage:
        config.hook.pytest_deselected(items=[*sqlite_only, *not_storage])
        items[:] = kept


def pytest_report_collectionfinish(config: pytest.Config) -> str | None:
    if _store(config) != "postgresql":
        return None
    not_storage, sqlite_only = config.stash.get(_DESELECTED, (0, 0))
    return (
        f"store postgresql: deselected {not_storage} tests that are not storage-facing (no "
        f"db_url) and {sqlite_only} marked sqlite_only"
    )


@pytest.fixture(scope="session")
def postgres_cluster(request: pytest.FixtureRequest) -> Iterator[PostgresCluster]:
    """The session's PostgreSQL cluster (--store postgresql), started at first use; without
    one, the run stops after the first test (every other would fail the same way)."""
    try:
        cluster = PostgresCluster.start()
    except PostgresUnavailable as error:
        why = f"--store postgresql: {error}"
    else:
        why = ""
    if why:
        request.session.shouldstop = "--store postgresql: no PostgreSQL cluster (see above)"
        pytest.fail(why, pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def db_store(request: pytest.FixtureRequest) -> str:
    """The store of this run: "sqlite" or "postgresql" (--store)."""
    return _store(request.config)


@pytest.fixture
def admin_token() -> str:
    return ADMIN_TOKEN


@pytest.fixture
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database: an SQLite file under tmp_path, or (--store postgresql) a new
    database in the session's cluster, dropped at teardown."""
    if _store(request.config) != "postgresql":
        yield f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"
        return
    cluster: PostgresCluster = request.getfixturevalue("postgres_cluster")
    url = cluster.create_database(request.node.name)
    try:
        yield url
    finally:
        cluster.drop_database(url)


@pytest.fixture
async def database(db_url: str) -> AsyncIterator[Database]:
    db = Database(db_url)
    await db.migrate()
    yield db
    await db.dispose()


@pytest.fixture
async def open_database(db_url: str) -> AsyncIterator[Callable[[str], Database]]:
    """``open_database(url)``: a Database on ``url`` (a live server's ``db_url``, say) in the
    test's own event loop, disposed at teardown (before ``db_url``'s database is dropped)."""
    opened: list[Database] = []

    def open_(url: str) -> Database:
        opened.append(Database(url))
        return opened[-1]

    yield open_
    for db in reversed(opened):
        await db.dispose()


@pytest.fixture
def start_server(db_url: str, admin_token: str) -> Iterator[Callable[..., LiveServer]]:
    started: list[LiveServer] = []

    def start(*, send_buffer: int | None = None, **overrides: Any) -> LiveServer:
        values: dict[str, Any] = {
            "db_url": db_url,
            "admin_token": admin_token,
            "print_admin_token": False,
            # No house bots unless a test asks for them: a bot waiting alone would otherwise
            # meet one after house_wait_s.
            "house_bots": "",
        }
        values.update(overrides)
        srv = launch(Settings(**values), send_buffer=send_buffer)
        started.append(srv)
        return srv

    yield start
    for srv in reversed(started):
        srv.stop()


@pytest.fixture
def live_server(start_server: Callable[..., LiveServer]) -> LiveServer:
    return start_server()


@pytest.fixture
def create_bot(live_server: LiveServer) -> Callable[..., tuple[str, str]]:
    return live_server.create_bot


@dataclass
class StoredMatch:
    match_id: str
    game: str
    bots: list[str]
    #: (ply, seat or None for chance, move text), in play order.
    events: list[tuple[int, int | None, str]]
    payoffs: list[float] | None
    termination: str | None
    final_position: dict[str, Any]


async def _store_match(
    database: Database,
    *,
    game: str = "tic_tac_toe",
    seed: int = 0,
    bots: list[str] | None = None,
    max_plies: int | None = None,
    finish: bool = True,
    policy: str = "forfeit",
) -> StoredMatch:
    from ply_arena import games
    from ply_arena.protocol import dice
    from ply_arena.server.repositories import bots as bot_repo
    from ply_arena.server.repositories import matches as match_repo

    rules = games.get(game)
    rng = random.Random(seed)
    names = bots or [f"bot{next(_names)}" for _ in range(rules.num_players)]
    match_id = f"m{seed}-{next(_names)}"
    async with database.session() as session:
        bot_ids = []
        for name in names:
            bot = await bot_repo.bot_by_name(session, name)
            if bot is None:
                bot, _ = await bot_repo.create_bot(session, name)
            bot_ids.append(bot.id)
        await match_repo.create_match(
            session,
            match_id=match_id,
            game=game,
            bot_ids=bot_ids,
            time_control={"move_ms": 1000, "bank_ms": 10_000},
            policy=policy,
            seed=(seed_value := rng.getrandbits(64)),
        )
    state = rules.initial_state()
    events: list[tuple[int, int | None, str]] = []
    ply = 0
    while not state.is_terminal() and (max_plies is None or ply < max_plies):
        if state.is_chance_node():
            # As the referee rolls: from the seed, so that the record verifies.
            move = dice.roll(str(seed_value), match_id, ply, state.chance_outcomes())
            seat = None
        else:
            move = rng.choice(list(state.actions()))
            seat = state.player
        text = rules.format_move(state, move)
        # One transaction per move, as the referee writes them.
        async with database.session() as session:
            await match_repo.record_move(
                session,
                match_id=match_id,
                ply=ply,
                seat=seat,
                move=text,
                think_ms=None if seat is None else rng.randrange(1000),
                info=None if seat is None else {"depth": ply % 5, "comment": f"ply {ply}"},
            )
        events.append((ply, seat, text))
        state = state.result(move)
        ply += 1
    final_position = rules.state_to_json(state)
    payoffs: list[float] | None = None
    termination: str | None = None
    if finish:
        termination = "normal" if state.is_terminal() else "move_limit"
        payoffs = [float(x) for x in state.returns()]
        async with database.session() as session:
            await match_repo.finish_match(
                session,
                match_id=match_id,
                payoffs=payoffs,
                termination=termination,
                at_fault=None,
                final_position=final_position,
            )
    return StoredMatch(match_id, game, names, events, payoffs, termination, final_position)


@pytest.fixture
def store_match() -> Callable[..., Awaitable[StoredMatch]]:
    return _store_match


def _why_no_browser() -> str | None:
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install -e '.[dev]')"
    if shutil.which("chromium") is None:
        return "no chromium on PATH (Debian: apt-get install chromium)"
    return None


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    why = _why_no_browser()
    if why is not None:
        if os.environ.get("ARENA_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests must run here (ARENA_REQUIRE_BROWSER=1): {why}")
        pytest.skip(f"browser tests skipped: {why}")
    screenshots = Path(os.environ.get("ARENA_SCREENSHOTS") or ROOT / "test-screenshots")
    async with launch_browser(screenshots) as opened:
        yield opened
