"""The scripted session of ``arena check-bot``: the steps, in order, and what each collects.

1. **connect**: the bot logs in through the relay (or, with ``direct``, is already connected);
   the relay pings it once.
2. **plain**: one match with the time control of the check, policy ``forfeit``; the relay
   pings the bot again right after its first turn is passed on (a bot that thinks without
   reading its socket answers late).
3. **forced**: one match at 50 ms per move and no bank, policy ``random_move``: a bot slower
   than that is moved for by the referee (``forced_move``) and must go on playing.
4. **two at once**: two challenges sent together (policy ``random_move``, so that a fault does
   not end a match early); the checker resigns the first once the bot has moved twice in it, so
   the bot gets a ``match_end`` while the other match goes on.
5. **backgammon** (only when asked for and the game is not backgammon): one backgammon match.
6. **reconnect** (relay only): one match (``random_move``, at least 5 s of bank); the relay
   cuts the bot's connection instead of passing on its second turn, and waits for the bot to
   log in again and answer the turn the arena resends.

The checker resigns a match once the bot has moved :data:`MAX_BOT_MOVES` times in it: enough to
see how it plays, short enough for long games. Nothing is decided here: everything observed goes
into :class:`Observations` for :mod:`ply_arena.server.checkbot.checklist`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from ply_arena.protocol.messages import MIN_MOVE_MS, MatchEnd, Policy, TimeControl
from ply_arena.server.checkbot.opponent import (
    ChallengeRefused,
    CheckerBot,
    CheckerError,
    CheckerMatch,
    resign_after,
)
from ply_arena.server.checkbot.relay import Cut, Frame, Link, Relay

STEP_PLAIN = "plain"
STEP_FORCED = "forced"
STEP_TWO = "two at once"
STEP_CHANCE = "backgammon"
STEP_RECONNECT = "reconnect"

#: The checker resigns once the bot has moved this many times in a match.
MAX_BOT_MOVES = 30
#: In the backgammon step (when --game is another game), fewer: a dozen dice rolls suffice.
CHANCE_BOT_MOVES = 12
#: The forced step's clock: the least the arena allows per move, no bank.
FORCED_TIME_CONTROL = TimeControl(move_ms=MIN_MOVE_MS, bank_ms=0)
#: The reconnect step gives the bot at least this much bank to come back in.
RECONNECT_BANK_MS = 5000
#: How long a challenge may go unanswered (direct mode: the bot answers it itself).
ANSWER_S = 15.0
#: How long to wait for a bot that is not connected between steps (it may be reconnecting).
ABSENT_S = 10.0
#: At the end, how long the relay waits for the bot's pongs to the last pings.
PONG_WAIT_S = 2.0


class CheckSetupError(RuntimeError):
    """The check cannot run at all: the arena is unreachable, the checker's token is refused,
    the game is unknown or has three players. Said in one line."""


@dataclass
class CheckConfig:
    url: str  # the arena's ws://HOST:PORT/ws
    token: str  # the checker's own bot
    game: str
    bot: str | None = None  # the bot under test (learnt from its login when None)
    direct: bool = False  # the bot is connected to the arena itself, not through the relay
    listen_host: str = "127.0.0.1"
    listen_port: int = 8765
    wait_s: float = 120.0
    move_ms: int | None = None
    bank_ms: int | None = None
    with_backgammon: bool = False
    seed: int | None = None
    #: How long to wait between steps for a bot that is not connected (it may be reconnecting).
    absent_s: float = ABSENT_S


@dataclass
class PlayedMatch:
    step: str
    match_id: str
    game: str
    policy: str
    time_control: TimeControl
    bot_seat: int
    started_at: float
    ended_at: float | None
    end: MatchEnd | None
    #: GET /api/matches/{id} once it ended (None if it could not be fetched).
    record: dict[str, Any] | None
    resigned_by_checker: bool


@dataclass
class Observations:
    """Everything the session saw, for the checklist."""

    game: str
    mode: Literal["relay", "direct"]
    checker: str
    bot: str | None
    time_control: TimeControl
    relay_url: str | None
    started_at: float
    ended_at: float = 0.0
    matches: list[PlayedMatch] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    #: Steps that did not run, and why.
    not_run: dict[str, str] = field(default_factory=dict)
    #: Challenges the bot declined (direct mode), by step: the reason it gave.
    declined: dict[str, list[str]] = field(default_factory=dict)
    #: Challenges the arena refused (the bot was not connected), by step: its message.
    refused: dict[str, list[str]] = field(default_factory=dict)
    #: Why the bot never logged in through the relay (None: it did).
    no_login: str | None = None
    #: The reconnect step: the match whose connection was cut, when, on which link.
    cut_match: str | None = None
    cut_at: float | None = None
    cut_link: int | None = None
    #: Notes for the reader (a step that gave up waiting, ...).
    notes: list[str] = field(default_factory=list)

    def matches_of(self, step: str) -> list[PlayedMatch]:
        return [m for m in self.matches if m.step == step]


class Session:
    def __init__(self, config: CheckConfig, say: Callable[[str], None]) -> None:
        self.config = config
        self.say = say
        self.http: httpx.AsyncClient | None = None
        self.checker = CheckerBot(config.url, config.token, seed=config.seed)
        self.relay: Relay | None = None
        self.obs: Observations | None = None
        #: The bot was found gone between steps: the steps left are not run.
        self._gone = False
        #: Why the steps left are not run (a step could start no match).
        self._stopped = ""

    async def run(self) -> Observations:
        """Run every step; CheckSetupError when the check cannot start."""
        from ply_arena.server.cli._server_api import server_address

        config = self.config
        self.http = httpx.AsyncClient(base_url=server_address(config.url), timeout=30)
        try:
            tc = await self._time_control()
            try:
                checker = await self.checker.connect()
            except CheckerError as exc:
                raise CheckSetupError(str(exc)) from None
            if config.bot == checker:
                raise CheckSetupError(
                    f"--bot {checker} is the checker's own bot (--token): the checker needs a "
                    "token of a bot of its own (arena bots create NAME-check)"
                )
            obs = self.obs = Observations(
                game=config.game,
                mode="direct" if config.direct else "relay",
                checker=checker,
                bot=config.bot,
                time_control=tc,
                relay_url=None,
                started_at=time.monotonic(),
            )
            try:
                if await self._connect():
                    await self._steps(tc)
            except CheckerError as exc:
                raise CheckSetupError(str(exc)) from None
            finally:
                if self.relay is not None:
                    if obs.bot is not None:
                        # Time to answer the last pings (a bot that answers at all does so in
                        # milliseconds).
                        relay, bot = self.relay, obs.bot
                        await relay.wait_for(lambda: not relay.pending_pings(bot), PONG_WAIT_S)
                    await self.relay.stop()
                    obs.frames = list(self.relay.frames)
                    obs.links = list(self.relay.links.values())
                obs.ended_at = time.monotonic()
            return obs
        finally:
            await self.checker.close()
            await self.http.aclose()

    # --- setting up ----------------------------------------------------------------------------

    async def _time_control(self) -> TimeControl:
        config = self.config
        assert self.http is not None
        try:
            response = await self.http.get("/api/games")
        except httpx.HTTPError as exc:
            raise CheckSetupError(
                f"cannot reach the arena at {self.http.base_url}: {exc}; is --url right?"
            ) from None
        if response.status_code != 200:
            raise CheckSetupError(
                f"GET {self.http.base_url}/api/games answered {response.status_code}: is --url "
                "the arena's ws://HOST:PORT/ws?"
            )
        known = {g["name"]: g for g in response.json()["games"]}
        info = known.get(config.game)
        if info is None:
            raise CheckSetupError(
                f"unknown game {config.game!r}: the arena plays {', '.join(sorted(known))}"
            )
        if info["players"] != 2:
            raise CheckSetupError(
                f"{config.game} has {info['players']} players: check-bot plays two-player games "
                "(the checker can hold one seat only); check the bot on another game"
            )
        default = info["default_time_control"]
        try:
            return TimeControl(
                move_ms=config.move_ms if config.move_ms is not None else default["move_ms"],
                bank_ms=config.bank_ms if config.bank_ms is not None else default["bank_ms"],
            )
        except ValueError as exc:
            raise CheckSetupError(f"bad --move-ms / --bank-ms: {exc}") from None

    async def _connect(self) -> bool:
        """The bot is there (logged in through the relay, or said to be connected)."""
        config, obs = self.config, self.obs
        assert obs is not None
        if config.direct:
            self.say(
                f"checking {config.bot} (connected to the arena itself) as {obs.checker}; it must "
                f"accept challenges from {obs.checker}"
            )
            return True
        relay = self.relay = Relay(config.url, obs.checker)
        try:
            obs.relay_url = await relay.start(config.listen_host, config.listen_port)
        except OSError as exc:
            raise CheckSetupError(
                f"cannot listen on {config.listen_host}:{config.listen_port}: {exc}; choose "
                "another port with --listen HOST:PORT"
            ) from None
        self.say(f"waiting for your bot at {obs.relay_url}")
        self.say(
            f"  start it now with that URL instead of the arena's ({config.url}), "
            f"playing for ever (kit: games=0); the checker ({obs.checker}) challenges it "
            f"there and accepts for it (up to {config.wait_s:g} s)"
        )
        told: set[int] = set()

        def arrived() -> bool:
            for link in relay.links.values():
                if link.bot is not None and link.bot != obs.checker:
                    if config.bot is None or link.bot == config.bot:
                        return True
                    if link.number not in told:
                        told.add(link.number)
                        self.say(
                            f"  {link.bot} logged in through the relay; waiting for {config.bot}"
                        )
                if link.bot == obs.checker:
                    return True
                if _refused(relay, link) is not None:
                    return True
            return False

        if not await relay.wait_for(arrived, config.wait_s):
            obs.no_login = f"no bot logged in through {obs.relay_url} within {config.wait_s:g} s"
            return False
        for link in relay.links.values():
            if link.bot == obs.checker:
                raise CheckSetupError(
                    f"the bot at {obs.relay_url} logged in as {obs.checker}, the checker's own "
                    "bot: give the checker the token of another bot (arena bots create "
                    "NAME-check) and your bot its own"
                )
        target = next(
            (
                link
                for link in relay.links.values()
                if link.bot is not None and (config.bot is None or link.bot == config.bot)
            ),
            None,
        )
        if target is None:
            link = next(link for link in relay.links.values() if _refused(relay, link))
            obs.no_login = f"the arena refused the bot's login: {_refused(relay, link)}"
            return False
        obs.bot = target.bot
        self.say(f"{target.bot} logged in through the relay")
        await relay.ping(target.bot or "")
        return True

    # --- the steps -----------------------------------------------------------------------------

    async def _steps(self, tc: TimeControl) -> None:
        config = self.config
        cap = resign_after(MAX_BOT_MOVES)
        await self._step(STEP_PLAIN, config.game, tc, Policy.forfeit, [cap], ping_on_turn=True)
        await self._step(STEP_FORCED, config.game, FORCED_TIME_CONTROL, Policy.random_move, [cap])
        await self._step(STEP_TWO, config.game, tc, Policy.random_move, [resign_after(2), cap])
        if config.game != "backgammon":
            if config.with_backgammon:
                bg = await self._chance_time_control()
                await self._step(
                    STEP_CHANCE, "backgammon", bg, Policy.forfeit, [resign_after(CHANCE_BOT_MOVES)]
                )
            else:
                self._not_run(STEP_CHANCE, "not asked for (--with-backgammon)")
        if config.direct:
            self._not_run(
                STEP_RECONNECT,
                "direct mode: the checker can cut a connection only through its relay",
            )
        else:
            reconnect_tc = TimeControl(
                move_ms=tc.move_ms, bank_ms=max(tc.bank_ms, RECONNECT_BANK_MS)
            )
            await self._step(
                STEP_RECONNECT, config.game, reconnect_tc, Policy.random_move, [cap], cut_nth=2
            )

    async def _chance_time_control(self) -> TimeControl:
        config = self.config
        assert self.http is not None
        response = await self.http.get("/api/games")
        default = next(g for g in response.json()["games"] if g["name"] == "backgammon")
        tc = default["default_time_control"]
        return TimeControl(
            move_ms=config.move_ms if config.move_ms is not None else tc["move_ms"],
            bank_ms=config.bank_ms if config.bank_ms is not None else tc["bank_ms"],
        )

    async def _step(
        self,
        step: str,
        game: str,
        tc: TimeControl,
        policy: Policy,
        rules: list[Callable[[CheckerMatch], bool]],
        *,
        ping_on_turn: bool = False,
        cut_nth: int | None = None,
    ) -> None:
        obs, checker, relay = self.obs, self.checker, self.relay
        assert obs is not None and obs.bot is not None
        bot = obs.bot
        if self._stopped:
            self._not_run(step, self._stopped)
            return
        if not await self._present():
            self._not_run(step, f"{bot} was not connected")
            return
        count = len(rules)  # one match per rule
        self.say(
            f"step {step}: {count} {game} match{'es' if count > 1 else ''} "
            f"({tc.move_ms}+{tc.bank_ms} ms, {policy.value})"
        )
        checker.expect(rules)
        cut = relay.cut_on_turn(None, cut_nth) if (relay is not None and cut_nth) else None
        if relay is not None:
            await relay.accept_together(count)
        # Sent together: with the relay accepting them together, the matches start at once.
        outcomes = await asyncio.gather(
            *(checker.challenge(bot, game, tc, policy) for _ in range(count)),
            return_exceptions=True,
        )
        challenge_ids: list[str] = []
        for outcome in outcomes:
            if isinstance(outcome, ChallengeRefused):
                obs.refused.setdefault(step, []).append(outcome.message)
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                challenge_ids.append(outcome)
        if relay is not None and len(challenge_ids) < count:
            await relay.accept_together(len(challenge_ids))  # refused ones never come
        started: list[CheckerMatch] = []

        def answered() -> bool:
            while not checker.starts.empty():
                match = checker.starts.get_nowait()
                if not match.stray:
                    started.append(match)
            declined = sum(1 for c in challenge_ids if c in checker.declines)
            return len(started) + declined >= len(challenge_ids)

        if challenge_ids and not await checker.wait_until(answered, ANSWER_S):
            obs.notes.append(
                f"{step}: {len(challenge_ids) - len(started)} challenge(s) got no answer within "
                f"{ANSWER_S:g} s"
            )
        checker.expect([])
        for challenge_id in challenge_ids:
            declined = checker.declines.get(challenge_id)
            if declined is not None:
                obs.declined.setdefault(step, []).append(declined.reason or "it gave no reason")
        if cut is not None and relay is not None and not started:
            relay.cancel_cut(cut)
        if not started:
            reasons = obs.refused.get(step, []) + obs.declined.get(step, [])
            why = "; ".join(dict.fromkeys(reasons)) or "no answer"
            self._not_run(step, f"no match started ({why})")
            # Asking again would get the same answer: the steps left are not run.
            self._stopped = f"no match started in step {step}"
            return
        if ping_on_turn and relay is not None:
            await self._ping_on_first_turn(started[0].match_id)
        if cut is not None:
            await self._await_reconnection(cut, started[0], tc)
        await self._finish(step, game, tc, policy, started)

    async def _present(self) -> bool:
        """The bot is logged in (through the relay), or comes back within ABSENT_S."""
        obs, relay = self.obs, self.relay
        assert obs is not None and obs.bot is not None
        if relay is None:
            return True  # direct mode: a challenge says unknown_bot if it is not
        bot = obs.bot

        def present() -> bool:
            return relay.live_link(bot) is not None

        if not self._gone:
            self._gone = not await relay.wait_for(present, self.config.absent_s)
        return not self._gone

    async def _ping_on_first_turn(self, match_id: str) -> None:
        relay, obs = self.relay, self.obs
        assert relay is not None and obs is not None and obs.bot is not None

        def turn_passed() -> bool:
            return any(
                f.direction == "to_bot" and f.type == "turn" and f.match_id == match_id
                for f in relay.frames
            )

        if await relay.wait_for(turn_passed, 30):
            await relay.ping(obs.bot)

    async def _await_reconnection(self, cut: Cut, match: CheckerMatch, tc: TimeControl) -> None:
        relay, obs = self.relay, self.obs
        assert relay is not None and obs is not None
        # The cut comes with the bot's second turn; the match may end before (then no cut).
        ended_or_cut = asyncio.ensure_future(cut.done.wait())
        try:
            await asyncio.wait((ended_or_cut, match.ended), timeout=_match_guard_s(tc))
        finally:
            ended_or_cut.cancel()
        if not cut.done.is_set():
            obs.notes.append(
                f"{STEP_RECONNECT}: match {match.match_id} ended before the bot's second turn: "
                "no connection was cut"
            )
            return
        obs.cut_match, obs.cut_at, obs.cut_link = match.match_id, cut.at, cut.link
        self.say(
            f"  cut {obs.bot}'s connection as a server restart would (shutting_down, 1012) "
            "instead of passing on its turn; waiting for it to reconnect"
        )
        # Its clock runs meanwhile: when it runs out the match ends ('disconnect').
        window = (tc.move_ms + tc.bank_ms) / 1000 + 5

        def back() -> bool:
            return any(
                link.bot == obs.bot and link.number > (cut.link or 0)
                for link in relay.links.values()
            )

        returned = asyncio.ensure_future(relay.wait_for(back, window))
        try:
            await asyncio.wait((returned, match.ended), return_when=asyncio.FIRST_COMPLETED)
        finally:
            returned.cancel()
        self.say(f"  {obs.bot} logged in again" if back() else f"  {obs.bot} did not come back")

    async def _finish(
        self,
        step: str,
        game: str,
        tc: TimeControl,
        policy: Policy,
        started: list[CheckerMatch],
    ) -> None:
        obs, checker = self.obs, self.checker
        assert obs is not None
        guard = _match_guard_s(tc)
        pending = [m.ended for m in started if not m.ended.done()]
        if pending:
            _, late = await asyncio.wait(pending, timeout=guard)
            if late:
                obs.notes.append(
                    f"{step}: {len(late)} match(es) still running after {guard:g} s: the checker "
                    "resigned them"
                )
                for match in started:
                    await checker.resign(match)
                await asyncio.wait(late, timeout=10)
        for match in started:
            end = match.ended.result() if match.ended.done() else None
            record = await self._record(match.match_id)
            obs.matches.append(
                PlayedMatch(
                    step=step,
                    match_id=match.match_id,
                    game=game,
                    policy=policy.value,
                    time_control=tc,
                    bot_seat=1 - match.seat,
                    started_at=match.started_at,
                    ended_at=match.ended_at,
                    end=end,
                    record=record,
                    resigned_by_checker=match.resigned,
                )
            )
            how = f"{end.termination.value} after {end.plies} plies" if end else "no result"
            by = " (the checker resigned)" if match.resigned else ""
            self.say(f"  match {match.match_id}: {how}{by}")

    async def _record(self, match_id: str) -> dict[str, Any] | None:
        assert self.http is not None
        for _ in range(50):
            try:
                response = await self.http.get(f"/api/matches/{match_id}")
            except httpx.HTTPError:
                await asyncio.sleep(0.2)
                continue
            if response.status_code == 200:
                record: dict[str, Any] = response.json()
                if record.get("status") != "running":
                    return record
            await asyncio.sleep(0.1)
        return None

    def _not_run(self, step: str, why: str) -> None:
        assert self.obs is not None
        self.obs.not_run[step] = why
        self.say(f"step {step}: not run ({why})")


def _match_guard_s(tc: TimeControl) -> float:
    """How long a match of the check may last: every bot move may take its whole limit, plus
    the bank once, plus time to spare."""
    return (MAX_BOT_MOVES + 2) * (tc.move_ms + 300) / 1000 + tc.bank_ms / 1000 + 30


def _refused(relay: Relay, link: Link) -> str | None:
    """The fatal error with which the arena refused a link's login, if it did."""
    if link.bot is not None:
        return None
    for frame in relay.frames:
        if frame.link == link.number and frame.direction == "to_bot" and frame.type == "error":
            message = frame.message or {}
            if message.get("fatal"):
                return f"{message.get('message')} ({message.get('code')})"
    return None


async def run_check(config: CheckConfig, say: Callable[[str], None]) -> Observations:
    """Run the session (CheckSetupError when it cannot start)."""
    return await Session(config, say).run()
