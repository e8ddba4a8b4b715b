"""Who watches which match; what the referee publishes reaches every watcher of the match."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ply_arena.protocol.errors import ErrorCode
from ply_arena.server.spectate import limits as spectator_limits
from ply_arena.server.spectate.frames import text_frames
from ply_arena.server.spectate.limits import Limits
from ply_arena.server.spectate.watcher import CLOSE_NORMAL, CLOSE_RESTART, Watcher


class SpectatorHub:
    """Every spectator connection, and match id -> the watchers subscribed to it.

    Created by the referee (``referee.spectators``). The match runner calls ``watched`` on its
    hot path (a dict lookup) and builds its messages only when it is true; ``publish`` and
    ``end`` never wait. Pages may call ``count(match_id)`` and ``total``.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._connected: set[Watcher] = set()
        self._by_match: dict[str, set[Watcher]] = {}
        # Several processes (server/cluster/directory.py): the processes that watch each match
        # played here, what sends them its messages (process, match id, texts, over), and what
        # is told when nobody here watches a match played elsewhere any more.
        self._remote: dict[str, set[str]] = {}
        self.relay: Callable[[str, str, list[str], bool], None] | None = None
        self.on_unwatched: Callable[[str], None] | None = None

    # --- for pages ---------------------------------------------------------------------------

    def count(self, match_id: str) -> int:
        """Spectators watching this match now (not those whose stream is over and whose
        connection is closing)."""
        return sum(not w.over for w in self._by_match.get(match_id, ()))

    @property
    def total(self) -> int:
        """Spectator connections on the server now (watching, or being answered)."""
        return len(self._connected)

    # --- for the WebSocket route -----------------------------------------------------------

    def refusal(self, match_id: str) -> str | None:
        """Why one more spectator may not watch ``match_id`` now (None: it may)."""
        return spectator_limits.refusal(self.limits, len(self._connected), self.count(match_id))

    def connect(self, watcher: Watcher) -> None:
        self._connected.add(watcher)

    def subscribe(self, match_id: str, watcher: Watcher) -> None:
        """From now on ``watcher`` gets what is published for ``match_id``. The caller has just
        written its snapshot, with no await in between: nothing is missed or seen twice."""
        watcher.match_id = match_id
        self._by_match.setdefault(match_id, set()).add(watcher)

    def disconnect(self, watcher: Watcher) -> None:
        """Forget a watcher whose connection is over."""
        self._connected.discard(watcher)
        if watcher.match_id is None:
            return
        watchers = self._by_match.get(watcher.match_id)
        if watchers is not None:
            watchers.discard(watcher)
            if not watchers:
                del self._by_match[watcher.match_id]
                if self.on_unwatched is not None:
                    self.on_unwatched(watcher.match_id)

    def connections(self) -> list[Watcher]:
        return list(self._connected)

    # --- for the match runner --------------------------------------------------------------

    def watched(self, match_id: str) -> bool:
        """Whether anyone watches the match (the runner builds no message otherwise)."""
        return match_id in self._by_match or match_id in self._remote

    def watch_from(self, match_id: str, instance: str) -> None:
        """Another process has spectators of this match (played here): its messages go there
        too. The caller has just sent that process the snapshot."""
        self._remote.setdefault(match_id, set()).add(instance)

    def unwatch_from(self, match_id: str, instance: str) -> None:
        watching = self._remote.get(match_id)
        if watching is not None:
            watching.discard(instance)
            if not watching:
                del self._remote[match_id]

    def publish(self, match_id: str, texts: Sequence[str]) -> None:
        """Send these messages (JSON text) to every watcher of the match, in order. Encoded
        once; written at once (a watcher that has fallen too far behind is dropped instead)."""
        if self._remote and match_id in self._remote and self.relay is not None and texts:
            for instance in self._remote[match_id]:
                self.relay(instance, match_id, list(texts), False)
        watchers = self._by_match.get(match_id)
        if not watchers or not texts:
            return
        frames = text_frames(texts)
        count = len(texts)
        # A watcher dropped here stays in the set until its connection ends (push skips it):
        # the set is not changed while it is walked.
        for watcher in watchers:
            watcher.push(frames, count)

    def end(self, match_id: str, text: str) -> None:
        """The match is over: send ``text`` (its match_end) to every watcher, then close each
        normally; the match has no watchers from now on."""
        remote = self._remote.pop(match_id, None)
        if remote and self.relay is not None:
            for instance in remote:
                self.relay(instance, match_id, [text], True)
        watchers = self._by_match.pop(match_id, None)
        if not watchers:
            return
        frames = text_frames([text])
        for watcher in watchers:
            watcher.push(frames, 1)
            watcher.finish(CLOSE_NORMAL)

    def close_all(self) -> None:
        """The server is shutting down: end every stream still open with ``shutting_down``
        (close 1012). Its matches are left running, to be resumed by the next server: a
        spectator that reconnects then gets the resumed match's snapshot."""
        for watcher in list(self._connected):
            watcher.fail(
                ErrorCode.shutting_down,
                "the server is restarting; reconnect with backoff: the match resumes where it "
                "stood",
                close_code=CLOSE_RESTART,
            )
