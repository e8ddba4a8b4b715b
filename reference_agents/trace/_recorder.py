"""How a trace is recorded: from the agent's own search, through its own methods.

A recorder replaces, on one agent instance only, the methods that are the nodes of its search
(MAX-VALUE, MIN-VALUE, ...) by wrappers that note the node on the way in and its value on the way
out, then call the real method. So the tree is the one the agent searched, not a second copy of
the algorithm, and an agent without a recorder runs exactly as before: nothing is checked or
counted per node when nobody records (the methods are the class's own again after ``detach``).

Which method is a node, and what its arguments mean, is the job of one small module per agent
(``minimax.py``, ``alphabeta.py``, ...); this one keeps the path of open nodes, the node budget,
the iterations of iterative deepening and the units of the values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ply_arena import games
from ply_arena.games import Move, State
from ply_arena.reference_agents._agent import Agent, SearchInfo
from ply_arena.reference_agents.evaluation import NotesForm, evaluator_for, notes_form
from ply_arena.reference_agents.minimax import SearchTimeout
from ply_arena.reference_agents.trace._model import Trace, TraceNode, TraceTooLarge, Value, View


@dataclass(slots=True)
class Frame:
    """A recorded node that is still being searched."""

    node: TraceNode
    state: State
    #: the moves (or chance outcomes) in the order the search takes them
    moves: Sequence[Move]
    #: the recorder's node count when the node was entered
    first: int
    #: how many children have been entered so far
    searched: int = 0
    #: at a chance node, the probability of each outcome in ``moves``
    probs: list[float] | None = None
    #: the values the children backed up (recorded or not), in the trace's units
    child_values: list[Value] = field(default_factory=list)
    #: the agent generated the moves (alphabeta: False when the table answered first)
    expanded: bool = True


class Recorder:
    """Records one agent's search of one position (see the module docstring)."""

    algorithm: ClassVar[str]
    #: The kinds of node this algorithm's trees have, each with what it means.
    KINDS: ClassVar[dict[str, str]]
    #: What to do when a search is too big to record.
    SMALLER: ClassVar[str] = "a smaller --depth (or --move-time)"
    #: Whether values are shown in the notes' units where the notes give eval(n)'s formula.
    NOTES_UNITS: ClassVar[bool] = True

    def __init__(self, agent: Agent, state: State, view: View) -> None:
        self.agent = agent
        self.game: games.Game = agent.game
        self.root_state = state
        self.view = view
        names = self.game.seat_names
        self.named = bool(names)
        self.players = list(names) or [chr(ord("A") + i) for i in range(self.game.num_players)]
        evaluate = getattr(agent, "evaluate", None)
        # the notes' units only for the evaluation the notes describe, not a caller's own
        self.form: NotesForm | None = (
            notes_form(self.game)
            if self.NOTES_UNITS and evaluate is evaluator_for(self.game)
            else None
        )
        self.scale = self.form.scale if self.form is not None else 1.0
        self.max_level = view.levels if view.levels is not None else math.inf
        self.visited = 0  # nodes entered in all iterations: the budget counts these
        self.count = 0  # nodes entered in the current iteration
        self.level = -1  # level of the node being searched (-1: none)
        self.stack: list[Frame] = []  # the recorded nodes on the current path
        self.iterations: list[dict[str, Any]] = []
        self.completed: TraceNode | None = None
        self.notes: list[str] = []
        self._depth = 0
        self._patched: list[str] = []
        #: the search runs under a time limit (set by ``record``): the budget acts as its clock
        self.timed = False
        self.stopped_by_budget = False

    # -- wrapping the agent's methods -------------------------------------------------------

    def attach(self) -> None:
        """Wrap the agent's node methods (each algorithm's module says which)."""
        raise NotImplementedError

    def patch(self, name: str, wrapper: Callable[..., Any]) -> None:
        setattr(self.agent, name, wrapper)
        self._patched.append(name)

    def detach(self) -> None:
        """The agent's own methods again (the wrappers lived on the instance only)."""
        for name in self._patched:
            delattr(self.agent, name)
        self._patched.clear()

    # -- values -----------------------------------------------------------------------------

    def show(self, value: Any) -> Any:
        """A value of the agent in the trace's units (the notes' E(n) for tic-tac-toe)."""
        if value is None or self.scale == 1.0:
            return value
        if isinstance(value, tuple | list):
            return tuple(v * self.scale for v in value)
        return value * self.scale

    def eval_data(self, state: State, seat: int) -> dict[str, Any]:
        """How eval(n) was computed, in the notes' terms, for ``seat`` as MAX."""
        if self.form is None or state.is_terminal():
            return {}
        a, b = self.form.terms(state, seat)
        return {
            "eval": {
                "formula": self.form.formula,
                "for": self.players[seat],
                "terms": [a, b],
                "text": f"{a} - {b} = {a - b}",
            }
        }

    def eval_vector_data(self, state: State) -> dict[str, Any]:
        """How eval(n) was computed for every seat, each as MAX: max^n's vector, one line per
        component ("X: 6 - 4 = 2, O: 4 - 6 = -2")."""
        if self.form is None or state.is_terminal():
            return {}
        per_seat = [self.form.terms(state, seat) for seat in range(len(self.players))]
        return {
            "eval": {
                "formula": self.form.formula,
                "for": "every seat",
                "terms": [list(t) for t in per_seat],
                "text": ", ".join(
                    f"{self.players[seat]}: {a} - {b} = {a - b}"
                    for seat, (a, b) in enumerate(per_seat)
                ),
                "vector": True,
            }
        }

    def who(self, seat: int) -> str | None:
        return self.players[seat] if seat >= 0 else None

    def label(self, state: State, move: Move) -> str:
        return self.game.format_move(state, move)

    # -- the path of open nodes -------------------------------------------------------------

    def open(
        self,
        kind: str,
        state: State,
        player: str | None,
        moves: Sequence[Move] = (),
        probs: list[float] | None = None,
    ) -> Frame | None:
        """The search enters a node; its frame, or None when the node is not recorded (below
        ``view.levels``). Its move is the parent's next move in the parent's search order."""
        self.visited += 1
        if self.visited > self.view.budget:
            raise self.over_budget("nodes")
        self.count += 1
        level = self.level = self.level + 1
        stack = self.stack
        parent = stack[-1] if stack and level == len(stack) else None
        move: str | None = None
        probability: float | None = None
        if parent is not None:
            i = parent.searched
            parent.searched += 1
            if level <= self.max_level:
                move = self.label(parent.state, parent.moves[i])
                if parent.probs is not None:
                    probability = parent.probs[i]
        if level > self.max_level:
            return None
        node = TraceNode(self.count - 1, move, kind, level, player)
        if probability is not None:
            node.data["probability"] = probability
        if parent is not None:
            parent.node.children.append(node)
        frame = Frame(node, state, moves, self.count, probs=probs)
        stack.append(frame)
        return frame

    def enter(
        self,
        state: State,
        depth: int,
        kind: str,
        me: int,
        moves: Sequence[Move] | None = None,
        *,
        vector: bool = False,
    ) -> Frame | None:
        """The search enters a node as the notes draw it: a terminal state (its utility), the
        depth limit (eval(n), for ``me``; for every seat when the values are ``vector``s, as
        max^n's are), or a ``kind`` node whose ``moves`` are searched (the game's order unless
        given)."""
        if state.is_terminal():
            return self.open("terminal", state, None)
        if depth <= 0:
            frame = self.open("eval", state, self.who(state.player))
            if frame is not None:
                data = self.eval_vector_data(state) if vector else self.eval_data(state, me)
                frame.node.data.update(data)
            return frame
        moves = list(state.actions()) if moves is None else moves
        return self.open(kind, state, self.who(state.player), moves)

    def decision(
        self,
        original: Callable[..., tuple[Any, list[Move]]],
        state: State,
        depth: int,
        actions: list[Move] | None = None,
        *,
        kind: str = "max",
        window: bool = True,
    ) -> tuple[Any, list[Move]]:
        """A root decision function (MINIMAX-DECISION and its kin) as one iteration: the root
        is entered with the full window [-inf, +inf] when ``window``."""
        moves = list(actions) if actions is not None else list(state.actions())
        frame = self.begin(state, depth, kind, moves, state.player)
        if window:
            frame.node.data.update(alpha=-math.inf, beta=math.inf)
        value, line = original(state, depth, actions)
        self.end(frame, self.show(value), line[0] if line else None)
        return value, line

    def close(self, frame: Frame | None, value: Value | None) -> None:
        """The search leaves the node it entered last, backing up ``value``."""
        level = self.level
        self.level -= 1
        if frame is not None:
            frame.node.value = value
            frame.node.size = self.count - frame.first + 1
            self.stack.pop()
        stack = self.stack
        if stack and level == len(stack) and value is not None:
            stack[-1].child_values.append(value)

    def over_budget(self, what: str) -> Exception:
        """The search has visited ``view.budget`` nodes (MCTS: simulations). A search under a
        time limit is stopped as its clock would stop it (the agent's own SearchTimeout: it
        answers with the deepest depth it finished); a fixed-depth search cannot be, and the
        trace is refused with what to do instead."""
        if self.timed:
            if not self.stopped_by_budget:
                self.stopped_by_budget = True
                self.notes.append(
                    f"the trace's budget of {self.view.budget:,} {what} (--trace-budget) stopped "
                    "the search before its clock did, as a deadline would"
                )
            return SearchTimeout()
        return TraceTooLarge(
            f"the traced {self.algorithm} search went past {self.view.budget:,} {what}, more "
            f"than a trace records (--trace-budget); trace a smaller search: {self.SMALLER}"
        )

    def current(self) -> Frame | None:
        """The frame of the node being searched, if it is recorded."""
        return self.stack[-1] if len(self.stack) == self.level + 1 else None

    def pruned(self, frame: Frame) -> list[str]:
        """The moves of a node that its search never entered."""
        return [self.label(frame.state, m) for m in frame.moves[frame.searched :]]

    # -- iterations ---------------------------------------------------------------------------

    def begin(
        self, state: State, depth: int, kind: str, moves: Sequence[Move], player: int
    ) -> Frame:
        """A root call: one iteration (one depth) starts with a fresh tree."""
        self.stack = []
        self.level = -1
        self.count = 0
        self._depth = depth
        frame = self.open(kind, state, self.who(player), moves)
        assert frame is not None
        return frame

    def end(self, frame: Frame, value: Value, best: Move | None) -> None:
        """The iteration finished: its tree is the one to show unless a deeper one finishes."""
        self.close(frame, value)
        best_text = None if best is None else self.label(frame.state, best)
        frame.node.data["best"] = best_text
        self.completed = frame.node
        self.iterations.append(
            {"depth": self._depth, "value": value, "best": best_text, "nodes": self.count}
        )

    def abort(self) -> None:
        """The iteration was cut short (the clock, or the budget): its tree is dropped."""
        self.iterations.append({"depth": self._depth, "unfinished": True, "nodes": self.count})
        self.stack = []
        self.level = -1

    def wrap_root(self, root: Callable[..., Any], run: Callable[..., Any]) -> Callable[..., Any]:
        """``run(root, *args)`` with the iteration dropped if the search raises out of it."""

        def wrapper(*args: Any) -> Any:
            try:
                return run(root, *args)
            except BaseException:
                self.abort()
                raise

        return wrapper

    # -- the result ---------------------------------------------------------------------------

    def options(self) -> dict[str, Any]:
        """The agent's options that shape the tree (each module lists its agent's)."""
        return {"depth": getattr(self.agent, "depth", None)}

    def values_of(self) -> str:
        return f"MAX's: {self.players[self.root_state.player]}, the player to move at the root"

    def units(self) -> str:
        if self.form is not None:
            s = self.scale
            return (
                f"the notes' {self.form.formula} ({self.form.source}); the agent's eval(n) is "
                f"this divided by {s:g}, so a win shows as {self.game.max_utility * s:+g} and a "
                f"loss as {self.game.min_utility * s:+g}"
            )
        return (
            f"the game's payoffs ({self.game.min_utility:+g} to {self.game.max_utility:+g}) and "
            "eval(n) at the depth limit, as the agent computes them"
        )

    def root_value(self, root: TraceNode) -> float | None:
        """The root's value as the agent reports it (max^n: the mover's entry)."""
        value = root.value
        return value if isinstance(value, float | int) or value is None else None

    def finish(self, move: Move, info: SearchInfo, options: dict[str, Any]) -> Trace:
        root = self.completed
        answer = {
            "move": self.label(self.root_state, move),
            "value": self.show(info.score),
            "agent_value": info.score,
            "depth": info.depth,
            "nodes": info.nodes,
        }
        notes = list(self.notes)
        agrees = root is not None
        if root is not None:
            value = self.root_value(root)
            agrees = root.data.get("best") == answer["move"] and (
                value is not None
                and answer["value"] is not None
                and math.isclose(value, answer["value"], rel_tol=1e-9, abs_tol=1e-9)
            )
            if not agrees:
                notes.append(
                    "the answer is not the root's best in this tree: "
                    + (info.comment or "the search changed it after the last finished iteration")
                )
        if self.timed and root is not None and self.clock_may_have_cut(info):
            notes.append(
                "a search under a time limit: recording slows it, so an untraced search may go "
                "deeper in the same time"
            )
        if len(self.iterations) > 1:
            notes.append(
                "iterative deepening: each depth is a search of its own; the tree is the last "
                "finished one, the one that gave the answer"
            )
        trace = Trace(
            algorithm=self.algorithm,
            game=self.game.name,
            options={**self.options(), **options},
            players=self.players,
            root_player=self.players[self.root_state.player],
            values={"of": self.values_of(), "units": self.units(), "scale": self.scale},
            answer=answer,
            kinds=self.kinds(root),
            root=root,
            view=self.view,
            iterations=list(self.iterations),
            notes=notes,
            agrees=agrees,
        )
        trace.select()
        return trace

    def clock_may_have_cut(self, info: SearchInfo) -> bool:
        """Whether the time limit, not the agent's own limit, may have ended the search."""
        depth = getattr(self.agent, "depth", None)
        return depth is None or info.depth < depth

    def kinds(self, root: TraceNode | None) -> dict[str, str]:
        """The legend: the kinds that occur in the tree."""
        present = {n.kind for n in root.walk()} if root is not None else set()
        return {k: v for k, v in self.KINDS.items() if k in present}
