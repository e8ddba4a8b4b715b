"""The examples in examples/ play real matches against a real server.

The JavaScript bot needs Node.js (18+) and npm on the machine; its ``ws`` dependency is installed
here with ``npm ci`` when missing, so a fresh checkout passes. The Java bot needs a JDK (17+:
``javac`` and ``java``; .ci/run installs Debian's default-jdk-headless when javac is missing); it
is compiled here into a temporary folder.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import websockets
from _server_process import start_server_process
from websockets.asyncio.server import ServerConnection, serve

from ply_arena.games import State
from ply_arena.protocol.client import BotClient, Clock

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
JS = EXAMPLES / "js"
JAVA = EXAMPLES / "java"
GAME = "connect_four"


def random_choose(state: State, legal_moves: list[str], clock: Clock) -> str:
    return random.choice(legal_moves)


async def play_against_kit(
    server: Any, command: list[str], token: str, games: int, bot_url: str | None = None
) -> str:
    """Run ``command`` (an example bot, connecting to ``bot_url``, by default the server's)
    against a kit bot for ``games`` matches; its stdout."""
    _, kit_token = server.create_bot()
    kit = BotClient(server.ws_url, kit_token, random_choose, game=GAME, games=games)
    proc = await asyncio.create_subprocess_exec(
        *command, bot_url or server.ws_url, token, GAME, str(games),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        results, (out, err) = await asyncio.wait_for(
            asyncio.gather(kit.run(), proc.communicate()), 90
        )
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    assert len(results) == games
    for end in results:
        assert end.termination.value == "normal"
        stored = server.api("GET", f"/api/matches/{end.match_id}").json()
        assert stored["status"] == "finished" and len(stored["moves"]) == end.plies
    return out.decode()


def test_python_example_is_short() -> None:
    lines = (EXAMPLES / "random_bot.py").read_text().splitlines()
    assert len(lines) < 20


async def test_python_random_bot_plays(live_server: Any) -> None:
    _, token = live_server.create_bot()
    out = await play_against_kit(
        live_server, [sys.executable, str(EXAMPLES / "random_bot.py")], token, games=2
    )
    assert len([line for line in out.splitlines() if " normal " in line]) == 2


def ensure_js_deps() -> str:
    node = shutil.which("node")
    npm = shutil.which("npm")
    assert node and npm, "the JavaScript example test needs node and npm on the PATH"
    if not (JS / "node_modules" / "ws" / "package.json").exists():
        # npm ci installs exactly the locked versions (the registry must be reachable).
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=JS, check=True, timeout=300)
    return node


async def test_js_bot_plays(live_server: Any) -> None:
    node = ensure_js_deps()
    _, token = live_server.create_bot()
    out = await play_against_kit(live_server, [node, str(JS / "bot.js")], token, games=2)
    assert len([line for line in out.splitlines() if line.startswith("RESULT ")]) == 2


def compile_java(out: Path) -> str:
    """Compile examples/java/Bot.java into ``out``; the ``java`` to run it with."""
    javac, java = shutil.which("javac"), shutil.which("java")
    assert javac and java, "the Java example test needs a JDK (javac and java) on the PATH"
    subprocess.run(
        [javac, "-Xlint:all", "-Werror", "-d", str(out), str(JAVA / "Bot.java")],
        check=True,
        timeout=120,
    )
    return java


async def test_java_bot_plays(live_server: Any, tmp_path: Path) -> None:
    java = compile_java(tmp_path)
    _, token = live_server.create_bot()
    out = await play_against_kit(live_server, [java, "-cp", str(tmp_path), "Bot"], token, games=2)
    assert len([line for line in out.splitlines() if line.startswith("RESULT ")]) == 2


async def test_the_java_bot_joins_a_message_sent_in_pieces(
    live_server: Any, tmp_path: Path
) -> None:
    # Between the bot and the server, a relay sends every server message as several frames
    # (a WebSocket message in fragments, which the protocol allows): Java's onText gets each
    # piece with last=false until the final one, and the bot must join them before parsing.
    java = compile_java(tmp_path)
    pieces = 0

    async def relay(bot: ServerConnection) -> None:
        nonlocal pieces
        async with websockets.connect(live_server.ws_url) as arena:

            async def to_bot() -> None:
                nonlocal pieces
                async for text in arena:
                    assert isinstance(text, str)
                    parts = [text[i : i + 7] for i in range(0, len(text), 7)]
                    pieces += len(parts)
                    await bot.send(parts)  # an iterable: one message, one frame per part

            async def to_arena() -> None:
                async for text in bot:
                    await arena.send(text)

            done, pending = await asyncio.wait(
                [asyncio.create_task(to_bot()), asyncio.create_task(to_arena())],
                return_when=asyncio.FIRST_COMPLETED,
            )
            for task in pending:
                task.cancel()
            for task in done:  # one side closed: the relay's part is over
                error = task.exception()
                if error is not None and not isinstance(error, websockets.ConnectionClosed):
                    raise error

    async with serve(relay, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        _, token = live_server.create_bot()
        out = await play_against_kit(
            live_server,
            [java, "-cp", str(tmp_path), "Bot"],
            token,
            games=1,
            bot_url=f"ws://127.0.0.1:{port}/ws",
        )
    assert len([line for line in out.splitlines() if line.startswith("RESULT ")]) == 1
    assert pieces > 100  # every message did come in pieces


async def test_the_java_bot_stops_at_a_bad_token(live_server: Any, tmp_path: Path) -> None:
    # A refusal it cannot fix by reconnecting ends it (exit status 1), saying why.
    java = compile_java(tmp_path)
    proc = await asyncio.create_subprocess_exec(
        java, "-cp", str(tmp_path), "Bot", live_server.ws_url, "not-a-token", GAME,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1, err.decode()
    assert "error bad_token: " in err.decode()


def default_sigint() -> None:
    # A suite started in the background by a shell inherits SIGINT ignored; a user's bot does not.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def test_ctrl_c_stops_the_python_example_without_a_traceback(live_server: Any) -> None:
    _, token = live_server.create_bot()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(EXAMPLES / "random_bot.py"), live_server.ws_url, token, GAME, "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        preexec_fn=default_sigint,  # Ctrl+C as a terminal sends it, however pytest was started
    )  # fmt: skip
    assert proc.stderr is not None
    err: list[str] = []
    try:
        async with asyncio.timeout(30):
            while "waiting in the" not in (line := (await proc.stderr.readline()).decode()):
                assert line, "".join(err)  # the bot ended before it joined
                err.append(line)
            proc.send_signal(signal.SIGINT)  # what Ctrl+C sends
            rest, _ = await asyncio.gather(proc.stderr.read(), proc.wait())
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    text = "".join(err) + rest.decode()
    assert proc.returncode == 130, text
    assert "stopped by Ctrl+C" in text and "Traceback" not in text, text


async def test_the_python_example_says_a_misconfiguration_in_one_line(live_server: Any) -> None:
    # A bad token, an unknown game, an http:// URL: what to fix, not a traceback.
    _, token = live_server.create_bot()
    http_url = live_server.ws_url.replace("ws://", "http://")
    for url, bot_token, game, says in [
        (live_server.ws_url, "not-a-token", GAME, "error: bad_token: the token matches no bot"),
        (live_server.ws_url, token, "chess", "error: unknown_game"),
        (http_url, token, GAME, "is not a WebSocket URL: use ws://HOST:PORT/ws"),
    ]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(EXAMPLES / "random_bot.py"), url, bot_token, game,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        text = err.decode()
        assert proc.returncode == 1, text
        assert "Traceback" not in text, text
        last = text.strip().splitlines()[-1]
        assert last.startswith("error: ") and says in last, text


async def test_a_refused_bot_without_logging_gets_exactly_one_line(
    live_server: Any, tmp_path: Path
) -> None:
    # A student's first bot configures no logging: the refusal is said once, not twice.
    bot = tmp_path / "bot.py"
    bot.write_text(
        "import random\nfrom ply_arena import run_bot\n"
        "run_bot(__import__('sys').argv[1], 'not-a-token', "
        "lambda s, legal, c: random.choice(legal), game='connect_four')\n"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(bot), live_server.ws_url, cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1
    assert (out.decode(), err.decode()) == ("", "error: bad_token: the token matches no bot\n")


class HeldAtThirdMove:
    """A kit bot's ``choose`` that plays at random but holds its third move until ``release``:
    the match is then surely under way (4 plies or more) when the server stops, whatever the
    machine's pace. (A delay per move raced the stop: a quick Connect Four game could end
    before the server did.)"""

    def __init__(self) -> None:
        self.calls = 0
        self.holding = threading.Event()
        self.release = threading.Event()

    def __call__(self, state: State, legal_moves: list[str], clock: Clock) -> str:
        self.calls += 1
        if self.calls == 3:
            self.holding.set()
            # The kit runs choose in a thread of its own: this blocks nobody else. Once the
            # server is back this call's turn is gone, and the kit is asked again.
            self.release.wait(60)
        return random.choice(legal_moves)


async def test_js_bot_plays_its_match_on_across_a_server_restart(db_url: str) -> None:
    """SIGTERM in the middle of the JavaScript example's match: it sees close 1012, reconnects
    to the restarted server and plays the same match to its end."""
    node = ensure_js_deps()
    srv = start_server_process(db_url, house_bots="none")
    again = None
    token, kit_token = srv.create_bot("js-restart"), srv.create_bot("kit-restart")
    held = HeldAtThirdMove()
    kit = BotClient(srv.ws_url, kit_token, held, game=GAME, games=1, max_retries=50)
    proc = await asyncio.create_subprocess_exec(
        node, str(JS / "bot.js"), srv.ws_url, token, GAME, "1",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    playing = asyncio.create_task(kit.run())
    try:
        assert await asyncio.to_thread(held.holding.wait, 60), "the kit bot never held a move"
        # The match waits for the kit's third move: its first four plies are stored at once
        # (the last one may still be on its way to the database).
        async with httpx.AsyncClient(base_url=srv.url, timeout=5) as http, asyncio.timeout(30):
            while True:
                page = (await http.get("/api/matches?status=running")).json()
                if page["total"] == 1 and page["matches"][0]["plies"] >= 4:
                    cut = page["matches"][0]["id"]
                    break
                await asyncio.sleep(0.05)
        await asyncio.to_thread(srv.stop)
        again = start_server_process(db_url, port=srv.port, house_bots="none")
        held.release.set()
        (end,), (out, err) = await asyncio.wait_for(asyncio.gather(playing, proc.communicate()), 90)
    finally:
        held.release.set()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        playing.cancel()
        srv.stop()
        if again is not None:
            again.stop()
    assert proc.returncode == 0, err.decode()
    assert "the server is restarting" in out.decode(), out.decode()
    assert (end.match_id, end.termination.value) == (cut, "normal")
    assert [
        line.split()[1] for line in out.decode().splitlines() if line.startswith("RESULT ")
    ] == [cut], out.decode()
