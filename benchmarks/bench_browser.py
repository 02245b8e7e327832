"""Speed of the planner in the browser: a real Voilà server (as ``aiplan app`` runs it) and a real Chromium.

A scripted consultant's session (presets, model, GPU type and count, workload kind, prices) is played
``--runs`` times on one page. For each change the page itself records, with ``performance.now()``, the
input event, the first change of the key figures after it and the last change of the charts (settled:
nothing changed for 400 ms). Prints p50/p95 of input -> key figures and input -> charts settled, per run
and overall, the slowest steps, and the first page load (preheated kernel) to the figures and to the
charts.

Targets on a 2-core machine: key figures p95 <= 100 ms, charts settled p95 <= 250 ms; first page load
<= 3 s after the server is up.

    .venv/bin/python benchmarks/bench_browser.py [--runs 4] [--width 1280 --height 720]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from planner_browser import (  # noqa: E402
    launch,
    open_planner,
    planner_server,
    probe_reset,
    probe_times,
    select_field,
    select_preset,
    type_field,
)

from aiplan import load_catalog  # noqa: E402

GPU = {g: load_catalog().gpus[g].name for g in ("b200", "h200", "h100-sxm")}
MODEL = {m: load_catalog().models[m].name for m in ("llama-3.1-8b", "llama-3.1-70b")}


def kind(label):
    return lambda page: page.locator(".aiplan-field-workload-kind button", has_text=label).click()


#: the scripted session: (what changes, how); every step changes the key figures
SESSION = [
    ("preset: serving", lambda p: select_preset(p, "Chat assistant serving")),
    ("preset: 70B pretraining", lambda p: select_preset(p, "Acme 70B pretraining")),
    ("model: 8B", lambda p: select_field(p, "model", MODEL["llama-3.1-8b"])),
    ("model: 70B", lambda p: select_field(p, "model", MODEL["llama-3.1-70b"])),
    ("GPU: B200", lambda p: select_field(p, "cluster.gpu", GPU["b200"])),
    ("GPU: H200", lambda p: select_field(p, "cluster.gpu", GPU["h200"])),
    ("GPU: H100", lambda p: select_field(p, "cluster.gpu", GPU["h100-sxm"])),
    ("GPUs: 512", lambda p: type_field(p, "cluster.gpus", "512")),
    ("GPUs: 2048", lambda p: type_field(p, "cluster.gpus", "2048")),
    ("GPUs: auto", lambda p: type_field(p, "cluster.gpus", "")),
    ("workload: serve", kind("Serve")),
    ("workload: pretrain", kind("Pretrain")),
    ("pricing: reserved 1 year", lambda p: select_field(p, "cost.pricing", "reserved-1y")),
    ("pricing: reserved 3 years", lambda p: select_field(p, "cost.pricing", "reserved-3y")),
    ("pricing: on-demand", lambda p: select_field(p, "cost.pricing", "on-demand")),
    ("electricity: 0.12", lambda p: type_field(p, "facility.electricity_usd_per_kwh", "0.12")),
    ("electricity: 0.08", lambda p: type_field(p, "facility.electricity_usd_per_kwh", "0.08")),
    ("server price: 300K", lambda p: type_field(p, "cost.server_price_usd", "300k")),
    ("preset: MoE pretraining", lambda p: select_preset(p, "Mixtral 8x7B pretraining")),
    ("preset: 70B pretraining", lambda p: select_preset(p, "Acme 70B pretraining")),
]


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def row(label, figures, charts):
    f = [v for v in figures if v is not None]
    c = [v for v in charts if v is not None]
    return (f"{label:28s} {len(f):4d} {statistics.median(f):8.0f} {percentile(f, 0.95):8.0f} "
            f"{statistics.median(c):9.0f} {percentile(c, 0.95):9.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=4, help="times the scripted session is played")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=720)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, planner_server(Path(tmp) / "voila.log") as url, \
            sync_playwright() as p:
        browser = launch(p)
        start = time.perf_counter()
        page = open_planner(browser, url, args.width, args.height, probe=True)
        first_figures = time.perf_counter() - start
        page.wait_for_selector(".aiplan-chart svg", timeout=120_000)
        first_charts = time.perf_counter() - start
        page.wait_for_timeout(1500)
        runs, steps = [], {}
        for _ in range(args.runs):
            figures, charts = [], []
            for label, action in SESSION:
                probe_reset(page)
                action(page)
                f, c = probe_times(page)
                figures.append(f)
                charts.append(c)
                steps.setdefault(label, []).append((f, c))
                if f is None:
                    print(f"  no figure change after '{label}'", file=sys.stderr)
            runs.append((figures, charts))
        browser.close()

    print(f"first page load (preheated kernel): key figures {first_figures:.2f} s, charts {first_charts:.2f} s "
          f"(target <= 3 s)")
    print(f"\n{len(SESSION)} scripted changes per run, {args.width}x{args.height}; times in ms from the input event")
    print(f"{'':28s} {'n':>4s} {'figs p50':>8s} {'figs p95':>8s} {'chart p50':>9s} {'chart p95':>9s}")
    for i, (figures, charts) in enumerate(runs, 1):
        print(row(f"run {i}", figures, charts))
    print(row("all runs", [v for f, _ in runs for v in f], [v for _, c in runs for v in c]))
    print("targets: key figures p95 <= 100 ms, charts settled p95 <= 250 ms")
    print("\nslowest steps (median over runs):")
    slow = sorted(steps.items(), key=lambda kv: -statistics.median(c or 0 for _, c in kv[1]))[:6]
    for label, times in slow:
        print(row(label, [f for f, _ in times], [c for _, c in times]))


if __name__ == "__main__":
    main()
