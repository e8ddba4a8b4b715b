"""What a tournament is asked to be: the body of ``POST /api/tournaments`` (and of
``arena tournament create``), checked field by field before anything is stored.

Who takes part is either a class (``"class": NAME``: its enabled bots) or a list of bots
(``"bots": [...]``); a gauntlet also names its ``pool`` (the reference agents, usually house
bots, that every entrant meets).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from ply_arena.protocol.messages import Policy, TimeControl


class Format(StrEnum):
    round_robin = "round_robin"
    swiss = "swiss"
    gauntlet = "gauntlet"


#: The most rounds (Swiss) or cycles (round robin, gauntlet) a tournament may ask for.
MAX_ROUNDS = 100
#: The most games of one tournament played at once.
MAX_CONCURRENCY = 64
#: The longest a game waits for its bots before the absent lose by no_show (a day).
MAX_NO_SHOW_S = 86_400.0
#: The default wait: long enough for a student to restart a crashed bot.
DEFAULT_NO_SHOW_S = 60.0
#: The most bots in one tournament.
MAX_ENTRANTS = 512

BotName = Annotated[StrictStr, Field(min_length=1, max_length=64)]


class TournamentRequest(BaseModel):
    """A new tournament. Unknown fields are refused (a misspelt option must not be ignored)."""

    model_config = ConfigDict(extra="forbid")

    name: StrictStr = Field(min_length=1, max_length=64, description="unique, as bot names")
    game: StrictStr = Field(description="a game of GET /api/games")
    format: Format = Field(
        default=Format.round_robin, description="round_robin (the default), swiss or gauntlet"
    )
    rounds: StrictInt = Field(
        default=1,
        ge=1,
        le=MAX_ROUNDS,
        description="Swiss: rounds; round robin and gauntlet: cycles (each plays every seat order)",
    )
    time_control: TimeControl | None = Field(
        default=None, description="per-move limit and bank (default: the game's)"
    )
    policy: Policy = Policy.forfeit
    concurrency: StrictInt = Field(default=4, ge=1, le=MAX_CONCURRENCY)
    rated: StrictBool = Field(default=True, description="whether its matches move the ratings")
    no_show_s: StrictFloat | StrictInt = Field(
        default=DEFAULT_NO_SHOW_S,
        ge=0,
        le=MAX_NO_SHOW_S,
        description="seconds a game waits for its bots to connect before the absent lose",
    )
    class_: StrictStr | None = Field(default=None, alias="class", description="a class's bots")
    bots: list[BotName] | None = Field(default=None, max_length=MAX_ENTRANTS)
    pool: list[BotName] | None = Field(
        default=None, max_length=MAX_ENTRANTS, description="gauntlet: the bots every entrant meets"
    )
