"""The server's analyses: each in a process of its own, within the limits of the settings.

``Analyst.analyze`` checks the request at once (a bad game, move, agent or option is refused
before any process starts), refuses when ``analyze_concurrency`` analyses are already running
(``busy``: try again in a moment, rather than a queue that grows while nobody waits for it),
then runs the search in a helper process at the lowest CPU priority, so that matches never
wait for it. A search that visits more than ``analyze_max_nodes`` nodes stops itself (the
trace's budget); one that takes longer than ``analyze_time_s`` is killed. Either way the answer
is a message that says what to change, never a hang.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import Any

from ply_arena.protocol.errors import ErrorCode
from ply_arena.server import subprocesses
from ply_arena.server.analysis import worker
from ply_arena.server.analysis.report import prepare
from ply_arena.server.settings import Settings

#: How long the page and the API tell a refused caller to wait (``Retry-After``).
RETRY_AFTER_S = 2


class AnalysisError(Exception):
    """An analysis that cannot be given: the status, a code and a message that says what to do."""

    def __init__(
        self, status: int, code: ErrorCode, message: str, retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


@dataclass(frozen=True)
class AnalysisRequest:
    """What to analyse: a position (moves from the start), an agent and the size of its search.

    ``agent`` may carry options (``alphabeta:order=false``); ``depth`` is the search depth of
    the agents that search to a depth, ``simulations`` the MCTS simulations; ``limit`` the
    nodes of the tree shown, level by level from the root.
    """

    game: str
    moves: str
    agent: str
    depth: int | None
    simulations: int | None
    limit: int


class Analyst:
    def __init__(self, settings: Settings) -> None:
        self.max_nodes = settings.analyze_max_nodes
        self.time_s = settings.analyze_time_s
        self.concurrency = settings.analyze_concurrency
        self.running = 0

    async def analyze(self, request: AnalysisRequest) -> dict[str, Any]:
        """The report of ``analyze_position`` with its trace and node details, or
        AnalysisError."""
        if self.concurrency == 0:
            raise AnalysisError(
                503,
                ErrorCode.limit_reached,
                "analysis is turned off on this server (ARENA_ANALYZE_CONCURRENCY=0); "
                "run `arena analyze` on your own machine instead",
            )
        arguments = self._arguments(request)
        if self.running >= self.concurrency:
            raise AnalysisError(
                503,
                ErrorCode.limit_reached,
                f"the server is analysing {self.running} other "
                f"{'position' if self.running == 1 else 'positions'} (at most "
                f"{self.concurrency} at once): try again in a few seconds",
                retry_after=RETRY_AFTER_S,
            )
        self.running += 1
        try:
            kind, payload = await asyncio.to_thread(_run_in_process, arguments, self.time_s)
        finally:
            self.running -= 1
        if kind == "ok":
            report: dict[str, Any] = payload
            return report
        if kind == "too_large":
            raise AnalysisError(
                422,
                ErrorCode.limit_reached,
                f"this search visits more than {self.max_nodes:,} "
                f"{'simulations' if request.agent.startswith('mcts') else 'nodes'}, the most "
                f"this server analyses: choose a smaller depth"
                f"{' or fewer simulations' if request.agent.startswith('mcts') else ''}",
            )
        if kind == "timeout":
            raise AnalysisError(
                422,
                ErrorCode.limit_reached,
                f"the search took longer than {self.time_s:g} s, the most this server gives "
                "one analysis, and was stopped: choose a smaller depth or fewer simulations "
                "(or try again when the server is less busy)",
            )
        if kind == "bad_request":
            raise AnalysisError(400, ErrorCode.bad_request, str(payload))
        raise AnalysisError(
            500, ErrorCode.internal_error, "the analysis process ended without an answer"
        )

    def _arguments(self, request: AnalysisRequest) -> dict[str, Any]:
        """``analyze_position``'s arguments for ``request``, checked here on the event loop
        (cheap: parse the moves, make the agent), so that a bad request costs no process."""
        name = request.agent.split(":", 1)[0]
        spec = request.agent
        # Said here in the query's own words (the command line's checks name its flags).
        if name == "random":
            raise AnalysisError(
                400,
                ErrorCode.bad_request,
                "agent=random picks a legal move at random: it has no search tree to draw; "
                "choose minimax, alphabeta, negamax, expectiminimax, maxn or mcts",
            )
        if "move_time" in spec.partition(":")[2]:
            raise AnalysisError(
                400,
                ErrorCode.bad_request,
                "move_time: the server analyses to a fixed depth (or MCTS to a number of "
                "simulations), never under a time limit, which would draw a different tree on "
                "a busier machine: drop move_time and give depth= (or simulations=)",
            )
        if request.depth is not None and name == "mcts":
            raise AnalysisError(
                400,
                ErrorCode.bad_request,
                "depth: mcts does not search to a depth; give simulations= instead",
            )
        if request.simulations is not None:
            if name != "mcts":
                raise AnalysisError(
                    400,
                    ErrorCode.bad_request,
                    f"simulations: {name} does not simulate; give a depth (MCTS runs simulations)",
                )
            if request.simulations > self.max_nodes:
                raise AnalysisError(
                    422,
                    ErrorCode.limit_reached,
                    f"simulations={request.simulations:,}: this server analyses at most "
                    f"{self.max_nodes:,}: choose fewer",
                )
            spec = f"{spec}{',' if ':' in spec else ':'}simulations={request.simulations}"
        depth = request.depth
        try:
            prepared = prepare(request.game, request.moves, spec, depth)
        except ValueError as exc:
            code = ErrorCode.bad_request
            if str(exc).startswith("unknown game"):
                code = ErrorCode.unknown_game
            # The query's words, not the command line's flags.
            message = str(exc).replace("--depth ", "depth=").replace("--depth", "depth")
            raise AnalysisError(400, code, message) from None
        timed = depth is None and "depth" not in prepared.options
        if timed and name != "mcts":
            raise AnalysisError(
                400,
                ErrorCode.bad_request,
                f"give a depth: the server analyses {name} to a fixed depth (a search under a "
                "time limit would draw a different tree on a busier machine)",
            )
        if name == "mcts" and "simulations" not in prepared.options:
            raise AnalysisError(
                400, ErrorCode.bad_request, "give the number of simulations for MCTS"
            )
        return {
            "game_name": request.game,
            "moves": request.moves,
            "agent_spec": spec,
            "depth": depth,
            # MCTS stops at its simulations; its clock, as long as the server's, never does.
            "move_time": self.time_s if name == "mcts" else None,
            "trace": True,
            "trace_limit": request.limit,
            "trace_budget": self.max_nodes,
            "node_details": True,
        }


def _run_in_process(arguments: dict[str, Any], time_s: float) -> tuple[str, Any]:
    """``worker.run`` in a new helper process; ``("timeout", None)`` if it has not answered
    within ``time_s`` (it is then killed). Blocks: run it in a thread."""
    context = subprocesses.context()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=worker.run, args=(sender, os.getpid(), arguments), daemon=True)
    process.start()
    sender.close()
    try:
        if not receiver.poll(time_s):
            return ("timeout", None)
        try:
            outcome: tuple[str, Any] = receiver.recv()
        except EOFError:  # died without a word (killed, out of memory)
            return ("died", None)
        return outcome
    finally:
        if process.is_alive():
            process.kill()
        process.join()
        receiver.close()
