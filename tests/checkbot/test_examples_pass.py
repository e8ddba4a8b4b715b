"""``arena check-bot`` as a process, against the example bots as processes: the Python random bot,
the JavaScript bot, the Java bot and ``arena agent`` with a reference agent pass; a broken bot
makes the command exit 1; ``--direct`` checks a bot already connected to the arena; what cannot
run at all exits 2 in one line.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ply_arena.server.cli import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
ARENA = [sys.executable, "-m", "ply_arena"]
#: The processes import this checkout, whatever is installed.
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
#: Short clocks keep the sessions short; the defaults are the game's.
CLOCK = ["--move-ms", "400", "--bank-ms", "400"]


BotCommand = Callable[[str, str, str], list[str]]


async def cli_check(
    server: Any, tmp_path: Path, game: str, bot: BotCommand, *options: str
) -> tuple[int, str, str]:
    """Run ``arena check-bot`` and, once it says where it waits, the bot ``bot(url, token,
    game)``; the command's exit status, its output and the bot's."""
    _, checker_token = server.create_bot()
    _, token = server.create_bot()
    check = await asyncio.create_subprocess_exec(
        *ARENA, "check-bot", "--url", server.ws_url, "--token", checker_token, "--game", game,
        "--listen", "127.0.0.1:0", "--wait", "30", "--seed", "1", *CLOCK, *options,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=ENV,
    )  # fmt: skip
    assert check.stdout is not None
    lines: list[str] = []
    player = None
    log = tmp_path / "bot.log"
    try:
        with log.open("wb") as sink:
            async with asyncio.timeout(50):
                while line := (await check.stdout.readline()).decode():
                    lines.append(line)
                    if line.startswith("waiting for your bot at "):
                        player = await asyncio.create_subprocess_exec(
                            *bot(line.split()[-1], token, game), stdout=sink, stderr=sink, env=ENV
                        )
                await check.wait()
    finally:
        for proc in (check, player):
            if proc is not None and proc.returncode is None:
                proc.kill()
                await proc.wait()
    assert check.returncode is not None
    return check.returncode, "".join(lines), log.read_text()


async def test_the_python_example_passes_every_item(live_server: Any, tmp_path: Path) -> None:
    def bot(url: str, token: str, game: str) -> list[str]:
        return [sys.executable, str(EXAMPLES / "random_bot.py"), url, token, game, "0"]

    status, output, _ = await cli_check(
        live_server, tmp_path, "connect_four", bot, "--with-backgammon"
    )
    assert status == 0, output
    assert "11 passed, 0 failed, 0 not checked" in output, output
    assert "PASS  survives chance events (backgammon):" in output


def ensure_js_deps() -> str:
    """node, with the example's ``ws`` installed (as tests/examples does)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    assert node and npm, "the JavaScript example needs node and npm on the PATH"
    js = EXAMPLES / "js"
    if not (js / "node_modules" / "ws" / "package.json").exists():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=js, check=True, timeout=300)
    return node


async def test_the_javascript_example_passes(live_server: Any, tmp_path: Path) -> None:
    node = ensure_js_deps()

    def bot(url: str, token: str, game: str) -> list[str]:
        return [node, str(EXAMPLES / "js" / "bot.js"), url, token, game, "0"]

    status, output, _ = await cli_check(live_server, tmp_path, "tic_tac_toe", bot)
    assert status == 0, output
    assert "10 passed, 0 failed, 1 not checked" in output, output
    assert "from 'js-example/1.0'" in output


async def test_the_java_example_passes(live_server: Any, tmp_path: Path) -> None:
    javac, java = shutil.which("javac"), shutil.which("java")
    assert javac and java, "the Java example needs a JDK (javac and java) on the PATH"
    classes = tmp_path / "classes"
    subprocess.run(
        [javac, "-d", str(classes), str(EXAMPLES / "java" / "Bot.java")], check=True, timeout=120
    )

    def bot(url: str, token: str, game: str) -> list[str]:
        return [java, "-cp", str(classes), "Bot", url, token, game, "0"]

    status, output, log = await cli_check(live_server, tmp_path, "connect_four", bot)
    assert status == 0, output + log
    assert "10 passed, 0 failed, 1 not checked" in output, output
    assert "from 'java-example/1.0'" in output


async def test_arena_agent_with_a_reference_agent_passes(live_server: Any, tmp_path: Path) -> None:
    def bot(url: str, token: str, game: str) -> list[str]:
        return [*ARENA, "agent", game, "alphabeta:depth=2", "--url", url, "--token", token,
                "--games", "0"]  # fmt: skip

    status, output, log = await cli_check(live_server, tmp_path, "connect_four", bot)
    assert status == 0, output + log
    assert "10 passed, 0 failed, 1 not checked" in output, output
    assert "from 'arena-agent/alphabeta'" in output


async def test_a_failing_item_makes_the_command_exit_1(live_server: Any, tmp_path: Path) -> None:
    def bot(url: str, token: str, game: str) -> list[str]:
        return [sys.executable, str(ROOT / "tests" / "checkbot" / "broken_bot.py"), "illegal",
                url, token]  # fmt: skip

    status, output, _ = await cli_check(live_server, tmp_path, "tic_tac_toe", bot)
    assert status == 1, output
    assert "FAIL  plays legal moves:" in output
    assert "should: send one of the turn's legal_moves, exactly as written" in output
    assert "9 passed, 1 failed, 1 not checked" in output, output


async def test_direct_mode_checks_a_bot_already_connected(live_server: Any) -> None:
    checker_name, checker_token = live_server.create_bot()
    name, token = live_server.create_bot()
    # The bot accepts the checker's challenges and plays two at once, for ever.
    agent = await asyncio.create_subprocess_exec(
        *ARENA, "agent", "tic_tac_toe", "random", "--url", live_server.ws_url, "--token", token,
        "--games", "0", "--concurrent", "2", "--accept-from", checker_name,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=ENV,
    )  # fmt: skip
    assert agent.stdout is not None
    try:
        async with asyncio.timeout(30):  # it logs in first (the kit logs it)
            while f"logged in as {name}" not in (await agent.stdout.readline()).decode():
                pass
        check = await asyncio.create_subprocess_exec(
            *ARENA, "check-bot", "--url", live_server.ws_url, "--token", checker_token,
            "--game", "tic_tac_toe", "--direct", "--bot", name, *CLOCK,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=ENV,
        )  # fmt: skip
        out, _ = await asyncio.wait_for(check.communicate(), 50)
    finally:
        agent.kill()
        await agent.wait()
    output = out.decode()
    assert check.returncode == 0, output
    assert "(direct mode: the hello itself was not seen)" in output
    assert "SKIP  answers ping" in output and "SKIP  resyncs after a reconnect" in output
    assert "PASS  plays two matches at once" in output
    assert "PASS  accepts the checker's challenges (direct mode only)" in output
    assert "8 passed, 0 failed, 4 not checked" in output, output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--game", "chinese_checkers"], "check-bot plays two-player games"),
        (["--game", "chess"], "unknown game 'chess': the arena plays backgammon"),
        (["--game", "tic_tac_toe", "--direct"], "--direct needs --bot NAME"),
        (["--game", "tic_tac_toe", "--listen", "8765"], "expected HOST:PORT"),
        (["--game", "tic_tac_toe", "--url", "http://127.0.0.1:1/ws"], "not a WebSocket URL"),
    ],
)
def test_what_cannot_run_exits_2_in_one_line(live_server: Any, args: list[str], says: str) -> None:
    _, token = live_server.create_bot()
    result = CliRunner().invoke(
        app, ["check-bot", "--url", live_server.ws_url, "--token", token, *args]
    )
    assert result.exit_code == 2, result.output
    assert says in result.output, result.output
    assert result.output.count("\n") == 1, result.output


def test_a_refused_checker_token_exits_2(live_server: Any) -> None:
    result = CliRunner().invoke(
        app,
        ["check-bot", "--url", live_server.ws_url, "--token", "nope", "--game", "tic_tac_toe"],
    )
    assert result.exit_code == 2
    assert "the arena refused the checker's token" in result.output


async def test_direct_mode_fails_a_bot_that_declines_the_checker(live_server: Any) -> None:
    _, checker_token = live_server.create_bot()
    name, token = live_server.create_bot()
    # A kit bot in the lobby that accepts no challenge (the kit's default).
    agent = await asyncio.create_subprocess_exec(
        *ARENA, "agent", "tic_tac_toe", "random", "--url", live_server.ws_url, "--token", token,
        "--games", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=ENV,
    )  # fmt: skip
    assert agent.stdout is not None
    try:
        async with asyncio.timeout(30):
            while f"logged in as {name}" not in (await agent.stdout.readline()).decode():
                pass
        result = await asyncio.to_thread(
            CliRunner().invoke,
            app,
            ["check-bot", "--url", live_server.ws_url, "--token", checker_token,
             "--game", "tic_tac_toe", "--direct", "--bot", name],
        )  # fmt: skip
    finally:
        agent.kill()
        await agent.wait()
    assert result.exit_code == 1, result.output
    assert "FAIL  accepts the checker's challenges (direct mode only): plain: it accepts no " in (
        result.output
    )
    assert f"--accept-from {name}" not in result.output  # it names the checker, not the bot


FAILING_CHOOSE = """
import sys
from ply_arena.protocol.client import run_bot

moves = 0

def choose(state, legal_moves, clock):
    global moves
    moves += 1
    if moves == 3:
        raise KeyError("a bug in the bot")
    return legal_moves[0]

for end in run_bot(sys.argv[1], sys.argv[2], choose, game=sys.argv[3], games=0):
    pass
"""


async def test_a_kit_bot_whose_choose_raises_is_told_to_fix_choose(
    live_server: Any, tmp_path: Path
) -> None:
    # The kit resigns and stops when choose() raises: the checklist must say that the bot
    # failed (and where the traceback is), not that its connection did.
    script = tmp_path / "failing_bot.py"
    script.write_text(FAILING_CHOOSE)

    def bot(url: str, token: str, game: str) -> list[str]:
        return [sys.executable, str(script), url, token, game]

    status, output, log = await cli_check(live_server, tmp_path, "connect_four", bot)
    assert status == 1, output
    assert "KeyError" in log and "a bug in the bot" in log, log
    assert "FAIL  stays connected:" in output, output
    assert "after it resigned match" in output, output
    assert "fix choose()" in output and "on_choose_error='random'" in output, output
    assert "kit: games=0" not in output.split("FAIL  stays connected:")[1].split("\n\n")[0]
