"""Plays random legal moves. Usage: python random_bot.py ws://HOST:PORT/ws TOKEN GAME [GAMES]"""

import logging
import random
import sys

from ply_arena.protocol.client import run_bot


def choose(state, legal_moves, clock):
    # state: the game's State; legal_moves: notation strings; clock.remaining_ms(): time left
    return random.choice(legal_moves)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    url, token, game, *rest = sys.argv[1:] if len(sys.argv) >= 4 else sys.exit(__doc__)
    for end in run_bot(url, token, choose, game=game, games=int(rest[0]) if rest else 1):
        print(end.match_id, end.termination.value, end.payoffs)
