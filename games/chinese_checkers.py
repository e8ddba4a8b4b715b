"""Chinese checkers for three players on the 121-hole star ("damas chinas").

Seats and play order: 0 = Red starts on the top point and races to the bottom point, 1 = Green
starts on the lower-right point and races to the upper-left one, 2 = Blue starts on the
lower-left point and races to the upper-right one. Ten pieces each; the points between them
(upper-right, bottom, upper-left) start empty and are the targets.

A move is one step to an adjacent empty hole, or a chain of jumps, each over one adjacent piece
of any colour into the empty hole just beyond in a straight line; the chain may stop after any
jump and never revisits a hole (not even the hole it started from). The whole chain is one move,
and a move is identified by its two end holes: chains that reach the same hole are the same move.
A seat with no legal move passes (the only legal move is then ``PASS``). A seat wins when its ten
pieces fill its target point. A game that reaches ``max_plies`` plies (default ``MAX_PLIES`` =
1000, as OpenSpiel caps its version) ends there and is scored by progress, see ``returns``.

Holes are named by row letter ``a``..``q`` from the top and position ``1``.. counted from the left
of that row, as in ``render``; a move is written ``from-to`` (``c2-e6``); a full jump path
``c1-e5-g5-e7`` is accepted on input. ``docs/games.md`` draws the board.

Internally the board is a Python int with one bit per hole. Bit ``18 * row + q`` holds the hole in
``row`` (0..16) at axial column ``q`` (0..16); the column ``q = 17`` is never a hole, so the six
neighbours of bit ``i`` are exactly the bits ``i +- 1``, ``i +- 17``, ``i +- 18`` with no wrap
between rows. A piece's steps and single jumps are one table lookup keyed by the empty holes
within two of it (one shift and a mask); jump chains flood a jump graph built once per position
with a few shifts of the whole board. A move is the int with its origin and destination bits set
(``1 << from | 1 << to``), so ``result`` is two XORs.

    >>> from ply_arena import games
    >>> g = games.get("chinese_checkers")
    >>> s = g.initial_state()
    >>> len(s.actions()), g.format_move(s, g.parse_move(s, "c2-e6"))
    (14, 'c2-e6')
    >>> distance_to_goal(s)
    (120, 120, 120)
"""

from __future__ import annotations

import re
from collections import deque
from itertools import pairwise
from typing import Any, ClassVar

from ply_arena.games._api import (
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    State,
    illegal_move_message,
)

Bitboard = int  # bit 18 * row + q set = a piece on that hole
Hole = int  # a bit index 18 * row + q

WIDTH = 18  # 17 axial columns plus one that is never a hole, so shifts do not wrap
ROW_LENGTHS = (1, 2, 3, 4, 13, 12, 11, 10, 9, 10, 11, 12, 13, 4, 3, 2, 1)
ROW_LETTERS = "abcdefghijklmnopq"
#: The six directions as index offsets, named as on the rendered board (SE = down and right).
DIRECTIONS = (1, -1, 18, -18, 17, -17)
DIRECTION_NAMES = ("E", "W", "SE", "NW", "SW", "NE")
PASS = 0  # the move of a seat that has no legal move (no bits set: ``result`` changes nothing)
MAX_PLIES = 1000
SEAT_MARKS = "RGB"


def _build_holes() -> tuple[list[Hole], dict[Hole, tuple[int, int]]]:
    """Holes in reading order, and each hole's (row, position-in-row) from 0."""
    order: list[Hole] = []
    where: dict[Hole, tuple[int, int]] = {}
    for row, length in enumerate(ROW_LENGTHS):
        for k in range(length):
            col2 = 12 - (length - 1) + 2 * k  # doubled column 0..24: rows are centred on 12
            q = (col2 - row + 12) // 2
            hole = WIDTH * row + q
            order.append(hole)
            where[hole] = (row, k)
    return order, where


#: The 121 holes in reading order (top row first, left to right).
HOLES, _ROW_POS = _build_holes()
HOLE_NAMES: dict[Hole, str] = {h: f"{ROW_LETTERS[r]}{k + 1}" for h, (r, k) in _ROW_POS.items()}
_HOLE_BY_NAME = {name: h for h, name in HOLE_NAMES.items()}
STAR: Bitboard = sum(1 << h for h in HOLES)
#: For each hole and direction: the adjacent hole (or None) and the landing hole of a jump.
NEIGHBOURS: dict[Hole, tuple[Hole | None, ...]] = {
    h: tuple(h + d if h + d >= 0 and STAR >> (h + d) & 1 else None for d in DIRECTIONS)
    for h in HOLES
}
JUMPS: dict[Hole, tuple[tuple[Hole, Hole], ...]] = {
    h: tuple(
        (h + d, h + 2 * d)
        for d in DIRECTIONS
        if h + 2 * d >= 0 and STAR >> (h + d) & 1 and STAR >> (h + 2 * d) & 1
    )
    for h in HOLES
}


def _point(index: int) -> Bitboard:
    """The ten holes of star point ``index``: 0 top, then clockwise (1 upper-right, 2 lower-right,
    3 bottom, 4 lower-left, 5 upper-left)."""
    bits = 0
    for h, (r, k) in _ROW_POS.items():
        n = ROW_LENGTHS[r]
        if (
            (index == 0 and r <= 3)
            or (index == 3 and r >= 13)
            or (index == 5 and 4 <= r <= 7 and k < 8 - r)
            or (index == 1 and 4 <= r <= 7 and k >= n - (8 - r))
            or (index == 4 and 9 <= r <= 12 and k < r - 8)
            or (index == 2 and 9 <= r <= 12 and k >= n - (r - 8))
        ):
            bits |= 1 << h
    return bits


POINTS: tuple[Bitboard, ...] = tuple(_point(i) for i in range(6))
#: Start point and target point of every seat (alternate points; the target is opposite).
HOME: tuple[Bitboard, ...] = (POINTS[0], POINTS[2], POINTS[4])
TARGET: tuple[Bitboard, ...] = (POINTS[3], POINTS[5], POINTS[1])
_TIPS = (_HOLE_BY_NAME["q1"], _HOLE_BY_NAME["e1"], _HOLE_BY_NAME["e13"])


def _distances_from(start: Hole) -> dict[Hole, int]:
    dist = {start: 0}
    todo = deque([start])
    while todo:
        h = todo.popleft()
        for n in NEIGHBOURS[h]:
            if n is not None and n not in dist:
                dist[n] = dist[h] + 1
                todo.append(n)
    return dist


#: DISTANCE[seat][hole]: steps on the board from ``hole`` to the far tip of the seat's target.
#: The ten holes nearest the tip are exactly the target point, at 0, 1, 1, 2, 2, 2, 3, 3, 3, 3.
DISTANCE: tuple[dict[Hole, int], ...] = tuple(_distances_from(t) for t in _TIPS)
_DISTANCE_AT_GOAL = 20  # 0 + 2*1 + 3*2 + 4*3: the ten pieces filling the target


def distance_to_goal(state: ChineseCheckersState) -> tuple[int, int, int]:
    """Each seat's total distance still to go: the sum over its pieces of the steps to the far tip
    of its target, minus 20 (the sum when the target is full). 0 exactly when the seat has won;
    120 for every seat at the start. An evaluation for max^n and MCTS cut-offs, and the measure
    that ranks the seats when the ply cap ends a game."""
    return tuple(  # type: ignore[return-value]
        sum(table[h] for h in _holes(state.pieces(seat))) - _DISTANCE_AT_GOAL
        for seat, table in enumerate(DISTANCE)
    )


def _holes(bits: Bitboard) -> list[Hole]:
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


_NBITS = WIDTH * len(ROW_LENGTHS) + 40  # room for shifted bits above the top hole
#: BIT[h] = 1 << h, so the move loops below index a list instead of building ints.
BIT: tuple[int, ...] = tuple(1 << h for h in range(_NBITS))


#: A hole's window: the empty-hole bits from 36 below to 36 above it (bit 36 = the hole), read
#: as ``(empty << 36) >> hole & _WINDOW_MASK``. The mask keeps the twelve bits that decide the
#: steps and single jumps from the hole: its six neighbours (36 + d) and the six holes beyond
#: them (36 + 2d). Holes off the star are never empty, so the window needs no edge checks.
_WINDOW_MASK = sum(1 << (36 + d) | 1 << (36 + 2 * d) for d in DIRECTIONS)


def _window_codes() -> dict[int, int]:
    """Each of the 4096 windows -> the sum over directions i of 3**i times 0 (the neighbour is
    empty: a step), 1 (a piece with an empty hole beyond: a jump) or 2 (neither). Windows that
    differ only beyond an empty neighbour get one code, so the table below stays small."""
    codes = {}
    for n in range(1 << 12):
        window = code = 0
        for i, d in enumerate(DIRECTIONS):
            near, far = n >> i & 1, n >> (6 + i) & 1
            window |= near << (36 + d) | far << (36 + 2 * d)
            code += 3**i * (0 if near else 1 if far else 2)
        codes[window] = code
    return codes


_WINDOW_CODE = _window_codes()
_Local = tuple[tuple[int, ...], Bitboard]  # (steps and single jumps as moves, jump landings)
#: _LOCAL[h][code]: the steps and single jumps of a piece on hole h whose window has that code,
#: and the bitboard of its jump landings (for an empty hole h: the holes one jump away, its edges
#: in the jump graph). Filled on first use by ``_local``: at most 44,361 entries are possible
#: (3**6 codes on inner holes, fewer near the rim), about 33,000 are met in 200 random games,
#: and building them all would add ~0.2 s to the import.
_LOCAL: tuple[dict[int, _Local], ...] = tuple({} for _ in range(_NBITS))
_SHARED: dict[_Local, _Local] = {}  # one object for equal entries (off-star directions)


def _local(hole: Hole, code: int) -> _Local:
    """Compute and remember ``_LOCAL[hole][code]``."""
    moves = []
    landings = 0
    for i, d in enumerate(DIRECTIONS):
        near = hole + d
        kind = code // 3**i % 3
        if near < 0 or not STAR >> near & 1 or kind == 2:
            continue
        to = near if kind == 0 else near + d  # an empty hole beyond a piece is on the star
        moves.append(_MOVE_INTS.setdefault((hole, to), BIT[hole] | BIT[to]))
        if kind == 1:
            landings |= BIT[to]
    entry = (tuple(moves), landings)
    entry = _LOCAL[hole][code] = _SHARED.setdefault(entry, entry)
    return entry


_MOVE_INTS: dict[tuple[Hole, Hole], int] = {}  # one int object per move, shared by the entries


def _moves(mine: Bitboard, occ: Bitboard) -> list[int]:
    """Every legal move of the pieces ``mine`` with ``occ`` the occupied holes (PASS if none).

    Steps and single jumps: one table lookup per piece, keyed by the empty holes around it.
    Longer chains: the jump graph (empty holes, joined when a piece lies between them) is the
    same for every piece of the seat, so it is built once as three bitboards of edges, and only
    pieces with a landing that has an edge are followed further, by a breadth-first flood over
    those edges (a front of one hole takes its edges from ``_LOCAL`` instead). The graph counts
    the moving piece as still in place, which is harmless: its landings are two steps away from
    it, so no later jump of the chain could pass over its (now empty) hole. For the same reason
    (a jump moves two holes) a chain never ends next to its start: no move is listed twice."""
    empty = STAR ^ occ
    around = empty << 36
    wmask = _WINDOW_MASK
    codes = _WINDOW_CODE
    local = _LOCAL
    bit = BIT
    moves: list[int] = []
    extend = moves.extend
    add = moves.append
    hubs = -1
    while mine:
        p = mine.bit_length() - 1
        origin = bit[p]
        mine ^= origin
        code = codes[around >> p & wmask]
        try:
            found, landings = local[p][code]
        except KeyError:
            found, landings = _local(p, code)
        extend(found)
        if not landings:
            continue
        if hubs < 0:  # the first piece with a jump: build the jump graph
            # Edges: bit x of e_d = holes x and x + 2d are empty, x + d is occupied.
            e1 = empty & (occ >> 1) & (empty >> 2)
            e17 = empty & (occ >> 17) & (empty >> 34)
            e18 = empty & (occ >> 18) & (empty >> 36)
            # hubs: holes with an edge; forks: holes with two or more. A chain that arrives at a
            # hole with one edge (the one it came by) can go nowhere new, so the flood drops
            # those holes from its front.
            x = e1 << 2
            forks = e1 & x
            hubs = e1 | x
            forks |= hubs & e17
            hubs |= e17
            x = e17 << 34
            forks |= hubs & x
            hubs |= x
            forks |= hubs & e18
            hubs |= e18
            x = e18 << 36
            forks |= hubs & x
            hubs |= x
        front = landings & hubs  # landings from which the chain can go on
        if not front:
            continue
        free = hubs ^ front  # holes the chain has not reached yet
        while front:
            if front & (front - 1):
                front = (
                    ((front & e1) << 2) | ((front >> 2) & e1)
                    | ((front & e17) << 34) | ((front >> 34) & e17)
                    | ((front & e18) << 36) | ((front >> 36) & e18)
                ) & free  # fmt: skip
            else:
                h = front.bit_length() - 1
                code = codes[around >> h & wmask]
                try:
                    front = local[h][code][1] & free
                except KeyError:
                    front = _local(h, code)[1] & free
            free ^= front
            t = front
            while t:
                h = t.bit_length() - 1
                add(bit[h] | origin)
                t ^= bit[h]
            front &= forks
    return moves or [PASS]


class ChineseCheckersState(State):
    """A position. The bitboards are kept relative to the seat to move, so ``result`` rotates
    them instead of branching on the seat."""

    __slots__ = ("_last", "_mine", "_next", "_over", "max_plies", "occupied", "player", "ply")

    _mine: Bitboard  # seat ``player``
    _next: Bitboard  # seat ``player + 1``
    _last: Bitboard  # seat ``player + 2``, the one that just moved
    occupied: Bitboard
    player: int
    ply: int
    max_plies: int
    _over: bool

    def pieces(self, seat: int) -> Bitboard:
        """The bitboard of ``seat``'s pieces."""
        return (self._mine, self._next, self._last)[(seat - self.player) % 3]

    def actions(self) -> list[int]:
        if self._over:
            return []
        return _moves(self._mine, self.occupied)

    def result(self, move: Move) -> ChineseCheckersState:
        # A move from actions() is trusted (no check here: it would cost as much as generating
        # the moves); text from outside goes through parse_move, which checks legality.
        n = _new(ChineseCheckersState)
        p = self.player
        moved = self._mine ^ move  # type: ignore[operator]
        n._mine = self._next
        n._next = self._last
        n._last = moved
        n.occupied = self.occupied ^ move  # type: ignore[operator]
        n.player = _NEXT_SEAT[p]
        n.ply = ply = self.ply + 1
        n.max_plies = cap = self.max_plies
        n._over = moved == TARGET[p] or ply >= cap
        return n

    def is_terminal(self) -> bool:
        return self._over

    def winner(self) -> int | None:
        """The seat whose pieces fill its target, if any."""
        for seat in range(3):
            if self.pieces(seat) == TARGET[seat]:
                return seat
        return None

    def returns(self) -> tuple[float, float, float]:
        """At the end the seats are ranked: a winner first, the others by ``distance_to_goal``
        (less is better). Ranks score +1, 0, -1 and tied seats share their ranks' average, so
        payoffs always add up to 0. All zeros before the end."""
        if not self._over:
            return (0.0, 0.0, 0.0)
        key = list(distance_to_goal(self))
        won = self.winner()
        if won is not None:
            key[won] = -1  # a winner ranks first even if another seat were as close
        points = [0.0, 0.0, 0.0]
        for seat in range(3):
            better = sum(1 for k in key if k < key[seat])
            tied = sum(1 for k in key if k == key[seat])  # includes the seat itself
            # Ranks better..better+tied-1 score 1 - rank; their average:
            points[seat] = 1.0 - (better + (tied - 1) / 2)
        return (points[0], points[1], points[2])

    def _key(self) -> tuple[int, ...]:
        return (self.player, self.ply, self._mine, self._next, self._last, self.max_plies)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChineseCheckersState) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"ChineseCheckersState(player={self.player}, ply={self.ply}, "
            f"pieces={[self.pieces(s) for s in range(3)]})"
        )


_new = object.__new__
_NEXT_SEAT = (1, 2, 0)


def _make_state(
    pieces: tuple[Bitboard, Bitboard, Bitboard], player: int, ply: int, max_plies: int
) -> ChineseCheckersState:
    s = _new(ChineseCheckersState)
    s._mine, s._next, s._last = pieces[player], pieces[(player + 1) % 3], pieces[(player + 2) % 3]
    s.occupied = pieces[0] | pieces[1] | pieces[2]
    s.player, s.ply, s.max_plies = player, ply, max_plies
    s._over = ply >= max_plies or any(pieces[i] == TARGET[i] for i in range(3))
    return s


_HOLE_RE = r"[a-q]\d{1,2}"
_MOVE_RE = re.compile(rf"{_HOLE_RE}(?:-{_HOLE_RE})+")


class ChineseCheckers(Game):
    """Three-player Chinese checkers; ``max_plies`` sets the move cap (``MAX_PLIES`` by default)."""

    name = "chinese_checkers"
    num_players = 3
    summary = "Three players race their ten pieces across a 121-hole star by steps and jump chains."
    seat_names = ("Red", "Green", "Blue")
    min_utility = -1.0
    max_utility = 1.0
    constant_sum: ClassVar[float | None] = 0.0
    #: The default move cap in plies; an instance's cap is ``self.max_plies``.
    MAX_PLIES: ClassVar[int] = MAX_PLIES

    def __init__(self, max_plies: int = MAX_PLIES) -> None:
        if type(max_plies) is not int or max_plies < 1:
            raise ValueError(f"max_plies must be a positive int, not {max_plies!r}")
        self.max_plies = max_plies
        self._initial = _make_state(HOME, 0, 0, max_plies)  # type: ignore[arg-type]

    def initial_state(self) -> ChineseCheckersState:
        return self._initial

    def format_move(self, state: State, move: Move) -> str:
        if move == PASS:
            return "pass"
        assert isinstance(state, ChineseCheckersState) and isinstance(move, int)
        frm = move & state.pieces(state.player)
        to = move ^ frm
        return f"{HOLE_NAMES[frm.bit_length() - 1]}-{HOLE_NAMES[to.bit_length() - 1]}"

    def parse_move(self, state: State, text: str) -> int:
        assert isinstance(state, ChineseCheckersState)
        cleaned = text.strip().lower().replace(" ", "")
        legal = state.actions()
        if cleaned == "pass":
            if legal == [PASS]:
                return PASS
            raise IllegalMoveError(illegal_move_message(self, state, text))
        path = cleaned.split("-") if _MOVE_RE.fullmatch(cleaned) else []
        holes = [_HOLE_BY_NAME.get(name) for name in path]
        if not holes or None in holes:
            raise InvalidMoveError(
                f"cannot parse Chinese checkers move {text!r}: expected 'from-to' with holes "
                "named by row a-q (from the top) and position 1.. from the left of the row, "
                "e.g. 'c2-e6', a full jump path 'c1-e5-g5-e7', or 'pass'"
            )
        move = 1 << holes[0] | 1 << holes[-1]  # type: ignore[operator]
        chain_ok = len(holes) == 2 or self._is_jump_path(state, holes)  # type: ignore[arg-type]
        if not chain_ok or holes[0] == holes[-1] or move not in legal:
            raise IllegalMoveError(illegal_move_message(self, state, text))
        return move

    @staticmethod
    def _is_jump_path(state: ChineseCheckersState, path: list[Hole]) -> bool:
        """Is every leg of ``path`` a jump, with no hole visited twice?"""
        if len(set(path)) != len(path):
            return False
        occ = state.occupied ^ (1 << path[0])
        for a, b in pairwise(path):
            if not any(land == b and occ >> over & 1 for over, land in JUMPS[a]):
                return False
            if occ >> b & 1:
                return False
        return True

    def state_to_json(self, state: State) -> dict[str, Any]:
        assert isinstance(state, ChineseCheckersState)
        return {
            "pieces": [[HOLE_NAMES[h] for h in sorted(_holes(state.pieces(s)))] for s in range(3)],
            "player": state.player,
            "ply": state.ply,
        }

    def state_from_json(self, data: dict[str, Any]) -> ChineseCheckersState:
        expected = (
            'Chinese checkers JSON is {"pieces": [[10 hole names of seat 0], [.. seat 1], '
            '[.. seat 2]], "player": 0-2, "ply": 0..max_plies}'
        )
        if not isinstance(data, dict):
            raise ValueError(f"{expected}; got {type(data).__name__}")
        pieces, player, ply = data.get("pieces"), data.get("player"), data.get("ply", 0)
        if not isinstance(pieces, list) or len(pieces) != 3:
            raise ValueError(f"{expected}; 'pieces' must be a list of three lists")
        if type(player) is not int or not 0 <= player < 3:
            raise ValueError(f"{expected}; 'player' must be 0, 1 or 2, not {player!r}")
        if type(ply) is not int or not 0 <= ply <= self.max_plies:
            raise ValueError(f"{expected}; 'ply' must be an int 0..{self.max_plies}, not {ply!r}")
        boards = []
        seen = 0
        for seat, names in enumerate(pieces):
            if not isinstance(names, list) or len(names) != 10:
                raise ValueError(f"{expected}; seat {seat} must have a list of 10 holes")
            bits = 0
            for name in names:
                hole = _HOLE_BY_NAME.get(name) if isinstance(name, str) else None
                if hole is None:
                    raise ValueError(f"seat {seat}: {name!r} is not a hole name (a1 .. q1)")
                if (bits | seen) >> hole & 1:
                    raise ValueError(f"seat {seat}: hole {name} holds two pieces")
                bits |= 1 << hole
            seen |= bits
            boards.append(bits)
        if sum(b == TARGET[i] for i, b in enumerate(boards)) > 1:
            raise ValueError("two seats cannot both have filled their targets")
        return _make_state((boards[0], boards[1], boards[2]), player, ply, self.max_plies)

    def render(self, state: State) -> str:
        assert isinstance(state, ChineseCheckersState)
        boards = [state.pieces(s) for s in range(3)]
        lines = []
        for row, length in enumerate(ROW_LENGTHS):
            marks = []
            for hole in HOLES:
                if _ROW_POS[hole][0] != row:
                    continue
                mark = "."
                for seat in range(3):
                    if boards[seat] >> hole & 1:
                        mark = SEAT_MARKS[seat]
                marks.append(mark)
            lines.append(f"{ROW_LETTERS[row]} " + " " * (13 - length) + " ".join(marks))
        if state.is_terminal():
            won = state.winner()
            status = f"{self.seat_names[won]} wins" if won is not None else "move cap reached"
        else:
            status = f"{self.seat_names[state.player]} ({SEAT_MARKS[state.player]}) to move"
        lines.append(f"ply {state.ply}/{state.max_plies}: {status}")
        return "\n".join(lines)
