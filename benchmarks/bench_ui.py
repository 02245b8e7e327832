"""Latency of the planner app: one control change -> evaluate -> key figures, findings, charts redrawn.

Drives the widgets' ``.value`` in a plain Python process (no kernel, no browser; the
comm is a dummy, so this measures the kernel side: evaluate + HTML + chart specs + the
filled-in values of the controls). ``benchmarks/bench_browser.py`` measures the same in a real
browser, from the input event to the figures and charts on screen.

Then the options view (issue 25: never stale): once ranked, a change of "Rank by" until the
table holds the re-ranked rows (its chart follows), and a change of the plan or the model until
the table is marked out of date (the whole redraw, which includes it). Target: 300 ms.

    .venv/bin/python benchmarks/bench_ui.py [--rounds 20]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from pathlib import Path

from aiplan.ui import PlannerApp
from aiplan.ui.options_view import ranking_key

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
    rows, first = [], []
    for pane_a, pane_b in panes:
        app.panes[0].selector.value, app.panes[1].selector.value = pane_a, pane_b
        times = []
        for path, values in changes.items():
            for _ in range(args.rounds):
                start = time.perf_counter()
                w[path].value = next(values)
                times.append(time.perf_counter() - start)
                first.append(app.last_figures_s)
                assert app.error is None, app.error
        rows.append((f"{pane_a} + {pane_b}", times))
    print(f"{'charts on show':46s} {'n':>5s} {'p50 ms':>8s} {'p95 ms':>8s} {'max ms':>8s}")
    for label, times in rows:
        ms = [t * 1e3 for t in times]
        print(f"{label:46s} {len(ms):5d} {statistics.median(ms):8.1f} {percentile(ms, 0.95):8.1f} {max(ms):8.1f}")
    every = [t * 1e3 for _, times in rows for t in times]
    print(f"{'all':46s} {len(every):5d} {statistics.median(every):8.1f} {percentile(every, 0.95):8.1f} "
          f"{max(every):8.1f}  (target p95 < 100 ms)")
    ms = [t * 1e3 for t in first]
    print(f"{'change -> key figures sent (the rest follows)':46s} {len(ms):5d} {statistics.median(ms):8.1f} "
          f"{percentile(ms, 0.95):8.1f} {max(ms):8.1f}")
    options(app, args.rounds)


def options(app: PlannerApp, rounds: int) -> None:
    """The options table: re-ranked on "Rank by", marked out of date on a change of the plan or the model."""
    app.controls.set_plan(str(ROOT / "plans" / "example.yaml"))
    start = time.perf_counter()
    app.options.run()
    ranking = time.perf_counter() - start
    rerank, whole, stale = [], [], []
    by = itertools.cycle(["days", "co2", "cost"])
    for _ in range(rounds):
        start = time.perf_counter()
        app.options.by.value = next(by)
        whole.append(time.perf_counter() - start)
        rerank.append(app.options.last_table_s)
    models = itertools.cycle(["llama-3.1-8b", "llama-3.1-70b"])
    counts = itertools.cycle(["", "2048"])
    for i in range(rounds):
        start = time.perf_counter()
        if i % 2:
            app.controls.model.value = next(models)
        else:
            app.controls.widgets["cluster.gpus"].value = next(counts)
        stale.append(time.perf_counter() - start)
        assert app.options.stale == (app.options.ranked_key != ranking_key(app.controls.plan_dict()))
    print(f"\noptions: a whole ranking {ranking * 1e3:.0f} ms")
    for label, times in (("'Rank by' -> table re-ranked", rerank), ("'Rank by' -> table and chart", whole),
                         ("plan/model change -> table marked (whole redraw)", stale)):
        ms = [t * 1e3 for t in times]
        print(f"{label:46s} {len(ms):5d} {statistics.median(ms):8.1f} {percentile(ms, 0.95):8.1f} {max(ms):8.1f}"
              "  (target 300 ms)")


if __name__ == "__main__":
    main()
