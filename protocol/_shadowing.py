"""Say so when a student's own file hides one of Ply Arena's packages.

Python puts the bot script's folder first on ``sys.path``, so a ``games.py`` next to the bot is
imported instead of Ply Arena's ``games`` package, and the kit then fails with a baffling
``cannot import name 'Game' from 'games'``. The kit calls :func:`check_not_shadowed` before it
imports ``games``, so the student reads what to rename instead.

A ``games`` folder without ``__init__.py`` hides it too when Ply Arena is installed with
``pip install -e .``: Python takes such a folder for a namespace package, and the editable
install's finder, which runs after the search of ``sys.path``, is never asked.

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
        folders = getattr(module, "__path__", None)
    else:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            return
        if spec is None:
            return  # not found at all: the import itself will say so
        origin, folders = spec.origin, spec.submodule_search_locations
    if origin is None or origin == "namespace":
        # A namespace package: folders named `package` without an __init__.py.
        paths = [Path(folder).resolve() for folder in folders or ()]
        if paths and not any(_is_ours(package, folder) for folder in paths):
            raise ShadowedPackageError(
                _namespace_advice(package, paths), name=package, path=str(paths[0])
            )
        return
    if origin in ("built-in", "frozen"):
        return
    path = Path(origin).resolve()
    if path.name == "__init__.py" and _is_ours(package, path.parent):
        return  # Ply Arena's package (this copy, or another install of it)
    raise ShadowedPackageError(_advice(package, path), name=package, path=str(path))


def _is_ours(package: str, folder: Path) -> bool:
    """Is ``folder`` Ply Arena's ``package`` (this copy, or another install of it)?"""
    return folder == _ROOT / package or (folder / "_api.py").is_file()


def _namespace_advice(package: str, folders: list[Path]) -> str:
    where = ", ".join(str(folder) for folder in folders)
    return (
        f"your folder {where} hides Ply Arena's `{package}` package (a folder without an "
        f"__init__.py is a package to Python too), so the bot kit cannot import it: rename it "
        f"(e.g. my_{package}), and change your imports to match if you import from it"
    )


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
