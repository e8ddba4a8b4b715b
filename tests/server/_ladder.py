"""A ladder on a live server: house bots plus remote reference agents, all in one lobby queue.

Usage (the server must run house bots for the game, with self-play on, so that they wait in
the game's default queue like the remote bots)::

    srv = start_server(house_bots="tic_tac_toe=random,alphabeta:depth=2@0.1",
                       house_self_play=True, house_workers=1)
    result = await run_ladder(srv, "tic_tac_toe", ["alphabeta", "mcts:simulations=200", "random"],
                              matches=60)
    result.finished        # the finished matches' records, oldest first
    result.agents          # bot name -> agent spec (house bots: their spec with @SECONDS)
    result.rematches_while_others_waited()   # [] when the lobby kept its rule
    srv.app.state.referee.ratings            # (with rated results) the ratings they reached

Remote bots are the bot kit's ``BotClient`` with ``agent=`` a reference agent, in the test's own
event loop; each joins again after every match. ``run_ladder`` returns once ``matches`` matches
have finished and every bot has played, after the remote bots have finished the matches they were
playing (house bots go on playing each other until the server stops).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from _ws_client import Message, stored_records
from conftest import LiveServer

from ply_arena import games
from ply_arena.protocol.client import BotClient
from ply_arena.protocol.messages import TimeControl
from ply_arena.reference_agents.registry import make, parse_spec


@dataclass
class LadderResult:
    #: Finished matches of the ladder's queue (stored records), oldest first.
    finished: list[Message]
    #: Every lobby decision of the run, in order (ply_arena.server.referee.PairingRecord).
    log: list[Any]
    #: Bot name -> agent spec, and bot id -> name.
    agents: dict[str, str]
    names: dict[int, str] = field(default_factory=dict)

    def played(self) -> dict[str, int]:
        """Finished matches per bot."""
        counts = dict.fromkeys(self.agents, 0)
        for record in self.finished:
            for seat in record["seats"]:
                counts[seat["bot"]] = counts.get(seat["bot"], 0) + 1
        return counts

    def rematches_while_others_waited(self) -> list[Any]:
        """Lobby decisions that seated a bot with the bot(s) of its previous match while some
        other bot was left waiting in the queue (the lobby's rule says: none)."""
        last: dict[tuple[str, int], frozenset[int]] = {}
        broken = []
        for record in self.log:
            group = frozenset(record.bot_ids)
            again = any(last.get((record.queue.game, b), frozenset()) & group for b in group)
            if again and record.others_waiting:
                broken.append(record)
            for b in group:
                last[(record.queue.game, b)] = group - {b}
        return broken


#: How long the remote bots may take to return from run() after stop().
STOP_WAIT_S = 10.0


def _state(client: BotClient, task: asyncio.Task[Any]) -> str:
    """One remote bot's state, for the failure message: what run() did, the kit's state, and
    where run() waits if it still runs."""
    name = client.bot_name or client.client_name
    if task.done():
        error = None if task.cancelled() else task.exception()
        ended = "run() was cancelled" if task.cancelled() else f"run() raised {error!r}"
        return f"  {name}: {ended if task.cancelled() or error else 'run() returned'}"
    ws = client._ws
    connection = "no connection" if ws is None else f"connection {ws.state.name}"
    return (
        f"  {name}: run() still running; stop() called={client._done.is_set()}, {connection}, "
        f"welcomed={client._welcomed}, matches={sorted(client.matches)}, "
        f"started={client.started}, results={len(client.results)}, aborted={client.aborted}, "
        f"games={client.games}, lost={client.lost_track}, looking up={sorted(client._looking_up)}"
        f", seeking={client._seeking}, unanswered={sorted(k[0] for k in client._unanswered)}\n"
        f"    waits at {_where(task)}"
    )


def _where(task: asyncio.Task[Any]) -> str:
    """Where a task waits: its chain of coroutines (function:line), then what the innermost one
    awaits (a future or another task, with its state)."""
    steps = []
    awaited: Any = task.get_coro()
    while getattr(awaited, "cr_frame", None) is not None:
        steps.append(f"{awaited.cr_code.co_name}:{awaited.cr_frame.f_lineno}")
        awaited = awaited.cr_await
    return " > ".join([*steps, f"{awaited!r:.400}"])


def _factory(agent: str, options: dict[str, Any]) -> Callable[[games.Game], Any]:
    """A fresh agent per match, as ``arena agent`` does."""

    def fresh(game: games.Game) -> Any:
        return make(agent, game, **options)

    return fresh


async def run_ladder(
    srv: LiveServer,
    game: str,
    remote: Sequence[str],
    *,
    matches: int = 60,
    timeout: float = 50.0,
    time_control: TimeControl | None = None,
) -> LadderResult:
    """Run the ladder until ``matches`` matches have finished and every bot has played."""
    referee = srv.app.state.referee
    house = srv.app.state.house
    assert srv.settings.house_self_play, "start the server with house_self_play=True"
    agents = {b.bot_name: b.spec.spec for b in house.bots if game in b.spec.games}
    assert agents, f"the server runs no house bot for {game}"
    the_game = games.get(game)
    clients: list[BotClient] = []
    for i, spec in enumerate(remote):
        name = f"r{i}-" + re.sub(r"[^A-Za-z0-9]+", "-", spec).strip("-")
        _, token = srv.create_bot(name[:64])
        agent, options = parse_spec(spec)
        make(agent, the_game, **options)  # a bad spec fails here, not in the kit's thread
        clients.append(
            BotClient(
                srv.ws_url,
                token,
                agent=_factory(agent, options),
                game=game,
                games=0,  # until told to stop
                time_control=time_control,
                client_name=f"ladder/{spec}",
            )
        )
        agents[name[:64]] = spec
    tasks = [asyncio.create_task(c.run()) for c in clients]
    started_log = len(referee.pairing_log)
    deadline = time.monotonic() + timeout
    try:
        while True:
            for task in tasks:
                if task.done():
                    task.result()  # a remote bot that stopped: raise its error
            log = list(referee.pairing_log)[started_log:]
            done = [r for r in log if r.queue.game == game and r.match_id not in referee.matches]
            seated = {b for r in done for b in r.bot_ids}
            if len(done) >= matches and len(seated) >= len(agents):
                break
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"ladder: {len(done)} of {matches} matches finished and {len(seated)} of "
                    f"{len(agents)} bots seated after {timeout:g} s"
                )
            await asyncio.sleep(0.05)
    finally:
        # No more matches for the remote bots; those they play are played to the end.
        for client in clients:
            client.games = max(1, client.started - client.aborted)
        end = time.monotonic() + 30
        while any(c.matches for c in clients) and time.monotonic() < end:
            await asyncio.sleep(0.02)
        for client in clients:
            client.stop()
        # stop() must end run() in a few seconds (the close handshake waits at most 2 s): a
        # bot that does not stop fails the ladder now, saying where each one is, instead of
        # hanging until the test's timeout.
        _, running = await asyncio.wait(tasks, timeout=STOP_WAIT_S)
        if running:
            states = "\n".join(_state(c, t) for c, t in zip(clients, tasks, strict=True))
            for task in running:
                task.cancel()
            await asyncio.wait(running, timeout=STOP_WAIT_S)
            raise AssertionError(
                f"ladder: {len(running)} remote bot(s) still running {STOP_WAIT_S:g} s after "
                f"stop():\n{states}"
            )
        for task in tasks:
            if not task.cancelled():
                task.exception()  # retrieved (as gather did): one that mattered was raised above
    log = list(referee.pairing_log)[started_log:]
    ids = {m for r in log for m in [r.match_id]}
    records = [
        r for r in await stored_records(srv.db_url) if r["id"] in ids and r["status"] == "finished"
    ]
    records.sort(key=lambda r: r["created_at"])
    names = {}
    for conn in referee.connections.all():
        names[conn.bot_id] = conn.bot_name
    return LadderResult(finished=records, log=log, agents=agents, names=names)
