"""``python -m ply_arena``: the ``arena`` command, for when the script is not on the PATH."""

from ply_arena.server.cli import main

main()
