"""A headless Chromium page for the page tests, with what a test checks besides the page:
dialogs that opened (an injected script would open one), console errors (a blocked script or
style under the Content-Security-Policy shows up there) and screenshots."""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Chromium's switches for a container without network: no sandbox (root), no GPU, and none of
#: the background services that would keep trying to reach Google's hosts.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


@dataclass
class Browser:
    context: Any
    screenshots: Path
    dialogs: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    _pending: set[Any] = field(default_factory=set)

    async def page(self, width: int = 1280, height: int = 900) -> Any:
        """A new tab of that size, watched for dialogs and console errors."""
        page = await self.context.new_page()
        await page.set_viewport_size({"width": width, "height": height})

        def on_dialog(dialog: Any) -> None:
            self.dialogs.append(dialog.message)
            self._pending.add(asyncio.ensure_future(dialog.dismiss()))

        def on_console(message: Any) -> None:
            if message.type == "error":
                self.console_errors.append(message.text)

        page.on("dialog", on_dialog)
        page.on("console", on_console)
        page.on("pageerror", lambda error: self.console_errors.append(str(error)))
        return page

    async def shot(self, page: Any, name: str) -> Path:
        """Save a full-page screenshot as NAME.png; its path."""
        self.screenshots.mkdir(parents=True, exist_ok=True)
        path = self.screenshots / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', name)}.png"
        await page.screenshot(path=str(path), full_page=True)
        return path


@asynccontextmanager
async def launch(screenshots: Path) -> AsyncIterator[Browser]:
    from playwright.async_api import async_playwright

    executable = shutil.which("chromium")
    assert executable is not None
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        try:
            context = await chromium.new_context()
            context.set_default_timeout(20_000)
            yield Browser(context, screenshots)
            await context.close()
        finally:
            await chromium.close()
