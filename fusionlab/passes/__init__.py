"""The rewrites of the bytecode before and after partitioning: reroll, dead writes, dead
bases, rematerialisation; and the typed records the preparing ones report (``rewrites.py``)."""
