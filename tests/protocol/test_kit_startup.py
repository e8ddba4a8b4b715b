"""A student's bot starts whatever it keeps next to it: files named games.py, protocol.py,
server.py or reference_agents.py are simply the student's own, since Ply Arena installs one
import name, ``ply_arena``. Real subprocesses in temporary folders, as a student runs them.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ply_arena.games import State
from ply_arena.protocol.client import BotClient, Clock

ROOT = Path(__file__).resolve().parents[2]
#: What a student might keep next to a bot, each with something of the student's own in it.
OWN_FILES = {
    "games.py": "MY_GAMES = ['mine']\n",
    "protocol.py": "VERSION = 'my protocol notes'\n",
    "server.py": "def my_server():\n    return 'mine'\n",
    "reference_agents.py": "MY_AGENTS = ['mine']\n",
}
#: Imports the student's own modules first, then the kit, and shows that both are what they are.
BOT_HEAD = """\
import games, protocol, server, reference_agents
from ply_arena import run_bot, get

assert games.MY_GAMES == ['mine'] and protocol.VERSION == 'my protocol notes'
assert server.my_server() == 'mine' and reference_agents.MY_AGENTS == ['mine']
print('kit and own files imported', get('connect_four').num_players)
"""


def student_folder(folder: Path, script: str) -> Path:
    for name, text in OWN_FILES.items():
        (folder / name).write_text(text)
    bot = folder / "bot.py"
    bot.write_text(script)
    return bot


def run_python(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in ``folder`` (Python puts the script's folder first on sys.path)."""
    return subprocess.run(
        [sys.executable, *args], cwd=folder, capture_output=True, text=True, timeout=60
    )


def test_a_students_files_named_like_our_folders_are_their_own(tmp_path: Path) -> None:
    student_folder(tmp_path, BOT_HEAD)
    done = run_python(tmp_path, "bot.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "kit and own files imported 2\n"


def test_the_kit_first_and_the_students_files_after(tmp_path: Path) -> None:
    kit_first = "from ply_arena import run_bot\n" + BOT_HEAD
    student_folder(tmp_path, kit_first)
    done = run_python(tmp_path, "bot.py")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("with_init", [False, True])
def test_a_students_folders_named_like_ours_are_their_own(tmp_path: Path, with_init: bool) -> None:
    # Folders for notes or code: games/ and protocol/ (protocol/client.py even), with or
    # without __init__.py.
    for name in ("games", "protocol"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "notes.md").write_text("try iterative deepening\n")
        (folder / "client.py").write_text("MINE = True\n")
        if with_init:
            (folder / "__init__.py").write_text("")
    bot = "import protocol.client\nfrom ply_arena import run_bot\nprint(protocol.client.MINE)\n"
    (tmp_path / "bot.py").write_text(bot)
    done = run_python(tmp_path, "bot.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True\n"


def test_the_example_bot_without_arguments_prints_its_usage(tmp_path: Path) -> None:
    done = run_python(tmp_path, str(ROOT / "examples" / "random_bot.py"))
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "Plays random legal moves. Usage: python random_bot.py ws://HOST:PORT/ws TOKEN GAME [GAMES]"
    )


PLAYING_BOT = (
    BOT_HEAD
    + """\
import random, sys

def choose(state, legal_moves, clock):
    return random.choice(legal_moves)

url, token = sys.argv[1:3]
for end in run_bot(url, token, choose, game='connect_four', games=1):
    print(end.match_id, end.termination.value)
"""
)


def random_choose(state: State, legal_moves: list[str], clock: Clock) -> str:
    return random.choice(legal_moves)


async def test_a_bot_beside_its_own_games_protocol_and_server_py_plays_a_match(
    live_server: Any, tmp_path: Path
) -> None:
    bot = student_folder(tmp_path, PLAYING_BOT)
    _, token = live_server.create_bot()
    _, opponent_token = live_server.create_bot()
    opponent = BotClient(live_server.ws_url, opponent_token, random_choose, game="connect_four")
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, str(bot), live_server.ws_url, token),
        cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        results, (out, err) = await asyncio.wait_for(
            asyncio.gather(opponent.run(), proc.communicate()), 90
        )
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    first, second = out.decode().splitlines()
    assert first == "kit and own files imported 2"
    match_id, termination = second.split()
    assert termination == "normal" and match_id == results[0].match_id
    stored = live_server.api("GET", f"/api/matches/{match_id}").json()
    assert stored["status"] == "finished"
