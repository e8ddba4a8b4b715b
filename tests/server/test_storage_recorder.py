"""The single-writer recorder: ordered, group-committed, failures isolated, drained on close."""

from __future__ import annotations

import asyncio
import statistics
import threading
import time
from typing import Any

import pytest
from sqlalchemy import Connection, text
from sqlalchemy.exc import IntegrityError

from ply_arena.server.db import recorder as recorder_module
from ply_arena.server.db.database import Database
from ply_arena.server.db.recorder import RecorderClosedError
from ply_arena.server.repositories import bots, matches


async def _new_match(database: Database, match_id: str, bot_ids: list[int]) -> None:
    await database.recorder.submit(
        matches.create_match,
        match_id=match_id,
        game="tic_tac_toe",
        bot_ids=bot_ids,
        time_control={"move_ms": 1000, "bank_ms": 0},
        policy="forfeit",
        seed=2**64 - 1,
    )


async def _two_bots(database: Database) -> list[int]:
    async with database.session() as session:
        a, _ = await bots.create_bot(session, "a")
        b, _ = await bots.create_bot(session, "b")
        return [a.id, b.id]


def _move(match_id: str, ply: int) -> dict[str, Any]:
    return {
        "match_id": match_id,
        "ply": ply,
        "seat": ply % 2,
        "move": f"m{ply}",
        "think_ms": ply,
        "info": {"depth": ply},
        "forced": None,
    }


async def test_writes_are_ordered_and_committed_in_batches(database: Database) -> None:
    ids = await _two_bots(database)
    for i in range(20):
        await _new_match(database, f"m{i}", ids)
    # Fire and forget, as the referee does for moves; ordering is the queue's.
    for ply in range(30):
        for i in range(20):
            database.recorder.submit(matches.record_move, **_move(f"m{i}", ply))
    # Finished, so that the record shows the moves' info (hidden while a match runs).
    for i in range(20):
        database.recorder.submit(
            matches.finish_match,
            match_id=f"m{i}",
            payoffs=[0.0, 0.0],
            termination="normal",
            at_fault=None,
            final_position={},
        )
    await database.recorder.flush()
    assert database.recorder.batches < database.recorder.writes / 10
    async with database.session() as session:
        for i in range(20):
            record = await matches.get_match(session, f"m{i}")
            assert record is not None
            assert [(e["ply"], e["move"], e["think_ms"], e["info"]) for e in record["moves"]] == [
                (p, f"m{p}", p, {"depth": p}) for p in range(30)
            ]
    # Chance events go through the same bulk path.
    for ply in range(3):
        database.recorder.submit(matches.record_move, **{**_move("m0", 100 + ply), "seat": None})
    await database.recorder.flush()
    async with database.session() as session:
        record = await matches.get_match(session, "m0")
        assert record is not None
        assert [(e["seat"], e["move"]) for e in record["moves"][30:]] == [
            (None, f"m{p}") for p in range(100, 103)
        ]
        # The 64-bit seed survives (it does not fit a signed BIGINT).
        assert (await session.execute(text("SELECT seed FROM matches LIMIT 1"))).scalar() == str(
            2**64 - 1
        )


async def test_a_failing_write_fails_only_its_own_future(database: Database) -> None:
    ids = await _two_bots(database)
    await _new_match(database, "ok", ids)
    good = [database.recorder.submit(matches.record_move, **_move("ok", p)) for p in range(3)]
    bad = database.recorder.submit(matches.record_move, **_move("missing-match", 0))
    dup = database.recorder.submit(matches.record_move, **_move("ok", 1))
    later = database.recorder.submit(matches.record_move, **_move("ok", 3))
    assert await asyncio.gather(*good, later) == [None] * 4
    with pytest.raises(IntegrityError):
        await bad
    with pytest.raises(IntegrityError):
        await dup
    async with database.session() as session:
        record = await matches.get_match(session, "ok")
    assert record is not None and [e["ply"] for e in record["moves"]] == [0, 1, 2, 3]


async def test_a_resolved_write_is_visible_to_another_connection(
    database: Database, db_url: str
) -> None:
    ids = await _two_bots(database)
    await _new_match(database, "seen", ids)
    await database.recorder.submit(matches.record_move, **_move("seen", 0))
    other = Database(db_url)
    try:
        async with other.session() as session:
            record = await matches.get_match(session, "seen")
    finally:
        await other.dispose()
    assert record is not None and len(record["moves"]) == 1


async def test_close_drains_the_queue_then_refuses(db_url: str) -> None:
    database = Database(db_url)
    await database.migrate()
    ids = await _two_bots(database)
    await _new_match(database, "drain", ids)
    for ply in range(50):
        database.recorder.submit(matches.record_move, **_move("drain", ply))
    await database.dispose()
    with pytest.raises(RecorderClosedError):
        database.recorder.submit(matches.record_move, **_move("drain", 50))
    again = Database(db_url)
    try:
        async with again.session() as session:
            record = await matches.get_match(session, "drain")
    finally:
        await again.dispose()
    assert record is not None and len(record["moves"]) == 50


async def test_many_matches_writing_at_once_share_their_commits(database: Database) -> None:
    # 200 matches each awaiting every move's commit (the slowest way to use the recorder): the
    # writes that queue while a commit runs go in the next one (a group commit), however fast
    # or slow the machine. (How fast this is: bench/server.py.)
    ids = await _two_bots(database)
    await asyncio.gather(*(_new_match(database, f"c{i}", ids) for i in range(200)))
    waits: list[float] = []

    async def play(match_id: str) -> None:
        for ply in range(20):
            start = time.perf_counter()
            await database.recorder.submit(matches.record_move, **_move(match_id, ply))
            waits.append(time.perf_counter() - start)

    batches = database.recorder.batches
    start = time.perf_counter()
    await asyncio.gather(*(play(f"c{i}") for i in range(200)))
    elapsed = time.perf_counter() - start
    batches = database.recorder.batches - batches
    waits.sort()
    p50, p99 = statistics.median(waits), waits[int(len(waits) * 0.99)]
    print(
        f"\n4000 awaited moves in {elapsed:.2f} s: {4000 / elapsed:.0f}/s, "
        f"commit wait p50 {p50 * 1000:.1f} ms p99 {p99 * 1000:.1f} ms, {batches} batches"
    )
    async with database.session() as session:
        assert (await session.execute(text("SELECT count(*) FROM moves"))).scalar() == 4000
    # Every match waits for its own commit before its next move, so each commit can take up to
    # 200 writes: 20 rounds of 200 in the best case. One commit per write would be 4000.
    assert 20 <= batches <= 200, batches


async def test_a_cancelled_batch_commits_nothing_and_fails_its_writes(database: Database) -> None:
    # The writer is cancelled (a shutdown that cannot wait) in the middle of a transaction:
    # every write of that batch fails with the cancellation (no caller waits forever) and none
    # of them is stored; the next write starts a new writer.
    ids = await _two_bots(database)
    await _new_match(database, "cut", ids)
    inside, release = asyncio.Event(), asyncio.Event()

    async def held(session: Any) -> None:
        inside.set()
        await release.wait()

    # One batch: the move (bulk), then the held write, queued before the writer wakes.
    move = database.recorder.submit(matches.record_move, **_move("cut", 0))
    blocking = database.recorder.submit(held)
    await inside.wait()
    task = database.recorder._task
    assert task is not None
    task.cancel()
    for future in (move, blocking):
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(future, 10)  # settled, not left pending
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    async with database.session() as session:
        assert (await session.execute(text("SELECT count(*) FROM moves"))).scalar() == 0
    await database.recorder.submit(matches.record_move, **_move("cut", 0))
    async with database.session() as session:
        assert (await session.execute(text("SELECT count(*) FROM moves"))).scalar() == 1


async def test_a_new_match_is_committed_ahead_of_the_moves_queued_with_it(
    database: Database,
) -> None:
    """A new match's row is what its bots wait for (match_start): queued behind moves and
    results of other matches, it is committed first, and a move batch that fails does not take
    it down either (its writes are retried one by one, the new match first)."""
    ids = await _two_bots(database)
    await _new_match(database, "old", ids)
    gate = asyncio.Event()

    async def held(session: Any) -> None:
        await gate.wait()

    holding = database.recorder.submit(held)
    done: list[str] = []
    moves = [database.recorder.submit(matches.record_move, **_move("old", p)) for p in range(3)]
    bad = database.recorder.submit(matches.record_move, **_move("missing-match", 0))
    new = database.recorder.submit(
        matches.create_match, match_id="new", game="tic_tac_toe", bot_ids=ids,
        time_control={"move_ms": 1000, "bank_ms": 0}, policy="forfeit", seed=5,
    )  # fmt: skip
    for name, future in [("move", m) for m in moves] + [("bad", bad), ("new", new)]:
        future.add_done_callback(lambda f, name=name: done.append(name))
    gate.set()
    await holding
    await new
    assert done == ["new"]  # committed while the moves queued before it were still waiting
    await asyncio.gather(*moves)
    with pytest.raises(IntegrityError):
        await bad
    async with database.session() as session:
        record = await matches.get_match(session, "new")
        old = await matches.get_match(session, "old")
    assert record is not None and record["status"] == "running"
    assert old is not None and [e["ply"] for e in old["moves"]] == [0, 1, 2]


@pytest.mark.parametrize("moves", [4, 200])
async def test_a_new_match_shares_a_small_batchs_commit_and_goes_alone_before_a_big_one(
    database: Database, moves: int
) -> None:
    """One commit for a new match and the few moves queued with it (each commit costs the
    server CPU whatever it holds); before a big batch, a short commit of its own, so that its
    bots do not wait for the whole batch."""
    ids = await _two_bots(database)
    await _new_match(database, "old", ids)
    inside, gate = asyncio.Event(), asyncio.Event()

    async def held(session: Any) -> None:
        inside.set()
        await gate.wait()

    holding = database.recorder.submit(held)
    await asyncio.wait_for(inside.wait(), 10)  # the writer is busy: what follows queues
    queued = [
        database.recorder.submit(matches.record_move, **_move("old", p)) for p in range(moves)
    ]
    committed: list[str] = []
    new = database.recorder.submit(
        matches.create_match, match_id="new", game="tic_tac_toe", bot_ids=ids,
        time_control={"move_ms": 1000, "bank_ms": 0}, policy="forfeit", seed=5,
    )  # fmt: skip
    new.add_done_callback(lambda _: committed.append(f"new, {sum(m.done() for m in queued)}"))
    batches = database.recorder.batches
    gate.set()
    await asyncio.wait_for(asyncio.gather(holding, new, *queued), 10)
    # The held write's own transaction, then the queued ones' one or two.
    if moves == 4:  # a few moves of other matches, as with bots that think
        assert recorder_module.AHEAD_ALONE_OVER >= 4
        assert database.recorder.batches - batches == 1 + 1
    else:  # a batch at saturation
        assert recorder_module.AHEAD_ALONE_OVER < 200
        assert database.recorder.batches - batches == 1 + 2
        assert committed == ["new, 0"]  # committed before any of the moves queued before it
    async with database.session() as session:
        old = await matches.get_match(session, "old")
    assert old is not None and [e["ply"] for e in old["moves"]] == list(range(moves))


async def test_moves_alone_wait_a_moment_for_company_and_share_a_commit(
    database: Database,
) -> None:
    ids = await _two_bots(database)
    await _new_match(database, "m", ids)
    recorder = database.recorder
    batches, writes = recorder.batches, recorder.writes
    first = recorder.submit(matches.record_move, **_move("m", 0))
    await asyncio.sleep(0)  # the writer has taken the first move and lingers
    assert not first.done()
    rest = [recorder.submit(matches.record_move, **_move("m", ply)) for ply in (1, 2)]
    await asyncio.wait_for(asyncio.gather(first, *rest), 10)
    assert (recorder.batches - batches, recorder.writes - writes) == (1, 3)


async def test_a_matchs_second_move_ends_the_lingering_so_at_most_one_of_its_moves_waits(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Moves of different matches keep waiting for company; a match's next move while its last
    one still waits ends the wait at once: a crash never loses more than one move of a match to
    the wait, however long it is."""
    monkeypatch.setattr(recorder_module, "LINGER_S", 60.0)
    ids = await _two_bots(database)
    await _new_match(database, "m", ids)
    await _new_match(database, "n", ids)
    recorder = database.recorder
    first = recorder.submit(matches.record_move, **_move("m", 0))
    other = recorder.submit(matches.record_move, **_move("n", 0))
    for _ in range(3):
        await asyncio.sleep(0)
    assert recorder._lingering and not first.done() and not other.done()
    second = recorder.submit(matches.record_move, **_move("m", 1))
    await asyncio.wait_for(asyncio.gather(first, other, second), 10)
    async with database.session() as session:
        record = await matches.get_match(session, "m")
    assert record is not None and [m["ply"] for m in record["moves"]] == [0, 1]


async def test_a_write_someone_waits_for_ends_the_lingering_at_once(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With moves lingering for a minute, a new match's row (awaited before its match_start)
    and the close of the recorder still go through at once, the moves with them."""
    monkeypatch.setattr(recorder_module, "LINGER_S", 60.0)
    ids = await _two_bots(database)
    await _new_match(database, "m", ids)
    recorder = database.recorder
    move = recorder.submit(matches.record_move, **_move("m", 0))
    await asyncio.sleep(0)
    assert not move.done()
    await asyncio.wait_for(_new_match(database, "n", ids), 10)
    await asyncio.wait_for(move, 10)  # right behind the new match (ahead), not a minute later
    last = recorder.submit(matches.record_move, **_move("m", 1))
    await asyncio.sleep(0)
    await asyncio.wait_for(recorder.close(), 10)
    assert last.done() and last.exception() is None
    async with database.session() as session:
        record = await matches.get_match(session, "m")
    assert record is not None and [m["ply"] for m in record["moves"]] == [0, 1]


@pytest.mark.sqlite_only("the writer thread runs SQLite's batches; PostgreSQL's run on the loop")
async def test_a_batch_the_writer_thread_commits_is_not_failed_by_a_cancellation(
    database: Database,
) -> None:
    # On an SQLite file a batch of bulk writes runs on the writer's thread, which takes the
    # transaction to its end whatever the event loop does: the recorder cancelled meanwhile
    # waits for it, and a write that was committed is reported as stored, not as failed.
    assert database.writer_thread is not None
    ids = await _two_bots(database)
    await _new_match(database, "thread", ids)
    entered, release = threading.Event(), threading.Event()

    async def held_move(session: Any, **move: Any) -> None:
        raise AssertionError("run as a bulk write")

    def held_moves(connection: Connection, rows: list[dict[str, Any]]) -> None:
        entered.set()
        assert release.wait(10)
        matches.record_moves(connection, rows)

    recorder_module.register_bulk(held_move, held_moves, phase=1)
    try:
        future = database.recorder.submit(held_move, **_move("thread", 0))
        assert await asyncio.to_thread(entered.wait, 10)
        task = database.recorder._task
        assert task is not None
        task.cancel()
        release.set()
        assert await asyncio.wait_for(future, 10) is None
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)
    finally:
        release.set()
        recorder_module._BULK.pop(held_move, None)
    # The next write starts a new writer; both moves are stored.
    await database.recorder.submit(matches.record_move, **_move("thread", 1))
    async with database.session() as session:
        assert (await session.execute(text("SELECT count(*) FROM moves"))).scalar() == 2
