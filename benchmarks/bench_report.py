"""Client report speed: per-report time against the papermill + nbconvert floor, and batch throughput.

    .venv/bin/python benchmarks/bench_report.py [--runs 3]

- floor: an empty notebook (one empty code cell) executed by papermill (kernel python3) and
  exported with the same offline HTML template: kernel start-up plus nbconvert, the least any
  report can cost on this machine;
- report: ``aiplan.report.render`` of plans/example.yaml (HTML, executed notebook, sidecar);
- per-cell time of the report notebook (from papermill's cell metadata), to see where it goes;
- batch: the five plans in plans/ with 1 and 2 processes (reports per minute).

Target (issue 7): a report within 1.5x the floor. The ratio is printed; it is a figure, not a
timed test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from aiplan import report  # noqa: E402

TARGET_RATIO = 1.5


def floor_once(tmp: Path) -> float:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src = tmp / "empty.ipynb"
    nbformat.write(nb, str(src))
    start = time.perf_counter()
    report.run_notebook(src, tmp / "empty.out.ipynb", {})
    report.export_html(tmp / "empty.out.ipynb", tmp / "empty.html")
    return time.perf_counter() - start


def report_once(tmp: Path, plan: Path) -> tuple[float, Path]:
    start = time.perf_counter()
    report.render(plan, tmp / "out", report_date="2000-01-01")
    return time.perf_counter() - start, tmp / "out" / f"{plan.stem}.ipynb"


def cell_times(executed: Path) -> list[tuple[float, str]]:
    nb = json.loads(executed.read_text())
    out = []
    for cell in nb["cells"]:
        pm = cell.get("metadata", {}).get("papermill", {})
        if cell["cell_type"] == "code" and pm.get("duration") is not None:
            out.append((pm["duration"], "".join(cell["source"]).splitlines()[0][:60]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    plan = ROOT / "plans" / "example.yaml"
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        report.check_parameters(report.report_notebook(), report.REPORT_PARAMETERS)
        floor = [floor_once(tmp) for _ in range(runs)]
        reps = [report_once(tmp, plan) for _ in range(runs)]
        rep = [t for t, _ in reps]
        print(f"floor (empty notebook, papermill + nbconvert): best {min(floor):6.2f} s, "
              f"median {statistics.median(floor):6.2f} s")
        print(f"report (plans/example.yaml)                  : best {min(rep):6.2f} s, "
              f"median {statistics.median(rep):6.2f} s")
        ratio = statistics.median(rep) / statistics.median(floor)
        verdict = "meets" if ratio <= TARGET_RATIO else "MISSES"
        print(f"report / floor (median)                      : {ratio:6.2f}x  ({verdict} the {TARGET_RATIO}x target)")
        print("slowest report cells (last run):")
        for seconds, first_line in sorted(cell_times(reps[-1][1]), reverse=True)[:6]:
            print(f"  {seconds:6.2f} s  {first_line}")

        plans = sorted((ROOT / "plans").glob("*.yaml"))
        for jobs in (1, 2):
            out = tmp / f"batch{jobs}"
            start = time.perf_counter()
            outcomes = report.run_batch(plans, out, jobs=jobs, report_date="2000-01-01", stream=open("/dev/null", "w"))
            elapsed = time.perf_counter() - start
            ok = sum(o.ok for o in outcomes)
            print(f"batch of {len(plans)} plans, --jobs {jobs}: {elapsed:6.1f} s, "
                  f"{60 * ok / elapsed:5.1f} reports/min ({ok} ok)")


if __name__ == "__main__":
    main()
