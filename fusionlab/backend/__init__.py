"""The backends that compile a partition's blocks."""
