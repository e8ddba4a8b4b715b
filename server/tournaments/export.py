"""Exports of a tournament: standings and matches as CSV (the JSON forms are the document's own
lists), and the grade sheet of a class.

Every export is built from ``table.tournament_document``, the same document the API and the page
show, so they cannot disagree. CSV columns are fixed and documented (docs/server.md); a cell
that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@`` first) is prefixed with
``'``.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ply_arena.server.repositories.tournaments import Participant

STANDINGS_COLUMNS = [
    "rank",
    "bot",
    "points",
    "games",
    "wins",
    "draws",
    "losses",
    "byes",
    "buchholz",
    "sonneborn_berger",
    "head_to_head",
]
MATCH_COLUMNS = [
    "round",
    "board",
    "seat0",
    "seat1",
    "seat2",
    "status",
    "termination",
    "payoff0",
    "payoff1",
    "payoff2",
    "at_fault",
    "absent",
    "match_id",
    "replays",
    "finished_at",
]
GRADE_COLUMNS = [
    "bot",
    "owner",
    "rank",
    "points",
    "rating",
    "rating_mu",
    "rating_sigma",
    "games",
    "matches",
    "wins",
    "draws",
    "losses",
    "byes",
    "timeouts",
    "illegal_moves",
    "disconnects",
    "no_shows",
]
#: Terminations that are a seat's fault, counted per bot in the grade sheet.
FAULTS = {"timeout": "timeouts", "illegal_move": "illegal_moves", "disconnect": "disconnects"}


def match_rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every game of every round, flat: what the matches export holds."""
    rows = []
    for round_ in document["schedule"]:
        for game in round_["games"]:
            rows.append({"round": round_["round"], **game})
    return rows


def standings_csv(document: dict[str, Any]) -> str:
    """The standings; numbers written alike (``1``, ``0.5``); Buchholz only for a Swiss
    tournament, the one format it breaks ties in (blank otherwise)."""
    swiss = document["format"] == "swiss"
    rows = []
    for row in document["standings"]:
        line = []
        for column in STANDINGS_COLUMNS:
            value = row[column]
            if column == "buchholz" and not swiss:
                value = ""
            elif isinstance(value, float):
                value = f"{value:g}"
            line.append(value)
        rows.append(line)
    return _csv(STANDINGS_COLUMNS, rows)


def matches_csv(document: dict[str, Any]) -> str:
    lines = []
    for row in match_rows(document):
        bots = row["bots"] + [""] * (3 - len(row["bots"]))
        payoffs = (row["payoffs"] or []) + [""] * (3 - len(row["payoffs"] or []))
        absent = " ".join(str(s) for s in row["absent"] or [])
        lines.append(
            [
                row["round"],
                row["board"],
                *bots[:3],
                row["status"],
                row["termination"] or "",
                *payoffs[:3],
                "" if row["at_fault"] is None else row["at_fault"],
                absent,
                row["match_id"] or "",
                row["replays"],
                row["finished_at"] or "",
            ]
        )
    return _csv(MATCH_COLUMNS, lines)


#: A rating: (mu, sigma, conservative = mu - 3 sigma).
RatingTriple = tuple[float, float, float]


def grade_rows(
    document: dict[str, Any], people: Sequence[Participant], ratings: dict[int, RatingTriple]
) -> list[dict[str, Any]]:
    """One row per bot in ``people``: its tournament rank and score, its rating in the game,
    and its tournament record with the faults that cost it games. ``games`` counts every game
    decided (no-shows and byes too), ``matches`` those played."""
    standing = {row["bot"]: row for row in document["standings"]}
    faults: dict[str, Counter[str]] = {p.name: Counter() for p in people}
    for row in match_rows(document):
        bots = row["bots"]
        if row["status"] == "finished":
            for bot in bots:
                if bot in faults:
                    faults[bot]["matches"] += 1
        if row["status"] == "no_show":
            for seat in row["absent"] or []:
                if bots[seat] in faults:
                    faults[bots[seat]]["no_shows"] += 1
        elif row["status"] == "finished" and row["at_fault"] is not None:
            kind = FAULTS.get(row["termination"] or "")
            if kind is not None and bots[row["at_fault"]] in faults:
                faults[bots[row["at_fault"]]][kind] += 1
    rows = []
    for p in people:
        s = standing.get(p.name, {})
        rating = ratings.get(p.bot_id)
        mu, sigma, conservative = rating if rating is not None else ("", "", "")
        rows.append(
            {
                "bot": p.name,
                "owner": p.owner or "",
                "rank": s.get("rank", ""),
                "points": _number(s.get("points", 0.0)),
                "rating": _round(conservative),
                "rating_mu": _round(mu),
                "rating_sigma": _round(sigma),
                "games": s.get("games", 0) + s.get("byes", 0),
                "matches": faults[p.name]["matches"],
                "wins": s.get("wins", 0),
                "draws": s.get("draws", 0),
                "losses": s.get("losses", 0),
                "byes": s.get("byes", 0),
                **{k: faults[p.name][k] for k in ("timeouts", "illegal_moves", "disconnects")},
                "no_shows": faults[p.name]["no_shows"],
            }
        )
    rows.sort(key=lambda r: (r["rank"] == "", r["rank"] if r["rank"] != "" else 0, r["bot"]))
    return rows


def _number(value: float) -> str:
    return f"{value:g}"


def _round(value: float | str) -> float | str:
    return round(value, 2) if isinstance(value, float) else value


def grades_csv(
    document: dict[str, Any], people: Sequence[Participant], ratings: dict[int, RatingTriple]
) -> str:
    return _csv(
        GRADE_COLUMNS,
        ([r[c] for c in GRADE_COLUMNS] for r in grade_rows(document, people, ratings)),
    )


def _csv(header: list[str], rows: Iterable[list[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([_safe(v) for v in row])
    return out.getvalue()


def _safe(value: Any) -> Any:
    """Text a spreadsheet would run as a formula starts with ' (OWASP's CSV injection advice).
    Numbers pass as they are (a negative payoff is a number, not a formula)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


LEADERBOARD_COLUMNS = [
    "rank",
    "bot",
    "conservative",
    "mu",
    "sigma",
    "provisional",
    "matches",
    "wins",
    "draws",
    "losses",
    "timeouts",
    "illegal_moves",
    "disconnects",
    "last_played",
]


def leaderboard_csv(board: dict[str, Any]) -> str:
    """A leaderboard page (``GET /api/leaderboard/{game}``'s document: a class's season too) as
    CSV, one row per ranked bot."""
    return _csv(
        LEADERBOARD_COLUMNS,
        ([row[column] for column in LEADERBOARD_COLUMNS] for row in board["ranking"]),
    )
