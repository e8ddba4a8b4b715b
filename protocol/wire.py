"""Reading one client frame: JSON text in, a client message or a coded refusal out.

The server calls :func:`parse_client_frame` on every text frame a bot sends. It validates the
text in one pass with pydantic's JSON parser, in **strict** mode (``"ply": "0"`` is a string,
not an integer), and turns every way a frame can be wrong into one :class:`WireError` with the
stable code a bot can switch on:

- not JSON, nested deeper than the parser allows (a few hundred levels), a lone UTF-16
  surrogate escape, NaN, Infinity or a number too large for a double -> ``bad_json``;
- not an object, or no ``type`` -> ``invalid_message``; a ``type`` that names no client
  message -> ``unknown_type``;
- a time control outside the limits -> ``bad_time_control``;
- any other field missing, of the wrong type, out of range or unknown -> ``invalid_message``.

The error names the match when the frame did (``match_id``). A move whose only fault is in its
optional ``info`` is not lost: the error comes with the move without ``info``
(``WireError.salvaged``), which the server plays.

The error text names the field and what was expected, and never echoes more than a few dozen
characters of what was sent: a hostile frame cannot make the answer large.

    >>> parse_client_frame('{"type": "ping", "id": 7}')
    Ping(type='ping', id=7)
    >>> try:
    ...     parse_client_frame('{"type": "move", "match_id": "m", "ply": "0", "move": "a1"}')
    ... except WireError as e:
    ...     print(e.code.value, "|", e.message)
    invalid_message | invalid 'move' message: ply: Input should be a valid integer (got "0")
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import ValidationError

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.messages import MAX_NAME_CHARS, ClientMessage, client_message_adapter

#: At most this many characters of anything the client sent are quoted back in an error.
ECHO_CHARS = 40
#: At most this many field errors are described in one error message.
MAX_FIELD_ERRORS = 4


class WireError(ValueError):
    """A frame the server refuses: ``code`` (an ErrorCode) and a message for humans.

    ``match_id`` names the match the frame was about, when it said so. ``salvaged`` is set when
    the refused part was only a move's optional ``info``: the move itself (without ``info``) is
    still to be played, and the error is a warning that goes with it.
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        match_id: str | None = None,
        salvaged: ClientMessage | None = None,
    ) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message
        self.match_id = match_id
        self.salvaged = salvaged


def parse_client_frame(text: str | bytes) -> ClientMessage:
    """The client message in ``text``; WireError with its code when the frame is refused."""
    try:
        return client_message_adapter.validate_json(text, strict=True)
    except ValidationError as error:
        raise _refusal(error, text) from None


def _refusal(error: ValidationError, text: str | bytes) -> WireError:
    errors = error.errors(include_url=False)
    first = errors[0]
    kind = first["type"]
    if kind == "json_invalid":
        why = first["msg"].removeprefix("Invalid JSON: ")  # pydantic's own "not valid JSON"
        if "surrogate" in why or "hex escape" in why:
            why = (
                "a \\u escape is cut short, or is a lone UTF-16 surrogate (such as \\ud800) "
                f"[{why}]"
            )
        return WireError(ErrorCode.bad_json, f"not valid JSON: {clip(why, 120)}")
    if kind in ("dict_type", "model_type", "model_attributes_type") and not first["loc"]:
        return WireError(ErrorCode.invalid_message, "a frame must be one JSON object")
    # Past this point the frame is a JSON object: read it once more, on this error path only,
    # for what the message says it is about.
    data = _peek(text)
    if kind in ("union_tag_not_found", "union_tag_invalid"):
        tag = data.get("type") if data is not None else None
        if not isinstance(tag, str):
            return WireError(
                ErrorCode.invalid_message, "type: required, a string naming the message"
            )
        expected = first.get("ctx", {}).get("expected_tags", "")
        return WireError(
            ErrorCode.unknown_type,
            f"unknown message type {clip(tag)!r}; client types are {expected}",
        )
    match_id = data.get("match_id") if data is not None else None
    # Quoted back only when it could be a match's id: nothing long is echoed.
    match_id = match_id if isinstance(match_id, str) and len(match_id) <= MAX_NAME_CHARS else None
    message_type = str(first["loc"][0]) if first["loc"] else "message"
    not_finite = [e for e in errors if _not_finite(e.get("input"))]
    if not_finite:
        # NaN and Infinity are not JSON, and 1e999 is no number a JSON reader can keep.
        where = ".".join(clip(str(x)) for x in not_finite[0]["loc"][1:])
        code, why = (
            ErrorCode.bad_json,
            f"{where}: numbers must be finite (NaN, Infinity and numbers too large for a "
            "double are not JSON numbers)",
        )
    elif any(len(e["loc"]) > 1 and e["loc"][1] == "time_control" for e in errors):
        code, why = ErrorCode.bad_time_control, describe(errors)
    else:
        code, why = ErrorCode.invalid_message, describe(errors)
    salvaged = _without_info(errors, data)
    if salvaged is not None:
        return WireError(
            code,
            f"info refused and dropped (the move itself was played): {why}",
            match_id=match_id,
            salvaged=salvaged,
        )
    return WireError(code, f"invalid {message_type!r} message: {why}", match_id=match_id)


def _peek(text: str | bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _not_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _without_info(errors: list[Any], data: dict[str, Any] | None) -> ClientMessage | None:
    """A move whose only faults are in its optional ``info``: the move without it, else None.

    A search detail (a NaN score, a long comment) must not cost a bot its move and its game.
    """
    if data is None or data.get("type") != "move":
        return None
    if not all(len(e["loc"]) > 2 and e["loc"][:2] == ("move", "info") for e in errors):
        return None
    rest = {k: v for k, v in data.items() if k != "info"}
    try:
        return client_message_adapter.validate_python(rest, strict=True)
    except ValidationError:
        return None


def describe(errors: list[Any]) -> str:
    """Which field is wrong and what was expected, e.g. ``ply: Input should be ... (got '0')``.

    ``errors`` is ``ValidationError.errors()`` of a union (the first location item names the
    message type and is left out).
    """
    parts = []
    for item in errors[:MAX_FIELD_ERRORS]:
        loc = ".".join(clip(str(x)) for x in item["loc"][1:]) or "message"
        detail = item["msg"]
        if item["type"] not in ("missing", "extra_forbidden"):
            detail += f" (got {clip(as_json(item.get('input')))})"
        parts.append(f"{loc}: {detail}")
    more = len(errors) - MAX_FIELD_ERRORS
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def as_json(value: Any) -> str:
    """A value as the client wrote it (JSON), for quoting it back: ``null``, ``true``, ``"0"``."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def escape_controls(text: str) -> str:
    """``text`` with every control or invisible character (newline, escape, NUL, a right-to-left
    override) written as its escape, so that no client's text can forge lines or drive a
    terminal."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def clip(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` cut to ``limit`` characters, with ``...`` when it was longer."""
    return text if len(text) <= limit else text[:limit] + "..."
