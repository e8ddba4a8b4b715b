"""The analysis of a position as plain JSON data: value, best move, line, and the search's tree.

``arena analyze --json`` prints it, ``GET /api/analyze`` answers it and the ``/analyze`` page
draws it. ``prepare`` reads and checks the request (game, moves, agent, options), cheaply, so
that a bad one is refused before any search starts; ``analyze_position`` runs the search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ply_arena import games, reference_agents
from ply_arena.games import Game, State
from ply_arena.reference_agents.registry import agent_options, check_options, parse_spec
from ply_arena.reference_agents.trace._model import DEFAULT_BUDGET, DEFAULT_LIMIT, Trace

#: Thinking time when neither a depth nor a move time is given.
DEFAULT_MOVE_TIME = 1.0


#: The most whitespace-separated parts one move's notation has (a backgammon play of four
#: checkers, "24/20 13/9 13/9 6/2").
MAX_MOVE_PARTS = 4


def parse_moves(game: Game, text: str) -> tuple[State, list[str]]:
    """The state after the moves ``text`` and the moves as played (in notation).

    Moves are separated by spaces; a move whose notation has spaces of its own (a backgammon
    play, "3-1 8/5 6/5") is read as the fewest parts that make a legal move. ValueError (the
    game's InvalidMoveError / IllegalMoveError) naming the bad move.
    """
    tokens = text.split()
    if game.name == "connect_four" and len(tokens) == 1 and len(tokens[0]) > 1:
        tokens = list(tokens[0])  # a Pons digit string: "4453"
    state = game.initial_state()
    played: list[str] = []
    i = 0
    while i < len(tokens):
        number = len(played) + 1
        if state.is_terminal():
            raise ValueError(f"move {number} ({tokens[i]!r}): the game is already over")
        first_error: ValueError | None = None
        for parts in range(1, min(MAX_MOVE_PARTS, len(tokens) - i) + 1):
            try:
                move = game.parse_move(state, " ".join(tokens[i : i + parts]))
            except ValueError as exc:
                first_error = first_error or exc
                continue
            break
        else:
            raise ValueError(f"move {number}: {first_error}") from None
        played.append(game.format_move(state, move))
        state = state.result(move)
        i += parts
    return state, played


@dataclass
class Prepared:
    """A checked request: the position and the agent's options, ready to search."""

    game: Game
    state: State
    played: list[str]
    agent: str
    options: dict[str, Any]
    move_time: float | None


def prepare(
    game_name: str,
    moves: str,
    agent_spec: str,
    depth: int | None = None,
    move_time: float | None = None,
    *,
    trace_simulations: int = 0,
) -> Prepared:
    """The request checked; ValueError (one line, saying what to change) if it cannot run."""
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
    reference_agents.make(name, game, **options)  # refuses an agent that does not play it
    if depth is None and move_time is None:
        move_time = DEFAULT_MOVE_TIME
    return Prepared(game, state, played, name, options, move_time)


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
    node_details: bool = False,
) -> dict[str, Any]:
    """Everything `arena analyze` prints, as plain JSON data.

    With ``trace`` the agent's search is recorded while it runs, and every number of the report
    (value, best move, depth, nodes) is that traced search's. ``node_details`` adds, for each
    node of the tree shown, its position and its line of the text trace (``trace_nodes``), for
    the page that draws the tree.
    """
    p = prepare(game_name, moves, agent_spec, depth, move_time, trace_simulations=trace_simulations)
    game, state = p.game, p.state
    agent = reference_agents.make(p.agent, game, **p.options)
    recorded: Trace | None = None
    if trace:
        from ply_arena.reference_agents.trace import View, record

        view = View(
            levels=trace_depth,
            limit=trace_limit,
            simulations=trace_simulations,
            budget=trace_budget,
        )
        move, info, recorded = record(agent, state, p.move_time, view, options=p.options)
    else:
        move, info = agent.choose(state, p.move_time)
    info_json = info.as_json(game, state)
    seats = game.seat_names or tuple(str(i) for i in range(game.num_players))
    report: dict[str, Any] = {
        "game": game.name,
        "moves": p.played,
        "position": game.state_to_json(state),
        "board": game.render(state),
        "to_move": seats[state.player],
        "agent": p.agent,
        "options": p.options,
        "value": None if info.score is None else info.score + 0.0,  # no -0 in reports
        "best": game.format_move(state, move),
        "pv": info_json["pv"],
        "nodes": info.nodes,
        "depth": info.depth,
        "time_ms": info.time_ms,
        "comment": info.comment,
    }
    if recorded is not None:
        from ply_arena.reference_agents.trace import render_text

        report["trace"] = recorded.as_json()
        report["trace_text"] = render_text(recorded)
        if node_details:
            report["trace_nodes"] = trace_nodes(game, state, recorded)
    return report


def trace_nodes(game: Game, root_state: State, trace: Trace) -> dict[str, dict[str, Any]]:
    """For each node shown: the position there (the game's JSON) and its line of the text
    trace, by node id. The position is found by playing the moves from the root, as the
    search did (a chance node's children are its outcomes, e.g. a roll of the dice)."""
    from ply_arena.reference_agents.trace.render import describer

    if trace.root is None:
        return {}
    describe = describer(trace.algorithm)
    out: dict[str, dict[str, Any]] = {}
    stack = [(trace.root, root_state)]
    while stack:
        node, state = stack.pop()
        out[str(node.id)] = {
            "position": game.state_to_json(state),
            "line": describe(node, trace),
        }
        for child in node.children:
            if child.id in trace.shown_ids and child.move is not None:
                stack.append((child, state.result(game.parse_move(state, child.move))))
    return out
