"""``settings.house_bots`` (``ARENA_HOUSE_BOTS``) read into house bot specs.

The format: ``GAME=AGENT[@SECONDS],...; GAME=...``. ``AGENT`` is an agent with its options as
``arena play`` takes them (``alphabeta:depth=4,order=false``).

- **Fixed strength**: no ``@SECONDS``, and a ``depth`` (searchers) or ``simulations`` (MCTS)
  option, or the random agent. The search does that much work whatever the load (the match's
  move limit only as a last resort) and is seeded (the ``seed`` option, else 0) afresh for
  every move, so the same position always gets the same move. Named after their strength:
  ``alphabeta:depth=4`` is ``house-alphabeta-d4``, ``mcts:simulations=200`` ``house-mcts-200``.
- **Time-limited**: ``@SECONDS``, the thinking time per move, which a match's own ``move_ms``
  caps; an agent with neither ``@SECONDS`` nor a depth or simulations count thinks 1 s.
  Their strength depends on the machine's load: ``house-alphabeta-0.5``.

The same agent spec in several games is one house bot (one name, one rating per game).
``default`` gives every game a random bot and two fixed-strength searching bots (see
:data:`DEFAULT_SPECS`); ``none`` (or an empty value) gives no house bots.

    >>> [(s.name, s.games) for s in parse_house_bots("tic_tac_toe=random, mcts@0.1")]
    [('house-random', ('tic_tac_toe',)), ('house-mcts-0.1', ('tic_tac_toe',))]
    >>> parse_house_bots("connect_four=alphabeta:depth=4,order=false@1")[0].name
    'house-alphabeta-depth4-orderfalse-1'
    >>> specs = parse_house_bots("othello=alphabeta:depth=4,mcts:simulations=200")
    >>> [(s.name, s.fixed) for s in specs]
    [('house-alphabeta-d4', True), ('house-mcts-200', True)]
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from typing import Any

from ply_arena import games

#: Thinking time per move when a spec gives no ``@SECONDS``.
DEFAULT_SECONDS = 1.0
#: The longest thinking time a spec may give (the longest move a time control allows).
MAX_SECONDS = 60.0
#: Every house bot's name starts with this; no other bot may take such a name.
NAME_PREFIX = "house-"

#: ``default``: per game, a random bot, MCTS, and the strongest searcher that plays the game
#: (alpha-beta for two-player games without dice, expectiminimax with dice, max^n for three),
#: all of fixed strength: a house bot is a yardstick, and one that searches against the clock
#: plays weaker on a busy server. Sizes chosen to take well under the default 1 s move limit
#: even on a loaded machine (docs/server.md, "House bots", has the measured times).
DEFAULT_SPECS = ("random", "mcts:simulations={simulations}", "{searcher}:depth={depth}")
#: The searcher of each kind of game and its default depth.
_SEARCHERS = {"alphabeta": 4, "expectiminimax": 1, "maxn": 1}
#: MCTS simulations per move by default, and in games whose playouts are long (backgammon's
#: random games last hundreds of plies: 200 simulations took 170 ms a move, up to 570 ms).
DEFAULT_SIMULATIONS = 200
_GAME_SIMULATIONS = {"backgammon": 50}
#: The seed of a fixed-strength bot whose spec gives none.
DEFAULT_SEED = 0
#: The options that fix a search's amount of work, and their short form in a bot's name.
_STRENGTH_OPTIONS = {"depth": "d", "simulations": ""}


class HouseConfigError(ValueError):
    """``house_bots`` cannot be read; the message names the entry and what is wrong."""


@dataclass(frozen=True)
class HouseSpec:
    """One house bot: a reference agent with options and a thinking time, in some games."""

    #: The spec as configured, spaces removed: ``alphabeta:depth=4@1`` (the ``agent`` column).
    spec: str
    #: The registered agent name and its checked options.
    agent: str
    options: dict[str, Any]
    #: Thinking time per move (seconds), before the match's move limit caps it; for a bot of
    #: fixed strength, the time it is expected to need at most (only the move limit stops it).
    seconds: float
    #: Its bot name: ``house-`` and the spec in name characters (``house-alphabeta-depth4-1``).
    name: str
    games: tuple[str, ...]
    #: Fixed strength: a depth or simulation count and no ``@SECONDS`` (or the random agent);
    #: searched with no time limit but the match's, seeded afresh for every move.
    fixed: bool = False

    def search_options(self) -> dict[str, Any]:
        """The options a search is made with: a fixed-strength bot's seed made explicit."""
        if self.fixed and "seed" not in self.options:
            return {**self.options, "seed": DEFAULT_SEED}
        return self.options


def parse_house_bots(text: str) -> list[HouseSpec]:
    """The house bots ``text`` configures (see the module docstring); HouseConfigError naming
    the entry at fault otherwise."""
    text = text.strip()
    if text.lower() in ("", "none", "off"):
        return []
    if text.lower() == "default":
        text = default_house_bots()
    by_spec: dict[str, HouseSpec] = {}
    for entry in filter(None, (part.strip() for part in text.split(";"))):
        game_name, sep, rest = entry.partition("=")
        game_name = game_name.strip()
        if not sep or not rest.strip():
            raise HouseConfigError(
                f"ARENA_HOUSE_BOTS entry {entry!r}: expected GAME=AGENT[@SECONDS][,AGENT...]"
                f" (e.g. connect_four=mcts:simulations=200,alphabeta:depth=4,mcts@0.5)"
            )
        try:
            game = games.get(game_name)
        except ValueError as exc:
            raise HouseConfigError(f"ARENA_HOUSE_BOTS entry {entry!r}: {exc}") from None
        for spec_text in _agent_specs(rest):
            spec = _parse_spec(spec_text, game, entry)
            known = by_spec.get(spec.spec)
            if known is None:
                by_spec[spec.spec] = spec
            elif game.name not in known.games:
                by_spec[spec.spec] = HouseSpec(
                    known.spec,
                    known.agent,
                    known.options,
                    known.seconds,
                    known.name,
                    (*known.games, game.name),
                    known.fixed,
                )
    names: dict[str, str] = {}
    for spec in by_spec.values():
        other = names.setdefault(spec.name.lower(), spec.spec)
        if other != spec.spec:
            raise HouseConfigError(
                f"ARENA_HOUSE_BOTS: {other!r} and {spec.spec!r} would both be named "
                f"{spec.name!r}; write one of them differently"
            )
    return list(by_spec.values())


def default_house_bots() -> str:
    """What ``default`` stands for, in the ``ARENA_HOUSE_BOTS`` format."""
    from ply_arena.reference_agents import applicable_agents

    entries = []
    for name in games.names():
        playable = applicable_agents(games.get(name))
        searcher = next(a for a in _SEARCHERS if a in playable)
        specs = [
            s.format(
                searcher=searcher,
                depth=_SEARCHERS[searcher],
                simulations=_GAME_SIMULATIONS.get(name, DEFAULT_SIMULATIONS),
            )
            for s in DEFAULT_SPECS
        ]
        entries.append(f"{name}={','.join(s for s in specs if s.partition(':')[0] in playable)}")
    return "; ".join(entries)


def house_name(spec: str) -> str:
    """The bot name of a spec: ``mcts:c=1.4@0.5`` -> ``house-mcts-c1.4-0.5``; a fixed-strength
    spec says its strength first: ``alphabeta:order=false,depth=4`` ->
    ``house-alphabeta-d4-orderfalse``, ``mcts:simulations=200`` -> ``house-mcts-200``.

    Characters a bot name cannot hold become ``_``; a name over 64 characters is cut and ends
    with a hash of the whole spec, so that it stays unique and stable.
    """
    body, at, seconds = spec.rpartition("@") if "@" in spec else (spec, "", "")
    agent, _, options = body.partition(":")
    pairs = [o.partition("=") for o in options.split(",") if o]
    strength = (
        [] if at else [f"{_STRENGTH_OPTIONS[k]}{v}" for k, _, v in pairs if k in _STRENGTH_OPTIONS]
    )
    if strength:
        pairs = [p for p in pairs if p[0] not in _STRENGTH_OPTIONS]
    parts = [agent, *strength, *(k + v for k, _, v in pairs)]
    if at:
        parts.append(seconds)
    name = NAME_PREFIX + "-".join(re.sub(r"[^A-Za-z0-9_.-]", "_", p) for p in parts)
    name = name.rstrip("_.-") or NAME_PREFIX + "bot"
    if len(name) > 64:
        digest = hashlib.sha256(spec.encode()).hexdigest()[:8]
        name = f"{name[:55].rstrip('_.-')}-{digest}"
    return name


def _agent_specs(rest: str) -> list[str]:
    """``alphabeta:depth=4,order=false@1,mcts@0.1`` -> the two agent specs.

    Commas separate agents and also an agent's options: a comma-separated part that starts
    with ``key=`` continues the options of the agent before it.
    """
    specs: list[str] = []
    for part in (p.strip() for p in rest.split(",")):
        if not part:
            continue
        head = re.match(r"[A-Za-z_][A-Za-z0-9_]*\s*=", part)
        if head and specs:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return [re.sub(r"\s+", "", s) for s in specs]


#: The longest agent spec (the ``bots.agent`` column).
MAX_SPEC_CHARS = 100


def _parse_spec(spec_text: str, game: games.Game, entry: str) -> HouseSpec:
    from ply_arena.reference_agents.registry import make, parse_spec

    where = f"ARENA_HOUSE_BOTS entry {entry!r}, agent {spec_text!r}"
    if len(spec_text) > MAX_SPEC_CHARS:
        # Stored as the house bot's `agent` (VARCHAR(100): PostgreSQL enforces it).
        raise HouseConfigError(
            f"{where}: at most {MAX_SPEC_CHARS} characters (options at their defaults need not "
            "be given)"
        )
    body, at, seconds_text = spec_text.rpartition("@") if "@" in spec_text else (spec_text, "", "")
    seconds = DEFAULT_SECONDS
    if at:
        try:
            seconds = float(seconds_text)
        except ValueError:
            seconds = math.nan
        if not (0 < seconds <= MAX_SECONDS):
            raise HouseConfigError(
                f"{where}: @{seconds_text} is not a thinking time; give seconds per move, "
                f"more than 0 and at most {MAX_SECONDS:g} (e.g. @0.5)"
            )
    try:
        agent, options = parse_spec(body)
        make(agent, game, **options)  # every check make does: agent, game, option names, types
    except ValueError as exc:
        raise HouseConfigError(f"{where}: {exc}") from None
    fixed = not at and (agent == "random" or any(k in options for k in _STRENGTH_OPTIONS))
    return HouseSpec(
        spec=spec_text,
        agent=agent,
        options=options,
        seconds=seconds,
        name=house_name(spec_text),
        games=(game.name,),
        fixed=fixed,
    )
