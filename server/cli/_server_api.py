"""The commands that ask a running server (``arena tournament``, ``arena matches``): its
address option and one REST call with the admin's or an instructor's token; and the reading of
a server's address from whatever a user pastes, which every command that reaches a server
shares (``arena register``, ``leaderboard``, ``replay``, ``verify``, ``check-bot``), so that the
bots' ``ws://HOST:PORT/ws`` works wherever ``http://HOST:PORT`` does."""

from __future__ import annotations

from typing import Any

import typer

_URL_HELP = "The server, e.g. http://127.0.0.1:8000 (or ARENA_URL)."


def url_option() -> Any:
    return typer.Option("http://127.0.0.1:8000", "--url", envvar="ARENA_URL", help=_URL_HELP)


def server_address(url: str) -> str:
    """The server's HTTP address from what a user may paste: ``http://HOST:PORT``, the same
    with a trailing ``/``, the bots' ``ws://HOST:PORT/ws`` (``wss://`` gives ``https://``), or a
    bare ``HOST:PORT``.

        >>> server_address("ws://127.0.0.1:8766/ws")
        'http://127.0.0.1:8766'
        >>> server_address("127.0.0.1:8000/")
        'http://127.0.0.1:8000'
    """
    url = url.strip()
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "http", url
    scheme = {"ws": "http", "wss": "https"}.get(scheme.lower(), scheme.lower())
    rest = rest.rstrip("/")
    rest = rest.removesuffix("/ws")  # the bots' WebSocket path, not an HTTP prefix
    return f"{scheme}://{rest}"


class ApiRefusal(Exception):
    """The server answered with a coded error (already printed): exit 1, or go on."""


def call_api(
    method: str,
    url: str,
    path: str,
    token: str | None = None,
    body: dict[str, Any] | None = None,
    *,
    expect: int = 200,
    raw: bool = False,
    go_on: bool = False,
) -> Any:
    """The server's answer (JSON, or text with ``raw``). A coded error is printed and exits 1,
    or with ``go_on`` raises ApiRefusal (the caller goes on with its next request); a server
    that cannot be reached exits 2."""
    import httpx

    base = server_address(url)
    headers = {"Authorization": f"Bearer {token.strip()}"} if token else {}
    try:
        response = httpx.request(method, base + path, json=body, headers=headers, timeout=60)
    except httpx.HTTPError as exc:
        typer.echo(f"error: cannot reach {base}: {exc}; is the server there? give --url", err=True)
        raise typer.Exit(2) from None
    if response.status_code != expect:
        try:
            error = response.json()["error"]
            typer.echo(f"error ({error['code']}): {error['message']}", err=True)
        except (ValueError, KeyError, TypeError):
            typer.echo(f"error: {base} answered {response.status_code}", err=True)
        if go_on:
            raise ApiRefusal
        raise typer.Exit(1)
    return response.text if raw else response.json()
