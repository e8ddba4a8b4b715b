"""The ``/analyze`` page in a real browser (headless Chromium through Playwright): the search
tree drawn from the server's report, pruned branches greyed with their reason, chance nodes
with their probabilities, folding, the position of a node on pointing at it, moves played by
clicking the board, the node limit answered with a message, and the replay's link to it."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlparse

from _browser import Browser
from conftest import LiveServer

from ply_arena.server.db.database import Database


def _walk(node: dict[str, Any]) -> list[dict[str, Any]]:
    out = [node]
    for child in node["children"]:
        out += _walk(child)
    return out


async def _report(page: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(await page.locator("#analysis-data").text_content())
    return data


async def test_alphabeta_depth_2_shows_its_pruned_branches_and_each_nodes_position(
    live_server: LiveServer, browser: Browser
) -> None:
    page = await browser.page(1400, 900)
    await page.goto(
        f"{live_server.url}/analyze?game=tic_tac_toe&moves=b2+a3+c3&agent=alphabeta&depth=2"
    )
    data = await _report(page)
    nodes = _walk(data["trace"]["tree"])
    # One shape per node of the tree.
    drawn = page.locator("#tree-box svg .node:not(.pseudo)")
    assert await drawn.count() == len(nodes) == 23
    assert await page.locator("#best").inner_text() == data["trace"]["answer"]["move"]
    # Every pruned move is drawn, greyed, saying why it was not searched.
    pruned = [(n, m) for n in nodes for m in n.get("pruned", [])]
    assert pruned, "this search prunes"
    greyed = page.locator("#tree-box svg .node.pseudo.pruned")
    assert await greyed.count() == len(pruned)
    first, move = pruned[0]
    title = await greyed.first.locator("title").text_content()
    assert title == (
        f"pruned {move}: cut-off after {first['cutoff']['after']} (v {first['cutoff']['v']:g} "
        f"{first['cutoff']['test']} {first['cutoff']['bound']:g})"
    )
    # The node that was cut is marked, and its edge to a pruned move is dashed.
    assert await page.locator(f'#tree-box [data-id="{first["id"]}"].cut').count() == 1

    # Pointing at a node shows its position: the board after the moves that lead to it.
    child = data["trace"]["tree"]["children"][1]
    await page.locator(f'#tree-box [data-id="{child["id"]}"]').hover()
    await page.locator("#node-details h3").filter(has_text=child["move"]).wait_for()
    src = await page.locator("#node-details img.node-board").get_attribute("src")
    query = parse_qs(urlparse(src).query)
    assert json.loads(query["position"][0]) == data["nodes"][str(child["id"])]["position"]
    assert query["last"] == [child["move"]]
    line = await page.locator("#node-details .node-line").text_content()
    assert line == data["nodes"][str(child["id"])]["line"]
    # The board image is served (CSP allows the app's own images).
    image = await page.request.get(live_server.url + src)
    assert image.status == 200 and "<svg" in await image.text()

    # Clicking a node folds its subtree; clicking again unfolds it.
    below = len(_walk(child)) - 1
    assert below > 0
    await page.locator(f'#tree-box [data-id="{child["id"]}"]').click()
    await page.wait_for_function(
        "(n) => document.querySelectorAll('#tree-box svg .node:not(.pseudo)').length === n",
        arg=len(nodes) - below,
    )
    assert (
        await page.locator(f'#tree-box [data-id="{child["id"]}"]').get_attribute("aria-expanded")
        == "false"
    )
    await page.locator(f'#tree-box [data-id="{child["id"]}"]').press("Enter")
    await page.wait_for_function(
        "(n) => document.querySelectorAll('#tree-box svg .node:not(.pseudo)').length === n",
        arg=len(nodes),
    )
    await browser.shot(page, "analyze-tic_tac_toe-alphabeta")
    assert browser.dialogs == [] and browser.console_errors == []


async def test_expectiminimax_shows_chance_nodes_with_their_probabilities(
    live_server: LiveServer, browser: Browser
) -> None:
    page = await browser.page(1400, 900)
    await page.goto(
        f"{live_server.url}/analyze?game=backgammon&moves=3-1+8%2F5+6%2F5+6-5"
        "&agent=expectiminimax&depth=2&limit=60"
    )
    data = await _report(page)
    chance = [n for n in _walk(data["trace"]["tree"]) if n["kind"] == "chance"]
    assert chance
    # A tree many screens wide opens folded to the root's children, the root in view.
    assert await page.locator("#tree-box svg .node.collapsed").count() > 0
    root = page.locator(f'#tree-box [data-id="{data["trace"]["tree"]["id"]}"]')
    box, at = await page.locator("#tree-box").bounding_box(), await root.bounding_box()
    assert box and at and box["x"] <= at["x"] and at["x"] + at["width"] <= box["x"] + box["width"]
    await page.locator("#expand-all").click()
    assert await page.locator("#tree-box svg .node.kind-chance").count() == len(chance)
    # Each roll under a chance node is labelled with its probability, as a fraction.
    labels = await page.locator("#tree-box svg .node:not(.pseudo) text.move").all_text_contents()
    rolls = [label for label in labels if " p=" in label]
    assert rolls and all(label.endswith(("p=1/36", "p=1/18")) for label in rolls)
    assert sum(label.endswith("p=1/36") for label in rolls) >= 1  # a double
    # The legend says what a chance node is.
    assert "RAND node" in await page.locator(".legend").inner_text()
    await browser.shot(page, "analyze-backgammon-expectiminimax")
    assert browser.dialogs == [] and browser.console_errors == []


async def test_over_the_node_limit_the_page_answers_with_a_message(
    live_server: LiveServer, browser: Browser
) -> None:
    page = await browser.page()
    response = await page.goto(
        f"{live_server.url}/analyze?game=connect_four&agent=minimax&depth=10"
    )
    assert response is not None and response.status == 422
    message = await page.locator("#analysis-error").inner_text()
    assert "more than 20,000 nodes" in message and "smaller depth" in message
    assert await page.locator("#tree-box").count() == 0
    # The form keeps what was asked, to change it.
    assert await page.locator('input[name="depth"]').input_value() == "10"
    # Chromium logs the page's own 422 status; nothing else went wrong.
    assert [e for e in browser.console_errors if "422" not in e] == []


async def test_moves_are_played_by_clicking_the_board(
    live_server: LiveServer, browser: Browser
) -> None:
    page = await browser.page()
    await page.goto(f"{live_server.url}/analyze?game=connect_four&moves=4&agent=alphabeta&depth=3")
    before = (await _report(page))["trace"]
    await page.locator('#board a.move-link[data-move="3"]').click()
    await page.wait_for_url("**moves=4+3**")
    position = json.loads(await page.locator("#board svg").get_attribute("data-position"))
    assert position["board"][-1] == "..OX..."  # the disc dropped in column 3
    after = await _report(page)
    assert after["trace"]["options"]["depth"] == 3  # the same search, one move later
    assert (before["root_player"], after["trace"]["root_player"]) == ("O", "X")
    assert await page.locator('input[name="moves"]').input_value() == "4 3"
    # Picked in the form but not sent: a click on the board keeps it.
    await page.locator('select[name="agent"]').select_option("negamax")
    await page.locator('input[name="depth"]').fill("2")
    await page.locator('#board a.move-link[data-move="5"]').click()
    await page.wait_for_url("**moves=4+3+5**")
    kept = await _report(page)
    assert kept["trace"]["algorithm"] == "negamax" and kept["trace"]["options"]["depth"] == 2
    assert browser.dialogs == [] and browser.console_errors == []


async def test_the_replay_links_each_position_to_the_analysis(
    live_server: LiveServer, database: Database, store_match: Any, browser: Browser
) -> None:
    stored = await store_match(database, game="tic_tac_toe", seed=3)
    page = await browser.page()
    await page.goto(f"{live_server.url}/matches/{stored.match_id}#ply=2")
    await page.locator("#position-label").filter(has_text="2 /").wait_for()
    replayed = json.loads(await page.locator("#board svg").get_attribute("data-position"))
    await page.locator("#analyze-link").click()
    await page.wait_for_url("**/analyze?**")
    analysed = json.loads(await page.locator("#board svg").get_attribute("data-position"))
    assert analysed == replayed
    moves = [text for _, _, text in stored.events[:2]]
    assert await page.locator('input[name="moves"]').input_value() == " ".join(moves)
    assert browser.dialogs == [] and browser.console_errors == []
