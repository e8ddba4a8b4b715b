"""Fixtures of the page tests: a headless Chromium driven by Playwright (``browser``).

Debian's ``chromium`` found on PATH, launched headless with ``--no-sandbox`` (root in a
container) and without the background services that would try to reach the network (classroom
machines are often offline, and so is CI). When Playwright or the browser is missing the browser
tests are skipped with the reason, except where ``ARENA_REQUIRE_BROWSER=1`` (``.ci/run`` sets
it after installing the browser): there a missing browser fails them.

Screenshots go to ``test-screenshots/`` (or ``$ARENA_SCREENSHOTS``), which git ignores.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from _browser import Browser, launch

ROOT = Path(__file__).resolve().parents[2]


def _why_no_browser() -> str | None:
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install -e '.[dev]')"
    if shutil.which("chromium") is None:
        return "no chromium on PATH (Debian: apt-get install chromium)"
    return None


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    why = _why_no_browser()
    if why is not None:
        if os.environ.get("ARENA_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests must run here (ARENA_REQUIRE_BROWSER=1): {why}")
        pytest.skip(f"browser tests skipped: {why}")
    screenshots = Path(os.environ.get("ARENA_SCREENSHOTS") or ROOT / "test-screenshots")
    async with launch(screenshots) as opened:
        yield opened
