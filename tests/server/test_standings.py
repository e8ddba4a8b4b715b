"""``ply_arena.server.tournaments.standings``: points per game, the standings' counts, Buchholz,
Sonneborn-Berger and head-to-head, and the crosstable, on tournaments worked out by hand."""

from __future__ import annotations

import pytest

from ply_arena.server.tournaments.standings import (
    GameResult,
    Standing,
    crosstable,
    game_points,
    standings,
)

pytestmark = pytest.mark.timeout(30)


def win(rnd: int, winner: str, loser: str) -> GameResult:
    return GameResult(rnd, (winner, loser), (1.0, -1.0))


def draw(rnd: int, a: str, b: str) -> GameResult:
    return GameResult(rnd, (a, b), (0.0, 0.0))


def bye(rnd: int, bot: str) -> GameResult:
    return GameResult(rnd, (bot,), None, "bye")


# --- points of one game ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "points"),
    [
        (GameResult(1, ("a", "b"), (1.0, -1.0)), (1.0, 0.0)),
        (GameResult(1, ("a", "b"), (-2.0, 5.0)), (0.0, 1.0)),
        (GameResult(1, ("a", "b"), (0.25, 0.25)), (0.5, 0.5)),
        # Three players: 1, 1/2, 0 by place, whatever the payoffs' sizes.
        (GameResult(1, ("a", "b", "c"), (-1.0, 7.0, 2.0)), (0.0, 1.0, 0.5)),
        # Level seats share their places' points: the last two share 1/2 and 0.
        (GameResult(1, ("a", "b", "c"), (3.0, 0.0, 0.0)), (1.0, 0.25, 0.25)),
        (GameResult(1, ("a", "b", "c"), (2.0, 2.0, 2.0)), (0.5, 0.5, 0.5)),
        # Four players: 1, 2/3, 1/3, 0; the middle two share 2/3 and 1/3.
        (GameResult(1, ("a", "b", "c", "d"), (5.0, 2.0, 2.0, -9.0)), (1.0, 0.5, 0.5, 0.0)),
        (GameResult(1, ("a", "b", "c", "d"), (0.0, 1.0, 2.0, 3.0)), (0.0, 1 / 3, 2 / 3, 1.0)),
        # A bye is a free win; a no_show is lost by whoever did not come.
        (GameResult(1, ("a",), None, "bye"), (1.0,)),
        (GameResult(1, ("a", "b"), None, "no_show", absent=(0,)), (0.0, 1.0)),
        (GameResult(1, ("a", "b", "c"), None, "no_show", absent=(1,)), (1.0, 0.0, 1.0)),
        (GameResult(1, ("a", "b", "c"), None, "no_show", absent=(0, 2)), (0.0, 1.0, 0.0)),
        # Nobody came: nobody wins.
        (GameResult(1, ("a", "b"), None, "no_show", absent=(0, 1)), (0.0, 0.0)),
        (GameResult(1, ("a", "b", "c"), None, "no_show", absent=(0, 1, 2)), (0.0, 0.0, 0.0)),
    ],
)
def test_game_points(result: GameResult, points: tuple[float, ...]) -> None:
    assert game_points(result) == pytest.approx(points)
    assert len(game_points(result)) == len(points)


# --- a standing ----------------------------------------------------------------------------------


def test_a_standing_starts_at_nothing_and_says_so_in_json() -> None:
    row = Standing("x")
    assert row.as_json() == {
        "rank": 0,
        "bot": "x",
        "points": 0.0,
        "games": 0,
        "wins": 0,
        "draws": 0,
        "losses": 0,
        "byes": 0,
        "buchholz": 0.0,
        "sonneborn_berger": 0.0,
        "head_to_head": 0.0,
    }
    assert row.against == {}
    assert Standing("y").against is not row.against


def test_as_json_reports_every_field_of_a_filled_standing() -> None:
    row = Standing("x", 2.5, 4, 2, 1, 1, 1, 6.0, 3.25, 0.5, 3)
    assert row.as_json() == {
        "rank": 3,
        "bot": "x",
        "points": 2.5,
        "games": 4,
        "wins": 2,
        "draws": 1,
        "losses": 1,
        "byes": 1,
        "buchholz": 6.0,
        "sonneborn_berger": 3.25,
        "head_to_head": 0.5,
    }


# --- a Swiss tournament where Buchholz and Sonneborn-Berger disagree ---------------------------

#: Two rounds of eight, by hand:
#:   round 1: A beats Y, B draws Z, X beats P, Q beats W;
#:   round 2: X beats A, B draws W, Y draws Q, Z beats P.
#: Final points: X 2, Q 1.5, Z 1.5, A 1, B 1, Y 0.5, W 0.5, P 0.
EIGHT = [
    win(1, "A", "Y"),
    draw(1, "B", "Z"),
    win(1, "X", "P"),
    GameResult(1, ("W", "Q"), (-1.0, 1.0)),
    GameResult(2, ("A", "X"), (-3.0, 3.0)),
    draw(2, "W", "B"),
    GameResult(2, ("Y", "Q"), (0.5, 0.5)),
    GameResult(2, ("P", "Z"), (0.0, 2.0)),
]
#: bot: (points, games, wins, draws, losses, Buchholz, Sonneborn-Berger)
#:   Buchholz: the opponents' final points; Sonneborn-Berger: points scored times them.
EIGHT_ROWS = {
    "X": (2.0, 2, 2, 0, 0, 0 + 1, 1 * 0 + 1 * 1),
    "Q": (1.5, 2, 1, 1, 0, 0.5 + 0.5, 1 * 0.5 + 0.5 * 0.5),
    "Z": (1.5, 2, 1, 1, 0, 1 + 0, 0.5 * 1 + 1 * 0),
    "A": (1.0, 2, 1, 0, 1, 0.5 + 2, 1 * 0.5 + 0 * 2),
    "B": (1.0, 2, 0, 2, 0, 1.5 + 0.5, 0.5 * 1.5 + 0.5 * 0.5),
    "Y": (0.5, 2, 0, 1, 1, 1 + 1.5, 0 * 1 + 0.5 * 1.5),
    "W": (0.5, 2, 0, 1, 1, 1.5 + 1, 0 * 1.5 + 0.5 * 1),
    "P": (0.0, 2, 0, 0, 2, 2 + 1.5, 0.0),
}


def test_the_counts_buchholz_and_sonneborn_berger_of_a_swiss_tournament() -> None:
    rows = {s.bot: s for s in standings("ABPQWXYZ", EIGHT, swiss=True)}
    for bot, expected in EIGHT_ROWS.items():
        row = rows[bot]
        got = (row.points, row.games, row.wins, row.draws, row.losses, row.buchholz)
        assert (*got, row.sonneborn_berger) == expected, bot
        assert row.byes == 0
        assert row.head_to_head == 0.0  # no two level entrants met


def test_swiss_breaks_ties_by_buchholz_first_a_round_robin_by_sonneborn_berger() -> None:
    # A and B: 1 point each; A's opponents scored more (Buchholz 2.5 against 2), B scored its
    # points against the stronger ones (Sonneborn-Berger 1 against 0.5). Q and Z: Buchholz 1
    # each, so Sonneborn-Berger decides both ways (0.75 against 0.5); Y and W likewise.
    swiss = standings("ABPQWXYZ", EIGHT, swiss=True)
    assert [s.bot for s in swiss] == ["X", "Q", "Z", "A", "B", "Y", "W", "P"]
    assert [s.rank for s in swiss] == [1, 2, 3, 4, 5, 6, 7, 8]
    by_sb = standings("ABPQWXYZ", EIGHT)  # not Swiss unless asked
    assert [s.bot for s in by_sb] == ["X", "Q", "Z", "B", "A", "Y", "W", "P"]
    assert [s.rank for s in by_sb] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert [s.bot for s in standings("ABPQWXYZ", EIGHT, swiss=False)] == [s.bot for s in by_sb]


# --- byes ----------------------------------------------------------------------------------------

#: Three entrants, three rounds, one bye each:
#:   round 1: A beats B, C sits out; round 2: C beats A, B sits out; round 3: B draws C, A out.
#: Final points (a bye scores 1): A 1 + 1 = 2, B 1 + 0.5 = 1.5, C 1 + 1 + 0.5 = 2.5.
THREE_WITH_BYES = [
    win(1, "A", "B"),
    bye(1, "C"),
    win(2, "C", "A"),
    bye(2, "B"),
    draw(3, "B", "C"),
    bye(3, "A"),
]


def test_a_bye_scores_a_point_but_no_game_and_adds_nothing_to_the_tiebreaks() -> None:
    ordered = standings("ABC", THREE_WITH_BYES, swiss=True)
    assert [s.bot for s in ordered] == ["C", "A", "B"]
    rows = {s.bot: s for s in ordered}
    # (points, games, wins, draws, losses, byes)
    assert (rows["A"].points, rows["A"].games, rows["A"].wins, rows["A"].draws) == (2.0, 2, 1, 0)
    assert (rows["A"].losses, rows["A"].byes) == (1, 1)
    assert (rows["B"].points, rows["B"].games, rows["B"].wins, rows["B"].draws) == (1.5, 2, 0, 1)
    assert (rows["B"].losses, rows["B"].byes) == (1, 1)
    assert (rows["C"].points, rows["C"].games, rows["C"].wins, rows["C"].draws) == (2.5, 2, 1, 1)
    assert (rows["C"].losses, rows["C"].byes) == (0, 1)
    # Buchholz: the two opponents met (the byes count for nobody).
    assert {b: r.buchholz for b, r in rows.items()} == {"A": 1.5 + 2.5, "B": 2 + 2.5, "C": 2 + 1.5}
    # Sonneborn-Berger: A beat B (1.5); B drew C (0.5 * 2.5); C beat A (2) and drew B (0.5 * 1.5).
    assert {b: r.sonneborn_berger for b, r in rows.items()} == {"A": 1.5, "B": 1.25, "C": 2.75}
    assert crosstable(ordered, THREE_WITH_BYES) == [
        {"bot": "C", "rank": 1, "points": 2.5, "against": {"A": [1.0], "B": [0.5]}},
        {"bot": "A", "rank": 2, "points": 2.0, "against": {"B": [1.0], "C": [0.0]}},
        {"bot": "B", "rank": 3, "points": 1.5, "against": {"A": [0.0], "C": [0.5]}},
    ]


def test_two_byes_score_two_points() -> None:
    rows = {s.bot: s for s in standings("AB", [bye(1, "A"), bye(2, "A")], swiss=True)}
    assert (rows["A"].points, rows["A"].byes, rows["A"].games, rows["A"].wins) == (2.0, 2, 0, 0)
    assert (rows["B"].points, rows["B"].byes, rows["B"].games) == (0.0, 0, 0)


# --- three-player games --------------------------------------------------------------------------

#: Game 1: A first, B second, C third (1, 1/2, 0); game 2: D, C and B level (1/2 each).
#: Final points: A 1, B 1, C 0.5, D 0.5.
THREE_PLAYER = [
    GameResult(1, ("A", "B", "C"), (3.0, 0.0, -3.0)),
    GameResult(2, ("D", "C", "B"), (0.0, 0.0, 0.0)),
]


def test_three_player_tiebreaks_use_the_sum_and_the_mean_of_the_opponents() -> None:
    rows = {s.bot: s for s in standings("ABCD", THREE_PLAYER)}
    assert {b: r.points for b, r in rows.items()} == {"A": 1.0, "B": 1.0, "C": 0.5, "D": 0.5}
    assert {b: r.games for b, r in rows.items()} == {"A": 1, "B": 2, "C": 2, "D": 1}
    # Second place and a shared place are draws; third alone is a loss.
    assert {b: (r.wins, r.draws, r.losses) for b, r in rows.items()} == {
        "A": (1, 0, 0),
        "B": (0, 2, 0),
        "C": (0, 1, 1),
        "D": (0, 1, 0),
    }
    # Buchholz: every opponent of every game (B: A + C, then D + C).
    assert {b: r.buchholz for b, r in rows.items()} == {"A": 1.5, "B": 2.5, "C": 3.5, "D": 1.5}
    # Sonneborn-Berger: points scored times the opponents' mean (A: 1 * (1 + 0.5) / 2;
    # B: 0.5 * 1.5 / 2 + 0.5 * 1 / 2; C: 0 + 0.5 * 1.5 / 2; D: 0.5 * 1.5 / 2).
    assert {b: r.sonneborn_berger for b, r in rows.items()} == {
        "A": 0.75,
        "B": 0.625,
        "C": 0.375,
        "D": 0.375,
    }
    # Head-to-head within each points group: A scored 1 against B, B 1/2 against A; C and D
    # 1/2 each against the other.
    assert {b: r.head_to_head for b, r in rows.items()} == {"A": 1.0, "B": 0.5, "C": 0.5, "D": 0.5}


def test_three_player_order_round_robin_and_swiss() -> None:
    # Round robin: A before B on Sonneborn-Berger; C and D level on everything: by name.
    assert [s.bot for s in standings("DCBA", THREE_PLAYER)] == ["A", "B", "C", "D"]
    # Swiss: Buchholz first: B (2.5) before A (1.5), C (3.5) before D (1.5).
    assert [s.bot for s in standings("DCBA", THREE_PLAYER, swiss=True)] == ["B", "A", "C", "D"]


def test_the_crosstable_of_three_player_games_counts_each_game_against_both_opponents() -> None:
    ordered = standings("ABCD", THREE_PLAYER)
    assert crosstable(ordered, THREE_PLAYER) == [
        {"bot": "A", "rank": 1, "points": 1.0, "against": {"B": [1.0], "C": [1.0]}},
        {"bot": "B", "rank": 2, "points": 1.0,
         "against": {"A": [0.5], "C": [0.5, 0.5], "D": [0.5]}},
        {"bot": "C", "rank": 3, "points": 0.5,
         "against": {"A": [0.0], "B": [0.0, 0.5], "D": [0.5]}},
        {"bot": "D", "rank": 4, "points": 0.5, "against": {"C": [0.5], "B": [0.5]}},
    ]  # fmt: skip


# --- no-shows, entrants without games, head-to-head -------------------------------------------


def test_a_no_show_is_a_game_lost_by_the_absent_and_won_by_the_present() -> None:
    results = [
        GameResult(1, ("A", "B"), None, "no_show", absent=(1,)),
        GameResult(2, ("C", "A"), None, "no_show", absent=(0, 1)),
    ]
    rows = {s.bot: s for s in standings("ABC", results)}
    assert {b: (r.points, r.games, r.wins, r.draws, r.losses) for b, r in rows.items()} == {
        "A": (1.0, 2, 1, 0, 1),
        "B": (0.0, 1, 0, 0, 1),
        "C": (0.0, 1, 0, 0, 1),
    }


def test_an_entrant_without_games_is_listed_with_nothing() -> None:
    ordered = standings(["A", "B", "C"], [win(1, "A", "B")])
    assert [(s.bot, s.rank) for s in ordered] == [("A", 1), ("B", 2), ("C", 3)]
    c = ordered[2]
    assert (c.points, c.games, c.wins, c.draws, c.losses, c.byes) == (0.0, 0, 0, 0, 0, 0)
    assert (c.buchholz, c.sonneborn_berger, c.head_to_head) == (0.0, 0.0, 0.0)
    assert standings([], []) == []


def test_head_to_head_counts_only_games_against_entrants_level_on_points() -> None:
    # A beat B and C; B drew C twice and beat D; C beat D; D beat A.
    # Points: A 2, B 2, C 2, D 1 - A, B and C level; D's win over A is outside the group.
    results = [
        win(1, "A", "B"),
        win(2, "A", "C"),
        draw(3, "B", "C"),
        draw(4, "C", "B"),
        win(5, "B", "D"),
        win(6, "C", "D"),
        win(7, "D", "A"),
    ]
    rows = {s.bot: s for s in standings("ABCD", results)}
    assert {b: r.points for b, r in rows.items()} == {"A": 2.0, "B": 2.0, "C": 2.0, "D": 1.0}
    assert {b: r.head_to_head for b, r in rows.items()} == {"A": 2.0, "B": 1.0, "C": 1.0, "D": 0.0}


def test_swiss_breaks_a_buchholz_tie_by_sonneborn_berger_then_by_head_to_head() -> None:
    # Everyone met everyone, so Buchholz is the total (6) minus one's own points: level entrants
    # are level on Buchholz too.
    # A beats B and C, D beats A, C beats B, B beats D, C draws D.
    # Points: A 2, C 1.5, D 1.5, B 1. Sonneborn-Berger: C 1 * 1 (B) + 0.5 * 1.5 (D) = 1.75,
    # D 1 * 2 (A) + 0.5 * 1.5 (C) = 2.75: D ahead.
    results = [
        win(1, "A", "B"),
        win(1, "A", "C"),
        win(2, "D", "A"),
        win(2, "C", "B"),
        win(3, "B", "D"),
        draw(3, "C", "D"),
    ]
    rows = {s.bot: s for s in standings("ABCD", results, swiss=True)}
    assert rows["C"].buchholz == rows["D"].buchholz == 4.5
    assert (rows["C"].sonneborn_berger, rows["D"].sonneborn_berger) == (1.75, 2.75)
    assert [s.bot for s in standings("ABCD", results, swiss=True)] == ["A", "D", "C", "B"]
    # A beats B and C, A draws D, B draws C, B beats D, D beats C.
    # Points: A 2.5, B 1.5, D 1.5, C 0.5. B and D: Buchholz 4.5 each, Sonneborn-Berger
    # B 0.5 * 0.5 (C) + 1 * 1.5 (D) = 1.75, D 0.5 * 2.5 (A) + 1 * 0.5 (C) = 1.75; B beat D.
    results = [
        win(1, "A", "B"),
        win(1, "A", "C"),
        draw(2, "A", "D"),
        draw(2, "B", "C"),
        win(3, "B", "D"),
        win(3, "D", "C"),
    ]
    rows = {s.bot: s for s in standings("DCBA", results, swiss=True)}
    assert rows["B"].buchholz == rows["D"].buchholz == 4.5
    assert rows["B"].sonneborn_berger == rows["D"].sonneborn_berger == 1.75
    assert (rows["B"].head_to_head, rows["D"].head_to_head) == (1.0, 0.0)
    assert [s.bot for s in standings("DCBA", results, swiss=True)] == ["A", "B", "D", "C"]


def test_the_name_orders_entrants_level_on_everything() -> None:
    results = [draw(1, "b", "a"), draw(1, "d", "c")]
    for swiss in (False, True):
        assert [s.bot for s in standings("dcba", results, swiss=swiss)] == ["a", "b", "c", "d"]
