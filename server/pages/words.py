"""What the pages say in words: game titles, how a match ended, think times.

Pure functions of stored data, so that a test can check a sentence without a server.
"""

from __future__ import annotations

from collections.abc import Sequence

from ply_arena import games
from ply_arena.games.chinese_checkers import MAX_PLIES as CHINESE_CHECKERS_CAP

_TITLES = {
    "tic_tac_toe": "Tic-tac-toe",
    "connect_four": "Connect Four",
    "othello": "Othello",
    "backgammon": "Backgammon",
    "chinese_checkers": "Chinese checkers",
}

#: How each termination reads after the faulty seat's name ("bob (O) lost on time").
_FAULTS = {
    "timeout": "lost on time",
    "illegal_move": "lost by an illegal move",
    "disconnect": "lost by disconnecting",
    "resign": "resigned",
}

#: Backgammon's payoffs name the kind of win (single game, gammon, backgammon).
_BACKGAMMON_WINS = {1: "won", 2: "won a gammon", 3: "won a backgammon"}


def game_title(name: str) -> str:
    """The name a person reads: ``connect_four`` -> ``Connect Four``."""
    return _TITLES.get(name, name.replace("_", " ").capitalize())


def seat_label(game: str, seat: int) -> str:
    """The game's own name for a seat (X, O; Black, White; Red, Green, Blue), capitalised."""
    names = games.get(game).seat_names
    return names[seat].capitalize() if 0 <= seat < len(names) else f"seat {seat}"


def player(game: str, seat: int, bots: Sequence[str]) -> str:
    """``bob (O)``: a bot by name and seat."""
    bot = bots[seat] if 0 <= seat < len(bots) else "?"
    return f"{bot} ({seat_label(game, seat)})"


def result_sentence(
    game: str,
    bots: Sequence[str],
    *,
    termination: str | None,
    at_fault: int | None,
    payoffs: Sequence[float] | None,
    moves: int,
) -> str:
    """How the match ended, in one sentence: "bob (O) lost on time at move 23."

    ``moves`` counts the seats' moves (dice rolls are not moves); a fault happens on the turn
    after the last of them.
    """
    if termination is None:
        return f"Being played: {moves} move{'s' if moves != 1 else ''} so far."
    if termination == "aborted":
        return f"Aborted after {_count(moves)} (the server stopped); not rated."
    if termination == "move_limit":
        return f"Drawn: the move limit was reached after {_count(moves)}."
    if at_fault is not None and termination in _FAULTS:
        return f"{player(game, at_fault, bots)} {_FAULTS[termination]} at move {moves + 1}."
    if not payoffs:
        return f"Ended ({termination}) after {_count(moves)}."
    best = max(payoffs)
    winners = [s for s, p in enumerate(payoffs) if p == best]
    if len(winners) == len(payoffs):
        return f"Drawn after {_count(moves)}."
    if len(winners) > 1:
        shared = " and ".join(player(game, s, bots) for s in winners)
        return f"{shared} shared the win after {_count(moves)}."
    winner = winners[0]
    verb = _BACKGAMMON_WINS.get(round(best), "won") if game == "backgammon" else "won"
    sentence = f"{player(game, winner, bots)} {verb} after {_count(moves)}"
    if game == "chinese_checkers" and moves >= CHINESE_CHECKERS_CAP:
        # The game's own cap: scored by progress, not by a finished race.
        sentence += f" (the game's {CHINESE_CHECKERS_CAP}-ply limit, scored by progress)"
    if len(payoffs) > 2:
        # Three players: the places after the winner, by payoff; seats level on payoff share
        # the better place ("tied second"), as the ratings rank them.
        order = sorted(range(len(payoffs)), key=lambda s: -payoffs[s])
        parts = []
        for s in order[1:]:
            place = 1 + sum(1 for p in payoffs if p > payoffs[s])
            tied = sum(1 for p in payoffs if p == payoffs[s]) > 1
            parts.append(f"{player(game, s, bots)} {'tied ' if tied else ''}{_ordinal(place)}")
        sentence += f"; {', '.join(parts)}"
    return sentence + "."


def short_result(
    game: str,
    bots: Sequence[str],
    *,
    termination: str | None,
    at_fault: int | None,
    payoffs: Sequence[float] | None,
) -> str:
    """A result for a list of matches: "alice won", "drawn", "bob lost on time", "aborted"."""
    if termination is None:
        return "playing"
    if termination == "aborted":
        return "aborted"
    if at_fault is not None and termination in _FAULTS:
        return f"{player(game, at_fault, bots)} {_FAULTS[termination]}"
    if not payoffs or len(set(payoffs)) == 1:
        return "drawn"
    best = max(payoffs)
    winners = [player(game, s, bots) for s, p in enumerate(payoffs) if p == best]
    return " and ".join(winners) + (" won" if len(winners) == 1 else " shared the win")


def think_time(ms: int | None) -> str:
    """``0.42 s``, ``12 ms``, ``1 min 5 s``; empty when unknown (dice, forced moves)."""
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.2f} s"
    minutes, seconds = divmod(round(ms / 1000), 60)
    return f"{minutes} min {seconds} s"


def _count(moves: int) -> str:
    return f"{moves} move{'s' if moves != 1 else ''}"


def _ordinal(n: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(n, f"{n}th")


def number(x: float) -> str:
    """A payoff or a value as people write it: 1, -1, 0.5 (no "1.0", no "-0")."""
    if x == int(x):
        return str(int(x))
    return f"{x:.4g}"


def fraction(p: float) -> str:
    """A probability as a fraction when it is a simple one (dice: 1/36, 1/18), else a decimal."""
    from fractions import Fraction

    simple = Fraction(p).limit_denominator(1000)
    if abs(float(simple) - p) < 1e-9:
        return f"{simple.numerator}/{simple.denominator}"
    return f"{p:.4g}"


def points(x: float) -> str:
    """A score as a crosstable writes it: 1, ½, 2½, 0.75, -1."""
    if x == int(x):
        return str(int(x))
    if (2 * x) == int(2 * x):
        whole = int(abs(x))
        return ("-" if x < 0 else "") + (str(whole) if whole else "") + "½"
    return f"{x:g}"


def score(x: float) -> str:
    """A bot's reported score, rounded as a reader takes it in: 0.0272, 1.25, 312, 1000000."""
    if x == int(x):
        return str(int(x))
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 1:
        return f"{x:.2f}".rstrip("0").rstrip(".")
    return f"{x:.3g}"


def game_score(bots: Sequence[str], payoffs: Sequence[float]) -> str:
    """A tournament game's result as its standings count it, then in words: "1-0, alice won",
    "½-½, drawn", "1-½-0, carol won" (three players: 1, ½, 0 for the places)."""
    from ply_arena.server.tournaments.standings import GameResult, game_points

    scored = game_points(GameResult(round=0, seats=tuple(bots), payoffs=tuple(payoffs)))
    if len(set(payoffs)) == 1:
        verdict = "drawn"
    else:
        winners = [b for b, p in zip(bots, payoffs, strict=True) if p == max(payoffs)]
        verdict = " and ".join(winners) + (" won" if len(winners) == 1 else " shared the win")
    return "-".join(points(x) for x in scored) + ", " + verdict


def sentence_case(text: str) -> str:
    """The first letter in capitals, as a status line starts: "Black to move"."""
    return text[:1].upper() + text[1:]
