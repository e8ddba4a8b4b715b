"""The pages' Jinja2 environment: autoescaped templates, asset URLs that change with the asset,
and JSON that is safe inside a page."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.templating import Jinja2Templates

from ply_arena.protocol.wire import escape_controls
from ply_arena.reference_agents.trace._model import fmt
from ply_arena.server.pages import words

# resolve(): in a strict editable install this file is a link; the templates and static files
# are read from the folder it points to, so a new one is served without reinstalling.
HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

# Every {{ value }} is HTML-escaped: bot names, comments and every other text a bot or a user
# chose reach the pages only through here (tests send <script> in each of them).
_env = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
templates = Jinja2Templates(env=_env)


@cache
def static_url(name: str) -> str:
    """``/static/NAME?v=HASH``: browsers may keep an asset for long, since a new version of it
    has a new address."""
    digest = hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:10]
    return f"/static/{name}?v={digest}"


def json_island(data: Any) -> Markup:
    """JSON to put inside ``<script type="application/json">``: ``<``, ``>`` and ``&`` escaped
    as ``\\u003c`` etc., so that no text in it (a bot's comment with ``</script>``) can end the
    element; JSON.parse reads them back unchanged."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    text = (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
    return Markup(text)


def compile_templates() -> None:
    """Compile every template now (Jinja2 compiles on first use): done at startup, before the
    objects of a started server are frozen out of the collector's sight."""
    for name in _env.list_templates():
        _env.get_template(name)


def render(
    request: Request, name: str, context: dict[str, Any], *, status: int = 200
) -> HTMLResponse:
    response = templates.TemplateResponse(request, name, context, status_code=status)
    assert isinstance(response, HTMLResponse)
    return response


_env.globals.update(static_url=static_url, game_title=words.game_title)
_env.filters.update(
    game_title=words.game_title,
    points=words.points,
    score=words.score,
    game_score=words.game_score,
    think_time=words.think_time,
    json_island=json_island,
    # Control characters a bot sent (NUL, ESC, ...) shown as escapes, not written raw.
    printable=escape_controls,
    # A value of a search as the text trace writes it: 3, -0.02715, +inf, (1, 2, 6).
    trace_value=fmt,
    # An agent's option as written on the command line: true, not True.
    option=lambda v: str(v).lower() if isinstance(v, bool) else fmt(v),
)
