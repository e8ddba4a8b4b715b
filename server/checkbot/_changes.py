"""Waiting until a condition holds, woken whenever the state it reads may have changed."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable


class Changes:
    """``touch()`` after every change; ``wait_until(ready, timeout)`` looks at ``ready()`` after
    each one (no polling, no missed wake-up: each wait holds the event of its own round)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def touch(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait_until(
        self,
        ready: Callable[[], bool],
        timeout: float,
        before: Callable[[], None] | None = None,
    ) -> bool:
        """True once ``ready()``; False when ``timeout`` seconds pass first. ``before()`` runs
        ahead of every look (it may raise, e.g. a failure seen meanwhile)."""
        deadline = time.monotonic() + timeout
        while True:
            event = self._event
            if before is not None:
                before()
            if ready():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), left)
