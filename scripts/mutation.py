"""Mutation testing of the rule modules: change one thing in the code, run the tests that
exercise it, and count the changes no test notices.

    python scripts/mutation.py                          # every module in MODULES
    python scripts/mutation.py server/api/throttle.py   # one module (with its tests in MODULES)
    python scripts/mutation.py server/referee/clock.py --tests tests/server/test_clock.py
    python scripts/mutation.py --list server/api/throttle.py   # the mutants, nothing run
    python scripts/mutation.py --jobs 2 ...             # two copies of the tree at once
    python scripts/mutation.py --survivors MODULE       # only what the latest run left alive

How it works. The tree is copied (with a Python of its own, scripts/_tree_copy.py). A baseline
runs the module's test files once under coverage, with each test's node id as the coverage
context, so the tool knows which tests run each line. Then, for each mutant, the module's file in
the copy is replaced by the mutated source and only the tests that ran the mutated line are run
(``pytest -x``); a line run only by a server subprocess the tests started (no test context) runs
every test file of the module. A mutant is

- *killed* when a test fails (or the run errors, or times out: a hang is caught, too);
- *survived* when the tests pass: a change of behaviour nobody checks, or an equivalent mutant;
- *not run* when no test executes its line: it counts as survived.

Equivalent mutants (same behaviour, so no test can tell) are listed with the reason in
scripts/mutation_equivalents.txt and left out of the score. The score of a module is
killed / (mutants - equivalent). The results go to ``mutation-results/`` (one JSON file per
module, named by its path with dots: ``server.api.throttle.py.json``) and a table is printed;
docs/testing.md holds the latest scores and the goal (85% on each module).

The mutations (one at a time, at one place; the Python of each mutant is parsed before it runs):
comparison flips (``<`` to ``<=``, ``==`` to ``!=``, ``in`` to ``not in``, ...), ``and``/``or``
swapped, ``not`` removed, arithmetic swapped (``+``/``-``, ``*``/``/``, ``+=``/``-=``),
numbers plus one, ``True``/``False`` swapped, a string of a module-level constant emptied (a
setting such as a security header), a condition that is a plain name or call negated,
and a statement removed (a call, an assignment to an attribute, a ``raise``, a ``return``'s value,
``break``/``continue``). Logging, docstrings, decorators, annotations and ``Literal`` types are
not mutated.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from _tree_copy import ROOT, copy_tree, python_for_copy

#: The rule modules, the test files that exercise each, and (for a module that is mostly
#: something else) the functions and classes whose code is mutated.
MODULES: dict[str, list[str]] = {
    "server/referee/pairing.py": [
        "tests/server/test_pairing.py",
        "tests/server/test_coming_back.py",
    ],
    "server/referee/coming_back.py": [
        "tests/server/test_coming_back.py",
        "tests/server/test_lobby_pairing.py",
    ],
    "server/referee/clock.py": [
        "tests/server/test_clock.py",
        "tests/server/test_match_runner.py",
        "tests/server/test_bad_input.py",
    ],
    "server/referee/match_runner.py": [
        "tests/server/test_match_runner_states.py",
        "tests/server/test_match_runner.py",
        "tests/server/test_spectators.py",
        "tests/server/test_hostile_clients.py",
        "tests/server/test_bad_input.py",
        "tests/server/test_ws_liveness.py",
        "tests/server/test_storage_recorder.py",
    ],
    "server/referee/lobby.py": [
        "tests/server/test_lobby.py",
        "tests/server/test_lobby_pairing.py",
        "tests/server/test_lobby_decisions.py",
        "tests/server/test_pairing.py",
    ],
    "server/referee/challenges.py": [
        "tests/server/test_challenges.py",
        "tests/server/test_ws_session.py",
    ],
    "server/ws/session.py": [
        "tests/server/test_session_limits.py",
        "tests/server/test_rate_limit.py",
        "tests/server/test_bad_input.py",
        "tests/server/test_hostile_clients.py",
    ],
    "server/api/auth.py": [
        "tests/server/test_auth.py",
        "tests/server/test_classes.py",
        "tests/server/test_api.py",
    ],
    "server/api/throttle.py": ["tests/server/test_throttle.py", "tests/server/test_classes.py"],
    "server/ratings/model.py": [
        "tests/server/test_rating_model.py",
        "tests/server/test_ratings.py",
    ],
    "server/tournaments/swiss.py": [
        "tests/server/test_swiss.py",
        "tests/server/test_tournament_logic.py",
    ],
    "server/tournaments/schedule.py": [
        "tests/server/test_schedule.py",
        "tests/server/test_tournament_logic.py",
    ],
    "server/tournaments/standings.py": [
        "tests/server/test_standings.py",
        "tests/server/test_tournament_logic.py",
    ],
    "server/tournaments/director.py": [
        "tests/server/test_director_steps.py",
        "tests/server/test_tournaments.py",
        "tests/server/test_tournament_crash.py",
    ],
    "protocol/verify.py": [
        "tests/protocol/test_verify.py",
        "tests/server/test_verify_records.py",
        "tests/test_doctests.py",
    ],
    "protocol/dice.py": ["tests/protocol/test_dice.py", "tests/protocol/test_verify.py"],
    "server/pages/headers.py": ["tests/pages/test_pages_http.py"],
}
#: Where only part of a module is a rule module's: the top-level functions or classes (or
#: Class.method) whose code is mutated.
ONLY: dict[str, set[str]] = {
    "server/ws/session.py": {
        "TokenBucket",
        "Session._admit",
        "Session._admit_text",
        "Session._allowed",
        "Session._count_strike",
        "Session._strike",
    },
}
EQUIVALENTS = Path(__file__).with_name("mutation_equivalents.txt")
RESULTS = ROOT / "mutation-results"
#: How ``Literal[...]`` is written (its strings are a type's, not values).
LITERAL = {"Literal", "typing.Literal"}
#: Calls whose removal is not a change of behaviour a test should pin (what is logged).
UNMUTATED_CALLS = {"log", "logger", "logging", "print", "warnings"}

COMPARE_FLIPS = {
    ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">", ast.Eq: "!=", ast.NotEq: "==",
    ast.Is: "is not", ast.IsNot: "is", ast.In: "not in", ast.NotIn: "in",
}  # fmt: skip
COMPARE_TEXT = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
}  # fmt: skip
BINOP_SWAPS = {
    ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "/"), ast.Div: ("/", "*"),
    ast.FloorDiv: ("//", "*"),
}  # fmt: skip
AUGASSIGN_SWAPS = {ast.Add: ("+=", "-="), ast.Sub: ("-=", "+=")}


#: (line, column, end line, end column) of a piece of the source: lines 1-based, columns 0-based.
Span = tuple[int, int, int, int]


@dataclass(frozen=True)
class Mutant:
    path: str  # relative to the tree
    line: int  # 1-based, where the replaced text starts
    col: int  # 0-based character column
    end_line: int
    end_col: int
    original: str
    replacement: str
    operator: str
    #: The first line of the statement it is in: what coverage records for a statement that
    #: spans several lines.
    anchor: int = 0

    @property
    def key(self) -> str:
        """Stable while the code around it does not move: how equivalents are named."""
        change = f"{self.original!r} -> {self.replacement!r}"
        return f"{self.path}:{self.line}:{self.col} {self.operator}: {change}"

    def apply(self, source: str) -> str:
        lines = source.splitlines(keepends=True)
        start = sum(len(line) for line in lines[: self.line - 1]) + self.col
        end = sum(len(line) for line in lines[: self.end_line - 1]) + self.end_col
        assert source[start:end] == self.original, (self.key, source[start:end])
        return source[:start] + self.replacement + source[end:]


def _char_col(line_text: str, byte_col: int) -> int:
    """ast's columns count UTF-8 bytes; the text is characters."""
    return len(line_text.encode()[:byte_col].decode(errors="ignore"))


class _Finder:
    """Walks one module's tree and yields its mutants."""

    def __init__(self, path: str, source: str) -> None:
        self.path = path
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self.tree = ast.parse(source)
        self.skipped: set[int] = set()  # id() of nodes not to mutate (docstrings, logging)
        self.settings: set[int] = set()  # id() of strings in module-level constants

    def text(self, line: int, col: int, end_line: int, end_col: int) -> str:
        return self.source[self.offset(line, col) : self.offset(end_line, end_col)]

    def span(self, node: ast.AST) -> Span:
        line, end_line = node.lineno, node.end_lineno  # type: ignore[attr-defined]
        col = _char_col(self.lines[line - 1], node.col_offset)  # type: ignore[attr-defined]
        end_col = _char_col(self.lines[end_line - 1], node.end_col_offset)  # type: ignore[attr-defined]
        return line, col, end_line, end_col

    def mutant(self, span: Span, replacement: str, operator: str) -> Mutant:
        return Mutant(self.path, *span, self.text(*span), replacement, operator)

    def position(self, offset: int) -> tuple[int, int]:
        """(line, column) of a character offset into the source."""
        before = self.source[:offset]
        line = before.count("\n") + 1
        return line, offset - (before.rfind("\n") + 1)

    def offset(self, line: int, col: int) -> int:
        return sum(len(x) for x in self.lines[: line - 1]) + col

    def between(
        self, left: ast.AST, right: ast.AST, token: str
    ) -> tuple[int, int, int, int] | None:
        """The span of ``token`` in the text between two nodes (an operator ast gives no place)."""
        _, _, line, col = self.span(left)
        end_line, end_col, _, _ = self.span(right)
        first, last = self.offset(line, col), self.offset(end_line, end_col)
        gap = self.source[first:last]
        pattern = r"(?<![\w=<>!])" + r"\s+".join(map(re.escape, token.split())) + r"(?![\w=<>])"
        found = list(re.finditer(pattern, gap))
        if len(found) != 1 or "#" in gap:
            return None  # a comment or something unexpected in between: leave it
        return (*self.position(first + found[0].start()), *self.position(first + found[0].end()))

    def mark_unmutated(self) -> None:
        for statement in self.tree.body:
            if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
                self.settings.update(
                    id(n)
                    for n in ast.walk(statement.value)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)
                )
            for n in ast.walk(statement):
                if isinstance(n, ast.JoinedStr):
                    self.settings.difference_update(id(x) for x in ast.walk(n))
        for node in ast.walk(self.tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and _is_docstring(body[0]):
                self.skipped.update(id(n) for n in ast.walk(body[0]))
            if isinstance(node, ast.Call) and _root_name(node.func) in UNMUTATED_CALLS:
                self.skipped.update(id(n) for n in ast.walk(node))
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                self.skipped.update(id(n) for n in ast.walk(node))
            # Declarations, not rules: decorators (``@dataclass(slots=True)``), annotations
            # and ``Literal[...]`` types.
            for decorator in getattr(node, "decorator_list", []):
                self.skipped.update(id(n) for n in ast.walk(decorator))
            annotation = getattr(node, "annotation", None) or getattr(node, "returns", None)
            if annotation is not None:
                self.skipped.update(id(n) for n in ast.walk(annotation))
            if isinstance(node, ast.Subscript) and ast.unparse(node.value) in LITERAL:
                self.skipped.update(id(n) for n in ast.walk(node))
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                self.skipped.update(id(n) for n in ast.walk(node))

    def mutants(self) -> Iterator[Mutant]:
        self.mark_unmutated()
        for node in ast.walk(self.tree):
            if id(node) in self.skipped:
                continue
            yield from self.of(node)

    def of(self, node: ast.AST) -> Iterator[Mutant]:
        if isinstance(node, ast.Compare):
            left = node.left
            for op, right in zip(node.ops, node.comparators, strict=True):
                span = self.between(left, right, COMPARE_TEXT[type(op)])
                if span is not None:
                    yield self.mutant(span, COMPARE_FLIPS[type(op)], "compare")
                left = right
        elif isinstance(node, ast.BoolOp):
            token, other = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            for left, right in zip(node.values, node.values[1:], strict=False):
                span = self.between(left, right, token)
                if span is not None:
                    yield self.mutant(span, other, "boolean")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield self.mutant(self.span(node), f"({ast.unparse(node.operand)})", "not")
        elif isinstance(node, ast.BinOp) and type(node.op) in BINOP_SWAPS:
            token, other = BINOP_SWAPS[type(node.op)]
            span = self.between(node.left, node.right, token)
            if span is not None and not _is_string(node.left):
                yield self.mutant(span, other, "arithmetic")
        elif isinstance(node, ast.AugAssign) and type(node.op) in AUGASSIGN_SWAPS:
            token, other = AUGASSIGN_SWAPS[type(node.op)]
            span = self.between(node.target, node.value, token)
            if span is not None:
                yield self.mutant(span, other, "arithmetic")
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                yield self.mutant(self.span(node), str(not node.value), "boolean")
            elif isinstance(node.value, int | float) and not isinstance(node.value, bool):
                yield self.mutant(self.span(node), repr(node.value + 1), "number")
            elif id(node) in self.settings:
                yield self.mutant(self.span(node), '""' if node.value else '"?"', "string")
        if isinstance(node, ast.If | ast.While | ast.IfExp) and isinstance(
            node.test, ast.Name | ast.Attribute | ast.Call
        ):
            yield self.mutant(self.span(node.test), f"not {ast.unparse(node.test)}", "condition")
        if isinstance(node, ast.stmt):
            yield from self.removal(node)

    def removal(self, node: ast.stmt) -> Iterator[Mutant]:
        removable = (
            (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call | ast.Await))
            or isinstance(node, ast.Raise | ast.Break | ast.Continue | ast.Delete)
            or (
                isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign)
                and _targets_attribute(node)
            )
        )
        if isinstance(node, ast.Expr) and id(node.value) in self.skipped:
            return  # a call not mutated (logging): nor is its removal
        if isinstance(node, ast.Return) and node.value is not None:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                span = self.span(node)
                yield self.mutant(span, "return None", "statement")
            return
        if not removable:
            return
        line, col, end_line, end_col = self.span(node)
        rest = self.lines[end_line - 1][end_col:].strip()
        if rest and not rest.startswith("#"):
            return  # shares its line with another statement
        yield self.mutant((line, col, end_line, end_col), "pass", "statement")


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _is_string(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant | ast.JoinedStr) and not isinstance(
        getattr(node, "value", None), int | float
    )


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Call):
        node = node.value if isinstance(node, ast.Attribute) else node.func
    return node.id if isinstance(node, ast.Name) else None


def _targets_attribute(node: ast.stmt) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
    return any(isinstance(t, ast.Attribute | ast.Subscript) for t in targets)


def line_ranges(source: str, names: set[str]) -> list[range]:
    """The lines of the top-level functions and classes (or ``Class.method``) named."""
    ranges = []
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if node.name in names:
            ranges.append(range(node.lineno, node.end_lineno + 1))  # type: ignore[operator]
        for child in getattr(node, "body", []):
            method = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if method and f"{node.name}.{child.name}" in names:
                ranges.append(range(child.lineno, child.end_lineno + 1))
    return ranges


def statement_starts(source: str) -> dict[int, int]:
    """line -> first line of the innermost statement that holds it."""
    starts: dict[int, int] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt):
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                starts[line] = max(starts.get(line, 0), node.lineno)
    return starts


def find_mutants(path: str, source: str) -> list[Mutant]:
    """Every mutant of ``source`` (the file ``path``) whose mutated module still parses, within
    the parts ONLY names for that file."""
    found = []
    ranges = line_ranges(source, ONLY[path]) if path in ONLY else None
    starts = statement_starts(source)
    for mutant in _Finder(path, source).mutants():
        if ranges is not None and not any(mutant.line in r for r in ranges):
            continue
        mutant = dataclasses.replace(mutant, anchor=starts.get(mutant.line, mutant.line))
        try:
            ast.parse(mutant.apply(source))
        except SyntaxError:
            continue
        found.append(mutant)
    return sorted(set(found), key=lambda m: (m.line, m.col, m.operator, m.replacement))


def load_equivalents() -> dict[str, str]:
    """key -> reason, from scripts/mutation_equivalents.txt (``KEY  # reason`` per line)."""
    found = {}
    if EQUIVALENTS.exists():
        for line in EQUIVALENTS.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                key, _, reason = line.partition("  # ")
                found[key.strip()] = reason.strip()
    return found


def warn_stale(module: str, mutants: list[Mutant], equivalents: dict[str, str]) -> None:
    """Name the listed equivalents of ``module`` that name no mutant of it: the code around them
    moved (a key names a line and a column), so they would count as survivors again."""
    keys = {m.key for m in mutants}
    stale = [k for k in equivalents if k.startswith(f"{module}:") and k not in keys]
    if stale:
        print(
            f"warning: {len(stale)} equivalent(s) listed for {module} in {EQUIVALENTS.name} "
            "name no mutant of it now (the code moved: find each with --list and fix its key):",
            *(f"  {key}" for key in stale),
            sep="\n",
            file=sys.stderr,
        )


# --- running -------------------------------------------------------------------------------

CONTEXT_PLUGIN = textwrap.dedent('''
    """pytest plugin: each test's node id is the coverage context of the lines it runs, and
    its duration goes to the file MUTATION_DURATIONS names (a JSON line per test)."""
    import json
    import os
    import time

    import coverage
    import pytest

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        cov = coverage.Coverage.current()
        if cov is not None:
            cov.switch_context(item.nodeid)
        started = time.monotonic()
        yield
        took = time.monotonic() - started
        if cov is not None:
            cov.switch_context("")
        path = os.environ.get("MUTATION_DURATIONS")
        if path:
            with open(path, "a") as f:
                f.write(json.dumps([item.nodeid, took]) + "\\n")
''')


@dataclass
class Outcome:
    key: str
    line: int
    operator: str
    status: str  # killed | survived | not_run | equivalent
    seconds: float = 0.0
    tests: int = 0
    detail: str = ""


@dataclass
class Report:
    module: str
    outcomes: list[Outcome] = field(default_factory=list)
    baseline_s: float = 0.0

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)

    @property
    def score(self) -> float:
        counted = len(self.outcomes) - self.count("equivalent")
        return self.count("killed") / counted if counted else 1.0


class Workspace:
    """One copy of the tree with its Python; runs pytest there on a mutated module."""

    def __init__(self, where: Path) -> None:
        self.tree = copy_tree(where / "tree")
        self.python = python_for_copy(self.tree, where / "venv")
        self.plugins = where / "plugins"
        self.plugins.mkdir()
        (self.plugins / "mutation_contexts.py").write_text(CONTEXT_PLUGIN)
        self.data = self.tree / ".mutation-coverage"
        self.durations_file = where / "durations.jsonl"

    def write(self, module: str, source: str) -> None:
        """``module``'s file in the copy becomes ``source``. Its cached bytecode goes: a mutant
        of the same size written in the same second would otherwise run the old code."""
        path = self.tree / module
        path.write_text(source)
        for cached in self.tree.rglob(f"__pycache__/{path.stem}.*.pyc"):
            cached.unlink(missing_ok=True)

    def env(self, durations: bool = False) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE")}
        env["PYTHONPATH"] = str(self.plugins)
        env.pop("MUTATION_DURATIONS", None)
        if durations:
            env["MUTATION_DURATIONS"] = str(self.durations_file)
        return env

    def durations(self) -> dict[str, float]:
        """node id -> seconds its test took in the baseline."""
        found: dict[str, float] = {}
        if self.durations_file.exists():
            for line in self.durations_file.read_text().splitlines():
                node, took = json.loads(line)
                found[node] = took
        return found

    def run(
        self, command: list[str], timeout: float, durations: bool = False
    ) -> tuple[int, float, str]:
        """Exit status (-9 on a timeout), seconds and output of ``command`` in the copy."""
        started = time.monotonic()
        proc = subprocess.Popen(
            command, cwd=self.tree, env=self.env(durations), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )  # fmt: skip
        try:
            out, _ = proc.communicate(timeout=timeout)
            status = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, _ = proc.communicate()
            status = -9
        return status, time.monotonic() - started, out

    def pytest(self, tests: list[str], timeout: float) -> tuple[int, float, str]:
        # A mutant that hangs a test fails it after 60 s rather than pytest's usual 120.
        command = [self.python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                   "-o", "timeout=60", *tests]  # fmt: skip
        return self.run(command, timeout)

    def baseline(self, tests: list[str]) -> tuple[int, float, str]:
        """The tests once, unmutated, under coverage with each test's node id as context
        (the servers and workers they start are measured too: pyproject's [tool.coverage])."""
        command = [
            self.python, "-m", "coverage", "run", "--data-file", str(self.data),
            "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "mutation_contexts", *tests,
        ]  # fmt: skip
        result = self.run(command, timeout=7200, durations=True)
        combine = [self.python, "-m", "coverage", "combine", "-q", "--data-file", str(self.data)]
        self.run(combine, timeout=600)
        return result

    def contexts(self, module: str) -> dict[int, set[str]]:
        """line -> node ids of the tests that ran it ("" for a run outside any test)."""
        import coverage

        data = coverage.CoverageData(basename=str(self.data))
        data.read()
        by_line: dict[int, set[str]] = {}
        for measured in data.measured_files():
            if Path(measured).resolve() == (self.tree / module).resolve():
                for line, names in data.contexts_by_lineno(measured).items():
                    by_line.setdefault(line, set()).update(names)
        return by_line


@dataclass
class _Runner:
    """Runs one mutant at a time on each free workspace."""

    spaces: list[Workspace]
    equivalents: dict[str, str]
    baseline_s: float
    timeout_factor: float
    #: node id -> seconds in the baseline: a mutant's tests run fastest first, so that the
    #: first failure (``-x``) comes as soon as it can.
    durations: dict[str, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def mutant(
        self,
        module: str,
        source: str,
        contexts: dict[int, set[str]],
        tests: list[str],
        mutant: Mutant,
    ) -> Outcome:
        if mutant.key in self.equivalents:
            reason = self.equivalents[mutant.key]
            return Outcome(mutant.key, mutant.line, mutant.operator, "equivalent", detail=reason)
        lines = {mutant.anchor, *range(mutant.line, mutant.end_line + 1)}
        ran = set().union(*(contexts.get(n, set()) for n in lines))
        if not ran:
            return Outcome(mutant.key, mutant.line, mutant.operator, "not_run")
        # Only the module's own test files count; a line they run outside any test (at import,
        # or in a server the tests started): all of those files.
        mine = sorted(
            (n for n in ran if n.split("::")[0] in tests),
            key=lambda n: (self.durations.get(n, 0.0), n),
        )
        if not mine and "" not in ran:
            return Outcome(mutant.key, mutant.line, mutant.operator, "not_run",
                           detail="run only by other modules' tests")  # fmt: skip
        selected = mine or list(tests)
        with self.lock:
            space = self.spaces.pop()
        limit = self.timeout_factor * self.baseline_s + 60
        try:
            space.write(module, mutant.apply(source))
            status, took, _ = space.pytest(selected, timeout=limit)
        finally:
            space.write(module, source)
            with self.lock:
                self.spaces.append(space)
        detail = "tests passed" if status == 0 else ""
        if status == -9:
            detail = f"timed out after {took:.0f} s"
        word = "survived" if status == 0 else "killed"
        return Outcome(mutant.key, mutant.line, mutant.operator, word, took, len(selected), detail)


def previous_kills(module: str) -> dict[str, Outcome]:
    """The mutants of ``module`` its latest saved run killed (``--survivors``)."""
    path = RESULTS / (module.replace("/", ".") + ".json")
    if not path.exists():
        return {}
    outcomes = json.loads(path.read_text())["outcomes"]
    return {o["key"]: Outcome(**o) for o in outcomes if o["status"] == "killed"}


def run_modules(
    modules: dict[str, list[str]], jobs: int, timeout_factor: float, survivors: bool = False
) -> list[Report]:
    """Every mutant of each module, after one baseline of all their tests (with ``survivors``:
    only those the latest saved run did not kill; its kills are kept, since tests added since
    only kill more)."""
    equivalents = load_equivalents()
    all_tests = sorted({test for tests in modules.values() for test in tests})
    reports = []
    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        spaces = [Workspace(Path(tmp) / f"w{i}") for i in range(jobs)]
        measured = spaces[0]  # holds the baseline's coverage data
        status, seconds, out = measured.baseline(all_tests)
        if status != 0:
            RESULTS.mkdir(exist_ok=True)
            (RESULTS / "baseline-failure.log").write_text(out)
            sys.exit(
                f"the tests fail before any mutation:\n{out[-3000:]}\n"
                f"(the whole output: {RESULTS / 'baseline-failure.log'})"
            )
        print(f"baseline: {len(all_tests)} test files in {seconds:.0f} s", flush=True)
        # The runner takes workspaces from its own list and puts them back, in any order.
        runner = _Runner(list(spaces), equivalents, seconds, timeout_factor, measured.durations())
        for module, tests in modules.items():
            source = (ROOT / module).read_text()
            contexts = measured.contexts(module)
            mutants = find_mutants(module, source)
            warn_stale(module, mutants, equivalents)
            report = Report(module, baseline_s=seconds)
            kept = previous_kills(module) if survivors else {}
            report.outcomes += [kept[m.key] for m in mutants if m.key in kept]
            mutants = [m for m in mutants if m.key not in kept]
            print(f"{module}: {len(mutants)} mutants ", end="", flush=True)

            marks = {"killed": ".", "survived": "S", "not_run": "N", "equivalent": "e"}
            one = functools.partial(runner.mutant, module, source, contexts, tests)
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                for outcome in pool.map(one, mutants):
                    report.outcomes.append(outcome)
                    print(marks[outcome.status], end="", flush=True)
            print(flush=True)
            print_report(report)
            save(report)
            reports.append(report)
    return reports


def save(report: Report) -> None:
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / (report.module.replace("/", ".") + ".json")
    document = {
        "module": report.module,
        "score": report.score,
        "outcomes": [asdict(o) for o in report.outcomes],
    }
    out.write_text(json.dumps(document, indent=1) + "\n")


def print_report(report: Report) -> None:
    print(
        f"{report.module}: score {report.score:.0%} ({report.count('killed')} killed, "
        f"{report.count('survived')} survived, {report.count('not_run')} not run, "
        f"{report.count('equivalent')} equivalent, {len(report.outcomes)} mutants)"
    )
    for outcome in report.outcomes:
        if outcome.status in ("survived", "not_run"):
            print(f"  {outcome.status:8} {outcome.key}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="module files (default: every one in MODULES)")
    parser.add_argument("--tests", nargs="+", help="test files (default: the module's in MODULES)")
    parser.add_argument("--jobs", type=int, default=1, help="copies of the tree run at once")
    parser.add_argument("--list", action="store_true", help="print the mutants, run nothing")
    parser.add_argument(
        "--survivors", action="store_true",
        help="run only the mutants the latest saved run (mutation-results/) did not kill",
    )  # fmt: skip
    parser.add_argument(
        "--timeout-factor", type=float, default=3.0,
        help="a mutant's tests may take this many times their share of the baseline",
    )  # fmt: skip
    args = parser.parse_args()
    names = args.modules or list(MODULES)
    if args.list:
        equivalents = load_equivalents()
        for module in names:
            mutants = find_mutants(module, (ROOT / module).read_text())
            warn_stale(module, mutants, equivalents)
            for mutant in mutants:
                print(mutant.key)
        return 0
    modules = {}
    for module in names:
        tests = args.tests or MODULES.get(module)
        if not tests:
            sys.exit(f"no tests known for {module}: pass --tests")
        modules[module] = tests
    reports = run_modules(modules, args.jobs, args.timeout_factor, args.survivors)
    print(
        "\nmodule                                    score  killed  survived  not run  equivalent"
    )
    for report in reports:
        print(
            f"{report.module:40} {report.score:6.0%} {report.count('killed'):7} "
            f"{report.count('survived'):9} {report.count('not_run'):8} "
            f"{report.count('equivalent'):11}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
