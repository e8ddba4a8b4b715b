"""One import name, ``ply_arena``: nothing imports the old top-level names, the packaging lists
every subpackage, and the short public surface for bot authors works and stays light."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The repository's folders and the name each is installed under.
FOLDERS = {
    "games": "ply_arena.games",
    "protocol": "ply_arena.protocol",
    "reference_agents": "ply_arena.reference_agents",
    "server": "ply_arena.server",
    "ply_arena_top": "ply_arena",
}
OLD_NAMES = {"games", "protocol", "reference_agents", "server", "ply_arena_top"}
#: Every folder of Python the project keeps (what a grep for old imports must cover).
SOURCE_FOLDERS = [*FOLDERS, "tests", "bench", "examples", "scripts"]


def python_files() -> list[Path]:
    files = [path for folder in SOURCE_FOLDERS for path in (ROOT / folder).rglob("*.py")]
    return [path for path in files if "node_modules" not in path.parts]


def old_imports(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line: statement`` for each import of an old top-level name in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        if any(name.split(".")[0] in OLD_NAMES for name in names):
            found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_file_imports_the_old_top_level_names() -> None:
    files = python_files()
    assert len(files) > 250  # the walk really covers the tree
    found = [line for path in files for line in old_imports(path)]
    assert found == [], "import these as ply_arena.*:\n" + "\n".join(found)


def test_the_grep_finds_an_old_import(tmp_path: Path) -> None:
    # The check above could pass by finding nothing at all: it must see each form.
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import games\nfrom protocol.client import run_bot\nimport server.app as app\n"
        "from ply_arena import games as g\nfrom . import reference_agents\n"
    )
    found = [line.split(": ", 1)[1] for line in old_imports(sample, tmp_path)]
    assert found == [
        "import games",
        "from protocol.client import run_bot",
        "import server.app as app",
    ]


def test_no_string_names_an_old_module_path() -> None:
    # Module paths in strings (the registries' "module:Class", logger names, `python -m ...`)
    # are imports too, only later.
    modules = {
        folder: {path.stem for path in (ROOT / folder).iterdir() if path.name != "__pycache__"}
        for folder in FOLDERS
    }
    found = []
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                head, _, rest = node.value.strip().partition(":")[0].partition(".")
                if head in modules and rest.split(".")[0] in modules[head]:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert found == [], "\n".join(found)


def test_no_docstring_example_imports_an_old_name() -> None:
    # Importing the folder names works only where the repository's root is on the path: a user who
    # copies it gets ModuleNotFoundError, or their own games.py.
    pattern = re.compile(r">>> (import|from) (games|protocol|reference_agents|server)\b")
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in python_files()
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if pattern.search(line)
    ]
    assert found == [], "write `>>> from ply_arena import games`:\n" + "\n".join(found)


def test_logger_names_are_the_new_module_names() -> None:
    # A logger named "server" configured by the app would silence ply_arena.server's lines.
    found = []
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            named = None
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "getLogger":
                named = node.args[0] if node.args else None
            elif isinstance(node, ast.Subscript) and "loggers" in ast.unparse(node.value):
                named = node.slice
            if isinstance(named, ast.Constant) and str(named.value).split(".")[0] in OLD_NAMES:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert found == [], "\n".join(found)


def test_pyproject_lists_every_package_folder() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {name: folder for folder, name in FOLDERS.items()}
    folders = {
        init.parent
        for folder in FOLDERS
        for init in (ROOT / folder).rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    expected = set()
    for found in folders:
        top = found.relative_to(ROOT).parts[0]
        rest = found.relative_to(ROOT / top).parts
        expected.add(".".join([FOLDERS[top], *rest]))
    listed = set(config["packages"])
    assert expected - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    # The rest are folders of data files (no __init__.py), which setuptools wants listed too.
    data = listed - expected
    for name in data:
        top, *rest = name.removeprefix("ply_arena.").split(".")
        folder = ROOT.joinpath(top, *rest)
        assert folder.is_dir() and not (folder / "__init__.py").exists(), name
        assert not any(folder.glob("*.py")) or "migrations" in name, name


def run_python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_the_public_surface_for_bot_authors(tmp_path: Path) -> None:
    code = (
        "import ply_arena\n"
        "from ply_arena import run_bot, get, names, IllegalMoveError, InvalidMoveError\n"
        "from ply_arena.protocol.client import run_bot as kit_run_bot\n"
        "from ply_arena.games import get as games_get\n"
        "assert run_bot is kit_run_bot and get is games_get\n"
        "game = get('connect_four')\n"
        "try:\n"
        "    game.parse_move(game.initial_state(), 'x')\n"
        "except InvalidMoveError as error:\n"
        "    print('invalid:', error)\n"
        "print(names(), sorted(ply_arena.__all__), ply_arena.__version__)\n"
    )
    done = run_python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("invalid: ")
    assert "'run_bot'" in done.stdout and "'connect_four'" in done.stdout
    missing = run_python("import ply_arena\nply_arena.no_such_name", tmp_path)
    assert "AttributeError: module 'ply_arena' has no attribute 'no_such_name'" in missing.stderr


def test_the_rules_stay_light(tmp_path: Path) -> None:
    # games <- reference_agents <- server: the game API must not drag in the kit's or the
    # server's dependencies just because ply_arena's __init__ offers run_bot.
    code = (
        "import sys\nimport ply_arena\nfrom ply_arena import get\nget('othello')\n"
        "heavy = [m for m in ('pydantic', 'websockets', 'starlette', 'sqlalchemy',"
        " 'ply_arena.protocol', 'ply_arena.server') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    done = run_python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_each_folder_is_imported_from_this_checkout(folder: str, tmp_path: Path) -> None:
    name = FOLDERS[folder]
    done = run_python(f"import {name}\nprint({name}.__file__)", tmp_path)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).resolve() == ROOT / folder / "__init__.py"
