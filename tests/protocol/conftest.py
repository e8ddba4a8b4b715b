"""Reuse the server fixtures of tests/server/conftest.py (a real uvicorn server + bot tokens).

That conftest only applies under tests/server/, so it is loaded here by path and its fixtures
re-exported; see its docstring for how to use ``live_server``, ``start_server`` and ``create_bot``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def _server_fixtures() -> ModuleType:
    name = "_arena_server_fixtures"
    if name in sys.modules:
        return sys.modules[name]
    path = Path(__file__).resolve().parents[1] / "server" / "conftest.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_fixtures = _server_fixtures()
admin_token = _fixtures.admin_token
db_url = _fixtures.db_url
start_server = _fixtures.start_server
live_server = _fixtures.live_server
create_bot = _fixtures.create_bot
LiveServer = _fixtures.LiveServer
