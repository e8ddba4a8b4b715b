"""README.md's quickstart, end to end, as a newcomer types it: real `arena` processes.

``arena serve`` in an empty directory (so the database is the default ``arena.db`` there), two
``arena bots create`` whose printed tokens are parsed, two ``arena agent`` processes that meet in
the lobby, then ``GET /api/matches`` and ``arena replay``. Only the port differs from the README
(a free one instead of 8000) and the agents are the fast ``random`` agent with ``--games 1``.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from ply_arena import games

GAME = "connect_four"


def _arena() -> str:
    """The installed ``arena`` console script (the README's command), next to this Python first."""
    found = shutil.which("arena", path=str(Path(sys.executable).parent)) or shutil.which("arena")
    assert found, "the `arena` command is not installed (pip install -e .)"
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [_arena(), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"arena {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done


def _wait_healthy(url: str, proc: subprocess.Popen[Any], log: Path) -> None:
    deadline = time.monotonic() + 30
    while True:
        assert proc.poll() is None, f"arena serve exited:\n{log.read_text()}"
        try:
            if httpx.get(f"{url}/api/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"arena serve did not come up:\n{log.read_text()}"
        time.sleep(0.1)


@pytest.mark.sqlite_only("the README's quickstart runs on the default database, arena.db")
def test_readme_quickstart_two_bots_play_and_the_match_replays(tmp_path: Path) -> None:
    started = time.monotonic()
    # Nothing from the caller's environment may point the CLI at another database or token.
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    port = _free_port()
    url, ws_url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws"
    serve_out, serve_err = tmp_path / "serve.out", tmp_path / "serve.err"
    # Logs go to files: a full pipe nobody reads would block the server.
    with serve_out.open("w") as out, serve_err.open("w") as err:
        server = subprocess.Popen(
            [_arena(), "serve", "--port", str(port)],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=err,
            text=True,
        )
    try:
        # 1. The server starts, migrates arena.db here and prints an admin token once.
        _wait_healthy(url, server, serve_err)
        assert (tmp_path / "arena.db").is_file()
        assert re.search(r"Admin token \(shown once.*\): \S{20,}", serve_err.read_text())

        # 2. Two bots in the same directory; each token is the last line printed.
        tokens = {}
        for name in ("alice", "bob"):
            created = _run(["bots", "create", name], tmp_path, env)
            assert f"Created bot {name!r}" in created.stdout
            tokens[name] = created.stdout.strip().splitlines()[-1]
            assert re.fullmatch(r"[A-Za-z0-9_-]{32,}", tokens[name]), created.stdout

        # 3. Two agents through the server, at the same time, as in two terminals.
        agents: dict[str, tuple[subprocess.Popen[str], IO[str]]] = {}
        for name in ("alice", "bob"):
            agent_err = (tmp_path / f"agent-{name}.err").open("w")
            command = ["agent", GAME, "random", "--url", ws_url, "--token", tokens[name]]
            proc = subprocess.Popen(
                [_arena(), *command, "--games", "1"],
                cwd=tmp_path,
                env=env,
                stdout=subprocess.PIPE,
                stderr=agent_err,
                text=True,
            )
            agents[name] = (proc, agent_err)
        reported = {}
        for name, (proc, log) in agents.items():
            try:
                stdout, _ = proc.communicate(timeout=60)
            finally:
                log.close()
            agent_log = (tmp_path / f"agent-{name}.err").read_text()
            assert proc.returncode == 0, f"{name}: {stdout}\n{agent_log}"
            # One line per match: "MATCH_ID TERMINATION payoffs=[...] won as X (seat 0) ...".
            (line,) = stdout.strip().splitlines()
            reported[name] = line.split()
        match_id = reported["alice"][0]
        assert reported["bob"][0] == match_id and reported["alice"][1] == "normal"

        # 4a. curl /api/matches: the finished match, both bots seated, moves stored.
        listing = httpx.get(f"{url}/api/matches", timeout=10).json()
        assert listing["total"] == 1
        (match,) = listing["matches"]
        assert match["id"] == match_id and match["game"] == GAME
        assert match["status"] == "finished" and match["termination"] == "normal"
        assert sorted(s["bot"] for s in match["seats"]) == ["alice", "bob"]
        assert match["plies"] >= 7  # connect four needs at least 7 discs to end
        payoffs = [s["payoff"] for s in match["seats"]]
        assert f"payoffs={payoffs}" in " ".join(reported["alice"])

        # 4b. arena replay MATCH_ID: every ply with its board, ending on a verified result.
        replay = _run(["replay", match_id, "--url", url], tmp_path, env).stdout
        assert replay.startswith(f"match {match_id}  {GAME}  (finished)")
        rules = games.get(GAME)
        assert rules.render(rules.initial_state()) in replay
        heads = re.findall(r"^ply (\d+): seat (\d) \((alice|bob)\) plays (\S+)", replay, re.M)
        assert [int(h[0]) for h in heads] == list(range(match["plies"]))
        state = rules.initial_state()
        for _, _, _, text in heads:
            state = state.result(rules.parse_move(state, text))
        assert state.is_terminal() and rules.render(state) in replay
        assert "termination: normal" in replay
        assert "verified: the stored result re-derives from the stored moves" in replay
        # 4c. arena verify MATCH_ID --url: the record checked from scratch.
        verified = _run(["verify", match_id, "--url", url], tmp_path, env).stdout
        assert verified.splitlines()[-1] == "  OK: the record holds", verified
    finally:
        # Ctrl+C in the server's terminal.
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        finally:
            if server.poll() is None:
                server.kill()
    assert "Application shutdown complete" in serve_err.read_text()
    assert time.monotonic() - started < 60
