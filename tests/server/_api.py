"""REST calls of the tests that speak for a user with a token (the admin's, an instructor's, a
bot's or none), and the coded error they expect back."""

from __future__ import annotations

from typing import Any

import httpx
from conftest import LiveServer


def post(srv: LiveServer, path: str, token: str | None = None, **body: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return srv.api("POST", path, json=body or None, headers=headers)


def get(srv: LiveServer, path: str, token: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return srv.api("GET", path, headers=headers)


def error_of(response: httpx.Response, status: int, code: str) -> str:
    """The message of a coded error with this status and code (else the test fails)."""
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code, error
    return str(error["message"])
