"""Speed of the options explorer: the Monte Carlo over options x samples, and a whole ``explore``.

Target (issue: options explorer): at least 1,000,000 option-samples per second for the Monte
Carlo on this 2-core machine.

Run: python benchmarks/bench_options.py
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from aiplan import uncertainty
from aiplan.analysis import options
from aiplan.model.efficiency import training_constants

ROOT = Path(__file__).resolve().parent.parent


def monte_carlo(option_count, samples, repeats=5):
    rng = np.random.default_rng(0)
    days = rng.uniform(5, 90, option_count)
    rate = rng.uniform(0.1, 20, option_count)
    lost = rng.uniform(0.0, 0.1, option_count)
    spot = np.where(rng.random(option_count) < 0.25, rng.uniform(0.1, 3, option_count), 0.0)
    spot_lost = np.where(spot > 0, 0.05, 0.0)
    lo, hi = np.full(option_count, 0.9), np.full(option_count, 1.4)
    k = training_constants()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        d, c = uncertainty.simulate(days, rate, lost, spot, spot_lost, lo, hi, k["band.q10"], k["band.q90"], samples)
        uncertainty.summarise(d, c, np.full(option_count, 1e6), np.full(option_count, 30.0))
        best = min(best, time.perf_counter() - t)
    return option_count * samples / best, best


def main():
    for count, samples in ((100, 2000), (500, 2000), (1000, 4000)):
        rate, seconds = monte_carlo(count, samples)
        print(f"Monte Carlo {count:>5} options x {samples:>5} samples: {seconds * 1e3:7.1f} ms "
              f"= {rate / 1e6:5.2f} M option-samples/s (target >= 1.00)")
    for plan in ("example.yaml", "inference.yaml"):
        t = time.perf_counter()
        rows = options.explore(ROOT / "plans" / plan)
        seconds = time.perf_counter() - t
        kept = sum(1 for r in rows if not r["excluded"])
        print(f"explore {plan:<16} {len(rows):>4} options ({kept} ranked) in {seconds:5.2f} s")


if __name__ == "__main__":
    main()
