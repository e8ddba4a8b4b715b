"""Where a py-spy profile's time goes, per function: ``python -m bench.profile_summary FILE``.

FILE holds collapsed stacks (``py-spy record --format raw``; ``python -m bench.server --profile
FILE`` writes one): one line per distinct stack, frames joined by ``;`` from the outermost, then
a space and the number of samples. Printed: the share of all samples spent in each function
(inclusive: anywhere on the stack; self: at the top), the idle share (the event loop waiting for
I/O) apart, and each thread's share. Frames are named ``function (file)`` without line numbers,
so a function's lines add up.

    python -m bench.profile_summary prof.txt --top 40
    python -m bench.profile_summary prof.txt --match ply_arena   # only our functions
    python -m bench.profile_summary prof.txt --thread MainThread  # the event loop's thread

A thread blocked in C shows as its last Python frame: the event loop waiting in uvloop as
``run (asyncio/runners.py)``, an aiosqlite connection thread waiting for work as
``_connection_worker_thread``, the SQLite writer's thread waiting for a batch as ``_serve
(server/db/writer_thread.py)``; all count as idle.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

#: A frame as py-spy writes it: ``name (path:line)``; the line is dropped.
_FRAME = re.compile(r"^(?P<name>.*?) \((?P<path>[^()]*?)(?::\d+)?\)$")
#: Frames of the event loop waiting for I/O: time the process is idle, not cost.
_IDLE = (
    "select (selectors.py)",
    "poll (selectors.py)",
    "run_once (uvloop",
    "uv_run",
    "run (asyncio/runners.py)",
    "_connection_worker_thread (aiosqlite/core.py)",
    "_serve (server/db/writer_thread.py)",
)


def frame_name(frame: str) -> str:
    """``func (pkg/module.py)`` for ``func (/long/path/pkg/module.py:123)``."""
    m = _FRAME.match(frame.strip())
    if m is None:
        return frame.strip()
    path = m["path"]
    for marker in ("site-packages/", "ply_arena/", "/lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{m['name']} ({path})"


def unqualified(name: str) -> str:
    """``run (asyncio/runners.py)`` for ``Runner.run (asyncio/runners.py)``: py-spy names
    methods with their class, the lists here name functions."""
    function, sep, path = name.partition(" (")
    return function.rsplit(".", 1)[-1] + sep + path


def read(path: Path) -> list[tuple[list[str], int]]:
    stacks = []
    # (py-spy writes what it reads of a string as bytes: a frame may not be UTF-8)
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            stacks.append((stack.split(";"), int(count)))
    return stacks


def summarise(
    stacks: list[tuple[list[str], int]], top: int, match: str | None, thread: str | None = None
) -> str:
    if thread is not None:
        stacks = [(f, n) for f, n in stacks if f and f[0].startswith("thread ") and thread in f[0]]
    total = sum(n for _, n in stacks)
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    idle = 0
    for frames, n in stacks:
        thread = next((f for f in frames if f.startswith("thread ")), "thread ?")
        threads[thread] += n
        names = [frame_name(f) for f in frames if not f.startswith(("process ", "thread "))]
        top_frame = unqualified(names[-1]) if names else ""
        if names and any(top_frame.startswith(i) or i in frames[-1] for i in _IDLE):
            idle += n
            continue
        for name in set(names):
            inclusive[name] += n
        if names:
            own[names[-1]] += n
    if not total:
        return "no samples"
    busy = total - idle
    lines = [
        f"{total} samples; idle (waiting for I/O) {idle / total:.1%}, busy {busy / total:.1%}",
        "",
        "threads: " + ", ".join(f"{t} {n / total:.1%}" for t, n in threads.most_common()),
        "",
        f"{'incl %':>7} {'self %':>7}  function (shares of the busy samples)",
    ]
    for name, n in inclusive.most_common():
        if match and match not in name:
            continue
        lines.append(f"{n / busy:7.1%} {own[name] / busy:7.1%}  {name}")
        top -= 1
        if top <= 0:
            break
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_summary", description=__doc__)
    parser.add_argument("file", type=Path)
    parser.add_argument("--top", type=int, default=50, help="functions listed")
    parser.add_argument("--match", help="only functions whose name or file contains this")
    parser.add_argument("--thread", help="only the threads whose name contains this")
    args = parser.parse_args(argv)
    print(summarise(read(args.file), args.top, args.match, args.thread))
    return 0


if __name__ == "__main__":
    sys.exit(main())
