"""Work that waits for a commit: ``after_commit(holder, callback)``.

A write that keeps an in-memory copy of what it stores (the rating book) must update the copy
only once the transaction has committed, and never after a rollback. The write registers the
update on whatever it writes through (an ``AsyncSession``, a ``Session`` or a ``Connection``, all
of which carry an ``info`` dict); whoever commits (``Database.session``, the recorder) takes the
callbacks with ``take_callbacks`` and runs them on the event loop right after the commit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

AFTER_COMMIT = "ply_arena.after_commit"


class _HasInfo(Protocol):
    @property
    def info(self) -> dict[Any, Any]: ...


def after_commit(holder: _HasInfo, callback: Callable[[], None]) -> None:
    """Run ``callback()`` once the transaction ``holder`` writes in has committed."""
    holder.info.setdefault(AFTER_COMMIT, []).append(callback)


def take_callbacks(holder: _HasInfo) -> list[Callable[[], None]]:
    """The callbacks registered on ``holder`` so far, removed from it (run them after the
    commit; drop them after a rollback)."""
    callbacks: list[Callable[[], None]] = holder.info.pop(AFTER_COMMIT, [])
    return callbacks
