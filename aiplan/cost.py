"""Step 4: what it costs, cloud vs on-prem."""


def step(plan, result):
    """Fill ``result['cost']``."""
