"""The spectator stream (``GET /ws/watch/{match_id}``), as pydantic models: what a page receives.

A spectator needs no token and sends nothing but an optional ``{"type": "ping"}``. The first
message is always a complete snapshot (``watch_start``); then, while the match runs, every event
(``move``, dice included with ``seat`` null), every ``turn`` (a seat starts thinking: clocks to
count down), and the players' own ``match_end``. A spectator sees nothing the players do not: no
bot's ``info`` (it is stored and shown in the record once the match is over), no seed before
``match_end``, no legal-move lists, no word of who is connected. docs/protocol.md describes the
stream ("Watching a match") with an annotated session; ``python -m ply_arena.protocol.schema``
publishes these models in protocol/schema.json under ``spectator_stream``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from ply_arena.protocol.messages import (
    ErrorMessage,
    MatchEnd,
    Policy,
    Pong,
    SeatInfo,
    Termination,
    TimeControl,
    _Message,
)

#: Bumped on any incompatible change of the stream; sent in ``watch_start``.
SPECTATOR_STREAM_VERSION = 1

#: Why the referee played a move for a bot (the ``random_move`` policy), or null.
Forced = Literal["timeout", "illegal_move"]


class WatchedMove(_Message):
    """One event of the match as a spectator sees it: a seat's move, or a dice roll."""

    ply: int = Field(description="the event's ply, from 0")
    seat: int | None = Field(description="seat that moved, or null for a chance event (dice)")
    move: str = Field(description="the move or the chance outcome, in the game's notation")
    forced: Forced | None = Field(
        description="null, or why the referee played this move for the seat (random_move policy)"
    )


class WatchResult(_Message):
    """How a match that is already over ended (``watch_start`` of a finished match)."""

    payoffs: list[float] | None = Field(
        description="payoff per seat; null for a match a server crash left unfinished"
    )
    termination: Termination = Field(description="why the match ended")
    at_fault: int | None = Field(description="seat whose fault ended the match, if any")
    plies: int = Field(description="events played (moves and dice)")
    seed: str | None = Field(
        description="the dice seed, revealed: sha256('<seed>:<match_id>') = dice_commitment"
    )


class WatchStart(_Message):
    """The first message on every connection: the match as it stands, complete. A spectator
    that reconnects (after being dropped, say) simply starts again from here."""

    type: Literal["watch_start"] = "watch_start"
    stream_version: int = Field(description="version of this stream; 1")
    match_id: str = Field(description="the match watched")
    game: str = Field(description="game name (docs/games.md)")
    seats: list[SeatInfo] = Field(description="every seat and the bot in it, by seat")
    time_control: TimeControl = Field(description="the match's time control")
    policy: Policy = Field(description="what the referee does on a timeout or an illegal move")
    rated: bool = Field(description="whether the result moves the bots' ratings")
    status: Literal["running", "finished", "aborted"] = Field(
        description="running; or over: then `result` is set and the server closes (1000)"
    )
    position: dict[str, Any] = Field(
        description="the position now (the final one once over), in the game's JSON form"
    )
    ply: int = Field(description="events so far (moves and dice): len(moves)")
    moves: list[WatchedMove] = Field(
        description="every event so far, in order: position = initial position + moves"
    )
    clocks_ms: list[int] | None = Field(
        description=(
            "every seat's overage bank now, ms, by seat (the seat on move: less what its "
            "current move has run over move_ms); null once the match is over"
        )
    )
    to_move: int | None = Field(
        description="the seat thinking now, or null (between events, or the match is over)"
    )
    move_ms: int | None = Field(
        description=(
            "what is left now of to_move's per-move limit, ms; then its bank runs "
            "(null when to_move is null)"
        )
    )
    dice_commitment: str | None = Field(
        description="as in the players' match_start: sha256 hex of '<seed>:<match_id>'"
    )
    result: WatchResult | None = Field(description="null while running; how it ended once over")


class WatchMove(_Message):
    """An event of the running match: a seat's move (``seat``) or a dice roll (``seat`` null)."""

    type: Literal["move"] = "move"
    match_id: str = Field(description="the match watched")
    ply: int = Field(description="the event's ply (the snapshot's `ply` before it)")
    seat: int | None = Field(description="seat that moved, or null for a chance event (dice)")
    move: str = Field(description="the move or the chance outcome, in the game's notation")
    forced: Forced | None = Field(
        description="null, or why the referee played this move for the seat (random_move policy)"
    )
    position: dict[str, Any] = Field(description="the position after this event")
    think_ms: int | None = Field(
        description="how long the seat thought, measured by the server; null for dice and timeouts"
    )
    clocks_ms: list[int] = Field(description="every seat's overage bank after this event, ms")


class WatchTurn(_Message):
    """A seat starts thinking. Its clock runs from now: ``move_ms``, then its bank."""

    type: Literal["turn"] = "turn"
    match_id: str = Field(description="the match watched")
    seat: int = Field(description="the seat on move")
    ply: int = Field(description="the ply its move will have")
    move_ms: int = Field(description="the per-move limit for this move, ms")
    clocks_ms: list[int] = Field(description="every seat's overage bank now, ms, by seat")


#: Everything the server sends on ``/ws/watch/{match_id}``. ``match_end`` and ``error`` are the
#: bot protocol's own messages; ``pong`` answers a spectator's ``ping``.
SpectatorMessage = Annotated[
    WatchStart | WatchMove | WatchTurn | MatchEnd | ErrorMessage | Pong,
    Field(discriminator="type"),
]

spectator_message_adapter: TypeAdapter[SpectatorMessage] = TypeAdapter(SpectatorMessage)
