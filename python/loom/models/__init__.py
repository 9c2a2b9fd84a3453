"""Generators of model graphs in the loom dialect's textual syntax."""
