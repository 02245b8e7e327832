"""Step 1: what the model needs (parameters, memory, FLOPs, time, inference)."""


def describe(plan, result):
    """Fill ``result['model']``."""


def step(plan, result):
    """Fill ``result['memory']``, ``result['compute']`` and ``result['inference']``."""
