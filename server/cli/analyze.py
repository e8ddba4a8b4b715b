"""``arena analyze``: what a reference agent thinks of a position, and how it searched.

    arena analyze connect_four --moves "4 4 5 3" --agent alphabeta --depth 8
    arena analyze connect_four --moves 4453 --agent alphabeta --move-time 2 --json
    arena analyze tic_tac_toe --moves "b2 a3" --agent minimax --depth 2 --trace
    arena analyze tic_tac_toe --moves "b2 a3" --agent mcts:simulations=200 --trace-simulations 3

The position is the one after ``--moves`` (the game's notation, space separated; Connect Four
also takes a Pons digit string such as ``4453``). Prints the board, its value for the side to
move, the best move, the principal variation, nodes and depth reached. ``--trace`` records that
same search (``reference_agents.trace``) and adds its tree: the answer printed is the traced
search's own. ``--trace-depth`` (levels), ``--trace-limit`` (nodes, level by level) and
``--trace-simulations`` (MCTS: the four phases of the first N) choose what is shown, and imply
``--trace``; ``--trace-budget`` bounds the nodes a traced search may visit.
"""

from __future__ import annotations

import json
from typing import Any

import typer

from reference_agents.trace._model import DEFAULT_BUDGET, DEFAULT_LIMIT

#: Thinking time when neither --depth nor --move-time is given.
DEFAULT_MOVE_TIME = 1.0


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


def parse_moves(game: Any, text: str) -> tuple[Any, list[str]]:
    """The state after the moves ``text`` and the moves as played (in notation).

    ValueError (the game's InvalidMoveError / IllegalMoveError) naming the bad move.
    """
    tokens = text.split()
    if game.name == "connect_four" and len(tokens) == 1 and len(tokens[0]) > 1:
        tokens = list(tokens[0])  # a Pons digit string: "4453"
    state = game.initial_state()
    played: list[str] = []
    for i, token in enumerate(tokens):
        if state.is_terminal():
            raise ValueError(f"move {i + 1} ({token!r}): the game is already over")
        try:
            move = game.parse_move(state, token)
        except ValueError as exc:
            raise ValueError(f"move {i + 1}: {exc}") from None
        played.append(game.format_move(state, move))
        state = state.result(move)
    return state, played


def analyze_position(
    game_name: str,
    moves: str,
    agent_spec: str,
    depth: int | None = None,
    move_time: float | None = None,
    trace: bool = False,
    *,
    trace_depth: int | None = None,
    trace_limit: int | None = DEFAULT_LIMIT,
    trace_simulations: int = 0,
    trace_budget: int = DEFAULT_BUDGET,
) -> dict[str, Any]:
    """Everything `arena analyze` prints, as plain JSON data.

    With ``trace`` the agent's search is recorded while it runs, and every number of the report
    (value, best move, depth, nodes) is that traced search's.
    """
    import games
    import reference_agents
    from reference_agents.registry import agent_options, check_options, parse_spec

    if depth is not None and move_time is not None:
        raise ValueError("give --depth or --move-time, not both")
    game = games.get(game_name)
    state, played = parse_moves(game, moves)
    if state.is_terminal():
        raise ValueError(f"the game is over after these moves (returns {list(state.returns())})")
    if state.is_chance_node():
        raise ValueError("the position is a chance node (dice to roll): no move to analyse")
    name, options = parse_spec(agent_spec)
    if trace_simulations and name != "mcts":
        raise ValueError("--trace-simulations shows the four phases of MCTS: use --agent mcts")
    # The options as written are checked first, so that --depth neither hides a bad one nor
    # silently wins over one given in the agent's spec.
    options = check_options(name, options)
    if depth is not None:
        if "depth" in options:
            raise ValueError(
                f"the depth is given twice ({agent_spec} and --depth {depth}): give it once"
            )
        if "depth" not in {option.name for option in agent_options(name)}:
            listing = ", ".join(o.describe() for o in agent_options(name) if o.kind is not None)
            raise ValueError(
                f"--depth: {name} does not search to a depth; use --move-time, or its own "
                f"options in --agent {name}:...; options: {listing}"
            )
        options["depth"] = depth
    options.setdefault("seed", 0)  # the same answer every time for the same position
    agent = reference_agents.make(name, game, **options)
    if depth is None and move_time is None:
        move_time = DEFAULT_MOVE_TIME
    recorded = None
    if trace:
        from reference_agents.trace import View, record

        view = View(
            levels=trace_depth,
            limit=trace_limit,
            simulations=trace_simulations,
            budget=trace_budget,
        )
        move, info, recorded = record(agent, state, move_time, view, options=options)
    else:
        move, info = agent.choose(state, move_time)
    info_json = info.as_json(game, state)
    seats = game.seat_names or tuple(str(i) for i in range(game.num_players))
    report: dict[str, Any] = {
        "game": game.name,
        "moves": played,
        "position": game.state_to_json(state),
        "board": game.render(state),
        "to_move": seats[state.player],
        "agent": name,
        "options": options,
        "value": None if info.score is None else info.score + 0.0,  # no -0 in reports
        "best": game.format_move(state, move),
        "pv": info_json["pv"],
        "nodes": info.nodes,
        "depth": info.depth,
        "time_ms": info.time_ms,
        "comment": info.comment,
    }
    if recorded is not None:
        from reference_agents.trace import render_text

        report["trace"] = recorded.as_json()
        report["trace_text"] = render_text(recorded)
    return report


def report_text(report: dict[str, Any]) -> str:
    value = report["value"]
    lines = [
        report["board"],
        "",
        f"{report['game']} after {' '.join(report['moves']) or '(start)'}; "
        f"{report['to_move']} to move",
        f"agent      {report['agent']} {report['options']}",
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
