"""Searches run with Python's cyclic garbage collector paused.

A search allocates tens of thousands of objects a second (states, nodes, lists), and the cyclic
collector answers by walking everything alive every so often: on a busy machine a full
collection takes tens of milliseconds, enough to carry a search past its deadline. Nothing in a
search needs it (reference counting frees what the search drops), so it is off while an agent
thinks and back on afterwards, when whatever cyclic garbage the move left is collected outside
the agent's time.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
