"""Latency of the planner app: one control change -> evaluate -> key figures, findings, charts redrawn.

Drives the widgets' ``.value`` in a plain Python process (no kernel, no browser; the
comm is a dummy, so this measures the kernel side: evaluate + HTML + chart specs + the
filled-in values of the controls). ``benchmarks/bench_browser.py`` measures the same in a real
browser, from the input event to the figures and charts on screen.

    .venv/bin/python benchmarks/bench_ui.py [--rounds 20]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from pathlib import Path

from aiplan.ui import PlannerApp

ROOT = Path(__file__).resolve().parent.parent


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20, help="changes per control")
    args = ap.parse_args()
    app = PlannerApp(ROOT / "plans" / "example.yaml")
    w = app.controls.widgets
    changes = {
        "cluster.gpu": itertools.cycle(["b200", "h200", "a100-80gb", "h100-sxm"]),
        "cluster.gpus": itertools.cycle(["512", "1024", "2048", ""]),
        "cost.utilisation": itertools.cycle([0.3, 0.5, 0.7, 0.9]),
        "facility.pue": itertools.cycle(["1.2", "1.4", "1.3"]),
        "workload.seq_len": itertools.cycle(["4096", "8192"]),
        "cost.pricing": itertools.cycle(["reserved-1y", "spot", "on-demand"]),
    }
    panes = [("Memory", "Cumulative cost"), ("Time and run cost vs GPUs", "By utilisation"),
             ("Layouts", "Cost drivers")]
    rows = []
    for pane_a, pane_b in panes:
        app.panes[0].selector.value, app.panes[1].selector.value = pane_a, pane_b
        times = []
        for path, values in changes.items():
            for _ in range(args.rounds):
                start = time.perf_counter()
                w[path].value = next(values)
                times.append(time.perf_counter() - start)
                assert app.error is None, app.error
        rows.append((f"{pane_a} + {pane_b}", times))
    print(f"{'charts on show':46s} {'n':>5s} {'p50 ms':>8s} {'p95 ms':>8s} {'max ms':>8s}")
    for label, times in rows:
        ms = [t * 1e3 for t in times]
        print(f"{label:46s} {len(ms):5d} {statistics.median(ms):8.1f} {percentile(ms, 0.95):8.1f} {max(ms):8.1f}")
    every = [t * 1e3 for _, times in rows for t in times]
    print(f"{'all':46s} {len(every):5d} {statistics.median(every):8.1f} {percentile(every, 0.95):8.1f} "
          f"{max(every):8.1f}  (target p95 < 100 ms)")


if __name__ == "__main__":
    main()
