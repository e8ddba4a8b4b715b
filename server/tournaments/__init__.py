"""Tournaments: who plays whom, in which seat, and who stands where.

The decisions are pure functions of the entrants and the results so far, so that they can be
tested on their own and taken by any server process: ``schedule`` (round robin and gauntlet,
fixed in advance), ``swiss`` (each round paired from the standings, by maximum-weight matching
from rustworkx) and ``standings`` (points, tiebreaks and the crosstable).
"""
