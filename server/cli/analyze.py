"""``arena analyze``: what a reference agent thinks of a position, and how it searched.

    arena analyze connect_four --moves "4 4 5 3" --agent alphabeta --depth 8
    arena analyze connect_four --moves 4453 --agent alphabeta --move-time 2 --json
    arena analyze tic_tac_toe --moves "b2 a3" --agent minimax --depth 2 --trace
    arena analyze tic_tac_toe --moves "b2 a3" --agent mcts:simulations=200 --trace-simulations 3

The position is the one after ``--moves`` (the game's notation, space separated, a backgammon play
with spaces such as ``8/5 6/5`` read as one move; Connect Four
also takes a Pons digit string such as ``4453``). Prints the board, its value for the side to
move, the best move, the principal variation, nodes and depth reached. ``--trace`` records that
same search (``ply_arena.reference_agents.trace``) and adds its tree: the answer printed is the
traced search's own. ``--trace-depth`` (levels), ``--trace-limit`` (nodes, level by level) and
``--trace-simulations`` (MCTS: the four phases of the first N) choose what is shown, and imply
``--trace``; ``--trace-budget`` bounds the nodes a traced search may visit.
"""

from __future__ import annotations

import json
from typing import Any

import typer

from ply_arena.reference_agents.trace._model import DEFAULT_BUDGET, DEFAULT_LIMIT


def register(app: typer.Typer) -> None:
    @app.command("analyze")
    def analyze(
        game_name: str = typer.Argument(..., metavar="GAME", help="Game name (see `arena games`)."),
        moves: str = typer.Option("", "--moves", help="Moves from the start, space separated."),
        agent: str = typer.Option(
            "alphabeta", "--agent", help="Agent and options, e.g. alphabeta:order=false."
        ),
        depth: int | None = typer.Option(None, "--depth", min=1, help="Search depth in plies."),
        move_time: float | None = typer.Option(
            None, "--move-time", min=0.001, help="Seconds to think (default 1 without --depth)."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
        trace: bool = typer.Option(
            False, "--trace", help="Also show the tree of the search that gave the answer."
        ),
        trace_depth: int | None = typer.Option(
            None, "--trace-depth", min=0, help="Levels of the tree shown below the root."
        ),
        trace_limit: int | None = typer.Option(
            None,
            "--trace-limit",
            min=0,
            help=f"Nodes shown, level by level from the root (default {DEFAULT_LIMIT}; 0: all).",
        ),
        trace_simulations: int = typer.Option(
            0, "--trace-simulations", min=0, help="MCTS: show the four phases of the first N."
        ),
        trace_budget: int = typer.Option(
            DEFAULT_BUDGET,
            "--trace-budget",
            min=1,
            help="Most nodes a traced search may visit; a bigger one is refused.",
        ),
    ) -> None:
        """Analyse the position after MOVES: value, best move, principal variation."""
        wants_trace = (
            trace or trace_depth is not None or trace_limit is not None or trace_simulations > 0
        )
        from ply_arena.server.analysis.report import analyze_position

        try:
            report = analyze_position(
                game_name,
                moves,
                agent,
                depth,
                move_time,
                wants_trace,
                trace_depth=trace_depth,
                trace_limit=DEFAULT_LIMIT if trace_limit is None else trace_limit or None,
                trace_simulations=trace_simulations,
                trace_budget=trace_budget,
            )
        except ValueError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(code=2) from None
        if as_json:
            typer.echo(json.dumps(report, indent=2))
        else:
            typer.echo(report_text(report))


def report_text(report: dict[str, Any]) -> str:
    value = report["value"]
    lines = [
        report["board"],
        "",
        f"{report['game']} after {' '.join(report['moves']) or '(start)'}; "
        f"{report['to_move']} to move",
        f"agent      {report['agent']}"
        + (
            f" ({', '.join(f'{k}={v}' for k, v in report['options'].items())})"
            if report["options"]
            else ""
        ),
        f"value      {'unknown' if value is None else f'{value + 0.0:+.4g}'} "
        f"(for {report['to_move']})",
        f"best move  {report['best']}",
        f"pv         {' '.join(report['pv'])}",
        f"depth      {report['depth']}",
        f"nodes      {report['nodes']:,}",
        f"time       {report['time_ms']} ms",
    ]
    if report["comment"]:
        lines.append(f"note       {report['comment']}")
    if "trace_text" in report:
        algorithm = report["trace"]["algorithm"]
        lines += [
            "",
            f"search tree ({algorithm}, recorded from this search):",
            report["trace_text"],
        ]
    return "\n".join(lines)
