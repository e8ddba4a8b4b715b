"""Run the whole test suite again and again, alone and beside a second copy, and report flakes.

    python scripts/stress_suite.py                     # 10 runs in a row, then 5 beside a copy
    python scripts/stress_suite.py --alone 3 --beside 0
    python scripts/stress_suite.py --alone 0 --beside 2 -- tests/server   # pytest arguments

"Alone": the README's test command (``python -m pytest``), N times in a row. "Beside": the same
N times in a row while a second copy of the suite (a copy of this working tree, in a temporary
folder) runs over and over on the same machine, as a busy CI machine or a second developer
would. Each run must pass; a failing run's output is kept in ``--logs`` (default
``stress-logs/``). Exit status 0 only when every run of the measured copy passed.

The figures of the last measurement are in the note of the hardening issue (issue 7) and in
docs/benchmarks.md's "Test suite" section.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from _tree_copy import ROOT, copy_tree, python_for_copy


@dataclass
class Run:
    label: str
    passed: bool
    seconds: float
    summary: str


def _default_sigint() -> None:
    """In the suite's process: Ctrl+C as a terminal sends it. A job started in the background
    by a shell (``nohup ... &``) inherits SIGINT ignored, and the tests that press Ctrl+C on a
    bot would then test nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def pytest_once(
    tree: Path,
    label: str,
    extra: list[str],
    logs: Path,
    basetemp: Path,
    python: str = sys.executable,
) -> Run:
    """One run of the suite in ``tree`` with ``python`` (one whose ``ply_arena`` is that
    tree's); its last line, and its whole output kept on failure."""
    env = dict(os.environ)
    shutil.rmtree(basetemp, ignore_errors=True)
    command = [
        python,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--basetemp={basetemp}",
        *extra,
    ]
    started = time.monotonic()
    proc = subprocess.run(
        command, cwd=tree, env=env, capture_output=True, text=True, preexec_fn=_default_sigint
    )
    seconds = time.monotonic() - started
    output = proc.stdout + proc.stderr
    lines = [line for line in output.splitlines() if line.strip()]
    summary = lines[-1] if lines else "(no output)"
    if proc.returncode != 0:
        logs.mkdir(parents=True, exist_ok=True)
        path = logs / f"{label.replace(' ', '-')}.log"
        path.write_text(output)
        summary += f"  (log: {path})"
    return Run(label, proc.returncode == 0, seconds, summary)


def series(tree: Path, name: str, count: int, extra: list[str], logs: Path) -> list[Run]:
    runs = []
    with tempfile.TemporaryDirectory(prefix=f"stress-{name}-") as tmp:
        for i in range(1, count + 1):
            run = pytest_once(tree, f"{name} {i}", extra, logs, Path(tmp) / "basetemp")
            runs.append(run)
            print(
                f"{run.label:>12}: {'pass' if run.passed else 'FAIL'} in {run.seconds:5.0f} s"
                f"  {run.summary}",
                flush=True,
            )
    return runs


def beside(count: int, extra: list[str], logs: Path) -> tuple[list[Run], list[Run]]:
    """``count`` runs of this tree while a copy of it runs the suite again and again."""
    with tempfile.TemporaryDirectory(prefix="stress-copy-") as tmp:
        copy = copy_tree(Path(tmp) / "tree")
        python = python_for_copy(copy, Path(tmp) / "venv")
        stop = threading.Event()
        background: list[Run] = []

        def load() -> None:
            i = 0
            while not stop.is_set():
                i += 1
                run = pytest_once(copy, f"copy {i}", extra, logs, Path(tmp) / "basetemp", python)
                background.append(run)
                print(
                    f"{run.label:>12}: {'pass' if run.passed else 'FAIL'} in "
                    f"{run.seconds:5.0f} s  {run.summary}  (second copy)",
                    flush=True,
                )

        loader = threading.Thread(target=load, daemon=True)
        loader.start()
        time.sleep(5)  # the copy is under way before the measured runs start
        measured = series(ROOT, "beside", count, extra, logs)
        stop.set()
        loader.join()
    return measured, background


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--alone", type=int, default=10, help="runs in a row, alone")
    parser.add_argument("--beside", type=int, default=5, help="runs beside a second copy")
    parser.add_argument("--logs", type=Path, default=ROOT / "stress-logs")
    parser.add_argument("pytest_args", nargs="*", help="after --: arguments for pytest")
    args = parser.parse_args()
    failed = 0
    if args.alone:
        runs = series(ROOT, "alone", args.alone, args.pytest_args, args.logs)
        failed += sum(not r.passed for r in runs)
        print(
            f"alone: {sum(r.passed for r in runs)}/{len(runs)} green, median "
            f"{sorted(r.seconds for r in runs)[len(runs) // 2]:.0f} s"
        )
    if args.beside:
        runs, copy = beside(args.beside, args.pytest_args, args.logs)
        failed += sum(not r.passed for r in runs) + sum(not r.passed for r in copy)
        print(
            f"beside a second copy: {sum(r.passed for r in runs)}/{len(runs)} green, median "
            f"{sorted(r.seconds for r in runs)[len(runs) // 2]:.0f} s; the copy: "
            f"{sum(r.passed for r in copy)}/{len(copy)} green"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
