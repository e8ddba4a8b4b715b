"""The referee of one match: one asyncio task that asks each seat in turn and checks every answer.

The runner owns the position. It rolls the dice itself from a per-match secret seed (from
``secrets``; ``match_start`` carries a commitment to it, ``match_end`` and the stored record
reveal it; each roll derives from the seed as :mod:`ply_arena.protocol.dice` says), sends ``turn``
to the seat to move, waits on ``time.monotonic()`` for its ``move``, checks it with ``games``,
queues it for the database's single writer (``database.recorder``: in order, batched commits) and
moves on; the match's result is stored only after every move of it is committed.

Faults and what they cost (``docs/protocol.md`` repeats this):

- timeout (limit + bank + latency grace spent) and an unparseable or illegal move follow the
  match's policy: ``forfeit`` ends the match (termination ``timeout`` / ``illegal_move``, the seat
  ``at_fault``); ``random_move`` plays a random legal move for the bot, tells it with
  ``forced_move`` and records ``forced``.
- running out of time while disconnected always ends the match with ``disconnect``.
- ``resign`` ends the match at once, with the resigning seat at fault.
- a forfeit pays the faulty seat the game's ``min_utility``; the other seats share what is left
  of ``constant_sum`` equally (for a two-player zero-sum game: -1 / +1); games without a constant
  sum pay the others ``max_utility``.
- reaching the move limit (seat moves, not dice) ends the match ``move_limit``: every seat gets
  ``constant_sum / n`` (0 without a constant sum).
- an administrator's abort (``abort()``: ``arena matches abort``) ends it ``aborted`` with zero
  payoffs.

Rated only what was played (as lichess aborts a game in which a player never moved): a match
that ends before every seat has made a move of its own (a forced move is the referee's, not the
bot's) keeps its termination, fault and payoffs, so its record verifies and a tournament scores
it, but it is stored unrated and moves no rating. It is decided once, at the match's end, from
the moves played: nothing is added to a turn.

A server that stops leaves its matches running in the database (the task is cancelled: no
result is stored, the bots are not told ``match_end``); the next server on that database resumes
them (server/referee/resume.py): ``restore()`` replays the stored moves, each seat's clock is
its last stored bank, and the match waits for its bots to reconnect before its next turn.

Spectators (server/spectate): while a match has watchers, every event and every turn is also
published to them, after the bots' own messages of the same step; ``snapshot()`` is the match as
it stands (``watch_start``). Nothing is built for a match nobody watches.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ply_arena import games
from ply_arena.games import CHANCE, IllegalMoveError, InvalidMoveError, Move
from ply_arena.protocol import dice
from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.messages import (
    ErrorMessage,
    ForcedMove,
    MakeMove,
    MatchEnd,
    MatchStart,
    PlayedMove,
    Policy,
    SeatInfo,
    Termination,
    TimeControl,
)
from ply_arena.protocol.outcomes import drawn_payoffs, forfeit_payoffs
from ply_arena.protocol.spectator import WatchResult, WatchStart
from ply_arena.protocol.verify import parse_event
from ply_arena.protocol.wire import ECHO_CHARS, clip
from ply_arena.server.db.database import Database
from ply_arena.server.ratings import service as rating_service
from ply_arena.server.ratings.book import RatingBook
from ply_arena.server.referee.clock import SeatClock, latency_grace_ms
from ply_arena.server.referee.connections import ConnectionRegistry, RefereeError
from ply_arena.server.repositories import matches as match_repo
from ply_arena.server.repositories import resume as resume_repo
from ply_arena.server.repositories.resume import StoredEvent
from ply_arena.server.spectate import SpectatorHub
from ply_arena.server.spectate import stream as watch_stream

log = logging.getLogger(__name__)

ForcedReason = Literal["timeout", "illegal_move"]


@dataclass(frozen=True, slots=True)
class SeatBot:
    bot_id: int
    name: str


@dataclass(frozen=True, slots=True)
class _Submitted:
    move: str
    info: dict[str, Any] | None
    received_at: float


class _Interrupted:
    """A turn's answer that is no move: a seat resigned or an administrator aborted the match
    (the flags say which)."""


_INTERRUPTED = _Interrupted()


class MatchRunner:
    """One running match. ``run()`` is the task; the session calls ``submit`` / ``resign``."""

    def __init__(
        self,
        *,
        match_id: str,
        game: games.Game,
        seats: list[SeatBot],
        time_control: TimeControl,
        policy: Policy,
        database: Database,
        connections: ConnectionRegistry,
        max_latency_grace_ms: int,
        move_limit: int | None = None,
        on_finish: Callable[[MatchRunner], None] | None = None,
        origin: str = "lobby",
        rated: bool = False,
        ratings: RatingBook | None = None,
        spectators: SpectatorHub | None = None,
        seed: int | None = None,
        owner: str | None = None,
        stored: bool = False,
    ) -> None:
        if len(seats) != game.num_players:
            raise ValueError(f"{game.name} needs {game.num_players} seats, got {len(seats)}")
        self.match_id = match_id
        self.game = game
        self.seats = seats
        self.time_control = time_control
        self.policy = policy
        self.move_limit = move_limit
        self.origin = origin
        self.rated = rated
        #: The server process that plays it (``matches.owner``, server/cluster): its result
        #: is stored only while the database still names that process (None: not checked).
        self.owner = owner
        #: Its row was stored before its start, by the process that asked this one to play it
        #: (server/cluster/hosting.py): the start does not store it again.
        self._stored = stored
        #: The referee's rating book, updated with the ratings this match's result moves.
        self._ratings = ratings
        #: The dice seed: a new secret, or a resumed match's stored one.
        self.seed = secrets.randbits(64) if seed is None else seed
        self.state = game.initial_state()
        self.events: list[PlayedMove] = []
        self.finished = False
        self.result: MatchEnd | None = None
        self._database = database
        self._connections = connections
        self._grace_cap_ms = max_latency_grace_ms
        self._on_finish = on_finish
        # Dice come from the seed alone, each from its ply (protocol/dice.py), so that anyone
        # can re-derive them from the record; forced moves use a stream of their own.
        self._seed_text = str(self.seed)
        #: Whether the bots were sent match_start (a shutdown may cut a match before that).
        self._announced = False
        self.dice_commitment = dice.commitment(self._seed_text, match_id)
        # Made on first use: seeding from a string hashes it, and most matches never force.
        self._forcer: random.Random | None = None
        self._clocks = [SeatClock(time_control.move_ms, float(time_control.bank_ms)) for _ in seats]
        self._seat_of = {s.bot_id: i for i, s in enumerate(seats)}
        self._last_move_ply = [-1] * len(seats)
        self._seat_moves = 0
        self._turn_seat: int | None = None
        self._turn_sent_at = 0.0
        self._waiter: asyncio.Future[_Submitted | _Interrupted | None] | None = None
        #: The state the legal-move cache below belongs to, its notations as a JSON array,
        #: and notation -> move (the turn lists them; the answer is looked up, not re-parsed).
        self._legal_state: games.State | None = None
        self._legal_json = "[]"
        self._legal: dict[str, Move] = {}
        #: Each event of ``events`` as JSON, for the turns' ``since_last``.
        self._event_json: list[str] = []
        self._match_id_json = _dumps(match_id)
        self._position_json = "{}"
        self._resigned: int | None = None
        #: An administrator asked for the match to end (``abort()``).
        self._abort_requested = False
        #: Set by ``restore()``: the ply a resumed match goes on from, and how long it waits for
        #: its bots to come back before its next turn.
        self._resumed_at: int | None = None
        self._resume_wait_s = 0.0
        #: Set when a seat's bot logs in again (or the match is interrupted) while it waits.
        self._seat_back = asyncio.Event()
        self._finishing: asyncio.Future[None] | None = None
        #: The position JSON of one state (shared by the turn and the spectators' move).
        self._position_state: games.State | None = None
        self._position_text_json = "{}"
        # Spectators: the hub, the forced moves by ply (the snapshot lists them), spectator
        # messages not yet published and whether their flush is scheduled, and each event as
        # the snapshot lists it (built on demand).
        self._spectators = spectators
        self._forced: dict[int, str] = {}
        self._watch_out: list[str] = []
        self._watch_flush_due = False
        self._watched_json: list[str] = []

    # --- called by the referee / sessions -------------------------------------------------

    def seat_of(self, bot_id: int) -> int | None:
        return self._seat_of.get(bot_id)

    @property
    def announced(self) -> bool:
        """Whether the bots were sent match_start (the match is stored and under way)."""
        return self._announced

    def snapshot(self) -> WatchStart:
        """The match as it stands, as a spectator's ``watch_start`` (protocol/spectator.py):
        seats, time control, position, every event so far, the clocks now, who is thinking and
        what is left of its move; ``result`` once it is over. Nothing a player does not see:
        no bot's ``info``, no seed while it runs. Cheap (no database, no rules): pages may call
        it for every live match."""
        return WatchStart.model_validate_json(self.snapshot_json())

    def snapshot_json(self) -> str:
        """``snapshot()`` as JSON text, exactly what a new spectator is sent first."""
        if self._watch_out:
            # Published first to the watchers already there: a spectator subscribed right
            # after this snapshot must not get those events again.
            self._flush_watch()
        cache = self._watched_json
        forced = self._forced
        for ply in range(len(cache), len(self.events)):
            cache.append(watch_stream.watched_move_json(self._event_json[ply], forced.get(ply)))
        result = self.result
        to_move: int | None = None
        move_ms: int | None = None
        clocks: list[int] | None = None
        result_json: str | None = None
        if result is None:
            status = "running"
            position_json = self._position_text(self.state)
            seat = self._turn_seat
            if seat is not None and self._waiter is not None and not self._waiter.done():
                spent = (time.monotonic() - self._turn_sent_at) * 1000
                move_ms, clocks = self._clocks_now(seat, spent)
                to_move = seat
            else:
                clocks = [int(c.bank_ms) for c in self._clocks]
        else:
            status = "aborted" if result.termination is Termination.aborted else "finished"
            position_json = _dumps(result.position)
            result_json = WatchResult(
                payoffs=result.payoffs,
                termination=result.termination,
                at_fault=result.at_fault,
                plies=result.plies,
                seed=result.seed,
            ).model_dump_json()
        return watch_stream.start_text(
            self._match_id_json,
            game=self.game.name,
            seats_json=_dumps([{"seat": i, "bot": b.name} for i, b in enumerate(self.seats)]),
            time_control_json=self.time_control.model_dump_json(),
            policy=self.policy.value,
            rated=self.rated,
            status=status,
            position_json=position_json,
            moves_json=cache,
            clocks_ms=clocks,
            to_move=to_move,
            move_ms=move_ms,
            dice_commitment=self.dice_commitment,
            result_json=result_json,
        )

    def submit(self, bot_id: int, message: MakeMove, received_at: float) -> None:
        """Hand the current seat's move to the runner; RefereeError for a request out of place.

        The move itself is checked by the runner, which owns the position and the policy.
        """
        seat = self._check_seat(bot_id)
        ply = len(self.events)
        waiting = self._waiter is not None and not self._waiter.done()
        if message.ply < ply:
            raise RefereeError(
                ErrorCode.stale_ply,
                f"ply {message.ply} is over; the match is at ply {ply}",
                self.match_id,
            )
        if message.ply == ply and self._waiter is not None and self._waiter.done():
            # This ply is being settled right now: by a move that arrived first (a duplicate),
            # or, when its time ran out, by the referee (a late move).
            why = (
                "a move for it was already received"
                if not self._waiter.cancelled() and self._waiter.result() is not None
                else "its time ran out just before this move arrived"
            )
            raise RefereeError(
                ErrorCode.stale_ply, f"ply {message.ply} is over: {why}", self.match_id
            )
        if not waiting or self._turn_seat != seat:
            raise RefereeError(
                ErrorCode.not_your_turn,
                f"it is not seat {seat}'s turn at ply {ply}; wait for a turn message",
                self.match_id,
            )
        if message.ply != ply:
            raise RefereeError(
                ErrorCode.stale_ply,
                f"ply {message.ply} is not the current ply {ply}; echo the ply of the turn",
                self.match_id,
            )
        info = message.info.model_dump(exclude_defaults=True) if message.info else None
        assert self._waiter is not None
        self._waiter.set_result(_Submitted(message.move, info, received_at))

    def resign(self, bot_id: int) -> None:
        seat = self._check_seat(bot_id)
        if self._resigned is None:
            self._resigned = seat
        self._interrupt()

    def abort(self) -> bool:
        """End the match ``aborted`` (zero payoffs, unrated) at once: an administrator's call.
        False when it is over already."""
        if self.finished:
            return False
        if not self._abort_requested:
            log.info("match %s: aborted by an administrator", self.match_id)
        self._abort_requested = True
        self._interrupt()
        return True

    def _interrupt(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(_INTERRUPTED)
        self._seat_back.set()

    @property
    def resumed_at(self) -> int | None:
        """The ply this match went on from after a restart (None: not resumed here)."""
        return self._resumed_at

    def restore(self, events: Sequence[StoredEvent], *, wait_s: float) -> None:
        """Go on from a stored match: replay its events through the rules (the dice are the
        seed's), each seat's clock at its last stored bank; ``run()`` then notes the resumption
        and waits up to ``wait_s`` for every bot to be connected before the next turn.

        Raises ValueError when a stored event does not apply (the match cannot be resumed)."""
        for event in events:
            state = self.state
            if event.ply != len(self.events):
                raise ValueError(f"ply {len(self.events)} is missing (found {event.ply})")
            if event.seat is None:
                if not state.is_chance_node():
                    raise ValueError(f"a roll at ply {event.ply}, where a seat is to move")
                rolled = dice.roll(
                    self._seed_text, self.match_id, event.ply, state.chance_outcomes()
                )
                if self.game.format_move(state, rolled) != event.move:
                    raise ValueError(f"the roll at ply {event.ply} is not the seed's")
                move = rolled
            else:
                if state.is_chance_node() or state.player != event.seat:
                    raise ValueError(f"seat {event.seat} moved at ply {event.ply} out of turn")
                move = parse_event(self.game, state, event.move)
                self._last_move_ply[event.seat] = event.ply
                self._seat_moves += 1
                if event.forced is not None:
                    self._forced[event.ply] = event.forced
                if event.bank_ms is not None:
                    self._clocks[event.seat].bank_ms = float(event.bank_ms)
            self.state = state.result(move)
            played = PlayedMove(ply=event.ply, seat=event.seat, move=event.move)
            self.events.append(played)
            self._event_json.append(played.model_dump_json())
        self._resumed_at = len(self.events)
        self._resume_wait_s = wait_s

    def resync(self, bot_id: int) -> None:
        """Bring a reconnected bot up to date: match_start again, with the current position and
        every event so far, and its turn if it is on move."""
        seat = self.seat_of(bot_id)
        if seat is None or self.finished:
            return
        self._connections.send(bot_id, self._match_start(seat))
        if self._turn_seat == seat and self._waiter is not None and not self._waiter.done():
            self._connections.send_json(bot_id, self._turn_message(seat))
        self._seat_back.set()

    def _check_seat(self, bot_id: int) -> int:
        seat = self.seat_of(bot_id)
        if seat is None:
            raise RefereeError(
                ErrorCode.not_in_match, "this bot holds no seat in that match", self.match_id
            )
        if self.finished:
            raise RefereeError(ErrorCode.unknown_match, "that match is over", self.match_id)
        return seat

    # --- the task -----------------------------------------------------------------------

    async def run(self) -> None:
        try:
            if self._resumed_at is None:
                await self._start()
            else:
                await self._resume()
            termination, at_fault = await self._play()
            if at_fault is not None:
                payoffs = forfeit_payoffs(self.game, at_fault)
            elif termination is Termination.normal:
                payoffs = [float(p) for p in self.state.returns()]
            elif termination is Termination.aborted:
                payoffs = [0.0] * len(self.seats)
            else:
                payoffs = drawn_payoffs(self.game)
            # Its own task: a shutdown that comes while the result is being stored must not
            # cut the match off between its stored result and its match_end.
            self._finishing = asyncio.ensure_future(self._finish(termination, at_fault, payoffs))
            await asyncio.shield(self._finishing)
        except asyncio.CancelledError:
            if self._finishing is not None:
                # The match ended just before the shutdown: its result is stored and told.
                with contextlib.suppress(Exception):
                    await self._finishing
            elif self._announced:
                # The server stops: the match stays running in the database, with every move
                # queued so far (the recorder commits them before the database closes), and
                # the next server resumes it.
                log.info("match %s left running at ply %d", self.match_id, len(self.events))
            raise
        except Exception:
            log.exception("match %s failed; aborting it", self.match_id)
            await self._abort()
        finally:
            if self._on_finish is not None:
                self._on_finish(self)

    async def _start(self) -> None:
        """Store the new match, then tell its bots."""
        # Awaited: the match is in the database (and REST) before any bot hears of it.
        if not self._stored:
            await self._start_row()
        log.info(
            "match %s of %s started: %s; %d+%d ms, %s",
            self.match_id,
            self.game.name,
            ", ".join(f"{b.name} (seat {i})" for i, b in enumerate(self.seats)),
            self.time_control.move_ms,
            self.time_control.bank_ms,
            self.policy.value,
        )
        for seat, bot in enumerate(self.seats):
            self._connections.send(bot.bot_id, self._match_start(seat))
        self._announced = True

    async def _start_row(self) -> None:
        await self._database.recorder.submit(
            match_repo.create_match,
            match_id=self.match_id,
            game=self.game.name,
            bot_ids=[s.bot_id for s in self.seats],
            time_control=self.time_control.model_dump(),
            policy=self.policy.value,
            seed=self.seed,
            origin=self.origin,
            rated=self.rated,
            owner=self.owner,
        )

    async def _resume(self) -> None:
        """Note the resumption, then wait for the bots: each gets ``match_start`` (the position,
        every move so far) when it logs in again (``resync``); the next turn goes out once all
        are back or ``resume_wait_s`` is over, and its clock starts then (the time no server
        hosted the match is charged to nobody)."""
        ply = self._resumed_at
        assert ply is not None
        await self._database.recorder.submit(
            resume_repo.note_resumed, match_id=self.match_id, ply=ply
        )
        self._announced = True
        log.info(
            "match %s of %s resumed at ply %d: %s",
            self.match_id,
            self.game.name,
            ply,
            ", ".join(f"{b.name} (seat {i})" for i, b in enumerate(self.seats)),
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._resume_wait_s
        while not self._abort_requested and self._resigned is None:
            if all(self._connections.get(s.bot_id) is not None for s in self.seats):
                return
            self._seat_back.clear()
            try:
                async with asyncio.timeout_at(deadline):
                    await self._seat_back.wait()
            except TimeoutError:
                away = [s.name for s in self.seats if self._connections.get(s.bot_id) is None]
                log.info(
                    "match %s: %s not back after %g s; it goes on (a clock runs while away)",
                    self.match_id,
                    ", ".join(away),
                    self._resume_wait_s,
                )
                return

    async def _play(self) -> tuple[Termination, int | None]:
        while True:
            if self._abort_requested:
                return Termination.aborted, None
            if self._resigned is not None:
                return Termination.resign, self._resigned
            state = self.state
            if state.is_terminal():
                return Termination.normal, None
            if state.player == CHANCE:
                ply = len(self.events)
                outcome = dice.roll(self._seed_text, self.match_id, ply, state.chance_outcomes())
                await self._apply(None, outcome)
                continue
            if self.move_limit is not None and self._seat_moves >= self.move_limit:
                return Termination.move_limit, None
            seat = state.player
            answer = await self._ask(seat)
            if answer is _INTERRUPTED:
                continue
            if answer is None:  # out of time
                bot_id = self.seats[seat].bot_id
                if self._connections.get(bot_id) is None:
                    return Termination.disconnect, seat
                if self.policy is Policy.forfeit:
                    return Termination.timeout, seat
                self._clocks[seat].flag()
                await self._force(seat, "timeout")
                continue
            assert isinstance(answer, _Submitted)
            think_ms = round((answer.received_at - self._turn_sent_at) * 1000)
            try:
                move = self._parse(state, answer.move)
            except IllegalMoveError as e:
                code, why = ErrorCode.illegal_move, _quoted(str(e), answer.move)
            except (InvalidMoveError, ValueError) as e:
                why = f"{_quoted(str(e), answer.move)}; legal moves are {self._legal_list()}"
                code = ErrorCode.invalid_move
            else:
                await self._apply(seat, move, think_ms=think_ms, info=answer.info)
                continue
            self._tell(seat, code, why)
            if self.policy is Policy.forfeit:
                return Termination.illegal_move, seat
            await self._force(seat, "illegal_move", think_ms=think_ms)

    def _parse(self, state: games.State, text: str) -> Move:
        """The move ``text`` names; the game's own parser for anything but exact notation.

        The turn listed the legal moves in notation: an exact match is legal by construction.
        Anything else (other spellings the game accepts, or errors) goes through parse_move,
        which raises InvalidMoveError / IllegalMoveError with the game's own message.
        """
        if self._legal_state is state:
            move = self._legal.get(text)
            if move is not None:
                return move
        return self.game.parse_move(state, text)

    async def _ask(self, seat: int) -> _Submitted | _Interrupted | None:
        """Send the turn and wait for the answer; None when the seat ran out of time."""
        bot_id = self.seats[seat].bot_id
        conn = self._connections.get(bot_id)
        grace = latency_grace_ms(conn.rtt_ms() if conn is not None else None, self._grace_cap_ms)
        clock = self._clocks[seat]
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[_Submitted | _Interrupted | None] = loop.create_future()
        self._waiter = waiter
        self._turn_seat = seat
        self._turn_sent_at = time.monotonic()
        self._connections.send_json(bot_id, self._turn_message(seat, fresh=True))
        if self._spectators is not None and self._spectators.watched(self.match_id):
            self._watch(
                watch_stream.turn_text(
                    self._match_id_json,
                    seat=seat,
                    ply=len(self.events),
                    move_ms=clock.move_ms,
                    clocks_ms=[int(c.bank_ms) for c in self._clocks],
                )
            )
        # A timer that resolves the waiter with None, rather than wait_for: that wraps every
        # turn in another future, callbacks and a cancellation, and turns are the hot path.
        timer = loop.call_later(clock.allowance_ms(grace) / 1000, _expire, waiter)
        try:
            answer = await waiter
        finally:
            timer.cancel()
            self._turn_seat = None
            self._waiter = None
        if answer is None:
            return None
        if isinstance(answer, _Submitted):
            elapsed_ms = (answer.received_at - self._turn_sent_at) * 1000
            if not clock.charge(elapsed_ms, grace):
                return None
        return answer

    async def _apply(
        self,
        seat: int | None,
        move: Move,
        *,
        think_ms: int | None = None,
        info: dict[str, Any] | None = None,
        forced: str | None = None,
    ) -> str:
        state = self.state
        text = self.game.format_move(state, move)
        ply = len(self.events)
        # The position advances before the write so that a resync during the write is consistent.
        self.state = state.result(move)
        event = PlayedMove(ply=ply, seat=seat, move=text)
        self.events.append(event)
        self._event_json.append(event.model_dump_json())
        if seat is not None:
            self._last_move_ply[seat] = ply
            self._seat_moves += 1
        if forced is not None:
            self._forced[ply] = forced
        if self._spectators is not None and self._spectators.watched(self.match_id):
            self._watch(
                watch_stream.move_text(
                    self._match_id_json,
                    ply=ply,
                    seat=seat,
                    move=text,
                    forced=forced,
                    position_json=self._position_text(self.state),
                    think_ms=think_ms,
                    clocks_ms=[int(c.bank_ms) for c in self._clocks],
                )
            )
        # Not awaited: the single writer keeps writes in order and commits them in batches, so
        # the next turn goes out at once; _finish's result write checks that all of them are in.
        self._database.recorder.submit(
            match_repo.record_move,
            match_id=self.match_id,
            ply=ply,
            seat=seat,
            move=text,
            think_ms=think_ms,
            info=info,
            forced=forced,
            bank_ms=None if seat is None else int(self._clocks[seat].bank_ms),
        )
        return text

    async def _force(self, seat: int, reason: ForcedReason, *, think_ms: int | None = None) -> None:
        if self._forcer is None:
            self._forcer = random.Random(f"{self.seed}:forced")
        move = self._forcer.choice(list(self.state.actions()))
        ply = len(self.events)
        text = await self._apply(seat, move, think_ms=think_ms, forced=reason)
        self._connections.send(
            self.seats[seat].bot_id,
            ForcedMove(match_id=self.match_id, ply=ply, move=text, reason=reason),
        )

    def _legal_list(self, most: int = 60) -> str:
        """The turn's legal moves in notation, for an error message (the first ``most``)."""
        texts = list(self._legal)
        shown = ", ".join(texts[:most])
        return shown + (f" and {len(texts) - most} more" if len(texts) > most else "")

    def _watch(self, text: str) -> None:
        """Queue a message for the spectators; published soon, after the bots' messages."""
        self._watch_out.append(text)
        if not self._watch_flush_due:
            self._watch_flush_due = True
            loop = asyncio.get_running_loop()
            # Two hops: the writers woken in this step (the bot's next turn) run in the next
            # iteration of the loop; the spectators' frames go out in the one after, so that a
            # match's watchers never delay its own players.
            loop.call_soon(loop.call_soon, self._flush_watch)

    def _flush_watch(self) -> None:
        self._watch_flush_due = False
        if self._watch_out and self._spectators is not None:
            texts, self._watch_out = self._watch_out, []
            self._spectators.publish(self.match_id, texts)

    def _tell(self, seat: int, code: ErrorCode, why: str) -> None:
        self._connections.send(
            self.seats[seat].bot_id,
            ErrorMessage(code=code, message=why, fatal=False, match_id=self.match_id),
        )

    async def _finish(
        self, termination: Termination, at_fault: int | None, payoffs: list[float]
    ) -> None:
        self.finished = True
        position = self.game.state_to_json(self.state)
        # Store first, then tell the bots: a bot that sees match_end can fetch the final record.
        # The result is queued right behind the last moves (usually one commit for both) and is
        # stored only if every ply of the match is: a lost move write would make a record that
        # does not re-derive, so the match is then stored as aborted instead.
        if self.rated and termination is not Termination.aborted and not self._every_seat_played():
            # Nobody's strength was measured: a bot that resigned, timed out or left before
            # its first move (say, its process plays another game). Lichess aborts such a game.
            self.rated = False
            log.info(
                "match %s ended before every seat had moved: unrated (%s)",
                self.match_id,
                ", ".join(b.name for i, b in enumerate(self.seats) if not self._played(i)),
            )
        try:
            # With the result, in the same transaction, the ratings it moves (when rated).
            await self._database.recorder.submit(
                rating_service.store_result,
                match_id=self.match_id,
                payoffs=payoffs,
                termination=termination.value,
                at_fault=at_fault,
                final_position=position,
                plies=len(self.events),
                game=self.game.name,
                bot_ids=[s.bot_id for s in self.seats],
                rated=self.rated,
                book=self._ratings,
                owner=self.owner,
            )
        except match_repo.NotOwnerError:
            # Another process took the match over (this one's lease ran out while it played):
            # that one plays it on, from the stored moves, and tells the bots how it ends.
            log.warning(
                "match %s is played by another server process now; this one lets it go",
                self.match_id,
            )
            return
        except match_repo.IncompleteMatchError:
            log.error("match %s lost a move write; storing it as aborted", self.match_id)
            termination, at_fault, payoffs = Termination.aborted, None, [0.0] * len(self.seats)
            await self._database.recorder.submit(
                match_repo.finish_match,
                match_id=self.match_id,
                payoffs=payoffs,
                termination=termination.value,
                at_fault=at_fault,
                final_position=position,
            )
        self.result = MatchEnd(
            match_id=self.match_id,
            game=self.game.name,
            payoffs=payoffs,
            termination=termination,
            at_fault=at_fault,
            position=position,
            plies=len(self.events),
            seed=self._seed_text,
        )
        log.info(
            "match %s ended: %s after %d plies, payoffs %s%s",
            self.match_id,
            termination.value,
            len(self.events),
            " ".join(f"{b.name}={p:g}" for b, p in zip(self.seats, payoffs, strict=True)),
            "" if at_fault is None else f", {self.seats[at_fault].name} at fault",
        )
        if self._announced:  # a match cut before its match_start is stored, not told
            for bot in self.seats:
                self._connections.send(bot.bot_id, self.result)
        if self._spectators is not None:
            self._flush_watch()  # the last events before the end
            self._spectators.end(self.match_id, self.result.model_dump_json())

    def _played(self, seat: int) -> bool:
        """Whether ``seat`` made a move of its own (not forced by the referee) in the match."""
        if self._last_move_ply[seat] < 0:
            return False
        forced = self._forced
        if not forced:
            return True
        return any(e.seat == seat and e.ply not in forced for e in self.events)

    def _every_seat_played(self) -> bool:
        """Whether every seat made a move of its own: a match worth rating (at its end only)."""
        return all(self._played(seat) for seat in range(len(self.seats)))

    async def _abort(self) -> None:
        if self.finished:
            return
        try:
            await self._finish(Termination.aborted, None, [0.0] * len(self.seats))
        except Exception:
            # The match row may not exist (create failed) or the database is gone: a match still
            # marked running is resumed at the next start (or ended by `arena matches abort`).
            log.exception("could not store the abort of match %s", self.match_id)

    # --- messages -----------------------------------------------------------------------

    def _match_start(self, seat: int) -> MatchStart:
        """match_start as of now: at the start the initial position, on a resync the current
        one with every event so far."""
        return MatchStart(
            match_id=self.match_id,
            game=self.game.name,
            seats=[SeatInfo(seat=i, bot=b.name) for i, b in enumerate(self.seats)],
            your_seat=seat,
            time_control=self.time_control,
            policy=self.policy,
            position=self.game.state_to_json(self.state),
            ply=len(self.events),
            moves=self.events,
            dice_commitment=self.dice_commitment,
            origin=self.origin,  # type: ignore[arg-type]
        )

    def _turn_message(self, seat: int, *, fresh: bool = False) -> str:
        """The ``turn`` for ``seat`` as JSON text: the bytes ``Turn(...).model_dump_json()``
        gives (tests/server/test_wire.py checks that), built from pieces.

        A turn goes out for every move; building and validating the pydantic model each time
        cost more than the rest of the turn. The position and legal moves are computed once per
        state, each past event is serialised once.
        """
        state = self.state
        if self._legal_state is not state:
            moves = state.actions()
            texts = [self.game.format_move(state, m) for m in moves]
            self._legal = dict(zip(texts, moves, strict=True))
            self._legal_json = _dumps(texts)
            self._position_json = self._position_text(state)
            self._legal_state = state
        # On a resync part of this turn is already gone. deadline_ms = move_ms + own bank.
        spent = 0.0 if fresh else (time.monotonic() - self._turn_sent_at) * 1000
        move_left, banks = self._clocks_now(seat, spent)
        clocks = ",".join(map(str, banks))
        since = ",".join(self._event_json[self._last_move_ply[seat] + 1 :])
        return (
            f'{{"type":"turn","match_id":{self._match_id_json},"ply":{len(self.events)},'
            f'"position":{self._position_json},"legal_moves":{self._legal_json},'
            f'"since_last":[{since}],"clocks_ms":[{clocks}],'
            f'"move_ms":{move_left},"deadline_ms":{move_left + banks[seat]}}}'
        )

    def _clocks_now(self, seat: int, spent_ms: float) -> tuple[int, list[int]]:
        """What is left of ``seat``'s move limit once its turn has run ``spent_ms``, and every
        bank, ``seat``'s less what the turn has run over the limit (as the clock will charge
        it)."""
        banks = [int(c.bank_ms) for c in self._clocks]
        clock = self._clocks[seat]
        banks[seat] = max(0, int(clock.bank_ms - max(0.0, spent_ms - clock.move_ms)))
        return max(0, int(clock.move_ms - spent_ms)), banks

    def _position_text(self, state: games.State) -> str:
        """The position's JSON, computed once per state (the turn and the spectators' move)."""
        if self._position_state is not state:
            self._position_text_json = _dumps(self.game.state_to_json(state))
            self._position_state = state
        return self._position_text_json


def _quoted(message: str, sent: str) -> str:
    """The game's message about a refused move, quoting at most ECHO_CHARS of what was sent."""
    return message.replace(sent, clip(sent)) if len(sent) > ECHO_CHARS else message


def _expire(waiter: asyncio.Future[Any]) -> None:
    """The turn's time is up: the waiter resolves to None (unless an answer came first)."""
    if not waiter.done():
        waiter.set_result(None)


#: Compact JSON as pydantic writes it (no spaces, UTF-8 text rather than escapes); one encoder,
#: since json.dumps with options builds a new one on every call.
_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
