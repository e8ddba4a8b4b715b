"""Ladder benchmarks: ``python -m bench.ladder [SECTION ...] [options]``.

Each section lives in a module of its own (``bench/_ladder_<section>.py``) that defines
``add_arguments(parser)`` and ``run(args) -> str`` (the report); register it in ``SECTIONS``.
With no section named, every section runs, in the order below.

    python -m bench.ladder                       # every section
    python -m bench.ladder pairing --runs 21     # one section, with its options
    python -m bench.ladder --help                # every section's options

Sections:

- ``pairing``: one lobby decision (server/referee/pairing.py) with 1,000 registered bots and
  200 waiting, against the former first-come-first-served pairing in the same run.
- ``ratings``: the cost a rating adds to storing a result (against storing it unrated), a rebuild
  of 100,000 rated matches (against reading them), and ``GET /api/leaderboard/{game}`` with
  1,000 bots and 100,000 matches (against ``GET /api/health``), on a real server.

(The house bots' latency is measured with the server's throughput: ``python -m bench.server
--house``.)
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

#: section name -> module (``add_arguments(parser)``, ``run(args) -> str``).
SECTIONS: dict[str, str] = {
    "pairing": "bench._ladder_pairing",
    "ratings": "bench._ladder_ratings",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.ladder",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "sections", nargs="*", metavar="SECTION", help=f"of: {', '.join(SECTIONS)} (all: none)"
    )
    parser.add_argument("--out", type=Path, help="also write the reports to this file")
    modules = {name: importlib.import_module(module) for name, module in SECTIONS.items()}
    for name, module in modules.items():
        module.add_arguments(parser.add_argument_group(name))
    args = parser.parse_args(argv)
    unknown = [s for s in args.sections if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {unknown[0]!r}: sections are {', '.join(SECTIONS)}")
    reports = []
    for name in args.sections or list(SECTIONS):
        report = modules[name].run(args)
        print(report, flush=True)
        reports.append(report)
    if args.out:
        args.out.write_text("\n\n".join(reports) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
