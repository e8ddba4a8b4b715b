"""Analysing a position: what a reference agent thinks of it, and the tree of its search.

``report`` computes it (``arena analyze``, ``GET /api/analyze`` and the ``/analyze`` page all
print or draw the same report); ``runner`` runs it for the server in a process of its own, one
per request, within the limits of the settings (nodes, seconds, analyses at once), so that no
request can tie up the event loop or the machine.
"""
