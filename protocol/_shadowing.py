"""Say so when a student's own file hides one of Ply Arena's packages.

Python puts the bot script's folder first on ``sys.path``, so a ``games.py`` next to the bot is
imported instead of Ply Arena's ``games`` package, and the kit then fails with a baffling
``cannot import name 'Game' from 'games'``. The kit calls :func:`check_not_shadowed` before it
imports ``games``, so the student reads what to rename instead.

(A ``protocol.py`` next to the bot cannot be caught here: it hides this very package, so none of
this code runs. docs/protocol.md's kit section shows the error it gives.)
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

#: The folder holding Ply Arena's packages (games/, protocol/, ...).
_ROOT = Path(__file__).resolve().parent.parent


class ShadowedPackageError(ImportError):
    """A module of the student's hides one of Ply Arena's packages."""


def check_not_shadowed(package: str) -> None:
    """ShadowedPackageError if ``import package`` would not give Ply Arena's ``package``.

    Looks without importing anything: at the module already imported under that name, else at
    where the import system would find it.
    """
    module = sys.modules.get(package)
    if module is not None:
        origin = getattr(module, "__file__", None)
    else:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            return
        origin = spec.origin if spec is not None else None
    if origin is None or origin in ("built-in", "frozen"):
        return  # not found at all, or a namespace: the import itself will say what is wrong
    path = Path(origin).resolve()
    if path.name == "__init__.py" and (
        path.parent == _ROOT / package or (path.parent / "_api.py").is_file()
    ):
        return  # Ply Arena's package (this copy, or another install of it)
    raise ShadowedPackageError(_advice(package, path), name=package, path=str(path))


def _advice(package: str, path: Path) -> str:
    if path.name == "__init__.py":
        what, where, rename = "folder", path.parent, f"my_{package}"
    elif path.suffix == ".py":
        what, where, rename = "file", path, f"my_{package}.py"
    else:  # a compiled or extension module left behind, e.g. games.pyc
        return (
            f"the file {path} hides Ply Arena's `{package}` package, so the bot kit cannot "
            f"import it: delete it (and any {package}.py next to it, renamed e.g. my_{package}.py)"
        )
    return (
        f"your {what} {where} hides Ply Arena's `{package}` package, so the bot kit cannot "
        f"import it: rename it (e.g. {rename}), change your imports to match, and delete any "
        f"__pycache__ folder next to it"
    )
