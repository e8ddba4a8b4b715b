"""Which connection speaks for which bot, and the error type the referee raises to a session.

The referee never imports the WebSocket layer: a session registers itself as a ``BotConnection``
(anything with these few attributes), and the referee sends through it. One live connection per
bot: a second login with the same token replaces the first, which gets ``replaced`` and is closed.
"""

from __future__ import annotations

import enum
from typing import Protocol

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.messages import ErrorMessage, ServerMessage

#: The WebSocket handshake header with which ``arena check-bot`` opens its connections (value: a
#: :class:`CheckRole`): its checker's own, and the relay's for the bot under check.
CHECK_HEADER = "x-arena-check"


class CheckRole(enum.StrEnum):
    """What a connection of an ``arena check-bot`` session is. The matches such a session causes
    stay off the ladder: challenges from or to it are unrated, and a bot checked through the
    relay is not paired in the lobby (a join is answered but waits), so that the relay's cuts and
    its end leave no fault in a rated match. A bot that logs in as a checker is marked so (a
    class tournament does not enter it unless named)."""

    #: The checker's bot (``arena check-bot --token``).
    checker = "checker"
    #: The relay's connection for the bot under check.
    relay = "relay"


class RefereeError(Exception):
    """A request the referee refuses; the session reports it as a non-fatal ``error`` frame."""

    def __init__(self, code: ErrorCode, message: str, match_id: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.match_id = match_id

    def to_message(self, *, fatal: bool = False) -> ErrorMessage:
        return ErrorMessage(
            code=self.code, message=self.message, fatal=fatal, match_id=self.match_id
        )


class BotConnection(Protocol):
    """What the referee needs from a logged-in connection (implemented by
    ply_arena.server.ws.session)."""

    bot_id: int
    bot_name: str
    #: What the bot said it runs (``hello.client``: e.g. "my-bot/1.0 python"); shown, escaped,
    #: on its page while it is connected.
    client: str
    #: An ``arena check-bot`` connection (:class:`CheckRole`), or None.
    check_role: CheckRole | None

    def send(self, message: ServerMessage) -> None:
        """Queue a message; never blocks (a slow client must not stall a match)."""

    def send_json(self, text: str) -> None:
        """Like ``send`` for a server message already serialised (the referee's hot path)."""

    def rtt_ms(self) -> float | None:
        """The latest measured ping round trip, or None before the first pong."""

    def close_with(self, error: ErrorMessage) -> None:
        """Send a fatal error, then close the connection."""


class ConnectionRegistry:
    """bot id -> its one live connection."""

    def __init__(self) -> None:
        self._by_bot: dict[int, BotConnection] = {}

    def register(self, conn: BotConnection) -> BotConnection | None:
        """Make ``conn`` the bot's connection; returns the one it replaced, if any."""
        old = self._by_bot.get(conn.bot_id)
        self._by_bot[conn.bot_id] = conn
        return old if old is not conn else None

    def unregister(self, conn: BotConnection) -> bool:
        """Forget ``conn`` unless it was already replaced; True if it was the live one."""
        if self._by_bot.get(conn.bot_id) is conn:
            del self._by_bot[conn.bot_id]
            return True
        return False

    def get(self, bot_id: int) -> BotConnection | None:
        return self._by_bot.get(bot_id)

    def is_live(self, conn: BotConnection) -> bool:
        return self._by_bot.get(conn.bot_id) is conn

    def by_name(self, name: str) -> BotConnection | None:
        """The connected bot of that name, whatever its case (names are unique regardless)."""
        key = name.lower()
        for conn in self._by_bot.values():
            if conn.bot_name.lower() == key:
                return conn
        return None

    def send(self, bot_id: int, message: ServerMessage) -> bool:
        """Send to the bot if it is connected; False (message dropped) otherwise.

        Dropping is safe: a bot that reconnects is resynced from the match state.
        """
        conn = self._by_bot.get(bot_id)
        if conn is None:
            return False
        conn.send(message)
        return True

    def send_json(self, bot_id: int, text: str) -> bool:
        """``send`` for a message already serialised to JSON text."""
        conn = self._by_bot.get(bot_id)
        if conn is None:
            return False
        conn.send_json(text)
        return True

    def all(self) -> list[BotConnection]:
        return list(self._by_bot.values())

    def __len__(self) -> int:
        return len(self._by_bot)


def is_remote(conn: BotConnection) -> bool:
    """Whether ``conn`` stands for a bot connected to another server process
    (server/cluster/directory.py's ``RemoteConnection``)."""
    return getattr(conn, "remote", False) is True
