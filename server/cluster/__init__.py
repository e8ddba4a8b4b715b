"""Several ``arena serve`` processes on one PostgreSQL database, as one arena (issue 22).

What is here now:

- ``clock``: the database's clock; every lease is compared on it.
- ``lease``: each process registers in ``instances`` and renews a lease (``ARENA_LEASE_S``,
  6 s) every third of it, and gives it up at a clean stop. Every running match names the
  process that plays it (``matches.owner``). On PostgreSQL each referee looks every sixth of a
  lease for running matches whose owner's lease ran out and takes them over
  (``SELECT ... FOR UPDATE SKIP LOCKED``: two processes looking at once split them), resuming
  each from its stored moves; a process whose own lease ran out lets its matches go. A result
  is stored only while the database still names its process as the match's owner.
- Tournaments (server/tournaments/director.py): each one being played is directed by one
  process (``tournaments.director``), claimed the same way; a director that takes over follows
  the games already started through the database instead of starting them again.

The design of the rest (docs/server.md, "Several processes"): a bus between processes
(PostgreSQL LISTEN/NOTIFY) carries the frames of a bot connected to one process for a match
hosted on another, and the prompt wake-ups (a bot logged in elsewhere, a token revoked); the
lobby is decided by one process at a time, chosen by an advisory lock; ratings and their
sequence come from the database.
"""
