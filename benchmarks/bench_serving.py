"""Benchmark: one serving evaluation and the serving options table of one plan (issue 23: <= 5 ms and <= 1 s).

Run: ``python benchmarks/bench_serving.py [calls]`` (default 100). Prints the median time of

* one serving evaluation: ``serving_capacity`` of the plan on one GPU (every layout searched, one pool);
* ``serve_plan``: the plan's whole serving step (one pool and the two-pool search);
* the serving options table: ``aiplan options`` of the plan (every GPU x precision x layout x one pool or
  two, every priced offer), for a dense and a mixture-of-experts model.
"""

from __future__ import annotations

import statistics
import sys
import time

from aiplan import load_plan
from aiplan.analysis.options import explore
from aiplan.model.serving import serve_plan, serving_capacity

PLAN = {"name": "bench", "model": "llama-3.1-70b",
        "workload": {"kind": "inference", "requests_per_s": 20, "prompt_tokens": 2000, "output_tokens": 500,
                     "weight_precision": "fp8", "kv_precision": "fp8"},
        "cluster": {"gpu": "h100-sxm"}}
MOE = {**PLAN, "model": "deepseek-r1", "workload": {**PLAN["workload"], "weight_precision": "fp8"},
       "cluster": {"gpu": "h200"}}


def _median_ms(fn, calls: int) -> float:
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def _figures(plan, calls: int) -> tuple[float, float, float]:
    serving_capacity(plan)  # warm the caches (constants, parameter counts)
    return (_median_ms(lambda: serving_capacity(plan), calls), _median_ms(lambda: serve_plan(plan), max(calls // 4, 1)),
            _median_ms(lambda: explore(plan), 3))


def main(calls: int = 100) -> None:
    for name, data in (("Llama 3.1 70B on H100", PLAN), ("DeepSeek-R1 on H200", MOE)):
        one, whole, table = _figures(load_plan(data), calls)
        print(f"{name}:")
        print(f"  one serving evaluation (serving_capacity, layout search): {one:7.2f} ms  (target <= 5 ms)")
        print(f"  serve_plan (one pool and two pools):                       {whole:7.2f} ms")
        print(f"  serving options table (aiplan options):                    {table:7.0f} ms  (target <= 1000 ms)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
