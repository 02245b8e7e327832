"""Speed of the cost step: one tco() evaluation, a sensitivity (7 drivers x 2, vectorised),
a 1-million-point utilisation x price sweep, and the whole facility + cost steps.

Run: python benchmarks/bench_cost.py
"""

from __future__ import annotations

import copy
import time

import numpy as np

from aiplan import cost, facility, load_plan
from aiplan.pipeline import run

PLAN = {
    "name": "bench", "model": "llama-2-7b",
    "workload": {"kind": "pretrain", "tokens": 2.0e12, "seq_len": 4096},
    "cluster": {"gpu": "h100-sxm", "gpus": 1024},
    "facility": {"server": "dgx-h100"},
    "cost": {"cloud": "aws-p5.48xlarge"},
}


def per_call(fn, n):
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


def main():
    plan = load_plan(copy.deepcopy(PLAN))
    result = run(plan, until="facility")
    x = cost.inputs(plan, result)
    print(f"tco() one plan:                   {per_call(lambda: cost.tco(x), 2000) * 1e6:8.1f} us")
    print(f"sensitivity() 7 drivers x 2:      {per_call(lambda: cost.sensitivity(plan, result), 500) * 1e6:8.1f} us")

    def steps():
        facility.step(plan, result)
        cost.step(plan, result)

    print(f"facility.step + cost.step:        {per_call(steps, 200) * 1e3:8.2f} ms")
    n = 1_000_000
    rng = np.random.default_rng(0)
    sweep = {k: (v if isinstance(v, bool) else np.full(n, v, dtype=float)) for k, v in x.items()}
    sweep["utilisation"] = rng.uniform(0.05, 1.0, n)
    sweep["cloud_usd_per_gpu_hour"] = rng.uniform(1.0, 15.0, n)
    t = per_call(lambda: cost.tco(sweep), 3)
    print(f"tco() sweep of {n:,} plans:     {t * 1e3:8.1f} ms  ({t / n * 1e9:.0f} ns per plan)")


if __name__ == "__main__":
    main()
