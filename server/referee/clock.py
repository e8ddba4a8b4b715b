"""Chess-clock arithmetic for one seat: a per-move limit plus an overage bank (Kaggle style).

All times are milliseconds as floats inside, measured on ``time.monotonic()`` by the match runner
from sending ``turn`` to receiving ``move``. The latency grace is subtracted from the measured time
before anything is charged, so a bot on a slow network is not punished for the network.

    >>> c = SeatClock(move_ms=1000, bank_ms=500)
    >>> c.charge(1200.0, grace_ms=100.0), c.bank_ms      # 1100 effective: 100 from the bank
    (True, 400.0)
    >>> c.charge(2000.0, grace_ms=0.0), c.bank_ms        # 1000 over, only 400 left: flagged
    (False, 0.0)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class SeatClock:
    move_ms: int
    bank_ms: float

    def allowance_ms(self, grace_ms: float) -> float:
        """How long the referee waits for this seat's move: limit + bank + grace."""
        return self.move_ms + self.bank_ms + grace_ms

    def charge(self, elapsed_ms: float, grace_ms: float) -> bool:
        """Charge one move's thinking time; False when the seat has run out of time."""
        over = max(0.0, elapsed_ms - grace_ms) - self.move_ms
        if over <= 0:
            return True
        if over > self.bank_ms:
            self.bank_ms = 0.0
            return False
        self.bank_ms -= over
        return True

    def flag(self) -> None:
        """The seat timed out: under random_move it keeps playing with an empty bank."""
        self.bank_ms = 0.0


def latency_grace_ms(rtt_ms: float | None, cap_ms: int) -> float:
    """The grace for one move: the bot's measured ping round trip, capped.

    Before any round trip is measured the cap is used, so a bot is never flagged for latency the
    server has not had a chance to measure yet.
    """
    if rtt_ms is None:
        return float(cap_ms)
    return min(float(cap_ms), max(0.0, rtt_ms))
