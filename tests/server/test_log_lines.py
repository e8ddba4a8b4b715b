"""The server's own log lines read as uvicorn's: the same text, coloured or not, at every level."""

from __future__ import annotations

import logging
import logging.config

import pytest
from uvicorn.logging import DefaultFormatter

from ply_arena.server.app import log_config
from ply_arena.server.log_lines import LineFormatter

pytestmark = pytest.mark.timeout(30)


def _record(level: int) -> logging.LogRecord:
    return logging.LogRecord(
        "ply_arena.server.referee.match_runner", level, __file__, 1,
        "match %s ended: %s after %d plies", ("VeiBHMgEzIw", "normal", 31), None,
    )  # fmt: skip


@pytest.mark.parametrize("colors", [True, False])
@pytest.mark.parametrize("level", [logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR])
def test_a_line_is_uvicorns(level: int, colors: bool) -> None:
    fmt = "%(levelprefix)s %(message)s"
    expected = DefaultFormatter(fmt=fmt, use_colors=colors).format(_record(level))
    assert LineFormatter(fmt=fmt, use_colors=colors).format(_record(level)) == expected


def test_the_server_loggers_use_it() -> None:
    config = log_config()
    handler = config["loggers"]["ply_arena.server"]["handlers"][0]
    formatter = config["handlers"][handler]["formatter"]
    assert config["formatters"][formatter]["()"] == "ply_arena.server.log_lines.LineFormatter"
    assert config["formatters"][formatter]["fmt"] == "%(levelprefix)s %(message)s"
    # uvicorn's own lines keep uvicorn's formatter
    assert config["loggers"]["uvicorn"]["handlers"] == ["default"]
    assert config["formatters"]["default"]["()"] == "uvicorn.logging.DefaultFormatter"
