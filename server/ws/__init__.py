"""The WebSocket layer for bots: ``endpoint`` (the route) and ``session`` (one connection)."""
