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


#: Runs a script as `python SCRIPT` would, with Ply Arena found the way `pip install -e .` finds
#: it: by a finder on sys.meta_path, after the search of sys.path (not a sys.path entry, which a
#: PYTHONPATH would be). Only then does a folder without __init__.py hide Ply Arena's package.
EDITABLE = """
import os, runpy, sys
from importlib.machinery import PathFinder

root, script = sys.argv[1], sys.argv[2]
del sys.argv[1]

class Editable:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name in ("games", "protocol", "reference_agents", "server"):
            return PathFinder.find_spec(name, [root])
        return None

sys.meta_path.insert(sys.meta_path.index(PathFinder) + 1, Editable)
sys.path[0] = os.path.dirname(os.path.abspath(script))
runpy.run_path(script, run_name="__main__")
"""


def run_editable(folder: Path, script: str) -> subprocess.CompletedProcess[str]:
    """``python SCRIPT`` in ``folder`` with this checkout installed as ``pip install -e``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-c", EDITABLE, str(ROOT), script],
        cwd=folder, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_the_editable_launcher_imports_this_checkout(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(BOT + "import protocol.client as c\nprint(c.__file__)\n")
    done = run_editable(tmp_path, "bot.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["the", "kit", "imported", str(ROOT / "protocol" / "client.py")]


@pytest.mark.parametrize("imported_first", [False, True])
def test_a_students_games_folder_without_init_py_is_named_with_what_to_do(
    tmp_path: Path, imported_first: bool
) -> None:
    # A natural folder for notes. Without the check: ImportError: cannot import name 'Game'
    # from 'games' (unknown location).
    notes = tmp_path / "games"
    notes.mkdir()
    (notes / "ideas.md").write_text("try iterative deepening\n")
    (tmp_path / "bot.py").write_text(("import games\n" if imported_first else "") + BOT)
    done = run_editable(tmp_path, "bot.py")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        f"protocol._shadowing.ShadowedPackageError: your folder {notes.resolve()} hides Ply "
        "Arena's `games` package (a folder without an __init__.py is a package to Python too), "
        "so the bot kit cannot import it: rename it (e.g. my_games), and change your imports "
        "to match if you import from it"
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


def test_a_protocol_folder_hides_only_the_kit_modules_it_holds(tmp_path: Path) -> None:
    # docs/protocol.md: with `pip install -e .` a protocol/ folder (with or without __init__.py)
    # is harmless until it holds a file named like one of the kit's modules.
    folder = tmp_path / "protocol"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "notes.md").write_text("the wire format, in my words\n")
    (tmp_path / "bot.py").write_text(BOT)
    done = run_editable(tmp_path, "bot.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the kit imported\n"

    (folder / "client.py").write_text("def my_client():\n    pass\n")
    done = run_editable(tmp_path, "bot.py")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        "ImportError: cannot import name 'run_bot' from 'protocol.client' "
        f"({folder.resolve() / 'client.py'})"
    )
    words = " ".join((ROOT / "docs" / "protocol.md").read_text().split())
    assert "ImportError: cannot import name 'run_bot' from 'protocol.client' (/home/you/" in words
