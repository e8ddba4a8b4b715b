"""The lobby's queues as pure bookkeeping (server/referee/lobby.py): one queue per game, time
control and policy, arrival order kept, a bot at most once per queue, empty queues gone."""

from __future__ import annotations

from ply_arena.protocol.messages import Policy, TimeControl
from ply_arena.server.referee.lobby import Lobby, QueueKey, Waiting
from ply_arena.server.referee.pairing import Waiter

FAST = QueueKey.of("connect_four", TimeControl(move_ms=500, bank_ms=0), Policy.forfeit)
SLOW = QueueKey.of("connect_four", TimeControl(move_ms=2000, bank_ms=0), Policy.forfeit)
OTHELLO = QueueKey.of("othello", TimeControl(move_ms=500, bank_ms=0), Policy.forfeit)


def bot(bot_id: int, at: float = 0.0) -> Waiting:
    return Waiting(bot_id, f"bot{bot_id}", at, False)


def test_a_queue_keeps_arrival_order_and_each_bot_once() -> None:
    lobby = Lobby()
    assert [lobby.join(FAST, bot(i, at=i), 25.0) for i in (3, 1, 2)] == [1, 2, 3]
    assert lobby.join(FAST, bot(1, at=9.0), 25.0) == 3  # already waiting: keeps its place and time
    assert [(w.bot_id, w.joined_at) for w in lobby.waiting(FAST)] == [(3, 3), (1, 1), (2, 2)]
    assert lobby.is_waiting(FAST, 1) and not lobby.is_waiting(SLOW, 1)
    assert not lobby.is_waiting(FAST, 7)
    assert FAST.time_control() == TimeControl(move_ms=500, bank_ms=0)


def test_paired_bots_leave_their_queue_and_an_empty_queue_goes() -> None:
    lobby = Lobby()
    for i in (1, 2, 3):
        lobby.join(FAST, bot(i), 25.0)
    lobby.join(SLOW, bot(1), 25.0)
    lobby.remove(FAST, [1, 2])
    assert [w.bot_id for w in lobby.waiting(FAST)] == [3]
    assert lobby.is_waiting(SLOW, 1)  # only that queue
    lobby.remove(FAST, [3])
    assert lobby.queues() == [SLOW]
    lobby.remove(OTHELLO, [1])  # no such queue: nothing happens
    assert lobby.queues() == [SLOW]


def test_leaving_every_queue_or_one_games() -> None:
    lobby = Lobby()
    for key in (FAST, SLOW, OTHELLO):
        lobby.join(key, bot(1), 25.0)
    lobby.join(SLOW, bot(2), 25.0)
    assert lobby.queues_of(1) == 3 and lobby.queues_of(2) == 1 and lobby.queues_of(5) == 0
    assert lobby.leave(1, "othello") == 1
    assert lobby.queues() == [FAST, SLOW]  # the emptied othello queue is gone
    assert lobby.leave(5) == 0
    assert lobby.leave(1) == 2
    assert lobby.queues() == [SLOW] and lobby.queues_of(1) == 0
    assert [w.bot_id for w in lobby.waiting(SLOW)] == [2]
    assert lobby.leave(2, "othello") == 0 and lobby.queues_of(2) == 1


def test_the_pairing_input_follows_joins_removals_and_rating_changes() -> None:
    lobby = Lobby()
    lobby.join(FAST, bot(3, at=1.0), 20.0)
    lobby.join(FAST, Waiting(1, "house1", 2.0, True), 30.0)
    lobby.join(SLOW, bot(3, at=4.0), 20.0)
    lobby.join(OTHELLO, bot(3, at=5.0), 11.0)
    assert lobby.join(FAST, bot(3, at=9.0), 99.0) == 2  # already waiting: nothing changes
    assert list(lobby.waiters(FAST)) == [Waiter(3, 1.0, 20.0), Waiter(1, 2.0, 30.0, house=True)]
    assert lobby.names(FAST) == {3: "bot3", 1: "house1"}
    assert lobby.waiters(FAST).by_rating() == [3, 1]
    lobby.rerated(3, "connect_four", 34.5)  # both connect_four queues, not othello
    assert lobby.waiters(FAST).by_rating() == [1, 3]  # in rating order as well
    lobby.rerated(3, "connect_four", 24.5)
    assert lobby.waiters(FAST).get(3) == Waiter(3, 1.0, 24.5)
    assert list(lobby.waiters(SLOW)) == [Waiter(3, 4.0, 24.5)]
    assert list(lobby.waiters(OTHELLO)) == [Waiter(3, 5.0, 11.0)]
    lobby.rerated(7, "connect_four", 1.0)  # not waiting: nothing
    lobby.remove(FAST, [3])
    assert list(lobby.waiters(FAST)) == [Waiter(1, 2.0, 30.0, house=True)]
    assert lobby.leave(3) == 2
    assert list(lobby.waiters(SLOW)) == [] and lobby.names(SLOW) == {}
    lobby.leave(1)
    assert lobby.queues() == [] and lobby._waiters == {}
    # Leaving a queue others still wait in takes the bot out of pairing's input too.
    lobby.join(FAST, bot(5, at=6.0), 21.0)
    lobby.join(FAST, bot(6, at=7.0), 22.0)
    assert lobby.leave(5, "connect_four") == 1
    assert list(lobby.waiters(FAST)) == [Waiter(6, 7.0, 22.0)]
