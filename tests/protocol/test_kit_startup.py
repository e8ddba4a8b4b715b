"""What a student sees when a bot cannot start: a file that hides one of Ply Arena's packages,
an example run without arguments. Real subprocesses in temporary folders, as a student runs them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOT = "from protocol.client import run_bot\nprint('the kit imported')\n"


def run_python(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in ``folder``, with this checkout's packages importable (after the
    script's own folder, which Python puts first: that is what lets a student's file hide them)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=60
    )


def test_a_students_games_py_is_named_with_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "games.py").write_text("def helper():\n    return 1\n")
    (tmp_path / "bot.py").write_text(BOT)
    done = run_python(tmp_path, "bot.py")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        f"protocol._shadowing.ShadowedPackageError: your file {tmp_path.resolve() / 'games.py'} "
        "hides Ply Arena's `games` package, so the bot kit cannot import it: rename it (e.g. "
        "my_games.py), change your imports to match, and delete any __pycache__ folder next to it"
    )


def test_a_students_games_folder_and_an_imported_games_module_are_caught(tmp_path: Path) -> None:
    package = tmp_path / "games"
    package.mkdir()
    (package / "__init__.py").write_text("")
    # The student's own code imports its games first: the kit looks at sys.modules too.
    (tmp_path / "bot.py").write_text("import games\n" + BOT)
    done = run_python(tmp_path, "bot.py")
    assert done.returncode == 1
    assert f"your folder {package.resolve()} hides Ply Arena's `games` package" in done.stderr


def test_a_bot_next_to_no_such_file_starts(tmp_path: Path) -> None:
    (tmp_path / "my_games.py").write_text("")
    (tmp_path / "bot.py").write_text(BOT)
    done = run_python(tmp_path, "bot.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the kit imported\n"


@pytest.mark.parametrize("doc", ["docs/protocol.md", "README.md"])
def test_the_protocol_py_error_is_documented_word_for_word(tmp_path: Path, doc: str) -> None:
    # A protocol.py hides the kit's own package, so no kit code runs to explain it: the docs
    # show the exact line a student gets, so that searching for it finds the answer.
    (tmp_path / "protocol.py").write_text("VERSION = 1\n")
    (tmp_path / "bot.py").write_text(BOT)
    done = run_python(tmp_path, "bot.py")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        "ModuleNotFoundError: No module named 'protocol.client'; 'protocol' is not a package"
    )
    text = (ROOT / doc).read_text()
    assert last in text and "protocol.py" in text


def test_the_example_bot_without_arguments_prints_its_usage(tmp_path: Path) -> None:
    done = run_python(tmp_path, str(ROOT / "examples" / "random_bot.py"))
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "Plays random legal moves. Usage: python random_bot.py ws://HOST:PORT/ws TOKEN GAME [GAMES]"
    )
