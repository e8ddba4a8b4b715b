"""The bearer token rule (server/api/auth.py) on a live server: only ``Authorization: Bearer
TOKEN`` authenticates, the scheme in any case, and each refusal says which token is missing or
wrong. (Who may do what with a valid token: the matrix in test_classes.py.)"""

from __future__ import annotations

from typing import Any

from conftest import LiveServer


def create(srv: LiveServer, authorization: str | None, name: str) -> Any:
    headers = {} if authorization is None else {"Authorization": authorization}
    return srv.api("POST", "/api/bots", json={"name": name}, headers=headers)


def test_only_a_bearer_token_authenticates(live_server: LiveServer) -> None:
    token = live_server.admin_token
    for authorization in (f"Basic {token}", f"Token {token}", token, f"Bearer{token}"):
        refused = create(live_server, authorization, "never")
        assert refused.status_code == 401, (authorization, refused.text)
        assert refused.json()["error"]["code"] == "unauthorized"
    for i, authorization in enumerate((f"Bearer {token}", f"bearer {token}", f"BEARER  {token}")):
        made = create(live_server, authorization, f"bot-{i}")
        assert made.status_code == 201, (authorization, made.text)


def test_each_refusal_says_what_is_missing(live_server: LiveServer) -> None:
    for authorization in (None, "Bearer", "Basic"):
        refused = create(live_server, authorization, "never")
        assert refused.status_code == 401
        assert refused.json()["error"]["message"] == (
            "missing admin token: send Authorization: Bearer <token>"
        )
    wrong = create(live_server, "Bearer not-the-admin-token", "never")
    assert (wrong.status_code, wrong.json()["error"]["message"]) == (
        401,
        "the admin token is not valid",
    )
    # Where an instructor's token would do too, the refusals say so.
    anyone = live_server.api("POST", "/api/bots/nobody/rotate")
    assert anyone.json()["error"]["message"] == (
        "missing admin or instructor token: send Authorization: Bearer <token>"
    )
    wrong = live_server.api(
        "POST", "/api/bots/nobody/rotate", headers={"Authorization": "Bearer nope"}
    )
    assert (wrong.status_code, wrong.json()["error"]["message"]) == (
        401,
        "the token is neither the admin's nor an instructor's",
    )
