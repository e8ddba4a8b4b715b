"""Spectators: who watches which match, and the stream each one is sent.

- ``hub.SpectatorHub`` (one per server, ``referee.spectators``): match id -> its watchers;
  ``publish`` encodes each message once and writes it to every watcher of the match, without
  awaiting anything, so a spectator never slows a match; ``count(match_id)`` for pages.
- ``watcher.Watcher``: one spectator connection, its bounds (messages and bytes waiting for it)
  and how its stream ends: normally (1000) after ``match_end``, or dropped with a coded error.
- ``limits``: the settings that bound spectators, and the pure decision to admit one.
- ``stream``: the stream's messages as JSON text, built from pre-serialised pieces on the
  referee's hot path (byte for byte what protocol/spectator.py's models give).
- ``record``: the snapshot of a match that is over, from its stored record.

The WebSocket route is server/ws/watch.py; the match runner publishes (match_runner.py).
"""

from ply_arena.server.spectate.hub import SpectatorHub
from ply_arena.server.spectate.limits import Limits
from ply_arena.server.spectate.watcher import Watcher

__all__ = ["Limits", "SpectatorHub", "Watcher"]
