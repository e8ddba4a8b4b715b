"""``GET /api/analyze`` and the ``/analyze`` page over HTTP, on a real server: the report is the
command line's, every bad request gets a coded answer at once, and the limits (nodes, seconds,
analyses at once) answer with a message instead of tying the server up."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from conftest import LiveServer

from ply_arena import games
from ply_arena.server.analysis.report import analyze_position, parse_moves

HTML = {"Accept": "text/html"}


def analyze(srv: LiveServer, **params: Any) -> httpx.Response:
    return srv.api("GET", "/api/analyze", params=params)


@pytest.fixture
def live_server(start_server: Callable[..., LiveServer]) -> LiveServer:
    # The analyses here are small, but run at the lowest CPU priority: on a machine busy with
    # other work they may wait for the CPU far longer than the default 5 s. What these tests
    # check is the report; the time limit has tests of its own below.
    return start_server(analyze_time_s=60.0)


def test_the_report_is_the_command_lines_and_each_node_has_its_position(
    live_server: LiveServer,
) -> None:
    response = analyze(
        live_server, game="tic_tac_toe", moves="b2 a3 c3", agent="alphabeta", depth=2
    )
    assert response.status_code == 200, response.text
    report = response.json()
    cli = analyze_position("tic_tac_toe", "b2 a3 c3", "alphabeta", depth=2, trace=True)
    for key in ("best", "value", "pv", "nodes", "depth", "moves", "position"):
        assert report[key] == cli[key], key
    assert report["trace"]["tree"] == cli["trace"]["tree"]
    assert report["trace"]["agrees"] is True
    assert report["trace_text"] == cli["trace_text"]
    # Every node drawn has its position: the root's is the position searched, a child's the
    # position after its move, and its line is the text trace's.
    nodes = report["trace_nodes"]
    tree = report["trace"]["tree"]
    assert nodes[str(tree["id"])]["position"] == report["position"]
    game = games.get("tic_tac_toe")
    root, _ = parse_moves(game, "b2 a3 c3")
    child = tree["children"][0]
    after = root.result(game.parse_move(root, child["move"]))
    assert nodes[str(child["id"])]["position"] == game.state_to_json(after)
    assert f"{child['move']}: {nodes[str(child['id'])]['line']}" in report["trace_text"]

    def count(node: dict[str, Any]) -> int:
        return 1 + sum(count(c) for c in node["children"])

    assert len(nodes) == count(tree) == report["trace"]["shown"]["nodes"]


def test_chance_nodes_and_vectors_and_visits(live_server: LiveServer) -> None:
    response = analyze(
        live_server, game="backgammon", moves="3-1 8/5 6/5 6-5", agent="expectiminimax",
        depth=2, limit=60,
    )  # fmt: skip
    assert response.status_code == 200, response.text
    backgammon = response.json()
    assert backgammon["moves"] == ["3-1", "8/5 6/5", "6-5"]  # a two-checker play, spaced
    rolls = backgammon["trace"]["tree"]["children"][0]
    assert rolls["kind"] == "chance"
    probabilities = [c["probability"] for c in rolls["children"]]
    assert len(probabilities) == 21 and sum(probabilities) == pytest.approx(1)
    assert {round(36 * p) for p in probabilities} == {1, 2}  # doubles 1/36, the others 1/18
    # A roll's position is the same board with those dice to play.
    roll = rolls["children"][0]
    assert backgammon["trace_nodes"][str(roll["id"])]["position"]["dice"]

    maxn = analyze(live_server, game="chinese_checkers", agent="maxn", depth=2).json()
    assert len(maxn["trace"]["tree"]["value"]) == 3

    mcts = analyze(live_server, game="tic_tac_toe", agent="mcts", simulations=300).json()
    tree = mcts["trace"]["tree"]
    assert tree["visits"] == 300 == sum(c["visits"] for c in tree["children"])


@pytest.mark.parametrize(
    ("params", "status", "code", "says"),
    [
        ({"game": "chess", "agent": "alphabeta", "depth": 2}, 400, "unknown_game", "known games"),
        ({"agent": "alphabeta", "depth": 2}, 400, "bad_request", "?game="),
        ({"game": "tic_tac_toe", "moves": "b2 b2", "depth": 2}, 400, "bad_request", "move 2"),
        ({"game": "tic_tac_toe", "moves": "b2 c9", "depth": 2}, 400, "bad_request", "move 2"),
        ({"game": "tic_tac_toe", "agent": "alphabeta"}, 400, "bad_request", "give a depth"),
        ({"game": "tic_tac_toe", "agent": "alphabeta", "depth": "x"}, 400, "bad_request", "depth"),
        ({"game": "tic_tac_toe", "agent": "alphabeta", "depth": 0}, 400, "bad_request", "depth"),
        ({"game": "tic_tac_toe", "agent": "mcts"}, 400, "bad_request", "simulations"),
        ({"game": "tic_tac_toe", "agent": "minimax", "depth": 2, "simulations": 5}, 400,
         "bad_request", "does not simulate"),
        ({"game": "tic_tac_toe", "agent": "random", "depth": 2}, 400, "bad_request",
         "no search tree"),
        ({"game": "tic_tac_toe", "agent": "mcts", "depth": 3}, 400, "bad_request",
         "give simulations="),
        ({"game": "othello", "agent": "alphabeta:move_time=0.05", "depth": 30}, 400,
         "bad_request", "never under a time limit"),
        ({"game": "backgammon", "moves": "3-1", "agent": "alphabeta", "depth": 2}, 400,
         "bad_request", "agents that do"),
        ({"game": "tic_tac_toe", "agent": "alphabeta:ordr=false", "depth": 2}, 400, "bad_request",
         "ordr"),
        ({"game": "tic_tac_toe", "moves": "a1 " * 5000, "depth": 2}, 400, "bad_request",
         "longer than"),
        ({"game": "tic_tac_toe", "moves": "a1 a2 b1 b2 c1", "depth": 2}, 400, "bad_request",
         "game is over"),
        ({"game": "backgammon", "moves": "3-1 8/5 6/5", "agent": "expectiminimax", "depth": 1},
         400, "bad_request", "chance node"),
        ({"game": "tic_tac_toe", "agent": "alphabeta", "depth": 2, "limit": 5000}, 400,
         "bad_request", "limit"),
        ({"game": "tic_tac_toe", "agent": "mcts", "simulations": 10**6}, 422, "limit_reached",
         "at most 20,000"),
    ],
)  # fmt: skip
def test_bad_requests_get_a_coded_answer_that_says_what_to_do(
    live_server: LiveServer, params: dict[str, Any], status: int, code: str, says: str
) -> None:
    response = analyze(live_server, **params)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert says in error["message"], error["message"]
    assert live_server.app.state.analyst.running == 0


def test_a_search_over_the_node_limit_is_refused_with_a_message(live_server: LiveServer) -> None:
    response = analyze(live_server, game="connect_four", agent="minimax", depth=9)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "limit_reached"
    assert "more than 20,000 nodes" in error["message"]
    assert "smaller depth" in error["message"]
    # The server goes on answering, and the next analysis runs.
    assert analyze(live_server, game="tic_tac_toe", agent="minimax", depth=1).status_code == 200


def test_a_search_over_the_time_limit_is_stopped(
    start_server: Callable[..., LiveServer],
) -> None:
    srv = start_server(analyze_time_s=0.5, analyze_max_nodes=10**9)
    started = time.monotonic()
    response = analyze(srv, game="connect_four", agent="minimax", depth=10)
    took = time.monotonic() - started
    assert response.status_code == 422, response.text
    assert "took longer than 0.5 s" in response.json()["error"]["message"]
    # Killed at its time, not run to its end (a depth-10 minimax of Connect Four is about
    # 300 million nodes: minutes).
    assert took < 30
    assert srv.app.state.analyst.running == 0


def test_too_many_at_once_are_told_to_come_back(start_server: Callable[..., LiveServer]) -> None:
    srv = start_server(analyze_time_s=3.0, analyze_max_nodes=10**9, analyze_concurrency=1)
    answers: list[httpx.Response] = []

    def long_one() -> None:
        with httpx.Client(base_url=srv.url, timeout=60) as client:
            answers.append(
                client.get(
                    "/api/analyze",
                    params={"game": "connect_four", "agent": "minimax", "depth": 10},
                )
            )

    thread = threading.Thread(target=long_one)
    thread.start()
    deadline = time.monotonic() + 20
    while srv.app.state.analyst.running == 0:  # the first analysis has started
        assert time.monotonic() < deadline, "the first analysis never started"
        time.sleep(0.01)
    busy = analyze(srv, game="tic_tac_toe", agent="minimax", depth=1)
    assert busy.status_code == 503
    assert busy.headers["retry-after"] == "2"
    assert busy.json()["error"]["code"] == "limit_reached"
    assert "try again" in busy.json()["error"]["message"]
    thread.join(60)
    assert answers and answers[0].status_code == 422  # stopped at its time limit
    assert analyze(srv, game="tic_tac_toe", agent="minimax", depth=1).status_code == 200


def test_analysis_can_be_turned_off(start_server: Callable[..., LiveServer]) -> None:
    srv = start_server(analyze_concurrency=0)
    response = analyze(srv, game="tic_tac_toe", agent="minimax", depth=1)
    assert response.status_code == 503
    assert "turned off" in response.json()["error"]["message"]


# -- the page, without a browser -----------------------------------------------------------


def test_the_page_draws_the_position_and_its_moves(live_server: LiveServer) -> None:
    page = live_server.api("GET", "/analyze", headers=HTML)
    assert page.status_code == 200
    assert "Choose an agent and press Search" in page.text
    # Each empty cell of the board is a link to the position after that move.
    assert page.text.count('class="move-link"') == 9
    after = live_server.api(
        "GET", "/analyze", params={"game": "tic_tac_toe", "moves": "a1 a2 b1 b2 c1"}, headers=HTML
    )
    assert "The game is over: X 1, O -1" in after.text
    assert 'class="move-link"' not in after.text
    rolls = live_server.api(
        "GET", "/analyze", params={"game": "backgammon", "moves": "3-1 8/5 6/5"}, headers=HTML
    )
    assert rolls.status_code == 200
    assert "The dice are to be rolled" in rolls.text and "1/18" in rolls.text


def test_the_page_names_what_is_wrong(live_server: LiveServer) -> None:
    unknown = live_server.api("GET", "/analyze", params={"game": "chess"}, headers=HTML)
    assert unknown.status_code == 404 and "There is no game" in unknown.text
    illegal = live_server.api(
        "GET", "/analyze", params={"game": "tic_tac_toe", "moves": "b2 b2"}, headers=HTML
    )
    assert illegal.status_code == 400
    assert "These moves cannot be played: move 2: illegal move" in illegal.text
    too_big = live_server.api(
        "GET",
        "/analyze",
        params={"game": "connect_four", "agent": "minimax", "depth": "9"},
        headers=HTML,
    )
    assert too_big.status_code == 422
    assert 'id="analysis-error" data-code="limit_reached"' in too_big.text
    hostile = live_server.api(
        "GET",
        "/analyze",
        params={"game": "tic_tac_toe", "agent": "alphabeta", "options": "<script>x</script>"},
        headers=HTML,
    )
    assert "<script>x" not in hostile.text and "&lt;script&gt;x" in hostile.text
