"""Benchmark: ``evaluate`` on the example plans (the whole pipeline, as the command line runs it).

Run: ``python benchmarks/bench_evaluate.py [runs]`` (default 200 runs per plan, after warm-up).
For each plan prints the median and p95 of ``evaluate(path)`` (reading and checking the YAML, the
seven steps, the findings, the plain result) and of ``evaluate(data)`` on the parsed plan (the same
without reading the file). Each run loads a new plan, so nothing computed per plan is reused.
Target (issue 22): ``evaluate`` on ``plans/example.yaml`` <= 3 ms median.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from aiplan import evaluate, load_catalog
from aiplan.core.inputs import read_yaml

PLANS = Path(__file__).resolve().parent.parent / "plans"


def timings_ms(fn, runs: int) -> list[float]:
    """Wall-clock time of ``runs`` calls of ``fn`` [ms], after 20 warm-up calls."""
    for _ in range(20):
        fn()
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1e3)
    return out


def summary(times: list[float]) -> str:
    """Median and p95 [ms]."""
    p95 = statistics.quantiles(times, n=20)[-1]
    return f"median {statistics.median(times):6.2f} ms, p95 {p95:6.2f} ms"


def main(runs: int = 200) -> None:
    catalog = load_catalog()
    for name in ("example.yaml", "inference.yaml"):
        path = PLANS / name
        data = read_yaml(path)
        whole = timings_ms(lambda p=path: evaluate(p, catalog), runs)
        parsed = timings_ms(lambda d=data: evaluate(d, catalog, PLANS), runs)
        print(f"{name:15s} evaluate(path): {summary(whole)} | evaluate(data): {summary(parsed)}")
    print("target: evaluate(plans/example.yaml) <= 3 ms median")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
