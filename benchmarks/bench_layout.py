"""Layout-search throughput: candidate layouts evaluated per second.

Evaluates memory (``aiplan.model.training_memory``), fit and step time for a
few million random layouts of a 70B pretraining plan in one vectorised call,
and times one full ``layout()`` search. Target: >= 1,000,000 layouts/s.

    python benchmarks/bench_layout.py
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from aiplan import load_plan
from aiplan.cluster import layout, parallel
from aiplan.pipeline import run

PLAN = Path(__file__).resolve().parent.parent / "plans" / "example.yaml"
N = 2_000_000
REPEAT = 5


def main() -> None:
    plan = load_plan(PLAN)
    result = run(plan, until="model")
    inp = parallel.inputs(plan, result, plan.cluster.get("gpus") or 1024)
    rng = np.random.default_rng(0)
    tp = rng.choice(parallel.divisors(plan.model.heads)[:4], N)
    pp = rng.choice(parallel.divisors(plan.model.layers), N)
    dp = rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256], N)
    zero = rng.integers(0, 4, N)
    mb = rng.choice(parallel.MICRO_BATCHES, N)
    rc = rng.integers(0, 3, N)
    best = np.inf
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        out = parallel.evaluate_layouts(plan, inp, tp, pp, dp, zero, mb, rc)
        best = min(best, time.perf_counter() - t0)
    rate = N / best
    print(f"evaluate_layouts: {N:,} layouts in {best:.3f} s -> {rate:,.0f} layouts/s "
          f"({'OK' if rate >= 1e6 else 'BELOW'} target 1,000,000/s); {int(out['fits'].sum()):,} fit")

    t0 = time.perf_counter()
    result.add(layout(plan, result))
    dt = time.perf_counter() - t0
    print(f"layout() on {plan.data['name']!r} ({result['cluster']['gpus']} GPUs): "
          f"{result['cluster']['layouts_evaluated']} valid layouts searched in {dt * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
