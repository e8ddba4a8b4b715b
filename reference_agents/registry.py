"""The agents by name: ``make(name, game, **options)``.

Agents are listed explicitly (name -> "module:Class") and imported on first use. An agent that
does not apply to a game is refused with a message naming the agents that do.
"""

from __future__ import annotations

import importlib
from typing import Any

import games
from reference_agents._agent import Agent

_REGISTRY: dict[str, str] = {
    "alphabeta": "reference_agents.alphabeta:AlphaBetaAgent",
    "expectiminimax": "reference_agents.expectiminimax:ExpectiminimaxAgent",
    "maxn": "reference_agents.maxn:MaxNAgent",
    "mcts": "reference_agents.mcts:MCTSAgent",
    "minimax": "reference_agents.minimax:MinimaxAgent",
    "negamax": "reference_agents.negamax:NegamaxAgent",
    "random": "reference_agents.random_agent:RandomAgent",
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
    """An agent called ``name`` for ``game``; ValueError if unknown or not applicable."""
    cls = agent_class(name)
    reason = cls.refusal(game)
    if reason is not None:
        raise ValueError(
            f"agent {name!r} does not play {game.name}: {reason}; "
            f"agents that do: {', '.join(applicable_agents(game))}"
        )
    return cls(game, **options)


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
