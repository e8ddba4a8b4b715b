"""Typed ORM models: bots, matches, seats, moves, chance events, results and ratings.

Relationships use ``lazy="raise"``: an accidental lazy load (which would do hidden I/O in async
code) fails loudly; repositories load what they need with explicit ``selectinload``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import JSON, Double, ForeignKey, Index, MetaData, String, UniqueConstraint
from sqlalchemy import false as sa_false
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from ply_arena.protocol.dice import LEGACY_SCHEME as LEGACY_DICE_SCHEME
from ply_arena.protocol.dice import SCHEME as DICE_SCHEME
from ply_arena.server.db.timestamps import UTCDateTime

# Named constraints keep Alembic migrations deterministic across databases.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    # Every datetime column is a UTC moment, timezone-aware on both stores (db/timestamps.py).
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, datetime: UTCDateTime}


class AdminToken(Base):
    """The admin bearer token, stored as a sha256 hash only."""

    __tablename__ = "admin_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Classroom(Base):
    """A class (a course's group of students): its bots register with its join code, and its
    instructor's token reaches this class only. Table ``classes``."""

    __tablename__ = "classes"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    #: The name in lower case: unique whatever the case, as bot names.
    name_key: Mapped[str] = mapped_column(String(80), unique=True)
    #: What students type to register a bot (normalised: upper case, no dash). Kept in clear:
    #: the instructor reads it again to hand it out; rotating it replaces it.
    join_code: Mapped[str] = mapped_column(String(16), unique=True)
    #: Closed: the code registers nobody until the instructor opens it again.
    join_open: Mapped[bool] = mapped_column(default=True)
    #: sha256 hex of the instructor's token (shown once).
    instructor_token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    bots: Mapped[list[Bot]] = relationship(back_populates="classroom", lazy="raise")


class ClassSeason(Base):
    """A season of a class (migration 0014): its class leaderboard rates the class's bots
    afresh from ``started_at`` on (server/ratings/season.py). Numbered 1, 2, ... per class; the
    current season is the one without ``ended_at``; an ended one is kept, read-only."""

    __tablename__ = "class_seasons"
    __table_args__ = (UniqueConstraint("class_id", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    class_id: Mapped[int] = mapped_column(ForeignKey("classes.id", ondelete="CASCADE"))
    number: Mapped[int]
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: When the next season started (the results of this one finished before it); null: current.
    ended_at: Mapped[datetime | None]


class Bot(Base):
    __tablename__ = "bots"

    id: Mapped[int] = mapped_column(primary_key=True)
    #: Not unique (migration 0014): a retired bot keeps its name, which a new bot may take.
    name: Mapped[str] = mapped_column(String(64), index=True)
    #: The name in lower case: names are unique whatever their case ("Alice" is "alice"). A
    #: retired bot's key is ``name#id``, which no name can be: its name is free again.
    name_key: Mapped[str] = mapped_column(String(80), unique=True)
    #: sha256 hex of the token; the token itself is shown once and never stored.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    enabled: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: A house bot: a reference agent the server runs itself as a ladder member.
    house: Mapped[bool] = mapped_column(default=False, server_default=sa_false())
    #: A house bot's agent, as configured (e.g. ``mcts@0.1``); null for other bots.
    agent: Mapped[str | None] = mapped_column(String(100))
    #: The class the bot registered in (``POST /api/register``); null for bots made by the admin.
    class_id: Mapped[int | None] = mapped_column(ForeignKey("classes.id"), index=True)
    #: Who registered it: the student's name or e-mail, as given. Shown to the class's
    #: instructor and the admin only.
    owner: Mapped[str | None] = mapped_column(String(254))
    #: It has logged in as an ``arena check-bot`` checker: a bot made for checking, which a
    #: class tournament does not enter unless it is named.
    checker: Mapped[bool] = mapped_column(default=False, server_default=sa_false())
    #: When it was retired (``arena bots retire``, migration 0014): disabled for good, kept in
    #: every record and season under its name, and its name free for a new bot. Null: not retired.
    retired_at: Mapped[datetime | None]

    seats: Mapped[list[Seat]] = relationship(back_populates="bot", lazy="raise")
    classroom: Mapped[Classroom | None] = relationship(back_populates="bots", lazy="raise")


class Match(Base):
    __tablename__ = "matches"
    # The lists of matches read the newest first, filtered by status or game (migration 0005).
    __table_args__ = (
        Index("ix_matches_created_at_id", "created_at", "id"),
        Index("ix_matches_status_created_at_id", "status", "created_at", "id"),
        Index("ix_matches_game_created_at_id", "game", "created_at", "id"),
    )

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    game: Mapped[str] = mapped_column(String(32), index=True)
    #: running | finished | aborted
    status: Mapped[str] = mapped_column(String(16), index=True)
    move_ms: Mapped[int]
    bank_ms: Mapped[int]
    policy: Mapped[str] = mapped_column(String(16))
    #: Decimal text: a 64-bit unsigned seed does not fit SQL's signed BIGINT.
    seed: Mapped[str] = mapped_column(String(24))
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    #: How the match came about: ``lobby``, ``challenge`` or ``tournament``.
    origin: Mapped[str] = mapped_column(String(16), default="lobby", server_default="lobby")
    #: Whether its result moves the ratings (lobby and tournament matches by default).
    rated: Mapped[bool] = mapped_column(default=False, server_default=sa_false())
    #: How its dice derive from the seed (protocol/dice.py): every new match ``sha256-v1``;
    #: matches stored before that scheme existed ``python-random-v0`` (the column's default).
    dice: Mapped[str] = mapped_column(
        String(24), default=DICE_SCHEME, server_default=LEGACY_DICE_SCHEME
    )
    #: The server process that plays it while it runs (``instances.id``): another process
    #: takes it over once that one's lease has run out (server/cluster). Null for a match
    #: stored before migration 0012 and for one no process has claimed yet.
    owner: Mapped[str | None] = mapped_column(String(64), index=True)

    seats: Mapped[list[Seat]] = relationship(
        back_populates="match", lazy="raise", order_by="Seat.seat", cascade="all, delete-orphan"
    )
    moves: Mapped[list[MoveRecord]] = relationship(
        lazy="raise", order_by="MoveRecord.ply", cascade="all, delete-orphan"
    )
    chance_events: Mapped[list[ChanceEvent]] = relationship(
        lazy="raise", order_by="ChanceEvent.ply", cascade="all, delete-orphan"
    )
    result: Mapped[Result | None] = relationship(
        lazy="raise", cascade="all, delete-orphan", uselist=False
    )


class Seat(Base):
    __tablename__ = "seats"
    __table_args__ = (Index("ix_seats_bot_id", "bot_id"),)

    match_id: Mapped[str] = mapped_column(
        ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    #: Filled when the match finishes (null for a match aborted by a crash).
    payoff: Mapped[float | None]

    match: Mapped[Match] = relationship(back_populates="seats", lazy="raise")
    bot: Mapped[Bot] = relationship(back_populates="seats", lazy="raise")


class MoveRecord(Base):
    """One move by a seat, written as it is played."""

    __tablename__ = "moves"

    match_id: Mapped[str] = mapped_column(
        ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True
    )
    ply: Mapped[int] = mapped_column(primary_key=True)
    seat: Mapped[int]
    move: Mapped[str] = mapped_column(String(200))
    think_ms: Mapped[int | None]
    info: Mapped[dict[str, Any] | None]
    #: "timeout" or "illegal_move" when the referee moved for the bot (random_move policy).
    forced: Mapped[str | None] = mapped_column(String(16))
    #: The mover's bank (ms) once this move was charged: a resumed match's clocks start from it
    #: (null for moves stored before migration 0009).
    bank_ms: Mapped[int | None]
    played_at: Mapped[datetime] = mapped_column(default=utcnow)


class MatchResume(Base):
    """A restart the match lived through: it was resumed at ``ply`` (the record notes it)."""

    __tablename__ = "match_resumes"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    match_id: Mapped[str] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), index=True)
    ply: Mapped[int]
    resumed_at: Mapped[datetime] = mapped_column(default=utcnow)


class ChanceEvent(Base):
    """A chance outcome (dice) rolled by the referee."""

    __tablename__ = "chance_events"

    match_id: Mapped[str] = mapped_column(
        ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True
    )
    ply: Mapped[int] = mapped_column(primary_key=True)
    outcome: Mapped[str] = mapped_column(String(64))
    played_at: Mapped[datetime] = mapped_column(default=utcnow)


class Result(Base):
    """How a match ended; one row per finished or aborted match."""

    __tablename__ = "results"

    match_id: Mapped[str] = mapped_column(
        ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True
    )
    termination: Mapped[str] = mapped_column(String(16))
    at_fault: Mapped[int | None]
    final_position: Mapped[dict[str, Any] | None]
    finished_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: For a rated result: its place in the order in which results were rated (1, 2, ...).
    #: ``arena ratings rebuild`` replays the rated results in this order.
    rated_seq: Mapped[int | None] = mapped_column(unique=True)


class Rating(Base):
    """A bot's rating in one game (openskill, Weng-Lin Plackett-Luce) and its record there.

    Derived data: ``arena ratings rebuild`` recomputes every row from the rated results. Written
    in the same transaction as each rated result, with one RatingChange per seat.
    """

    __tablename__ = "ratings"
    __table_args__ = (Index("ix_ratings_game_conservative", "game", "conservative"),)

    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    mu: Mapped[float]
    sigma: Mapped[float]
    #: mu - 3 sigma: the value the leaderboard ranks by.
    conservative: Mapped[float]
    matches: Mapped[int] = mapped_column(default=0)
    wins: Mapped[int] = mapped_column(default=0)
    draws: Mapped[int] = mapped_column(default=0)
    losses: Mapped[int] = mapped_column(default=0)
    #: Rated matches this bot lost by its own fault, by termination.
    timeouts: Mapped[int] = mapped_column(default=0)
    illegal_moves: Mapped[int] = mapped_column(default=0)
    disconnects: Mapped[int] = mapped_column(default=0)
    last_played_at: Mapped[datetime | None]


class RatingChange(Base):
    """One seat of one rated result: the rating before and after (the history behind charts)."""

    __tablename__ = "rating_history"
    __table_args__ = (Index("ix_rating_history_bot_id_game", "bot_id", "game", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[str] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), index=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    game: Mapped[str] = mapped_column(String(32))
    seat: Mapped[int]
    #: Finishing place, 1 for first; seats level on payoff share a place.
    rank: Mapped[int]
    mu_before: Mapped[float]
    sigma_before: Mapped[float]
    mu: Mapped[float]
    sigma: Mapped[float]
    conservative: Mapped[float]
    at: Mapped[datetime]


class Tournament(Base):
    """A tournament: its format, game, time control and state (server/tournaments).

    ``status``: ``created`` (entrants fixed, nothing played), ``running``, ``paused`` (no new
    game starts; those under way finish), ``finished`` or ``cancelled``. A running tournament is
    resumed by the server's lifespan after a restart.
    """

    __tablename__ = "tournaments"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    name_key: Mapped[str] = mapped_column(String(80), unique=True)
    game: Mapped[str] = mapped_column(String(32))
    #: round_robin | swiss | gauntlet
    format: Mapped[str] = mapped_column(String(16))
    #: Round robin and gauntlet: cycles; Swiss: rounds.
    rounds: Mapped[int]
    move_ms: Mapped[int]
    bank_ms: Mapped[int]
    policy: Mapped[str] = mapped_column(String(16))
    #: At most this many of its games are played at once.
    concurrency: Mapped[int]
    #: Whether its matches move the ratings (yes unless the tournament says otherwise).
    rated: Mapped[bool]
    #: Seconds a game waits for its bots to be connected before the absent lose by no_show.
    no_show_s: Mapped[float]
    #: The class it belongs to (its instructor manages it); null for the admin's own.
    class_id: Mapped[int | None] = mapped_column(ForeignKey("classes.id"), index=True)
    status: Mapped[str] = mapped_column(String(16), default="created")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    #: The server process that directs it (``instances.id``, migration 0013): it keeps the
    #: tournament while its lease runs; another process takes it over once the lease ran out
    #: (server/repositories/tournament_directors.py). Null until a process claims it; kept
    #: once it is over, as who directed it last.
    director: Mapped[str | None] = mapped_column(String(64))


class TournamentEntrant(Base):
    """A bot taking part: an ``entrant`` (ranked) or, in a gauntlet, one of the ``pool`` it
    plays against."""

    __tablename__ = "tournament_entrants"

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    role: Mapped[str] = mapped_column(String(8), default="entrant")
    #: Seeding order (1 first): rating at creation, then name.
    seed: Mapped[int]
    #: The bot's rating in the tournament's game when the tournament finished (the grade
    #: sheet's, which must not change with later matches); null before.
    final_mu: Mapped[float | None]
    final_sigma: Mapped[float | None]
    final_conservative: Mapped[float | None]


class TournamentGame(Base):
    """One game of a round: its bots in seat order and how it went.

    ``status``: ``pending``, ``playing`` (``match_id`` names the match), ``finished``,
    ``no_show`` (``absent`` lists the seats that did not come), ``bye`` (one seat, Swiss) or
    ``cancelled``. ``match_id`` is not a foreign key: it is written just before the match's own
    row, so that a crash between the two can be recognised at resume (no such match: replay).
    """

    __tablename__ = "tournament_games"
    __table_args__ = (Index("ix_tournament_games_tournament_id_round", "tournament_id", "round"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    round: Mapped[int]
    #: Its place in the round (1, 2, ...).
    board: Mapped[int]
    #: Bot ids in seat order.
    bot_ids: Mapped[list[int]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    match_id: Mapped[str | None] = mapped_column(String(64), index=True)
    termination: Mapped[str | None] = mapped_column(String(16))
    payoffs: Mapped[list[float] | None] = mapped_column(JSON)
    #: The seat whose fault ended the match (timeout, illegal move, disconnect, resign).
    at_fault: Mapped[int | None]
    absent: Mapped[list[int] | None] = mapped_column(JSON)
    #: Earlier matches of this game that a crash or restart aborted (replayed since).
    replays: Mapped[int] = mapped_column(default=0)
    finished_at: Mapped[datetime | None]


class TournamentMatch(Base):
    """Every match a tournament game started, its replays' aborted ones too: the game's own
    ``match_id`` names only its latest, and a match must still say which tournament, round and
    board it was played for after its game was replayed. Written with ``match_id`` (as that
    is, before the match's own row: no foreign key to ``matches``)."""

    __tablename__ = "tournament_matches"

    match_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    game_id: Mapped[int] = mapped_column(
        ForeignKey("tournament_games.id", ondelete="CASCADE"), index=True
    )


class Instance(Base):
    """A server process working on this database, while its lease runs (migration 0012).

    ``lease_until`` is in seconds on the database's clock (``cluster.clock``), so that
    processes on machines whose clocks disagree still agree on whose lease has run out. A
    process renews its lease every third of its length; another one takes over its running
    matches once it has run out (server/cluster/lease.py).
    """

    __tablename__ = "instances"

    #: ``host-pid-random``: readable in logs, unique across restarts of one pid.
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int]
    #: The kernel's start time of that pid (Linux), to tell a reused pid from the process.
    process_start: Mapped[str | None] = mapped_column(String(32))
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: Database-clock seconds (Unix epoch) until which the process holds what it owns.
    lease_until: Mapped[float] = mapped_column(Double, index=True)
    #: Set when the process stopped cleanly (its lease was given up then).
    stopped_at: Mapped[datetime | None]
