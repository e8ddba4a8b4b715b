"""The pending challenges as pure bookkeeping (server/referee/challenges.py): who may answer
one, who sent how many, which involve a bot (dropped when it disconnects). The protocol around
them runs over WebSockets in test_ws_session.py and tests/protocol/test_kit_challenges.py."""

from __future__ import annotations

from ply_arena.protocol.messages import Policy, TimeControl
from ply_arena.server.referee.challenges import Challenges, Party

ANN, BOB, CY, DEE = Party(1, "ann"), Party(2, "bob"), Party(3, "cy"), Party(4, "dee")
TC = TimeControl(move_ms=1000, bank_ms=0)


def test_only_an_opponent_may_answer_a_challenge() -> None:
    pending = Challenges()
    made = pending.create(ANN, "chinese_checkers", [BOB, CY], TC, Policy.forfeit)
    assert pending.for_opponent(made.challenge_id, BOB.bot_id) is made
    assert pending.for_opponent(made.challenge_id, CY.bot_id) is made
    assert pending.for_opponent(made.challenge_id, ANN.bot_id) is None  # the challenger
    assert pending.for_opponent(made.challenge_id, DEE.bot_id) is None  # a stranger
    assert pending.for_opponent("no-such-id", BOB.bot_id) is None
    made.accepted.add(BOB.bot_id)
    assert not made.complete()
    made.accepted.add(CY.bot_id)
    assert made.complete()


def test_challenges_are_counted_per_challenger_and_found_per_party() -> None:
    pending = Challenges()
    first = pending.create(ANN, "connect_four", [BOB], TC, Policy.forfeit)
    second = pending.create(ANN, "othello", [CY], TC, Policy.random_move)
    third = pending.create(BOB, "tic_tac_toe", [CY], TC, Policy.forfeit)
    assert len({first.challenge_id, second.challenge_id, third.challenge_id}) == 3
    assert len(pending) == 3
    assert [pending.sent_by(p.bot_id) for p in (ANN, BOB, CY, DEE)] == [2, 1, 0, 0]
    assert pending.involving(ANN.bot_id) == [first, second]
    assert pending.involving(BOB.bot_id) == [first, third]
    assert pending.involving(CY.bot_id) == [second, third]
    assert pending.involving(DEE.bot_id) == []
    pending.remove(first.challenge_id)
    pending.remove("no-such-id")  # nothing to remove: no error
    assert len(pending) == 2 and pending.sent_by(ANN.bot_id) == 1
    assert pending.for_opponent(first.challenge_id, BOB.bot_id) is None
    assert pending.involving(BOB.bot_id) == [third]
