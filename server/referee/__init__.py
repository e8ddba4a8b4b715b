"""The referee: who is connected, who waits for whom, and the matches being played.

``Referee`` is created by the app factory's lifespan (``app.state.referee``); the WebSocket
sessions call it. It holds no SQL and no rules: bots come from
``ply_arena.server.repositories.bots``, rules from ``games``, and each match is a ``MatchRunner``
task.

Pairing rules (documented for bot authors in docs/protocol.md):

- Lobby: one queue per (game, time control, policy). Who meets whom is decided by
  ``ply_arena.server.referee.pairing.pair`` (a pure function: by rating, with a window that widens
  with the wait, no immediate rematch while others wait, a lone bot completed by house bots after
  ``house_wait_s``), called once after the joins of each turn of the event loop (joins that
  arrive together are decided together) and every ``pairing_tick_s`` for the bots still
  waiting. Challenges: the match starts when every named opponent has accepted.
- Seats alternate per set of bots: the k-th match between the same bots in the same game (lobby
  or challenge alike) seats them in bot-id order rotated by k. For two bots: first match the
  older bot is seat 0, next match seat 1, and so on. The counts are read from the stored
  matches at start (every stored match counts, aborted ones too), so a restart keeps rotating.
- One connection per bot: a second ``hello`` with the same token replaces the first connection
  (which gets ``replaced`` and is closed); the bot's queue places and pending challenges are
  dropped, its running matches continue and are resynced on the new connection.
- Revoked bots: when an administrator disables a bot or rotates its token (REST), the API calls
  ``bot_revoked``: its connection is closed at once with ``bot_disabled`` / ``bad_token`` and its
  matches go on as for any disconnect (its clock runs; a rotated bot may reconnect with the new
  token, a disabled one cannot and loses on time).
- Restarts: a server that stops leaves its matches running in the database and closes every bot
  with the fatal ``shutting_down`` (1012); ``resume_unfinished`` (called at start) goes on with
  every match stored as running that no live server process plays (server/referee/resume.py),
  each waiting for its bots to log in again. ``abort_match`` ends one by hand (an
  administrator's call).
- Server processes (server/cluster): the referee holds a lease on the database while it runs
  (``lease``) and is the owner of the matches it starts or resumes (``matches.owner``). On
  PostgreSQL, where several processes may share the database, it looks every sixth of a lease
  for running matches whose owner's lease ran out, takes them over and resumes them; if its own
  lease runs out, it lets its matches go (``_lease_lost``).
- Spectators: ``spectators`` (server/spectate) holds who watches which match; every runner
  publishes to it. Pages list the matches being played with ``live_matches()`` and show one with
  ``runner.snapshot()``.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ply_arena import games
from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.messages import (
    AcceptChallenge,
    Challenge,
    ChallengeDeclined,
    ChallengeReceived,
    ChallengeSent,
    DeclineChallenge,
    JoinLobby,
    LeaveLobby,
    LobbyJoined,
    LobbyLeft,
    MakeMove,
    Policy,
    Resign,
    TimeControl,
)
from ply_arena.protocol.wire import clip
from ply_arena.server import time_controls
from ply_arena.server.cluster.lease import Lease
from ply_arena.server.db.database import Database
from ply_arena.server.ratings import RatingBook, RatingModel
from ply_arena.server.referee import pairing, resume
from ply_arena.server.referee.challenges import Challenges, Party, PendingChallenge
from ply_arena.server.referee.coming_back import ComingBack
from ply_arena.server.referee.connections import (
    BotConnection,
    CheckRole,
    ConnectionRegistry,
    RefereeError,
    is_remote,
)
from ply_arena.server.referee.lobby import Lobby, QueueKey, Waiting
from ply_arena.server.referee.match_runner import MatchRunner, SeatBot
from ply_arena.server.repositories import bots as bot_repo
from ply_arena.server.repositories import instances as instance_repo
from ply_arena.server.repositories import matches as match_repo
from ply_arena.server.repositories import resume as resume_repo
from ply_arena.server.settings import Settings
from ply_arena.server.spectate import Limits, SpectatorHub

if TYPE_CHECKING:
    from ply_arena.server.cluster.directory import Directory
    from ply_arena.server.cluster.hosting import Hosting
    from ply_arena.server.cluster.shared_lobby import SharedLobby
    from ply_arena.server.referee.house_load import HouseLoad

__all__ = ["BotConnection", "MatchRunner", "PairingRecord", "Referee", "RefereeError"]

log = logging.getLogger(__name__)

#: Lobby decisions kept in memory (``Referee.pairing_log``), newest last.
PAIRING_LOG_SIZE = 1000


@dataclass(frozen=True, slots=True)
class PairingRecord:
    """One lobby group started: what ``pairing.pair`` decided, and who was left waiting."""

    at: float
    queue: QueueKey
    match_id: str
    bot_ids: tuple[int, ...]
    reason: pairing.Reason
    #: The bots still waiting in the queue once this group was taken out of it.
    others_waiting: tuple[int, ...]


class Referee:
    def __init__(self, database: Database, settings: Settings) -> None:
        self.database = database
        self.settings = settings
        self.connections = ConnectionRegistry()
        self.lobby = Lobby()
        self.challenges = Challenges()
        self.matches: dict[str, MatchRunner] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._pairings: Counter[tuple[str, frozenset[int]]] = Counter()
        # Revocations so far, and the number of each bot's latest one (by name): a login whose
        # token check overlapped a revocation of that bot checks again (see authenticate).
        self._revocations = 0
        self._revoked_at: dict[str, int] = {}
        #: Set when the server starts shutting down: no new match starts after that.
        self.closing = False
        #: Every bot's rating per game, as stored (the lobby pairs by them).
        self.ratings = RatingBook(RatingModel.from_settings(settings))
        #: Recent lobby decisions, for tests and for whoever watches the ladder.
        self.pairing_log: deque[PairingRecord] = deque(maxlen=PAIRING_LOG_SIZE)
        #: How many pairing ticks have run (tests wait on it).
        self.ticks = 0
        self._rng = random.Random()
        self._params: dict[int, pairing.Params] = {}
        # game -> bot id -> the bots of its latest match in that game (no immediate rematch).
        self._last_opponents: dict[str, dict[int, frozenset[int]]] = {}
        # Running matches per bot (house bots' capacity).
        self._playing: Counter[int] = Counter()
        # Bots playing a match that came from a queue, or on their way back from one (they
        # will likely join it again), by rating; match id -> (its queue, those bots).
        self.coming_back = ComingBack(self.ratings.mu)
        self.ratings.watch(self.coming_back.rerated)
        self.ratings.watch(self.lobby.rerated)
        self._from_queue: dict[str, tuple[QueueKey, tuple[int, ...]]] = {}
        # House bots: game -> [(bot id, name)], and every house bot's id.
        self._house: dict[str, list[tuple[int, str]]] = {}
        self._house_ids: set[int] = set()
        self.house_max_matches = settings.house_max_matches
        self._ticker: asyncio.Task[None] | None = None
        # Queues with a decision due at the end of this turn of the loop (see _pair_soon).
        self._pairing_due: set[QueueKey] = set()
        #: Who watches which match (``/ws/watch/{match_id}``; server/ws/watch.py).
        self.spectators = SpectatorHub(Limits.from_settings(settings))
        #: This process's lease on the database (taken in ``start``): its id is the owner of
        #: the matches this referee plays. None until started (tests that pair by hand).
        self.lease: Lease | None = None
        self._claimer: asyncio.Task[None] | None = None
        # bot id -> its running matches as stored (id, owner), read by authenticate for login
        # (PostgreSQL).
        self._stored_running: dict[int, list[tuple[str, str | None]]] = {}
        #: The other processes, through the bus (server/cluster/directory.py): set by the app
        #: on PostgreSQL; None with one process.
        self.directory: Directory | None = None
        #: The one lobby of every process (server/cluster/shared_lobby.py), on PostgreSQL: this
        #: process decides for every queue only while it leads it.
        self.shared_lobby: SharedLobby | None = None
        #: Matches decided here and played by another process, or the reverse (a tournament's
        #: games go to the process of their bots: server/cluster/hosting.py); PostgreSQL only.
        self.hosting: Hosting | None = None
        #: How many matches each house bot plays on every process (server/referee/
        #: house_load.py); PostgreSQL only (one process counts its own: ``_playing``).
        self.house_load: HouseLoad | None = None
        # Lobby matches this process plays for a leader elsewhere (it is told when they end).
        self._led_elsewhere: set[str] = set()

    @property
    def owner(self) -> str | None:
        """The id this process writes as the owner of its matches (None before ``start``)."""
        return None if self.lease is None else self.lease.instance_id

    async def start(self) -> None:
        """Take the lease; load the seat-rotation counts and the ratings; start the pairing
        tick, and on PostgreSQL the look for matches whose process is gone."""
        self.lease = Lease(self.database, self.settings.lease_s, on_lost=self._lease_lost)
        await self.lease.acquire()
        self.lease.start()
        async with self.database.session() as session:
            self._pairings = await match_repo.pairing_counts(session)
            await self.ratings.load(session)
        self._ticker = asyncio.create_task(self._tick(), name="lobby-tick")
        if not self.database.is_sqlite:
            # On SQLite one process serves the file (the server mark): nothing to take over
            # but what the start resumes.
            self._claimer = asyncio.create_task(self._claim_orphans(), name="claim-orphans")

    async def resume_unfinished(self, *, unowned: bool = True) -> list[MatchRunner]:
        """Go on with every match stored as running that no live server process plays (a stop
        or a crash left it, here or on another process): it becomes this process's, is rebuilt
        from its stored moves and waits up to ``resume_wait_s`` for its bots (those connected
        here hear of it at once). A match that cannot be rebuilt (a stored move the rules
        refuse) is ended as aborted."""
        if self.closing:
            return []
        ids: list[str] | None = None
        former: set[str] = set()
        async with self.database.session() as session:
            if self.owner is not None:
                taken = await instance_repo.claim_orphans(session, self.owner, unowned=unowned)
                if not taken:
                    return []
                ids = list(taken)
                former = {owner for owner in taken.values() if owner is not None}
        if self.directory is not None:
            # Their processes are gone, and so are the bots connected to them: the matches wait
            # for those to come back (here or anywhere) instead of sending them turns.
            await self._forget_gone_processes()
        async with self.database.session() as session:
            stored = await resume_repo.running_matches(session, ids)
        runners: list[MatchRunner] = []
        broken: list[str] = []
        for match in stored:
            try:
                runner = resume.runner_for(match, **self._runner_options())
                runner.restore(match.events, wait_s=self.settings.resume_wait_s)
            except Exception as exc:  # whatever stored data the rules refuse
                log.error(
                    "match %s cannot be resumed (%s): ending it as aborted", match.match_id, exc
                )
                broken.append(match.match_id)
                continue
            self._launch(runner)
            for seat in runner.seats:
                if self.connections.get(seat.bot_id) is not None:
                    runner.resync(seat.bot_id)  # it reconnected here before the take-over
            runners.append(runner)
        if self.directory is not None and runners:
            # Their bots connected to other processes ask for a resync.
            self.directory.claimed(sorted({s.bot_id for r in runners for s in r.seats}))
        if broken:
            async with self.database.session() as session:
                await match_repo.abort_running(session, broken)
        if runners:
            log.info(
                "resuming %d match(es) a stop or a crash left running%s; their bots have %g s "
                "to reconnect",
                len(runners),
                f" (server process(es) {', '.join(sorted(former))}, gone)" if former else "",
                self.settings.resume_wait_s,
            )
        return runners

    def launch_stored(self, match: resume_repo.StoredMatch) -> MatchRunner | None:
        """Play ``match``, stored as this process's by another one (server/cluster/hosting.py):
        from its first ply, or from where it stands if it has moves (None: it is played here
        already, the server is stopping, or it cannot be rebuilt)."""
        if self.closing or match.match_id in self.matches:
            return None
        try:
            runner = resume.runner_for(match, stored=True, **self._runner_options())
            if match.events:
                runner.restore(match.events, wait_s=self.settings.resume_wait_s)
        except Exception as exc:  # whatever stored data the rules refuse
            log.error("match %s cannot be played here (%s)", match.match_id, exc)
            return None
        self._launch(runner)
        if match.events:
            for seat in runner.seats:
                if self.connections.get(seat.bot_id) is not None:
                    runner.resync(seat.bot_id)
        return runner

    def abort_match(self, match_id: str) -> bool:
        """End a running match here as aborted (zero payoffs, unrated; its bots get match_end);
        False when this server plays no such match."""
        runner = self.matches.get(match_id)
        return runner is not None and runner.abort()

    async def stop(self) -> None:
        """Stop the pairing tick and every match task, leaving the matches running in the
        database (the next start, or another process, resumes them), give up the lease, then
        return."""
        self._stop_ticker()
        await self._stop_matches()
        if self.lease is not None:
            # Their last moves first: a process that takes a match over the moment the lease
            # is given up must find every move this one acknowledged.
            try:
                await self.database.recorder.flush()
            except Exception as exc:
                log.warning("could not store the last moves before giving up the lease: %s", exc)
            await self.lease.release()

    async def _stop_matches(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def shutdown(self) -> None:
        """The server is going down: stop every match where it stands (stored as running, with
        its moves so far: the next start resumes it; no match_end), then close every bot's
        connection, and every spectator's, with the fatal ``shutting_down`` (close code 1012)."""
        self.closing = True
        self._stop_ticker()
        left = sum(r.announced and not r.finished for r in self.matches.values())
        await self.stop()
        self.spectators.close_all()
        closing = RefereeError(
            ErrorCode.shutting_down,
            "the server is restarting; reconnect with backoff: your running matches are kept "
            "and resume where they stood",
        ).to_message(fatal=True)
        connections = [c for c in self.connections.all() if not is_remote(c)]
        for conn in connections:
            self.connections.unregister(conn)
            conn.close_with(closing)
        log.info(
            "shutting down: %d match(es) left to resume at the next start, %d bot(s) disconnected",
            left,
            sum(not self.is_house(conn.bot_id) for conn in connections),  # not the server's own
        )

    # --- for pages and spectators -----------------------------------------------------------

    def live_matches(self) -> list[MatchRunner]:
        """The matches being played now, oldest first: announced to their bots (so stored) and
        not over. Each runner has ``match_id``, ``game`` (``game.name``), ``seats`` (``name``
        per seat), ``time_control``, ``policy``, ``rated``, ``events`` and ``snapshot()``; the
        spectators of one: ``self.spectators.count(match_id)``."""
        return [m for m in self.matches.values() if m.announced and not m.finished]

    async def live_match_ids(self) -> set[str]:
        """The ids of every match being played now: here, and with several processes on one
        database, on the others too (as stored)."""
        ids = {m.match_id for m in self.live_matches()}
        if self.directory is not None:
            async with self.database.session() as session:
                ids.update(await match_repo.running_ids(session))
        return ids

    def running_match(self, match_id: str) -> MatchRunner | None:
        """The runner of ``match_id`` while it has one: from its creation until its result is
        stored and sent (then the stored record takes over)."""
        return self.matches.get(match_id)

    # --- sessions -----------------------------------------------------------------------

    async def authenticate(self, token: str) -> tuple[int, str]:
        """(bot id, name) for a token; RefereeError bad_token / bot_disabled otherwise.

        The caller logs in right after (no await in between), so a revocation cannot slip
        between this check and the login.
        """
        # A token never holds whitespace: what surrounds it was pasted along (a newline from
        # a file, a space from a chat message), not typed on purpose.
        token = token.strip()
        if not token:
            raise RefereeError(ErrorCode.bad_token, "the token matches no bot")
        while True:
            seen = self._revocations
            async with self.database.session() as session:
                bot = await bot_repo.bot_by_token(session, token)
                found = None if bot is None else (bot.id, bot.name, bot.enabled)
                if bot is not None and not self.database.is_sqlite:
                    # Another process may play some of its matches, or have played them
                    # until it died (this one takes them over within a lease): the welcome
                    # lists them, so that the bot keeps them (login reads this).
                    self._stored_running[bot.id] = await instance_repo.running_matches_of(
                        session, bot.id
                    )
            if found is None:
                raise RefereeError(ErrorCode.bad_token, "the token matches no bot")
            bot_id, name, enabled = found
            if self._revoked_at.get(name, 0) <= seen:
                break
            # Revoked while we read: the read may predate the change, so read again.
        if not enabled:
            raise RefereeError(ErrorCode.bot_disabled, f"bot {name!r} is disabled")
        return bot_id, name

    async def mark_checker(self, bot_id: int) -> None:
        """The bot logged in as an ``arena check-bot`` checker: remember it (bots.checker)."""
        async with self.database.session() as session:
            await bot_repo.mark_checker(session, bot_id)

    def login(self, conn: BotConnection) -> list[str]:
        """Make ``conn`` the bot's live connection; the ids of its running matches.

        The caller sends ``welcome`` and then calls ``resync``.
        """
        stored = self._stored_running.pop(conn.bot_id, [])
        old = self.connections.register(conn)
        if old is not None:
            self._drop_waiting(conn.bot_id)
            old.close_with(
                RefereeError(
                    ErrorCode.replaced, "another connection logged in with this bot's token"
                ).to_message(fatal=True)
            )
        here = [m.match_id for m in self._matches_of(conn.bot_id)]
        elsewhere = [(m, owner) for m, owner in stored if m not in here and self._playable(m)]
        if self.directory is not None and not self.is_house(conn.bot_id):
            self.directory.logged_in(conn, elsewhere)
        return here + [m for m, _ in elsewhere]

    def replaced_elsewhere(self, conn: BotConnection) -> None:
        """The bot logged in on another process: this connection goes (``replaced``)."""
        if self.connections.unregister(conn):
            self._drop_waiting(conn.bot_id)
        conn.close_with(
            RefereeError(
                ErrorCode.replaced,
                "another connection logged in with this bot's token (on another server process)",
            ).to_message(fatal=True)
        )

    def _playable(self, match_id: str) -> bool:
        """Not a match this process has just ended (its result is stored and told)."""
        runner = self.matches.get(match_id)
        return runner is None or not runner.finished

    def bot_revoked(self, name: str, code: ErrorCode = ErrorCode.bot_disabled) -> bool:
        """Disconnect the bot ``name`` now: it was disabled (``bot_disabled``) or its token was
        rotated (``bad_token``). Called by the REST API after the change is committed.

        Its connection gets the fatal ``code`` and is closed; its queue places and challenges
        are dropped at once; its matches go on as for any disconnect. True if it was connected.
        """
        if self.directory is not None:
            self.directory.revoked(name, code)
        return self.revoke_here(name, code)

    def revoke_here(self, name: str, code: ErrorCode = ErrorCode.bot_disabled) -> bool:
        """``bot_revoked`` on this process only (another process told it of the revocation)."""
        self._revocations += 1
        self._revoked_at[name] = self._revocations
        conn = self.connections.by_name(name)
        if conn is None:
            return False
        if is_remote(conn):
            # Connected to another process, which closes it: here it is simply gone.
            self.disconnected(conn)
            return False
        why = (
            f"bot {name!r} was disabled by an administrator"
            if code == ErrorCode.bot_disabled
            else f"the token of bot {name!r} was replaced; reconnect with the new one"
        )
        self.connections.unregister(conn)
        self._drop_waiting(conn.bot_id)
        conn.close_with(RefereeError(code, why).to_message(fatal=True))
        return True

    def resync(self, conn: BotConnection) -> None:
        for runner in self._matches_of(conn.bot_id):
            runner.resync(conn.bot_id)

    def disconnected(self, conn: BotConnection) -> None:
        # A replaced connection no longer speaks for the bot: leave the new one's state alone.
        if self.connections.unregister(conn):
            self._drop_waiting(conn.bot_id)
            self.coming_back.disconnected(conn.bot_id)
            if (
                self.directory is not None
                and not is_remote(conn)
                and not self.is_house(conn.bot_id)
            ):
                self.directory.logged_out(conn)

    def _drop_waiting(self, bot_id: int) -> None:
        if self.lobby.leave(bot_id) and self.shared_lobby is not None:
            self.shared_lobby.forward_leave(bot_id, None)
        for challenge in self.challenges.involving(bot_id):
            self.challenges.remove(challenge.challenge_id)
            if challenge.challenger.bot_id == bot_id:
                continue  # the challenge simply lapses
            by = next(p.name for p in challenge.opponents if p.bot_id == bot_id)
            declined = ChallengeDeclined(
                challenge_id=challenge.challenge_id, by=by, reason="it disconnected"
            )
            for party in challenge.parties():
                if party.bot_id != bot_id:
                    self.connections.send(party.bot_id, declined)

    def _matches_of(self, bot_id: int) -> list[MatchRunner]:
        return [
            m for m in self.matches.values() if m.seat_of(bot_id) is not None and not m.finished
        ]

    # --- lobby --------------------------------------------------------------------------

    def join(self, conn: BotConnection, message: JoinLobby) -> bool:
        """Queue the bot (answer ``joined``); True if it was not waiting in that queue yet."""
        self._check_open()
        game = _game(message.game)
        tc = _time_control(game, message.time_control)
        key = QueueKey.of(game.name, tc, message.policy)
        if conn.check_role is CheckRole.relay:
            # A bot under check plays the checker's matches only: answered, never paired (a
            # lobby match through the relay would be rated, and cut when the check ends).
            conn.send(
                LobbyJoined(game=game.name, time_control=tc, policy=message.policy, waiting=0)
            )
            return False
        new = not self.lobby.is_waiting(key, conn.bot_id)
        limit = self.settings.max_queues_per_bot
        if new and self.lobby.queues_of(conn.bot_id) >= limit:
            raise RefereeError(
                ErrorCode.limit_reached,
                f"a bot may wait in at most {limit} queues at once; leave one first",
            )
        place = Waiting(
            conn.bot_id, conn.bot_name, time.monotonic(), conn.bot_id in self._house_ids
        )
        mu = self.ratings.mu(conn.bot_id, game.name)
        waiting = self.lobby.join(key, place, mu)
        conn.send(
            LobbyJoined(game=game.name, time_control=tc, policy=message.policy, waiting=waiting)
        )
        if new:
            shared = self.shared_lobby
            if shared is not None and not shared.leading:
                if not place.house:  # the leader's own house bots wait there
                    shared.forward_join(key, place, mu)
                return new
            self.coming_back.joined(key, conn.bot_id)
            self._pair_soon(key)
        return new

    def _pair_soon(self, key: QueueKey) -> None:
        """Decide for ``key`` once the joins that arrive with this one are in: at the end of
        this turn of the event loop, one decision for all of them. Matches end in waves (their
        results are committed together), and their bots join again together: a decision per
        join walked the whole queue again for each of them, 100-200 times in a row, holding up
        everything else on the loop (at saturation, 37% of the event loop's busy time in a profile
        of bench/server.py)."""
        if key in self._pairing_due:
            return
        self._pairing_due.add(key)
        asyncio.get_running_loop().call_soon(self._pair_due, key)

    def _pair_due(self, key: QueueKey) -> None:
        self._pairing_due.discard(key)
        self._pair_logged(key)

    def _pair_logged(self, key: QueueKey) -> None:
        """pair_queue from a callback: a failure is logged, and the loop (and the tick) go on."""
        try:
            self.pair_queue(key)
        except Exception:
            log.exception("pairing the %s queue failed", key.game)

    def leave(self, conn: BotConnection, message: LeaveLobby) -> None:
        if message.game is not None:
            _game(message.game)
        if self.lobby.leave(conn.bot_id, message.game) and self.shared_lobby is not None:
            self.shared_lobby.forward_leave(conn.bot_id, message.game)
        conn.send(LobbyLeft(game=message.game))

    def pair_queue(self, key: QueueKey) -> list[MatchRunner]:
        """Ask ``pairing.pair`` about one queue and start the groups it forms."""
        waiting = self.lobby.waiters(key)
        if self.closing or not waiting:
            return []
        shared = self.shared_lobby
        if shared is not None and not shared.leading:
            return []  # the leader decides (every process's bots wait there)
        game = games.get(key.game)
        if len(waiting) < game.num_players and not self._house.get(game.name):
            # Fewer than a group and no house bot to complete one: pair() could only say so.
            # The tick comes here for every queue twice a second; a class's bots each waiting
            # alone in a queue of their own cost 45 us of CPU per bot per second without this.
            return []
        name = game.name
        now = time.monotonic()
        groups = pairing.pair(
            waiting,
            now=now,
            rng=self._rng,
            params=self._pairing_params(game.num_players),
            playing=self.coming_back.roster(key, now),
            last_opponents=self._last_opponents.get(name, {}),
            house=self._house_seats(name),
        )
        if not groups:
            return []
        names = self.lobby.names(key)
        in_queue = set(names)
        names.update((b, n) for b, n in self._house.get(name, ()))
        tc = key.time_control()
        runners = []
        for group in groups:
            self.lobby.remove(key, group.bot_ids)
            queued = tuple(b for b in group.bot_ids if b in in_queue)
            bots = [(b, names[b]) for b in group.bot_ids]
            host = None if shared is None else shared.host_of(group.bot_ids)
            if shared is not None and host != shared.leader:
                assert host is not None
                # Played on the process of its first bot (from elsewhere): seated here.
                match_id = new_match_id()
                shared.start_elsewhere(host, key, match_id, self._seat_order(game, bots), queued)
                self._note_playing(game.name, group.bot_ids)
                if self.house_load is not None:
                    house = [b for b in group.bot_ids if b in self._house_ids]
                    self.house_load.started_elsewhere(match_id, house, time.monotonic())
            else:
                runner = self.start_match(game, bots, tc, key.policy)
                match_id = runner.match_id
                self._from_queue[match_id] = (key, queued)
                runners.append(runner)
                if shared is not None:
                    shared.paired(key, queued)
            self.coming_back.started(key, queued)
            left = tuple(w.bot_id for w in self.lobby.waiting(key))
            self.pairing_log.append(
                PairingRecord(now, key, match_id, group.bot_ids, group.reason, left)
            )
            if group.reason != "rating":
                log.debug("match %s paired: %s", match_id, group.reason)
        return runners

    # --- the one lobby of several processes (server/cluster/shared_lobby.py) -------------------

    def lobby_led_here(self) -> None:
        """This process leads the lobby from now on: decide for the queues it holds, with the
        seat-rotation counts as stored now (other processes played matches meanwhile)."""
        asyncio.get_running_loop().create_task(self._reload_pairing_counts())
        for key in self.lobby.queues():
            for waiting in self.lobby.waiting(key):
                self.coming_back.joined(key, waiting.bot_id)
            self._pair_soon(key)

    async def _reload_pairing_counts(self) -> None:
        try:
            async with self.database.session() as session:
                self._pairings = await match_repo.pairing_counts(session)
        except Exception:
            log.exception("reading the seat-rotation counts failed")

    def local_waiting(self) -> list[tuple[QueueKey, Waiting, float]]:
        """This process's own bots waiting in the lobby (not house bots), with their ratings."""
        remote = {} if self.shared_lobby is None else self.shared_lobby.remote
        return [
            (key, w, self.ratings.mu(w.bot_id, key.game))
            for key in self.lobby.queues()
            for w in self.lobby.waiting(key)
            if not w.house and w.bot_id not in remote
        ]

    def join_from_elsewhere(self, key: QueueKey, place: Waiting, mu: float) -> None:
        """A bot waiting on another process, forwarded to this one, which leads the lobby."""
        if self.closing or self.lobby.is_waiting(key, place.bot_id):
            return
        self.lobby.join(key, place, mu)
        self.coming_back.joined(key, place.bot_id)
        self._pair_soon(key)

    def start_led_match(
        self,
        key: QueueKey,
        match_id: str,
        seats: Sequence[tuple[int, str]],
        queued: Sequence[int],
    ) -> None:
        """The lobby's leader paired a group to be played here, seated as given."""
        if self.closing:
            return
        self.lobby.remove(key, [b for b, _ in seats])
        self.start_match(
            games.get(key.game),
            seats,
            key.time_control(),
            key.policy,
            seats_as_given=True,
            match_id=match_id,
        )
        self._from_queue[match_id] = (key, tuple(queued))
        self._led_elsewhere.add(match_id)

    def led_match_ended(
        self, match_id: str, key: QueueKey, queued: Sequence[int], bots: Sequence[int]
    ) -> None:
        """A match this process (the leader) paired ended on another process."""
        if self.house_load is not None:
            house = [b for b in bots if b in self._house_ids]
            self.house_load.ended(match_id, house, time.monotonic())
        self._playing.subtract(bots)
        for bot_id in bots:
            if self._playing[bot_id] <= 0:
                del self._playing[bot_id]
        self.coming_back.ended(key, queued, time.monotonic())

    def _pairing_params(self, group_size: int) -> pairing.Params:
        params = self._params.get(group_size)
        if params is None:
            params = self._params[group_size] = pairing.Params.from_settings(
                self.settings, group_size
            )
        return params

    async def _tick(self) -> None:
        """Every ``pairing_tick_s``: look again at every queue with bots still waiting (their
        windows widen, their waits run out, house bots come free)."""
        period = max(0.01, self.settings.pairing_tick_s)
        while not self.closing:
            await asyncio.sleep(period)
            for key in self.lobby.queues():
                self._pair_logged(key)
            self.ticks += 1

    def _stop_ticker(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if self._claimer is not None:
            self._claimer.cancel()
            self._claimer = None

    async def _claim_orphans(self) -> None:
        """Every sixth of a lease: take over the running matches of processes whose lease ran
        out (killed, cut off), so that they go on within a lease and a sixth of their
        process's death (plus the time their bots take to reconnect)."""
        period = max(0.05, self.settings.lease_s / 6)
        while not self.closing:
            await asyncio.sleep(period)
            if self.lease is None or not self.lease.held():
                continue  # what this process takes now it might not be entitled to keep
            try:
                if self.directory is not None:
                    self.directory.listen_as(self.lease.instance_id)  # a new id: a lost lease
                    live = await self._forget_gone_processes()
                    self.directory.alone = len(live) <= 1
                # Matches of dead processes only: one without an owner is taken at a start.
                await self.resume_unfinished(unowned=False)
                if self.hosting is not None:
                    await self.hosting.sweep()
                await self.read_house_load()
            except Exception:
                log.exception("looking for matches to take over failed")

    async def _forget_gone_processes(self) -> set[str]:
        """Read which processes live; the bots connected to the others are connected no more
        (server/cluster/directory.py). The live processes' ids."""
        since = time.monotonic()
        async with self.database.session() as session:
            live = await instance_repo.live_ids(session)
        if self.directory is not None:
            self.directory.forget_gone(live, since)
        return live

    async def _lease_lost(self) -> None:
        """This process's lease ran out: another one may play its matches now. Stop them where
        they stand (nothing more is written for them) and close every bot's connection with
        ``shutting_down``, so that each reconnects to whichever process now plays its match."""
        await self._stop_matches()
        closing = RefereeError(
            ErrorCode.shutting_down,
            "this server process lost its hold on its matches; reconnect with backoff: they "
            "go on where they stood",
        ).to_message(fatal=True)
        for conn in self.connections.all():
            if self.is_house(conn.bot_id) or is_remote(conn):
                continue  # the server's own stay logged in; the others' are not here
            self.connections.unregister(conn)
            self._drop_waiting(conn.bot_id)
            conn.close_with(closing)

    # --- house bots ---------------------------------------------------------------------

    def add_house_bot(self, conn: BotConnection, game_names: Iterable[str]) -> None:
        """Log in a house bot (an in-process connection) as a ladder member of these games."""
        self._house_ids.add(conn.bot_id)
        for name in game_names:
            self._house.setdefault(name, []).append((conn.bot_id, conn.bot_name))
        self.login(conn)
        self.resync(conn)  # its matches resumed after a restart

    def is_house(self, bot_id: int) -> bool:
        return bot_id in self._house_ids

    def playing(self, bot_id: int) -> int:
        """How many matches the bot plays right now (a house bot: on every process, with
        several on one database)."""
        if self.house_load is not None and bot_id in self._house_ids:
            return self.house_load.count(bot_id, time.monotonic())
        return self._playing[bot_id]

    async def read_house_load(self, bot_ids: Sequence[int] | None = None) -> None:
        """Read from the database which matches the house bots (or ``bot_ids``) play, on
        every process (several processes on one database; nothing to read otherwise)."""
        if self.house_load is None:
            return
        ids = sorted(self._house_ids) if bot_ids is None else list(bot_ids)
        if not ids:
            return
        async with self.database.session() as session:
            found = await match_repo.running_of_bots(session, ids)
        self.house_load.read(found, time.monotonic())

    def _house_seats(self, game_name: str) -> list[pairing.HouseSeat]:
        """The connected house bots of a game with room for another match."""
        seats = []
        for bot_id, _ in self._house.get(game_name, ()):
            free = self.house_max_matches - self.playing(bot_id)
            if free > 0 and self.connections.get(bot_id) is not None:
                seats.append(pairing.HouseSeat(bot_id, self.ratings.mu(bot_id, game_name), free))
        return seats

    # --- challenges ---------------------------------------------------------------------

    def challenge(self, conn: BotConnection, message: Challenge) -> None:
        self._check_open()
        game = _game(message.game)
        tc = _time_control(game, message.time_control)
        if len(message.opponents) != game.num_players - 1:
            raise RefereeError(
                ErrorCode.invalid_message,
                f"opponents: {game.name} needs {game.num_players - 1} opponent(s), "
                f"got {len(message.opponents)}",
            )
        if len(set(message.opponents)) != len(message.opponents):
            raise RefereeError(ErrorCode.invalid_message, "opponents: a bot is named twice")
        limit = self.settings.max_challenges_per_bot
        if self.challenges.sent_by(conn.bot_id) >= limit:
            raise RefereeError(
                ErrorCode.limit_reached,
                f"a bot may have at most {limit} challenges pending at once; wait for answers",
            )
        opponents: list[Party] = []
        for name in message.opponents:
            if name.lower() == conn.bot_name.lower():
                raise RefereeError(ErrorCode.unknown_bot, "a bot cannot challenge itself")
            other = self.connections.by_name(name)
            if other is None:
                raise RefereeError(
                    ErrorCode.unknown_bot, f"no bot named {clip(repr(name))} is connected right now"
                )
            opponents.append(Party(other.bot_id, other.bot_name))
        pending = self.challenges.create(
            Party(conn.bot_id, conn.bot_name), game.name, opponents, tc, message.policy
        )
        conn.send(ChallengeSent(challenge_id=pending.challenge_id))
        received = ChallengeReceived(
            challenge_id=pending.challenge_id,
            challenger=conn.bot_name,
            game=game.name,
            opponents=[p.name for p in opponents],
            time_control=tc,
            policy=message.policy,
        )
        for party in opponents:
            self.connections.send(party.bot_id, received)
        asyncio.get_running_loop().call_later(
            self.settings.challenge_expiry_s, self._challenge_lapses, pending.challenge_id
        )

    def _challenge_lapses(self, challenge_id: str) -> None:
        """``challenge_expiry_s`` after it was made: a challenge still waiting for an answer
        lapses, as a decline by the opponents that did not answer."""
        pending = self.challenges.get(challenge_id)
        if pending is None:
            return
        self.challenges.remove(challenge_id)
        silent = [p.name for p in pending.opponents if p.bot_id not in pending.accepted]
        declined = ChallengeDeclined(
            challenge_id=challenge_id,
            by=", ".join(silent),
            reason=f"no answer within {self.settings.challenge_expiry_s:g} s",
        )
        for party in pending.parties():
            self.connections.send(party.bot_id, declined)

    def accept(self, conn: BotConnection, message: AcceptChallenge) -> None:
        self._check_open()
        if self._answer_forwarded(conn, message):
            return
        pending = self._pending(conn, message.challenge_id)
        pending.accepted.add(conn.bot_id)
        if pending.complete():
            self.challenges.remove(pending.challenge_id)
            parties = [(p.bot_id, p.name) for p in pending.parties()]
            # A check session's matches are never rated, whatever rated_challenges says.
            checking = any(
                (c := self.connections.get(bot_id)) is not None and c.check_role is not None
                for bot_id, _ in parties
            )
            self.start_match(
                games.get(pending.game),
                parties,
                pending.time_control,
                pending.policy,
                origin="challenge",
                rated=False if checking else None,
            )

    def decline(self, conn: BotConnection, message: DeclineChallenge) -> None:
        if self._answer_forwarded(conn, message):
            return
        pending = self._pending(conn, message.challenge_id)
        self.challenges.remove(pending.challenge_id)
        declined = ChallengeDeclined(
            challenge_id=pending.challenge_id, by=conn.bot_name, reason=message.reason
        )
        for party in pending.parties():
            self.connections.send(party.bot_id, declined)

    def _answer_forwarded(
        self, conn: BotConnection, message: AcceptChallenge | DeclineChallenge
    ) -> bool:
        """Sent to the process that holds the challenge, if another one does."""
        return (
            self.directory is not None
            and not is_remote(conn)
            and self.challenges.for_opponent(message.challenge_id, conn.bot_id) is None
            and self.directory.forward_answer(conn, message)
        )

    def _check_open(self) -> None:
        if self.closing:
            raise RefereeError(
                ErrorCode.shutting_down, "the server is shutting down: no new match starts"
            )

    def _pending(self, conn: BotConnection, challenge_id: str) -> PendingChallenge:
        pending = self.challenges.for_opponent(challenge_id, conn.bot_id)
        if pending is None:
            raise RefereeError(
                ErrorCode.unknown_challenge,
                f"no pending challenge {clip(repr(challenge_id))} names this bot as an opponent",
            )
        return pending

    # --- matches ------------------------------------------------------------------------

    def start_match(
        self,
        game: games.Game,
        bots: Sequence[tuple[int, str]],
        time_control: TimeControl,
        policy: Policy,
        *,
        origin: str = "lobby",
        seats_as_given: bool = False,
        rated: bool | None = None,
        match_id: str | None = None,
    ) -> MatchRunner:
        """Seat ``bots`` (alternating per set of bots) and start the match task.

        ``origin`` is ``lobby``, ``challenge`` or ``tournament``; lobby and tournament matches
        are rated, challenges only when ``settings.rated_challenges`` allows it (``rated``
        overrides that). A tournament seats its bots itself (``seats_as_given``: ``bots`` is
        in seat order) and names the match before it starts (``match_id``).
        """
        ordered = list(bots) if seats_as_given else self._seat_order(game, bots)
        if rated is None:
            rated = origin != "challenge" or self.settings.rated_challenges
        runner = MatchRunner(
            match_id=match_id or new_match_id(),
            game=game,
            seats=[SeatBot(b, name) for b, name in ordered],
            time_control=time_control,
            policy=policy,
            move_limit=time_controls.move_limit(game.name),
            origin=origin,
            rated=rated,
            **self._runner_options(),
        )
        self._launch(runner)
        return runner

    def _seat_order(
        self, game: games.Game, bots: Sequence[tuple[int, str]]
    ) -> list[tuple[int, str]]:
        """Seats for a match of these bots: bot-id order rotated by the matches they played
        together in this game so far (counted: this one too)."""
        ordered = sorted(bots)
        key = (game.name, frozenset(b for b, _ in bots))
        k = self._pairings[key] % len(ordered)
        self._pairings[key] += 1
        return ordered[k:] + ordered[:k]

    def _runner_options(self) -> dict[str, Any]:
        """What every runner of this referee shares."""
        return {
            "database": self.database,
            "connections": self.connections,
            "max_latency_grace_ms": self.settings.max_latency_grace_ms,
            "on_finish": self._finished,
            "ratings": self.ratings,
            "spectators": self.spectators,
            "owner": self.owner,
        }

    def _launch(self, runner: MatchRunner) -> None:
        """Count the match as running and start its task."""
        self.matches[runner.match_id] = runner
        self._note_playing(runner.game.name, [s.bot_id for s in runner.seats])
        if self.house_load is not None:
            self.house_load.started_here(runner.match_id, self._house_of(runner.seats))
        self._tasks[runner.match_id] = asyncio.create_task(
            runner.run(), name=f"match-{runner.match_id}"
        )

    def _note_playing(self, game_name: str, bots: Sequence[int]) -> None:
        """These bots start a match together: they play one more (house bots' room), and they
        are each other's latest opponents (no immediate rematch)."""
        self._playing.update(bots)
        last = self._last_opponents.setdefault(game_name, {})
        ids = frozenset(bots)
        for b in bots:
            last[b] = ids - {b}

    def match_task(self, match_id: str) -> asyncio.Task[None] | None:
        """The task playing ``match_id`` while it runs (await it to know when it is over)."""
        return self._tasks.get(match_id)

    def is_connected(self, bot_id: int) -> bool:
        return self.connections.get(bot_id) is not None

    def _house_of(self, seats: Sequence[SeatBot]) -> list[int]:
        return [s.bot_id for s in seats if s.bot_id in self._house_ids]

    def _finished(self, runner: MatchRunner) -> None:
        if self.house_load is not None:
            self.house_load.ended(runner.match_id, self._house_of(runner.seats), time.monotonic())
        if self.matches.pop(runner.match_id, None) is not None:
            self._playing.subtract(s.bot_id for s in runner.seats)
            for seat in runner.seats:
                if self._playing[seat.bot_id] <= 0:
                    del self._playing[seat.bot_id]
        self._tasks.pop(runner.match_id, None)
        origin = self._from_queue.pop(runner.match_id, None)
        shared = self.shared_lobby
        if (
            origin is not None
            and runner.match_id in self._led_elsewhere
            and shared is not None
            and not shared.leading
        ):
            self._led_elsewhere.discard(runner.match_id)
            key, queued = origin
            shared.ended(runner.match_id, key, queued, [s.bot_id for s in runner.seats])
        elif origin is not None:
            self._led_elsewhere.discard(runner.match_id)
            key, queued = origin
            self.coming_back.ended(key, queued, time.monotonic())
            for b in queued:
                if not self.is_connected(b):
                    self.coming_back.disconnected(b)  # not on its way back

    def move(self, conn: BotConnection, message: MakeMove, received_at: float) -> None:
        if message.match_id not in self.matches and self._forwarded(conn, message):
            return
        runner = self._runner(message.match_id)
        if runner is not None:
            runner.submit(conn.bot_id, message, received_at)

    def resign(self, conn: BotConnection, message: Resign) -> None:
        if message.match_id not in self.matches and self._forwarded(conn, message):
            return
        runner = self._runner(message.match_id)
        if runner is not None:
            runner.resign(conn.bot_id)

    def _forwarded(self, conn: BotConnection, message: MakeMove | Resign) -> bool:
        """Sent to the process that plays the match, if another one does."""
        return (
            self.directory is not None
            and not is_remote(conn)
            and not self.closing
            and self.directory.forward(conn, message)
        )

    def _runner(self, match_id: str) -> MatchRunner | None:
        """The running match; None for one that is ending (its result is being stored and its
        match_end comes next: a move or resign that crossed it is dropped without a word, as
        ``unknown_match`` would tell a bot the match is gone before it hears how it ended), and
        for any match once the server is stopping: its matches stop where they stand, to be
        resumed, and a move that crosses the stop is asked for again then (``unknown_match``
        would tell the bot its match is over, and it would forget a match that goes on)."""
        if self.closing:
            return None
        runner = self.matches.get(match_id)
        if runner is not None and runner.finished and runner.result is None:
            return None
        if runner is None or runner.finished:
            raise RefereeError(
                ErrorCode.unknown_match, f"no running match has id {match_id!r}", match_id
            )
        return runner


def new_match_id() -> str:
    """A random id of 11 URL-safe characters that never starts with ``-`` or ``_``, so that no
    command line takes it for an option."""
    while True:
        match_id = secrets.token_urlsafe(8)
        if match_id[0].isalnum():
            return match_id


def _game(name: str) -> games.Game:
    try:
        return games.get(name)
    except ValueError as e:
        raise RefereeError(
            ErrorCode.unknown_game, str(e).replace(repr(name), clip(repr(name)))
        ) from None


def _time_control(game: games.Game, requested: TimeControl | None) -> TimeControl:
    return time_controls.resolve_time_control(game.name, requested)
