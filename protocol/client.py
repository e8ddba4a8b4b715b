"""The bot kit: write one function, the kit plays matches on a Ply Arena server.

A bot author writes ``choose(state, legal_moves, clock) -> move``; everything else (the handshake,
dispatch on ``type``, several matches at once, heartbeats, reconnecting with backoff and resync,
the lobby and challenges) is done here, as lichess-bot does for lichess::

    import random
    from protocol.client import run_bot

    def choose(state, legal_moves, clock):
        return random.choice(legal_moves)

    run_bot("ws://127.0.0.1:8000/ws", "TOKEN", choose, game="connect_four", games=3)

``state`` is the game's own State (``games.get(game).state_from_json(position)``), so a bot can
search with ``state.actions()`` / ``state.result(move)``; ``legal_moves`` are notation strings;
``clock`` says how much time is left (see :class:`Clock`). ``choose`` may return a notation string,
a move object of the game (formatted with ``game.format_move``), or ``(move, info)`` with ``info``
a :class:`~protocol.messages.MoveInfo`, a dict of its fields, or a reference agent's SearchInfo.

Instead of ``choose`` a reference agent can play (``agent=reference_agents.make(...)``, or any
object with ``.choose(state, time_limit) -> (move, info)``, or a factory ``game -> agent`` so that
every match gets its own agent).

A blocking ``choose`` runs in a worker thread, so pings are answered while it thinks. For more
control subclass :class:`BotClient` and override the ``on_<type>`` handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import websockets
from pydantic import BaseModel, ValidationError
from websockets.asyncio.client import ClientConnection

import games
from games import Game, State
from protocol.errors import ErrorCode
from protocol.messages import (
    PROTOCOL_VERSION,
    AcceptChallenge,
    Challenge,
    ChallengeDeclined,
    ChallengeReceived,
    ChallengeSent,
    DeclineChallenge,
    ErrorMessage,
    ForcedMove,
    Hello,
    JoinLobby,
    LobbyJoined,
    LobbyLeft,
    MakeMove,
    MatchEnd,
    MatchStart,
    MoveInfo,
    Ping,
    Policy,
    Pong,
    Resign,
    TimeControl,
    Turn,
    Welcome,
    server_message_adapter,
)

__all__ = [
    "BotClient",
    "BotError",
    "Clock",
    "MatchView",
    "run_bot",
]

log = logging.getLogger("protocol.client")

#: Errors after which reconnecting cannot help: the kit stops and raises BotError.
FATAL_CODES = frozenset(
    {
        ErrorCode.bad_token,
        ErrorCode.bot_disabled,
        ErrorCode.unsupported_version,
        ErrorCode.replaced,
    }
)


class BotError(RuntimeError):
    """The server refused this bot for good (bad token, disabled, wrong version, replaced)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


@dataclass(frozen=True)
class Clock:
    """The time situation of one turn, as the server sent it (integer ms).

    ``deadline_ms`` is what this move may take in all (per-move limit plus the bank); using more
    than ``move_ms`` spends the bank, which never refills. Time runs on the server from the moment
    it sent the turn, so :meth:`remaining_ms` subtracts what has passed since it arrived.
    """

    seat: int
    clocks_ms: tuple[int, ...]
    move_ms: int
    deadline_ms: int
    received: float = field(default_factory=time.monotonic)

    @property
    def bank_ms(self) -> int:
        """This bot's remaining overage bank."""
        return self.clocks_ms[self.seat] if self.seat < len(self.clocks_ms) else 0

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self.received) * 1000)

    def remaining_ms(self) -> int:
        """Time left before this move times out (bank included)."""
        return self.deadline_ms - self.elapsed_ms()

    def move_remaining_ms(self) -> int:
        """Time left before this move starts to draw on the bank."""
        return self.move_ms - self.elapsed_ms()


ChooseResult = Any  # str | Move | tuple[str | Move, MoveInfo | dict | SearchInfo | None]
ChooseFn = Callable[[State, list[str], Clock], ChooseResult]


class AgentLike(Protocol):
    """What the kit needs of a reference agent (reference_agents.Agent satisfies it)."""

    def choose(self, state: State, time_limit: float | None = None) -> tuple[Any, Any]: ...


@dataclass
class MatchView:
    """What the kit knows about one running match."""

    start: MatchStart
    game: Game
    agent: AgentLike | None = None
    turn: Turn | None = None
    #: The search running for the latest turn, and the move sent for a ply (resent on resync).
    thinking: asyncio.Task[None] | None = None
    sent: dict[int, MakeMove] = field(default_factory=dict)

    @property
    def match_id(self) -> str:
        return self.start.match_id


def _safety_ms(move_ms: int) -> int:
    # Leave room for the network and for the kit itself: 10% of the limit, at least 30 ms.
    return max(30, move_ms // 10)


def _to_move_info(info: Any, game: Game, state: State) -> MoveInfo | None:
    """MoveInfo from a MoveInfo, a dict, or a reference agent's SearchInfo; None if unusable."""
    if info is None or isinstance(info, MoveInfo):
        return info
    if isinstance(info, dict):
        data = info
    elif hasattr(info, "as_json"):
        data = info.as_json(game, state)
    else:
        return None
    allowed = MoveInfo.model_fields
    fields = {k: v for k, v in data.items() if k in allowed and v is not None}
    score = fields.get("score")
    if isinstance(score, float) and not math.isfinite(score):
        # JSON has no infinities: a proven win or loss is said in words instead.
        fields.pop("score")
        fields["comment"] = (str(fields.get("comment", "")) + f" score={score}").strip()
    if "pv" in fields:
        fields["pv"] = [str(m) for m in fields["pv"]][:64]
    if "comment" in fields:
        fields["comment"] = str(fields["comment"])[:280]
    try:
        return MoveInfo.model_validate(fields)
    except ValidationError as exc:
        log.warning("dropping move info that does not fit the protocol: %s", exc)
        return None


def _split_result(result: Any) -> tuple[Any, Any]:
    """``move`` or ``(move, info)`` -> (move, info). Moves may themselves be tuples, so a pair
    counts as (move, info) only when its second item looks like info."""
    if isinstance(result, tuple) and len(result) == 2:
        second = result[1]
        if second is None or isinstance(second, MoveInfo | dict) or hasattr(second, "as_json"):
            return result[0], second
    return result, None


class BotClient:
    """An async bot connection. ``await BotClient(...).run()`` plays until ``games`` have ended.

    Parameters:
        url: the server's WebSocket address, e.g. ``ws://127.0.0.1:8000/ws``.
        token: the bot's token from ``arena bots create``.
        choose: ``choose(state, legal_moves, clock) -> move`` (or pass ``agent``).
        agent: a reference agent, or a factory ``game -> agent`` called once per match.
        game: join the lobby of this game (omit to only answer challenges).
        games: how many matches to play before returning (0: play forever).
        concurrent: how many matches to play at once (joins the lobby again while below it).
        challenge: names of bots to challenge instead of joining the lobby.
        accept_challenges: accept every challenge received (else decline them).
        time_control / policy: asked for when joining or challenging (None: server defaults).
        reconnect: reconnect with exponential backoff when the connection drops.
        max_retries: give up (ConnectionError) after this many failed reconnections in a row
            (None: keep trying; a welcome resets the count).
        first_connect_retries: give up after this many retries if the bot never logged in
            (a wrong URL should fail fast, not retry forever).
    """

    def __init__(
        self,
        url: str,
        token: str,
        choose: ChooseFn | None = None,
        *,
        agent: AgentLike | Callable[[Game], AgentLike] | None = None,
        game: str | None = None,
        games: int = 1,
        concurrent: int = 1,
        challenge: list[str] | None = None,
        accept_challenges: bool = True,
        time_control: TimeControl | None = None,
        policy: Policy = Policy.forfeit,
        client_name: str = "ply-arena-kit",
        reconnect: bool = True,
        max_backoff_s: float = 30.0,
        max_retries: int | None = None,
        first_connect_retries: int = 3,
        executor: ThreadPoolExecutor | None = None,
    ) -> None:
        if (choose is None) == (agent is None):
            raise ValueError("pass exactly one of choose= or agent=")
        self.url = url
        self.token = token
        self.choose_fn = choose
        self.agent = agent
        self.game_name = game
        self.games = games
        self.concurrent = max(1, concurrent)
        self.opponents = list(challenge or [])
        self.accept_challenges = accept_challenges
        self.time_control = time_control
        self.policy = policy
        self.client_name = client_name
        self.reconnect = reconnect
        self.max_backoff_s = max_backoff_s
        self.max_retries = max_retries
        self.first_connect_retries = first_connect_retries
        self.executor = executor

        self.bot_name: str | None = None
        self.heartbeat_ms = 15_000
        self.matches: dict[str, MatchView] = {}
        self.results: list[MatchEnd] = []
        #: Matches that ended while we were away (no match_end was received for them).
        self.lost_track: list[str] = []
        self.started = 0
        self._ws: ClientConnection | None = None
        self._asking = False  # in a lobby queue or with a challenge pending
        self._ping_ids = itertools.count(1)
        self._last_heard = time.monotonic()
        self._done = asyncio.Event()
        self._fatal: BotError | None = None
        self._closing: asyncio.Future[None] | None = None
        self._retry: asyncio.Task[None] | None = None
        self._attempt = 0  # reconnection attempts since the last welcome
        #: Seconds between challenges while the challenged bot is not connected.
        self.retry_s = 2.0

    # --- public API ---------------------------------------------------------------------------

    async def run(self) -> list[MatchEnd]:
        """Connect (and reconnect) until the wanted number of matches have ended."""
        while not self._done.is_set():
            try:
                async with websockets.connect(
                    self.url, max_size=16 * 1024 * 1024, open_timeout=10
                ) as ws:
                    self._ws = ws
                    await self._session(ws)
            except (OSError, websockets.exceptions.WebSocketException, TimeoutError) as exc:
                log.warning("connection to %s lost: %r", self.url, exc)
            finally:
                self._ws = None
            if self._fatal is not None:
                raise self._fatal
            if self._done.is_set():
                break
            if not self.reconnect:
                raise ConnectionError(f"disconnected from {self.url}")
            if self.bot_name is None and self._attempt >= self.first_connect_retries:
                # Never logged in: most likely a wrong URL or no server; say so instead of
                # retrying forever.
                raise ConnectionError(
                    f"could not log in at {self.url} after {self._attempt + 1} attempts"
                )
            if self.max_retries is not None and self._attempt >= self.max_retries:
                raise ConnectionError(
                    f"lost {self.url}; gave up after {self._attempt + 1} attempts to reconnect"
                )
            # Exponential backoff with jitter, so that a restarted server is not hit by every bot
            # at the same instant; a welcome resets it.
            delay = min(self.max_backoff_s, 0.25 * 2**self._attempt) * random.uniform(0.8, 1.2)
            self._attempt += 1
            log.info("reconnecting in %.2f s (attempt %d)", delay, self._attempt)
            await asyncio.sleep(delay)
        for view in self.matches.values():
            if view.thinking is not None:
                view.thinking.cancel()
        return self.results

    async def send(self, message: BaseModel) -> None:
        """Send one message; lost silently if the connection is down (resync redoes moves)."""
        ws = self._ws
        if ws is None:
            return
        with contextlib.suppress(websockets.exceptions.ConnectionClosed):
            await ws.send(message.model_dump_json(exclude_none=True))

    def stop(self) -> None:
        """Finish: close the connection and let run() return."""
        self._done.set()
        if self._ws is not None:
            # Kept so the task is not garbage-collected before the close completes.
            self._closing = asyncio.ensure_future(self._ws.close())

    # --- the connection -----------------------------------------------------------------------

    async def _session(self, ws: ClientConnection) -> None:
        await ws.send(
            Hello(
                protocol=PROTOCOL_VERSION, token=self.token, client=self.client_name
            ).model_dump_json()
        )
        self._last_heard = time.monotonic()
        self._asking = False  # a new connection is in no queue
        heartbeat = asyncio.create_task(self._heartbeat(ws))
        try:
            async for frame in ws:
                self._last_heard = time.monotonic()
                if isinstance(frame, bytes):
                    log.warning("ignoring a binary frame from the server")
                    continue
                try:
                    message = server_message_adapter.validate_json(frame)
                except ValidationError as exc:
                    # A newer server may send things we do not know; keep playing.
                    log.warning("ignoring an unreadable server message: %s", exc)
                    continue
                try:
                    await self.dispatch(message)
                except Exception:
                    # A bug in a handler (ours or a subclass's) must not drop every match.
                    log.exception("handling %s failed", message.type)
                if self._done.is_set() or self._fatal is not None:
                    await ws.close()
                    break
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat

    async def _heartbeat(self, ws: ClientConnection) -> None:
        # Our own pings keep NATs open and detect a dead server: silence for three heartbeats
        # (the server pings us too) means the connection is gone even if TCP has not noticed.
        while True:
            interval = max(0.05, self.heartbeat_ms / 1000)
            await asyncio.sleep(interval)
            if time.monotonic() - self._last_heard > 3 * interval:
                log.warning("no word from the server for %.1f s; reconnecting", 3 * interval)
                await ws.close()
                return
            await self.send(Ping(id=next(self._ping_ids)))

    async def dispatch(self, message: BaseModel) -> None:
        """Call ``on_<type>`` for a server message (lichess-bot style event dispatch)."""
        handler = getattr(self, f"on_{message.type}", None)  # type: ignore[attr-defined]
        if handler is not None:
            await handler(message)

    # --- handlers (override in a subclass for more control) -----------------------------------

    async def on_welcome(self, message: Welcome) -> None:
        self.bot_name = message.bot
        self.heartbeat_ms = message.heartbeat_ms
        self._attempt = 0
        running = set(message.matches)
        # Matches we were playing that the server no longer lists ended while we were away.
        for match_id in list(self.matches):
            if match_id not in running:
                view = self.matches.pop(match_id)
                if view.thinking is not None:
                    view.thinking.cancel()
                self.lost_track.append(match_id)
                log.warning("match %s ended while disconnected", match_id)
        log.info("logged in as %s; running matches: %s", message.bot, sorted(running) or "none")
        self._check_done()
        await self._ask_for_matches()

    async def on_joined(self, message: LobbyJoined) -> None:
        log.info("waiting in the %s lobby (%d waiting)", message.game, message.waiting)

    async def on_left(self, message: LobbyLeft) -> None:
        self._asking = False

    async def on_challenge_sent(self, message: ChallengeSent) -> None:
        log.info("challenge %s sent", message.challenge_id)

    async def on_challenge_declined(self, message: ChallengeDeclined) -> None:
        log.warning("challenge %s declined by %s", message.challenge_id, message.by)
        self._asking = False
        # Asking again at once would pester the opponent; a declined challenge ends the run.
        if not self.matches:
            self.stop()

    async def on_challenge_received(self, message: ChallengeReceived) -> None:
        if self.accept_challenges:
            log.info("accepting %s's challenge to %s", message.challenger, message.game)
            await self.send(AcceptChallenge(challenge_id=message.challenge_id))
        else:
            await self.send(DeclineChallenge(challenge_id=message.challenge_id))

    async def on_match_start(self, message: MatchStart) -> None:
        view = self.matches.get(message.match_id)
        if view is not None:
            return  # a resync after reconnecting: we know this match already
        game = games.get(message.game)
        self.matches[message.match_id] = MatchView(
            start=message, game=game, agent=self._agent_for(game)
        )
        self.started += 1
        self._asking = False
        seats = ", ".join(f"{s.seat}:{s.bot}" for s in message.seats)
        log.info(
            "match %s of %s started (%s), we are seat %d",
            message.match_id,
            message.game,
            seats,
            message.your_seat,
        )
        await self._ask_for_matches()

    async def on_turn(self, message: Turn) -> None:
        view = self.matches.get(message.match_id)
        if view is None:
            log.warning("turn for unknown match %s", message.match_id)
            return
        clock = Clock(
            seat=view.start.your_seat,
            clocks_ms=tuple(message.clocks_ms),
            move_ms=message.move_ms,
            deadline_ms=message.deadline_ms,
        )
        previous = view.turn
        view.turn = message
        if previous is not None and previous.ply == message.ply:
            # The same turn again (resync): resend the move if it was already chosen, else the
            # search still running will send it on this connection when it finishes.
            already = view.sent.get(message.ply)
            if already is not None:
                await self.send(already)
            if already is not None or (view.thinking is not None and not view.thinking.done()):
                return
        if view.thinking is not None and not view.thinking.done():
            view.thinking.cancel()
        view.thinking = asyncio.create_task(self._play(view, message, clock))

    async def on_forced_move(self, message: ForcedMove) -> None:
        log.warning(
            "match %s ply %d: the server played %s for us (%s)",
            message.match_id,
            message.ply,
            message.move,
            message.reason,
        )

    async def on_match_end(self, message: MatchEnd) -> None:
        view = self.matches.pop(message.match_id, None)
        if view is None:
            return
        if view.thinking is not None:
            view.thinking.cancel()
        self.results.append(message)
        seat = view.start.your_seat
        log.info(
            "match %s ended (%s): payoff %s",
            message.match_id,
            message.termination.value,
            message.payoffs[seat] if seat < len(message.payoffs) else "?",
        )
        self.on_result(view, message)
        self._check_done()
        await self._ask_for_matches()

    async def on_error(self, message: ErrorMessage) -> None:
        if message.code in FATAL_CODES:
            log.error("server refused the bot: %s (%s)", message.message, message.code)
            self._fatal = BotError(message.code, message.message)
            return
        where = f" in match {message.match_id}" if message.match_id else ""
        log.warning("server error %s%s: %s", message.code, where, message.message)
        if message.code == ErrorCode.unknown_bot and self.opponents and self._asking:
            # The bot we challenge is not connected yet: ask again a little later.
            self._retry = asyncio.create_task(self._ask_again(self.retry_s))
        elif message.code in (ErrorCode.unknown_game, ErrorCode.bad_time_control):
            # Our own request was refused: retrying would only repeat it.
            self._fatal = BotError(message.code, message.message)

    async def on_ping(self, message: Ping) -> None:
        await self.send(Pong(id=message.id))

    async def on_pong(self, message: Pong) -> None:
        pass  # any frame counts as a sign of life (see _heartbeat)

    def on_result(self, view: MatchView, end: MatchEnd) -> None:
        """Called after each match ends; override to keep statistics."""

    # --- playing ------------------------------------------------------------------------------

    def _agent_for(self, game: Game) -> AgentLike | None:
        if self.agent is None:
            return None
        if hasattr(self.agent, "choose"):
            return self.agent
        return self.agent(game)  # a factory: a fresh agent (and tree) per match

    async def _play(self, view: MatchView, turn: Turn, clock: Clock) -> None:
        game = view.game
        loop = asyncio.get_running_loop()
        try:
            state = game.state_from_json(turn.position)
            text, info = await loop.run_in_executor(
                self.executor, self._decide, view, game, state, turn, clock
            )
        except asyncio.CancelledError:
            raise
        except Exception:
            # A crashing bot should not lose on time: log loudly and play something legal.
            log.exception(
                "choose() failed in match %s ply %d; playing a random legal move",
                view.match_id,
                turn.ply,
            )
            text, info = random.choice(turn.legal_moves), MoveInfo(comment="choose() failed")
        move = MakeMove(match_id=turn.match_id, ply=turn.ply, move=text, info=info)
        view.sent[turn.ply] = move
        # Only the latest ply matters when a resync reaches back; old entries can go.
        for ply in [p for p in view.sent if p < turn.ply]:
            del view.sent[ply]
        await self.send(move)

    def _decide(
        self, view: MatchView, game: Game, state: State, turn: Turn, clock: Clock
    ) -> tuple[str, MoveInfo | None]:
        """Runs in a worker thread: the bot's decision as (notation, info)."""
        if view.agent is not None:
            budget_ms = min(clock.move_ms, clock.deadline_ms) - _safety_ms(clock.move_ms)
            budget_ms -= clock.elapsed_ms()
            result: Any = view.agent.choose(state, max(0.01, budget_ms / 1000))
        else:
            assert self.choose_fn is not None
            result = self.choose_fn(state, list(turn.legal_moves), clock)
        move, info = _split_result(result)
        text = move if isinstance(move, str) else game.format_move(state, move)
        return text, _to_move_info(info, game, state)

    # --- asking for matches -------------------------------------------------------------------

    def _wanted(self) -> int:
        """How many more matches to ask for now."""
        if self.games and self.started >= self.games:
            return 0
        return max(0, self.concurrent - len(self.matches))

    async def _ask_for_matches(self) -> None:
        if self._asking or self._done.is_set() or self._wanted() == 0:
            return
        if self.game_name is None:
            return  # only answering challenges
        self._asking = True
        if self.opponents:
            await self.send(
                Challenge(
                    game=self.game_name,
                    opponents=self.opponents,
                    time_control=self.time_control,
                    policy=self.policy,
                )
            )
        else:
            await self.send(
                JoinLobby(game=self.game_name, time_control=self.time_control, policy=self.policy)
            )

    async def _ask_again(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self._asking = False
        await self._ask_for_matches()

    def _check_done(self) -> None:
        finished = len(self.results) + len(self.lost_track)
        if self.games and finished >= self.games and not self.matches:
            self._done.set()

    async def resign(self, match_id: str) -> None:
        await self.send(Resign(match_id=match_id))


def run_bot(
    url: str,
    token: str,
    choose: ChooseFn | None = None,
    *,
    agent: AgentLike | Callable[[Game], AgentLike] | None = None,
    game: str | None = None,
    games: int = 1,
    **options: Any,
) -> list[MatchEnd]:
    """Play ``games`` matches (0: forever) and return their ``match_end`` messages.

    The blocking entry point; see :class:`BotClient` for the options.
    """
    client = BotClient(url, token, choose, agent=agent, game=game, games=games, **options)
    return asyncio.run(client.run())
