"""A sliding window per client address: at most ``limit`` attempts in ``window_s`` seconds.

A pure decision (``allow`` takes the time), so that the rule can be tested without a clock and
moved to shared storage when several server processes serve one class. Addresses are
forgotten once their window has passed, so the table holds only recent callers.
"""

from __future__ import annotations

from collections import deque


class AddressThrottle:
    def __init__(self, limit: int, window_s: float) -> None:
        self.limit = limit
        self.window_s = window_s
        self._seen: dict[str, deque[float]] = {}

    def allow(self, address: str, now: float) -> float | None:
        """None if ``address`` may go on (the attempt is counted), else the seconds to wait."""
        cutoff = now - self.window_s
        for stale in [a for a, times in self._seen.items() if times[-1] <= cutoff]:
            del self._seen[stale]
        times = self._seen.setdefault(address, deque())
        while times and times[0] <= cutoff:
            times.popleft()
        if len(times) >= self.limit:
            return times[0] + self.window_s - now
        times.append(now)
        return None
