"""``arena replay``: print a stored match move by move as text boards."""

from __future__ import annotations

from typing import Any

import typer


def register(app: typer.Typer) -> None:
    @app.command("replay")
    def replay(
        match_id: str = typer.Argument(..., help="The match id (from GET /api/matches)."),
        url: str = typer.Option("http://127.0.0.1:8000", "--url", help="The arena server."),
    ) -> None:
        """Print a match move by move, re-derived by the server from the stored moves."""
        import httpx

        address = f"{url.rstrip('/')}/api/matches/{match_id}/replay"
        try:
            response = httpx.get(address, timeout=30)
        except httpx.HTTPError as exc:
            typer.echo(f"error: cannot reach {url}: {exc}", err=True)
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
    for step in data["plies"]:
        lines.append("")
        if step["seat"] is None:
            head = f"ply {step['ply']}: chance {step['move']}"
        else:
            who = f"seat {step['seat']} ({bots.get(step['seat'], '?')})"
            head = f"ply {step['ply']}: {who} plays {step['move']}"
            if step.get("think_ms") is not None:
                head += f"  [{step['think_ms']} ms]"
            if step.get("forced"):
                head += f"  (forced by the referee: {step['forced']})"
            if step.get("rejected"):
                head += "  (rejected: illegal)"
        lines.append(head)
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
