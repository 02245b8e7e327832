"""``aiplan report``: one report per plan, atomically, and batches of them.

Every output is first written to a temporary folder inside ``OUT`` and moved into place with
:func:`os.replace` only when all of that plan's outputs exist, so a failed or interrupted run
never leaves a half-written report and never replaces a previous good one.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import PlanError, Problem, clean_text
from ..core.inputs import read_yaml
from ..plan import load_plan
from .chartfiles import draw_pngs, headline_charts, report_charts, write_chart_files
from .deck import write_pptx
from .export import export_html, warm_up_exporter
from .notebook import check_parameters, kill_kernel, report_notebook, run_notebook, start_kernel, stop_kernel
from .pdf import check_paper, html_to_pdf
from .svg import ChartDrawer, svg_worker
from .workbook import write_xlsx

#: Parameters :func:`render` passes to the report notebook (checked against its parameters cell).
REPORT_PARAMETERS = ("plan_path", "results_path", "report_date", "svg_charts")


@dataclass
class Outcome:
    """What happened to one plan."""

    plan: str
    ok: bool
    files: tuple[str, ...] = ()
    error: str = ""
    seconds: float = 0.0


def _error_text(exc: BaseException) -> str:
    """One line, in words, for a failed report (a plan's problems, or what stopped the notebook)."""

    if isinstance(exc, PlanError):
        return clean_text("; ".join(exc.lines()))
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    if ename == "PlanError":
        return clean_text(f"invalid plan: {evalue}")
    if ename:
        return clean_text(f"the report notebook stopped ({ename}): {evalue}")[:300]
    return clean_text(f"the report could not be written ({type(exc).__name__}): {exc}")[:300]


def render(plan_path: str | os.PathLike, out_dir: str | os.PathLike, name: str | None = None, pdf: bool = False,
           xlsx: bool = False, report_date: str = "", notebook: str | os.PathLike | None = None, paper: str = "a4",
           pptx: bool = False, chart_files: bool = False) -> list[Path]:
    """Render one report for ``plan_path`` into ``out_dir``; returns the files written.

    Everything is produced in a temporary folder inside ``out_dir`` and moved into
    place only when complete; on any error the previous files are left untouched.
    """
    check_paper(paper)
    plan_path = Path(plan_path).resolve()
    plan = load_plan(plan_path)  # fail fast with the PlanError message
    notebook = Path(notebook) if notebook else report_notebook()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    name = name or plan_path.stem
    report_date = report_date or _dt.date.today().isoformat()
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".tmp", dir=out_dir))
    km = None
    try:
        executed, sidecar, html = tmp / f"{name}.ipynb", tmp / f"{name}.json", tmp / f"{name}.html"
        # in parallel: the kernel boots, the chart worker warms up (both their own
        # processes) and the exporter compiles its templates (a thread: this process
        # mostly waits on the kernel)
        km = start_kernel(notebook.resolve().parent)
        svg_worker()
        exporter_ready = threading.Thread(target=warm_up_exporter, daemon=True)
        exporter_ready.start()
        drawer = ChartDrawer()
        nb = run_notebook(notebook, None, {"plan_path": str(plan_path), "results_path": str(sidecar.resolve()),
                                           "report_date": report_date, "svg_charts": False},
                          on_cell_executed=drawer, km=km)
        kill_kernel(km)  # stopped in `finally`, by when it is gone
        drawer.finish()
        exporter_ready.join()
        import nbformat  # after the kernel started: its boot overlaps this process's imports

        result = json.loads(sidecar.read_text(encoding="utf-8"))["result"]
        charts = report_charts(nb) if pptx or chart_files else []
        drawn = charts if chart_files else list(headline_charts(charts).values())  # the deck needs the headlines
        futures = draw_pngs(drawn)  # drawn in the chart worker while the HTML is exported
        nbformat.write(nb, str(executed))
        export_html(nb, html, title=str((result.get("plan") or {}).get("name") or name), paper=paper)
        pngs = {id(chart): f.result() for chart, f in zip(drawn, futures)}
        produced = [executed, sidecar]
        raw_plan = read_yaml(plan_path) if xlsx or pptx else None
        if xlsx:
            write_xlsx(result, tmp / f"{name}.xlsx", raw_plan, report_date, plan)
            produced.append(tmp / f"{name}.xlsx")
        if pptx:
            heads = {step: pngs[id(chart)] for step, chart in headline_charts(charts).items()}
            write_pptx(result, tmp / f"{name}.pptx", heads, raw_plan, report_date, plan)
            produced.append(tmp / f"{name}.pptx")
        if chart_files:
            produced += write_chart_files(charts, [pngs[id(c)] for c in charts], tmp, name)
        if pdf:
            html_to_pdf(html, tmp / f"{name}.pdf")
            produced.append(tmp / f"{name}.pdf")
        produced.append(html)  # the HTML, the main deliverable, moves last
        final = []
        for src in produced:
            os.replace(src, out_dir / src.name)
            final.append(out_dir / src.name)
        return final
    finally:
        stop_kernel(km)
        shutil.rmtree(tmp, ignore_errors=True)


def _render_job(job: tuple[str, str, str, str, dict]) -> Outcome:
    plan_path, out_dir, name, report_date, options = job
    start = time.perf_counter()
    try:
        files = render(plan_path, out_dir, name, report_date=report_date, **options)
        return Outcome(plan_path, True, tuple(str(f) for f in files), seconds=time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - one failing plan must not stop the batch
        return Outcome(plan_path, False, error=_error_text(exc), seconds=time.perf_counter() - start)


# --- batch ----------------------------------------------------------------------------------


def collect_plans(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Plan files named, or found (``*.yaml``, ``*.yml``, sorted) in the folders named."""
    found, problems = [], []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found += sorted(q for q in p.iterdir() if q.suffix in (".yaml", ".yml") and q.is_file())
        elif p.is_file():
            found.append(p)
        else:
            problems.append(Problem(str(p), "no such plan file or folder", has_value=False))
    if problems:
        raise PlanError(problems)
    if not found:
        raise PlanError(Problem("plans", "no plan files (*.yaml) found", [str(p) for p in paths]))
    unique = list(dict.fromkeys(q.resolve() for q in found))
    return unique


def output_names(plans: list[Path]) -> list[str]:
    """File stems for the outputs: the plan's stem, prefixed by its folder when two plans share a stem."""
    stems = [p.stem for p in plans]
    return [f"{p.parent.name}-{p.stem}" if stems.count(p.stem) > 1 else p.stem for p in plans]


def run_batch(plans: list[Path], out_dir: str | os.PathLike, jobs: int = 1, pdf: bool = False, xlsx: bool = False,
              report_date: str = "", stream=None, **options: Any) -> list[Outcome]:
    """Render every plan (``jobs`` processes), printing a progress line per finished plan on ``stream``.

    ``options``: the other options of :func:`render` (``paper``, ``pptx``, ``chart_files``).
    """
    stream = stream if stream is not None else sys.stderr
    names = output_names(plans)
    options = {"pdf": pdf, "xlsx": xlsx, **options}
    work = [(str(p), str(out_dir), n, report_date, options) for p, n in zip(plans, names)]
    outcomes: list[Outcome] = []
    total = len(work)

    def progress(o: Outcome) -> None:
        outcomes.append(o)
        state = "ok" if o.ok else "FAILED"
        print(f"[{len(outcomes)}/{total}] {state:6} {Path(o.plan).name} ({o.seconds:.1f} s)", file=stream, flush=True)

    if jobs <= 1 or total == 1:
        for job in work:
            progress(_render_job(job))
    else:
        import multiprocessing

        with ProcessPoolExecutor(max_workers=min(jobs, total), mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(_render_job, job) for job in work]
            try:
                for fut in as_completed(futures):
                    progress(fut.result())
            except BaseException:
                for fut in futures:
                    fut.cancel()
                raise
    order = {str(p): i for i, p in enumerate(plans)}
    return sorted(outcomes, key=lambda o: order.get(o.plan, 0))


def main(args: Any) -> int:
    """``aiplan report``: see the module docstring for outputs and exit status."""
    if getattr(args, "jobs", 1) is None or args.jobs < 1:
        raise PlanError(Problem("--jobs", "must be a positive integer", getattr(args, "jobs", None)))
    plans = collect_plans(args.plans)
    invalid: list[Outcome] = []
    valid: list[Path] = []
    for p in plans:  # validate everything before starting any kernel
        try:
            load_plan(p)
            valid.append(p)
        except PlanError as exc:
            if len(plans) == 1:
                raise
            invalid.append(Outcome(str(p), False, error=str(exc).replace("\n", "; ")))
    check_parameters(report_notebook(), REPORT_PARAMETERS)
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise PlanError(Problem("--output", "must be a folder", str(out)))
    paper = check_paper(getattr(args, "paper", "a4") or "a4")
    options = {"pdf": bool(args.pdf), "xlsx": bool(args.xlsx), "paper": paper,
               "pptx": bool(getattr(args, "pptx", False)), "chart_files": bool(getattr(args, "charts", False))}
    outcomes = run_batch(valid, out, jobs=args.jobs, **options) if valid else []
    order = {str(p): i for i, p in enumerate(plans)}
    outcomes = sorted(outcomes + invalid, key=lambda o: order.get(o.plan, 0))
    ok = [o for o in outcomes if o.ok]
    bad = [o for o in outcomes if not o.ok]
    print(f"{len(ok)} report(s) written to {out}, {len(bad)} failed")
    for o in ok:
        html = next((f for f in o.files if f.endswith(".html")), "")
        print(f"  ok      {clean_text(o.plan)} -> {clean_text(html)}")
    for o in bad:
        print(f"  FAILED  {clean_text(o.plan)}: {o.error}")
    return 0 if not bad else 1


def regen_golden_cli(argv: list[str] | None = None) -> int:
    """``python -m aiplan.report --regen-golden``: rewrite tests/golden from the notebooks."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m aiplan.report")
    parser.add_argument("--regen-golden", action="store_true",
                        help="re-run the regression notebooks and rewrite tests/golden/*.json")
    ns = parser.parse_args(argv)
    if not ns.regen_golden:
        parser.print_help()
        return 2
    root = Path(__file__).resolve().parent.parent.parent
    tool = root / "tools" / "regen_golden.py"
    return subprocess.call([sys.executable, str(tool)], cwd=str(root))

