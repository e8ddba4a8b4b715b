"""Every WebSocket message, as pydantic models: one discriminated union per direction.

A frame is one JSON object whose ``type`` field names the message. Times on the wire are integer
milliseconds. docs/protocol.md explains each message with an annotated transcript; the JSON
Schema generated from these models is committed as protocol/schema.json.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter

#: Bumped on any incompatible change; sent in ``hello`` and ``welcome``.
PROTOCOL_VERSION = 1
#: Frames larger than this are refused with ``frame_too_large``.
MAX_FRAME_BYTES = 64 * 1024
#: Every integer on the wire fits a JavaScript number exactly (Number.MAX_SAFE_INTEGER).
MAX_WIRE_INT = 2**53 - 1
#: The time controls a bot may ask for (inclusive); the server's defaults are within them.
MIN_MOVE_MS = 50
MAX_MOVE_MS = 60_000
MAX_BANK_MS = 600_000
#: Longest id or name a client may send, and longest move in a principal variation.
MAX_NAME_CHARS = 64
MAX_NOTATION_CHARS = 64


class _Message(BaseModel):
    # Unknown fields are refused so that a typo in a bot is reported rather than ignored, and
    # NaN / Infinity are refused: JSON has no such numbers, and a stored match must stay
    # readable by every JSON parser. The server also validates client frames in strict mode
    # (ply_arena.protocol.wire.parse_client_frame): "ply": "0" is a string, not an integer.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _integral(value: Any) -> Any:
    # JSON has one kind of number: 2.0 is the integer 2, as JSON Schema counts it, and what some
    # JSON libraries (Java's Gson) write for every number. "2", true and 2.5 stay refused.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


#: An id or a name a client sends (game, bot, match or challenge): short, so that nothing a
#: client sends makes an error or a log line long.
Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]
#: One move of a principal variation, in a game's notation (the longest, a backgammon turn
#: with four hits, is under 40 characters).
Notation = Annotated[str, Field(max_length=MAX_NOTATION_CHARS)]

#: An integer on the wire: one every JSON parser (JavaScript's included) reads exactly, written
#: 2 or 2.0; a string, a boolean or a fraction is refused even in the server's strict parsing.
WireInt = Annotated[int, BeforeValidator(_integral), Field(ge=-MAX_WIRE_INT, le=MAX_WIRE_INT)]


# --- shared pieces ----------------------------------------------------------------------------


class TimeControl(_Message):
    """Per-move limit plus an overage bank, as in Kaggle environments.

    A move may take up to ``move_ms``; time beyond that is drawn from the bank, which never
    refills. When both are spent the bot has timed out.
    """

    move_ms: WireInt = Field(
        ge=MIN_MOVE_MS, le=MAX_MOVE_MS, description="time allowed for each move"
    )
    bank_ms: WireInt = Field(
        default=0, ge=0, le=MAX_BANK_MS, description="overage bank for the match (never refills)"
    )


class Policy(StrEnum):
    """What the referee does when a bot times out or plays an illegal move."""

    forfeit = "forfeit"
    random_move = "random_move"


class Termination(StrEnum):
    normal = "normal"
    timeout = "timeout"
    illegal_move = "illegal_move"
    disconnect = "disconnect"
    resign = "resign"
    move_limit = "move_limit"
    aborted = "aborted"


class MoveInfo(_Message):
    """Optional search details a bot may attach to a move; kept in the match record."""

    depth: WireInt | None = Field(default=None, ge=0, le=MAX_WIRE_INT)
    score: float | None = Field(default=None, description="finite: NaN and Infinity are refused")
    nodes: WireInt | None = Field(default=None, ge=0, le=MAX_WIRE_INT)
    pv: list[Notation] = Field(default_factory=list, max_length=64)
    comment: str = Field(default="", max_length=280)


class SeatInfo(_Message):
    seat: int
    bot: str


class PlayedMove(_Message):
    """One event since the bot's last turn: a seat's move, or a chance outcome (``seat`` null)."""

    ply: WireInt = Field(ge=0)
    seat: int | None = Field(description="seat that moved, or null for a chance event (dice)")
    move: str


# --- client -> server -------------------------------------------------------------------------


class Hello(_Message):
    type: Literal["hello"] = "hello"
    protocol: WireInt
    token: str = Field(max_length=200)
    client: str = Field(default="", max_length=100)


class JoinLobby(_Message):
    type: Literal["join"] = "join"
    game: Name
    time_control: TimeControl | None = None
    policy: Policy = Policy.forfeit


class LeaveLobby(_Message):
    type: Literal["leave"] = "leave"
    game: Name | None = Field(default=None, description="null: leave every queue")


class Challenge(_Message):
    type: Literal["challenge"] = "challenge"
    game: Name
    opponents: list[Name] = Field(min_length=1, max_length=2)
    time_control: TimeControl | None = None
    policy: Policy = Policy.forfeit


class AcceptChallenge(_Message):
    type: Literal["accept"] = "accept"
    challenge_id: Name


class DeclineChallenge(_Message):
    type: Literal["decline"] = "decline"
    challenge_id: Name
    reason: str = Field(default="", max_length=200)


class MakeMove(_Message):
    type: Literal["move"] = "move"
    match_id: Name
    ply: WireInt = Field(ge=0, le=MAX_WIRE_INT)
    move: str = Field(max_length=200)
    info: MoveInfo | None = None


class Resign(_Message):
    type: Literal["resign"] = "resign"
    match_id: Name


class Ping(_Message):
    type: Literal["ping"] = "ping"
    id: WireInt = Field(default=0, ge=0, le=MAX_WIRE_INT)


class Pong(_Message):
    type: Literal["pong"] = "pong"
    id: WireInt = Field(default=0, ge=0, le=MAX_WIRE_INT)


ClientMessage = Annotated[
    Hello
    | JoinLobby
    | LeaveLobby
    | Challenge
    | AcceptChallenge
    | DeclineChallenge
    | MakeMove
    | Resign
    | Ping
    | Pong,
    Field(discriminator="type"),
]


# --- server -> client -------------------------------------------------------------------------


class Welcome(_Message):
    type: Literal["welcome"] = "welcome"
    protocol: int
    bot: str
    server: str
    heartbeat_ms: int
    matches: list[str] = Field(description="matches of this bot still running (resynced next)")


class LobbyJoined(_Message):
    type: Literal["joined"] = "joined"
    game: str
    time_control: TimeControl
    policy: Policy
    waiting: int = Field(description="bots in this queue, this one included")


class LobbyLeft(_Message):
    type: Literal["left"] = "left"
    game: str | None


class ChallengeReceived(_Message):
    type: Literal["challenge_received"] = "challenge_received"
    challenge_id: str
    challenger: str
    game: str
    opponents: list[str]
    time_control: TimeControl
    policy: Policy


class ChallengeSent(_Message):
    type: Literal["challenge_sent"] = "challenge_sent"
    challenge_id: str


class ChallengeDeclined(_Message):
    type: Literal["challenge_declined"] = "challenge_declined"
    challenge_id: str
    by: str
    reason: str = ""


class MatchStart(_Message):
    type: Literal["match_start"] = "match_start"
    match_id: str
    game: str
    seats: list[SeatInfo]
    your_seat: int
    time_control: TimeControl
    policy: Policy
    position: dict[str, Any] = Field(
        description=(
            "the position now, in the game's JSON form: the initial position when the match "
            "starts, the current one when it is sent again after a reconnection"
        )
    )
    ply: int = Field(default=0, description="events so far (moves and dice): len(moves)")
    moves: list[PlayedMove] = Field(
        default_factory=list,
        description="every event so far, in order (empty at the start): position = initial + moves",
    )
    dice_commitment: str | None = Field(
        default=None,
        description=(
            "sha256 hex of '<seed>:<match_id>': the server's commitment to the secret seed every "
            "chance event derives from; match_end reveals the seed (docs/protocol.md, "
            "provably fair dice)"
        ),
    )
    origin: Literal["lobby", "challenge", "tournament"] | None = Field(
        default=None,
        description=(
            "how the match came about: a lobby pairing, an accepted challenge, or a tournament "
            "(which starts its matches without any request from the bot)"
        ),
    )


class Turn(_Message):
    type: Literal["turn"] = "turn"
    match_id: str
    ply: int
    position: dict[str, Any]
    legal_moves: list[str]
    since_last: list[PlayedMove] = Field(description="moves and dice since your last turn")
    clocks_ms: list[int] = Field(
        description=(
            "every seat's overage bank, ms, by seat, as of sending this message (your own is "
            "already reduced by the time this turn has run over move_ms, after a reconnection)"
        )
    )
    move_ms: int = Field(
        description=(
            "what is left of the per-move limit for this move: the time control's move_ms, "
            "less the time since the turn began (after a reconnection)"
        )
    )
    deadline_ms: int = Field(
        description=(
            "the most this move may still take, ms: always move_ms + clocks_ms[your seat] "
            "(the latency grace comes on top)"
        )
    )


class ForcedMove(_Message):
    """Under the random_move policy the referee moved for the bot; the reason is given."""

    type: Literal["forced_move"] = "forced_move"
    match_id: str
    ply: int
    move: str
    reason: Literal["timeout", "illegal_move"]


class MatchEnd(_Message):
    type: Literal["match_end"] = "match_end"
    match_id: str
    game: str | None = Field(
        default=None,
        description="the match's game, as in match_start (so a bot can join its queue again)",
    )
    payoffs: list[float]
    termination: Termination
    at_fault: int | None = Field(description="seat whose fault ended the match, if any")
    position: dict[str, Any]
    plies: int
    seed: str | None = Field(
        default=None,
        description=(
            "the match's secret seed, revealed: sha256('<seed>:<match_id>') equals match_start's "
            "dice_commitment, and every die rolled derives from it"
        ),
    )


class ErrorMessage(_Message):
    type: Literal["error"] = "error"
    code: str = Field(description="stable code from the table in docs/protocol.md")
    message: str
    fatal: bool = Field(description="true: the server closes the connection after this")
    match_id: str | None = None
    retry_after_ms: int | None = Field(
        default=None,
        description=("rate_limited only: the dropped message may be sent again after this many ms"),
    )


ServerMessage = Annotated[
    Welcome
    | LobbyJoined
    | LobbyLeft
    | ChallengeReceived
    | ChallengeSent
    | ChallengeDeclined
    | MatchStart
    | Turn
    | ForcedMove
    | MatchEnd
    | ErrorMessage
    | Ping
    | Pong,
    Field(discriminator="type"),
]

client_message_adapter: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)
server_message_adapter: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)
