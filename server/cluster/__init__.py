"""Several ``arena serve`` processes on one PostgreSQL database, as one arena (issue 22; the
user's view is docs/server.md, section 10, "Several processes on one PostgreSQL database").

- ``clock``: the database's clock; every lease is compared on it.
- ``lease``: each process registers in ``instances`` and renews a lease (``ARENA_LEASE_S``)
  every third of it; every running match names its process (``matches.owner``); the referee
  takes over the matches of a process whose lease ran out, and stores a result only while it
  owns its match.
- ``bus`` and ``bus_postgres``: messages between processes (LISTEN/NOTIFY; at most once: the
  facts stay in the database).
- ``directory``: which process each bot is connected to; its frames and moves relayed to the
  process that plays its match; logins, revocations, ratings and spectators across processes.
- ``shared_lobby``: one lobby, led by the holder of an advisory lock.
- ``hosting``: a match one process decides (a tournament's game) and another plays (the process
  of its first bot): stored as the other's first, then started there.
- ``membership``: the bus, the directory, hosting and the shared lobby started and stopped
  together (PostgreSQL only); also each house bot's count of matches on every process
  (server/referee/house_load.py).
"""
