"""Bots' tasks played to their end: their results once every one has ended, within a time limit;
whatever happens (a failure, the limit), the tasks are cancelled and awaited on the way out, so
that no bot outlives its test."""

from __future__ import annotations

import asyncio
from typing import Any


async def to_the_end(tasks: list[asyncio.Task[Any]], timeout_s: float = 90) -> list[Any]:
    try:
        async with asyncio.timeout(timeout_s):
            return await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
