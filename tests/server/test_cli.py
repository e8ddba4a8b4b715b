"""``arena serve``, ``arena bots`` and ``arena replay`` against a real database and server (an
SQLite file; the server's tests also on PostgreSQL with --store postgresql)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from ply_arena import games
from ply_arena.server.cli import app
from ply_arena.server.db.database import Database

runner = CliRunner()


@pytest.mark.sqlite_only("arena bots on an SQLite file: --db PATH, --init-db, read with sqlite3")
def test_bots_create_prints_the_token_once_and_stores_its_hash(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    result = runner.invoke(app, ["bots", "create", "alice", "--db", str(db), "--init-db"])
    assert result.exit_code == 0, result.output
    token = result.stdout.strip().splitlines()[-1]
    assert len(token) >= 32
    with sqlite3.connect(db) as raw:
        rows = raw.execute("SELECT name, token_hash, enabled FROM bots").fetchall()
    assert rows == [("alice", hashlib.sha256(token.encode()).hexdigest(), 1)]

    again = runner.invoke(app, ["bots", "create", "alice", "--db", str(db)])
    assert again.exit_code == 1 and "already exists" in again.output
    bad = runner.invoke(app, ["bots", "create", "no spaces", "--db", f"sqlite+aiosqlite:///{db}"])
    assert bad.exit_code == 1 and "bad bot name" in bad.output

    assert runner.invoke(app, ["bots", "create", "bob", "--db", str(db)]).exit_code == 0
    listed = runner.invoke(app, ["bots", "list", "--db", str(db)])
    assert listed.exit_code == 0
    assert "alice" in listed.stdout and "bob" in listed.stdout and token not in listed.stdout

    rotated = runner.invoke(app, ["bots", "rotate", "alice", "--db", str(db)])
    assert rotated.exit_code == 0
    new_token = rotated.stdout.strip().splitlines()[-1]
    with sqlite3.connect(db) as raw:
        (digest,) = raw.execute("SELECT token_hash FROM bots WHERE name='alice'").fetchone()
    assert digest == hashlib.sha256(new_token.encode()).hexdigest() and new_token != token
    assert runner.invoke(app, ["bots", "rotate", "ghost", "--db", str(db)]).exit_code == 1


@pytest.mark.sqlite_only("the default database: the file arena.db in the working directory")
def test_bots_default_to_arena_db_in_the_working_directory(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB_URL", raising=False)
    created = runner.invoke(app, ["bots", "create", "carol", "--init-db"])
    assert created.exit_code == 0, created.output
    assert (tmp_path / "arena.db").exists()
    assert created.stderr == (
        f"database: {tmp_path.resolve() / 'arena.db'} (new, from the default: arena.db in the "
        "current directory)\n"
    )
    listed = runner.invoke(app, ["bots", "list"])
    assert "carol" in listed.stdout
    assert listed.stderr.startswith(f"database: {tmp_path.resolve() / 'arena.db'} (from the ")


@pytest.mark.sqlite_only("a missing SQLite file is not created without --init-db")
def test_bots_refuse_to_create_a_database_unless_asked(tmp_path: Path, monkeypatch: Any) -> None:
    # In a directory without the arena's database, a bot written to a new arena.db here would
    # be refused by the running server: say where it looked and how to point at the right one.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB_URL", raising=False)
    missing = tmp_path.resolve() / "arena.db"
    for command in (["create", "dave"], ["list"], ["rotate", "dave"]):
        result = runner.invoke(app, ["bots", *command])
        assert result.exit_code == 1, result.output
        assert result.stderr.startswith(f"error: no arena database at {missing} (from the default")
        assert "--db PATH or ARENA_DB_URL" in result.stderr and "--init-db" in result.stderr
        assert result.stdout == ""
    assert list(tmp_path.iterdir()) == []

    monkeypatch.setenv("ARENA_DB_URL", str(tmp_path / "elsewhere.db"))
    result = runner.invoke(app, ["bots", "list"])
    assert result.exit_code == 1
    assert f"no arena database at {tmp_path.resolve()}/elsewhere.db (from ARENA_DB_URL)" in (
        result.stderr
    )


def test_bots_use_the_servers_database(live_server: Any, monkeypatch: Any) -> None:
    # The server created its database: the CLI adds a bot to it (no --init-db needed), says
    # which database it used (the file, or the URL), and the running server accepts the new
    # bot's token. (Without CI's ARENA_REQUIRE_BROWSER and ARENA_REQUIRE_NGINX, which the CLI
    # would rightly call "not an arena setting" on stderr, once per process.)
    monkeypatch.delenv("ARENA_REQUIRE_BROWSER", raising=False)
    monkeypatch.delenv("ARENA_REQUIRE_NGINX", raising=False)
    result = runner.invoke(app, ["bots", "create", "erin", "--db", live_server.db_option])
    assert result.exit_code == 0, result.output
    shown = live_server.db_path.resolve() if live_server.db_path else live_server.db_url
    assert result.stderr == f"database: {shown} (from --db)\n"
    listed = live_server.api("GET", "/api/bots").json()
    assert "erin" in [b["name"] for b in listed["bots"]]
    token = result.stdout.strip().splitlines()[-1]
    from websockets.sync.client import connect

    with connect(live_server.ws_url) as ws:
        ws.send(json.dumps({"type": "hello", "protocol": 1, "token": token}))
        assert json.loads(ws.recv(timeout=10))["bot"] == "erin"


def _commands(group: Any, path: list[str]) -> list[list[str]]:
    found = [path]
    for name, command in getattr(group, "commands", {}).items():
        found += _commands(command, [*path, name])
    return found


def test_every_help_shows_flags_as_flags() -> None:
    import typer

    root = typer.main.get_command(app)
    commands = _commands(root, [])
    assert ["bots", "create"] in commands and ["analyze"] in commands
    for command in commands:
        result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "160"})
        assert result.exit_code == 0, result.output
        assert "<bool>" not in result.stdout, (command, result.stdout)
        assert "--help " in result.stdout
    analyze_help = runner.invoke(app, ["analyze", "--help"], env={"COLUMNS": "160"}).stdout
    assert any(line.split()[1:3] == ["--trace", "Also"] for line in analyze_help.splitlines())


def test_replay_prints_every_board(live_server: Any, store_match: Any) -> None:
    async def write() -> Any:
        db = Database(live_server.db_url)
        try:
            return await store_match(db, game="tic_tac_toe", seed=31)
        finally:
            await db.dispose()

    m = asyncio.run(write())
    result = runner.invoke(app, ["replay", m.match_id, "--url", live_server.url])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith(f"match {m.match_id}  tic_tac_toe  (finished)")
    assert "the server restarted" not in out
    rules = games.get("tic_tac_toe")
    state = rules.initial_state()
    position = out.index(rules.render(state))
    for ply, seat, text in m.events:
        state = state.result(rules.parse_move(state, text))
        head = f"ply {ply}: seat {seat} ({m.bots[seat]}) plays {text}"
        position = out.index(head, position)
        # The info the bot sent with the move, in one line under it (store_match sends some).
        info_line = f'\n  depth {ply % 5}  comment "ply {ply}"\n'
        assert out[position:].split("\n", 1)[1].startswith(info_line[1:]), out[position:]
        position = out.index(rules.render(state), position)
    assert f"termination: {m.termination}" in out
    assert "verified: the stored result re-derives from the stored moves" in out

    missing = runner.invoke(app, ["replay", "nope", "--url", live_server.url])
    assert missing.exit_code == 1 and "not_found" in missing.output

    # The bots' WebSocket address, pasted, names the same server.
    pasted = runner.invoke(app, ["replay", m.match_id, "--url", live_server.ws_url])
    assert pasted.exit_code == 0, pasted.output
    assert pasted.stdout == out


def test_replay_reports_an_unreachable_server() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = runner.invoke(app, ["replay", "x", "--url", f"http://127.0.0.1:{port}"])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: cannot reach http://127.0.0.1:{port}: ")
    assert result.stderr.endswith(
        f"; is the server at http://127.0.0.1:{port}? give --url http://HOST:PORT\n"
    )


def test_replay_reads_the_server_address_from_what_is_pasted() -> None:
    import doctest

    from ply_arena.server.cli import _server_api, replay

    assert doctest.testmod(_server_api).failed == 0
    for pasted, address in [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("http://127.0.0.1:8000/", "http://127.0.0.1:8000"),
        ("ws://127.0.0.1:8766/ws", "http://127.0.0.1:8766"),
        ("wss://arena.example.org/ws", "https://arena.example.org"),
        ("https://example.org/arena/", "https://example.org/arena"),
        ("localhost:8000", "http://localhost:8000"),
    ]:
        assert _server_api.server_address(pasted) == address
    assert replay.format_info(None) == replay.format_info({}) == ""
    long = {"score": -1.5, "pv": [str(i) for i in range(12)], "comment": "x" * 100}
    assert replay.format_info(long) == (
        'score -1.5  pv 0 1 2 3 4 5 6 7 ... (12 moves)  comment "' + "x" * 77 + '..."'
    )
    # A bot's info cannot forge a line of the replay nor drive the terminal.
    forged = {"pv": ["b2", "\n\nresult: [1.0, -1.0]"], "comment": "\x1b[2J\x07\x00 ok\u202e"}
    shown = replay.format_info(forged)
    assert "\n" not in shown and not any(c in shown for c in "\x1b\x07\x00\u202e")
    assert shown == 'pv b2 \\n\\nresult: [1.0, -1.0]  comment "\\x1b[2J\\x07\\x00 ok\\u202e"'


@pytest.mark.sqlite_only("arena serve --db FILE: the new file, in WAL mode, read with sqlite3")
def test_serve_migrates_prints_the_admin_token_and_serves(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    db = tmp_path / "served.db"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ply_arena",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--db",
            str(db),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, proc.communicate()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "arena serve did not come up in 30 s"
            time.sleep(0.1)
        url = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{url}/api/games", timeout=5).status_code == 200
    finally:
        # SIGTERM, as `docker stop` sends; uvicorn shuts down cleanly, then re-raises the signal.
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode in (0, -signal.SIGTERM), err
    assert "Application shutdown complete" in err
    token = err.split("ARENA_ADMIN_TOKEN):", 1)[1].split()[0]
    with sqlite3.connect(db) as raw:
        (stored,) = raw.execute("SELECT token_hash FROM admin_tokens").fetchone()
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert stored == hashlib.sha256(token.encode()).hexdigest()
    assert f"http://127.0.0.1:{port}" in out


def test_settings_come_from_the_environment_and_options() -> None:
    from ply_arena.server.settings import Settings

    env = {
        "ARENA_PORT": "9001",
        "ARENA_ADMIN_TOKEN": "tok",
        "ARENA_HEARTBEAT_S": "2.5",
        "ARENA_DB_URL": "data/x.db",
        "ARENA_PRINT_ADMIN_TOKEN": "no",
    }
    settings = Settings.from_env(env, host="0.0.0.0")
    assert (settings.port, settings.admin_token, settings.heartbeat_s, settings.host) == (
        9001,
        "tok",
        2.5,
        "0.0.0.0",
    )
    assert settings.db_url == "sqlite+aiosqlite:///data/x.db"
    assert settings.print_admin_token is False
    assert Settings.from_env({}, port=None).port == 8000
    assert Settings.from_env({}).db_url == "sqlite+aiosqlite:///arena.db"


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("ARENA_RATED_CHALLENGES", "ture", "expected true or false"),
        ("ARENA_PORT", "abc", "expected a whole number"),
        ("ARENA_PAIRING_WINDOW", "nan", "expected a finite number"),
        ("ARENA_HEARTBEAT_S", "2,5", "expected a number"),
    ],
)
def test_a_setting_with_a_typo_is_refused_naming_it(name: str, value: str, says: str) -> None:
    from ply_arena.server.settings import Settings, SettingsError

    with pytest.raises(SettingsError) as refused:
        Settings.from_env({name: value})
    assert str(refused.value).startswith(f"{name}={value!r}: {says}")
    assert Settings.from_env({"ARENA_RATED_CHALLENGES": " Off "}).rated_challenges is False
    assert Settings.from_env({"ARENA_RATED_CHALLENGES": "YES"}).rated_challenges is True


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("ARENA_PORT", "99999", "expected a port, 0..65535"),
        ("ARENA_HEARTBEAT_S", "0", "expected more than 0"),
        ("ARENA_RATE_LIMIT_BURST", "0", "expected at least 1"),
        ("ARENA_MAX_OUTBOUND_FRAMES", "0", "expected at least 16"),
        ("ARENA_HOUSE_WORKERS", "-3", "expected at least 0"),
        ("ARENA_RATING_SIGMA", "0", "expected more than 0"),
    ],
)
def test_a_setting_that_cannot_work_is_refused(name: str, value: str, says: str) -> None:
    from ply_arena.server.settings import Settings, SettingsError

    with pytest.raises(SettingsError, match=f"^{name}=.*: {says}"):
        Settings.from_env({name: value})


def test_an_unknown_arena_variable_is_named_with_the_closest_setting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ply_arena.server.settings import Settings

    settings = Settings.from_env({"ARENA_HOUSEBOTS_TYPO_TEST": "none", "ARENA_BOT_TOKEN": "t"})
    assert settings.house_bots == "default"
    err = capsys.readouterr().err
    assert "warning: ARENA_HOUSEBOTS_TYPO_TEST is not an arena setting, ignored" in err
    assert "ARENA_BOT_TOKEN" not in err  # read by arena agent, not a typo
    Settings.from_env({"ARENA_PROT": "9200"})
    assert "ARENA_PROT is not an arena setting, ignored; did you mean ARENA_PORT?" in (
        capsys.readouterr().err
    )


def test_arena_serve_says_a_bad_setting_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "ARENA_PORT": "abc"}
    done = subprocess.run(
        [sys.executable, "-m", "ply_arena", "serve", "--db",
         str(tmp_path / "x.db")],
        capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == "error: ARENA_PORT='abc': expected a whole number", done.stderr
    assert not (tmp_path / "x.db").exists()


@pytest.mark.sqlite_only("files that are not the arena's SQLite database")
def test_a_file_that_is_not_the_arenas_database_is_refused_untouched(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as raw:
        raw.execute("CREATE TABLE notes (x)")
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    for path, says in [(other, "of something else (tables: notes)"), (text, "not an SQLite")]:
        before = path.read_bytes()
        listed = runner.invoke(app, ["bots", "list", "--db", str(path)])
        assert listed.exit_code == 1 and says in listed.output, listed.output
        assert "Traceback" not in listed.output
        served = subprocess.run(
            [sys.executable, "-m", "ply_arena", "serve", "--db",
             str(path), "--port", "1"],
            capture_output=True, text=True, timeout=60, cwd=tmp_path,
        )  # fmt: skip
        assert served.returncode == 1 and says in served.stderr, served.stderr
        assert path.read_bytes() == before  # nothing was written into it
    # An empty file counts as no database: refused without --init-db, made one with it.
    empty = tmp_path / "empty.db"
    empty.touch()
    assert runner.invoke(app, ["bots", "list", "--db", str(empty)]).exit_code == 1
    made = runner.invoke(app, ["bots", "create", "ann", "--db", str(empty), "--init-db"])
    assert made.exit_code == 0, made.output


def test_database_urls_get_their_driver_and_print_without_password() -> None:
    from ply_arena.server.settings import normalize_db_url, shown_db_url

    assert normalize_db_url("x.db") == "sqlite+aiosqlite:///x.db"
    assert normalize_db_url("sqlite:///x.db") == "sqlite+aiosqlite:///x.db"
    # As hosting services hand them out:
    assert normalize_db_url("postgres://u:p@h:5433/d") == "postgresql+asyncpg://u:p@h:5433/d"
    assert normalize_db_url("postgresql://u@h/d") == "postgresql+asyncpg://u@h/d"
    assert normalize_db_url("postgresql+asyncpg://u@h/d") == "postgresql+asyncpg://u@h/d"
    assert shown_db_url("postgresql+asyncpg://u:s3cret@h/d") == "postgresql+asyncpg://u:***@h/d"
    assert shown_db_url("sqlite+aiosqlite:///x.db") == "sqlite+aiosqlite:///x.db"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("mysql+aiomysql://u@h/d", "stores its data in SQLite or PostgreSQL, not mysql"),
        ("postgresql+psycopg2://u@h/d", "through asyncpg, not psycopg2"),
        # Nothing listens on port 1: the server is down, said with the URL, password hidden.
        (
            "postgresql://u:s3cret@127.0.0.1:1/d",
            "cannot open the database postgresql+asyncpg://u:***@",
        ),
    ],
)
def test_arena_serve_says_a_database_it_cannot_use_in_one_line(
    tmp_path: Path, url: str, says: str
) -> None:
    # No ARENA_* variables of the test run (CI's ARENA_REQUIRE_BROWSER would add its own line:
    # "not an arena setting").
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    done = subprocess.run(
        [sys.executable, "-m", "ply_arena", "serve", "--db", url, "--port", "1"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], done.stderr
    assert "s3cret" not in done.stderr + done.stdout


def test_a_missing_postgresql_database_is_said_by_every_command(db_url: str) -> None:
    from sqlalchemy.engine import make_url

    if not db_url.startswith("postgresql"):
        # On SQLite a missing file is refused by name already (the bots tests above).
        db_url = "postgresql+asyncpg://arena@127.0.0.1:1/none"
    missing = make_url(db_url).set(database="no_such_database").render_as_string(False)
    done = subprocess.run(
        [sys.executable, "-m", "ply_arena", "bots", "list", "--db", missing],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("error: cannot open the database ")
    assert "Traceback" not in done.stderr


@pytest.mark.postgresql_only
def test_a_database_the_arenas_role_does_not_own_is_said_with_the_fix(db_url: str) -> None:
    """PostgreSQL 15+: only a database's owner may create tables in its public schema."""
    import asyncio

    import asyncpg  # type: ignore[import-untyped]
    from sqlalchemy.engine import make_url

    url = make_url(db_url)

    async def add_student() -> None:
        admin = await asyncpg.connect(
            host=url.host, port=url.port, user=url.username, database=url.database
        )
        try:
            await admin.execute("DROP ROLE IF EXISTS student")
            await admin.execute("CREATE ROLE student LOGIN")
            await admin.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        finally:
            await admin.close()

    asyncio.run(add_student())
    student_url = url.set(username="student").render_as_string(hide_password=False)
    done = subprocess.run(
        [sys.executable, "-m", "ply_arena", "bots", "list", "--db", student_url],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: cannot create the arena's tables in "), done.stderr
    assert "permission denied for schema public" in last and "createdb -O student" in last
    assert "Traceback" not in done.stderr


def test_replay_says_where_the_server_restarted(live_server: Any, store_match: Any) -> None:
    from ply_arena.server.repositories import resume

    async def write() -> Any:
        db = Database(live_server.db_url)
        try:
            m = await store_match(db, game="tic_tac_toe", seed=32)
            async with db.session() as session:
                await resume.note_resumed(session, match_id=m.match_id, ply=2)
            return m
        finally:
            await db.dispose()

    m = asyncio.run(write())
    result = runner.invoke(app, ["replay", m.match_id, "--url", live_server.url])
    assert result.exit_code == 0, result.output
    restarted = "(the server restarted here: the match went on from this ply)\nply 2: seat"
    assert result.stdout.count("the server restarted") == 1 and restarted in result.stdout
