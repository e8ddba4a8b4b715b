"""Check a match record from scratch: the dice against the seed, every move against the rules,
the result against the end. What ``arena verify`` runs, and the bot kit at ``match_end``.

A record is the document of ``GET /api/matches/{id}/record`` (``record_version`` 1): the match's
game, seats, events in order (``moves``: each seat move and each chance event, ``seat`` null),
the ``dice`` (``scheme``, ``commitment``, the ``seed`` once the match is over) and the ``result``.
Checking needs only this package (``games`` for the rules, :mod:`ply_arena.protocol.dice` for the
rolls):

1. the seed matches the commitment sent in ``match_start`` (``sha256-v1`` matches);
2. each event's ply is its place in the match, and each is played by the seat to move;
3. every die rolled is the one the seed gives at that ply;
4. every move is legal where it was played (a forfeit for an illegal move may end on the move
   refused);
5. what the record repeats for readers (the seats' payoffs, ``termination``, ``at_fault``,
   ``status``, ``seed``, ``plies``) agrees with ``result``, ``dice`` and ``moves``;
6. the stored final position is the re-derived one, and the payoffs are what the termination
   pays (:mod:`ply_arena.protocol.outcomes`): the game's returns for ``normal``, the forfeit rule,
   the move-limit share. Time itself cannot be re-derived: a ``timeout`` is checked as a forfeit,
   not as a clock.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ply_arena import games
from ply_arena.games import Game, Move, State
from ply_arena.protocol import dice
from ply_arena.protocol.outcomes import FORFEITS, drawn_payoffs, forfeit_payoffs

#: The version of the record document this module reads (``record_version``).
RECORD_VERSION = 1

_CLOSE = 1e-9


@dataclass
class Verification:
    """What a check found: ``problems`` empty means the record holds."""

    match_id: str
    game: str
    status: str
    moves: int = 0
    dice: int = 0
    #: Whether the dice were re-derived (False: no seed yet, or none to check).
    dice_checked: bool = False
    problems: list[str] = field(default_factory=list)
    #: Things that are true but limit what was checked (a running match, a legacy scheme).
    notes: list[str] = field(default_factory=list)
    #: The position after the last event that re-derived.
    state: State | None = None
    #: The position after each event that re-derived, in order (a replay reuses them rather
    #: than derive the match a second time).
    states: list[State] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_record(record: Mapping[str, Any]) -> Verification:
    """Check ``record`` (see the module docstring); never raises for a bad record, it says so."""
    try:
        return _verify(record)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        found = Verification(
            str(record.get("id", "?")) if isinstance(record, Mapping) else "?",
            str(record.get("game", "?")) if isinstance(record, Mapping) else "?",
            "?",
        )
        found.problems.append(f"the record cannot be read: {type(exc).__name__}: {exc}")
        return found


def check_events(
    game: Game,
    match_id: str,
    events: Sequence[Mapping[str, Any]],
    *,
    seed: str | None,
    scheme: str = dice.SCHEME,
    last_may_be_refused: int | None = None,
    found: Verification | None = None,
) -> Verification:
    """Replay ``events`` from the initial position: seats, plies, dice (with ``seed``), moves.

    ``last_may_be_refused``: the seat of an ``illegal_move`` forfeit, whose refused move may be
    the last event. Returns (or fills) a Verification whose ``state`` is where the replay got.
    """
    found = found or Verification(match_id, game.name, "?")
    state = game.initial_state()
    legacy = dice.LegacyDice(seed) if seed is not None and scheme == dice.LEGACY_SCHEME else None
    found.dice_checked = seed is not None and scheme in (dice.SCHEME, dice.LEGACY_SCHEME)
    for index, event in enumerate(events):
        ply, seat, text = event["ply"], event["seat"], event["move"]
        label = f"ply {ply} ({text!r})"
        if ply != index:
            found.problems.append(f"{label}: the event at place {index} says ply {ply}")
            break
        if state.is_terminal():
            found.problems.append(f"{label}: the game was already over")
            break
        expected = None if state.is_chance_node() else state.player
        if seat != expected:
            who = "the dice" if expected is None else f"seat {expected}"
            found.problems.append(f"{label}: played by seat {seat}, but it was {who}'s turn")
            break
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            if found.dice_checked:
                rolled = (
                    legacy.roll(outcomes)
                    if legacy is not None
                    else dice.roll(str(seed), match_id, ply, outcomes)
                )
                should = game.format_move(state, rolled)
                if should != text:
                    found.problems.append(
                        f"{label}: the seed gives the roll {should!r}, not {text!r}"
                    )
                    break
                move = rolled  # the stored text names it: no need to parse it back
            else:
                try:
                    move = parse_event(game, state, text)
                except ValueError as exc:
                    found.problems.append(f"{label}: {exc}")
                    break
            found.dice += 1
        else:
            try:
                move = game.parse_move(state, text)
            except ValueError as exc:
                if index == len(events) - 1 and last_may_be_refused == seat:
                    found.notes.append(f"{label}: the refused move that lost the match")
                    break
                found.problems.append(f"{label}: {exc}")
                break
            found.moves += 1
        state = state.result(move)
        found.states.append(state)
    found.state = state
    return found


def _verify(record: Mapping[str, Any]) -> Verification:
    version = record.get("record_version", RECORD_VERSION)
    if version != RECORD_VERSION:
        raise ValueError(f"record_version {version!r}: this version reads {RECORD_VERSION}")
    game = games.get(record["game"])
    match_id = str(record["id"])
    found = Verification(match_id, game.name, str(record["status"]))
    info = record.get("dice") or {"scheme": dice.LEGACY_SCHEME, "seed": record.get("seed")}
    scheme, seed = info.get("scheme"), info.get("seed")
    if scheme not in (dice.SCHEME, dice.LEGACY_SCHEME):
        found.problems.append(f"unknown dice scheme {scheme!r}")
        return found
    committed = info.get("commitment")
    if (
        seed is not None
        and scheme == dice.SCHEME
        and dice.commitment(str(seed), match_id) != committed
    ):
        found.problems.append(
            f"the seed {seed!r} does not match the commitment {info.get('commitment')!r} "
            "sent before the first roll"
        )
    if scheme == dice.LEGACY_SCHEME:
        found.notes.append(
            "legacy dice (python-random-v0): no commitment was sent; the rolls are re-derived "
            "with CPython's random module"
        )
    if seed is None and found.status == "running":
        found.notes.append("the match is still running: its seed is secret, dice not checked")
    result = record.get("result")
    refused = (
        result.get("at_fault")
        if result is not None and result.get("termination") == "illegal_move"
        else None
    )
    events = record["moves"]
    check_events(
        game,
        match_id,
        events,
        seed=None if seed is None else str(seed),
        scheme=scheme,
        last_may_be_refused=refused,
        found=found,
    )
    copies = _check_copies(record, game, result)
    if not found.problems and found.status != "running":
        assert found.state is not None
        found.problems.extend(_check_result(game, found.state, result))
    found.problems.extend(copies)
    return found


def _check_copies(
    record: Mapping[str, Any], game: Game, result: Mapping[str, Any] | None
) -> list[str]:
    """The facts a record repeats for its readers (the seats' payoffs, the top-level
    termination, seed, plies and status) must say what ``result``, ``dice`` and ``moves``
    say: a reader who looks at either must see the same match."""
    problems: list[str] = []
    seats = record.get("seats")
    if seats is not None:
        if len(seats) != game.num_players or [s.get("seat") for s in seats] != list(
            range(game.num_players)
        ):
            problems.append(f"seats: {game.name} has seats 0..{game.num_players - 1}, in order")
        elif result is not None and result.get("payoffs") is not None:
            shown = [s.get("payoff") for s in seats]
            if None in shown or not close(shown, result["payoffs"]):
                problems.append(
                    f"the seats' payoffs {shown} are not the result's {result['payoffs']}"
                )
    status = record.get("status")
    termination = None if result is None else result.get("termination")
    if status == "running" and result is not None:
        problems.append("status is 'running' but the record has a result")
    elif status == "aborted" and termination != "aborted":
        problems.append(f"status is 'aborted' but the result's termination is {termination!r}")
    elif status == "finished" and (result is None or termination == "aborted"):
        problems.append(f"status is 'finished' but the result's termination is {termination!r}")
    elif status not in ("running", "aborted", "finished"):
        problems.append(f"unknown status {status!r}")
    for key in ("termination", "at_fault"):
        if key in record and result is not None and record[key] != result.get(key):
            problems.append(f"{key} {record[key]!r} is not the result's {result.get(key)!r}")
    dice_seed = (record.get("dice") or {}).get("seed")
    if record.get("dice") and "seed" in record and record["seed"] != dice_seed:
        problems.append(f"seed {record['seed']!r} is not the dice's seed {dice_seed!r}")
    if "plies" in record and record["plies"] != len(record["moves"]):
        problems.append(f"plies is {record['plies']!r} but the record holds {len(record['moves'])}")
    return problems


def _check_result(game: Game, state: State, result: Mapping[str, Any] | None) -> list[str]:
    if result is None:
        return ["the match is over but has no stored result"]
    problems: list[str] = []
    stored_position = result.get("final_position")
    if stored_position is not None and not same_position(game, state, stored_position):
        problems.append("the re-derived final position differs from the stored one")
    termination = result["termination"]
    payoffs = result.get("payoffs")
    at_fault = result.get("at_fault")
    terminal = state.is_terminal()
    expected: list[float] | None = None
    if termination == "normal":
        if not terminal:
            return [*problems, "termination is 'normal' but the re-derived position is not over"]
        expected = [float(x) for x in state.returns()]
    elif termination in FORFEITS:
        if not isinstance(at_fault, int) or not 0 <= at_fault < game.num_players:
            return [*problems, f"termination {termination!r} names no seat at fault ({at_fault})"]
        if terminal and termination != "resign":
            problems.append(f"termination is {termination!r} but the game had already ended")
        expected = forfeit_payoffs(game, at_fault)
    elif termination == "move_limit":
        expected = drawn_payoffs(game)
    elif termination != "aborted":
        problems.append(f"unknown termination {termination!r}")
    if expected is not None and (payoffs is None or not close(payoffs, expected)):
        problems.append(
            f"the stored payoffs {payoffs} are not the {expected} a {termination!r} end pays"
        )
    return problems


def parse_event(game: Game, state: State, text: str) -> Move:
    """The move or chance outcome written ``text`` (ValueError when it is neither)."""
    if not state.is_chance_node():
        return game.parse_move(state, text)
    # Chance outcomes are stored in their formatted notation; not every game parses them.
    for outcome in state.actions():
        if game.format_move(state, outcome) == text:
            return outcome
    raise ValueError(f"{text!r} is not a chance outcome here")


def same_position(game: Game, state: State, stored: Mapping[str, Any]) -> bool:
    try:
        return bool(game.state_from_json(dict(stored)) == state)
    except ValueError:
        return _normal(stored) == _normal(game.state_to_json(state))


def _normal(data: Any) -> str:
    return json.dumps(data, sort_keys=True)


def close(a: Sequence[float], b: Sequence[float]) -> bool:
    return len(a) == len(b) and all(
        math.isclose(float(x), float(y), abs_tol=_CLOSE) for x, y in zip(a, b, strict=True)
    )


def report(found: Verification) -> list[str]:
    """The verdict as text lines (``arena verify``)."""
    moves = _count(found.moves, "move")
    rolls = _count(found.dice, "dice roll")
    if not found.dice:
        checked = ""
    elif found.dice_checked:
        checked = f", {rolls} re-derived from the seed"
    else:
        checked = f", {rolls} (not re-derived: no seed)"
    lines = [f"match {found.match_id} ({found.game}, {found.status}): {moves}{checked}"]
    lines.extend(f"  note: {note}" for note in found.notes)
    if found.ok:
        lines.append("  OK: the record holds")
    else:
        lines.extend(f"  FAIL: {problem}" for problem in found.problems)
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
