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

The error text names the field and what was expected, and never echoes more than a few dozen
characters of what was sent: a hostile frame cannot make the answer large.

    >>> parse_client_frame('{"type": "ping", "id": 7}')
    Ping(type='ping', id=7)
    >>> try:
    ...     parse_client_frame('{"type": "move", "match_id": "m", "ply": "0", "move": "a1"}')
    ... except WireError as e:
    ...     print(e.code.value, "|", e.message)
    invalid_message | invalid 'move' message: ply: Input should be a valid integer (got '0')
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from protocol.errors import ErrorCode
from protocol.messages import ClientMessage, client_message_adapter

#: At most this many characters of anything the client sent are quoted back in an error.
ECHO_CHARS = 40
#: At most this many field errors are described in one error message.
MAX_FIELD_ERRORS = 4


class WireError(ValueError):
    """A frame the server refuses: ``code`` (an ErrorCode) and a message for humans."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message


def parse_client_frame(text: str | bytes) -> ClientMessage:
    """The client message in ``text``; WireError with its code when the frame is refused."""
    try:
        return client_message_adapter.validate_json(text, strict=True)
    except ValidationError as error:
        raise _refusal(error) from None


def _refusal(error: ValidationError) -> WireError:
    errors = error.errors(include_url=False)
    first = errors[0]
    kind = first["type"]
    if kind == "json_invalid":
        return WireError(ErrorCode.bad_json, f"not valid JSON: {clip(first['msg'], 120)}")
    if kind in ("dict_type", "model_type", "model_attributes_type") and not first["loc"]:
        return WireError(ErrorCode.invalid_message, "a frame must be one JSON object")
    if kind == "union_tag_not_found":
        return WireError(ErrorCode.invalid_message, "type: required, a string naming the message")
    if kind == "union_tag_invalid":
        tag = first.get("ctx", {}).get("tag", "")
        expected = first.get("ctx", {}).get("expected_tags", "")
        return WireError(
            ErrorCode.unknown_type,
            f"unknown message type {clip(tag)!r}; client types are {expected}",
        )
    if any(e["type"] == "finite_number" for e in errors):
        # NaN and Infinity are not JSON, and 1e999 is no number a JSON reader can keep.
        where = next(e for e in errors if e["type"] == "finite_number")["loc"][1:]
        return WireError(
            ErrorCode.bad_json,
            f"{'.'.join(clip(str(x)) for x in where)}: numbers must be finite "
            "(NaN, Infinity and numbers too large for a double are not JSON numbers)",
        )
    message_type = str(first["loc"][0]) if first["loc"] else "message"
    code = ErrorCode.invalid_message
    if any(len(e["loc"]) > 1 and e["loc"][1] == "time_control" for e in errors):
        code = ErrorCode.bad_time_control
    return WireError(code, f"invalid {message_type!r} message: {describe(errors)}")


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
            detail += f" (got {clip(repr(item.get('input')))})"
        parts.append(f"{loc}: {detail}")
    more = len(errors) - MAX_FIELD_ERRORS
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def clip(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` cut to ``limit`` characters, with ``...`` when it was longer."""
    return text if len(text) <= limit else text[:limit] + "..."
