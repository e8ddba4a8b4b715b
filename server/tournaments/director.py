"""The tournament director: one task per running tournament, starting its games as their bots
are connected and free, and recording how each ended.

A bot plays one tournament game at a time (whichever tournaments it is in); a game starts, at
most ``concurrency`` at once, as soon as its bots are free and connected, so a round robin's or
gauntlet's later rounds (stored when it starts) may be under way before an earlier one is over,
while a Swiss round is only drawn, from the standings, when the one before it is over. A game
whose bots are not all connected within ``no_show_s`` of the moment it could have started is
lost by the absent ones (termination ``no_show``, no match is played). After the last round the
tournament is ``finished``.

What has been decided is stored (server/repositories/tournaments.py), so a restart, or a kill
-9, resumes where the database says: a game whose match has a stored result takes it, a game
whose match was aborted or never stored is played again (``replays`` counts those), and no
finished game is played twice. Pausing stops new games from starting (those under way finish
and count); cancelling marks every game not over ``cancelled`` and ends the matches under way
``aborted`` (``cancel_games``: unrated, as an administrator's abort), so that a tournament
cancelled two seconds after its start moves no rating.

Several server processes on one database (server/cluster): each tournament being played is
directed by one process at a time, the one named by ``tournaments.director``
(server/repositories/tournament_directors.py). A process directs the tournaments it claimed: at
its start, those nobody directs or whose director's lease ran out; a tournament started or
resumed through its API, unless a live process directs it already (that one picks it up at
its next look); on PostgreSQL it looks again every sixth of a lease and takes over the
tournaments of a process that died. A director that takes over follows the games already
started: a game's match that another process plays (or will resume) is waited for through the
database, not started again. A game whose first bot (not a house bot) is connected to another
process is played there: stored as that process's match, then started by it
(server/cluster/hosting.py), and followed through the database; so a tournament's games spread
over the processes as its bots do.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from ply_arena import games
from ply_arena.protocol.messages import Policy, TimeControl
from ply_arena.server.db.database import Database
from ply_arena.server.db.models import Tournament
from ply_arena.server.referee import Referee, new_match_id
from ply_arena.server.repositories import matches as match_repo
from ply_arena.server.repositories import tournament_directors as direction_repo
from ply_arena.server.repositories import tournaments as repo
from ply_arena.server.tournaments import match_end, schedule, swiss
from ply_arena.server.tournaments.board import Board, BoardGame
from ply_arena.server.tournaments.table import results_of, swiss_entrants

log = logging.getLogger(__name__)

#: How long cancelling a tournament waits for its matches played here to store their abort.
CANCEL_WAIT_S = 10.0

#: How often a director looks again at bots it is waiting for (connections are not events it
#: is told of; a quarter of a second is nothing next to a no-show wait).
POLL_S = 0.25


class Directors:
    """Every running tournament's director (``app.state.tournaments``)."""

    def __init__(self, referee: Referee, database: Database, *, poll_s: float = POLL_S) -> None:
        self.referee = referee
        self.database = database
        #: How long a director waits when nothing wakes it (tests make it long, so that what
        #: they check is done on the event that should cause it, not on a later look).
        self.poll_s = poll_s
        self._directors: dict[int, asyncio.Task[None]] = {}
        self._wake: dict[int, asyncio.Event] = {}
        # Games that ended before their tournament's board was built (while the director read
        # the games: the board would show them playing for ever): game id -> (its match, how).
        self._ended_early: dict[int, dict[int, tuple[str, str]]] = {}
        # game id -> the task waiting for its match to end (they outlive a pause).
        self._playing: dict[int, asyncio.Task[None]] = {}
        # tournament id -> its games that have been followed by a task here
        self._games_of: dict[int, set[int]] = {}
        # tournament id -> its director's board of its games
        self._boards: dict[int, Board] = {}
        # bot id -> tournament games it is playing now, in any tournament: a bot plays one
        # tournament game at a time, whichever tournaments it is in
        self._in_play: Counter[int] = Counter()
        # tournament id -> name, bot id -> name (for the log)
        self._names: dict[int, str] = {}
        self._bot_names: dict[int, str] = {}
        # tournaments whose status changed since their director last read it
        self._steered: set[int] = set()
        # tournament id -> its writes not committed yet
        self._writes: dict[int, set[asyncio.Future[Any]]] = {}
        # tournaments whose director failed (an error, logged): not started again by a look
        self._failed: set[int] = set()
        # tournament id -> the instance id this process claimed it as (a process that lost
        # its lease registers again under a new id, and holds nothing it claimed before)
        self._claimed_as: dict[int, str | None] = {}
        self._claimer: asyncio.Task[None] | None = None
        self._closing = False
        # game id -> its match followed here, and the process that plays it (None: this one)
        self._match_of: dict[int, tuple[str, str | None]] = {}

    async def start(self) -> None:
        """Direct every tournament being played that no live process directs (a restart left
        it so, or its process died); settle the games cut off in a paused one (so that it
        shows what it will replay). On PostgreSQL, look again every sixth of a lease."""
        await self._claim(starting=True)
        if self.referee.owner is not None and not self.database.is_sqlite:
            # On SQLite one process serves the file (the server mark): what it claims at its
            # start, and what its API starts, is everything there is to direct.
            self._claimer = asyncio.create_task(self._claim_forever(), name="claim-tournaments")

    async def stop(self) -> None:
        """Stop directing (the server is going down): the games under way are left ``playing``
        in the database, and resumed or replayed at the next start (or by another process)."""
        self._closing = True
        if self._claimer is not None:
            self._claimer.cancel()
        tasks = [*self._directors.values(), *self._playing.values()]
        if self._claimer is not None:
            tasks.append(self._claimer)
            self._claimer = None
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def run(self, tournament_id: int) -> None:
        """Direct the tournament (it is ``running`` in the database), unless already done."""
        self._failed.discard(tournament_id)  # asked again: try again
        self.steer(tournament_id)
        task = self._directors.get(tournament_id)
        if self._closing or (task is not None and not task.done()):
            return
        self._directors[tournament_id] = asyncio.create_task(
            self._direct(tournament_id), name=f"tournament-{tournament_id}"
        )

    async def cancel_games(self, tournament_id: int) -> list[str]:
        """The tournament is cancelled (stored so): end its matches under way ``aborted``,
        unrated, wherever they are played: those followed here and those the database has as
        running (on another process: asked through the bus; played by none: ended in the
        database). Their games stay ``cancelled`` (``game_replays`` leaves them so). Waits a
        while for the matches played here to store their end; the ids ended or asked to end."""
        referee = self.referee
        hosting = referee.hosting
        wanted: dict[str, str | None] = {
            match_id: host
            for game_id, (match_id, host) in self._match_of.items()
            if game_id in self._games_of.get(tournament_id, set())
        }
        async with self.database.session() as session:
            for match_id, owner in await repo.running_matches_of(session, tournament_id):
                wanted.setdefault(match_id, owner)
        ended: list[str] = []
        tasks: list[asyncio.Task[None]] = []
        orphans: list[str] = []
        for match_id, host in wanted.items():
            if referee.abort_match(match_id):
                ended.append(match_id)
                task = referee.match_task(match_id)
                if task is not None:
                    tasks.append(task)
            elif hosting is not None and host is not None and host != referee.owner:
                hosting.abort_on(host, match_id)
                ended.append(match_id)
            else:
                orphans.append(match_id)
        if tasks:
            await asyncio.wait(tasks, timeout=CANCEL_WAIT_S)
        if orphans:
            async with self.database.session() as session:
                ended.extend(await match_repo.abort_running(session, orphans))
                await session.commit()
        if ended:
            log.info(
                "tournament %s cancelled: %d match(es) under way ended aborted (unrated)",
                self._names.get(tournament_id, tournament_id),
                len(ended),
            )
        return ended

    def wake(self, tournament_id: int) -> None:
        """Something changed (a game ended): look now."""
        event = self._wake.get(tournament_id)
        if event is not None:
            event.set()

    def steer(self, tournament_id: int) -> None:
        """The tournament's status changed (paused, cancelled, resumed): read it again now."""
        self._steered.add(tournament_id)
        self.wake(tournament_id)

    async def _claim(self, *, starting: bool = False) -> None:
        """Claim the tournaments being played that no live process directs; direct the running
        ones (and those this process directs whose director stopped: resumed by another
        process's API), settle the cut-off games of the paused ones just taken over (of every
        paused one at the start)."""
        owner = self.referee.owner
        async with self.database.session() as session:
            if owner is None:  # a referee not started (tests that direct by hand): all of them
                found = [
                    direction_repo.Claimed(t.id, t.status, False)
                    for status in direction_repo.DIRECTED
                    for t in await repo.list_tournaments(session, status=status)
                ]
            else:
                found = await direction_repo.claim(session, owner)
        for claimed in found:
            tournament_id = claimed.tournament_id
            if claimed.status == "paused" and (starting or not claimed.already):
                mine = self._games_of.setdefault(tournament_id, set())
                await self._reconcile(tournament_id, mine)
            elif (
                claimed.status == "running"
                and not self._directing(tournament_id)
                and tournament_id not in self._failed
            ):
                self.run(tournament_id)

    def _directing(self, tournament_id: int) -> bool:
        task = self._directors.get(tournament_id)
        return task is not None and not task.done()

    async def _claim_forever(self) -> None:
        """Every sixth of a lease (PostgreSQL): take over the tournaments of processes whose
        lease ran out, within a lease and a sixth of their death, as the referee does with
        their matches (``Referee._claim_orphans``)."""
        period = max(0.05, self.referee.settings.lease_s / 6)
        while not self._closing:
            await asyncio.sleep(period)
            if not self._lease_held():
                continue  # what this process takes now it might not be entitled to keep
            try:
                await self._claim()
            except Exception:
                log.exception("looking for tournaments to direct failed")

    def _lease_held(self) -> bool:
        """Whether this process surely still holds its lease (and so its tournaments); True
        when no other process may direct them (SQLite, or a referee not started: tests that
        direct by hand), so that one process behaves as it always has."""
        lease = self.referee.lease
        return not self._shared() or lease is None or lease.held()

    async def _claimed(self, tournament_id: int) -> bool:
        """Whether this process directs the tournament now (claiming it if nobody live does)."""
        owner = self.referee.owner
        self._claimed_as[tournament_id] = owner
        if owner is None:
            return True
        async with self.database.session() as session:
            found = await direction_repo.claim(session, owner, [tournament_id])
        return bool(found)

    def _holds(self, tournament_id: int) -> bool:
        """Whether this process surely still directs the tournament: the lease it claimed it
        under still runs."""
        if not self._shared():
            return True
        return self._lease_held() and self._claimed_as.get(tournament_id) == self.referee.owner

    async def _may_draw(self, session: AsyncSession, tournament_id: int) -> bool:
        """Whether this process may draw the tournament's next round (or end it) in
        ``session``: it still directs it, and no other process can claim it before that
        transaction ends (its row is locked)."""
        owner = self.referee.owner
        if not self._shared() or owner is None:
            return True
        return self._holds(tournament_id) and await direction_repo.lock_if_director(
            session, tournament_id, owner
        )

    def playing(self, tournament_id: int) -> int:
        """How many of its games are being played now."""
        return sum(
            1 for game_id in self._games_of.get(tournament_id, ()) if game_id in self._playing
        )

    async def _direct(self, tournament_id: int) -> None:
        wake = self._wake.setdefault(tournament_id, asyncio.Event())
        mine = self._games_of.setdefault(tournament_id, set())
        # A board of an earlier direction is stale: the games that end until the new one is
        # built are kept for it (_ended).
        self._boards.pop(tournament_id, None)
        # When each pending game first could have started but for an absent bot.
        waiting_since: dict[int, float] = {}
        try:
            if not await self._claimed(tournament_id):
                # Another live process directs it (the API of this one started or resumed
                # it): that one's next look picks it up.
                log.info(
                    "tournament %d is directed by another server process; this one leaves it",
                    tournament_id,
                )
                return
            await self._reconcile(tournament_id, mine)
            # The games, read once and then kept in step here: this director is the only one
            # that changes them (the API changes the tournament's status: see steer).
            async with self.database.session() as session:
                tournament = await repo.tournament_by_id(session, tournament_id)
                settings = _Settings(tournament)
                names = {p.bot_id: p.name for p in await repo.participants(session, tournament)}
                self._names[tournament_id] = tournament.name
                self._bot_names.update(names)
                stored = await repo.games_of(session, tournament)
            log.info(
                "directing tournament %s (server process %s)",
                tournament.name,
                self.referee.owner or "-",
            )
            board = self._boards[tournament_id] = Board(BoardGame.of(g) for g in stored)
            for game_id, (ended_match, how) in self._ended_early.pop(tournament_id, {}).items():
                # Ended (a match the start followed) while the games were being read.
                early = board.get(game_id)
                if early is not None and early.match_id == ended_match:
                    board.ended(early, how)
            status_due = 0.0
            everything = True  # look at every pending game (else: those of the bots just freed)
            while True:
                wake.clear()
                round_over = board.all_decided()
                looked_at = time.monotonic()
                if round_over:
                    # The next round is drawn from the stored results: all of them.
                    await self._written(tournament_id)
                # The status is read again when the API changed it (steer), at each round and
                # once a second otherwise (another process's API may have changed it), and
                # with it the director: a process whose lease ran out may have lost the
                # tournament to another one.
                if round_over or tournament_id in self._steered or looked_at >= status_due:
                    self._steered.discard(tournament_id)
                    status_due = looked_at + 1.0
                    async with self.database.session() as session:
                        status, director = await direction_repo.direction_of(session, tournament_id)
                    if status != "running":
                        if status == "cancelled":
                            # Cancelled through another process's API, maybe: the matches
                            # followed here are ended too (cancel_games is idempotent).
                            await self.cancel_games(tournament_id)
                        return
                    owner = self.referee.owner
                    if self._shared() and director != owner:
                        log.warning(
                            "tournament %s is directed by server process %s now; this one "
                            "stops directing it",
                            self._names.get(tournament_id, tournament_id),
                            director,
                        )
                        return
                if round_over:
                    async with self.database.session() as session:
                        if not await self._may_draw(session, tournament_id):
                            log.warning(
                                "tournament %s: this server process may no longer direct it; "
                                "it stops (the one that does draws the next round)",
                                self._names.get(tournament_id, tournament_id),
                            )
                            return
                        tournament = await repo.tournament_by_id(session, tournament_id)
                        if not await self._next_round(session, tournament):
                            await repo.set_status(session, tournament, "finished")
                            log.info("tournament %s finished", tournament.name)
                            return
                        stored = await repo.games_of(session, tournament)
                    board = self._boards[tournament_id] = Board(BoardGame.of(g) for g in stored)
                    everything = True
                    continue
                next_deadline = await self._start_what_can(
                    settings, board, names, mine, waiting_since, everything
                )
                now = time.monotonic()
                timeout = (
                    self.poll_s if next_deadline is None else min(self.poll_s, next_deadline - now)
                )
                try:
                    await asyncio.wait_for(wake.wait(), timeout=max(0.0, timeout))
                    everything = False  # a game ended: its bots' games are what changed
                except TimeoutError:
                    everything = True  # time passed: a bot may have connected, a wait ended
        except asyncio.CancelledError:
            raise
        except Exception:
            self._failed.add(tournament_id)
            log.exception("the director of tournament %d failed; it stops", tournament_id)
        finally:
            self._boards.pop(tournament_id, None)

    async def _start_what_can(
        self,
        settings: _Settings,
        board: Board,
        names: dict[int, str],
        mine: set[int],
        waiting_since: dict[int, float],
        everything: bool,
    ) -> float | None:
        """Start the pending games whose bots are all connected and free, up to the
        concurrency; lose by no_show those whose wait is over. The next no-show deadline.

        A game waits for the games before it only through its bots: a bot plays one game of
        the tournament at a time, so a later round's game starts as soon as its bots are free
        (the rounds of a round robin or gauntlet are fixed in advance; a Swiss round is only
        drawn when the one before it is over)."""
        candidates = board.candidates(everything)
        free = settings.concurrency - board.playing
        # In a game of this tournament or of another (the counter keeps positive counts only).
        busy = set(self._in_play)
        now = time.monotonic()
        next_deadline: float | None = None
        starting: list[BoardGame] = []
        for index, game in enumerate(candidates):
            if free <= 0:
                board.not_looked_at(candidates[index:])
                break
            if busy.intersection(game.bot_ids):
                continue
            absent = [s for s, b in enumerate(game.bot_ids) if not self.referee.is_connected(b)]
            if not absent:
                starting.append(game)
                busy.update(game.bot_ids)
                waiting_since.pop(game.id, None)
                free -= 1
                continue
            since = waiting_since.setdefault(game.id, now)
            deadline = since + settings.no_show_s
            if now >= deadline:
                self._no_show(settings.tournament_id, board, game, absent)
                waiting_since.pop(game.id, None)
                continue
            next_deadline = deadline if next_deadline is None else min(next_deadline, deadline)
        # Without a lease surely held, another process may direct the tournament by now: it
        # must be the only one to start its games (this one stops at its next status read).
        if starting and not self.referee.closing and self._holds(settings.tournament_id):
            self._start_games(settings, board, starting, names, mine)
        return next_deadline

    async def _reconcile(self, tournament_id: int, mine: set[int]) -> None:
        """Games left ``playing`` by a restart, or by the director this one took over from:
        take the stored result, follow the match still running (here, or on another process,
        or to be resumed by one), or play the game again when nobody will play its match."""
        async with self.database.session() as session:
            tournament = await repo.tournament_by_id(session, tournament_id)
            settings = _Settings(tournament)
            left = [
                g
                for g in await repo.games_of(session, tournament)
                if g.status == "playing" and g.id not in self._playing
            ]
            # Which of their matches still run here, looked at before the outcomes are read: a
            # match that ends during that read is then followed (its runner has the result),
            # not taken for cut off and played again; one that ended before this look has its
            # result stored already (a match's task ends once its result is written).
            here = {g.id for g in left if match_end.runs_here(self.referee, g.match_id)}
            outcomes = await repo.match_outcomes(
                session, [g.match_id for g in left if g.match_id is not None]
            )
            for game in left:
                outcome = outcomes.get(game.match_id or "")
                ending = match_end.ending_of(outcome)
                if game.match_id is not None and (
                    game.id in here
                    or (outcome is not None and outcome.status == "running" and self._shared())
                ):
                    self._follow(settings, game.id, game.match_id, list(game.bot_ids), mine)
                elif ending is not None:
                    await repo.game_over(
                        session,
                        game.id,
                        status="finished",
                        termination=ending.termination,
                        payoffs=ending.payoffs,
                        at_fault=ending.at_fault,
                    )
                else:
                    log.info(
                        "tournament %s: game %d (round %d) had its match %s cut off; replaying",
                        tournament.name,
                        game.id,
                        game.round,
                        game.match_id,
                    )
                    await repo.game_replays(session, game.id, game.match_id)

    def _shared(self) -> bool:
        """Whether other server processes may play this database's matches (PostgreSQL, a
        referee with a lease): a running match not played here is then another's, or one a
        referee will take over, and its game waits for it. On SQLite nobody else plays it: a
        match not running here was cut off."""
        return self.referee.owner is not None and not self.database.is_sqlite

    async def _next_round(self, session: AsyncSession, tournament: Tournament) -> bool:
        """Store the next round; False when there is none (the tournament is over)."""
        stored = await repo.games_of(session, tournament)
        people = await repo.participants(session, tournament)
        entrants = [p for p in people if p.role == "entrant"]
        pool = [p for p in people if p.role == "pool"]
        ids = {p.name: p.bot_id for p in people}
        if stored and tournament.format != "swiss":
            return False
        if tournament.format == "swiss":
            played = max((g.round for g in stored), default=0)
            if played >= tournament.rounds:
                return False
            names = {p.bot_id: p.name for p in people}
            try:
                absent = {p.name for p in entrants if not self.referee.is_connected(p.bot_id)}
                pairs, bye = swiss.pair_round(
                    swiss_entrants(entrants, results_of(stored, names)), absent
                )
            except swiss.SwissError as exc:
                log.warning("tournament %s ends after round %d: %s", tournament.name, played, exc)
                return False
            await repo.add_round(
                session,
                tournament,
                played + 1,
                [(ids[a], ids[b]) for a, b in pairs],
                ids[bye] if bye is not None else None,
            )
            log.info("tournament %s: round %d paired", tournament.name, played + 1)
            return True
        game = games.get(tournament.game)
        names_in = [p.name for p in entrants]
        if tournament.format == "gauntlet":
            rounds = schedule.gauntlet(names_in, [p.name for p in pool], cycles=tournament.rounds)
        else:
            rounds = schedule.round_robin(
                names_in, players=game.num_players, cycles=tournament.rounds
            )
        for number, pairings in enumerate(rounds, start=1):
            await repo.add_round(
                session, tournament, number, [tuple(ids[n] for n in p) for p in pairings]
            )
        return bool(rounds)

    def _start_games(
        self,
        settings: _Settings,
        board: Board,
        starting: list[BoardGame],
        names: dict[int, str],
        mine: set[int],
    ) -> None:
        rules = games.get(settings.game)
        for game in starting:
            match_id = new_match_id()
            # The game names its match before the match exists: the database's single writer
            # commits this before the match's own row, or with it (both go ahead of the other
            # writes, in the order submitted: server/db/recorder.py), so a crash leaves no
            # match the tournament does not know of. Not awaited: the match's start waits for
            # its own row, and so for this.
            self._submit(
                settings.tournament_id, repo.game_started, game_id=game.id, match_id=match_id
            )
            board.started(game, match_id)
            hosting = self.referee.hosting
            host = None if hosting is None else hosting.host_of(game.bot_ids)
            if hosting is not None and host is not None and host != hosting.directory.me:
                # Its first bot is connected to another process: played there (stored first,
                # as that process's: server/cluster/hosting.py); followed through the database.
                stored = asyncio.ensure_future(
                    hosting.start_on(
                        host,
                        rules,
                        game.bot_ids,
                        settings.time_control,
                        settings.policy,
                        origin="tournament",
                        rated=settings.rated,
                        match_id=match_id,
                    )
                )
                self._follow(
                    settings, game.id, match_id, list(game.bot_ids), mine, stored=stored, host=host
                )
                continue
            runner = self.referee.start_match(
                rules,
                [(b, names[b]) for b in game.bot_ids],
                settings.time_control,
                settings.policy,
                origin="tournament",
                seats_as_given=True,
                rated=settings.rated,
                match_id=match_id,
            )
            assert match_end.runs_here(self.referee, runner.match_id)
            self._follow(settings, game.id, runner.match_id, list(game.bot_ids), mine)

    def _submit(self, tournament_id: int, write: Any, **kwargs: Any) -> None:
        """A write through the database's single writer, awaited before the next round."""
        future = self.database.recorder.submit(write, **kwargs)
        pending = self._writes.setdefault(tournament_id, set())
        pending.add(future)
        future.add_done_callback(pending.discard)

    async def _written(self, tournament_id: int) -> None:
        """Every write of this tournament's so far is committed."""
        pending = list(self._writes.get(tournament_id, ()))
        if pending:
            await asyncio.gather(*pending)

    def _follow(
        self,
        settings: _Settings,
        game_id: int,
        match_id: str,
        bot_ids: list[int],
        mine: set[int],
        stored: asyncio.Future[None] | None = None,
        host: str | None = None,
    ) -> None:
        """Follow a game's match until it ends (``stored``: the match is being stored for
        another process, ``host``, to play; it is followed once it is)."""
        mine.add(game_id)
        self._match_of[game_id] = (match_id, host)
        self._in_play.update(bot_ids)
        self._playing[game_id] = asyncio.create_task(
            self._record(settings, game_id, match_id, bot_ids, stored),
            name=f"tournament-game-{game_id}",
        )

    async def _record(
        self,
        settings: _Settings,
        game_id: int,
        match_id: str,
        bot_ids: list[int],
        stored: asyncio.Future[None] | None,
    ) -> None:
        """Wait for the match to end, wherever it is played, and store how the game went."""
        try:
            try:
                if await self._stored(match_id, stored):
                    ending = await match_end.end_of(
                        match_id,
                        referee=self.referee,
                        database=self.database,
                        shared=self._shared(),
                        stopping=lambda: self._closing or self.referee.closing,
                        lease_held=self._lease_held,
                    )
                else:
                    ending = None
            except match_end.LeftRunning:
                return  # resumed (and replayed) at the next start, or by another process
            tid = settings.tournament_id
            if ending is None:
                if self._closing or self.referee.closing:
                    return  # resumed (and replayed) at the next start
                if await self._cancelled(tid):
                    # Aborted because the tournament was cancelled: the game stays so.
                    self._ended(tid, game_id, match_id, "cancelled")
                    return
                self._submit(tid, repo.game_replays, game_id=game_id, match_id=match_id)
                self._ended(tid, game_id, match_id, "pending")
            else:
                self._submit(
                    tid,
                    repo.game_over,
                    game_id=game_id,
                    status="finished",
                    termination=ending.termination,
                    payoffs=ending.payoffs,
                    at_fault=ending.at_fault,
                )
                # The bots are free now: the director may start their next games while this
                # is written (a crash before the write: the match's stored result is taken).
                self._ended(tid, game_id, match_id, "finished")
        finally:
            self._playing.pop(game_id, None)
            self._match_of.pop(game_id, None)
            self._in_play.subtract(bot_ids)
            self._in_play += Counter()  # drop the bots at zero
            # Its bots may be due in other tournaments too.
            for tournament_id, board in list(self._boards.items()):
                if tournament_id != settings.tournament_id:
                    board.freed_elsewhere(bot_ids)
                    self.wake(tournament_id)
            self.wake(settings.tournament_id)

    async def _cancelled(self, tournament_id: int) -> bool:
        """Whether the tournament is cancelled (read fresh: the API of any process may have
        cancelled it)."""
        async with self.database.session() as session:
            status, _ = await direction_repo.direction_of(session, tournament_id)
        return status == "cancelled"

    @staticmethod
    async def _stored(match_id: str, stored: asyncio.Future[None] | None) -> bool:
        """Whether the match is stored (or is started here, storing itself): until its row is
        in, the database would take it for ended. A stop meanwhile leaves the write to finish
        (the shield)."""
        if stored is None:
            return True
        try:
            await asyncio.shield(stored)
        except Exception as exc:
            log.warning("match %s could not be stored for another process (%s)", match_id, exc)
            return False
        return True

    def _ended(self, tournament_id: int, game_id: int, match_id: str, status: str) -> None:
        """The director's board follows what was just submitted for storing (the game's
        ``match_id`` ended)."""
        board = self._boards.get(tournament_id)
        if board is None:
            self._ended_early.setdefault(tournament_id, {})[game_id] = (match_id, status)
            return
        game = board.get(game_id)
        if game is not None:
            board.ended(game, status)

    def _no_show(
        self, tournament_id: int, board: Board, game: BoardGame, absent: list[int]
    ) -> None:
        self._submit(
            tournament_id,
            repo.game_over,
            game_id=game.id,
            status="no_show",
            termination="no_show",
            absent=absent,
        )
        board.decided_without_playing(game, "no_show")
        # That may have been the round's (or the tournament's) last game: look again now.
        self.wake(tournament_id)
        log.info(
            "tournament %s, round %d: %s did not come (no_show)",
            self._names.get(tournament_id, tournament_id),
            game.round,
            ", ".join(self._bot_names.get(game.bot_ids[s], str(game.bot_ids[s])) for s in absent),
        )


class _Settings:
    """What a director needs of its tournament, read once per look (no ORM object kept)."""

    __slots__ = (
        "concurrency",
        "game",
        "no_show_s",
        "policy",
        "rated",
        "time_control",
        "tournament_id",
    )

    def __init__(self, tournament: Tournament) -> None:
        self.tournament_id = tournament.id
        self.game = tournament.game
        self.concurrency = tournament.concurrency
        self.no_show_s = tournament.no_show_s
        self.rated = tournament.rated
        self.policy = Policy(tournament.policy)
        self.time_control = TimeControl(move_ms=tournament.move_ms, bank_ms=tournament.bank_ms)
