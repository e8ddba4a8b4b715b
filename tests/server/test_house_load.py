"""How a process counts a house bot's matches on every process (server/referee/house_load.py):
each match once, whichever ways it is known; a match decided elsewhere counted until the
database shows it, or for a lease; a match known to have ended not counted again from an older
read."""

from __future__ import annotations

from ply_arena.server.referee.house_load import HouseLoad

HOUSE = 7


def test_a_match_known_several_ways_counts_once() -> None:
    load = HouseLoad(memory_s=6.0)
    load.started_here("m1", [HOUSE])
    load.started_elsewhere("m2", [HOUSE, 9], now=0.0)
    assert load.count(HOUSE, now=0.1) == 2
    load.read({HOUSE: {"m1", "m2", "m3"}}, now=0.5)  # m3: another process's
    assert load.count(HOUSE, now=0.5) == 3
    # The read named HOUSE only: 9 (another house bot of m2) still counts m2, as decided.
    assert load.count(9, now=0.5) == 1
    load.read({9: {"m2"}}, now=0.6)
    assert load.count(9, now=0.6) == 1
    assert load.count(11, now=0.6) == 0


def test_an_ended_match_is_not_counted_from_an_older_read() -> None:
    load = HouseLoad(memory_s=6.0)
    load.started_here("m1", [HOUSE])
    load.read({HOUSE: {"m1", "m2"}}, now=1.0)
    load.ended("m1", [HOUSE], now=1.2)
    assert load.count(HOUSE, now=1.3) == 1
    load.read({HOUSE: {"m1", "m2"}}, now=1.4)  # read before m1's result was stored
    assert load.count(HOUSE, now=1.5) == 1
    load.ended("m2", [HOUSE], now=1.6)  # the leader heard of its end
    assert load.count(HOUSE, now=1.7) == 0


def test_a_match_decided_elsewhere_is_forgotten_after_a_lease_without_the_database_s_word() -> None:
    load = HouseLoad(memory_s=6.0)
    load.started_elsewhere("m1", [HOUSE], now=10.0)
    load.read({HOUSE: set()}, now=11.0)  # not stored yet: still counted
    assert load.count(HOUSE, now=11.0) == 1
    assert load.count(HOUSE, now=16.5) == 0  # never stored (its host died first)


def test_a_read_replaces_what_was_read_before() -> None:
    load = HouseLoad(memory_s=6.0)
    load.read({HOUSE: {"m1", "m2"}}, now=1.0)
    assert load.count(HOUSE, now=1.0) == 2
    load.read({HOUSE: {"m2"}}, now=2.0)  # m1 ended on another process
    assert load.count(HOUSE, now=2.0) == 1
