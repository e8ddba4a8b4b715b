"""Server settings: one pydantic-settings model, filled from the environment by
``Settings.from_env()``.

Environment variables (all optional): ``ARENA_DB_URL``, ``ARENA_ADMIN_TOKEN``, ``ARENA_HOST``,
``ARENA_PORT``, ``ARENA_HELLO_TIMEOUT_S``, ``ARENA_HEARTBEAT_S``, ``ARENA_MAX_LATENCY_GRACE_MS``,
and one ``ARENA_<FIELD>`` per other field below (e.g. ``ARENA_HEARTBEAT_MISSES``). An empty one
means the default. ``Settings(...)`` itself takes only the values it is given, never the
environment: tests and benchmarks build theirs from explicit values, whatever the shell holds.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

DEFAULT_DB_URL = "sqlite+aiosqlite:///arena.db"

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


class SettingsError(ValueError):
    """An ``ARENA_*`` variable whose value cannot be read; the message names it and what it
    takes."""


def normalize_db_url(value: str) -> str:
    """A database URL; a bare file path means an SQLite file (``arena.db`` -> sqlite+aiosqlite),
    and a PostgreSQL URL without a driver (``postgresql://``, ``postgres://``, as hosting services
    hand them out) gets the asynchronous one, asyncpg."""
    if "://" not in value:
        return f"sqlite+aiosqlite:///{value}"
    scheme, _, rest = value.partition("://")
    if scheme in ("postgresql", "postgres"):
        return f"postgresql+asyncpg://{rest}"
    if scheme == "sqlite":
        return f"sqlite+aiosqlite://{rest}"
    return value


def shown_db_url(url: str) -> str:
    """The URL to print: its password, if any, as ``***``."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ARENA_",
        env_ignore_empty=True,
        # NaN or infinity in a float setting is a typo, not a value (ARENA_PAIRING_WINDOW=nan).
        allow_inf_nan=False,
        # Code sets fields after construction (arena demo, the tests' servers): checked as well.
        validate_assignment=True,
    )

    #: SQLAlchemy async URL; the default is the file arena.db in the working directory.
    db_url: str = DEFAULT_DB_URL
    #: Admin bearer token for the REST bot endpoints. None: reuse the one stored in the database,
    #: or generate one on first start and print it once.
    admin_token: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    #: ``arena serve --workers``: server processes on the one port (more than 1: PostgreSQL
    #: only; server/workers.py).
    workers: int = 1
    #: A connection that sends no ``hello`` within this time is closed with ``hello_timeout``.
    hello_timeout_s: float = 10.0
    #: Server pings every this many seconds; round trips feed the latency grace.
    heartbeat_s: float = 15.0
    #: A connection from which nothing at all (no pong, no message) has arrived for this many
    #: heartbeats is closed with ``heartbeat_timeout``; its matches go on as for a disconnect.
    heartbeat_misses: int = 3
    #: Messages waiting to be written to a bot that does not read its socket; one more closes the
    #: connection with ``slow_consumer`` (bounds the server's memory per connection).
    max_outbound_frames: int = 1000
    #: The same bound in bytes (of JSON text), so that large messages cannot add up either.
    max_outbound_bytes: int = 1024 * 1024
    #: A message that cannot be written for this long also closes it with ``slow_consumer``.
    send_timeout_s: float = 30.0
    #: Cap of the latency grace added to a bot's move time.
    max_latency_grace_ms: int = 200
    #: A match resumed after a restart waits up to this long for all its bots to reconnect
    #: before its next turn (server/referee/resume.py); after that, as for any disconnect.
    #: Longer than the longest wait between two tries that docs/protocol.md asks of a bot
    #: (30 s), so that a bot that follows it is back in time after any outage.
    resume_wait_s: float = 60.0
    #: The lease of a server process on its database (server/cluster), in seconds: renewed
    #: every third of it; on PostgreSQL, another process takes over the running matches of a
    #: process whose lease ran out (killed, cut off) within about 1 1/6 leases of its death.
    lease_s: float = 6.0
    #: Per-connection token bucket for incoming WebSocket messages.
    rate_limit_per_s: float = 20.0
    rate_limit_burst: int = 60
    #: Lobby queues one bot may wait in at once, and challenges it may have pending at once.
    max_queues_per_bot: int = 16
    max_challenges_per_bot: int = 16
    #: A challenge not answered by every opponent within this time lapses: everyone involved
    #: gets ``challenge_declined`` (no challenger waits for ever on a bot that never answers).
    challenge_expiry_s: float = 60.0
    #: An HTTP request (headers and body) must arrive within this time of its first byte (or of
    #: the connection, for the first one), else the connection is closed: half-sent requests
    #: cannot hold connections open.
    http_request_timeout_s: float = 10.0
    #: Spectators (``/ws/watch/{match_id}``) connected at once, on the whole server (0: nobody
    #: may watch) and on one match; beyond, ``limit_reached``.
    max_spectators: int = 1000
    max_spectators_per_match: int = 250
    #: Messages, and bytes, waiting to be written to a spectator that falls behind (beyond its
    #: first snapshot); one more drops it with ``slow_consumer``: it may reconnect and resync.
    spectator_queue_frames: int = 256
    spectator_queue_bytes: int = 256 * 1024
    #: ``/analyze`` and ``GET /api/analyze`` (server/analysis): the most nodes a search may visit
    #: (MCTS: simulations), the seconds it may take (then it is stopped), and the analyses run
    #: at once (each in a process of its own at the lowest CPU priority; 0 turns analysis off).
    analyze_max_nodes: int = 20_000
    analyze_time_s: float = 5.0
    analyze_concurrency: int = 1
    #: ``POST /api/register`` (a student registering a bot with a join code): attempts one
    #: address may make in ``register_window_s`` seconds, right or wrong; beyond, 429. A whole
    #: lab behind one NAT address registers within it; a script guessing codes does not.
    register_limit: int = 60
    register_window_s: float = 600.0
    #: Print a generated admin token on first start (the CLI keeps this on; tests may turn it off).
    print_admin_token: bool = True

    # --- ratings (openskill's Weng-Lin Plackett-Luce model; server/ratings) ---------------
    #: A new bot's rating: mean and uncertainty (openskill's defaults).
    rating_mu: float = 25.0
    rating_sigma: float = 25.0 / 3.0
    #: Performance spread in one match, and the uncertainty added before each rating (so that
    #: ratings keep moving over a semester).
    rating_beta: float = 25.0 / 6.0
    rating_tau: float = 25.0 / 300.0
    #: Rating anchors: per game, the bot whose rating is pinned, so that a number means the same
    #: strength every term: ``GAME=BOT[@RATING]; ...`` (server/ratings/anchors.py). "default":
    #: the random house bot, ``house-random``, of every game, fixed at 0; "none": no anchors.
    #: Changed, the server rebuilds the ratings on its next start (docs/server.md).
    rating_anchors: str = "default"
    #: A bot with fewer rated matches than this in a game is marked provisional there.
    provisional_matches: int = 10
    #: Whether accepted challenges are rated (off: nobody farms rating by challenging bots to
    #: 50 ms per move). Lobby and tournament matches are always rated.
    rated_challenges: bool = False

    # --- pairing (server/referee/pairing.py) -----------------------------------------------
    #: A waiting bot is paired with one of the ``pairing_candidates`` closest in rating whose mu
    #: is within ``pairing_window`` of its own, a window that widens by ``pairing_widen_per_s``
    #: for each second waited; after ``pairing_max_wait_s`` it meets whoever is there.
    pairing_window: float = 3.0
    pairing_widen_per_s: float = 1.0
    pairing_max_wait_s: float = 10.0
    pairing_candidates: int = 3
    #: How often the lobby looks again at bots still waiting.
    pairing_tick_s: float = 0.5

    # --- house bots (server/house) -----------------------------------------------------------
    #: Reference agents the server runs as ladder members, per game: ``GAME=AGENT[@SECONDS],...``
    #: separated by ``;`` (agent options as in ``arena play``; ``alphabeta:depth=4``,
    #: ``mcts:simulations=200``: fixed strength, whatever the load; ``@SECONDS``: thinking time
    #: per move instead). "default": a random bot and two searching bots of fixed strength in
    #: every game; "none": no house bots (an empty ARENA_HOUSE_BOTS means the default, as every
    #: empty ARENA_* variable does).
    house_bots: str = "default"
    #: A bot alone in a lobby queue this long is paired with a house bot.
    house_wait_s: float = 2.0
    #: Processes that run the house bots' searches (0: one per core but one, which the event
    #: loop keeps for the matches; at least one).
    house_workers: int = 0
    #: Matches one house bot plays at once.
    house_max_matches: int = 8
    #: Whether house bots also play each other when nobody else waits (``arena demo`` turns it on;
    #: on a class server it would spend the CPU on the house's own ladder).
    house_self_play: bool = False

    # pydantic's errors as one SettingsError, whether in building or in setting a field later.
    # Hidden from type checkers, which then keep checking keywords and attributes against the
    # fields above.
    if not TYPE_CHECKING:

        def __init__(self, **values: Any) -> None:
            try:
                super().__init__(**values)
            except ValidationError as exc:
                raise _refusal(exc) from None

        def __setattr__(self, name: str, value: Any) -> None:
            try:
                super().__setattr__(name, value)
            except ValidationError as exc:
                raise _refusal(exc) from None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Only the values given: from_env() is the one way in from the environment (see the
        # module's docstring), and no .env or secrets file is read behind anybody's back.
        return (init_settings,)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from ``ARENA_*`` environment variables; keyword overrides (other than None)
        win."""
        env = os.environ if environ is None else environ
        values = _Environment(cls, env)()
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls(**values)
        # After the values were read: a value that cannot be read is the one line said.
        _warn_unknown(env)
        return settings

    @field_validator("*", mode="before")
    @classmethod
    def _read_flag(cls, value: Any, info: ValidationInfo) -> Any:
        # pydantic would also take t/f/y/n; only the words below are taken, and a typo is
        # refused, never a silent default (ARENA_RATED_CHALLENGES=ture must not mean false).
        if not isinstance(value, str) or _annotation(cls, info) is not bool:
            return value
        text = value.strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise PydanticCustomError("bool_parsing", "Input should be true or false")

    @field_validator("db_url")
    @classmethod
    def _normalize_db_url(cls, value: str) -> str:
        return normalize_db_url(value)

    @field_validator("rating_anchors")
    @classmethod
    def _read_anchors(cls, value: str) -> str:
        from ply_arena.server.ratings.anchors import AnchorsError, parse_anchors

        try:
            parse_anchors(value)
        except AnchorsError as exc:
            raise SettingsError(
                f"ARENA_RATING_ANCHORS={value!r}: {exc}; expected GAME=BOT[@RATING]; ... "
                "(e.g. connect_four=house-random@0), 'default' or 'none'"
            ) from None
        return value

    @field_validator("*")
    @classmethod
    def _within_bounds(cls, value: Any, info: ValidationInfo) -> Any:
        # A value that cannot work is refused at once, naming the variable, rather than every
        # bot being closed a second later (ARENA_HEARTBEAT_S=0) or the port wrapping around.
        # Per field, so that an assignment that is refused leaves the old value in place.
        name = info.field_name or ""
        if name in _BOUNDS:
            low, strict, why = _BOUNDS[name]
            if value < low or (strict and value == low):
                bound = f"more than {low:g}" if strict else f"at least {low:g}"
                raise SettingsError(f"ARENA_{name.upper()}={value!r}: expected {bound}{why}")
        if name == "port" and value > 65535:
            raise SettingsError(f"ARENA_PORT={value!r}: expected a port, 0..65535")
        return value


def _annotation(cls: type[Settings], info: ValidationInfo) -> Any:
    field = cls.model_fields.get(info.field_name or "")
    return None if field is None else field.annotation


class _Environment(EnvSettingsSource):
    """pydantic-settings' reading of ``ARENA_*`` variables, from a given mapping (tests pass a
    dict) and only of the exact names of the settings: ``arena_port`` is no setting here, as it
    is none for _warn_unknown. ``_load_env_vars`` is where pydantic-settings' own sources (its
    .env one) say where the variables come from."""

    def __init__(self, settings_cls: type[Settings], environ: Mapping[str, str]) -> None:
        self._environ = environ  # read by _load_env_vars, which the base's __init__ calls
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        known = _setting_names()
        return {
            # Lower case: the source's names (case-insensitive) are arena_<field>.
            name.lower(): raw
            for name, raw in self._environ.items()
            if name in known and not (self.env_ignore_empty and raw == "")
        }


#: What a value that does not parse was expected to be, by pydantic's error type.
_EXPECTED = {
    "bool_parsing": "true or false (also 1/0, yes/no, on/off)",
    "bool_type": "true or false (also 1/0, yes/no, on/off)",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "int_type": "a whole number",
    "float_parsing": "a number",
    "float_type": "a number",
    "finite_number": "a finite number",
    "string_type": "text",
}


def _refusal(exc: ValidationError) -> Exception:
    """The first of pydantic's errors, in one line that names the variable and what it takes."""
    first = exc.errors()[0]
    cause = first.get("ctx", {}).get("error")
    if isinstance(cause, SettingsError):  # raised by a validator above, with its own message
        return cause
    field = str(first["loc"][0]) if first["loc"] else ""
    if first["type"] == "extra_forbidden":  # a keyword that names no setting: a bug in a caller
        return TypeError(f"Settings has no field {field!r}")
    said = first["msg"][:1].lower() + first["msg"][1:]  # pydantic's words, for other types
    what = f"expected {_EXPECTED[first['type']]}" if first["type"] in _EXPECTED else said
    return SettingsError(f"ARENA_{field.upper()}={first['input']!r}: {what}")


#: field: (lowest value, whether the lowest itself is refused, why): the values that can work.
_BOUNDS: dict[str, tuple[float, bool, str]] = {
    "port": (0, False, " (0: any free port)"),
    "workers": (1, False, ""),
    "hello_timeout_s": (0, True, ""),
    "heartbeat_s": (0, True, ""),
    "heartbeat_misses": (1, False, ""),
    "max_outbound_frames": (16, False, " (a match keeps several messages in flight)"),
    "max_outbound_bytes": (65536, False, " (a message may be up to 64 KiB)"),
    "send_timeout_s": (0, True, ""),
    "max_latency_grace_ms": (0, False, ""),
    "resume_wait_s": (0, False, " (0: the next turn goes out at once)"),
    "lease_s": (0.3, False, " (renewed every third of it: shorter would be all renewal)"),
    "rate_limit_per_s": (0, True, ""),
    "rate_limit_burst": (1, False, ""),
    "max_queues_per_bot": (1, False, ""),
    "max_challenges_per_bot": (1, False, ""),
    "challenge_expiry_s": (0, True, ""),
    "http_request_timeout_s": (0, True, ""),
    "max_spectators": (0, False, " (0: nobody may watch)"),
    "max_spectators_per_match": (1, False, ""),
    "spectator_queue_frames": (16, False, " (a move brings up to three messages)"),
    "spectator_queue_bytes": (65536, False, " (a message may be up to 64 KiB)"),
    "analyze_max_nodes": (1, False, ""),
    "analyze_time_s": (0, True, ""),
    "analyze_concurrency": (0, False, " (0: analysis off)"),
    "register_limit": (1, False, ""),
    "register_window_s": (0, True, ""),
    "rating_sigma": (0, True, ""),
    "rating_beta": (0, True, ""),
    "rating_tau": (0, False, ""),
    "provisional_matches": (0, False, ""),
    "pairing_window": (0, False, ""),
    "pairing_widen_per_s": (0, False, ""),
    "pairing_max_wait_s": (0, False, ""),
    "pairing_candidates": (1, False, ""),
    "pairing_tick_s": (0, True, ""),
    "house_wait_s": (0, False, ""),
    "house_workers": (0, False, " (0: one per core but one)"),
    "house_max_matches": (1, False, ""),
}

_warned: set[str] = set()

#: ARENA_* variables that are not server settings but are read by other commands.
_NOT_SETTINGS = frozenset(
    {
        "ARENA_BOT_TOKEN",
        "ARENA_CHECKER_TOKEN",
        # A running server's address and an admin's or instructor's token, for the commands
        # that ask a server over REST (arena tournament, arena leaderboard --url).
        "ARENA_URL",
        "ARENA_TOKEN",
    }
)


def _setting_names() -> frozenset[str]:
    """ARENA_<FIELD> for every setting."""
    prefix = Settings.model_config.get("env_prefix", "")
    return frozenset(f"{prefix}{name}".upper() for name in Settings.model_fields)


def _warn_unknown(env: Mapping[str, str]) -> None:
    """Say on stderr which ARENA_* variables name no setting (a typo is otherwise silent:
    ARENA_HOUSEBOTS=none would start every house bot), with the closest real name."""
    known = _setting_names() | _NOT_SETTINGS
    for name in sorted(k for k in env if k.startswith("ARENA_") and k not in known):
        if name in _warned:
            continue  # once per process, though settings are read more than once
        _warned.add(name)
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
        hint = f"; did you mean {close[0]}?" if close else ""
        print(f"warning: {name} is not an arena setting, ignored{hint}", file=sys.stderr)
