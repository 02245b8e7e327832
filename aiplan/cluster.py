"""Step 2: what cluster serves it (layout, network, storage, checkpoints, reliability)."""


def layout(plan, result):
    """Fill ``result['cluster']`` (the parallel layout)."""


def step(plan, result):
    """Fill ``network``, ``storage``, ``checkpoint`` and ``reliability``."""
