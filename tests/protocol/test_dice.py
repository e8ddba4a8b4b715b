"""ply_arena.protocol.dice: rolls anyone can redo from the seed, and a commitment that binds the
server."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from ply_arena import games
from ply_arena.protocol import dice

ROOT = Path(__file__).resolve().parents[2]


def test_the_commitment_is_sha256_of_seed_and_match_id() -> None:
    assert dice.commitment("123", "abc") == hashlib.sha256(b"123:abc").hexdigest()
    assert dice.commitment("123", "abc") != dice.commitment("124", "abc")
    assert dice.commitment("123", "abc") != dice.commitment("123", "abd")


def test_a_roll_is_the_documented_hash_walk() -> None:
    # The module docstring's recipe, written out again independently.
    bg = games.get("backgammon")
    state = bg.initial_state().result(bg.initial_state().actions()[0])  # past the opening
    while not state.is_chance_node():
        state = state.result(state.actions()[0])
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 21
    for ply in range(50):
        x = int.from_bytes(hashlib.sha256(f"99:m1:{ply}".encode()).digest()[:8], "big")
        r = x % 36
        total = 0
        expected = None
        for outcome, p in outcomes:
            total += round(p * 36)
            if r < total:
                expected = outcome
                break
        assert dice.roll("99", "m1", ply, outcomes) == expected


def test_rolls_follow_the_probabilities() -> None:
    outcomes = [("double", 1 / 36), ("other", 2 / 36), ("rest", 33 / 36)]
    counts = Counter(dice.roll("7", "x", ply, outcomes) for ply in range(36_000))
    assert 700 < counts["double"] < 1300 and 1600 < counts["other"] < 2400


def test_probabilities_that_do_not_sum_to_one_are_refused() -> None:
    with pytest.raises(ValueError, match="do not sum to 1"):
        dice.weights([0.5, 0.25])
    assert dice.weights([1 / 30] * 30) == ([1] * 30, 30)  # floats read back as exact fractions


def test_the_javascript_recipe_in_the_docs_rolls_what_the_server_rolls(tmp_path: Path) -> None:
    # docs/protocol.md gives bot authors a JavaScript version of the recipe: it must agree.
    node = shutil.which("node")
    assert node, "node is needed (as for the JavaScript example bot)"
    text = (ROOT / "docs" / "protocol.md").read_text()
    section = text[text.index("## Provably fair dice") :]
    snippet = section[
        section.index("```js\n") + 6 : section.index("```", section.index("```js") + 5)
    ]
    weights = [1] * 6 + [2] * 15  # backgammon's 21 rolls, in 36ths
    script = tmp_path / "roll.js"
    script.write_text(
        snippet
        + f"\nconst w = {json.dumps(weights)}; const out = [];\n"
        + 'for (let p = 0; p < 200; p++) out.push(rollIndex("98765", "Ab_c-1", p, w));\n'
        + 'console.log(out.join(","));\n'
    )
    done = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    expected = [dice.pick("98765", "Ab_c-1", p, [w / 36 for w in weights]) for p in range(200)]
    assert done.stdout.strip() == ",".join(map(str, expected))


def test_the_scheme_names_are_the_published_ones() -> None:
    # Records carry these names and any language's checker reads them: they never change.
    assert (dice.SCHEME, dice.LEGACY_SCHEME) == ("sha256-v1", "python-random-v0")
    text = (ROOT / "docs" / "protocol.md").read_text()
    assert '"scheme": "sha256-v1"' in text or "`sha256-v1`" in text
