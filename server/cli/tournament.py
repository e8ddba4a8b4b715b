"""``arena tournament``: tournaments on a running server, through its REST API.

    arena tournament create final --game connect_four --format swiss --rounds 5 --class ai-2026
    arena tournament start final            # its games start as their bots are connected
    arena tournament show final             # standings (and --crosstable, --rounds)
    arena tournament pause final | resume final | cancel final
    arena tournament export final --what matches --format csv -o final-matches.csv
    arena tournament grades final -o grades.csv

Every command takes ``--url`` (the server, http://HOST:PORT; the bots' ws:// address works too)
and the commands that change something ``--token`` (the admin's, or the class's instructor's;
or ARENA_TOKEN). The server runs the tournament: these commands only ask it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from ply_arena.server.cli._server_api import call_api, url_option

_TOKEN_HELP = "The admin's token or your class's instructor token (or ARENA_TOKEN)."


def _token_option() -> Any:
    return typer.Option(..., "--token", envvar="ARENA_TOKEN", help=_TOKEN_HELP)


def register(app: typer.Typer) -> None:
    tournament_app = typer.Typer(
        help="Create, run and export tournaments on a running server.", no_args_is_help=True
    )
    app.add_typer(tournament_app, name="tournament")

    @tournament_app.command("create")
    def create(
        name: str = typer.Argument(
            ..., metavar="NAME", help="The tournament's name (letters, digits, _ - .)."
        ),
        game: str = typer.Option(..., "--game", help="The game (see `arena games`)."),
        format: str = typer.Option(
            "round_robin", "--format", help="round_robin, swiss or gauntlet."
        ),
        rounds: int = typer.Option(
            1, "--rounds", help="Swiss: rounds; round robin and gauntlet: cycles."
        ),
        class_name: str = typer.Option(
            None, "--class", help="Every enabled bot of this class takes part."
        ),
        bot: list[str] = typer.Option(  # noqa: B008
            None,
            "--bot",
            metavar="BOT[,BOT]",
            help="A bot that takes part (repeat; or comma-separated).",
        ),
        pool: list[str] = typer.Option(  # noqa: B008
            None,
            "--pool",
            metavar="BOT[,BOT]",
            help="Gauntlet: a bot every entrant meets (repeat; comma-separated).",
        ),
        move_ms: int = typer.Option(
            None, "--move-ms", help="Per-move limit (default: the game's)."
        ),
        bank_ms: int = typer.Option(0, "--bank-ms", help="With --move-ms: the overage bank."),
        policy: str = typer.Option("forfeit", "--policy", help="forfeit or random_move."),
        concurrency: int = typer.Option(4, "--concurrency", help="Games played at once."),
        unrated: bool = typer.Option(False, "--unrated", help="Its matches leave ratings alone."),
        no_show_s: float = typer.Option(
            60.0, "--no-show-after", help="Seconds a game waits for its bots before no_show."
        ),
        url: str = url_option(),
        token: str = _token_option(),
    ) -> None:
        """Create a tournament (it starts with `arena tournament start`)."""
        body: dict[str, Any] = {
            "name": name,
            "game": game,
            "format": format,
            "rounds": rounds,
            "policy": policy,
            "concurrency": concurrency,
            "rated": not unrated,
            "no_show_s": no_show_s,
        }
        if class_name is not None:
            body["class"] = class_name
        if bot:
            body["bots"] = _names(bot)
        if pool:
            body["pool"] = _names(pool)
        if move_ms is not None:
            body["time_control"] = {"move_ms": move_ms, "bank_ms": bank_ms}
        elif bank_ms:
            typer.echo(
                "error: --bank-ms goes with --move-ms (without them the game's default time "
                "control is used; see `arena games`)",
                err=True,
            )
            raise typer.Exit(2)
        doc = call_api("POST", url, "/api/tournaments", token, body, expect=201)
        typer.echo(
            f"Created tournament {doc['name']!r}: {doc['format']} of {doc['game']}, "
            f"{len(doc['entrants'])} entrant(s). Start it with: arena tournament start {name}"
        )

    @tournament_app.command("list")
    def list_(
        class_name: str = typer.Option(None, "--class", help="Only this class's."),
        url: str = url_option(),
    ) -> None:
        """List the tournaments, newest first."""
        from rich.console import Console
        from rich.table import Table

        path = "/api/tournaments" + (f"?class={class_name}" if class_name else "")
        table = Table("name", "game", "format", "rounds", "status", "class")
        for t in call_api("GET", url, path)["tournaments"]:
            table.add_row(
                t["name"], t["game"], t["format"], str(t["rounds"]), t["status"], t["class"] or ""
            )
        Console().print(table)

    @tournament_app.command("show")
    def show(
        name: str = typer.Argument(..., metavar="NAME", help="The tournament."),
        crosstable: bool = typer.Option(False, "--crosstable", help="Also the crosstable."),
        rounds: bool = typer.Option(False, "--rounds", help="Also every round's games."),
        as_json: bool = typer.Option(False, "--json", help="The whole document as JSON."),
        url: str = url_option(),
    ) -> None:
        """Standings (with tiebreaks), and on request the crosstable and the rounds."""
        doc = call_api("GET", url, f"/api/tournaments/{name}")
        if as_json:
            typer.echo(json.dumps(doc, indent=2))
            return
        print_tournament(doc, crosstable=crosstable, rounds=rounds)

    for action, what in (
        ("start", "Start it: its games start as their bots are connected."),
        ("pause", "Pause it: no new game starts; those under way finish."),
        ("resume", "Resume a paused tournament."),
        (
            "cancel",
            "Cancel it: games not started are cancelled; those under way end aborted, unrated.",
        ),
    ):
        _steer(tournament_app, action, what)

    @tournament_app.command("export")
    def export(
        name: str = typer.Argument(..., metavar="NAME", help="The tournament."),
        what: str = typer.Option("standings", "--what", help="standings or matches."),
        fmt: str = typer.Option("csv", "--format", help="csv or json."),
        output: Path = typer.Option(  # noqa: B008
            None, "--output", "-o", help="Write here (default, or -: stdout)."
        ),
        url: str = url_option(),
    ) -> None:
        """Standings or every match, as CSV or JSON."""
        text = call_api(
            "GET", url, f"/api/tournaments/{name}/export?what={what}&format={fmt}", raw=True
        )
        _write(text, output)

    @tournament_app.command("grades")
    def grades(
        name: str = typer.Argument(..., metavar="NAME", help="The tournament."),
        output: Path = typer.Option(  # noqa: B008
            None, "--output", "-o", help="Write here (default, or -: stdout)."
        ),
        url: str = url_option(),
        token: str = _token_option(),
    ) -> None:
        """The grade sheet (CSV): each class bot's owner, rank, score, rating and faults."""
        _write(call_api("GET", url, f"/api/tournaments/{name}/grades.csv", token, raw=True), output)


def _steer(group: typer.Typer, action: str, what: str) -> None:
    def command(
        name: str = typer.Argument(..., metavar="NAME", help="The tournament."),
        url: str = url_option(),
        token: str = _token_option(),
    ) -> None:
        doc = call_api("POST", url, f"/api/tournaments/{name}/{action}", token)
        typer.echo(f"Tournament {doc['name']!r} is {doc['status']}.")

    command.__doc__ = what
    group.command(action)(command)


def _names(values: list[str]) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _write(text: str, output: Path | None) -> None:
    if output is None or str(output) == "-":
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)


def print_tournament(doc: dict[str, Any], *, crosstable: bool, rounds: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    tc = doc["time_control"]
    round_ = doc["round"]
    under_way = (
        f"round {round_['number']} of {round_['of']} ({round_['games']['decided']} of "
        f"{round_['games']['total']} game(s) decided), "
        if round_["number"]
        else ""
    )
    console.print(
        f"[bold]{doc['name']}[/bold]: {doc['format']} of {doc['game']}, "
        f"{tc['move_ms']}+{tc['bank_ms']} ms, {doc['status']}; {under_way}"
        f"{doc['games']['decided']} of {doc['games']['total']} game(s) of the tournament decided",
        markup=True,
        highlight=False,
    )
    swiss = doc["format"] == "swiss"
    columns = ["#", "bot", "points", "games", "W", "D", "L"]
    columns += ["byes", "Buchholz", "SB", "H2H"] if swiss else ["SB", "H2H"]
    table = Table(*columns)
    for row in doc["standings"]:
        cells = [str(row["rank"]), row["bot"], f"{row['points']:g}", str(row["games"])]
        cells += [str(row["wins"]), str(row["draws"]), str(row["losses"])]
        if swiss:
            cells += [str(row["byes"]), f"{row['buchholz']:g}"]
        cells += [f"{row['sonneborn_berger']:g}", f"{row['head_to_head']:g}"]
        table.add_row(*cells)
    console.print(table)
    if crosstable:
        # A gauntlet's columns are its pool (named), anyone else's the entrants (numbered).
        names = doc["crosstable_columns"]
        heads = names if doc["format"] == "gauntlet" else [str(i + 1) for i in range(len(names))]
        cross = Table("#", "bot", *heads, "points")
        for line in doc["crosstable"]:
            cells = []
            for other in names:
                got = line["against"].get(other)
                cells.append(
                    "x" if other == line["bot"] else " ".join(f"{p:g}" for p in got) if got else ""
                )
            cross.add_row(str(line["rank"]), line["bot"], *cells, f"{line['points']:g}")
        console.print(cross)
    if rounds:
        for round_ in doc["schedule"]:
            games = Table(f"round {round_['round']}", "bots", "status", "result", "match")
            for g in round_["games"]:
                result = (
                    " ".join(f"{p:g}" for p in g["payoffs"])
                    if g["payoffs"]
                    else g["termination"] or ""
                )
                games.add_row(
                    str(g["board"]), " - ".join(g["bots"]), g["status"], result, g["match_id"] or ""
                )
            console.print(games)
