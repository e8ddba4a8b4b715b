"""The format of the server's own log lines: uvicorn's (``INFO:     message``, the level in
colour on a terminal), without the copy of every record uvicorn's formatter makes.

Two lines go out for every match (its start and its end): with uvicorn's formatter they were a
visible share of a match's CPU in the server (docs/benchmarks.md, "A match's life").
"""

from __future__ import annotations

import logging

from uvicorn.logging import DefaultFormatter


class LineFormatter(DefaultFormatter):
    """uvicorn's ``DefaultFormatter`` for records nobody else formats differently: the level
    prefix is set on the record itself (ours, never shared with another formatter that would
    mind the extra attribute) rather than on a copy."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        levelname = record.levelname
        separator = " " * (8 - len(levelname))
        if self.use_colors:
            levelname = self.color_level_name(levelname, record.levelno)
        record.__dict__["levelprefix"] = levelname + ":" + separator
        return self._style.format(record)
