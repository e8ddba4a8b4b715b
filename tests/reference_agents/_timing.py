"""Time a search the way a time-limit test should: by the CPU time of the thread that ran it.

An agent that ignores its limit burns the CPU well past it; on a busy two-core machine the wall
clock also counts the time other processes held the CPU, which no agent controls. So the limit
is checked against the thread's CPU time (never more than the wall time the agent itself
watches), with the wall clock bounded only loosely, against a search that waits instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: What the wall clock may exceed the limit by on a loaded machine before a test fails.
WALL_SLACK_S = 2.0


def within_limit(search: Callable[[], T], limit_s: float) -> T:
    """Run ``search``; fail when it used more CPU time than ``limit_s`` (or far more wall time)."""
    wall, cpu = time.monotonic(), time.thread_time()
    result = search()
    cpu_used, wall_used = time.thread_time() - cpu, time.monotonic() - wall
    assert cpu_used < limit_s, f"the search used {cpu_used:.3f} s of CPU (limit {limit_s} s)"
    assert wall_used < limit_s + WALL_SLACK_S, f"the search took {wall_used:.3f} s"
    return result
