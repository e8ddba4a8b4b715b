"""The verdicts of ``arena check-bot``: pure functions from what the session observed
(:class:`~ply_arena.server.checkbot.session.Observations`: the relay's frames, the stored match
records) to a checklist of :class:`Item`.

Each item judges one thing only, so that a bot with one bug fails one item: a move refused for a
stale ``ply`` is the ply item's, even though the turn then times out; a move sent after its turn
was over is the time item's, although the arena answers it with ``stale_ply``; the forced step's
50 ms clock counts for no item but ``forced``. What a bot did on the wire comes from the relay;
in direct mode (no relay) only the records are known, and the items that need the wire are
skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from ply_arena.protocol.messages import PROTOCOL_VERSION, WireInt
from ply_arena.server.checkbot.relay import Frame, Link
from ply_arena.server.checkbot.session import (
    STEP_CHANCE,
    STEP_FORCED,
    STEP_PLAIN,
    STEP_RECONNECT,
    STEP_TWO,
    Observations,
    PlayedMatch,
)

Status = Literal["pass", "fail", "skip"]

DOCS = "docs/protocol.md"


@dataclass(frozen=True)
class Item:
    key: str
    title: str
    status: Status
    #: What the bot did, in a sentence or a few.
    did: str
    #: What it should do instead (failures only), with where the docs say so.
    should: str = ""


TITLES = {
    "handshake": "handshake and protocol version",
    "accepts": "accepts the checker's challenges (direct mode only)",
    "ping": "answers ping",
    "legal": "plays legal moves",
    "ply": "echoes match_id and ply",
    "time": "moves within the time limit",
    "forced": "plays on after forced_move",
    "match_end": "plays on after match_end",
    "two": "plays two matches at once",
    "reconnect": "resyncs after a reconnect",
    "chance": "survives chance events (backgammon)",
    "connected": "stays connected",
}

#: Answering a ping later than this is still an answer, but said.
SLOW_PONG_MS = 1000.0
#: A ping sent this close to the end of its connection may go unanswered (the session waits
#: up to 2 s for the last pongs before it ends).
PING_GRACE_S = 1.0


# --- what the bot did on the wire, turn by turn ----------------------------------------------


@dataclass
class SentMove:
    at: float
    link: int
    match_id: Any
    ply: Any
    move: Any
    #: answer: the ply of a turn it was on; late: of a turn already over (forced, timed out);
    #: wrong: any other ply; unknown: a match_id that is not one of its matches; after_end: a
    #: match that had ended.
    kind: Literal["answer", "late", "wrong", "unknown", "after_end"]
    #: Its open turns in that match when it sent this (the plies it should have echoed).
    open_plies: tuple[int, ...] = ()
    #: The arena's error about this move, if one came: (code, message).
    error: tuple[str, str] | None = None


@dataclass
class BotTurn:
    match_id: str
    ply: int
    opened_at: float
    link: int
    #: The relay cut the connection instead of passing this turn on (the reconnect step).
    cut: bool = False
    resent: int = 0
    closed: Literal["answered", "forced", "ended"] | None = None
    closed_at: float | None = None
    answer: SentMove | None = None
    late: SentMove | None = None
    wrong: list[SentMove] = field(default_factory=list)
    forced_reason: str | None = None
    #: From the record: "played", "timeout", "illegal_move", "disconnect", "resign" (the latter
    #: three: the match ended there, the bot at fault), or None (the match ended otherwise).
    outcome: str | None = None

    @property
    def responded(self) -> bool:
        return self.answer is not None or self.late is not None or bool(self.wrong)

    def first_response_at(self) -> float | None:
        times = [m.at for m in (self.answer, self.late, *self.wrong) if m is not None]
        return min(times) if times else None


@dataclass
class Wire:
    """The bot's side of the session, rebuilt from the relay's frames."""

    turns: dict[str, list[BotTurn]] = field(default_factory=dict)
    moves: list[SentMove] = field(default_factory=list)
    #: match_id -> when its match_end was passed on to the bot.
    ended: dict[str, float] = field(default_factory=dict)
    #: (match_id, ply, at, reason) of every forced_move passed on.
    forced: list[tuple[str, int, float, str]] = field(default_factory=list)
    #: (match_id, at, link, ply) of every match_start passed on (resyncs included).
    starts: list[tuple[str, float, int, int]] = field(default_factory=list)

    def all_turns(self) -> list[BotTurn]:
        return [t for turns in self.turns.values() for t in turns]


def bot_links(obs: Observations) -> list[Link]:
    """The links on which the bot under test logged in, in order."""
    return [link for link in obs.links if obs.bot is not None and link.bot == obs.bot]


def read_wire(obs: Observations) -> Wire:
    """Turn by turn: which turns the bot was sent, what it answered, what became of them."""
    wire = Wire()
    links = {link.number for link in bot_links(obs)}
    known = {m.match_id for m in obs.matches}
    last_move: dict[str, SentMove] = {}  # per match, the move an error would be about
    for frame in obs.frames:
        if frame.link not in links or frame.message is None:
            continue
        message, kind, match_id = frame.message, frame.type, frame.match_id
        if frame.direction == "to_bot":
            if kind == "match_start" and match_id is not None:
                known.add(match_id)
                wire.starts.append((match_id, frame.at, frame.link, _int(message.get("ply"), 0)))
            elif kind == "turn" and match_id is not None:
                _on_turn(wire, frame, match_id, _int(message.get("ply"), -1))
            elif kind == "forced_move" and match_id is not None:
                ply, reason = _int(message.get("ply"), -1), str(message.get("reason"))
                wire.forced.append((match_id, ply, frame.at, reason))
                for turn in reversed(wire.turns.get(match_id, [])):
                    if turn.ply == ply:
                        turn.forced_reason = reason
                        if turn.closed is None:
                            turn.closed, turn.closed_at = "forced", frame.at
                        break
            elif kind == "match_end" and match_id is not None:
                wire.ended.setdefault(match_id, frame.at)
                for turn in wire.turns.get(match_id, []):
                    if turn.closed is None:
                        turn.closed, turn.closed_at = "ended", frame.at
            elif kind == "error" and match_id is not None and match_id in last_move:
                sent = last_move.pop(match_id)
                if sent.error is None:
                    sent.error = (str(message.get("code")), str(message.get("message")))
        elif kind == "move":
            sent = _on_move(wire, frame, known)
            wire.moves.append(sent)
            if isinstance(sent.match_id, str):
                last_move[sent.match_id] = sent
    for match in obs.matches:
        if match.record is not None:
            for turn in wire.turns.get(match.match_id, []):
                turn.outcome = _outcome(match, turn.ply)
    return wire


def _on_turn(wire: Wire, frame: Frame, match_id: str, ply: int) -> None:
    turns = wire.turns.setdefault(match_id, [])
    for turn in turns:
        if turn.ply == ply and turn.closed is None:
            turn.resent += 1  # the same turn again, after a reconnection
            return
    turns.append(BotTurn(match_id, ply, frame.at, frame.link, cut=frame.note == "cut"))


def _on_move(wire: Wire, frame: Frame, known: set[str]) -> SentMove:
    message = frame.message or {}
    match_id, ply = message.get("match_id"), message.get("ply")
    turns = wire.turns.get(match_id, []) if isinstance(match_id, str) else []
    open_turns = [t for t in turns if t.closed is None and not _cut_unsent(t)]
    sent = SentMove(
        frame.at,
        frame.link,
        match_id,
        ply,
        message.get("move"),
        "wrong",
        tuple(t.ply for t in open_turns),
    )
    if not isinstance(match_id, str) or match_id not in known:
        sent.kind = "unknown"
        return sent
    # The arena's own reading of the ply ("ply": 24.0 is 24): a move it accepted is an answer.
    echoed = _int(ply, -1)
    whole = echoed >= 0
    for turn in open_turns:
        if whole and turn.ply == echoed:
            sent.kind = "answer"
            turn.answer, turn.closed, turn.closed_at = sent, "answered", frame.at
            return sent
    for turn in turns:
        if whole and turn.ply == echoed and turn.answer is None and turn.late is None:
            # Its turn was over (forced, the match moved on or ended): a late answer.
            sent.kind = "late"
            turn.late = sent
            return sent
    if match_id in wire.ended:
        sent.kind = "after_end"  # nothing it was asked for: harmless
        return sent
    for turn in open_turns:
        turn.wrong.append(sent)
    return sent


def _cut_unsent(turn: BotTurn) -> bool:
    # A turn the relay held back is not the bot's to answer until the arena resends it.
    return turn.cut and turn.resent == 0


def _outcome(match: PlayedMatch, ply: int) -> str | None:
    record = match.record or {}
    for move in record.get("moves") or []:
        if move.get("ply") == ply:
            if move.get("seat") != match.bot_seat:
                return None
            return "played" if move.get("forced") is None else str(move["forced"])
    if (
        record.get("plies") == ply
        and record.get("at_fault") == match.bot_seat
        and record.get("termination") in ("timeout", "illegal_move", "disconnect", "resign")
    ):
        return str(record["termination"])
    return None


#: The server's rule for an integer a client sends (2 or 2.0; not "2", true or 2.5), strict as
#: the server parses client frames, so that the checklist reads every number as the arena did.
_WIRE_INT: TypeAdapter[int] = TypeAdapter(WireInt)


def _int(value: Any, default: int) -> int:
    try:
        return _WIRE_INT.validate_python(value, strict=True)
    except ValidationError:
        return default


# --- the items --------------------------------------------------------------------------------


def judge(obs: Observations) -> list[Item]:
    """The checklist, in the order it is printed."""
    if obs.mode == "relay" and obs.no_login is not None:
        return [_handshake(obs, None)] + [
            _skip(key, "not checked: the bot never logged in")
            for key in TITLES
            if key not in ("handshake", "accepts")
        ]
    wire = read_wire(obs) if obs.mode == "relay" else None
    return [
        _handshake(obs, wire),
        *([_accepts(obs)] if obs.mode == "direct" else []),
        _ping(obs),
        _legal(obs, wire),
        _ply(obs, wire),
        _time(obs, wire),
        _forced(obs, wire),
        _match_end(obs, wire),
        _two(obs, wire),
        _reconnect(obs, wire),
        _chance(obs, wire),
        _connected(obs),
    ]


def _pass(key: str, did: str) -> Item:
    return Item(key, TITLES[key], "pass", did)


def _fail(key: str, did: str, should: str) -> Item:
    return Item(key, TITLES[key], "fail", did, should)


def _skip(key: str, why: str) -> Item:
    return Item(key, TITLES[key], "skip", why)


def _handshake(obs: Observations, wire: Wire | None) -> Item:
    key = "handshake"
    if obs.mode == "direct":
        refused = obs.refused.get(STEP_PLAIN)
        if refused and not obs.matches:
            return _fail(
                key,
                f"not connected to the arena: the checker's challenge was refused ({refused[0]})",
                "start the bot (connected to the arena) before the check, or check it through "
                "the relay",
            )
        return _pass(
            key,
            f"the arena accepted its hello (protocol {PROTOCOL_VERSION}): it was connected "
            "(direct mode: the hello itself was not seen)",
        )
    links = bot_links(obs)
    if not links:
        story, code = _no_login_story(obs)
        return _fail(key, story, _LOGIN_ADVICE.get(code, _LOGIN_ADVICE[""]))
    problems: list[str] = []
    for link in links:
        first = _first_from_bot(obs.frames, link.number)
        hello = link.hello or {}
        if first is not None and first.type != "hello":
            problems.append(f"on connection {link.number} it sent {first.type!r} before hello")
        if hello.get("protocol") != PROTOCOL_VERSION:
            problems.append(f"its hello said protocol {hello.get('protocol')!r}")
        if link.hello_at is not None and link.hello_at - link.opened_at > 10:
            problems.append(
                f"its hello came {link.hello_at - link.opened_at:.1f} s after connecting"
            )
    first_link = links[0]
    hello = first_link.hello or {}
    client = f" from {hello['client']!r}" if hello.get("client") else ""
    delay = (first_link.hello_at or first_link.opened_at) - first_link.opened_at
    did = (
        f"hello with protocol {hello.get('protocol')}{client} {delay * 1000:.0f} ms after "
        f"connecting; the arena welcomed it as {obs.bot}"
    )
    if len(links) > 1:
        did += " (and again each time it reconnected)"
    if problems:
        return _fail(
            key,
            "; ".join(problems),
            f"send hello first, with protocol {PROTOCOL_VERSION} ({DOCS}#connecting)",
        )
    return _pass(key, did)


def _accepts(obs: Observations) -> Item:
    """Direct mode: the bot answers the checker's challenges itself (the relay is not there
    to accept them for it)."""
    key = "accepts"
    # A second challenge declined in the two-at-once step is that item's.
    declined = [
        f"{step}: {why}"
        for step, reasons in obs.declined.items()
        if step != STEP_TWO or len(reasons) == 2
        for why in dict.fromkeys(reasons)
    ]
    unanswered = [note for note in obs.notes if "got no answer" in note]
    if declined or unanswered:
        return _fail(
            key,
            "; ".join((declined + unanswered)[:3]),
            f"in direct mode the bot must accept challenges from {obs.checker} and play two "
            "at once: answer challenge_received with "
            '{"type": "accept", "challenge_id": ...} '
            f"(kit: accept_challenges=[{obs.checker!r}], concurrent=2; arena agent: "
            f"--accept-from {obs.checker} --concurrent 2), or be checked through the relay",
        )
    return _pass(key, f"accepted all {len(obs.matches)} challenges")


#: What to do when the arena refused the login, by the code of its error.
_LOGIN_ADVICE = {
    "": (
        f"give the bot the relay's URL, open ws://HOST:PORT/ws and send hello with protocol "
        f"{PROTOCOL_VERSION} and the bot's token first, within 10 s ({DOCS}#connecting); a bot "
        "already connected to the arena itself can be checked with --direct --bot NAME"
    ),
    "bad_token": (
        "give the bot its own token (from arena bots create; not the checker's, which must be "
        "another bot's)"
    ),
    "bot_disabled": "ask your instructor to enable the bot again",
    "unsupported_version": f"send protocol {PROTOCOL_VERSION} in hello ({DOCS}#connecting)",
    "hello_timeout": f"send hello as soon as the connection opens ({DOCS}#connecting)",
}


def _no_login_story(obs: Observations) -> tuple[str, str]:
    """What happened to the bot's logins, and the code of the arena's refusal ("" if none)."""
    story = obs.no_login or "it never logged in"
    code = ""
    for link in (link for link in obs.links if link.bot is None):
        first = _first_from_bot(obs.frames, link.number)
        if first is not None and first.type != "hello":
            story += f"; it sent {first.type!r} first"
        elif link.hello is not None and link.hello.get("protocol") != PROTOCOL_VERSION:
            story += f"; its hello said protocol {link.hello.get('protocol')!r}"
        refusal = _fatal_error(obs.frames, link.number)
        if refusal is not None and not code:
            code = refusal.partition(" ")[0]
    return story, code


def _first_from_bot(frames: Iterable[Frame], link: int) -> Frame | None:
    return next((f for f in frames if f.link == link and f.direction == "from_bot"), None)


def _ping(obs: Observations) -> Item:
    key = "ping"
    if obs.mode == "direct":
        return _skip(key, "not seen in direct mode (pings travel between the arena and the bot)")
    links = {link.number: link for link in bot_links(obs)}
    pings: list[tuple[Frame, int]] = []
    pongs: dict[int, list[tuple[Frame, Any]]] = {}
    for frame in obs.frames:
        if frame.link not in links or frame.message is None:
            continue
        if frame.direction == "to_bot" and frame.type == "ping":
            pings.append((frame, _int(frame.message.get("id"), -1)))
        elif frame.direction == "from_bot" and frame.type == "pong":
            pongs.setdefault(frame.link, []).append((frame, frame.message.get("id")))
    if not pings:
        return _skip(key, "no ping was sent to it")
    rtts: list[float] = []
    unanswered: list[str] = []
    late = 0  # sent too close to the end of their connection to count either way
    used: set[int] = set()
    for ping, ping_id in pings:
        link = links[ping.link]
        answer = next(
            (
                (f, i)
                for f, i in pongs.get(ping.link, [])
                if f.at >= ping.at and i == ping_id and id(f) not in used
            ),
            None,
        )
        if answer is not None:
            used.add(id(answer[0]))
            rtts.append((answer[0].at - ping.at) * 1000)
            continue
        end = link.closed_at if link.closed_at is not None else obs.ended_at
        if end - ping.at >= PING_GRACE_S:
            who = "the checker's" if ping.note == "injected" else "the arena's"
            unanswered.append(f"{who} ping {ping_id}")
        else:
            late += 1
    wrong = [
        repr(i)
        for pairs in pongs.values()
        for f, i in pairs
        if id(f) not in used and not any(i == pid and p.link == f.link for p, pid in pings)
    ]
    if unanswered or wrong:
        parts = []
        if unanswered:
            shown = ", ".join(unanswered[:4])
            counted = len(pings) - late
            parts.append(
                f"answered {len(rtts)} of {counted} pings ({len(unanswered)} unanswered: {shown})"
                + (
                    f"; {late} more sent less than {PING_GRACE_S:g} s before the connection "
                    "ended are not counted"
                    if late
                    else ""
                )
            )
        if wrong:
            parts.append(f"sent pongs with ids no ping had ({', '.join(wrong[:4])})")
        return _fail(
            key,
            "; ".join(parts),
            "answer every ping at once with a pong carrying the same id, also while thinking "
            f"({DOCS}#heartbeats)",
        )
    injected = sum(1 for p, _ in pings if p.note == "injected")
    did = (
        f"answered all {len(pings)} pings ({len(pings) - injected} from the arena, {injected} "
        f"from the checker) with their ids; round trip {min(rtts):.0f}-{max(rtts):.0f} ms"
    )
    if not rtts:
        return _skip(key, "no ping had time to be answered")
    if max(rtts) > SLOW_PONG_MS:
        did += " (a slow pong: it reads its socket only between moves? the grace uses it)"
    return _pass(key, did)


def _legal(obs: Observations, wire: Wire | None) -> Item:
    key = "legal"
    faults: list[str] = []
    moves = 0
    for match in obs.matches:
        record = match.record or {}
        if wire is not None:
            for turn in wire.turns.get(match.match_id, []):
                if turn.outcome == "played":
                    moves += 1
                elif turn.outcome == "illegal_move":
                    sent = turn.answer or (turn.wrong[-1] if turn.wrong else None)
                    text = f"{sent.move!r}" if sent is not None else "a move"
                    why = f" ({sent.error[1]})" if sent is not None and sent.error else ""
                    faults.append(
                        f"match {match.match_id} ply {turn.ply}: sent {text}, refused{why}"
                    )
        else:
            for move in record.get("moves") or []:
                if move.get("seat") != match.bot_seat:
                    continue
                if move.get("forced") == "illegal_move":
                    faults.append(f"match {match.match_id} ply {move['ply']}: an illegal move")
                elif move.get("forced") is None:
                    moves += 1
            if record.get("termination") == "illegal_move" and record.get("at_fault") == (
                match.bot_seat
            ):
                faults.append(f"match {match.match_id} ply {record.get('plies')}: an illegal move")
    if faults:
        return _fail(
            key,
            f"{len(faults)} illegal or unreadable move(s): " + "; ".join(faults[:3]),
            f"send one of the turn's legal_moves, exactly as written ({DOCS}#playing-a-match)",
        )
    if not moves:
        return _skip(key, "no move of the bot was played")
    return _pass(key, f"{_n(moves, 'move')} in {_n(len(obs.matches), 'match')}, all legal")


def _ply(obs: Observations, wire: Wire | None) -> Item:
    key = "ply"
    if wire is None:
        return _skip(
            key,
            "not seen in direct mode (a move with a wrong ply is refused without a trace in the "
            "record; it shows as a timeout)",
        )
    wrong = [m for m in wire.moves if m.kind in ("wrong", "unknown")]
    if wrong:
        return _fail(
            key,
            f"{len(wrong)} move(s) refused for their match_id or ply: "
            + "; ".join(_wrong_text(m) for m in wrong[:3]),
            "echo the match_id and the ply of the turn you answer, once per turn "
            f"({DOCS}#playing-a-match)",
        )
    answered = sum(1 for m in wire.moves if m.kind in ("answer", "late"))
    if not answered:
        return _skip(key, "the bot sent no move")
    return _pass(key, f"all {answered} moves echoed their turn's match_id and ply")


def _wrong_text(sent: SentMove) -> str:
    error = f" ({sent.error[0]})" if sent.error else ""
    if sent.kind == "unknown":
        return f"a move for match {sent.match_id!r}, which is not one of its matches{error}"
    if sent.open_plies:
        return (
            f"match {sent.match_id}: ply {sent.ply!r} while its turn was ply "
            f"{', '.join(map(str, sent.open_plies))}{error}"
        )
    return f"match {sent.match_id}: ply {sent.ply!r} when it had no turn to answer{error}"


def _counts_for_time(match: PlayedMatch) -> bool:
    return match.step != STEP_FORCED


def _time(obs: Observations, wire: Wire | None) -> Item:
    key = "time"
    faults: list[str] = []
    excused = 0
    # Turns left unanswered while the other match of the two-at-once step ran: that item's.
    idle = {id(t) for *_, turns in (_idle_in_two(obs, wire) if wire else []) for t in turns}
    for match in obs.matches:
        if not _counts_for_time(match):
            continue
        tc = match.time_control
        limit = f"{tc.move_ms}+{tc.bank_ms} ms"
        if wire is not None:
            for turn in wire.turns.get(match.match_id, []):
                if turn.outcome != "timeout" or turn.cut or id(turn) in idle:
                    continue
                if turn.wrong:
                    excused += 1  # it answered, with a wrong ply: the ply item's
                    continue
                late = turn.late or turn.answer
                if late is not None:
                    took = (late.at - turn.opened_at) * 1000
                    faults.append(
                        f"match {match.match_id} ply {turn.ply}: answered after {took:.0f} ms "
                        f"({limit} allowed), too late"
                    )
                else:
                    faults.append(f"match {match.match_id} ply {turn.ply}: no move in {limit}")
        else:
            record = match.record or {}
            for move in record.get("moves") or []:
                if move.get("seat") == match.bot_seat and move.get("forced") == "timeout":
                    faults.append(f"match {match.match_id} ply {move['ply']}: no move in {limit}")
            if record.get("termination") == "timeout" and record.get("at_fault") == match.bot_seat:
                faults.append(
                    f"match {match.match_id} ply {record.get('plies')}: no move in {limit}"
                )
    if faults:
        return _fail(
            key,
            f"{len(faults)} timeout(s): " + "; ".join(faults[:3]),
            "answer each turn within move_ms (the bank is for emergencies), measured from the "
            f"turn's arrival; think in a thread and keep a margin ({DOCS}#time-control)",
        )
    # The turn the relay held back is timed from when the arena first sent it: not the bot's.
    cut = {(t.match_id, t.ply) for t in wire.all_turns() if t.cut} if wire is not None else set()
    think = [
        (move["think_ms"], match.time_control)
        for match in obs.matches
        if _counts_for_time(match)
        for move in (match.record or {}).get("moves") or []
        if move.get("seat") == match.bot_seat
        and isinstance(move.get("think_ms"), int)
        and (match.match_id, move.get("ply")) not in cut
    ]
    if not think:
        return _skip(key, "no move of the bot was timed")
    slowest, tc = max(think, key=lambda pair: pair[0])
    over = sum(1 for ms, t in think if ms > t.move_ms)
    did = f"slowest of {len(think)} moves: {slowest} ms ({tc.move_ms} ms per move)"
    if over:
        did += f"; {over} drew on the bank"
    if excused:
        did += f"; {excused} timeout(s) came after moves refused for their ply (see that item)"
    return _pass(key, did)


def _forced(obs: Observations, wire: Wire | None) -> Item:
    key = "forced"
    if not obs.matches_of(STEP_FORCED) and STEP_FORCED in obs.not_run:
        return _skip(key, f"not run: {obs.not_run[STEP_FORCED]}")
    if wire is not None:
        if not wire.forced:
            return _pass(
                key,
                "never forced: it answered every turn in time, even at 50 ms per move "
                "(forced_move never came, so it was not put to the test)",
            )
        deaf: list[str] = []
        for match_id, ply, at, reason in wire.forced:
            turns = wire.turns.get(match_id, [])
            if not _sent_for(wire, match_id):
                continue  # a match it never played at all: another item says why
            later = [t for t in turns if t.opened_at > at and not t.cut]
            if later and not any(t.responded for t in later):
                deaf.append(
                    f"match {match_id}: after forced_move ({reason}) at ply {ply} it answered "
                    f"none of its {len(later)} later turns"
                )
        if deaf:
            return _fail(
                key,
                "; ".join(deaf[:3]),
                "after forced_move, the match goes on: answer the next turn as usual "
                f"({DOCS}#faults-and-policies)",
            )
        reasons = sorted({reason for _, _, _, reason in wire.forced})
        return _pass(
            key,
            f"forced {len(wire.forced)} time(s) ({', '.join(reasons)}); it answered its next "
            "turns each time",
        )
    stuck: list[str] = []
    forced_total = 0
    for match in obs.matches:
        mine = [
            m for m in (match.record or {}).get("moves") or [] if m.get("seat") == match.bot_seat
        ]
        forced_at = [i for i, m in enumerate(mine) if m.get("forced")]
        forced_total += len(forced_at)
        if (
            forced_at
            and forced_at[0] + 1 < len(mine)
            and all(m.get("forced") for m in mine[forced_at[0] :])
        ):
            stuck.append(
                f"match {match.match_id}: from ply {mine[forced_at[0]]['ply']} on, every one "
                "of its moves was forced"
            )
    if stuck:
        return _fail(
            key,
            "; ".join(stuck[:3])
            + " (direct mode cannot tell a bot that stops answering from one that is always "
            "too slow: the relay can)",
            "after forced_move, answer the next turn as usual, in time "
            f"({DOCS}#faults-and-policies)",
        )
    if not forced_total:
        return _pass(key, "never forced: it answered every turn in time, even at 50 ms per move")
    return _pass(key, f"forced {forced_total} time(s); it played its next moves itself")


def _match_end(obs: Observations, wire: Wire | None) -> Item:
    key = "match_end"
    if wire is not None:
        if not wire.ended:
            return _skip(key, "no match_end reached the bot")
        stopped: list[str] = []
        followed = 0  # match_ends after which the bot was sent turns
        turns = [t for t in wire.all_turns() if not _cut_unsent(t)]
        for match_id, at in wire.ended.items():
            later = [t for t in turns if t.opened_at > at]
            followed += bool(later)
            if later and not any(t.responded for t in later):
                stopped.append(
                    f"after match {match_id} ended it answered none of the {len(later)} turns "
                    "it was sent"
                )
                break
        if stopped:
            return _fail(
                key,
                stopped[0],
                "after match_end, forget that match and go on with the others and the next "
                f"ones ({DOCS}#how-a-match-ends)",
            )
        if not followed:
            return _skip(key, "no turn came after a match_end (the bot left?)")
        kinds = sorted(
            {
                m.end.termination.value
                for m in obs.matches
                if m.end is not None and m.match_id in wire.ended
            }
        )
        return _pass(
            key,
            f"got {len(wire.ended)} match_end ({', '.join(kinds)}) and played on after each",
        )
    played = [m for m in obs.matches if _bot_played(m)]
    if len(obs.matches) > 1 and len(played) == len(obs.matches):
        return _pass(key, f"played in each of its {len(obs.matches)} matches")
    if len(obs.matches) <= 1:
        return _skip(key, "fewer than two matches were played")
    idle = [m.match_id for m in obs.matches if not _bot_played(m)]
    return _fail(
        key,
        f"made no move of its own in match(es) {', '.join(idle)} after earlier ones ended",
        f"after match_end, go on with the next match ({DOCS}#how-a-match-ends)",
    )


def _bot_played(match: PlayedMatch) -> bool:
    return any(
        m.get("seat") == match.bot_seat and m.get("forced") is None
        for m in (match.record or {}).get("moves") or []
    )


def _two(obs: Observations, wire: Wire | None) -> Item:
    key = "two"
    matches = obs.matches_of(STEP_TWO)
    declined = obs.declined.get(STEP_TWO, [])
    if len(declined) == 2:
        return _skip(key, "not run: the bot declined both challenges (see the item above)")
    if declined:
        return _fail(
            key,
            f"declined {len(declined)} of the 2 challenges: {declined[0]}",
            "play several matches at once (kit: concurrent=2 or more) and accept the checker's "
            "challenges",
        )
    if STEP_TWO in obs.not_run:
        return _skip(key, f"not run: {obs.not_run[STEP_TWO]}")
    if len(matches) < 2:
        return _fail(key, f"only {len(matches)} of the 2 matches started", "accept both challenges")
    idle: list[str] = []
    if wire is not None:
        for match, other, during, _ in _idle_in_two(obs, wire):
            idle.append(
                f"while match {other.match_id} ran, it answered none of the {during} turns of "
                f"match {match.match_id} it was sent"
            )
    else:
        idle.extend(
            f"it made no move of its own in match {m.match_id}"
            for m in matches
            if not _bot_played(m)
        )
    if idle:
        return _fail(
            key,
            "; ".join(idle),
            "keep one state per match_id and answer each match's turns as they come "
            f"({DOCS}#connecting: one connection may play several matches at once)",
        )
    return _pass(
        key,
        f"played matches {matches[0].match_id} and {matches[1].match_id} at the same time",
    )


def _idle_in_two(
    obs: Observations, wire: Wire
) -> list[tuple[PlayedMatch, PlayedMatch, int, list[BotTurn]]]:
    """In the two-at-once step, each match whose turns sent while the other match ran were all
    left unanswered: (that match, the other one, how many such turns, the turns that are the
    two item's rather than the time item's: those, or all, when it never played that match)."""
    matches = obs.matches_of(STEP_TWO)
    if len(matches) != 2:
        return []
    idle = []
    for match, other in ((matches[0], matches[1]), (matches[1], matches[0])):
        begin = min((at for m, at, _, _ in wire.starts if m == other.match_id), default=None)
        end = wire.ended.get(other.match_id, obs.ended_at)
        tc = match.time_control
        allowed_s = (tc.move_ms + tc.bank_ms) / 1000
        during = [
            t
            for t in wire.turns.get(match.match_id, [])
            if begin is not None
            and begin <= t.opened_at <= end
            and not _cut_unsent(t)
            # A turn the match's end took away while the bot still had time for it (the
            # checker resigned) shows nothing: a slow bot is the time item's, not this one's.
            and not (
                t.closed == "ended"
                and t.closed_at is not None
                and t.closed_at - t.opened_at < allowed_s
            )
        ]
        # A turn answered too late, even after its match had ended, counts as answered here:
        # the bot did take that match's turn up while the other match ran (the time item's).
        if during and not any(
            t.responded or _answered_ever(wire, match.match_id, t.ply) for t in during
        ):
            excused = during
            if not _sent_for(wire, match.match_id):
                excused = wire.turns.get(match.match_id, [])
            idle.append((match, other, len(during), excused))
    return idle


def _answered_ever(wire: Wire, match_id: str, ply: int) -> bool:
    """The bot sent a move for this turn of this match, at any time (late, after the end)."""
    return any(m.match_id == match_id and m.ply == ply for m in wire.moves)


def _sent_for(wire: Wire, match_id: str) -> bool:
    """The bot sent a move for this match, at any time (even after it ended)."""
    return any(m.match_id == match_id for m in wire.moves)


def _reconnect(obs: Observations, wire: Wire | None) -> Item:
    key = "reconnect"
    if wire is None:
        return _skip(
            key,
            "not checked in direct mode (only the relay can cut the bot's connection; restart "
            "your bot during a match to try it yourself)",
        )
    if STEP_RECONNECT in obs.not_run:
        return _skip(key, f"not run: {obs.not_run[STEP_RECONNECT]}")
    if obs.cut_match is None or obs.cut_at is None:
        return _skip(key, "no connection was cut (the match ended before the bot's second turn)")
    match = next((m for m in obs.matches if m.match_id == obs.cut_match), None)
    back = next((link for link in bot_links(obs) if link.number > (obs.cut_link or 0)), None)
    limit = ""
    if match is not None:
        tc = match.time_control
        limit = f" (its clock allowed {tc.move_ms + tc.bank_ms} ms)"
    if back is None:
        return _fail(
            key,
            f"did not log in again after its connection was cut{limit}",
            "when the connection drops or the server restarts (the fatal shutting_down, close "
            "1012), reconnect with backoff (0.25 s, 0.5 s, 1 s, ...) and send hello with the "
            f"same token ({DOCS}#disconnecting-and-reconnecting)",
        )
    after = (back.opened_at - obs.cut_at) * 1000
    record = (match.record if match is not None else None) or {}
    if (
        match is not None
        and record.get("termination") == "disconnect"
        and record.get("at_fault") == match.bot_seat
    ):
        return _fail(
            key,
            f"came back after {after:.0f} ms, too late: the match ended 'disconnect'{limit}",
            "reconnect at once, with a short first backoff "
            f"({DOCS}#disconnecting-and-reconnecting)",
        )
    resync = [s for s in wire.starts if s[0] == obs.cut_match and s[2] == back.number]
    turns = [t for t in wire.turns.get(obs.cut_match, []) if t.opened_at >= obs.cut_at or t.cut]
    after_back = [t for t in turns if t.cut or t.opened_at >= back.opened_at]
    answered = [
        t for t in after_back if (at := t.first_response_at()) is not None and at >= back.opened_at
    ]
    if after_back and not answered:
        return _fail(
            key,
            f"logged in again after {after:.0f} ms and was resynced, but answered none of its "
            f"{len(after_back)} turns of match {obs.cut_match} since",
            "after welcome, take match_start (position, ply, moves) as the match's state and "
            f"answer the turn that follows ({DOCS}#disconnecting-and-reconnecting)",
        )
    ply = f" at ply {resync[0][3]}" if resync else ""
    did = (
        f"logged in again {after:.0f} ms after the cut, was resynced{ply} and answered the "
        "turn the arena sent again"
    )
    cut_link = next((link for link in bot_links(obs) if link.number == obs.cut_link), None)
    before = (cut_link.hello or {}).get("client") if cut_link else None
    now = (back.hello or {}).get("client")
    if before != now:
        did += (
            f" (but the new hello named the client {now!r}, the cut one {before!r}: another "
            "program with the same token?)"
        )
    return _pass(key, did)


def _chance(obs: Observations, wire: Wire | None) -> Item:
    key = "chance"
    matches = [m for m in obs.matches if m.game == "backgammon"]
    if not matches:
        why = obs.not_run.get(STEP_CHANCE, "no backgammon match was played")
        return _skip(key, f"not run: {why}")
    problems: list[str] = []
    played = dice = 0
    for match in matches:
        record = match.record or {}
        dice += sum(1 for m in record.get("moves") or [] if m.get("seat") is None)
        played += sum(
            1
            for m in record.get("moves") or []
            if m.get("seat") == match.bot_seat and m.get("forced") is None
        )
        if wire is not None:
            for turn in wire.turns.get(match.match_id, []):
                if turn.wrong:
                    problems.append(f"ply {turn.ply}: {_wrong_text(turn.wrong[0])}")
                elif turn.outcome == "illegal_move":
                    sent = turn.answer
                    problems.append(f"ply {turn.ply}: refused move {sent.move if sent else '?'!r}")
                elif turn.outcome == "timeout" and match.step != STEP_FORCED and not turn.cut:
                    problems.append(f"ply {turn.ply}: timed out")
        elif record.get("at_fault") == match.bot_seat:
            problems.append(f"match {match.match_id} ended {record.get('termination')}")
    if problems:
        return _fail(
            key,
            f"in backgammon, {len(problems)} turn(s) went wrong: " + "; ".join(problems[:3]),
            "dice rolls are events with seat null: they count in ply, come in since_last and "
            f"are already in the turn's position ({DOCS}#playing-a-match)",
        )
    if not played:
        return _skip(key, "the bot made no backgammon move")
    return _pass(key, f"{played} moves after {dice} dice rolls, all accepted")


def _connected(obs: Observations) -> Item:
    key = "connected"
    if obs.mode == "direct":
        gone = [f"{step}: {why[0]}" for step, why in obs.refused.items() if why]
        if gone and not obs.matches:
            return _skip(key, "it was not connected at the start (see the handshake)")
        if gone:
            return _fail(
                key,
                f"the arena refused a challenge, the bot was not connected ({gone[0]})",
                "keep the connection open; run the bot for ever (kit: games=0) during the check",
            )
        return _pass(key, "connected for the whole session")
    drops: list[str] = []
    links = bot_links(obs)
    for i, link in enumerate(links):
        if link.closed_by not in ("bot", "server") or link.closed_at is None:
            continue
        came_back = i + 1 < len(links)
        at = link.closed_at - obs.started_at
        if link.closed_by == "server":
            fatal = _fatal_error(obs.frames, link.number)
            what = f"the arena closed it at {at:.1f} s: {fatal or f'close code {link.close_code}'}"
        else:
            code = f" (close code {link.close_code})" if link.close_code else " (no close frame)"
            why = _resigned(obs, link) or _after_end(obs, link)
            what = f"it closed its connection at {at:.1f} s{code}{why}"
        drops.append(what + ("; it came back" if came_back else "; it did not come back"))
    if drops:
        resigned = any(_resigned(obs, link) for link in links)
        return _fail(
            key,
            "; ".join(drops[:3]),
            "play on: it resigned and left, so its move choice failed, not its connection. The "
            "kit does this when choose() raises or returns something that is not a legal move "
            "(the traceback is in the bot's own output): fix choose(), or pass "
            "on_choose_error='random' to play a random move instead"
            if resigned
            else "keep the connection open for the whole check: play for ever (kit: games=0), "
            f"answer pings, read what the arena sends ({DOCS}#heartbeats)",
        )
    return _pass(key, "kept its connection open except when the checker cut it")


def _fatal_error(frames: Iterable[Frame], link: int) -> str | None:
    for frame in frames:
        message = frame.message or {}
        if frame.link == link and frame.type == "error" and message.get("fatal"):
            return f"{message.get('code')} ({message.get('message')})"
    return None


def _resigned(obs: Observations, link: Link) -> str:
    """ ", after resigning match M at ply P" when the bot resigned on this link just before it
    closed it (as the kit does when the bot's choose() fails), else ""."""
    if link.closed_at is None:
        return ""
    resigns = [
        f
        for f in obs.frames
        if f.link == link.number
        and f.direction == "from_bot"
        and f.type == "resign"
        and link.closed_at - 5 <= f.at <= link.closed_at
    ]
    if not resigns:
        return ""
    first = resigns[0]
    return f", {link.closed_at - first.at:.1f} s after it resigned match {first.match_id}"


def _after_end(obs: Observations, link: Link) -> str:
    ends = [
        f
        for f in obs.frames
        if f.link == link.number and f.type == "match_end" and f.at <= (link.closed_at or 0)
    ]
    if ends and link.closed_at is not None and link.closed_at - ends[-1].at < 2:
        return (
            f", {link.closed_at - ends[-1].at:.1f} s after a match ended (a bot that stops after "
            "its games: run it for ever during the check, kit games=0)"
        )
    return ""


def _n(count: int, noun: str) -> str:
    """``1 match``, ``2 matches``."""
    plural = noun + ("es" if noun.endswith("ch") else "s")
    return f"{count} {noun if count == 1 else plural}"


# --- the report -------------------------------------------------------------------------------

_MARK = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}


def report(obs: Observations, items: list[Item]) -> list[str]:
    """The checklist as text lines."""
    tc = obs.time_control
    who = f"for {obs.bot}" if obs.bot else "(no bot logged in)"
    lines = [
        "",
        f"Checklist {who} ({obs.game}, {tc.move_ms}+{tc.bank_ms} ms; "
        f"{_n(len(obs.matches), 'match')}; {obs.mode} mode):",
    ]
    for item in items:
        lines.append(f"  {_MARK[item.status]}  {item.title}: {item.did}")
        if item.should:
            lines.append(f"        should: {item.should}")
    lines.extend(f"  note: {note}" for note in obs.notes)
    counts = {status: sum(1 for i in items if i.status == status) for status in _MARK}
    lines.append(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} not checked")
    return lines
