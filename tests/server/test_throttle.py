"""The registration throttle as a pure rule (server/api/throttle.py): a sliding window of
``limit`` attempts per address, the exact wait, and addresses forgotten once their window is
over (the table holds only recent callers, whatever the traffic)."""

from __future__ import annotations

from ply_arena.server.api.throttle import AddressThrottle


def test_at_most_limit_attempts_within_the_window() -> None:
    throttle = AddressThrottle(limit=3, window_s=10.0)
    assert [throttle.allow("a", t) for t in (0.0, 1.0, 2.0)] == [None, None, None]
    # The fourth within the window waits until the first attempt leaves it (at 10.0).
    assert throttle.allow("a", 4.0) == 6.0
    assert throttle.allow("a", 9.5) == 0.5
    # Refused attempts are not counted: the wait does not grow.
    assert throttle.allow("a", 9.5) == 0.5
    # Other addresses have their own window.
    assert throttle.allow("b", 4.0) is None


def test_an_attempt_leaves_the_window_exactly_window_s_later() -> None:
    throttle = AddressThrottle(limit=1, window_s=10.0)
    assert throttle.allow("a", 0.0) is None
    assert throttle.allow("a", 9.999) is not None
    assert throttle.allow("a", 10.0) is None  # the boundary belongs to the new window
    assert throttle.allow("a", 19.0) == 1.0


def test_the_window_slides_one_attempt_at_a_time() -> None:
    throttle = AddressThrottle(limit=2, window_s=10.0)
    assert throttle.allow("a", 0.0) is None
    assert throttle.allow("a", 5.0) is None
    assert throttle.allow("a", 10.0) is None  # the one at 0.0 left; the one at 5.0 stays
    assert throttle.allow("a", 12.0) == 3.0  # until 5.0 + 10.0


def test_addresses_are_forgotten_once_their_window_is_over() -> None:
    throttle = AddressThrottle(limit=2, window_s=10.0)
    for i in range(1000):
        assert throttle.allow(f"10.0.{i // 256}.{i % 256}", i * 0.001) is None
    assert len(throttle._seen) == 1000
    # Any call after the window drops every address whose last attempt is that old.
    assert throttle.allow("192.0.2.1", 11.0) is None
    assert set(throttle._seen) == {"192.0.2.1"}
    # An address still inside its window is kept.
    assert throttle.allow("192.0.2.2", 20.0) is None
    assert set(throttle._seen) == {"192.0.2.1", "192.0.2.2"}
    assert throttle.allow("192.0.2.3", 21.0) is None
    assert set(throttle._seen) == {"192.0.2.2", "192.0.2.3"}  # 192.0.2.1's last was at 11.0
