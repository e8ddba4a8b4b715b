"""Ratings: one openskill rating per bot and game, derived from the stored results.

- :mod:`ply_arena.server.ratings.model`: the rating arithmetic (pure: openskill's Weng-Lin
  Plackett-Luce, finishing places from payoffs, the conservative value mu - 3 sigma);
- :mod:`ply_arena.server.ratings.book`: the ratings the referee pairs by, kept in memory;
- :mod:`ply_arena.server.ratings.service`: a result stored together with its rating rows, in one
  transaction (the recorder's write for every finished match);
- :mod:`ply_arena.server.ratings.rebuild`: every rating recomputed from the rated results, in the
  order they were rated (``arena ratings rebuild``), equal to what the incremental updates gave.
"""

from ply_arena.server.ratings.book import RatingBook
from ply_arena.server.ratings.model import RatingModel, conservative, outcome, places

__all__ = ["RatingBook", "RatingModel", "conservative", "outcome", "places"]
