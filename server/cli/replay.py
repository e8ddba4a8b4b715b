"""``arena replay``: print a stored match move by move as text boards."""

from __future__ import annotations

from typing import Any

import typer

from ply_arena.protocol.wire import escape_controls
from ply_arena.server.cli._server_api import server_address

#: Where ``arena replay`` looks when --url is not given (``arena serve``'s default address).
DEFAULT_URL = "http://127.0.0.1:8000"


def register(app: typer.Typer) -> None:
    @app.command("replay")
    def replay(
        match_id: str = typer.Argument(..., help="The match id (from GET /api/matches)."),
        url: str = typer.Option(
            DEFAULT_URL,
            "--url",
            metavar="http://HOST:PORT",
            help="The arena server (its bots' ws://HOST:PORT/ws address works too).",
        ),
    ) -> None:
        """Print a match move by move, re-derived by the server from the stored moves."""
        import httpx

        base = server_address(url)
        address = f"{base}/api/matches/{match_id}/replay"
        try:
            response = httpx.get(address, timeout=30)
        except httpx.HTTPError as exc:
            typer.echo(
                f"error: cannot reach {base}: {exc}; is the server at {base}? give --url "
                "http://HOST:PORT",
                err=True,
            )
            raise typer.Exit(2) from exc
        if response.status_code != 200:
            typer.echo(f"error: {_error_text(response)}", err=True)
            raise typer.Exit(1)
        typer.echo(format_replay(response.json()))


def _error_text(response: Any) -> str:
    try:
        error = response.json()["error"]
        return f"{error['message']} ({error['code']})"
    except (ValueError, KeyError, TypeError):
        return f"HTTP {response.status_code}"


def format_replay(data: dict[str, Any]) -> str:
    """The replay as text: header, the initial board, then each ply and the board after it."""
    bots = {s["seat"]: s["bot"] for s in data["seats"]}
    tc = data["time_control"]
    seats = ", ".join(f"seat {seat}: {bot}" for seat, bot in sorted(bots.items()))
    lines = [
        f"match {data['match_id']}  {data['game']}  ({data['status']})",
        f"{seats}; {tc['move_ms']} ms per move + {tc['bank_ms']} ms bank",
        "",
        data["initial"]["board"],
    ]
    resumed_at = {r["ply"] for r in data.get("resumed", [])}
    for step in data["plies"]:
        lines.append("")
        if step["ply"] in resumed_at:
            lines.append("(the server restarted here: the match went on from this ply)")
        if step["seat"] is None:
            head = f"ply {step['ply']}: chance {step['move']}"
        else:
            who = f"seat {step['seat']} ({bots.get(step['seat'], '?')})"
            head = f"ply {step['ply']}: {who} plays {escape_controls(str(step['move']))}"
            if step.get("think_ms") is not None:
                head += f"  [{step['think_ms']} ms]"
            if step.get("forced"):
                head += f"  (forced by the referee: {step['forced']})"
            if step.get("rejected"):
                head += "  (rejected: illegal)"
        lines.append(head)
        info = format_info(step.get("info"))
        if info:
            lines.append(f"  {info}")
        if step.get("board"):
            lines.append(step["board"])
    lines.append("")
    result = data.get("result")
    if result is None:
        lines.append("no result yet")
    else:
        fault = (
            f", at fault: seat {result['at_fault']}" if result.get("at_fault") is not None else ""
        )
        lines.append(
            f"result: {result.get('payoffs')}  termination: {result['termination']}{fault}"
        )
    if data["verified"] is True:
        lines.append("verified: the stored result re-derives from the stored moves")
    elif data["verified"] is False:
        lines.extend(f"NOT VERIFIED: {p}" for p in data["problems"])
    return "\n".join(lines)


#: At most this many moves of a principal variation, and characters of a comment, are shown.
PV_SHOWN = 8
COMMENT_SHOWN = 80


def format_info(info: dict[str, Any] | None) -> str:
    """A move's info (what the bot sent with it) in one line, or "" when it sent none.

    >>> format_info({"depth": 6, "score": 0.25, "nodes": 1200, "pv": ["4", "4", "3"]})
    'depth 6  score 0.25  nodes 1200  pv 4 4 3'
    >>> format_info({"comment": "book move"})
    'comment "book move"'
    """
    if not info:
        return ""
    parts = []
    for key in ("depth", "score", "nodes"):
        if info.get(key) is not None:
            parts.append(f"{key} {info[key]:g}" if key == "score" else f"{key} {info[key]}")
    pv = info.get("pv") or []
    if pv:
        more = f" ... ({len(pv)} moves)" if len(pv) > PV_SHOWN else ""
        parts.append("pv " + " ".join(escape_controls(str(m)) for m in pv[:PV_SHOWN]) + more)
    comment = escape_controls(" ".join(str(info.get("comment") or "").split()))
    if comment:
        if len(comment) > COMMENT_SHOWN:
            comment = comment[: COMMENT_SHOWN - 3] + "..."
        parts.append(f'comment "{comment}"')
    return "  ".join(parts)
