"""The two small asyncio primitives every connection holds instead of asyncio's own
(server/transport.py: ``ReceiveQueue`` for uvicorn's ASGI receive queue, ``Flag`` for its
``writable`` event and a session's ``finished``): the behaviour of asyncio.Queue and
asyncio.Event that uvicorn and the sessions rely on, and no waiters' list kept once nobody waits.
"""

from __future__ import annotations

import asyncio

from ply_arena.server.transport import Flag, ReceiveQueue


async def test_receive_queue_hands_items_out_in_order_and_wakes_a_waiting_getter() -> None:
    queue = ReceiveQueue()
    assert queue.empty()
    queue.put_nowait("a")
    queue.put_nowait("b")
    assert queue.qsize() == 2
    assert [await queue.get(), await queue.get()] == ["a", "b"]
    assert queue.empty()

    getter = asyncio.create_task(queue.get())
    await asyncio.sleep(0)  # the getter is parked on the empty queue
    assert not getter.done()
    queue.put_nowait("c")
    assert await asyncio.wait_for(getter, 5) == "c"
    assert queue._getters is None  # no waiters' list kept for an idle connection


async def test_receive_queue_serves_several_getters_in_the_order_they_came() -> None:
    queue = ReceiveQueue()
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.put_nowait(1)
    queue.put_nowait(2)
    assert await asyncio.wait_for(asyncio.gather(first, second), 5) == [1, 2]
    assert queue._getters is None


async def test_a_getter_cancelled_after_its_wake_up_passes_it_on() -> None:
    """As asyncio.Queue: a getter woken for an item and cancelled before it ran must not strand
    the item while another getter sleeps."""
    queue = ReceiveQueue()
    woken_then_cancelled = asyncio.create_task(queue.get())
    other = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.put_nowait("item")  # wakes the first getter ...
    woken_then_cancelled.cancel()  # ... which is cancelled before it runs
    assert await asyncio.wait_for(other, 5) == "item"
    assert woken_then_cancelled.cancelled()
    assert queue.empty() and queue._getters is None


async def test_a_cancelled_getter_leaves_the_queue_as_it_was() -> None:
    queue = ReceiveQueue()
    getter = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    getter.cancel()
    await asyncio.gather(getter, return_exceptions=True)
    assert queue._getters is None
    queue.put_nowait("later")
    assert await queue.get() == "later"


async def test_flag_waits_until_set_and_clears() -> None:
    flag = Flag()
    assert not flag.is_set()
    waiters = [asyncio.create_task(flag.wait()) for _ in range(3)]
    await asyncio.sleep(0)
    assert not any(w.done() for w in waiters)
    flag.set()
    assert await asyncio.wait_for(asyncio.gather(*waiters), 5) == [True, True, True]
    assert flag._waiters is None
    assert await flag.wait() is True  # set: returns at once

    flag.clear()
    assert not flag.is_set()
    late = asyncio.create_task(flag.wait())
    await asyncio.sleep(0)
    assert not late.done()
    late.cancel()
    await asyncio.gather(late, return_exceptions=True)
    assert flag._waiters is None
    assert Flag(True).is_set()
