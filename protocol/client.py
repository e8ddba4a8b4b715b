"""The bot kit: write one function, the kit plays matches on a Ply Arena server.

A bot author writes ``choose(state, legal_moves, clock) -> move``; everything else (the handshake,
dispatch on ``type``, several matches at once, heartbeats, reconnecting with backoff and resync,
the lobby and challenges, recovering from refused or dropped requests) is done here, as
lichess-bot does for lichess::

    import random
    from ply_arena.protocol.client import run_bot

    def choose(state, legal_moves, clock):
        return random.choice(legal_moves)

    run_bot("ws://127.0.0.1:8000/ws", "TOKEN", choose, game="connect_four", games=3)

``state`` is the game's own State (``games.get(game).state_from_json(position)``), so a bot can
search with ``state.actions()`` / ``state.result(move)``; ``legal_moves`` are notation strings;
``clock`` says how much time is left (see :class:`Clock`). ``choose`` may return a notation string,
a move object of the game (formatted with ``game.format_move``), or ``(move, info)`` with ``info``
a :class:`~ply_arena.protocol.messages.MoveInfo`, a dict of its fields, or a reference agent's
SearchInfo.

When ``choose`` raises or returns something that is not a legal move, the kit resigns that match
and ``run()`` raises the error (``on_choose_error="raise"``, the default), so a broken bot never
looks like a working one; ``on_choose_error="random"`` plays a random legal move instead, loudly.

Instead of ``choose`` a reference agent can play (``agent=reference_agents.make(...)``, or any
object with ``.choose(state, time_limit) -> (move, info)``, or a factory ``game -> agent`` so that
every match gets its own agent).

A blocking ``choose`` runs in a worker thread of its own, so pings are answered while it thinks;
the thread is a daemon, so a ``choose`` that never returns cannot keep the program alive once
``run_bot`` has returned (its late answer is logged and discarded). For more control subclass
:class:`BotClient` and override the ``on_<type>`` handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import itertools
import json
import logging
import math
import random
import sys
import threading
import time
import typing
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import websockets
from pydantic import BaseModel, ValidationError
from websockets.asyncio.client import ClientConnection

from ply_arena import games
from ply_arena.games import Game, State
from ply_arena.protocol import dice
from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.messages import (
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
    LeaveLobby,
    LobbyJoined,
    LobbyLeft,
    MakeMove,
    MatchEnd,
    MatchStart,
    MoveInfo,
    Ping,
    PlayedMove,
    Policy,
    Pong,
    Resign,
    ServerMessage,
    Termination,
    TimeControl,
    Turn,
    Welcome,
    server_message_adapter,
)
from ply_arena.protocol.verify import check_events

__all__ = [
    "BotClient",
    "BotError",
    "ChooseError",
    "Clock",
    "MatchView",
    "check_url",
    "run_bot",
]

log = logging.getLogger("ply_arena.protocol.client")

#: The game of a name (``games`` is also BotClient's count of matches).
_game_named = games.get

#: WebSocket close code of a server restart ("service restart"): the matches are kept.
CLOSE_RESTART = 1012
#: Errors after which reconnecting cannot help: the kit stops and raises BotError.
FATAL_CODES = frozenset(
    {
        ErrorCode.bad_token,
        ErrorCode.bot_disabled,
        ErrorCode.unsupported_version,
        ErrorCode.replaced,
    }
)

#: The key of the lobby or challenge request in BotClient._unanswered.
_REQUEST = ("request", "")
#: After a rate_limited, requests for matches go out at most this often for the rest of the
#: connection (the server allows about 20 messages per second, docs/protocol.md).
PACED_GAP_S = 0.06
#: Accepts, declines and resigns are sent again at most this many times when unanswered.
MAX_RESENDS = 3
#: In the text of the server's error about a move whose info it refused (the move was played).
_INFO_REFUSED = "info refused"
#: How long the kit waits for the match_end of the matches it resigned before it stops anyway.
RESIGN_WAIT_S = 5.0


class BotError(RuntimeError):
    """The server refused this bot or its request for good (bad token, disabled, wrong version,
    replaced, unknown game, bad time control, challenge declined)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class ChooseError(ValueError):
    """``choose`` (or the agent) returned something that is not a legal move."""

    def __init__(self, message: str, *, returned: Any, legal_moves: list[str]) -> None:
        super().__init__(message)
        self.returned = returned
        self.legal_moves = legal_moves


def check_url(url: str) -> str:
    """``url`` if it is a WebSocket address (``ws://HOST:PORT/ws``), else ValueError saying so."""
    try:
        parts = urllib.parse.urlsplit(url)
        ok = parts.scheme in ("ws", "wss") and bool(parts.hostname)
        _ = parts.port  # a port that is not a number raises here
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"{url!r} is not a WebSocket URL: use ws://HOST:PORT/ws, e.g. ws://127.0.0.1:8000/ws "
            "(wss:// behind a TLS proxy)"
        )
    return url


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
#: accept_challenges: False (decline all), True (accept all), bot names, or a predicate.
AcceptPolicy = bool | Iterable[str] | Callable[[ChallengeReceived], bool]


@typing.runtime_checkable
class AgentLike(Protocol):
    """What the kit needs of a reference agent (reference_agents.Agent satisfies it)."""

    def choose(self, state: State, time_limit: float | None = None) -> tuple[Any, Any]: ...


#: A reference agent, or a factory ``game -> agent`` called once per match.
AgentArg = AgentLike | Callable[[Game], AgentLike]


@dataclass
class MatchView:
    """What the kit knows about one running match."""

    start: MatchStart
    game: Game
    agent: AgentLike | None = None
    #: The ``choose`` function that plays this match (None: ``agent`` plays it).
    choose: ChooseFn | None = None
    turn: Turn | None = None
    #: The search running for the latest turn, and the move sent for a ply (resent on resync).
    thinking: asyncio.Task[None] | None = None
    sent: dict[int, MakeMove] = field(default_factory=dict)
    #: Moves played at random because choose() failed (on_choose_error="random").
    fallbacks: int = 0
    #: Why the match is over for the kit (set when it ends or is forgotten).
    over: str | None = None
    #: Mistakes of choose() already warned about in this match (each is said once per match).
    warned: set[str] = field(default_factory=set)
    #: Every event of the match seen so far, by ply: (seat, move), dice with seat None.
    events: dict[int, tuple[int | None, str]] = field(default_factory=dict)
    #: After match_end: True when the revealed seed matched match_start's commitment and gave
    #: every die this bot saw; False when not (logged as an error); None when there was nothing
    #: to check (no commitment, or no seed revealed).
    dice_verified: bool | None = None

    @property
    def match_id(self) -> str:
        return self.start.match_id

    def saw(self, events: Iterable[PlayedMove]) -> None:
        for event in events:
            self.events[event.ply] = (event.seat, event.move)


#: The fields of each server message, by type: what read_server_message keeps.
_SERVER_FIELDS: dict[str, frozenset[str]] = {
    model.model_fields["type"].default: frozenset(model.model_fields)
    for model in typing.get_args(typing.get_args(ServerMessage)[0])
}


def read_server_message(frame: str | bytes) -> ServerMessage:
    """A server message, ignoring fields this kit does not know.

    The server may add fields to its messages within a protocol version (the protocol's rule);
    a kit older than the server must still play. Messages stay strict the other way: the server
    refuses unknown fields from bots, so typos are caught."""
    try:
        data = json.loads(frame)
    except ValueError:
        return server_message_adapter.validate_json(frame)  # raises the ValidationError
    if isinstance(data, dict):
        known = _SERVER_FIELDS.get(data.get("type"))  # type: ignore[arg-type]
        if known is not None and not known.issuperset(data):
            data = {key: value for key, value in data.items() if key in known}
    return server_message_adapter.validate_python(data)


def _match_record(ws_url: str, match_id: str) -> dict[str, Any]:
    """GET /api/matches/{id} on the server behind a bot's WebSocket URL (ws://HOST:PORT/ws ->
    http://HOST:PORT); blocking, for a worker thread."""
    parts = urllib.parse.urlsplit(ws_url)
    scheme = "https" if parts.scheme == "wss" else "http"
    path = parts.path.removesuffix("/").removesuffix("/ws")
    quoted = urllib.parse.quote(match_id, safe="")
    address = f"{scheme}://{parts.netloc}{path}/api/matches/{quoted}"
    with urllib.request.urlopen(address, timeout=5) as response:
        record = json.loads(response.read())
    if not isinstance(record, dict):
        raise ValueError("the record is not a JSON object")
    return record


def end_from_record(record: dict[str, Any]) -> MatchEnd | None:
    """The ``match_end`` a bot would have got, rebuilt from a finished match's stored record
    (None while it runs): for a match that ended while the bot was away."""
    result = record.get("result")
    if record.get("status") == "running" or not isinstance(result, dict):
        return None
    seats = record.get("seats") or []
    return MatchEnd(
        match_id=record["id"],
        game=record.get("game"),
        # null payoffs: aborted while no server played it (0 each, as an abort pays).
        payoffs=result.get("payoffs") or [0.0] * len(seats),
        termination=result["termination"],
        at_fault=result.get("at_fault"),
        position=result.get("final_position") or {},
        plies=record.get("plies", 0),
        seed=record.get("seed"),
    )


def check_dice(view: MatchView, end: MatchEnd) -> bool | None:
    """At match_end: does the revealed seed match the commitment of match_start, and give every
    die this bot saw? (protocol/dice.py says how rolls derive from the seed.) None when there is
    nothing to check; False is logged as an error, with what disagrees."""
    commitment = view.start.dice_commitment
    if commitment is None or end.seed is None:
        return None
    problems: list[str] = []
    if dice.commitment(end.seed, view.match_id) != commitment:
        problems.append(f"the seed {end.seed!r} does not match the commitment {commitment!r}")
    else:
        # The events from ply 0 on that this bot knows without a gap: the rest it never saw.
        known: list[dict[str, Any]] = []
        while (event := view.events.get(len(known))) is not None:
            known.append({"ply": len(known), "seat": event[0], "move": event[1]})
        problems = check_events(view.game, view.match_id, known, seed=end.seed).problems
    if problems:
        log.error(
            "match %s: the dice do not verify: %s (keep the record, GET /api/matches/%s/record, "
            "and tell the arena's operator)",
            view.match_id,
            "; ".join(problems),
            view.match_id,
        )
        return False
    return True


@dataclass
class _Unanswered:
    """A message sent that the kit will send again if its answer does not come."""

    message: BaseModel
    sent_at: float
    attempts: int = 1
    #: After a rate_limited: send it again at this time (else after request_timeout_s).
    resend_at: float | None = None


#: The name of the threads ``choose`` runs in.
CHOOSE_THREAD = "ply-arena-choose"


class DaemonThreads(Executor):
    """Runs each call in a new daemon thread.

    ThreadPoolExecutor's workers (asyncio's default executor included) are joined when the
    program exits, so one ``choose`` stuck in a loop or a ``sleep`` would keep the process alive
    after ``run_bot`` returned, and make Ctrl+C wait for it. A daemon thread is simply abandoned
    at exit. Starting a thread costs some 100 microseconds, nothing next to a move.
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return  # cancelled before it started
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=work, name=CHOOSE_THREAD, daemon=True).start()
        return future


def _safety_ms(move_ms: int) -> int:
    # Leave room for the network and for the kit itself: 10% of the limit, at least 30 ms.
    return max(30, move_ms // 10)


#: The keys of a move's info (MoveInfo's fields), for messages.
INFO_KEYS = tuple(MoveInfo.model_fields)


def _to_move_info(
    info: Any, game: Game, state: State
) -> tuple[MoveInfo | None, list[tuple[str, str]]]:
    """MoveInfo from a MoveInfo, a dict, or a reference agent's SearchInfo (None when nothing
    is left), and ``(key, one line)`` for each thing dropped from it: an unknown key, a value of
    the wrong type. One bad value costs only itself."""
    if info is None or isinstance(info, MoveInfo):
        return info, []
    problems: list[tuple[str, str]] = []
    if isinstance(info, dict):
        data = info
        for key in data:
            if key not in INFO_KEYS:
                close = difflib.get_close_matches(str(key), INFO_KEYS, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                problems.append(
                    (
                        str(key),
                        f"unknown info key {key!r}{hint} dropped; the keys are "
                        f"{', '.join(INFO_KEYS)}",
                    )
                )
    else:  # a reference agent's SearchInfo: its extras (time_ms) are its own business
        data = info.as_json(game, state)
    fields = {k: v for k, v in data.items() if k in INFO_KEYS and v is not None}
    score = fields.get("score")
    if isinstance(score, float) and not math.isfinite(score):
        # JSON has no infinities: a proven win or loss is said in words instead.
        fields.pop("score")
        fields["comment"] = (str(fields.get("comment", "")) + f" score={score}").strip()
    if isinstance(fields.get("pv"), list | tuple):
        fields["pv"] = _pv_text(game, state, fields["pv"][:64])
    if "comment" in fields:
        fields["comment"] = str(fields["comment"])[:280]
    usable = {}
    for key, value in fields.items():
        try:
            MoveInfo.model_validate({key: value})
        except ValidationError as exc:
            why = exc.errors(include_url=False)[0]["msg"]
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "..."
            problems.append((key, f"info {key}={shown} is not usable ({why}): dropped"))
        else:
            usable[key] = value
    return (MoveInfo.model_validate(usable) if usable else None), problems


def _pv_text(game: Game, state: State, pv: list[Any] | tuple[Any, ...]) -> list[str]:
    """A principal variation in notation: move objects are formatted along the line (Connect
    Four's 3 is "4"), notation strings are kept."""
    if all(isinstance(m, str) for m in pv):
        return list(pv)
    texts: list[str] = []
    position: State | None = state
    for item in pv:
        text = item if isinstance(item, str) else None
        try:
            assert position is not None and not position.is_terminal()
            move = game.parse_move(position, item) if text is not None else item
            if text is None:
                text = game.format_move(position, move)
            position = position.result(move)
            if position.is_chance_node():
                position = None  # the line beyond a dice roll is not a line of moves
        except Exception:
            position = None
        texts.append(text if text is not None else str(item))
    return texts


def _check_info_pair(game: Game, state: State, result: Any, turn: Turn, who: str) -> None:
    """ChooseError saying so when ``result`` is ``(legal move, something that is not info)``:
    the move is fine, the second item is the problem."""
    if not (isinstance(result, tuple) and len(result) == 2):
        return
    try:
        _legal_text(game, state, result[0], turn, who)
    except ChooseError:
        return
    raise ChooseError(
        f"{who} returned {result!r} in match {turn.match_id} at ply {turn.ply}: "
        f"{result[0]!r} is a legal move, but the second item, {result[1]!r}, is not usable info "
        f"(return the move alone, or (move, info) with info a dict of {', '.join(INFO_KEYS)}, "
        "a MoveInfo, a reference agent's SearchInfo, or None)",
        returned=result,
        legal_moves=list(turn.legal_moves),
    )


def _split_result(result: Any) -> tuple[Any, Any]:
    """``move`` or ``(move, info)`` -> (move, info). Moves may themselves be tuples, so a pair
    counts as (move, info) only when its second item looks like info."""
    if isinstance(result, tuple) and len(result) == 2:
        second = result[1]
        if second is None or isinstance(second, MoveInfo | dict) or hasattr(second, "as_json"):
            return result[0], second
    return result, None


#: How each game reads an int returned as a move object (docs/games.md): the name of the index
#: and its range, for the ChooseError of an int that is no move of the position.
_INT_MOVES: dict[str, tuple[str, str]] = {
    "tic_tac_toe": ("cell index", "0..8, row by row from the top-left"),
    "connect_four": ("column index", "0..6 from the left"),
    "othello": ("square index", "0..63, 64 for pass"),
    "chinese_checkers": ("move value", "an int with the origin's and the target's bit set"),
}


def _is_int(move: Any) -> bool:
    return isinstance(move, int) and not isinstance(move, bool)


def _legal_text(game: Game, state: State, move: Any, turn: Turn, who: str) -> str:
    """The notation of ``move`` if it is one of the turn's legal moves, else ChooseError.

    A string may be another spelling of a legal move ("B2", " 4 "); anything else must be a move
    object of this position (one of ``state.actions()``, or one that round-trips through the
    notation to itself), so that Connect Four's ``-1`` is not read as the last column.
    """
    legal = turn.legal_moves
    if isinstance(move, str) and move in legal:
        return move
    text: str | None = None
    with contextlib.suppress(Exception):
        if isinstance(move, str):
            text = game.format_move(state, game.parse_move(state, move.strip()))
        elif not isinstance(move, bool) and move is not None:
            written = game.format_move(state, move)
            if move in state.actions() or game.parse_move(state, written) == move:
                text = written
    if text is not None and text in legal:
        return text
    shown = ", ".join(legal[:40]) + (f", ... ({len(legal)} in all)" if len(legal) > 40 else "")
    hint = " (did you forget to return the move?)" if move is None else ""
    if _is_int(move):
        hint = " " + _int_reading(game, state)
    raise ChooseError(
        f"{who} returned {move!r}{hint}, which is not a legal move in match {turn.match_id} at "
        f"ply {turn.ply}; legal moves: {shown}",
        returned=move,
        legal_moves=list(legal),
    )


def _int_reading(game: Game, state: State) -> str:
    """How the kit reads an int in ``game``, with an example, e.g. ``(an int is read as ...)``."""
    index, counts = _INT_MOVES.get(game.name, ("move object", ""))
    example = ""
    with contextlib.suppress(Exception):
        first = next(a for a in state.actions() if _is_int(a))
        example = f": {first!r} is the move written {game.format_move(state, first)!r}"
    counts = f", {counts}" if counts else ""
    return (
        f"(an int is read as a {game.name} move object, the {index}{counts}{example}; "
        "return a string of legal_moves to play by notation)"
    )


def _accept_policy(accept: AcceptPolicy) -> bool | frozenset[str] | Callable[..., bool]:
    if isinstance(accept, bool) or callable(accept):
        return accept
    if isinstance(accept, str):
        return frozenset({accept})  # one name, not its letters
    return frozenset(accept)


class BotClient:
    """An async bot connection. ``await BotClient(...).run()`` plays until ``games`` have ended.

    Parameters:
        url: the server's WebSocket address, e.g. ``ws://127.0.0.1:8000/ws`` (ValueError for
            anything else, e.g. an ``http://`` URL).
        token: the bot's token from ``arena bots create``.
        choose: ``choose(state, legal_moves, clock) -> move`` (or pass ``agent``); or a mapping
            game name -> choose function, to play several games on this one connection (each
            match is played by its game's function; a match of a game not in it is resigned at
            once and a challenge to one is declined).
        agent: a reference agent, or a factory ``game -> agent`` called once per match; or a
            mapping game name -> agent or factory, as for ``choose``.
        game: join the lobby of this game (omit to only answer challenges). With a mapping, one
            of its games (the bot waits in one lobby at a time); the matches the server starts
            for the bot (a tournament's) and the challenges it accepts may be of any of them.
        lobby: False: never join the lobby; play the matches the server starts for the bot
            (a tournament's: they arrive as ``match_start`` without a request) and the
            challenges it accepts. ``games`` still counts them (0: play until stopped). With a
            ``game`` too, a match of another game is resigned at once (the bot was written for
            its game); without one, matches of every game are played.
        games: how many matches to play before returning (0: play forever). A match ``aborted``
            by the server (a restart) does not count: another is played in its place (the
            aborted one is still in the results).
        concurrent: how many matches to play at once (joins the lobby again while below it).
        challenge: names of bots to challenge instead of joining the lobby.
        challenge_wait_s: while a challenged bot is not connected (``unknown_bot``), challenge
            again every 2 s for this long, then stop with BotError ``unknown_bot`` (a misspelt
            name never connects).
        accept_challenges: which challenges to accept: False (the default) declines them all,
            True accepts any, a list of bot names accepts those bots', a function
            ``f(challenge_received) -> bool`` decides each one. Whatever it says, a challenge is
            declined while the bot already plays ``concurrent`` matches or has played ``games``.
        min_move_ms: decline challenges whose time control gives less than this per move.
        on_choose_error: what to do when ``choose`` raises or returns something that is not a legal
            move: ``"raise"`` (resign that match and every other one running, then make
            ``run()`` raise the error) or ``"random"`` (log it loudly, play a random legal move,
            count it in ``fallbacks``).
        time_control / policy: asked for when joining or challenging (None: server defaults).
        reconnect: reconnect with exponential backoff when the connection drops after a login.
        max_retries: give up (ConnectionError) after this many failed reconnections in a row
            (None: keep trying; a welcome resets the count).
        first_connect_retries: how many times to retry before the first login when the server
            cannot be reached (a wrong address should fail at once, so 0). An address that
            answers but not with a WebSocket handshake is never retried.
        request_timeout_s: send a lobby join, challenge, accept, decline or resign again when
            its answer has not come within this time (a rate-limited server drops messages).
        executor: where ``choose`` runs (default: a new daemon thread per call, see
            :class:`DaemonThreads`).
        on_match_end: called with each ``match_end`` as it comes (``run()`` returns them all
            at the end, which with ``games=0`` is never).
    """

    def __init__(
        self,
        url: str,
        token: str,
        choose: ChooseFn | Mapping[str, ChooseFn] | None = None,
        *,
        agent: AgentArg | Mapping[str, AgentArg] | None = None,
        game: str | None = None,
        lobby: bool = True,
        games: int = 1,
        concurrent: int = 1,
        challenge: list[str] | None = None,
        challenge_wait_s: float = 60.0,
        accept_challenges: AcceptPolicy = False,
        min_move_ms: int = 0,
        on_choose_error: Literal["raise", "random"] = "raise",
        time_control: TimeControl | None = None,
        policy: Policy = Policy.forfeit,
        client_name: str = "ply-arena-kit",
        reconnect: bool = True,
        max_backoff_s: float = 30.0,
        max_retries: int | None = None,
        first_connect_retries: int = 0,
        request_timeout_s: float = 5.0,
        executor: Executor | None = None,
        on_match_end: Callable[[MatchEnd], None] | None = None,
    ) -> None:
        if (choose is None) == (agent is None):
            raise ValueError("pass exactly one of choose= or agent=")
        if on_choose_error not in ("raise", "random"):
            raise ValueError(
                f"on_choose_error must be 'raise' or 'random', not {on_choose_error!r}"
            )
        check_url(url)
        self.url = url
        self.token = token
        #: With a mapping (``choose`` or ``agent``): what plays each game, by its name; matches
        #: of the other games are resigned and challenges to them declined. None: one player
        #: for every match.
        self.players: dict[str, ChooseFn | AgentArg] | None = None
        self.choose_fn: ChooseFn | None = None
        self.agent: AgentArg | None = None
        given: Mapping[str, ChooseFn | AgentArg] | None = None
        if isinstance(choose, Mapping):
            given = choose
        elif isinstance(agent, Mapping):
            given = agent
        if given is not None:
            if not given:
                raise ValueError("the mapping of games to players is empty")
            self.players = {_game_named(name).name: player for name, player in given.items()}
            if game is not None:
                game = _game_named(game).name
                if game not in self.players:
                    raise ValueError(
                        f"game={game!r} is not one of the games it plays: "
                        f"{', '.join(sorted(self.players))}"
                    )
        elif callable(choose):
            self.choose_fn = choose
        elif agent is not None and not isinstance(agent, Mapping):
            self.agent = agent
        self._plays_agents = agent is not None
        self.game_name = game
        self.games = games
        self.concurrent = max(1, concurrent)
        self.opponents = list(challenge or [])
        self.challenge_wait_s = challenge_wait_s
        self.accept_challenges = _accept_policy(accept_challenges)
        self.lobby = lobby
        if game is None and lobby and self.accept_challenges is False:
            raise ValueError(
                "without game= the bot only plays the challenges it accepts, and it declines "
                "them all: pass game=... to join a lobby, or accept_challenges=True (or a list "
                "of bot names)"
            )
        self.min_move_ms = min_move_ms
        self.on_choose_error = on_choose_error
        self.time_control = time_control
        self.policy = policy
        self.client_name = client_name
        self.reconnect = reconnect
        self.max_backoff_s = max_backoff_s
        self.max_retries = max_retries
        self.first_connect_retries = first_connect_retries
        self.request_timeout_s = request_timeout_s
        self.executor: Executor = executor if executor is not None else DaemonThreads()
        self._match_end_hook = on_match_end

        self.bot_name: str | None = None
        self.heartbeat_ms = 15_000
        self.matches: dict[str, MatchView] = {}
        self.results: list[MatchEnd] = []
        #: Matches that ended while we were away (no match_end was received for them).
        self.lost_track: list[str] = []
        #: For every match that ended: how many of our moves were random fallbacks.
        self.fallbacks: dict[str, int] = {}
        self.started = 0
        #: Matches that ended ``aborted`` (the server stopped): they are in ``results`` but do not
        #: count towards ``games``, so the bot plays another match for each.
        self.aborted = 0
        #: Of ``lost_track``, those the server's record says were aborted (by an administrator):
        #: they are in ``aborted`` too.
        self.lost_aborted = 0
        #: Of ``lost_track``, those whose record could not be read: counted as played.
        self._lost_unread = 0
        #: Lost matches whose record is being looked up (GET /api/matches/{id}).
        self._looking_up: set[str] = set()
        self._lookups: set[asyncio.Task[None]] = set()
        self._ws: ClientConnection | None = None
        self._ping_ids = itertools.count(1)
        self._last_heard = time.monotonic()
        self._done = asyncio.Event()
        self._wake = asyncio.Event()
        self._fatal: BotError | None = None
        #: Why the kit is stopping: run() raises it once the running matches are over.
        self._failure: BaseException | None = None
        self._closing: asyncio.Future[None] | None = None
        self._give_up: asyncio.TimerHandle | None = None
        self._attempt = 0  # reconnection attempts since the last welcome
        #: Seconds between challenges while the challenged bot is not connected.
        self.retry_s = 2.0
        #: When the challenged bot was first found not connected (None: it was found).
        self._absent_since: float | None = None
        #: Sent and not answered yet, by key: the lobby join or challenge (_REQUEST), and
        #: ("accept" | "decline", challenge_id), ("resign", match_id).
        self._unanswered: dict[tuple[str, str], _Unanswered] = {}
        self._accepting: dict[str, str] = {}  # challenge_id -> challenger, for our accepts
        #: In a lobby queue, or with a challenge pending (answered or not).
        self._seeking = False
        self._challenge_id: str | None = None
        self._leaving = 0  # leaves sent whose `left` has not come yet
        self._quiet_until = 0.0  # after a rate_limited: send nothing costly before this
        self._paced = False  # rate-limited on this connection: space requests out
        self._rate_strikes = 0  # rate_limited errors since a request was last answered
        self._last_request_at = 0.0
        self._not_before = 0.0  # no new request before this (a challenged bot is away)
        self._welcomed = False  # this connection's welcome has come
        #: Kinds of info refusals already logged (see _info_refused).
        self._info_refusals: set[str] = set()

    # --- public API ---------------------------------------------------------------------------

    async def run(self) -> list[MatchEnd]:
        """Connect (and reconnect) until the wanted number of matches have ended.

        Raises BotError when the server refuses the bot for good, ConnectionError when it cannot
        be reached, and the error of ``choose`` (see ``on_choose_error``).
        """
        last_error: BaseException | None = None
        while not self._done.is_set():
            opened = False
            try:
                ws = await self._open()
                if ws is None:
                    break  # stop() came while connecting
                async with ws:
                    opened = True
                    self._ws = ws
                    await self._session(ws)
            except (websockets.exceptions.InvalidHandshake, TimeoutError) as exc:
                if not opened and self.bot_name is None:
                    # Something answers there, but not the arena's WebSocket: retrying cannot
                    # help.
                    raise ConnectionError(
                        f"{self.url} did not answer the WebSocket handshake ({exc}): is it the "
                        "arena's address? It looks like ws://HOST:PORT/ws"
                    ) from exc
                last_error = exc
                self._log_lost(exc)
            except (OSError, websockets.exceptions.WebSocketException) as exc:
                last_error = exc
                self._log_lost(exc)
            finally:
                self._ws = None
            if self._fatal is not None:
                raise self._fatal
            if self._done.is_set() or self._failure is not None:
                break
            if not self.reconnect:
                raise ConnectionError(f"disconnected from {self.url}")
            if self.bot_name is None and self._attempt >= self.first_connect_retries:
                # Never logged in: most likely a wrong URL or no server; say so instead of
                # retrying forever.
                attempts = self._attempt + 1
                raise ConnectionError(
                    f"could not log in at {self.url} ({last_error or 'closed before welcome'}; "
                    f"{attempts} attempt{'s' if attempts > 1 else ''}): is the server running "
                    "there? The URL looks like ws://HOST:PORT/ws"
                )
            if self.max_retries is not None and self._attempt >= self.max_retries:
                raise ConnectionError(
                    f"lost {self.url}; gave up after {self._attempt + 1} attempts to reconnect"
                )
            # Exponential backoff with jitter, so that a restarted server is not hit by every bot
            # at the same instant; a welcome resets it.
            # The jitter stays within max_backoff_s: a restarted server waits a bounded time
            # for its bots (ARENA_RESUME_WAIT_S, longer than the default 30 s).
            delay = min(self.max_backoff_s, 0.25 * 2**self._attempt * random.uniform(0.8, 1.2))
            self._attempt += 1
            log.info("reconnecting in %.2f s (attempt %d)", delay, self._attempt)
            with contextlib.suppress(TimeoutError):  # stop() ends the wait
                async with asyncio.timeout(delay):
                    await self._done.wait()
        if self._give_up is not None:
            self._give_up.cancel()
        for view in self.matches.values():
            if view.thinking is not None:
                view.thinking.cancel()
        total = sum(self.fallbacks.values())
        if total:
            log.error(
                "choose() failed %d times in %d matches: random moves were played instead",
                total,
                sum(1 for n in self.fallbacks.values() if n),
            )
        if self._failure is not None:
            raise self._failure
        return self.results

    async def _open(self) -> ClientConnection | None:
        """A new connection, or None when stop() comes first: the opening handshake (up to
        open_timeout) is given up, and a connection opened just then is closed again."""
        if self._done.is_set():
            return None
        # close_timeout: a bot that stops (Ctrl+C, its games done) waits at most this long for
        # the server's answer to its close frame (websockets' default is 10 s).
        opening = asyncio.ensure_future(
            websockets.connect(
                self.url, max_size=16 * 1024 * 1024, open_timeout=10, close_timeout=2
            )
        )
        stopped = asyncio.ensure_future(self._done.wait())
        try:
            await asyncio.wait((opening, stopped), return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            if not opening.done():
                opening.cancel()
                await asyncio.wait((opening,))
        if not self._done.is_set():
            return opening.result()  # the connection, or why it could not be opened
        if not opening.cancelled() and opening.exception() is None:
            await opening.result().close()
        return None

    def _log_lost(self, exc: BaseException) -> None:
        if self.bot_name is None:
            log.info("could not connect to %s: %r", self.url, exc)  # run() says so if final
        elif (
            isinstance(exc, websockets.exceptions.ConnectionClosed)
            and exc.rcvd is not None
            and exc.rcvd.code == CLOSE_RESTART
        ):
            # The restart was said already (shutting_down): nothing went wrong.
            log.info("the server closed the connection to restart (1012)")
        else:
            log.warning("connection to %s lost: %r", self.url, exc)

    async def send(self, message: BaseModel) -> None:
        """Send one message; lost silently if the connection is down (resync redoes moves)."""
        ws = self._ws
        if ws is None:
            return
        with contextlib.suppress(websockets.exceptions.ConnectionClosed):
            await ws.send(message.model_dump_json(exclude_none=True))

    def stop(self) -> None:
        """Finish: close the connection and let run() return, at once whatever it is doing
        (connecting, waiting to reconnect, playing: the close handshake waits at most 2 s)."""
        self._done.set()
        self._wake.set()
        if self._ws is not None:
            # Kept so the task is not garbage-collected before the close completes.
            self._closing = asyncio.ensure_future(self._ws.close())

    async def resign(self, match_id: str) -> None:
        """Give up a match (sent again if the server drops it)."""
        await self._send_expecting(("resign", match_id), Resign(match_id=match_id))

    # --- the connection -----------------------------------------------------------------------

    async def _session(self, ws: ClientConnection) -> None:
        await ws.send(
            Hello(
                protocol=PROTOCOL_VERSION, token=self.token, client=self.client_name
            ).model_dump_json()
        )
        self._last_heard = time.monotonic()
        self._reset_requests()  # a new connection is in no queue and has no pending challenge
        heartbeat = asyncio.create_task(self._heartbeat(ws))
        keeper = asyncio.create_task(self._keeper())
        try:
            async for frame in ws:
                self._last_heard = time.monotonic()
                if isinstance(frame, bytes):
                    log.warning("ignoring a binary frame from the server")
                    continue
                try:
                    message = read_server_message(frame)
                except ValidationError as exc:
                    # A newer server may send a message we do not know; keep playing.
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
            helpers = (heartbeat, keeper)
            for task in helpers:
                task.cancel()
            # asyncio.wait, not `await task` in suppress(CancelledError): that would swallow a
            # cancellation of the session itself too.
            await asyncio.wait(helpers)
            for task in helpers:
                if not task.cancelled() and (error := task.exception()) is not None:
                    raise error

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
        self._welcomed = True
        self.heartbeat_ms = message.heartbeat_ms
        self._attempt = 0
        if message.bot in self.opponents:
            self._fatal = BotError("unknown_bot", f"{message.bot} cannot challenge itself")
            return
        running = set(message.matches)
        # Matches we were playing that the server no longer lists ended while we were away.
        for match_id in list(self.matches):
            if match_id not in running:
                self._forget(match_id, "it ended while we were disconnected")
        # A resign that may not have reached the server before the connection dropped.
        for key, item in list(self._unanswered.items()):
            if key[0] == "resign" and key[1] in running:
                await self.send(item.message)
        log.info("logged in as %s; running matches: %s", message.bot, sorted(running) or "none")
        self._check_done()
        await self._ask_for_matches()

    async def on_joined(self, message: LobbyJoined) -> None:
        self._answered(_REQUEST)
        if self._wanted() == 0 or self._failure is not None:
            # A join answered after the kit stopped wanting a match (sent twice because its
            # answer was slow, or overtaken by a match): leave the queue again.
            self._leaving += 1
            await self.send(LeaveLobby(game=message.game))
            return
        self._seeking = True
        log.info("waiting in the %s lobby (%d waiting)", message.game, message.waiting)

    async def on_left(self, message: LobbyLeft) -> None:
        if self._leaving:
            self._leaving -= 1  # the answer to a leave of ours (see on_joined)
            return
        self._seeking = False
        self._wake.set()

    async def on_challenge_sent(self, message: ChallengeSent) -> None:
        self._answered(_REQUEST)
        self._absent_since = None
        self._challenge_id = message.challenge_id
        log.info("challenge %s sent", message.challenge_id)

    async def on_challenge_declined(self, message: ChallengeDeclined) -> None:
        self._unanswered.pop(("accept", message.challenge_id), None)
        if self._unanswered.pop(("decline", message.challenge_id), None) is not None:
            return  # the answer to our own decline
        if message.challenge_id != self._challenge_id:
            return
        self._challenge_id = None
        self._seeking = False
        why = message.reason or "it gave no reason"
        log.warning("%s declined challenge %s: %s", message.by, message.challenge_id, why)
        # Asking again would pester the opponent: a declined challenge ends the run.
        self._stop_with(
            BotError("challenge_declined", f"{message.by} declined the challenge: {why}")
        )

    async def on_challenge_received(self, message: ChallengeReceived) -> None:
        why_not = self._refusal(message)
        tc = message.time_control
        what = (
            f"{message.challenger}'s challenge to {message.game} "
            f"({tc.move_ms} ms per move + {tc.bank_ms} ms bank, {message.policy.value})"
        )
        if why_not is None:
            log.info("accepting %s", what)
            self._accepting[message.challenge_id] = message.challenger
            await self._send_expecting(
                ("accept", message.challenge_id),
                AcceptChallenge(challenge_id=message.challenge_id),
            )
        else:
            log.info("declining %s: %s", what, why_not)
            await self._send_expecting(
                ("decline", message.challenge_id),
                DeclineChallenge(challenge_id=message.challenge_id, reason=why_not[:200]),
            )

    async def _refuse(self, message: MatchStart, why: str) -> None:
        log.error("match %s is %s, %s: resigning it", message.match_id, message.game, why)
        await self.resign(message.match_id)

    async def on_match_start(self, message: MatchStart) -> None:
        view = self.matches.get(message.match_id)
        if view is not None:
            view.saw(message.moves)
            return  # a resync after reconnecting: we know this match already
        # A match this bot cannot play (a tournament of another game, say) is resigned at
        # once, rather than crash the bot or run out of time move after move.
        if self.players is not None and message.game not in self.players:
            why = f"this bot plays {', '.join(sorted(self.players))}"
            await self._refuse(message, why)
            return
        if (
            self.players is None
            and not self.lobby
            and self.game_name is not None
            and message.game != self.game_name
        ):
            # Started for one game, the bot was written for it: pass game=None to play all.
            why = f"this bot plays {self.game_name} (game=None plays every game)"
            await self._refuse(message, why)
            return
        game = games.get(message.game)
        try:
            agent = self._agent_for(game)
        except ValueError as exc:
            await self._refuse(message, f"this bot cannot play it: {exc}")
            return
        choose = None
        if agent is None:
            choose = self.choose_fn if self.players is None else self.players[game.name]
        view = MatchView(
            start=message,
            game=game,
            agent=agent,
            choose=choose,  # type: ignore[arg-type]
        )
        view.saw(message.moves)
        self.matches[message.match_id] = view
        self.started += 1
        seated = {s.bot for s in message.seats}
        accepted = [cid for cid, challenger in self._accepting.items() if challenger in seated]
        for challenge_id in accepted:
            del self._accepting[challenge_id]
            self._unanswered.pop(("accept", challenge_id), None)
        if accepted and not self.opponents:
            # A challenge we accepted, while the bot may wait in the lobby: stay there only if
            # it still wants another match.
            if self._seeking and self._wanted() == 0:
                self._seeking = False
                self._answered(_REQUEST)
                self._leaving += 1
                await self.send(LeaveLobby(game=self.game_name))
        elif message.game == self.game_name:
            # The match our lobby join or challenge asked for.
            self._answered(_REQUEST)
            self._seeking = False
            self._challenge_id = None
        seats = ", ".join(f"{s.seat}:{s.bot}" for s in message.seats)
        log.info(
            "match %s of %s started (%s), we are seat %d",
            message.match_id,
            message.game,
            seats,
            message.your_seat,
        )
        if self._failure is not None:
            await self.resign(message.match_id)  # stopping: do not keep the opponent waiting
            return
        await self._ask_for_matches()

    async def on_turn(self, message: Turn) -> None:
        view = self.matches.get(message.match_id)
        if view is None:
            log.warning("turn for unknown match %s", message.match_id)
            return
        if self._failure is not None:
            return  # resigned already; the match_end is on its way
        clock = Clock(
            seat=view.start.your_seat,
            clocks_ms=tuple(message.clocks_ms),
            move_ms=message.move_ms,
            deadline_ms=message.deadline_ms,
        )
        previous = view.turn
        view.turn = message
        view.saw(message.since_last)
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
        view = self.matches.get(message.match_id)
        if view is not None:
            view.events[message.ply] = (view.start.your_seat, message.move)
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
            # A match resigned at its start (one the bot cannot play): the resign is answered.
            self._unanswered.pop(("resign", message.match_id), None)
            return
        view.over = f"the match ended meanwhile ({message.termination.value})"
        if view.thinking is not None and not view.thinking.done():
            view.thinking.cancel()
            if view.turn is not None:
                log.warning(
                    "match %s ended (%s) while %s was still thinking about ply %d; whatever it "
                    "returns will be discarded",
                    message.match_id,
                    message.termination.value,
                    self._who(),
                    view.turn.ply,
                )
        self._unanswered.pop(("resign", message.match_id), None)
        view.dice_verified = check_dice(view, message)
        self.results.append(message)
        if self._match_end_hook is not None:
            try:
                self._match_end_hook(message)
            except Exception:
                log.exception("on_match_end failed")
        self.fallbacks[message.match_id] = view.fallbacks
        seat = view.start.your_seat
        payoff = message.payoffs[seat] if seat < len(message.payoffs) else "?"
        if self.on_choose_error == "random":
            log_at = logging.ERROR if view.fallbacks else logging.INFO
            log.log(
                log_at,
                "match %s ended (%s): payoff %s; random fallbacks: %d of our moves",
                message.match_id,
                message.termination.value,
                payoff,
                view.fallbacks,
            )
        else:
            log.info(
                "match %s ended (%s): payoff %s",
                message.match_id,
                message.termination.value,
                payoff,
            )
        if message.termination == Termination.aborted:
            self.aborted += 1
            if self.games:
                log.warning(
                    "match %s was aborted (ended by an administrator, or not resumable "
                    "after a restart): it does not count towards games=%d",
                    message.match_id,
                    self.games,
                )
        self.on_result(view, message)
        if self._failure is not None:
            if not self.matches:
                self.stop()
            return
        self._check_done()
        await self._ask_for_matches()

    async def on_error(self, message: ErrorMessage) -> None:
        if message.code in FATAL_CODES:
            # Said once, by the BotError it raises (uncaught: one line, `error: ...`).
            log.info("server refused the bot: %s (%s)", message.message, message.code)
            self._fatal = BotError(message.code, message.message)
            return
        if not message.fatal and message.match_id is not None and _INFO_REFUSED in message.message:
            self._info_refused(message)
            return
        code = message.code
        if code == ErrorCode.unknown_bot and self.opponents and self._seeking and not message.fatal:
            self._opponent_absent(message)
            self._wake.set()
            return
        if code == ErrorCode.shutting_down and message.fatal:
            # A restart: the matches are kept, and resync once the server is back.
            log.info("the server is restarting; reconnecting (running matches resume)")
            return
        where = f" in match {message.match_id}" if message.match_id else ""
        log.warning("server error %s%s: %s", code, where, message.message)
        if message.fatal:
            return  # the server closes the connection: the kit reconnects and resyncs
        if code == ErrorCode.rate_limited:
            self._rate_limited(message.retry_after_ms)
        elif code in (ErrorCode.unknown_match, ErrorCode.not_in_match):
            # A match the kit still tracks is over on the server (its match_end was missed).
            if message.match_id is not None and message.match_id in self.matches:
                self._forget(message.match_id, f"the server says {code}")
        elif code in (ErrorCode.unknown_game, ErrorCode.bad_time_control) or (
            code == ErrorCode.invalid_message
            and message.match_id is None  # an error about a move names its match
            and _REQUEST in self._unanswered
        ):
            # Our own request was refused: retrying would only repeat it.
            self._fatal = BotError(message.code, message.message)
        elif code == ErrorCode.unknown_challenge:
            # An accept or decline that came too late (or was sent twice): nothing to wait for.
            for key in [k for k in self._unanswered if k[0] in ("accept", "decline")]:
                del self._unanswered[key]
        # Whatever it was, look again at what is unanswered and whether to ask for a match.
        self._wake.set()

    def _opponent_absent(self, message: ErrorMessage) -> None:
        """The bot we challenge is not connected (yet, or ever: a misspelt name): challenge
        again every ``retry_s`` for ``challenge_wait_s``, then stop with BotError."""
        self._answered(_REQUEST)
        self._seeking = False
        now = time.monotonic()
        if self._absent_since is None:
            self._absent_since = now
            log.info(
                "%s: challenging again every %g s for up to %g s",
                message.message,
                self.retry_s,
                self.challenge_wait_s,
            )
        if now - self._absent_since >= self.challenge_wait_s:
            self._fatal = BotError(
                message.code,
                f"{message.message}, and was not during {self.challenge_wait_s:g} s of "
                f"challenging every {self.retry_s:g} s: check the name (GET /api/bots lists "
                "every bot) and that the bot runs; challenge_wait_s (arena agent "
                "--challenge-wait) waits longer",
            )
        else:
            self._not_before = now + self.retry_s

    def _info_refused(self, message: ErrorMessage) -> None:
        """The server played our move but refused its info: say so clearly, once per kind
        (the field at fault), since the same info goes with every move."""
        detail = message.message.partition("played): ")[2] or message.message
        kind = f"{message.code}:{detail.partition(':')[0]}"
        if kind in self._info_refusals:
            log.debug("match %s: the server dropped our move's info again", message.match_id)
            return
        self._info_refusals.add(kind)
        log.warning(
            "match %s: the server played our move but refused the info sent with it and "
            "dropped it (%s: %s); said once for each kind of refusal",
            message.match_id,
            message.code,
            detail,
        )

    async def on_ping(self, message: Ping) -> None:
        await self.send(Pong(id=message.id))

    async def on_pong(self, message: Pong) -> None:
        pass  # any frame counts as a sign of life (see _heartbeat)

    def on_result(self, view: MatchView, end: MatchEnd) -> None:
        """Called after each match ends; override to keep statistics."""

    # --- playing ------------------------------------------------------------------------------

    def _agent_for(self, game: Game) -> AgentLike | None:
        if not self._plays_agents:
            return None
        agent = typing.cast(
            AgentArg, self.agent if self.players is None else self.players[game.name]
        )
        if isinstance(agent, AgentLike):
            return agent
        return agent(game)  # a factory: a fresh agent (and tree) per match

    async def _play(self, view: MatchView, turn: Turn, clock: Clock) -> None:
        try:
            state = view.game.state_from_json(turn.position)
            work = self.executor.submit(self._decide, view, state, turn, clock)
            try:
                text, info = await asyncio.wrap_future(work)
            except asyncio.CancelledError:
                # The turn is gone (the match ended, a newer turn came, the bot stops): the
                # thread cannot be stopped, but what it returns is said to be discarded.
                work.add_done_callback(lambda done: self._discarded(view, turn, clock, done))
                raise
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if self.on_choose_error != "random":
                await self._fail(view, turn, exc)
                return
            view.fallbacks += 1
            if isinstance(exc, ChooseError):
                log.error(
                    "%s. Playing a random legal move instead (fallback %d in this match)",
                    exc,
                    view.fallbacks,
                )
            else:
                log.error(
                    "%s raised in match %s at ply %d. Playing a random legal move instead "
                    "(fallback %d in this match)",
                    self._who(),
                    view.match_id,
                    turn.ply,
                    view.fallbacks,
                    exc_info=exc,
                )
            text = random.choice(turn.legal_moves)
            info = MoveInfo(comment=f"random fallback: {self._who()} failed")
        move = MakeMove(match_id=turn.match_id, ply=turn.ply, move=text, info=info)
        view.sent[turn.ply] = move
        view.events[turn.ply] = (view.start.your_seat, text)  # a forced_move would replace it
        # Only the latest ply matters when a resync reaches back; old entries can go.
        for ply in [p for p in view.sent if p < turn.ply]:
            del view.sent[ply]
        await self.send(move)

    def _decide(
        self, view: MatchView, state: State, turn: Turn, clock: Clock
    ) -> tuple[str, MoveInfo | None]:
        """Runs in a worker thread: the bot's decision as (notation, info)."""
        game = view.game
        if view.agent is not None:
            budget_ms = min(clock.move_ms, clock.deadline_ms) - _safety_ms(clock.move_ms)
            budget_ms -= clock.elapsed_ms()
            result: Any = view.agent.choose(state, max(0.01, budget_ms / 1000))
        else:
            assert view.choose is not None
            result = view.choose(state, list(turn.legal_moves), clock)
        move, info = _split_result(result)
        try:
            text = _legal_text(game, state, move, turn, self._who())
        except ChooseError:
            _check_info_pair(game, state, result, turn, self._who())
            raise
        # No warning when a move object's digits are also some legal move's notation (Connect
        # Four's 3, written '4'): returning an element of state.actions() is the documented way,
        # and the kit cannot tell it from a slip, so a warning would fire at every match and its
        # advice ("return '3'") would turn a right move into the one beside it.
        move_info, problems = _to_move_info(info, game, state)
        for key, problem in problems:
            # Once per match for each key (a bot makes the same mistake at every move).
            self._warn_once(view, f"info {key}", f"{self._who()}: {problem} (said once per match)")
        return text, move_info

    def _warn_once(self, view: MatchView, kind: str, warning: str | None) -> None:
        """Log ``warning`` unless one of this ``kind`` was logged in this match already."""
        if warning is not None and kind not in view.warned:
            view.warned.add(kind)
            log.warning("match %s: %s", view.match_id, warning)

    def _who(self) -> str:
        return "the agent's choose()" if self._plays_agents else "choose()"

    def _discarded(self, view: MatchView, turn: Turn, clock: Clock, done: Future[Any]) -> None:
        """A choose() call whose turn is gone has finished (in its own thread, or at once if it
        had): its answer is not sent; say so, so that a slow bot's author sees where moves went.
        """
        if done.cancelled():
            return  # it never ran
        if view.over is not None:
            why = view.over
        elif view.turn is not None and view.turn.ply != turn.ply:
            why = f"the match moved on to ply {view.turn.ply}"
        else:
            why = "the bot stopped"
        error = done.exception()
        answer = f"raised {error!r}" if error is not None else f"answered {done.result()[0]!r}"
        log.warning(
            "%s %s for ply %d of match %s after %.1f s (the turn allowed %d ms), but %s: the "
            "answer is discarded",
            self._who(),
            answer,
            turn.ply,
            view.match_id,
            clock.elapsed_ms() / 1000,
            clock.deadline_ms,
            why,
        )

    async def _fail(self, view: MatchView, turn: Turn, error: Exception) -> None:
        """on_choose_error="raise": resign, stop, and let run() raise ``error``."""
        if self._failure is None:
            if not isinstance(error, ChooseError):
                error.add_note(
                    f"(Ply Arena bot kit: {self._who()} raised this in match {view.match_id} "
                    f"at ply {turn.ply}; the kit resigned the match and stopped. Pass "
                    "on_choose_error='random' to play a random legal move instead.)"
                )
            log.error(
                "%s failed in match %s at ply %d: resigning and stopping",
                self._who(),
                view.match_id,
                turn.ply,
            )
            self._stop_with(error)
        # The failing match first; the others would only wait for a bot that is gone.
        await self.resign(view.match_id)
        for match_id in list(self.matches):
            if match_id != view.match_id:
                await self.resign(match_id)

    def _stop_with(self, error: BaseException) -> None:
        """Stop once the running matches have ended (at most RESIGN_WAIT_S when resigning);
        run() then raises ``error``."""
        if self._failure is None:
            self._failure = error
        if not self.matches:
            self.stop()
        elif self._give_up is None:
            self._give_up = asyncio.get_running_loop().call_later(RESIGN_WAIT_S, self.stop)

    def _forget(self, match_id: str, why: str) -> None:
        """Stop tracking a match that is over without a match_end for us."""
        view = self.matches.pop(match_id, None)
        if view is None:
            return
        view.over = f"the match is over ({why})"
        if view.thinking is not None:
            view.thinking.cancel()
        self._unanswered.pop(("resign", match_id), None)
        self.lost_track.append(match_id)
        log.warning("match %s is over (%s); its result is in GET /api/matches", match_id, why)
        if self._failure is not None and not self.matches:
            self.stop()
        # Whether it counts towards games: a match the server aborted (it crashed) does not.
        self._looking_up.add(match_id)
        task = asyncio.create_task(self._look_up(match_id))
        self._lookups.add(task)
        task.add_done_callback(self._lookups.discard)
        self._wake.set()

    async def _look_up(self, match_id: str) -> None:
        """Read a lost match's record from the server's REST API (the same host as the bot's
        WebSocket) and take its result as the match_end that did not come: it is returned
        with the others, and an aborted one is played again."""
        end: MatchEnd | None = None
        try:
            end = end_from_record(await asyncio.to_thread(_match_record, self.url, match_id))
        except Exception as exc:  # no REST API there, or no answer: count it as played
            log.info("could not read the record of match %s (%s): counted as played", match_id, exc)
        finally:
            self._looking_up.discard(match_id)
        if end is None:
            self._lost_unread += 1
        else:
            self.results.append(end)
            log.info(
                "match %s ended while this bot was away (%s); its match_end is rebuilt from the "
                "record",
                match_id,
                end.termination.value,
            )
            if end.termination == Termination.aborted:
                self.aborted += 1
                self.lost_aborted += 1
                if self.games:
                    log.warning(
                        "match %s was aborted (ended by an administrator, or not resumable "
                        "after a restart): it does not count towards games=%d",
                        match_id,
                        self.games,
                    )
        self._check_done()
        self._wake.set()

    # --- asking for matches -------------------------------------------------------------------

    def _reset_requests(self) -> None:
        """Forget requests: a new connection is in no queue and has no pending challenge (a
        resign may still matter: its match goes on)."""
        self._unanswered = {k: v for k, v in self._unanswered.items() if k[0] == "resign"}
        self._accepting = {}
        self._seeking = False
        self._challenge_id = None
        self._leaving = 0
        self._quiet_until = 0.0
        self._paced = False
        self._rate_strikes = 0
        self._last_request_at = 0.0
        self._not_before = 0.0
        self._welcomed = False

    def _wanted(self) -> int:
        """How many more matches to ask for now."""
        if self.games and self.started - self.aborted >= self.games:
            return 0
        return max(0, self.concurrent - len(self.matches))

    def _refusal(self, message: ChallengeReceived) -> str | None:
        """Why a challenge is declined, in words for the challenger (None: accept it)."""
        accept = self.accept_challenges
        if self._failure is not None:
            return "it is stopping"
        if self.players is not None and message.game not in self.players:
            return f"it plays only {', '.join(sorted(self.players))}"
        if accept is False:
            return (
                "it accepts no challenges (the bot kit's default; its author can start it with "
                "accept_challenges=True, or arena agent --accept-challenges)"
            )
        if isinstance(accept, frozenset):
            if message.challenger not in accept:
                return (
                    f"it accepts challenges only from the bots it lists, and "
                    f"{message.challenger} is not one"
                )
        elif callable(accept) and not accept(message):
            return "its accept_challenges function said no"
        if message.time_control.move_ms < self.min_move_ms:
            return (
                f"it plays with at least {self.min_move_ms} ms per move (min_move_ms), and the "
                f"challenge gives {message.time_control.move_ms} ms"
            )
        if self.games and self.started - self.aborted >= self.games:
            return f"it has played the {self.games} matches it was started for"
        if len(self.matches) >= self.concurrent:
            return f"it already plays {len(self.matches)} matches (concurrent={self.concurrent})"
        return None

    async def _send_expecting(self, key: tuple[str, str], message: BaseModel) -> None:
        """Send ``message`` and send it again if its answer does not come (see _keeper)."""
        self._unanswered[key] = _Unanswered(message, time.monotonic())
        self._wake.set()  # the keeper times the resend
        await self.send(message)

    def _answered(self, key: tuple[str, str]) -> None:
        if self._unanswered.pop(key, None) is not None and key == _REQUEST:
            self._rate_strikes = 0

    def _request_ready_at(self) -> float:
        """The earliest time a new lobby join or challenge may go out."""
        ready = max(self._quiet_until, self._not_before)
        if self._paced:
            ready = max(ready, self._last_request_at + PACED_GAP_S)
        return ready

    async def _ask_for_matches(self) -> None:
        if (
            self._seeking
            or self._done.is_set()
            or self._failure is not None
            or self._fatal is not None
            or self._wanted() == 0
            or self.game_name is None  # only answering challenges
            or not self.lobby  # only playing what the server starts (a tournament)
            or not self._welcomed
        ):
            return
        now = time.monotonic()
        if now < self._request_ready_at():
            self._wake.set()  # the keeper sends it when the time comes
            return
        message: JoinLobby | Challenge
        if self.opponents:
            message = Challenge(
                game=self.game_name,
                opponents=self.opponents,
                time_control=self.time_control,
                policy=self.policy,
            )
        else:
            message = JoinLobby(
                game=self.game_name, time_control=self.time_control, policy=self.policy
            )
        self._seeking = True
        self._last_request_at = now
        await self._send_expecting(_REQUEST, message)

    def _rate_limited(self, retry_after_ms: int | None) -> None:
        """The server dropped a message (it does not say which): wait as it says, or back off,
        then send again whatever is still unanswered; from now on space requests out."""
        if retry_after_ms is not None:
            delay = retry_after_ms / 1000
        else:
            delay = min(8.0, 0.5 * 2**self._rate_strikes)
        self._rate_strikes += 1
        self._paced = True
        self._quiet_until = max(self._quiet_until, time.monotonic() + delay)
        for item in self._unanswered.values():
            item.resend_at = self._quiet_until
        log.info("rate limited: sending again what is unanswered in %.2f s", delay)

    async def _keeper(self) -> None:
        """Send again what went unanswered, and ask for matches whenever they are wanted and
        nothing is pending, whatever happened before: the kit never idles while it wants
        matches."""
        while not self._done.is_set():
            self._wake.clear()
            delay = await self._tend()
            # Not asyncio.wait_for: on Python 3.11 it swallows a cancellation that comes once the
            # awaited event is set (as stop() and most handlers set _wake), and this loop would
            # then go on for ever while the session's end waits for it (the bot never stopped).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._wake.wait()

    async def _tend(self) -> float:
        """One look by the keeper; returns the seconds until the next one is needed."""
        if self._done.is_set() or self._fatal is not None or not self._welcomed:
            return 1.0
        now = time.monotonic()
        if now < self._quiet_until:
            return self._quiet_until - now
        wait = 1.0
        for key, item in list(self._unanswered.items()):
            due = (
                item.resend_at
                if item.resend_at is not None
                else (item.sent_at + self.request_timeout_s)
            )
            if now < due:
                wait = min(wait, due - now)
                continue
            if key != _REQUEST and item.attempts > MAX_RESENDS:
                del self._unanswered[key]  # gone for good (the server would have answered)
                continue
            item.attempts += 1
            item.sent_at, item.resend_at = now, None
            if key == _REQUEST:
                self._last_request_at = now
            log.info("no answer to %s: sending it again", item.message.type)  # type: ignore[attr-defined]
            await self.send(item.message)
            wait = min(wait, self.request_timeout_s)
        if not self._seeking and self._wanted() > 0 and self._failure is None:
            ready = self._request_ready_at()
            if now >= ready:
                await self._ask_for_matches()
            else:
                wait = min(wait, ready - now)
        return max(0.005, wait)

    def _check_done(self) -> None:
        finished = len(self.results) - self.aborted + self._lost_unread
        if self.games and finished >= self.games and not self.matches and not self._looking_up:
            # stop() closes the connection too: done may come from a task of its own (a
            # lookup), while the read loop waits for the next frame.
            self.stop()


def run_bot(
    url: str,
    token: str,
    choose: ChooseFn | Mapping[str, ChooseFn] | None = None,
    *,
    agent: AgentArg | Mapping[str, AgentArg] | None = None,
    game: str | None = None,
    games: int = 1,
    **options: Any,
) -> list[MatchEnd]:
    """Play ``games`` matches (0: forever) and return their ``match_end`` messages (aborted
    matches do not count towards ``games`` but are returned too).

    The blocking entry point; see :class:`BotClient` for the options. Raises what ``run()``
    raises: the error of a failing ``choose`` (unless ``on_choose_error="random"``), BotError,
    ConnectionError (and ValueError for a URL or option that cannot work). A BotError,
    ConnectionError or such ValueError that nobody catches ends the program with one line,
    ``error: ...``, rather than a traceback: they say what to fix (a bad token, an unknown game,
    a wrong URL), and the stack would only hide it. Ctrl+C closes the connection and ends the
    program with exit status 130 and one log line, not a traceback (``SystemExit``: catch it to
    go on after Ctrl+C).
    """
    try:
        client = BotClient(url, token, choose, agent=agent, game=game, games=games, **options)
        return asyncio.run(client.run())
    except KeyboardInterrupt:
        # A script's user stops a bot with Ctrl+C; a traceback through asyncio would read as
        # a crash. Its running matches go on without it (see the protocol's disconnects).
        log.warning("stopped by Ctrl+C")
        raise SystemExit(130) from None
    except (BotError, ConnectionError, ValueError) as exc:
        if isinstance(exc, ChooseError):
            raise  # the bot's own bug: its traceback is what the student needs
        _say_in_one_line_if_uncaught(exc)
        raise


#: Set on an exception that should print as one line if it reaches the top (run_bot's).
_ONE_LINE = "_ply_arena_one_line"


def _say_in_one_line_if_uncaught(exc: BaseException) -> None:
    """Mark ``exc`` and install (once) an excepthook that prints marked exceptions as
    ``error: <message>``; every other exception goes to the hook there was before."""
    setattr(exc, _ONE_LINE, True)
    previous = sys.excepthook
    if getattr(previous, _ONE_LINE, False):
        return

    def hook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
        if getattr(value, _ONE_LINE, False):
            sys.stderr.write(f"error: {value}\n")
        else:
            previous(kind, value, tb)

    setattr(hook, _ONE_LINE, True)
    sys.excepthook = hook
