"""The one error vocabulary, shared by the WebSocket protocol, the REST API and the CLI.

Each code is stable: bots may switch on it. ``ERRORS[code]`` says what it means and what to do;
docs/protocol.md prints the same table.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    bad_json = "bad_json"
    binary_frame = "binary_frame"
    frame_too_large = "frame_too_large"
    unknown_type = "unknown_type"
    invalid_message = "invalid_message"
    hello_required = "hello_required"
    hello_timeout = "hello_timeout"
    unsupported_version = "unsupported_version"
    bad_token = "bad_token"
    bot_disabled = "bot_disabled"
    unknown_game = "unknown_game"
    bad_time_control = "bad_time_control"
    unknown_bot = "unknown_bot"
    unknown_challenge = "unknown_challenge"
    unknown_match = "unknown_match"
    not_in_match = "not_in_match"
    not_your_turn = "not_your_turn"
    stale_ply = "stale_ply"
    invalid_move = "invalid_move"
    illegal_move = "illegal_move"
    rate_limited = "rate_limited"
    replaced = "replaced"
    heartbeat_timeout = "heartbeat_timeout"
    slow_consumer = "slow_consumer"
    limit_reached = "limit_reached"
    shutting_down = "shutting_down"
    unauthorized = "unauthorized"
    forbidden = "forbidden"
    bad_join_code = "bad_join_code"
    join_closed = "join_closed"
    not_found = "not_found"
    bad_request = "bad_request"
    conflict = "conflict"
    internal_error = "internal_error"


#: code -> (meaning, what to do)
ERRORS: dict[ErrorCode, tuple[str, str]] = {
    ErrorCode.bad_json: (
        "The frame is not valid JSON: a syntax error, NaN or Infinity, a lone UTF-16 surrogate "
        "escape, or nesting deeper than a few hundred levels. A text frame that is not UTF-8 is "
        "fatal (close code 1007).",
        "Send one JSON object per text frame, encoded as UTF-8, with finite numbers.",
    ),
    ErrorCode.binary_frame: ("A binary frame was sent.", "Send JSON as text frames only."),
    ErrorCode.frame_too_large: (
        "The frame exceeds 64 KiB (fatal: close code 1009).",
        "Keep messages small; a move's info must fit well under 64 KiB.",
    ),
    ErrorCode.unknown_type: (
        "The 'type' field names no client message.",
        "Use one of the client message types in docs/protocol.md.",
    ),
    ErrorCode.invalid_message: (
        "A field is missing, has the wrong type, or is not allowed.",
        "Fix the message as the error text says; the schema is protocol/schema.json.",
    ),
    ErrorCode.hello_required: (
        "A message other than 'hello' came before the handshake.",
        "Send 'hello' with your token first.",
    ),
    ErrorCode.hello_timeout: (
        "No 'hello' within 10 seconds of connecting.",
        "Send 'hello' as soon as the connection opens.",
    ),
    ErrorCode.unsupported_version: (
        "The protocol version in 'hello' is not spoken by this server.",
        "Send the version printed in the error message, and update your client.",
    ),
    ErrorCode.bad_token: (
        "The token is missing or matches no bot (or was just rotated by an administrator).",
        "Use the token printed by 'arena bots create' (ask your instructor for a new one).",
    ),
    ErrorCode.bot_disabled: (
        "This bot has been disabled by an administrator (a connected bot is closed at once).",
        "Ask your instructor to enable it again.",
    ),
    ErrorCode.unknown_game: (
        "No game has that name.",
        "Use a name from GET /api/games (e.g. connect_four).",
    ),
    ErrorCode.bad_time_control: (
        "The time control is outside what the server allows.",
        "Use the defaults (omit time_control) or values within the documented limits.",
    ),
    ErrorCode.unknown_bot: (
        "No enabled bot has that name.",
        "Check the opponent's name in GET /api/bots or the leaderboard.",
    ),
    ErrorCode.unknown_challenge: (
        "No pending challenge has that id for this bot.",
        "Answer only challenges you received; they expire when the challenger leaves, and "
        "after the server's ARENA_CHALLENGE_EXPIRY_S (60 s) without every answer.",
    ),
    ErrorCode.unknown_match: (
        "No running match has that id (for a spectator, /ws/watch/{match_id}: no match at all).",
        "Use the match_id from match_start (a spectator: an id from GET /api/matches).",
    ),
    ErrorCode.not_in_match: (
        "This bot holds no seat in that match.",
        "Send moves only for matches you were started in.",
    ),
    ErrorCode.not_your_turn: (
        "It is not this bot's turn in that match.",
        "Wait for a 'turn' message before moving.",
    ),
    ErrorCode.stale_ply: (
        "The move's ply is not the ply of the current turn.",
        "Echo the ply from the latest 'turn' message.",
    ),
    ErrorCode.invalid_move: (
        "The move text does not parse in this game's notation.",
        "Send one of the strings in the turn's legal_moves.",
    ),
    ErrorCode.illegal_move: (
        "The move parses but is not legal in this position.",
        "Send one of the strings in the turn's legal_moves.",
    ),
    ErrorCode.rate_limited: (
        "Too many messages in a short time: the message named in the error text was dropped. "
        "Fatal when a flood goes on.",
        "Send it again after retry_after_ms; keep other traffic than playing low.",
    ),
    ErrorCode.replaced: (
        "Another connection logged in with the same token.",
        "Run one process per bot; this connection is closed.",
    ),
    ErrorCode.heartbeat_timeout: (
        "Nothing (no pong, no message) arrived from the bot for 3 heartbeats (45 s by default).",
        "Answer every ping at once and keep reading while you think (search in a thread); "
        "then reconnect: your matches are resynced.",
    ),
    ErrorCode.slow_consumer: (
        "The bot does not read its socket: 1000 messages (or 1 MiB) were waiting for it, or one "
        "could not be written for 30 s. A spectator falling behind its stream: 256 messages (or "
        "256 KiB) waiting for it.",
        "Read every message as it arrives, also while you think; then reconnect: your matches "
        "are resynced (a spectator's next watch_start is the match as it stands).",
    ),
    ErrorCode.limit_reached: (
        "A limit was reached: for a bot, queues waited in at once or challenges pending at "
        "once; for a spectator, the spectators of that match or of the whole server; for an "
        "analysis (/analyze), the nodes or seconds of one search, or the analyses at once.",
        "Leave a queue, or wait for a pending challenge to be answered, then ask again (a "
        "spectator: try again later; an analysis: a smaller search, or again in a moment).",
    ),
    ErrorCode.shutting_down: (
        "The server is shutting down or restarting (fatal: close code 1012, reason "
        "shutting_down). Running matches are kept: the next server on the same database "
        "resumes them where they stood.",
        "Reconnect with backoff; when the server is back your matches resync (match_start with "
        "the moves so far, then turn) and go on.",
    ),
    ErrorCode.unauthorized: (
        "The request needs a token (Authorization: Bearer ...): the admin's, or for a class "
        "the instructor's; none was sent, or it matches none.",
        "Use the admin token printed on the server's first start or set in ARENA_ADMIN_TOKEN, "
        "or the instructor token printed when the class was created.",
    ),
    ErrorCode.forbidden: (
        "The token is valid but does not reach this: an instructor's token reaches its own "
        "class and that class's bots only.",
        "Use the instructor token of that class, or the admin token.",
    ),
    ErrorCode.bad_join_code: (
        "No class has this join code (mistyped, or replaced by the instructor).",
        "Check the code with your instructor.",
    ),
    ErrorCode.join_closed: (
        "The class's join code is closed: it takes no new bots now.",
        "Ask your instructor to open it.",
    ),
    ErrorCode.not_found: ("Nothing exists at that address or id.", "Check the id or the path."),
    ErrorCode.bad_request: (
        "The HTTP request is malformed: a bad parameter, body or method.",
        "Fix the request as the error text says; the REST API is described in docs/protocol.md.",
    ),
    ErrorCode.conflict: (
        "The name is already taken, or the thing is already in the state asked for (a match "
        "to abort that is over).",
        "Choose another name, or rotate the existing bot's token instead; for a match, nothing "
        "is left to do.",
    ),
    ErrorCode.internal_error: (
        "The server failed unexpectedly; nothing was changed.",
        "Retry; if it persists, report it with the time and the message you sent.",
    ),
}
