"""Every example in a docstring of ply_arena runs as written (found, not listed: a module that
gains examples is tested at once). The examples import as a user does: ``from ply_arena import
games``, never the repository's folder names (tests/test_import_names.py checks that too)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

#: The top folders mapped into ``ply_arena`` (pyproject.toml's package-dir). Walked one by one:
#: under the default editable install ``ply_arena.__path__`` holds only ply_arena_top/, and
#: the subpackages are found by setuptools' import hook, which pkgutil cannot list.
TOP_PACKAGES = ("games", "protocol", "reference_agents", "server")


def modules_with_examples() -> list[str]:
    finder = doctest.DocTestFinder()
    found = []
    names = ["ply_arena"]
    for top in TOP_PACKAGES:
        package = importlib.import_module(f"ply_arena.{top}")
        names.append(package.__name__)
        names += [i.name for i in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")]
    for name in names:
        if name.endswith("__main__"):
            continue  # running it runs the command line
        module = importlib.import_module(name)
        if any(test.examples for test in finder.find(module)):
            found.append(name)
    return found


MODULES = modules_with_examples()


def test_the_examples_are_found() -> None:
    # The games, the agents and the server's arithmetic all carry examples.
    assert {"ply_arena.games", "ply_arena.reference_agents.trace"} <= set(MODULES)
    assert {"ply_arena.server.referee.clock", "ply_arena.server.ratings.model"} <= set(MODULES)
    assert len(MODULES) >= 30


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
