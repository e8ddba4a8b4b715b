"""``arena play``: reference agents play each other locally, without a server.

    arena play connect_four alphabeta mcts --games 20 --move-time 0.2
    arena play tic_tac_toe alphabeta:depth=2 mcts:c=1.4,simulations=200 --games 10 --seed 1
    arena play chinese_checkers maxn:depth=1 random random --games 6 --json out.json

One agent per seat (as many agents as the game has players); the seats rotate from game to game so
every agent plays every seat equally often. The dice of games of chance come from ``--seed`` too,
so a run with a seed (and agents limited by depth or simulations rather than time) repeats
exactly. Each game counts for an agent as the share of its opponents it finished ahead of (ties
count half): a win 1, a draw 1/2, a loss 0 in two-player games; first 1, second 1/2, last 0 with
three players. The final table has wins, draws, losses and that score per agent (with three
players: how often it finished 1st, 2nd and 3rd, tied seats sharing the better place), and for
two agents the Elo difference with a 95% confidence interval. The same agent given twice is told
apart as ``random #1``, ``random #2``.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

#: Seconds per move when --move-time is not given.
DEFAULT_MOVE_TIME = 0.1


def register(app: typer.Typer) -> None:
    @app.command("play")
    def play(
        game_name: Annotated[
            str, typer.Argument(metavar="GAME", help="Game name (see `arena games`).")
        ],
        agent_specs: Annotated[
            list[str],
            typer.Argument(
                metavar="AGENT AGENT [AGENT]",
                help="One agent per seat, with options: alphabeta:depth=6, mcts:c=1.4.",
            ),
        ],
        n_games: Annotated[int, typer.Option("--games", min=1, help="Number of games.")] = 10,
        move_time: Annotated[
            float, typer.Option("--move-time", min=0.001, help="Seconds per move.")
        ] = DEFAULT_MOVE_TIME,
        seed: Annotated[
            int | None, typer.Option("--seed", help="Seed for agents and dice.")
        ] = None,
        json_file: Annotated[
            Path | None,
            typer.Option("--json", help="Also write every game and the summary to this file."),
        ] = None,
    ) -> None:
        """Play N games (--games) between local agents, seats rotated, and print the results."""
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        console = Console()
        try:
            match = Match(game_name, agent_specs, seed=seed, move_time=move_time)
        except ValueError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(code=2) from None
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[standing]}"),
            console=console,
            transient=False,
        ) as progress:
            task = progress.add_task(game_name, total=n_games, standing="")

            def advance(record: dict[str, Any]) -> None:
                progress.update(task, advance=1, standing=match.standing())

            match.play(n_games, on_game=advance)
        report = match.report()
        console.print(results_table(report))
        if "elo" in report:
            console.print(elo_text(report["elo"]))
        if json_file is not None:
            json_file.write_text(json.dumps(report, indent=2) + "\n")
            console.print(f"written to {json_file}")


class Match:
    """A series of games between agents on one game, seats rotated."""

    def __init__(
        self, game_name: str, specs: list[str], *, seed: int | None = None, move_time: float = 0.1
    ) -> None:
        from ply_arena import games
        from ply_arena.reference_agents.registry import make, parse_spec

        self.game = games.get(game_name)
        if len(specs) != self.game.num_players:
            raise ValueError(
                f"{game_name} has {self.game.num_players} seats: give {self.game.num_players} "
                f"agents, not {len(specs)}"
            )
        self.specs = specs
        self.labels = agent_labels(specs)
        self.seed = seed
        self.move_time = move_time
        self.dice = random.Random(seed)
        self.agents = []
        for i, spec in enumerate(specs):
            name, options = parse_spec(spec)
            if seed is not None:
                options.setdefault("seed", seed * 1000 + i)  # different streams per agent
            self.agents.append(make(name, self.game, **options))
        self.records: list[dict[str, Any]] = []
        self.points = [0.0] * len(specs)
        #: Each agent's points in every game, in the order of the games (for the Elo interval).
        self.game_points: list[list[float]] = [[] for _ in specs]
        self.wins = [0] * len(specs)
        self.draws = [0] * len(specs)
        self.losses = [0] * len(specs)
        #: With three or more players: places[agent][p] counts the games it finished p+1-th.
        self.places = [[0] * len(specs) for _ in specs]

    def play(
        self, n_games: int, on_game: Callable[[dict[str, Any]], None] | None = None
    ) -> list[dict[str, Any]]:
        for _ in range(n_games):
            record = self.play_one()
            if on_game is not None:
                on_game(record)
        return self.records

    def play_one(self) -> dict[str, Any]:
        """One game; seat ``s`` is played by agent ``(s + g) % k`` in game ``g``."""
        game, k = self.game, len(self.agents)
        index = len(self.records)
        seats = [(s + index) % k for s in range(k)]
        state = game.initial_state()
        moves: list[str] = []
        think = [0.0] * k
        slowest = [0.0] * k
        start = time.monotonic()
        while not state.is_terminal():
            if state.is_chance_node():
                state = state.result(self._roll(state.chance_outcomes()))
                continue
            agent_index = seats[state.player]
            t0 = time.monotonic()
            move, _ = self.agents[agent_index].choose(state, time_limit=self.move_time)
            spent = time.monotonic() - t0
            think[agent_index] += spent
            slowest[agent_index] = max(slowest[agent_index], spent)
            moves.append(game.format_move(state, move))
            state = state.result(move)
        returns = list(state.returns())
        points = game_points(returns)
        places = game_places(returns)
        for seat, agent_index in enumerate(seats):
            p = points[seat]
            self.points[agent_index] += p
            self.game_points[agent_index].append(p)
            self.places[agent_index][places[seat] - 1] += 1
            if p == 1.0:
                self.wins[agent_index] += 1
            elif p == 0.0:
                self.losses[agent_index] += 1
            else:
                self.draws[agent_index] += 1
        # Every list of a game is by seat: seats[i] names the agent that played seat i.
        record: dict[str, Any] = {
            "game": index + 1,
            "seats": [self.labels[a] for a in seats],
            "returns": returns,
            "points": points,
            "plies": len(moves),
            "seconds": round(time.monotonic() - start, 3),
            "slowest_move_s": [round(slowest[a], 3) for a in seats],
            "moves": moves,
        }
        if k > 2:
            record["places"] = places
        self.records.append(record)
        return record

    def _roll(self, outcomes: list[tuple[Any, float]]) -> Any:
        x = self.dice.random()
        for outcome, p in outcomes:
            x -= p
            if x < 0:
                return outcome
        return outcomes[-1][0]

    def standing(self) -> str:
        n = len(self.records) or 1
        return "  ".join(
            f"{label} {100 * pts / n:.0f}%"
            for label, pts in zip(self.labels, self.points, strict=True)
        )

    def report(self) -> dict[str, Any]:
        n = len(self.records)
        rows = []
        for i, spec in enumerate(self.specs):
            row: dict[str, Any] = {"agent": self.labels[i], "spec": spec, "games": n}
            if len(self.specs) == 2:
                row.update(wins=self.wins[i], draws=self.draws[i], losses=self.losses[i])
            else:
                row["places"] = self.places[i]
            row["score"] = self.points[i] / n if n else 0.0
            rows.append(row)
        report: dict[str, Any] = {
            "game": self.game.name,
            "agents": self.labels,
            "move_time": self.move_time,
            "seed": self.seed,
            "results": rows,
            "order": GAME_LIST_ORDER,
            "games": self.records,
        }
        if len(self.specs) == 2 and n:
            elo = elo_difference(self.game_points[0])
            # JSON has no infinity: an unbounded end of the interval is null
            report["elo"] = {
                "agent": self.labels[0],
                "against": self.labels[1],
                **{k: v if math.isfinite(v) else None for k, v in elo.items()},
            }
        return report


#: What the JSON report says about the order of each game's lists.
GAME_LIST_ORDER = (
    "in each game, seats, returns, points, places and slowest_move_s are by seat: seats[i] is "
    "the agent that played seat i; results and agents are in the order the agents were given"
)


def agent_labels(specs: list[str]) -> list[str]:
    """Names that tell the agents apart: a spec given twice becomes ``spec #1``, ``spec #2``.

    >>> agent_labels(["maxn:depth=1", "random", "random"])
    ['maxn:depth=1', 'random #1', 'random #2']
    """
    seen: dict[str, int] = {}
    labels = []
    for spec in specs:
        seen[spec] = seen.get(spec, 0) + 1
        labels.append(f"{spec} #{seen[spec]}" if specs.count(spec) > 1 else spec)
    return labels


def game_places(returns: list[float]) -> list[int]:
    """Each seat's place (1 for first): one more than the seats strictly ahead of it, so tied
    seats share the better place.

    >>> game_places([0.0, 1.0, -1.0]), game_places([1.0, 0.0, 0.0])
    ([2, 1, 3], [1, 2, 2])
    """
    return [1 + sum(other > mine for other in returns) for mine in returns]


def game_points(returns: list[float]) -> list[float]:
    """Each seat's share of the opponents it finished ahead of (ties half): 1, 1/2 or 0 with two
    players; 1 for first, 1/2 for second, 0 for last with three."""
    k = len(returns)
    return [
        sum(
            1.0 if mine > other else 0.5 if mine == other else 0.0
            for j, other in enumerate(returns)
            if j != i
        )
        / (k - 1)
        for i, mine in enumerate(returns)
    ]


def elo_difference(points: list[float]) -> dict[str, float]:
    """Elo difference implied by the mean score, with a 95% interval from the games' spread.

    ``D = -400 log10(1/s - 1)``; the interval maps ``s +- 1.96 * stderr(s)`` the same way. A
    perfect (or nil) score has no finite estimate: +-inf, but a finite bound on the other side.

        >>> round(elo_difference([1.0, 0.5, 0.0, 1.0])["elo"])
        89
    """
    n = len(points)
    s = sum(points) / n
    z = 1.96
    var = sum((p - s) ** 2 for p in points) / (n - 1) if n > 1 else 0.0
    if var > 0.0:
        low, high = s - z * math.sqrt(var / n), s + z * math.sqrt(var / n)
    else:
        # every game the same result: no spread to measure; Wilson's interval still bounds the
        # score away from the observed 0 or 1 (or 1/2) by what n games can tell
        centre = (s + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(s * (1 - s) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        low, high = centre - half, centre + half
    return {"score": s, "elo": _elo(s), "low": _elo(low), "high": _elo(high)}


def _elo(s: float) -> float:
    if s <= 0.0:
        return -math.inf
    if s >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / s - 1.0)


def results_table(report: dict[str, Any]) -> Any:
    from rich.table import Table

    table = Table(
        title=f"{report['game']}: {len(report['games'])} games, {report['move_time']} s per move"
    )
    rows = report["results"]
    places = "places" in rows[0]
    counts = [_ordinal(p + 1) for p in range(len(rows))] if places else ["wins", "draws", "losses"]
    for col in ("agent", *counts, "score"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    for row in rows:
        numbers = row["places"] if places else [row["wins"], row["draws"], row["losses"]]
        table.add_row(row["agent"], *map(str, numbers), f"{100 * row['score']:.1f}%")
    return table


def _ordinal(n: int) -> str:
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n if n < 20 else n % 10, 'th') }"


def elo_text(elo: dict[str, Any]) -> str:
    def fmt(x: float | None, unbounded: str) -> str:
        if x is None:
            return unbounded
        rounded = round(x)  # an int: -0.0 and -0.4 print as 0, not "-0"
        return "0" if rounded == 0 else f"{rounded:+d}"

    centre = "+inf" if elo["score"] >= 0.5 else "-inf"

    return (
        f"Elo difference {elo['agent']} - {elo['against']}: {fmt(elo['elo'], centre)} "
        f"(95% interval {fmt(elo['low'], '-inf')} .. {fmt(elo['high'], '+inf')})"
    )
