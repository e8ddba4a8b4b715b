"""The line a benchmark's report starts with: what machine, how busy when it ran."""

from __future__ import annotations

import os
import platform


def machine_line() -> str:
    """``x86_64, 2 cores, Python 3.11.7, load average 0.42 0.76 0.88``."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average {load}"
    )
