"""``arena check-bot``: play a student's bot through a short scripted session and say, item by
item, what it does right and wrong (docs/check-bot.md).

The bot connects to the checker's relay (:mod:`ply_arena.server.checkbot.relay`) instead of the
arena; the relay passes every frame on unchanged and writes it down, accepts the checker's
challenges for the bot, and can cut the bot's connection to see it reconnect. The checker's own bot
(:mod:`ply_arena.server.checkbot.opponent`) challenges it and plays random legal moves; the script
(:mod:`ply_arena.server.checkbot.session`) runs the steps and collects the stored match records; the
verdicts (:mod:`ply_arena.server.checkbot.checklist`) are decided afterwards from what was observed,
by pure functions.
"""
