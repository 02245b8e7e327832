"""Step 3: where the cluster lives (power, cooling, racks, energy, carbon)."""


def step(plan, result):
    """Fill ``result['facility']``."""
