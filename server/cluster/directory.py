"""Which process each bot is connected to, and the relay of its frames over the bus.

A bot may connect to any process; its match may be played on another one (the process of its
opponent, or the one that took the match over when its process died). Then the process that
plays the match sees the bot as a :class:`RemoteConnection`, registered in its connection
registry like a local one: the runner sends it frames as to any bot, and they travel over the
bus to the bot's process, which writes them to the bot's socket unchanged. The bot's moves
travel back the same way. So a bot sees the same frames wherever it is connected.

Messages (JSON objects on the bus, ``t`` says which):

- on ``arena.bots``, to every process: ``in`` (a bot logged in on process ``from``: any other
  connection of it, on any process, is replaced; also each process's answer, on the asker's
  channel, to ``who``, which a process sends when it starts), ``out`` (it disconnected from
  there),
  ``revoked`` (an administrator disabled it or rotated its token), ``claimed`` (process
  ``from`` took these matches over: whoever holds a connection of their bots asks for a
  resync);
- on ``arena.to.<instance>``, to one process: ``frame`` (a message for a bot connected there),
  ``move``/``resign``/``accept``/``decline`` (a bot's message for a match or challenge held
  there), ``resync`` (a bot connected elsewhere wants its match_start again); for spectators,
  ``watch``/``unwatch`` (a process has, or no longer has, spectators of a match played here)
  and ``watch_start``/``watch_frames``/``watch_gone`` (the snapshot, then the messages of a
  match played there, or word that it is no longer played there).

The bus is at most once: a lost ``frame`` is a lost message to a bot, which a resync repairs
(any reconnection asks for one); the facts (matches, moves, results, ownership) are in the
database.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.messages import (
    AcceptChallenge,
    DeclineChallenge,
    ErrorMessage,
    MakeMove,
    Resign,
    ServerMessage,
)
from ply_arena.server.cluster.bus import Bus, Message
from ply_arena.server.ratings.ledger import RatingState
from ply_arena.server.referee.connections import (
    BotConnection,
    CheckRole,
    RefereeError,
    is_remote,
)
from ply_arena.server.spectate.frames import text_frames
from ply_arena.server.spectate.watcher import CLOSE_RESTART, Watcher

if TYPE_CHECKING:
    from ply_arena.server.referee import Referee

log = logging.getLogger(__name__)

#: How long a spectator of a match played elsewhere waits for its snapshot.
WATCH_START_S = 10.0

#: Every process listens here.
EVERYONE = "arena.bots"


def channel_of(instance_id: str) -> str:
    """The channel of one process."""
    return f"arena.to.{instance_id}"


class RemoteConnection:
    """A bot connected to another process, as this one's referee sees it (a ``BotConnection``).

    Its frames go over the bus; it cannot be closed from here (its own process closes it when
    it is replaced or revoked: every process hears of that).
    """

    remote = True

    def __init__(
        self,
        directory: Directory,
        bot_id: int,
        bot_name: str,
        instance: str,
        check_role: CheckRole | None = None,
    ) -> None:
        self._directory = directory
        self.bot_id = bot_id
        self.bot_name = bot_name
        #: The process the bot is connected to.
        self.instance = instance
        self.client = ""
        self.check_role = check_role
        #: The bot's ping round trip as its process measured it (refreshed by its messages).
        self.bot_rtt_ms: float | None = None
        #: When this process heard of it (monotonic): see ``Directory.forget_gone``.
        self.heard_at = time.monotonic()

    def send(self, message: ServerMessage) -> None:
        self._directory.relay(self, message.model_dump_json())

    def send_json(self, text: str) -> None:
        self._directory.relay(self, text)

    def rtt_ms(self) -> float | None:
        """The bot's round trip plus the bus's, both ways (its turn and its move cross the
        bus): the latency grace of a relayed bot allows for the hops."""
        if self.bot_rtt_ms is None:
            return None
        return self.bot_rtt_ms + self._directory.hop_allowance_ms

    def close_with(self, error: ErrorMessage) -> None:
        """Nothing to close here: its process closes it (it heard the same news)."""


class Directory:
    """This process's side of the bus: announces its bots, relays frames, forwards messages."""

    #: What the bus's two hops (turn out, move back) add to a relayed bot's latency grace.
    #: Measured on one machine: p99 of a hop under 2 ms (docs/benchmarks.md, bench/bus.py).
    hop_allowance_ms = 10.0

    def __init__(self, referee: Referee, bus: Bus, instance: Callable[[], str | None]) -> None:
        self.referee = referee
        self.bus = bus
        self._instance = instance
        #: match id -> the process that plays it, for the matches of bots connected here that
        #: are played elsewhere (learnt from their frames and from the database at login).
        self.hosts: dict[str, str] = {}
        #: challenge id -> the process that holds it (learnt from the challenge's frames).
        self.challenge_hosts: dict[str, str] = {}
        #: When each bot connected here logged in (wall clock: compared across processes).
        self._logged_in_at: dict[int, float] = {}
        self._unsubscribe: list[Callable[[], None]] = []
        self._listening_as: str | None = None
        # Every id this process has had (a lost lease gives it a new one): its own messages,
        # published under an older id, must not look like another process's.
        self._own: set[str] = set()
        #: Spectators here of matches played elsewhere: match id -> the process that plays it,
        #: and the spectators still waiting for its snapshot.
        self.watching: dict[str, str] = {}
        self._watch_pending: dict[str, list[Watcher]] = {}
        #: Whether this process is the only live one (the referee looks every sixth of a
        #: lease): then nobody needs to hear of its ratings.
        self.alone = False
        #: Handlers of the other kinds of message, on either channel (the shared lobby's).
        self.handlers: dict[str, Callable[[Message], None]] = {}
        #: Messages relayed out and in (tests, logs).
        self.relayed_out = 0
        self.relayed_in = 0

    @property
    def me(self) -> str:
        instance = self._instance()
        assert instance is not None, "the directory works once the referee holds its lease"
        return instance

    async def start(self) -> None:
        hub = self.referee.spectators
        hub.relay = self._relay_watch
        hub.on_unwatched = self._unwatched
        self.referee.ratings.on_confirmed = self.rated
        self._unsubscribe.append(self.bus.subscribe(EVERYONE, self._on_everyone))
        self.listen_as(self.me)
        await self.bus.listening()
        # The bots already connected to the others: each process tells this one of its own.
        self.publish_all({"t": "who"})

    def listen_as(self, instance: str) -> None:
        """Listen on ``instance``'s channel (again after a lost lease: a new id)."""
        if self._listening_as == instance:
            return
        self._listening_as = instance
        self._own.add(instance)
        self._unsubscribe.append(self.bus.subscribe(channel_of(instance), self._on_mine))

    def stop(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()

    # --- what this process tells the others ------------------------------------------------

    def logged_in(self, conn: BotConnection, stored: list[tuple[str, str | None]]) -> None:
        """A bot logged in here: every other connection of it goes; the processes that play its
        running matches (``stored``: match id, owner) resync it."""
        at = time.time()
        self._logged_in_at[conn.bot_id] = at
        self.publish_all(_login(conn, at))
        for match_id, owner in stored:
            if owner is not None and owner != self.me and match_id not in self.referee.matches:
                self.hosts[match_id] = owner
                self.publish_to(owner, self._resync_request(conn))

    def gap(self) -> None:
        """The bus lost messages (its connection dropped): announce this process's bots again,
        so that the others know where they are."""
        for message in self._own_logins():
            self.publish_all(message)

    def _own_logins(self) -> list[Message]:
        """The ``in`` message of each bot connected here, with the time it logged in (so that
        it replaces no newer login elsewhere)."""
        return [
            _login(conn, self._logged_in_at.get(conn.bot_id, 0.0))
            for conn in self.referee.connections.all()
            if not is_remote(conn) and not self.referee.is_house(conn.bot_id)
        ]

    def forget_gone(self, live: set[str], since: float) -> list[int]:
        """The bots connected to processes that are not ``live`` (their lease ran out: killed,
        cut off) are not connected any more: a challenge to one is refused, a tournament counts
        it absent, a match taken over waits for it to come back. Only those heard of before
        ``since`` (monotonic; when ``live`` was read): a process that has just started may be
        missing from it. The ids dropped."""
        gone = [
            conn
            for conn in self.referee.connections.all()
            if isinstance(conn, RemoteConnection)
            and conn.instance not in live
            and conn.instance not in self._own
            and conn.heard_at < since
        ]
        for conn in gone:
            self.referee.disconnected(conn)
        if gone:
            log.info(
                "bot(s) %s of server process(es) %s, which are gone, no longer count as connected",
                ", ".join(sorted(c.bot_name for c in gone)),
                ", ".join(sorted({c.instance for c in gone})),
            )
        return [c.bot_id for c in gone]

    def logged_out(self, conn: BotConnection) -> None:
        self._logged_in_at.pop(conn.bot_id, None)
        self.publish_all({"t": "out", "bot": conn.bot_id})

    def revoked(self, name: str, code: ErrorCode) -> None:
        self.publish_all({"t": "revoked", "name": name, "code": code.value})

    def claimed(self, bot_ids: list[int]) -> None:
        """This process took over matches of these bots: those connected elsewhere resync."""
        self.publish_all({"t": "claimed", "bots": bot_ids})

    def rated(self, states: list[RatingState]) -> None:
        """Ratings this process stored: the others' lobbies pair by them too."""
        if not self.alone:
            self.publish_all(
                {"t": "rated", "states": [[s.bot_id, s.game, s.mu, s.sigma] for s in states]}
            )

    def relay(self, conn: RemoteConnection, text: str) -> None:
        """A frame for a bot connected to another process."""
        self.relayed_out += 1
        self.publish_to(conn.instance, {"t": "frame", "bot": conn.bot_id, "text": text})

    def forward(self, conn: BotConnection, message: MakeMove | Resign) -> bool:
        """A bot's move or resign for a match played elsewhere: sent there; False when no
        process is known to play it."""
        host = self.hosts.get(message.match_id)
        if host is None or host == self.me:
            return False
        kind = "move" if isinstance(message, MakeMove) else "resign"
        self.publish_to(host, self._from_bot(conn, kind, message.model_dump_json()))
        return True

    def forward_answer(
        self, conn: BotConnection, message: AcceptChallenge | DeclineChallenge
    ) -> bool:
        """An answer to a challenge held by another process: sent there."""
        host = self.challenge_hosts.pop(message.challenge_id, None)
        if host is None or host == self.me:
            return False
        kind = "accept" if isinstance(message, AcceptChallenge) else "decline"
        self.publish_to(host, self._from_bot(conn, kind, message.model_dump_json()))
        return True

    # --- spectators of a match played elsewhere -----------------------------------------------

    def watch(self, match_id: str, host: str, watcher: Watcher) -> None:
        """A spectator here of a match played on ``host``: it gets the snapshot from there, then
        every message, as a spectator there would."""
        first = match_id not in self._watch_pending
        self._watch_pending.setdefault(match_id, []).append(watcher)
        self.watching[match_id] = host
        if first:
            self.publish_to(host, {"t": "watch", "match": match_id})
        # A lost request (the bus is at most once) must not leave the spectator waiting.
        asyncio.get_running_loop().call_later(WATCH_START_S, self._watch_late, match_id, watcher)

    def _watch_late(self, match_id: str, watcher: Watcher) -> None:
        pending = self._watch_pending.get(match_id)
        if pending is not None and watcher in pending:
            pending.remove(watcher)
            if not pending:
                del self._watch_pending[match_id]
            watcher.fail(
                ErrorCode.unknown_match,
                "the server process that plays this match did not answer; watch again",
                close_code=CLOSE_RESTART,
            )

    def _unwatched(self, match_id: str) -> None:
        host = self.watching.pop(match_id, None)
        if host is not None and match_id not in self._watch_pending:
            self.publish_to(host, {"t": "unwatch", "match": match_id})

    def _relay_watch(self, instance: str, match_id: str, texts: list[str], over: bool) -> None:
        self.publish_to(
            instance, {"t": "watch_frames", "match": match_id, "texts": texts, "over": over}
        )

    def _on_watch(self, message: Message) -> None:
        match_id = str(message["match"])
        sender = str(message["from"])
        runner = self.referee.running_match(match_id)
        if runner is None or runner.result is not None:
            self.publish_to(sender, {"t": "watch_gone", "match": match_id})
            return
        # No await between the two: every event is in the snapshot or relayed after it.
        self.referee.spectators.watch_from(match_id, sender)
        self.publish_to(
            sender, {"t": "watch_start", "match": match_id, "text": runner.snapshot_json()}
        )

    def _on_watch_start(self, message: Message) -> None:
        match_id = str(message["match"])
        hub = self.referee.spectators
        for watcher in self._watch_pending.pop(match_id, []):
            if watcher.over:
                continue
            watcher.start(text_frames([str(message["text"])]))
            hub.subscribe(match_id, watcher)
        if not hub.count(match_id):
            self._unwatched(match_id)  # they all left meanwhile

    def _on_watch_frames(self, message: Message) -> None:
        match_id = str(message["match"])
        texts = [str(t) for t in message["texts"]]
        hub = self.referee.spectators
        if message.get("over"):
            self.watching.pop(match_id, None)
            hub.end(match_id, texts[-1])
        else:
            hub.publish(match_id, texts)

    def _on_watch_gone(self, message: Message) -> None:
        match_id = str(message["match"])
        self.watching.pop(match_id, None)
        for watcher in self._watch_pending.pop(match_id, []):
            watcher.fail(
                ErrorCode.unknown_match,
                "that match is no longer played; its record is at /api/matches/" + match_id,
                close_code=CLOSE_RESTART,
            )

    def _from_bot(self, conn: BotConnection, kind: str, text: str) -> Message:
        return {
            "t": kind,
            "bot": conn.bot_id,
            "name": conn.bot_name,
            "rtt": conn.rtt_ms(),
            "text": text,
            "from": self.me,
        }

    def _resync_request(self, conn: BotConnection) -> Message:
        return {
            "t": "resync",
            "bot": conn.bot_id,
            "name": conn.bot_name,
            "rtt": conn.rtt_ms(),
            "from": self.me,
        }

    def publish_all(self, message: Message) -> None:
        message["from"] = self.me
        self._send(EVERYONE, message)

    def publish_to(self, instance: str, message: Message) -> None:
        message.setdefault("from", self.me)
        self._send(channel_of(instance), message)

    def _send(self, channel: str, message: Message) -> None:
        try:
            self.bus.publish(channel, message)
        except Exception:  # a closed bus at shutdown: the message is lost, as on any gap
            log.debug("bus message to %s dropped", channel, exc_info=True)

    # --- what the others tell this process ----------------------------------------------------

    def _on_everyone(self, message: Message) -> None:
        sender = message.get("from")
        if sender == self.me or sender in self._own:
            return
        kind = message.get("t")
        referee = self.referee
        if kind == "in":
            bot_id = int(message["bot"])
            local = referee.connections.get(bot_id)
            if local is not None and not is_remote(local):
                if self._logged_in_at.get(bot_id, 0.0) >= float(message["at"]):
                    return  # this login is the newer one: the other process closes its own
                referee.replaced_elsewhere(local)
                self._logged_in_at.pop(bot_id, None)
            check = message.get("check")
            referee.connections.register(
                RemoteConnection(
                    self,
                    bot_id,
                    str(message["name"]),
                    str(sender),
                    None if check is None else CheckRole(check),
                )
            )
        elif kind == "out":
            conn = referee.connections.get(int(message["bot"]))
            if conn is not None and isinstance(conn, RemoteConnection) and conn.instance == sender:
                referee.disconnected(conn)
        elif kind == "revoked":
            referee.revoke_here(str(message["name"]), ErrorCode(message["code"]))
        elif kind == "rated":
            for bot_id, game, mu, sigma in message["states"]:
                referee.ratings.set(int(bot_id), str(game), (float(mu), float(sigma)))
        elif kind == "who":
            # A process has just started: it hears of the bots connected here.
            for login in self._own_logins():
                self.publish_to(str(sender), login)
        elif kind == "claimed":
            for bot_id in message["bots"]:
                conn = referee.connections.get(int(bot_id))
                if conn is not None and not is_remote(conn):
                    self.publish_to(str(sender), self._resync_request(conn))
        else:
            self._other(message)

    def _other(self, message: Message) -> None:
        handler = self.handlers.get(str(message.get("t")))
        if handler is not None:
            handler(message)

    def _on_mine(self, message: Message) -> None:
        kind = message.get("t")
        referee = self.referee
        if kind == "frame":
            self.relayed_in += 1
            conn = referee.connections.get(int(message["bot"]))
            if conn is not None and not is_remote(conn):
                text = str(message["text"])
                self._learn_host(text, str(message["from"]))
                conn.send_json(text)
            return
        watching = {
            "watch": self._on_watch,
            "unwatch": lambda m: self.referee.spectators.unwatch_from(
                str(m["match"]), str(m["from"])
            ),
            "watch_start": self._on_watch_start,
            "watch_frames": self._on_watch_frames,
            "watch_gone": self._on_watch_gone,
        }.get(str(kind))
        if watching is not None:
            watching(message)
            return
        if kind == "in":
            self._on_everyone(message)  # an answer to this process's ``who``
            return
        if kind not in ("resync", "move", "resign", "accept", "decline"):
            self._other(message)
            return
        remote = self._remote(message)
        if kind == "resync":
            referee.resync(remote)
            return
        try:
            if kind == "move":
                referee.move(
                    remote, MakeMove.model_validate_json(message["text"]), time.monotonic()
                )
            elif kind == "resign":
                referee.resign(remote, Resign.model_validate_json(message["text"]))
            elif kind == "accept":
                referee.accept(remote, AcceptChallenge.model_validate_json(message["text"]))
            elif kind == "decline":
                referee.decline(remote, DeclineChallenge.model_validate_json(message["text"]))
        except RefereeError as e:
            remote.send(e.to_message())

    def _remote(self, message: Message) -> RemoteConnection:
        """The bot a message came from, registered as connected to its process (a message may
        come before the ``in`` that announced it, on another channel)."""
        bot_id = int(message["bot"])
        sender = str(message["from"])
        conn = self.referee.connections.get(bot_id)
        if not isinstance(conn, RemoteConnection) or conn.instance != sender:
            if conn is not None and not is_remote(conn):
                # The bot is connected here too: the newer login wins everywhere; until the
                # news arrives, answer the one that asked.
                return RemoteConnection(self, bot_id, str(message["name"]), sender)
            conn = RemoteConnection(self, bot_id, str(message["name"]), sender)
            self.referee.connections.register(conn)
        rtt = message.get("rtt")
        if rtt is not None:
            conn.bot_rtt_ms = float(rtt)
        return conn

    def _learn_host(self, text: str, host: str) -> None:
        """Which process plays a match, or holds a challenge, from a frame it sent (cheap
        look at the frame's start: the type comes first in every server message)."""
        head = text[:40]
        if '"type":"challenge"' in head or '"type":"challenge_received"' in head:
            challenge_id = _field(text, "challenge_id")
            if challenge_id is not None:
                self.challenge_hosts[challenge_id] = host
            return
        match_id = _field(text, "match_id")
        if match_id is None:
            return
        if '"type":"match_end"' in head:
            self.hosts.pop(match_id, None)
        else:
            self.hosts[match_id] = host


def _field(text: str, name: str) -> str | None:
    """A string field of a JSON object, read without parsing the whole frame (a turn carries
    the position and the legal moves)."""
    key = f'"{name}":"'
    start = text.find(key)
    if start < 0:
        return None
    start += len(key)
    end = text.find('"', start)
    return None if end < 0 else text[start:end]


def _login(conn: BotConnection, at: float) -> Message:
    """The ``in`` message of a bot logged in here at ``at`` (wall clock)."""
    check = None if conn.check_role is None else str(conn.check_role)
    return {"t": "in", "bot": conn.bot_id, "name": conn.bot_name, "check": check, "at": at}
