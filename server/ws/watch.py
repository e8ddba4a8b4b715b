"""The spectators' WebSocket, ``/ws/watch/{match_id}``, mounted by the app factory.

No token: match records are public over REST already, and the stream shows no more than the
players see (protocol/spectator.py). One connection watches one match:

1. Refusals, each a fatal coded ``error`` and a close: the server is shutting down
   (``shutting_down``, 1012); too many spectators on the server or on that match
   (``limit_reached``, 1008); no match has that id (``unknown_match``, 1008).
2. The first message is ``watch_start``, the match as it stands. A running match is then
   streamed (server/spectate: the runner publishes, the hub writes) until its ``match_end``,
   and the server closes normally (1000). A match that is over gets its ``watch_start`` with the
   result (read from the stored record once its runner is gone) and the normal close at once.
3. What the spectator sends: ``{"type": "ping"}`` is answered ``pong`` (a page behind a proxy
   may keep the connection alive with it); anything else is answered with a non-fatal coded
   error and otherwise ignored, within the bots' rate limit (beyond: dropped; a flood that goes
   on: fatal ``rate_limited``). A frame over 64 KiB or not UTF-8 is closed by the transport
   (server/transport.py), as for bots.
4. A spectator that falls behind is dropped with ``slow_consumer`` (server/spectate/watcher.py);
   it may reconnect: its new ``watch_start`` is current.

Closing waits ``CLOSE_GRACE_S`` at most for the close to be written; a peer that does not read
has its connection aborted then, so that neither memory nor the server's shutdown waits on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from ply_arena.protocol.errors import ErrorCode
from ply_arena.protocol.messages import MAX_NAME_CHARS, ErrorMessage, Ping, Pong
from ply_arena.protocol.wire import WireError, clip, parse_client_frame
from ply_arena.server.api.errors import error_response
from ply_arena.server.referee import Referee
from ply_arena.server.repositories import instances as instance_repo
from ply_arena.server.repositories import matches as match_repo
from ply_arena.server.spectate import SpectatorHub, Watcher
from ply_arena.server.spectate.frames import text_frames
from ply_arena.server.spectate.record import snapshot_from_record
from ply_arena.server.spectate.watcher import CLOSE_RESTART
from ply_arena.server.transport import TransportHandle, transport_handle
from ply_arena.server.ws.session import CLOSE_GRACE_S, TokenBucket

log = logging.getLogger(__name__)

#: What a spectator may send, said in every refusal of anything else.
ONLY_PING = 'a spectator sends only {"type": "ping"} (answered with pong); this was ignored'


async def watch_websocket(websocket: WebSocket) -> None:
    """Accept the connection and stream the match until it is over or the spectator leaves."""
    referee: Referee = websocket.app.state.referee
    hub = referee.spectators
    match_id: str = websocket.path_params["match_id"]
    await websocket.accept()
    handle = transport_handle(websocket.scope)
    if handle is None:  # only under a server without server/transport.py's protocol
        await websocket.send_text(
            ErrorMessage(
                code=ErrorCode.internal_error,
                message="spectating needs the server `arena serve` runs",
                fatal=True,
            ).model_dump_json()
        )
        await websocket.close(1011)
        return
    client = websocket.scope.get("client")
    watcher = Watcher(handle, hub.limits, f"{client[0]}:{client[1]}" if client else "?")
    # Echoed in errors only when it could be a match's id: nothing long is sent back.
    watcher.match_id = match_id if len(match_id) <= MAX_NAME_CHARS else None
    try:
        await _watch(websocket, referee, watcher, handle, match_id)
    except Exception:
        log.exception("spectator %s of match %s failed", watcher.peer, watcher.match_id)
        handle.abort()
    finally:
        hub.disconnect(watcher)
        watcher.finished.set()


async def _watch(
    websocket: WebSocket,
    referee: Referee,
    watcher: Watcher,
    handle: TransportHandle,
    match_id: str,
) -> None:
    hub = referee.spectators
    refusal = hub.refusal(match_id)
    if referee.closing:
        watcher.fail(
            ErrorCode.shutting_down,
            "the server is shutting down; reconnect later",
            close_code=CLOSE_RESTART,
        )
    elif refusal is not None:
        watcher.fail(ErrorCode.limit_reached, refusal)
    else:
        hub.connect(watcher)
        await _start(referee, hub, watcher, match_id)
    if not watcher.over:
        await _serve(websocket, watcher, referee)
    await _close(websocket, handle, watcher.close_code)


async def _start(referee: Referee, hub: SpectatorHub, watcher: Watcher, match_id: str) -> None:
    """Send ``watch_start``; subscribe the watcher if the match is still running."""
    runner = referee.running_match(match_id) if len(match_id) <= MAX_NAME_CHARS else None
    if runner is not None:
        # No await from the snapshot to the subscription: every event is either in the
        # snapshot or published to this watcher afterwards, never both.
        watcher.start(text_frames([runner.snapshot_json()]))
        if runner.result is None:
            hub.subscribe(match_id, watcher)
        else:
            watcher.finish()  # its result is stored and sent: the stream is already over
        return
    record = None
    if watcher.match_id is not None:
        async with referee.database.session() as session:
            if referee.directory is not None:
                host = await instance_repo.live_owner(session, match_id)
                if host is not None and host != referee.owner:
                    # Played by another process: its snapshot and messages come from there.
                    referee.directory.watch(match_id, host, watcher)
                    return
            record = await match_repo.get_match(session, match_id)
    if record is None:
        watcher.fail(
            ErrorCode.unknown_match,
            f"no match has id {clip(repr(match_id))}; the ids are in GET /api/matches",
        )
        return
    # Re-deriving the final position of a match a crash cut short is CPU work: not on the loop.
    snapshot = await asyncio.to_thread(snapshot_from_record, record)
    watcher.start(text_frames([snapshot.model_dump_json()]))
    watcher.finish()


async def _serve(websocket: WebSocket, watcher: Watcher, referee: Referee) -> None:
    """Read what the spectator sends until its stream is over or it leaves."""
    reader = asyncio.create_task(_read(websocket, watcher, referee))
    over = asyncio.create_task(watcher.done.wait())
    try:
        await asyncio.wait((reader, over), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (reader, over):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def _read(websocket: WebSocket, watcher: Watcher, referee: Referee) -> None:
    settings = referee.settings
    bucket = TokenBucket(settings.rate_limit_per_s, settings.rate_limit_burst)
    strikes = 0
    while True:
        try:
            message = await websocket.receive()
        except RuntimeError:
            message = {"type": "websocket.disconnect"}
        if message["type"] == "websocket.disconnect":
            watcher.gone()
            return
        now = time.monotonic()
        bucket.refill(now)
        if bucket.full():
            strikes = 0  # forgiven only after a quiet spell (burst / rate seconds)
        if not bucket.take(now):
            strikes += 1
            if strikes > bucket.burst:
                watcher.fail(ErrorCode.rate_limited, "too many messages; closing the connection")
                return
            continue  # dropped, not answered: a spectator has nothing to send again
        text = message.get("text")
        if text is None:
            _error(watcher, ErrorCode.binary_frame, f"binary frames are refused; {ONLY_PING}")
            continue
        try:
            parsed = parse_client_frame(text)
        except WireError as e:
            if e.code is ErrorCode.unknown_type:
                _error(watcher, e.code, ONLY_PING)
            else:
                _error(watcher, e.code, e.message)
            continue
        if isinstance(parsed, Ping):
            watcher.push(text_frames([Pong(id=parsed.id).model_dump_json()]), 1)
        else:
            _error(watcher, ErrorCode.invalid_message, ONLY_PING)


def _error(watcher: Watcher, code: ErrorCode, message: str) -> None:
    error = ErrorMessage(code=code, message=message, fatal=False, match_id=watcher.match_id)
    watcher.push(text_frames([error.model_dump_json()]), 1)


async def _close(websocket: WebSocket, handle: TransportHandle, code: int | None) -> None:
    """Close with ``code`` (None: the peer is gone already), within CLOSE_GRACE_S."""
    if code is None:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CLOSE_GRACE_S
    # The close waits while the transport's buffer is over its high-water mark (a peer that
    # does not read): bounded, like what follows.
    # (A peer that left meanwhile: WebSocketDisconnect, or RuntimeError once Starlette knows.)
    with contextlib.suppress(TimeoutError, RuntimeError, OSError, WebSocketDisconnect):
        await asyncio.wait_for(websocket.close(code), CLOSE_GRACE_S)
    while handle.write_buffer_size() and loop.time() < deadline:
        await asyncio.sleep(0.05)
    if handle.write_buffer_size():
        # The peer does not read what is left (its error, the close): drop the connection
        # rather than keep its buffer, or keep the server's shutdown waiting.
        handle.abort()


async def watch_http_only(request: Request) -> JSONResponse:
    """426 at a spectator's address for an HTTP request: say what the address is for."""
    return error_response(
        426,
        ErrorCode.bad_request,
        "this is where spectators connect over WebSocket (ws://HOST:PORT/ws/watch/MATCH_ID; "
        "docs/protocol.md, 'Watching a match'); the match record is at /api/matches/MATCH_ID",
        {"Upgrade": "websocket"},
    )
