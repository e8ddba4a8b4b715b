"""A copy of this working tree with a Python of its own, for tools that run the suite on code
that differs from the checkout (a second copy beside it, a mutated module).

The copy gets a virtual environment that sees this machine's packages (the dependencies) and
has the copy installed in strict editable mode ahead of them, so ``import ply_arena`` there is
the copy's, never the checkout's own editable install.
"""

from __future__ import annotations

import shutil
import site
import subprocess
import sysconfig
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IGNORED = shutil.ignore_patterns(
    ".git", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", "*.egg-info",
    "stress-logs", "mutation-results", "*.db", "*.db-wal", "*.db-shm", "build", "node_modules",
    ".coverage", ".coverage.*", "htmlcov", ".venv", "venv", "test-screenshots",
)  # fmt: skip


def copy_tree(where: Path) -> Path:
    """This working tree (uncommitted changes included) copied to ``where``."""
    shutil.copytree(ROOT, where, ignore=IGNORED)
    return where


def python_for_copy(copy: Path, where: Path) -> str:
    """A Python whose ``ply_arena`` is ``copy``: a venv in ``where``, the copy installed in it."""
    venv.create(where, system_site_packages=True, with_pip=True)
    python = str(where / "bin" / "python")
    # The machine's packages join sys.path only after the venv's own .pth files ran; coverage's
    # (patch = subprocess, which starts coverage in every Python the tests start) needs greenlet
    # at that moment, so the first .pth file adds them.
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    machine = "\n".join([*site.getsitepackages(), sysconfig.get_paths()["purelib"]])
    (Path(purelib) / "a0_machine_site_packages.pth").write_text(machine + "\n")
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--no-deps", "-e", str(copy),
         "--config-settings", "editable_mode=strict"],
        check=True,
    )  # fmt: skip
    return python
