"""A match's result stored together with its ratings: the recorder's write for every finished
match.

``store_result`` stores the result (``ply_arena.server.repositories.matches.finish_match``) and,
when the match is rated and not aborted, in the **same transaction**: every seat's new rating and
record (``ratings``), one history row per seat (``rating_history``) and the result's place in the
order of rating (``results.rated_seq``). So a crash can never leave a result without its ratings,
nor ratings without their result; and ``arena ratings rebuild``, replaying the rated results in that
order, gives exactly the same numbers.

On PostgreSQL, where several server processes store results in one database (server/cluster),
the database is the source of truth: each transaction that stores rated results first takes
the ratings lock (``ratings_lock``: a transaction-level advisory lock, so rated results are
stored one transaction at a time across processes), then numbers them after the highest
stored ``rated_seq`` and starts from the stored ratings, not from its own process's book, which
does not see the other processes' results. On SQLite one process writes: the book is exact.

    await database.recorder.submit(store_result, match_id=..., payoffs=..., termination=...,
                                   at_fault=..., final_position=..., plies=...,
                                   game=..., bot_ids=[...], rated=True, book=book)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, text
from sqlalchemy.ext.asyncio import AsyncSession

from ply_arena.server.db.commit_hooks import after_commit
from ply_arena.server.db.models import utcnow
from ply_arena.server.db.recorder import register_bulk, run_bulk
from ply_arena.server.ratings.book import LAST_RATED_SEQ, RatingBook
from ply_arena.server.ratings.ledger import Ledger, RatedResult
from ply_arena.server.repositories import matches as match_repo
from ply_arena.server.repositories import ratings as rating_repo


async def store_result(session: AsyncSession, **row: Any) -> None:
    """One result and its ratings: the keyword arguments of ``finish_match`` plus what rating
    needs to know of the match, ``game``, ``bot_ids`` (by seat) and ``rated``, and ``book``."""
    await run_bulk(session, store_results, [row])


def store_results(connection: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Many results and their ratings at once, in order (the recorder's bulk write)."""
    now = utcnow()
    book: RatingBook | None = next((r["book"] for r in rows if r.get("book") is not None), None)
    shared = _shared(connection)
    last_seq: int | None = None
    stamped = []
    rated = []
    for row in rows:
        row = {**row, "finished_at": row.get("finished_at") or now}
        if book is not None and row["rated"] and row["termination"] != match_repo.ABORTED:
            if not shared:
                row["rated_seq"] = book.next_rated_seq(connection)
            else:
                if last_seq is None:
                    ratings_lock(connection)
                    last_seq = int(connection.scalar(LAST_RATED_SEQ) or 0)
                last_seq += 1
                row["rated_seq"] = last_seq
            rated.append(
                RatedResult(
                    row["match_id"],
                    row["game"],
                    tuple(row["bot_ids"]),
                    tuple(float(p) for p in row["payoffs"]),
                    row["termination"],
                    row["at_fault"],
                    row["finished_at"],
                )
            )
        stamped.append(row)
    match_repo.finish_matches(connection, stamped)
    if rated:
        assert book is not None
        rate(connection, rated, book)


def rate(connection: Connection, results: Sequence[RatedResult], book: RatingBook) -> None:
    """Apply rated ``results`` (stored in this transaction, with their order) in this order."""
    keys = {(bot_id, r.game) for r in results for bot_id in r.bot_ids}
    if _shared(connection):
        # Other processes rate too: what is stored (under the ratings lock) is the truth.
        known = {(s.bot_id, s.game): s for s in rating_repo.load_states(connection, keys)}
    else:
        # Start from the book (exactly what is stored); what it lacks is new, unless the book
        # was never loaded from the database (tests, tools): then read it.
        known = book.states(keys)
        if not book.complete and len(known) < len(keys):
            missing = keys - set(known)
            loaded = rating_repo.load_states(connection, missing)
            known.update({(s.bot_id, s.game): s for s in loaded})
    stored = set(known)
    ledger = Ledger(book.model, list(known.values()), _anchors(connection, book, results))
    changes = [change for result in results for change in ledger.record(result)]
    states = [ledger.states[key] for key in keys]
    rating_repo.save(connection, states, stored, changes)
    # Once committed (and only then), the book holds these too.
    after_commit(connection, lambda: book.confirm(states))


def _anchors(
    connection: Connection, book: RatingBook, results: Sequence[RatedResult]
) -> dict[tuple[int, str], float]:
    """The pins of the anchors among these results' bots (the same a rebuild finds, by name).
    Each bot's name is read once, the first time it is rated here (a house bot may be made
    after the book was loaded): a rated result then costs no query for them. Only the database
    writer's thread calls this."""
    anchors = book.model.anchors
    if not anchors:
        return {}
    unknown = {b for r in results for b in r.bot_ids} - book.anchor_checked
    if unknown:
        for bot_id, name_key in rating_repo.name_keys(connection, unknown).items():
            for anchor in anchors:
                if anchor.bot.lower() == name_key:
                    book.anchor_pins[bot_id, anchor.game] = anchor.rating
        book.anchor_checked.update(unknown)
    return book.anchor_pins


register_bulk(store_result, store_results, phase=2)


#: The advisory lock key of the ratings (PostgreSQL): any 64-bit number no other lock uses.
RATINGS_LOCK_KEY = 0x706C7972_61746E67  # "plyr" "atng"


def _shared(connection: Connection) -> bool:
    """Whether other processes may store results in this database too (PostgreSQL)."""
    return connection.dialect.name == "postgresql"


def ratings_lock(connection: Connection) -> None:
    """Hold the ratings lock until this transaction ends (PostgreSQL; nothing on SQLite, where
    one process writes)."""
    if _shared(connection):
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": RATINGS_LOCK_KEY})
