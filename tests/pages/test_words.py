"""How the pages say a result, in words."""

from __future__ import annotations

from ply_arena.server.pages.words import (
    game_score,
    result_sentence,
    score,
    sentence_case,
    short_result,
    think_time,
)


def test_faults_name_the_bot_its_seat_and_the_move() -> None:
    bots = ["alice", "bob"]
    said = result_sentence(
        "tic_tac_toe", bots, termination="timeout", at_fault=1, payoffs=[1, -1], moves=22
    )
    assert said == "bob (O) lost on time at move 23."
    assert (
        result_sentence(
            "othello", bots, termination="illegal_move", at_fault=0, payoffs=[-1, 1], moves=0
        )
        == "alice (Black) lost by an illegal move at move 1."
    )
    assert (
        short_result("connect_four", bots, termination="disconnect", at_fault=0, payoffs=[-1, 1])
        == "alice (X) lost by disconnecting"
    )


def test_wins_draws_and_the_kinds_of_backgammon_win() -> None:
    bots = ["w", "b"]
    assert (
        result_sentence(
            "backgammon", bots, termination="normal", at_fault=None, payoffs=[-2, 2], moves=41
        )
        == "b (Black) won a gammon after 41 moves."
    )
    assert (
        result_sentence(
            "backgammon", bots, termination="normal", at_fault=None, payoffs=[3, -3], moves=1
        )
        == "w (White) won a backgammon after 1 move."
    )
    assert (
        result_sentence(
            "tic_tac_toe", bots, termination="normal", at_fault=None, payoffs=[0, 0], moves=9
        )
        == "Drawn after 9 moves."
    )
    assert (
        result_sentence(
            "tic_tac_toe", bots, termination="move_limit", at_fault=None, payoffs=[0, 0], moves=9
        )
        == "Drawn: the move limit was reached after 9 moves."
    )
    assert (
        result_sentence(
            "tic_tac_toe", bots, termination="aborted", at_fault=None, payoffs=[0, 0], moves=3
        )
        == "Aborted after 3 moves (the server stopped); not rated."
    )


def test_three_players_are_placed() -> None:
    said = result_sentence(
        "chinese_checkers", ["a", "b", "c"], termination="normal", at_fault=None,
        payoffs=[0.0, 1.0, -1.0], moves=300,
    )  # fmt: skip
    assert said == "b (Green) won after 300 moves; a (Red) second, c (Blue) third."
    # Level seats share the better place, as the ratings rank them.
    tied = result_sentence(
        "chinese_checkers", ["a", "b", "c"], termination="normal", at_fault=None,
        payoffs=[1.0, -0.5, -0.5], moves=184,
    )  # fmt: skip
    assert tied == "a (Red) won after 184 moves; b (Green) tied second, c (Blue) tied second."


def test_think_times_read_naturally() -> None:
    assert [think_time(v) for v in (None, 12, 1500, 65_000)] == ["", "12 ms", "1.50 s", "1 min 5 s"]


def test_a_chinese_checkers_game_at_its_cap_says_so() -> None:
    said = result_sentence(
        "chinese_checkers", ["a", "b", "c"], termination="normal", at_fault=None,
        payoffs=[1.0, 0.0, -1.0], moves=1000,
    )  # fmt: skip
    assert said.startswith("a (Red) won after 1000 moves (the game's 1000-ply limit")


def test_points_read_as_a_crosstable_writes_them() -> None:
    from ply_arena.server.pages.words import points

    assert [points(x) for x in (1.0, 0.5, 2.5, 0.75, -1.0, -0.5, 0.0)] == [
        "1", "½", "2½", "0.75", "-1", "-½", "0"]  # fmt: skip


def test_a_reported_score_is_rounded_as_a_reader_takes_it_in() -> None:
    assert score(0.0271532) == "0.0272"
    assert score(-0.123456) == "-0.123"
    assert score(1.23456) == "1.23" and score(2.5) == "2.5"
    assert score(312.66) == "313" and score(-1_000_000.0) == "-1000000"
    assert score(3.0) == "3" and score(0) == "0"


def test_a_tournament_game_is_written_as_standings_count_it_and_in_words() -> None:
    assert game_score(["alice", "bob"], [1.0, -1.0]) == "1-0, alice won"
    assert game_score(["alice", "bob"], [-2.0, 2.0]) == "0-1, bob won"  # a gammon is a win
    assert game_score(["alice", "bob"], [0.0, 0.0]) == "½-½, drawn"
    assert game_score(["a", "b", "c"], [-1.0, 0.0, 1.0]) == "0-½-1, c won"


def test_a_status_starts_with_a_capital() -> None:
    assert sentence_case("black to move") == "Black to move"
    assert sentence_case("X to move") == "X to move" and sentence_case("") == ""
