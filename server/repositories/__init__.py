"""All queries live here: one module per aggregate, async functions taking the session first.

Repositories never commit; the caller's ``Database.session()`` block is the unit of work.
"""
