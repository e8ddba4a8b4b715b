"""Three ``arena serve`` processes started at the same moment on one fresh PostgreSQL database
(as ``arena serve --workers 3`` starts them): all come up, the schema is migrated once, one admin
token is made (and printed once) and serves on all three, and each house bot is one row."""

from __future__ import annotations

import re

import httpx
import pytest
from _server_process import ServerProcess, launch_server_process, wait_serving
from _sql import rows as stored_rows

pytestmark = pytest.mark.postgresql_only

#: Several house bots, each made in the same start transaction by every process.
HOUSE = "tic_tac_toe=random,alphabeta:depth=1;connect_four=random;othello=random"
PRINTED = re.compile(r"Admin token \(shown once[^)]*\): (\S+)")


@pytest.mark.timeout(120)
async def test_three_processes_starting_at_once_share_one_admin_token_and_house(
    db_url: str,
) -> None:
    servers: list[ServerProcess] = []
    try:
        servers = [
            # The default lease (6 s): three processes starting on two cores hold up each
            # other's event loops for seconds, longer than the tests' usual 1.5 s lease.
            launch_server_process(db_url, admin_token=None, house_bots=HOUSE)
            for _ in range(3)
        ]
        for server in servers:
            wait_serving(server, timeout_s=60)
        printed = [m.group(1) for s in servers for m in PRINTED.finditer(s.log)]
        assert len(printed) == 1, [s.log for s in servers]
        (token,) = printed
        for i, server in enumerate(servers):
            answer = httpx.post(
                f"{server.url}/api/bots",
                json={"name": f"made-on-{i}"},
                headers={"Authorization": f"Bearer {token}"},
                timeout=10,
            )
            assert answer.status_code == 201, (answer.text, server.log)
        assert await stored_rows(db_url, "SELECT count(*) FROM admin_tokens") == [(1,)]
        house = await stored_rows(
            db_url, "SELECT name, count(*) FROM bots WHERE house GROUP BY name ORDER BY name"
        )
        assert house == [("house-alphabeta-d1", 1), ("house-random", 1)], house
        live = await stored_rows(
            db_url, "SELECT DISTINCT pid FROM instances WHERE stopped_at IS NULL"
        )
        assert sorted(pid for (pid,) in live) == sorted(s.proc.pid for s in servers)
        for server in servers:
            assert "Traceback" not in server.log, server.log
    finally:
        for server in servers:
            server.stop()
