"""Client report speed: per-report time against the papermill + nbconvert floor, and batch throughput.

    .venv/bin/python benchmarks/bench_report.py [--runs 5]

An empty notebook (one empty code cell, kernel python3) is the floor, measured three ways,
and the report of plans/example.yaml is timed the same three ways:

- commands: ``papermill`` then ``jupyter nbconvert --to html`` as a user types them (each a
  fresh process), against ``aiplan report`` (one fresh process). What a user waits for. Each
  stock command spends ~1 s building the grammar of jsonschema's optional ``rfc3987_syntax``,
  which aiplan skips; a second floor runs both commands without it, to compare fairly.
- in-process, stock: ``papermill.execute_notebook`` with its defaults (the notebook saved
  after every cell, the kernel asked to shut down) and a new nbconvert ``HTMLExporter``
  (the offline template), in a process that has already imported both, against
  ``aiplan.report.render`` in the same process.
- in-process, tuned: the floor run the way ``render`` runs notebooks (``run_notebook``: saved
  once, kernel stopped at once; the exporter kept compiled). The strictest ratio: the report
  against the least any notebook run costs here.

Also printed: where the report's kernel time goes (papermill's per-cell metadata), and batch
throughput for the five plans in plans/ with 1 and 2 processes.

Target (issue 16): the report, with its cover, summary, bill of materials, four step sections,
assumptions, sources and appendix, at or under the floor of the stock commands (a user's
papermill + nbconvert on an empty notebook), the ratio 1.0. The ratios are printed; they are
figures, not timed tests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from aiplan import report  # noqa: E402

TARGET_RATIO = 1.0
BIN = Path(sys.executable).parent
PLAN = ROOT / "plans" / "example.yaml"


def empty_notebook(tmp: Path) -> Path:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src = tmp / "empty.ipynb"
    nbformat.write(nb, str(src))
    return src


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


#: The two commands' entry points, run without jsonschema's optional rfc3987_syntax grammar
#: (~1 s per process, skipped by aiplan too: see aiplan/present/charts.py), for the fair command floor.
WITHOUT_RFC3987 = {
    "papermill": "import sys; sys.modules['rfc3987_syntax'] = None; from papermill.cli import papermill; "
                 "papermill(sys.argv[1:])",
    "nbconvert": "import sys; sys.modules['rfc3987_syntax'] = None; from nbconvert.nbconvertapp import main; "
                 "main()",
}


def floor_commands(src: Path, tmp: Path, stock: bool = True) -> None:
    quiet = {"capture_output": True, "check": True}
    out = tmp / "empty.out.ipynb"
    papermill = [BIN / "papermill"] if stock else [sys.executable, "-c", WITHOUT_RFC3987["papermill"]]
    nbconvert = [BIN / "jupyter", "nbconvert"] if stock else [sys.executable, "-c", WITHOUT_RFC3987["nbconvert"]]
    out.unlink(missing_ok=True)
    subprocess.run([*papermill, "--no-progress-bar", src, out], **quiet)
    subprocess.run([*nbconvert, "--to", "html", "--template", "offline",
                    f"--TemplateExporter.extra_template_basedirs={report.TEMPLATES_DIR}", out], **quiet)
    assert out.with_suffix(".html").stat().st_mtime >= out.stat().st_mtime  # both steps really ran


def report_command(tmp: Path) -> None:
    subprocess.run([BIN / "aiplan", "report", PLAN, "-o", tmp / "cli"], capture_output=True, check=True)


def floor_stock(src: Path, tmp: Path) -> None:
    import papermill
    from nbconvert import HTMLExporter

    papermill.execute_notebook(str(src), str(tmp / "empty.out.ipynb"), kernel_name="python3", progress_bar=False)
    exporter = HTMLExporter(template_name="offline", extra_template_basedirs=[str(report.TEMPLATES_DIR)])
    body, _ = exporter.from_notebook_node(nbformat.read(str(tmp / "empty.out.ipynb"), as_version=4))
    (tmp / "empty.html").write_text(body)


def floor_tuned(src: Path, tmp: Path) -> None:
    report.export_html(report.run_notebook(src, None, {}), tmp / "empty.html")


def report_in_process(tmp: Path) -> None:
    report.render(PLAN, tmp / "out", report_date="2000-01-01")


def cell_times(executed: Path) -> list[tuple[float, str]]:
    nb = json.loads(executed.read_text())
    out = []
    for cell in nb["cells"]:
        pm = cell.get("metadata", {}).get("papermill", {})
        if cell["cell_type"] == "code" and pm.get("duration") is not None:
            out.append((pm["duration"], "".join(cell["source"]).splitlines()[0][:60]))
    return out


def line(label: str, times: list[float]) -> float:
    median = statistics.median(times)
    print(f"  {label:44} best {min(times):5.2f} s, median {median:5.2f} s")
    return median


def verdict(label: str, report_s: float, floor_s: float) -> None:
    ratio = report_s / floor_s
    print(f"  {label:44} {ratio:5.2f}x  ({'meets' if ratio <= TARGET_RATIO else 'MISSES'} the "
          f"{TARGET_RATIO}x target)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        src = empty_notebook(tmp)
        report_in_process(tmp)  # warm this process (imports, the chart worker) for the in-process rows
        floor_tuned(src, tmp)

        print("commands (fresh processes):")
        cmd_floor = line("floor: papermill + jupyter nbconvert", [timed(lambda: floor_commands(src, tmp))
                                                                   for _ in range(runs)])
        cmd_fair = line("floor, both without the rfc3987 grammar", [timed(lambda: floor_commands(src, tmp, False))
                                                                     for _ in range(runs)])
        cmd_report = line("report: aiplan report", [timed(lambda: report_command(tmp)) for _ in range(runs)])
        print("in-process (papermill and nbconvert already imported):")
        stock = line("floor, stock papermill + nbconvert", [timed(lambda: floor_stock(src, tmp))
                                                            for _ in range(runs)])
        tuned = line("floor, tuned as render runs notebooks", [timed(lambda: floor_tuned(src, tmp))
                                                               for _ in range(runs)])
        rep = line("report: aiplan.report.render", [timed(lambda: report_in_process(tmp)) for _ in range(runs)])
        print("report / floor (medians):")
        verdict("commands, stock floor", cmd_report, cmd_floor)
        verdict("commands, floor without rfc3987", cmd_report, cmd_fair)
        verdict("in-process, stock floor", rep, stock)
        verdict("in-process, tuned floor", rep, tuned)
        print("slowest report cells (last run):")
        for seconds, first_line in sorted(cell_times(tmp / "out" / f"{PLAN.stem}.ipynb"), reverse=True)[:6]:
            print(f"  {seconds:6.2f} s  {first_line}")

        plans = sorted((ROOT / "plans").glob("*.yaml"))
        for jobs in (1, 2):
            out = tmp / f"batch{jobs}"
            start = time.perf_counter()
            with open(os.devnull, "w") as quiet:
                outcomes = report.run_batch(plans, out, jobs=jobs, report_date="2000-01-01", stream=quiet)
            elapsed = time.perf_counter() - start
            ok = sum(o.ok for o in outcomes)
            print(f"batch of {len(plans)} plans, --jobs {jobs}: {elapsed:6.1f} s, "
                  f"{60 * ok / elapsed:5.1f} reports/min ({ok} ok)")


if __name__ == "__main__":
    main()
