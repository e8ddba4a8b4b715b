"""The agents by name: ``make(name, game, **options)``.

Agents are listed explicitly (name -> "module:Class") and imported on first use. An agent that
does not apply to a game is refused with a message naming the agents that do.

An agent's options are the keyword-only parameters of its class's ``__init__`` (names, types from
the annotations, defaults), read by introspection: ``agent_options(name)``. ``make`` checks every
option against them, so a typo or a value of the wrong type is one line naming the option and the
valid ones, e.g.::

    alphabeta option depth=abc: expected an integer; options: depth (int), move_time (float), ...
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import re
from dataclasses import dataclass
from typing import Any

from ply_arena import games
from ply_arena.reference_agents._agent import Agent

_REGISTRY: dict[str, str] = {
    "alphabeta": "ply_arena.reference_agents.alphabeta:AlphaBetaAgent",
    "expectiminimax": "ply_arena.reference_agents.expectiminimax:ExpectiminimaxAgent",
    "maxn": "ply_arena.reference_agents.maxn:MaxNAgent",
    "mcts": "ply_arena.reference_agents.mcts:MCTSAgent",
    "minimax": "ply_arena.reference_agents.minimax:MinimaxAgent",
    "negamax": "ply_arena.reference_agents.negamax:NegamaxAgent",
    "random": "ply_arena.reference_agents.random_agent:RandomAgent",
}


def agent_names() -> list[str]:
    return sorted(_REGISTRY)


def agent_class(name: str) -> type[Agent]:
    target = _REGISTRY.get(name)
    if target is None:
        raise ValueError(f"unknown agent {name!r}: known agents are {', '.join(agent_names())}")
    module_name, class_name = target.split(":")
    cls: type[Agent] = getattr(importlib.import_module(module_name), class_name)
    return cls


def applicable_agents(game: games.Game) -> list[str]:
    """The agents that can play ``game``."""
    return [name for name in agent_names() if agent_class(name).refusal(game) is None]


def make(name: str, game: games.Game, **options: Any) -> Agent:
    """An agent called ``name`` for ``game``.

    ValueError (one line) if the agent is unknown, does not play ``game``, or an option is not
    one of its options or has the wrong type (see :func:`check_options`).
    """
    cls = agent_class(name)
    options = check_options(name, options)
    reason = cls.refusal(game)
    if reason is not None:
        raise ValueError(
            f"agent {name!r} does not play {game.name}: {reason}; "
            f"agents that do: {', '.join(applicable_agents(game))}"
        )
    return cls(game, **options)


@dataclass(frozen=True)
class AgentOption:
    """One option of an agent: a keyword-only parameter of its class's ``__init__``."""

    name: str
    #: int, float, bool or str; None for options only Python can give (e.g. ``evaluate``).
    kind: type | None
    default: Any
    #: ``none`` is a valid value (the annotation includes None).
    nullable: bool

    def describe(self) -> str:
        """``depth (int)``: how the option is listed in error messages."""
        return f"{self.name} ({self.kind.__name__ if self.kind else 'Python only'})"


_KINDS: dict[str, type] = {"int": int, "float": float, "bool": bool, "str": str}


def agent_options(name: str) -> list[AgentOption]:
    """The options of agent ``name``, in the order its ``__init__`` declares them."""
    signature = inspect.signature(agent_class(name).__init__)
    found = []
    for param in signature.parameters.values():
        if param.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue
        kind, nullable = _annotation_kind(param.annotation)
        found.append(AgentOption(param.name, kind, param.default, nullable))
    return found


def _annotation_kind(annotation: Any) -> tuple[type | None, bool]:
    """``"int | None"`` -> (int, True); an annotation that is not a plain type -> (None, ...)."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    optional = re.fullmatch(r"(?:typing\.)?Optional\[(.+)\]", text.strip())
    if optional:
        text = optional.group(1) + " | None"
    parts = [part.strip() for part in text.split("|")]
    nullable = "None" in parts
    rest = [part for part in parts if part != "None"]
    kind = _KINDS.get(rest[0]) if len(rest) == 1 else None
    return kind, nullable


def check_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` checked against agent ``name``'s declared options, ints widened to floats.

    ValueError, one line, naming the bad option and value and listing the valid options::

        >>> check_options("random", {"seed": "x"})
        Traceback (most recent call last):
        ...
        ValueError: random option seed=x: expected an integer; options: seed (int)
    """
    declared = {option.name: option for option in agent_options(name)}
    listing = ", ".join(o.describe() for o in declared.values() if o.kind is not None)
    checked: dict[str, Any] = {}
    for key, value in options.items():
        where = f"{name} option {key}={_shown(value)}"
        option = declared.get(key)
        if option is None:
            close = difflib.get_close_matches(key, list(declared), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ValueError(
                f"{name} does not take {key}={_shown(value)}{hint}; options: {listing}"
            )
        try:
            checked[key] = _coerce(option, value)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}; options: {listing}") from None
    return checked


_EXPECTED = {int: "an integer", float: "a number", bool: "true or false", str: "text"}


def _coerce(option: AgentOption, value: Any) -> Any:
    kind = option.kind
    if kind is None:
        if isinstance(value, str | int | float | bool):
            raise ValueError(
                f"cannot be given as text (pass it from Python: make(..., {option.name}=...))"
            )
        return value
    if value is None:
        if option.nullable or option.default is None:
            return None
        raise ValueError(f"expected {_EXPECTED[kind]}, not none")
    if kind is bool:
        if isinstance(value, bool):
            return value
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif kind is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif kind is str:
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
    raise ValueError(f"expected {_EXPECTED[kind]}")


def _shown(value: Any) -> str:
    """A value as it is written in a spec: true, false, none, 3, abc."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    return str(value)


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"alphabeta:depth=6,order=false"`` -> ("alphabeta", {"depth": 6, "order": False}).

    Values are read as int, float, true/false/none, or left as strings.
    """
    name, _, rest = spec.partition(":")
    options: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ValueError(f"agent option {item!r} in {spec!r}: expected key=value")
        options[key.strip()] = _parse_value(raw.strip())
    return name.strip(), options


def _parse_value(raw: str) -> Any:
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for convert in (int, float):
        try:
            return convert(raw)
        except ValueError:
            pass
    return raw
