"""The clock's arithmetic at its edges (server/referee/clock.py): what is charged to the bank,
the exact moment a seat runs out, and the latency grace (the round trip, never below zero, at
most the cap). The match runner applies it over real sockets in test_match_runner.py."""

from __future__ import annotations

import pytest

from ply_arena.server.referee.clock import SeatClock, latency_grace_ms


def test_within_the_move_limit_nothing_is_charged() -> None:
    clock = SeatClock(move_ms=100, bank_ms=50)
    assert clock.charge(100.0, grace_ms=0.0) and clock.bank_ms == 50  # exactly the limit
    assert clock.charge(130.0, grace_ms=30.0) and clock.bank_ms == 50  # the grace first


def test_a_fraction_of_a_millisecond_over_comes_from_the_bank() -> None:
    clock = SeatClock(move_ms=100, bank_ms=50)
    assert clock.charge(100.5, grace_ms=0.0)
    assert clock.bank_ms == pytest.approx(49.5)


def test_spending_the_whole_bank_exactly_is_still_in_time() -> None:
    clock = SeatClock(move_ms=100, bank_ms=50)
    assert clock.charge(150.0, grace_ms=0.0) and clock.bank_ms == 0.0
    # The next move has only its limit: a millisecond more is out of time.
    assert clock.charge(100.001, grace_ms=0.0) is False and clock.bank_ms == 0.0


def test_running_out_empties_the_bank() -> None:
    clock = SeatClock(move_ms=100, bank_ms=50)
    assert clock.charge(150.5, grace_ms=0.0) is False
    assert clock.bank_ms == 0.0
    clock = SeatClock(move_ms=100, bank_ms=50)
    clock.flag()
    assert clock.bank_ms == 0.0


def test_the_allowance_is_limit_bank_and_grace() -> None:
    assert SeatClock(move_ms=100, bank_ms=50).allowance_ms(20.0) == 170.0


def test_the_latency_grace_is_the_measured_round_trip_capped() -> None:
    assert latency_grace_ms(0.4, 200) == 0.4  # a fast network: less than a millisecond
    assert latency_grace_ms(0.0, 200) == 0.0
    assert latency_grace_ms(-3.0, 200) == 0.0  # a clock that went backwards gives nothing
    assert latency_grace_ms(200.0, 200) == 200.0
    assert latency_grace_ms(250.0, 200) == 200.0
    assert latency_grace_ms(None, 150) == 150.0  # not measured yet: the cap
