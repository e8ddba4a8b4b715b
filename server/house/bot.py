"""A house bot's connection: in the server's process, but to the referee a bot like any other.

It implements ``ply_arena.server.referee.connections.BotConnection``: the referee sends it the same
``match_start``, ``turn`` (the same JSON text) and ``match_end`` as a remote bot, runs the same
clocks on it, and it answers each turn with a ``MakeMove`` through the referee's normal move path
(``Referee.move``). The search runs in the house's process pool; the event loop only parses the
turn and hands the answer over.

Thinking time per move: the spec's seconds, capped by what is left of the move's ``move_ms``
less a margin for the answer's way back (10% of it, at least 30 ms). The bank is never spent. A
bot of fixed strength (a depth or simulation count) searches that far whatever the time; the
move's limit less the margin stops it only as a last resort, so that it still answers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from pydantic import ValidationError

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.messages import (
    AcceptChallenge,
    ChallengeReceived,
    DeclineChallenge,
    ErrorMessage,
    JoinLobby,
    MakeMove,
    MatchEnd,
    MatchStart,
    MoveInfo,
    ServerMessage,
)
from ply_arena.server.house.config import HouseSpec
from ply_arena.server.house.pool import SearchFailed, SearchPool
from ply_arena.server.referee import Referee, RefereeError
from ply_arena.server.referee.connections import CheckRole

log = logging.getLogger(__name__)


def margin_ms(move_ms: int) -> int:
    """Time kept back from a move's limit for the answer to reach the referee."""
    return max(30, move_ms // 10)


class HouseBot:
    """One house bot: a reference agent, logged in to the referee in-process."""

    def __init__(
        self,
        *,
        referee: Referee,
        pool: SearchPool,
        spec: HouseSpec,
        bot_id: int,
        self_play: bool = False,
    ) -> None:
        self.bot_id = bot_id
        self.bot_name = spec.name
        self.client = f"house bot ({spec.agent})"
        self.check_role: CheckRole | None = None
        self.spec = spec
        self.closed = False
        self._referee = referee
        self._pool = pool
        self._self_play = self_play
        #: match id -> game name, for the matches it plays.
        self._matches: dict[str, str] = {}
        #: match id -> the search task of its current turn.
        self._thinking: dict[str, asyncio.Task[None]] = {}
        # Challenges being answered once its matches on every process are read.
        self._answering: set[asyncio.Task[None]] = set()

    @property
    def thinking(self) -> int:
        """How many of its searches are under way (one per match on move at most)."""
        return len(self._thinking)

    # --- BotConnection ----------------------------------------------------------------------

    def send(self, message: ServerMessage) -> None:
        if isinstance(message, MatchStart):
            self._matches[message.match_id] = message.game
        elif isinstance(message, MatchEnd):
            self._ended(message.match_id)
        elif isinstance(message, ChallengeReceived):
            # Answered after the referee has finished sending it (it calls us mid-challenge).
            asyncio.get_running_loop().call_soon(self._answer_challenge, message)
        elif isinstance(message, ErrorMessage) and message.code != ErrorCode.stale_ply:
            log.warning(
                "house bot %s was told %s: %s", self.bot_name, message.code, message.message
            )

    def send_json(self, text: str) -> None:
        message = json.loads(text)
        if message.get("type") == "turn":
            self._turn(message, time.monotonic())

    def rtt_ms(self) -> float | None:
        return 0.0  # in the server's own process: no network to allow for

    def close_with(self, error: ErrorMessage) -> None:
        if self.closed:
            return
        self.closed = True
        if error.code != ErrorCode.shutting_down:
            log.info("house bot %s stops: %s (%s)", self.bot_name, error.code, error.message)
        for task in self._thinking.values():
            task.cancel()
        self._thinking.clear()

    # --- playing ----------------------------------------------------------------------------

    def _answer_challenge(self, challenge: ChallengeReceived) -> None:
        """Accept a challenge in a game it plays while it has room (below house_max_matches),
        as lichess's bots do: a student may ask for a match against a given house bot. With
        several processes on one database, its matches on every process count: read first."""
        if self.closed:
            return
        if self._referee.house_load is None:
            self._decide(challenge)
            return
        task = asyncio.create_task(self._read_then_decide(challenge), name="house-challenge")
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    async def _read_then_decide(self, challenge: ChallengeReceived) -> None:
        try:
            await self._referee.read_house_load([self.bot_id])
        except Exception as exc:  # the database is down: decide on what this process knows
            log.warning("house bot %s: its matches could not be read (%s)", self.bot_name, exc)
        if not self.closed:
            self._decide(challenge)

    def _decide(self, challenge: ChallengeReceived) -> None:
        room = self._referee.house_max_matches - self._referee.playing(self.bot_id)
        if challenge.game not in self.spec.games:
            plays = ", ".join(sorted(self.spec.games))
            reason = f"{self.bot_name} plays {plays}, not {challenge.game}"
        elif room <= 0:
            reason = (
                f"{self.bot_name} already plays {_matches(self._referee.playing(self.bot_id))} "
                "(its most); try again later or join the lobby"
            )
        else:
            reason = None
        try:
            if reason is None:
                self._referee.accept(self, AcceptChallenge(challenge_id=challenge.challenge_id))
            else:
                self._referee.decline(
                    self, DeclineChallenge(challenge_id=challenge.challenge_id, reason=reason)
                )
        except RefereeError as exc:  # withdrawn meanwhile, or the server is stopping
            log.debug("house bot %s: challenge %s: %s", self.bot_name, challenge.challenge_id, exc)

    def join_queues(self) -> None:
        """House self-play: wait in the default queue of each of its games it plays no match of."""
        if self.closed or not self._self_play:
            return
        busy = set(self._matches.values())
        for game in self.spec.games:
            if game in busy:
                continue
            try:
                self._referee.join(self, JoinLobby(game=game))
            except RefereeError:
                return  # shutting down

    def _turn(self, turn: dict[str, Any], received_at: float) -> None:
        match_id = turn["match_id"]
        game = self._matches.get(match_id)
        if game is None or self.closed:
            return
        move_ms = int(turn["move_ms"])
        limit_s = max(0.0, (move_ms - margin_ms(move_ms)) / 1000)
        budget_s = limit_s if self.spec.fixed else min(self.spec.seconds, limit_s)
        previous = self._thinking.get(match_id)
        if previous is not None:
            previous.cancel()
        answer = self._answer(
            match_id, game, int(turn["ply"]), turn["position"], received_at + budget_s
        )
        self._thinking[match_id] = asyncio.get_running_loop().create_task(
            answer, name=f"house-{self.bot_name}-{match_id}"
        )

    async def _answer(
        self, match_id: str, game: str, ply: int, position: dict[str, Any], deadline: float
    ) -> None:
        try:
            move, info = await self._pool.search(
                game,
                self.spec.agent,
                self.spec.search_options(),
                position,
                deadline,
                fresh=self.spec.fixed,
            )
        except SearchFailed:
            return  # logged by the pool; no answer: the match is lost on time
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception(
                "house bot %s failed at ply %d of match %s; it will lose on time",
                self.bot_name,
                ply,
                match_id,
            )
            return
        finally:
            task = self._thinking.get(match_id)
            if task is asyncio.current_task():
                del self._thinking[match_id]
        if self.closed or match_id not in self._matches:
            return
        try:
            move_info: MoveInfo | None = MoveInfo(**info) if info else None
        except ValidationError:
            move_info = None
        try:
            self._referee.move(
                self,
                MakeMove(match_id=match_id, ply=ply, move=move, info=move_info),
                time.monotonic(),
            )
        except RefereeError as exc:
            # The match ended or moved on meanwhile (a resignation, a shutdown): nothing to do.
            log.debug("house bot %s: move refused: %s", self.bot_name, exc.message)

    def _ended(self, match_id: str) -> None:
        self._matches.pop(match_id, None)
        task = self._thinking.pop(match_id, None)
        if task is not None:
            task.cancel()
        if self._self_play and not self.closed:
            # After the referee is done with the match (it is still counted as running here).
            asyncio.get_running_loop().call_soon(self.join_queues)


def _matches(count: int) -> str:
    """``1 match``, ``2 matches``."""
    return f"{count} match" if count == 1 else f"{count} matches"
