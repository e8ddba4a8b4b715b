"""A match's result stored together with its ratings: the recorder's write for every finished
match.

``store_result`` stores the result (``server.repositories.matches.finish_match``) and, when the
match is rated and not aborted, in the **same transaction**: every seat's new rating and record
(``ratings``), one history row per seat (``rating_history``) and the result's place in the order
of rating (``results.rated_seq``). So a crash can never leave a result without its ratings, nor
ratings without their result; and ``arena ratings rebuild``, replaying the rated results in that
order, gives exactly the same numbers.

    await database.recorder.submit(store_result, match_id=..., payoffs=..., termination=...,
                                   at_fault=..., final_position=..., plies=..., book=book)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from server.db.models import utcnow
from server.db.recorder import register_bulk
from server.ratings.book import RatingBook
from server.ratings.ledger import Ledger
from server.repositories import matches as match_repo
from server.repositories import ratings as rating_repo


async def store_result(session: AsyncSession, **row: Any) -> None:
    """One result and its ratings (keyword arguments of ``finish_match`` plus ``book``)."""
    await store_results(session, [row])


async def store_results(session: AsyncSession, rows: Sequence[Mapping[str, Any]]) -> None:
    """Many results and their ratings at once, in order (the recorder's bulk write)."""
    now = utcnow()
    stamped = [{**row, "finished_at": row.get("finished_at") or now} for row in rows]
    await match_repo.finish_matches(session, stamped)
    book = next((row["book"] for row in rows if row.get("book") is not None), None)
    if book is not None:
        await rate(session, [row["match_id"] for row in stamped], book)


async def rate(session: AsyncSession, match_ids: Sequence[str], book: RatingBook) -> None:
    """Apply the rated results among ``match_ids`` (stored, in this transaction) in this order."""
    results = await rating_repo.rated_results(session, match_ids)
    ordered = [results[m] for m in match_ids if m in results]
    if not ordered:
        return
    keys = {(bot_id, r.game) for r in ordered for bot_id in r.bot_ids}
    stored = await rating_repo.load_states(session, keys)
    ledger = Ledger(book.model, stored)
    seq = await rating_repo.last_rated_seq(session)
    changes = []
    sequence = []
    for result in ordered:
        changes.extend(ledger.record(result))
        seq += 1
        sequence.append((result.match_id, seq))
    await rating_repo.save(
        session,
        [ledger.states[key] for key in keys],
        {(s.bot_id, s.game) for s in stored},
        changes,
        sequence,
    )
    # The book follows (the pairing needs it only roughly: if this transaction failed, the
    # recorder retries it and the book is set again from what is then computed).
    for bot_id, game in keys:
        state = ledger.states[(bot_id, game)]
        book.set(bot_id, game, (state.mu, state.sigma))


register_bulk(store_result, store_results, phase=2)
