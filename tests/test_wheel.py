"""The wheel, as `pip install ply-arena` would install it: one import name (``ply_arena``), every
module and data file inside it, and a working server from a fresh virtual environment.

The wheel is built from a copy of the sources (a build in the checkout would pick up stale files
from an earlier build in build/lib). The virtual environment sees the machine's packages
(``--system-site-packages``) so that the test needs no download of the dependencies; the
wheel goes in with ``--no-deps`` and the test checks that ``ply_arena`` comes from the venv,
not from this checkout.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "server"))
from _server_process import start_server_process

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {
    "ply_arena_top": "ply_arena",
    "games": "ply_arena/games",
    "protocol": "ply_arena/protocol",
    "reference_agents": "ply_arena/reference_agents",
    "server": "ply_arena/server",
}
#: Building may fetch setuptools into pip's isolated build environment the first time.
BUILD_TIMEOUT_S = 300

pytestmark = pytest.mark.timeout(BUILD_TIMEOUT_S + 120)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    for folder in FOLDERS:
        shutil.copytree(
            ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = out.glob("*.whl")
    return built


@pytest.fixture(scope="module")
def venv_dir(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("venv") / "venv"
    venv.create(where, system_site_packages=True, with_pip=True)
    python = where / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return where


def source_files(folder: str) -> set[str]:
    """The files of ``folder`` a wheel must hold, as paths inside the wheel."""
    inside = FOLDERS[folder]
    return {
        f"{inside}/{path.relative_to(ROOT / folder).as_posix()}"
        for path in (ROOT / folder).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_the_wheel_holds_one_import_name_and_every_file(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    tops = {name.split("/")[0] for name in names}
    assert tops == {"ply_arena", wheel.name.split("-py3")[0] + ".dist-info"}
    expected = set().union(*(source_files(folder) for folder in FOLDERS))
    assert expected - names == set()  # modules, migrations, templates, static files, schema
    assert {
        "ply_arena/py.typed",
        "ply_arena/protocol/schema.json",
        "ply_arena/server/alembic.ini",
        "ply_arena/server/pages/templates/base.html",
    } <= names
    entry_points = zipfile.ZipFile(wheel).read(
        f"{sorted(tops - {'ply_arena'})[0]}/entry_points.txt"
    )
    assert b"arena = ply_arena.server.cli:main" in entry_points


def run(venv_dir: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_the_installed_wheel_is_what_python_imports(venv_dir: Path, tmp_path: Path) -> None:
    python = str(venv_dir / "bin" / "python")
    done = run(venv_dir, tmp_path, python, "-c", "import ply_arena; print(ply_arena.__file__)")
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_relative_to(venv_dir)
    help_text = run(venv_dir, tmp_path, str(venv_dir / "bin" / "arena"), "--help")
    assert help_text.returncode == 0, help_text.stderr
    assert "serve" in help_text.stdout and "agent" in help_text.stdout


PLAYING_BOT = """\
import games, protocol, server  # the student's own files
import random, sys
from ply_arena import run_bot
import ply_arena

assert games.MINE and protocol.MINE and server.MINE
print(ply_arena.__file__)

def choose(state, legal_moves, clock):
    return random.choice(legal_moves)

url, token = sys.argv[1:3]
for end in run_bot(url, token, choose, game='tic_tac_toe', games=1):
    print(end.match_id, end.termination.value)
"""


def test_the_installed_wheel_serves_and_plays(venv_dir: Path, tmp_path: Path) -> None:
    # The migrations run at the first start, the pages render from the packaged templates, a
    # house bot (searching in the server's worker processes) meets a kit bot and they play.
    server = start_server_process(
        tmp_path / "arena.db", arena=[str(venv_dir / "bin" / "arena")], house_bots="default"
    )
    try:
        home = httpx.get(server.url + "/", timeout=10)
        assert home.status_code == 200 and "Ply Arena" in home.text
        assert httpx.get(server.url + "/static/match.js", timeout=10).status_code == 200
        token = server.create_bot("wheel-student")
        folder = tmp_path / "student"
        folder.mkdir()
        for name in ("games", "protocol", "server"):
            (folder / f"{name}.py").write_text("MINE = True\n")
        (folder / "bot.py").write_text(PLAYING_BOT)
        done = subprocess.run(
            [str(venv_dir / "bin" / "python"), "bot.py", server.ws_url, token],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert done.returncode == 0, done.stderr
        where, result = done.stdout.splitlines()
        assert Path(where).is_relative_to(venv_dir)
        match_id, termination = result.split()
        assert termination == "normal"
        record = httpx.get(f"{server.url}/api/matches/{match_id}", timeout=10).json()
        assert record["status"] == "finished"
        assert any(seat["bot"].startswith("house-") for seat in record["seats"])
        page = httpx.get(f"{server.url}/matches/{match_id}", timeout=10)
        assert page.status_code == 200 and "<svg" in page.text  # the replay, board drawn
    finally:
        # uvicorn re-raises the SIGTERM it handled once it has shut down cleanly.
        assert server.stop() in (0, -15), server.log
