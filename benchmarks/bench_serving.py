"""Benchmark: ``serving_capacity`` (the fast serving entry point an options explorer calls many times).

Run: ``python benchmarks/bench_serving.py [calls]`` (default 200). Prints the time per call for the
plan's GPU and for a sweep over other GPUs, and the time of one whole ``serve_plan``.
"""

from __future__ import annotations

import statistics
import sys
import time

from aiplan import load_plan
from aiplan.model.serving import serve_plan, serving_capacity

PLAN = {"name": "bench", "model": "llama-3.1-70b",
        "workload": {"kind": "inference", "requests_per_s": 20, "prompt_tokens": 2000, "output_tokens": 500,
                     "weight_precision": "fp8", "kv_precision": "fp8"},
        "cluster": {"gpu": "h100-sxm"}}
GPUS = ["h100-sxm", "h200", "b200", "mi300x", "mi325x", "a100-80gb", "l40s"]


def _per_call(fn, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


def main(calls: int = 200) -> None:
    plan = load_plan(PLAN)
    serving_capacity(plan)  # warm the caches (constants, parameter counts)
    own = _per_call(lambda: serving_capacity(plan), calls)
    sweep = _per_call(lambda: [serving_capacity(plan, g) for g in GPUS], max(calls // len(GPUS), 1))
    fixed = _per_call(lambda: serving_capacity(plan, "h200", tensor_parallel=2), calls)
    whole = _per_call(lambda: serve_plan(plan), max(calls // 4, 1))
    print(f"serving_capacity, plan GPU (TP search):  median {statistics.median(own) * 1e3:.2f} ms per call")
    print(f"serving_capacity, given GPU and TP:       median {statistics.median(fixed) * 1e3:.2f} ms per call")
    print(f"serving_capacity over {len(GPUS)} GPUs:            median {statistics.median(sweep) * 1e3 / len(GPUS):.2f} "
          "ms per GPU")
    print(f"serve_plan (whole per-plan serving step): median {statistics.median(whole) * 1e3:.2f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
