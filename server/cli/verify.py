"""``arena verify``: check a match record from scratch, offline.

    arena verify XKokkwqBv5c.json                  # a record downloaded from the server
    arena verify XKokkwqBv5c --url http://HOST:PORT  # fetched from a server first
    curl -s URL/api/matches/ID/record | arena verify -

The check is :func:`ply_arena.protocol.verify.verify_record`: the seed against the commitment, every
die re-rolled from the seed, every move replayed through ``games``, the result confirmed. Exit
status 0 when the record holds, 1 when something disagrees (each thing printed), 2 when there is
no record to read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer


def register(app: typer.Typer) -> None:
    @app.command("verify")
    def verify(
        source: str = typer.Argument(
            ...,
            metavar="RECORD",
            help="A record file (GET /api/matches/ID/record), - for standard input, or a match "
            "id with --url.",
        ),
        url: str | None = typer.Option(
            None,
            "--url",
            metavar="http://HOST:PORT",
            help="Fetch the record of the match id RECORD from this server first.",
        ),
    ) -> None:
        """Check a match record from scratch: dice, moves and result (works offline).

        The dice against the seed, every move against the rules, the result against the end.
        Works on a downloaded record too."""
        from ply_arena.protocol.verify import report, verify_record

        record = _fetch(source, url) if url else _read(source)
        found = verify_record(record)
        for line in report(found):
            typer.echo(line)
        raise typer.Exit(0 if found.ok else 1)


def _read(source: str) -> dict[str, Any]:
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text()
    except OSError as exc:
        hint = " (a match id? add --url http://HOST:PORT)" if not Path(source).suffix else ""
        typer.echo(f"error: cannot read {source}: {exc.strerror}{hint}", err=True)
        raise typer.Exit(2) from None
    return _parse(text, source)


def _fetch(match_id: str, url: str) -> dict[str, Any]:
    import httpx

    from ply_arena.server.cli._server_api import server_address

    base = server_address(url)
    try:
        response = httpx.get(f"{base}/api/matches/{match_id}/record", timeout=30)
    except httpx.HTTPError as exc:
        typer.echo(f"error: cannot reach {base}: {exc}", err=True)
        raise typer.Exit(2) from exc
    if response.status_code != 200:
        typer.echo(
            f"error: {base} answered {response.status_code}: {response.text[:200]}", err=True
        )
        raise typer.Exit(2)
    return _parse(response.text, f"{base}/api/matches/{match_id}/record")


def _parse(text: str, source: str) -> dict[str, Any]:
    try:
        record = json.loads(text)
    except ValueError as exc:
        typer.echo(f"error: {source} is not JSON: {exc}", err=True)
        raise typer.Exit(2) from None
    if not isinstance(record, dict) or "moves" not in record:
        typer.echo(
            f"error: {source} is not a match record (GET /api/matches/ID/record gives one)",
            err=True,
        )
        raise typer.Exit(2)
    return record
