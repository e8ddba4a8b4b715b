"""The tournament director: one task per running tournament, starting its games as their bots
are connected and recording how each ended.

Rounds are played in order: a round's games start (at most ``concurrency`` at once) when every
bot of the game is connected; a game whose bots are not all connected within ``no_show_s`` of
the moment it could have started is lost by the absent ones (termination ``no_show``, no match
is played). When a round is over, a Swiss tournament pairs the next from the standings; a round
robin's or gauntlet's rounds were all stored when it started. After the last round the
tournament is ``finished``.

Every decision is read back from the database (the games and their status), so a restart, or a
kill -9, resumes where the stored state says: a game whose match has a stored result takes it,
a game whose match was aborted or never stored is played again (``replays`` counts those), and
no finished game is played twice. Pausing stops new games from starting (those under way
finish and count); cancelling also marks the games not started ``cancelled``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

import games
from protocol.messages import Policy, Termination, TimeControl
from server.db.database import Database
from server.db.models import Tournament, TournamentGame
from server.referee import Referee, new_match_id
from server.repositories import tournaments as repo
from server.tournaments import schedule, swiss
from server.tournaments.table import results_of, swiss_entrants

log = logging.getLogger(__name__)

#: How often a director looks again at bots it is waiting for (connections are not events it
#: is told of; a quarter of a second is nothing next to a no-show wait).
POLL_S = 0.25


class Directors:
    """Every running tournament's director (``app.state.tournaments``)."""

    def __init__(self, referee: Referee, database: Database) -> None:
        self.referee = referee
        self.database = database
        self._directors: dict[int, asyncio.Task[None]] = {}
        self._wake: dict[int, asyncio.Event] = {}
        # game id -> the task waiting for its match to end (they outlive a pause).
        self._playing: dict[int, asyncio.Task[None]] = {}
        # tournament id -> its games that have been followed by a task here
        self._games_of: dict[int, set[int]] = {}
        self._closing = False

    async def start(self) -> None:
        """Resume every tournament a restart left running."""
        async with self.database.session() as session:
            running = [t.id for t in await repo.list_tournaments(session, status="running")]
        for tournament_id in running:
            log.info("resuming tournament %d", tournament_id)
            self.run(tournament_id)

    async def stop(self) -> None:
        """Stop directing (the server is going down): the games under way are left ``playing``
        in the database, and resumed or replayed at the next start."""
        self._closing = True
        tasks = [*self._directors.values(), *self._playing.values()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def run(self, tournament_id: int) -> None:
        """Direct the tournament (it is ``running`` in the database), unless already done."""
        self.wake(tournament_id)
        task = self._directors.get(tournament_id)
        if self._closing or (task is not None and not task.done()):
            return
        self._directors[tournament_id] = asyncio.create_task(
            self._direct(tournament_id), name=f"tournament-{tournament_id}"
        )

    def wake(self, tournament_id: int) -> None:
        """Something changed (a game ended, the tournament was paused or cancelled): look now."""
        event = self._wake.get(tournament_id)
        if event is not None:
            event.set()

    def playing(self, tournament_id: int) -> int:
        """How many of its games are being played now."""
        return sum(
            1 for game_id in self._games_of.get(tournament_id, ()) if game_id in self._playing
        )

    async def _direct(self, tournament_id: int) -> None:
        wake = self._wake.setdefault(tournament_id, asyncio.Event())
        mine = self._games_of.setdefault(tournament_id, set())
        # When each pending game first could have started but for an absent bot.
        waiting_since: dict[int, float] = {}
        try:
            await self._reconcile(tournament_id, mine)
            while True:
                wake.clear()
                async with self.database.session() as session:
                    tournament = await repo.tournament_by_id(session, tournament_id)
                    if tournament.status != "running":
                        return
                    stored = await repo.games_of(session, tournament)
                    if not any(g.status not in repo.DONE for g in stored):
                        if not await self._next_round(session, tournament, stored):
                            await repo.set_status(session, tournament, "finished")
                            log.info("tournament %s finished", tournament.name)
                            return
                        continue
                    tournament_row = _Settings.of(tournament)
                current = min(g.round for g in stored if g.status not in repo.DONE)
                pending = [g for g in stored if g.round == current and g.status == "pending"]
                busy = {g.id for g in stored if g.status == "playing"} | {
                    gid for gid in mine if gid in self._playing
                }
                free = tournament_row.concurrency - len(busy)
                now = time.monotonic()
                next_deadline: float | None = None
                for game in pending:
                    if free <= 0:
                        break
                    absent = [
                        seat
                        for seat, bot_id in enumerate(game.bot_ids)
                        if not self.referee.is_connected(bot_id)
                    ]
                    if not absent and not self.referee.closing:
                        await self._start_game(tournament_row, game, mine)
                        waiting_since.pop(game.id, None)
                        free -= 1
                        continue
                    since = waiting_since.setdefault(game.id, now)
                    deadline = since + tournament_row.no_show_s
                    if now >= deadline:
                        await self._no_show(game, absent)
                        waiting_since.pop(game.id, None)
                        continue
                    next_deadline = (
                        deadline if next_deadline is None else min(next_deadline, deadline)
                    )
                timeout = POLL_S if next_deadline is None else min(POLL_S, next_deadline - now)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), timeout=max(0.0, timeout))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("the director of tournament %d failed; it stops", tournament_id)

    async def _reconcile(self, tournament_id: int, mine: set[int]) -> None:
        """Games left ``playing`` by a restart: take the stored result, follow the match still
        running, or play the game again."""
        async with self.database.session() as session:
            tournament = await repo.tournament_by_id(session, tournament_id)
            settings = _Settings.of(tournament)
            left = [
                g
                for g in await repo.games_of(session, tournament)
                if g.status == "playing" and g.id not in self._playing
            ]
            outcomes = await repo.match_outcomes(
                session, [g.match_id for g in left if g.match_id is not None]
            )
            for game in left:
                outcome = outcomes.get(game.match_id or "")
                task = self.referee.match_task(game.match_id or "")
                if task is not None:
                    self._follow(settings, game.id, game.match_id or "", task, mine)
                elif (
                    outcome is not None
                    and outcome.status == "finished"
                    and outcome.payoffs is not None
                    and outcome.termination is not None
                ):
                    await repo.game_over(
                        session,
                        game.id,
                        status="finished",
                        termination=outcome.termination,
                        payoffs=outcome.payoffs,
                        at_fault=outcome.at_fault,
                    )
                else:
                    log.info(
                        "tournament %s: game %d (round %d) had its match %s cut off; replaying",
                        tournament.name,
                        game.id,
                        game.round,
                        game.match_id,
                    )
                    await repo.game_replays(session, game)

    async def _next_round(
        self, session: AsyncSession, tournament: Tournament, stored: Sequence[TournamentGame]
    ) -> bool:
        """Store the next round; False when there is none (the tournament is over)."""
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
                pairs, bye = swiss.pair_round(swiss_entrants(entrants, results_of(stored, names)))
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

    async def _start_game(self, settings: _Settings, game: TournamentGame, mine: set[int]) -> None:
        match_id = new_match_id()
        # The game names its match before the match exists: a crash in between leaves a game
        # whose match is missing, which the next start replays.
        async with self.database.session() as session:
            await repo.game_started(session, game.id, match_id)
            names = await repo.bot_names(session, game.bot_ids)
        runner = self.referee.start_match(
            games.get(settings.game),
            [(b, names[b]) for b in game.bot_ids],
            settings.time_control,
            settings.policy,
            origin="tournament",
            seats_as_given=True,
            rated=settings.rated,
            match_id=match_id,
        )
        task = self.referee.match_task(runner.match_id)
        assert task is not None
        self._follow(settings, game.id, match_id, task, mine)

    def _follow(
        self,
        settings: _Settings,
        game_id: int,
        match_id: str,
        task: asyncio.Task[None],
        mine: set[int],
    ) -> None:
        mine.add(game_id)
        self._playing[game_id] = asyncio.create_task(
            self._record(settings, game_id, match_id, task), name=f"tournament-game-{game_id}"
        )

    async def _record(
        self, settings: _Settings, game_id: int, match_id: str, task: asyncio.Task[None]
    ) -> None:
        """Wait for the match to end and store how the game went."""
        try:
            await asyncio.wait([task])
            async with self.database.session() as session:
                outcome = (await repo.match_outcomes(session, [match_id])).get(match_id)
                if (
                    outcome is None
                    or outcome.status != "finished"
                    or outcome.payoffs is None
                    or outcome.termination is None
                    or outcome.termination == Termination.aborted
                ):
                    if self._closing or self.referee.closing:
                        return  # resumed at the next start
                    game = await session.get(TournamentGame, game_id)
                    if game is not None:
                        await repo.game_replays(session, game)
                else:
                    await repo.game_over(
                        session,
                        game_id,
                        status="finished",
                        termination=outcome.termination,
                        payoffs=outcome.payoffs,
                        at_fault=outcome.at_fault,
                    )
        finally:
            self._playing.pop(game_id, None)
            self.wake(settings.tournament_id)

    async def _no_show(self, game: TournamentGame, absent: list[int]) -> None:
        async with self.database.session() as session:
            await repo.game_over(
                session, game.id, status="no_show", termination="no_show", absent=absent
            )
        log.info("tournament game %d: seat(s) %s did not come (no_show)", game.id, absent)


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

    @classmethod
    def of(cls, tournament: Tournament) -> _Settings:
        return cls(tournament)
