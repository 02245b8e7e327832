"""Benchmark: the vectorised model step (``training_table``) vs one ``describe`` + ``step`` per plan.

Run: ``python benchmarks/bench_model.py [rows]`` (default 1,000,000 rows). Prints the time per row of
both and the speed-up; the vectorised form should be at least 50x faster per row.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from aiplan import load_catalog, load_plan
from aiplan import model as M
from aiplan.pipeline import run_model

SIZES = [  # (layers, hidden, heads, vocab) of catalog-like dense models
    (32, 4096, 32, 32000), (40, 5120, 40, 32000), (80, 8192, 64, 32000), (126, 16384, 128, 128256),
]
PRECISIONS = ["bf16", "fp16", "fp8", "fp32"]
GPUS = ["a100-80gb", "h100-sxm", "h200", "b200"]


def random_plans(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    size = rng.integers(0, len(SIZES), n)
    layers, hidden, heads, vocab = (np.array([s[i] for s in SIZES])[size] for i in range(4))
    params = 12.0 * layers * hidden**2 + 2.0 * vocab * hidden
    return pd.DataFrame({
        "params": params, "layers": layers, "hidden": hidden, "heads": heads, "vocab": vocab,
        "seq_len": rng.choice([2048, 4096], n), "gpus": 8 * rng.integers(1, 512, n),
        "zero_stage": rng.integers(0, 4, n), "precision": rng.choice(PRECISIONS, n),
        "tokens": rng.uniform(1e11, 1e13, n), "gpu": rng.choice(GPUS, n),
        "tensor_parallel": rng.choice([1, 2, 4, 8], n), "recompute": rng.choice(["none", "selective", "full"], n),
    })


def per_plan(df: pd.DataFrame, catalog) -> float:
    """Seconds per row for describe + step on prebuilt Plan objects (validation not timed, no layout search)."""
    plans = []
    for r in df.itertuples():
        model = {"params": r.params, "layers": int(r.layers), "hidden": int(r.hidden), "heads": int(r.heads),
                 "vocab": int(r.vocab), "ffn_hidden": 4 * int(r.hidden), "gated_mlp": False, "context": 4096}
        plans.append(load_plan({
            "model": model,
            "workload": {"kind": "pretrain", "tokens": float(r.tokens), "seq_len": int(r.seq_len),
                         "precision": r.precision, "recompute": r.recompute},
            "cluster": {"gpu": r.gpu, "gpus": int(r.gpus), "tensor_parallel": int(r.tensor_parallel),
                        "zero_stage": int(r.zero_stage)}}, catalog))
    start = time.perf_counter()
    for plan in plans:
        run_model(plan)
    return (time.perf_counter() - start) / len(plans)


def main(rows: int = 1_000_000) -> None:
    catalog = load_catalog()
    df = random_plans(rows)
    M.training_table(df.head(1000), catalog)  # warm-up
    start = time.perf_counter()
    table = M.training_table(df, catalog)
    vector_s = time.perf_counter() - start
    loop_rows = 2000
    loop_s = per_plan(df.head(loop_rows), catalog)
    print(f"training_table: {rows:,} rows in {vector_s:.2f} s = {vector_s / rows * 1e6:.2f} us/row")
    print(f"describe+step loop: {loop_rows:,} plans, {loop_s * 1e6:.1f} us/plan")
    print(f"speed-up per row: {loop_s / (vector_s / rows):.0f}x (target >= 50x)")
    print(f"rows that fit: {table['fits'].mean():.1%}; median GPU-hours {table['gpu_hours'].median():,.0f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
