"""Direct challenges: a bot names its opponents; the match starts when all of them accept.

Pure bookkeeping, no I/O. A challenge lives only while its challenger and opponents stay
connected: when any of them disconnects, the referee drops it (for an opponent, as a decline).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from ply_arena.protocol.messages import Policy, TimeControl


@dataclass(frozen=True, slots=True)
class Party:
    bot_id: int
    name: str


@dataclass(slots=True)
class PendingChallenge:
    challenge_id: str
    challenger: Party
    game: str
    opponents: list[Party]
    time_control: TimeControl
    policy: Policy
    accepted: set[int] = field(default_factory=set)

    def parties(self) -> list[Party]:
        return [self.challenger, *self.opponents]

    def is_opponent(self, bot_id: int) -> bool:
        return any(p.bot_id == bot_id for p in self.opponents)

    def complete(self) -> bool:
        return all(p.bot_id in self.accepted for p in self.opponents)


class Challenges:
    def __init__(self) -> None:
        self._pending: dict[str, PendingChallenge] = {}

    def create(
        self,
        challenger: Party,
        game: str,
        opponents: list[Party],
        time_control: TimeControl,
        policy: Policy,
    ) -> PendingChallenge:
        challenge = PendingChallenge(
            secrets.token_urlsafe(8), challenger, game, opponents, time_control, policy
        )
        self._pending[challenge.challenge_id] = challenge
        return challenge

    def for_opponent(self, challenge_id: str, bot_id: int) -> PendingChallenge | None:
        """The pending challenge if ``bot_id`` is one of its opponents."""
        challenge = self._pending.get(challenge_id)
        if challenge is None or not challenge.is_opponent(bot_id):
            return None
        return challenge

    def get(self, challenge_id: str) -> PendingChallenge | None:
        return self._pending.get(challenge_id)

    def remove(self, challenge_id: str) -> None:
        self._pending.pop(challenge_id, None)

    def sent_by(self, bot_id: int) -> int:
        """How many pending challenges ``bot_id`` has made."""
        return sum(c.challenger.bot_id == bot_id for c in self._pending.values())

    def involving(self, bot_id: int) -> list[PendingChallenge]:
        return [c for c in self._pending.values() if any(p.bot_id == bot_id for p in c.parties())]

    def __len__(self) -> int:
        return len(self._pending)
