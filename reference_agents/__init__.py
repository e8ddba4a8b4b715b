"""The course's search algorithms as agents that play any registered game.

>>> from ply_arena import games, reference_agents
>>> agent = reference_agents.make("random", games.get("tic_tac_toe"), seed=1)
>>> move, info = agent.choose(games.get("tic_tac_toe").initial_state(), time_limit=1.0)
>>> move in range(9)
True
"""

from __future__ import annotations

from ply_arena.reference_agents._agent import Agent, SearchInfo
from ply_arena.reference_agents.registry import agent_names, applicable_agents, make

__all__ = ["Agent", "SearchInfo", "agent_names", "applicable_agents", "make"]
