"""ply_arena.server.pages.svg.boards: every game's positions drawn as well-formed SVG that carries
the position it shows, one element per piece, and nothing a Content-Security-Policy would block."""

from __future__ import annotations

import copy
import json
import random
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from ply_arena import games
from ply_arena.server.pages.svg.boards import board_svg, seat_colours, seat_labels

SVG = "{http://www.w3.org/2000/svg}"
GAMES = games.names()


def random_positions(game: str, seed: int) -> list[dict[str, Any]]:
    """The JSON of every position of one seeded random game (chance nodes rolled by their
    probabilities), from the start to the end or the 300th ply."""
    rules = games.get(game)
    rng = random.Random(seed)
    state = rules.initial_state()
    out = [rules.state_to_json(state)]
    while not state.is_terminal() and len(out) <= 300:
        if state.is_chance_node():
            outcomes, weights = zip(*state.chance_outcomes(), strict=True)
            move = rng.choices(outcomes, weights)[0]
        else:
            move = rng.choice(list(state.actions()))
        state = state.result(move)
        out.append(rules.state_to_json(state))
    return out


def sample(game: str) -> list[dict[str, Any]]:
    """A few positions per game: the start, some along two random games, and their ends."""
    out = []
    for seed in (1, 2):
        positions = random_positions(game, seed)
        out += [*positions[:: max(1, len(positions) // 12)], positions[-1]]
    return out


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def with_classes(root: ET.Element, *wanted: str) -> list[ET.Element]:
    """Elements whose class attribute holds every one of ``wanted``."""
    return [e for e in root.iter() if set(wanted) <= set(e.get("class", "").split())]


def expected_pieces(game: str, position: dict[str, Any]) -> list[int]:
    """Pieces of each seat in the JSON (for backgammon: checkers on the 24 points)."""
    if game == "backgammon":
        return [
            sum(p for p in position["points"] if p > 0),
            -sum(p for p in position["points"] if p < 0),
        ]
    if game == "chinese_checkers":
        return [len(names) for names in position["pieces"]]
    marks = "BW" if game == "othello" else "XO"
    cells = "".join(position["board"])
    return [cells.count(m) for m in marks]


def assert_safe(svg: str) -> None:
    """Nothing the pages' Content-Security-Policy forbids, nothing fetched from outside."""
    lowered = svg.lower()
    for forbidden in ("style=", "<style", "<script", "href", "url(", "<image", "<foreignobject"):
        assert forbidden not in lowered
    assert "http" not in lowered.replace('xmlns="http://www.w3.org/2000/svg"', "")


@pytest.mark.parametrize("game", GAMES)
def test_positions_draw_as_svg_carrying_the_position(game: str) -> None:
    rules = games.get(game)
    for position in sample(game):
        svg = board_svg(game, position)
        assert_safe(svg)
        root = parse(svg)
        assert root.get("class") == f"board board-{game}"
        assert root.get("role") == "img" and root.get("aria-label")
        assert root.get("data-game") == game
        assert root.get("width") is None and root.get("height") is None
        shown = json.loads(root.get("data-position", ""))
        assert shown == position
        assert rules.state_to_json(rules.state_from_json(shown)) == position
        # Exactly the compact JSON, so that a browser test can compare strings.
        assert f'data-position="{json.dumps(position, separators=(",", ":"))}"' in svg.replace(
            "&quot;", '"'
        )
        seats = rules.num_players
        counts = [len(with_classes(root, "piece", f"seat-{s}")) for s in range(seats)]
        assert counts == expected_pieces(game, position)
        assert len(with_classes(root, "piece")) == sum(counts)


@pytest.mark.parametrize("game", GAMES)
def test_text_stays_legible_on_a_phone(game: str) -> None:
    """Scaled to a 340 px wide screen, no text is smaller than 8 px."""
    svg = board_svg(game, games.get(game).state_to_json(games.get(game).initial_state()))
    root = parse(svg)
    width = float(root.get("viewBox", "").split()[2])
    sizes = [float(t.get("font-size", "0")) for t in root.iter(f"{SVG}text")]
    assert sizes and min(sizes) * 340 / width >= 8


def test_the_summary_says_whose_turn_and_who_won() -> None:
    ttt = games.get("tic_tac_toe")
    state = ttt.initial_state()
    assert "X to move" in parse(board_svg("tic_tac_toe", ttt.state_to_json(state))).get(
        "aria-label", ""
    )
    for cell in ("a3", "a2", "b3", "b2", "c3"):
        state = state.result(ttt.parse_move(state, cell))
    label = parse(board_svg("tic_tac_toe", ttt.state_to_json(state))).get("aria-label", "")
    assert label == "Tic-tac-toe, X won"
    label = parse(board_svg("connect_four", {"moves": "4"})).get("aria-label", "")
    assert label == "Connect Four, Yellow to move"


def test_cells_are_where_the_notation_puts_them() -> None:
    # Tic-tac-toe: a3 is the top-left cell.
    root = parse(board_svg("tic_tac_toe", {"board": ["X..", "...", "..."], "player": 1}))
    (cross,) = with_classes(root, "piece", "seat-0")
    assert cross.get("data-cell") == "a3"
    assert all(float(v) < 130 for v in re.findall(r"[\d.]+", cross.get("d", "")))
    # Connect Four: a disc dropped in column 1 lands bottom left.
    root = parse(board_svg("connect_four", {"moves": "17"}))
    (red,) = with_classes(root, "piece", "seat-0")
    (yellow,) = with_classes(root, "piece", "seat-1")
    assert (red.get("data-column"), red.get("data-row")) == ("1", "1")
    assert float(red.get("cx", "")) < float(yellow.get("cx", ""))
    assert red.get("cy") == yellow.get("cy")
    # Othello: rows count from the top, so d3 is above d4.
    othello = games.get("othello")
    state = othello.initial_state()
    state = state.result(othello.parse_move(state, "d3"))
    root = parse(board_svg("othello", othello.state_to_json(state)))
    discs = {e.get("data-cell"): e for e in with_classes(root, "piece")}
    assert float(discs["d3"].get("cy", "")) < float(discs["d4"].get("cy", ""))
    assert discs["d3"].get("class") == "piece seat-0"  # Black played it


def test_backgammon_board_layout() -> None:
    start = games.get("backgammon").state_to_json(games.get("backgammon").initial_state())
    root = parse(board_svg("backgammon", start))
    points = {int(e.get("data-point", "")): e for e in with_classes(root, "point")}
    assert sorted(points) == list(range(1, 25))

    def centre_x(p: int) -> float:
        return sum(float(c.split(",")[0]) for c in points[p].get("points", "").split()) / 3

    bottom = [centre_x(p) for p in range(12, 0, -1)]
    top = [centre_x(p) for p in range(13, 25)]
    assert bottom == sorted(bottom) and top == sorted(top)  # 12..1 and 13..24 left to right
    assert bottom == top  # point 1 is below point 24
    # White's two back checkers are on point 24: top right.
    on_24 = [e for e in with_classes(root, "piece", "seat-0") if e.get("data-point") == "24"]
    assert len(on_24) == 2
    assert all(float(e.get("cy", "")) < 200 and float(e.get("cx", "")) > 250 for e in on_24)
    # Both numberings: white's 24 is black's 1, at the same x.
    for seat in (0, 1):
        numbers = [t.text or "" for t in with_classes(root, "point-number", f"seat-{seat}")]
        assert sorted(numbers, key=int) == [str(p) for p in range(1, 25)]
    white = {t.text: t.get("x") for t in with_classes(root, "point-number", "seat-0")}
    black = {t.text: t.get("x") for t in with_classes(root, "point-number", "seat-1")}
    assert all(white[str(p)] == black[str(25 - p)] for p in range(1, 25))
    assert root.get("aria-label", "").startswith("Backgammon, opening roll;")
    assert [t.text for t in with_classes(root, "status")] == ["Opening roll"]
    assert not with_classes(root, "die")


def test_backgammon_dice_bar_and_borne_off() -> None:
    seen_dice = seen_bar = seen_off = 0
    # Seed 2's random game meets dice, checkers on the bar and bearing off.
    for position in random_positions("backgammon", 2):
        root = parse(board_svg("backgammon", position))
        dice = with_classes(root, "die")
        if position["dice"] is None:
            assert not dice
        else:
            seen_dice += 1
            assert [int(d.get("data-value", "")) for d in dice] == position["dice"]
            for die in dice:
                pips = [e for e in die if "pip" in e.get("class", "")]
                assert len(pips) == int(die.get("data-value", ""))
                assert f"seat-{position['turn']}" in die.get("class", "")
            assert f"to play {position['dice'][0]}-{position['dice'][1]}" in root.get(
                "aria-label", ""
            )
        for seat in (0, 1):
            assert len(with_classes(root, "bar-piece", f"seat-{seat}")) == position["bar"][seat]
            assert len(with_classes(root, "off-piece", f"seat-{seat}")) == position["off"][seat]
            (count,) = with_classes(root, "off-count", f"seat-{seat}")
            assert count.text == str(position["off"][seat])
        seen_bar += sum(position["bar"]) > 0
        seen_off += sum(position["off"]) > 0
    assert seen_dice and seen_bar and seen_off  # the random game met every case


def test_backgammon_tall_stacks_show_their_count() -> None:
    black = [-2, *[0] * 10, -5, 0, 0, 0, 0, -3, 0, -5, *[0] * 5]
    points = [p + (10 if i == 5 else 5 if i == 7 else 0) for i, p in enumerate(black)]
    position = {
        "points": points,
        "bar": [0, 0],
        "off": [0, 0],
        "player": -1,
        "turn": 1,
        "dice": None,
        "opening": False,
    }
    root = parse(board_svg("backgammon", position))
    on_6 = [e for e in with_classes(root, "piece", "seat-0") if e.get("data-point") == "6"]
    assert len(on_6) == 10
    assert [t.text for t in with_classes(root, "count")] == ["10"]
    assert "Black to roll" in root.get("aria-label", "")


def test_chinese_checkers_start() -> None:
    rules = games.get("chinese_checkers")
    root = parse(board_svg("chinese_checkers", rules.state_to_json(rules.initial_state())))
    assert [len(with_classes(root, "piece", f"seat-{s}")) for s in range(3)] == [10, 10, 10]
    assert len(with_classes(root, "hole")) == 121
    fills = {e.get("fill") for e in with_classes(root, "piece")}
    assert fills == set(seat_colours("chinese_checkers"))
    legend = [t.text for t in with_classes(root, "legend-label")]
    assert legend == ["Red", "Green", "Blue"]
    bold = [t.text for t in with_classes(root, "legend-label") if t.get("font-weight") == "bold"]
    assert bold == ["Red"]
    assert root.get("aria-label") == "Chinese checkers, Red to move, ply 0"
    # Red starts on the top point, Green lower right, Blue lower left.
    centres = {
        s: [
            (float(e.get("cx", "")), float(e.get("cy", "")))
            for e in with_classes(root, "piece", f"seat-{s}")
        ]
        for s in range(3)
    }
    red_y = max(y for _, y in centres[0])
    assert all(y > red_y for s in (1, 2) for _, y in centres[s])
    assert min(x for x, _ in centres[1]) > max(x for x, _ in centres[2])


def test_chinese_checkers_holes_are_a_hexagonal_lattice() -> None:
    """Every hole's six neighbours (``ply_arena.games.chinese_checkers.NEIGHBOURS``) are equally
    far."""
    from ply_arena.games.chinese_checkers import HOLE_NAMES, NEIGHBOURS
    from ply_arena.server.pages.svg.board_chinese_checkers import HOLE_CENTRES, SPACING

    for hole, around in NEIGHBOURS.items():
        x, y = HOLE_CENTRES[HOLE_NAMES[hole]]
        for other in around:
            if other is not None:
                ox, oy = HOLE_CENTRES[HOLE_NAMES[other]]
                assert ((x - ox) ** 2 + (y - oy) ** 2) ** 0.5 == pytest.approx(SPACING)


HOSTILE: list[tuple[str, Any]] = [
    ("tic_tac_toe", None),
    ("tic_tac_toe", "<script>alert(1)</script>"),
    ("tic_tac_toe", {"board": ["<script>", "...", "..."]}),
    ("tic_tac_toe", {"board": ["XXX", "OO.", "..."], "player": 10**100}),
    ("tic_tac_toe", {"board": ["XXX", "XXX", "XXX"]}),
    ("connect_four", {"board": "......."}),
    ("connect_four", {"moves": "1" * 100_000}),
    ("connect_four", {"moves": 4}),
    ("othello", {"board": [".<s>...." for _ in range(8)], "player": 0}),
    ("othello", {"board": ["........"] * 8, "player": 0}),
    ("othello", [1, 2, 3]),
    ("backgammon", {"points": [10**100] * 24, "bar": [0, 0], "off": [0, 0]}),
    ("backgammon", {"points": ["<script>"] * 24, "bar": [0, 0], "off": [0, 0]}),
    ("backgammon", {"points": [15, *[0] * 23], "bar": [0, -5], "off": [0, 20], "player": 0}),
    ("chinese_checkers", {"pieces": [["a1"] * 10] * 3, "player": 0}),
    ("chinese_checkers", {"pieces": [["<script>"] * 10] * 3, "player": 0}),
    ("chinese_checkers", {"pieces": [[]] * 3, "player": "0"}),
    ("chinese_checkers", {"pieces": None, "player": 0, "ply": 10**100}),
]


@pytest.mark.parametrize(("game", "position"), HOSTILE)
def test_hostile_positions_raise_value_error(game: str, position: Any) -> None:
    with pytest.raises(ValueError):
        board_svg(game, position)


def test_unknown_game_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="tic_tac_toe"):
        board_svg("chess", {})
    with pytest.raises(ValueError, match="othello"):
        seat_colours("chess")


JUNK: list[Any] = [None, -1, 10**100, 1.5, True, "<script>", [], {}, [[]], "a1", 0]


@pytest.mark.parametrize("game", GAMES)
def test_mutated_positions_are_drawn_or_refused(game: str) -> None:
    """Positions with one value swapped for junk: a ValueError, or a board of the valid position
    that the game made of them (never another exception, never the junk itself)."""
    rng = random.Random(7)
    positions = sample(game)
    for _ in range(150):
        position = copy.deepcopy(rng.choice(positions))
        target: Any = position
        key: Any = rng.choice(list(target))
        # Walk down into lists now and then, to hit single cells and counts.
        while isinstance(target[key], list) and target[key] and rng.random() < 0.6:
            target = target[key]
            key = rng.randrange(len(target))
        target[key] = rng.choice(JUNK)
        try:
            svg = board_svg(game, position)
        except ValueError:
            continue
        assert_safe(svg)
        assert "&lt;script" not in svg and "<script" not in svg
        parse(svg)


def test_highlight_marks_the_last_move() -> None:
    ttt = parse(board_svg("tic_tac_toe", {"board": ["...", ".X.", "..."]}, highlight="b2"))
    (mark,) = with_classes(ttt, "last-move")
    assert mark.tag == f"{SVG}rect"
    c4 = parse(board_svg("connect_four", {"moves": "444"}, highlight="4"))
    (ring,) = with_classes(c4, "last-move")
    top = min(with_classes(c4, "piece"), key=lambda e: float(e.get("cy", "")))
    assert (ring.get("cx"), ring.get("cy")) == (top.get("cx"), top.get("cy"))
    othello = games.get("othello")
    state = othello.initial_state()
    state = state.result(othello.parse_move(state, "d3"))
    root = parse(board_svg("othello", othello.state_to_json(state), highlight="D3"))
    (ring,) = with_classes(root, "last-move")
    (d3,) = [e for e in with_classes(root, "piece") if e.get("data-cell") == "d3"]
    assert (ring.get("cx"), ring.get("cy")) == (d3.get("cx"), d3.get("cy"))
    # Backgammon: the play is in its mover's numbering; black's 24/18 ends on white's 7.
    bg = games.get("backgammon")
    state = bg.initial_state().result((2, 6))  # black plays 6-2
    after = state.result(bg.parse_move(state, "24/18 13/11"))
    root = parse(board_svg("backgammon", bg.state_to_json(after), highlight="24/18 13/11"))
    assert sorted(int(e.get("data-point", "")) for e in with_classes(root, "last-move")) == [7, 14]
    cc = games.get("chinese_checkers")
    state = cc.initial_state()
    after = state.result(cc.parse_move(state, "c2-e6"))
    root = parse(board_svg("chinese_checkers", cc.state_to_json(after), highlight="c2-e6"))
    (ring,) = with_classes(root, "last-move")
    (e6,) = [e for e in with_classes(root, "piece") if e.get("data-cell") == "e6"]
    assert (ring.get("cx"), ring.get("cy")) == (e6.get("cx"), e6.get("cy"))
    assert len(with_classes(root, "last-move-from")) == 1


@pytest.mark.parametrize("game", GAMES)
def test_highlight_text_never_reaches_the_drawing(game: str) -> None:
    position = games.get(game).state_to_json(games.get(game).initial_state())
    for junk in ("<script>alert(1)</script>", "9/99*", "z9-a1", "", "1" * 5000):
        svg = board_svg(game, position, highlight=junk)
        assert "script" not in svg
        assert not with_classes(parse(svg), "last-move")


def test_seat_colours_and_labels_cover_every_game() -> None:
    for game in GAMES:
        rules = games.get(game)
        colours, labels = seat_colours(game), seat_labels(game)
        assert len(colours) == len(labels) == rules.num_players
        assert all(re.fullmatch(r"#[0-9A-F]{6}", c) for c in colours)
        assert len(set(colours)) == len(colours) and len(set(labels)) == len(labels)
        if game != "connect_four":  # its seat names are X and O; its discs red and yellow
            assert [x.lower() for x in labels] == [x.lower() for x in rules.seat_names]
    assert seat_labels("connect_four") == ["Red", "Yellow"]
    seat_colours("othello").append("#000000")  # a copy: the constant stays as it was
    assert len(seat_colours("othello")) == 2
