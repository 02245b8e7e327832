"""Command line: ``aiplan evaluate | catalog | report | app``.

Bad input prints one line per problem on stderr and exits with status 2; no
traceback reaches the user.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

from .errors import PlanError, Problem

EXIT_BAD_INPUT = 2


def _fmt(value: Any) -> str:
    """A value for the terminal: the report's number format, long texts cut to 100 characters."""
    from .report import fmt

    text = "-" if value is None else fmt(value)
    return text if len(text) <= 100 else text[:99] + "…"


def format_table(result: dict) -> str:
    """A readable, sectioned text table of a result."""
    lines = [f"Plan: {result['plan'].get('name', '')}"]
    for section, values in result.items():
        if section in ("plan", "checks") or not isinstance(values, dict):
            continue
        scalars = {k: v for k, v in values.items() if not isinstance(v, (list, dict))}
        if not scalars:
            continue
        lines.append("")
        lines.append(f"[{section}]")
        width = max(len(k) for k in scalars)
        lines += [f"  {k:<{width}}  {_fmt(v)}" for k, v in scalars.items()]
    checks = result.get("checks") or []
    lines.append("")
    lines.append(f"[checks] {len(checks)} finding(s)")
    for c in checks:
        lines.append(f"  {c['severity'].upper():<8} {c['id']}: {c['message']}")
    return "\n".join(lines)


def _records_table(rows: list[dict], columns: Sequence[str]) -> str:
    cells = [[_fmt(r.get(c)) if not isinstance(r.get(c), str) else r.get(c) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    out = ["  ".join(c.ljust(w) for c, w in zip(columns, widths))]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(out)


CATALOG_COLUMNS = {
    "gpus": ("id", "memory_gb", "memory_bw_gb_per_s", "bf16_tflops", "fp8_tflops", "tdp_w", "mfu_default",
             "status", "as_of"),
    "servers": ("id", "gpu", "gpus_per_node", "max_power_kw", "rack_units", "weight_kg", "price_usd", "status",
                "as_of"),
    "models": ("id", "params_published", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "experts",
               "active_experts", "status"),
    "clouds": ("id", "gpu", "gpus", "on_demand_usd_per_hr", "reserved_1y_usd_per_hr", "reserved_3y_usd_per_hr",
               "spot_usd_per_hr", "as_of"),
    "regions": ("id", "grid_kg_co2_per_kwh", "electricity_usd_per_kwh", "status", "as_of"),
}


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from .evaluate import evaluate
    from .plan import apply_overrides, read_yaml

    raw = read_yaml(args.plan)
    if args.set:
        if not isinstance(raw, dict):
            raw = {} if raw is None else raw
        raw = apply_overrides(raw, args.set)
    result = evaluate(raw)
    if args.format == "json":
        print(json.dumps(result, indent=2))
    else:
        print(format_table(result))
    return 0


def _cmd_catalog(args: argparse.Namespace) -> int:
    from .catalog import load_catalog

    cat = load_catalog()
    rows = cat.records(args.table)
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    else:
        print(_records_table(rows, CATALOG_COLUMNS[args.table]))
    return 0


def planner_notebook() -> Path:
    """``planner.ipynb`` of the source checkout, else the copy a wheel ships in ``aiplan/notebooks``."""
    here = Path(__file__).resolve().parent
    for path in (here.parent / "notebooks" / "planner.ipynb", here / "notebooks" / "planner.ipynb"):
        if path.is_file():
            return path
    raise PlanError(Problem("planner.ipynb", "not found next to the aiplan package", has_value=False))


def voila_command(port: int | None = None, open_browser: bool = True) -> tuple[list[str], dict[str, str]]:
    """The command and environment that serve the planner app with Voilà, fully offline.

    The ``aiplan`` Voilà template (``aiplan/templates/jupyter``) is the default ``lab``
    template without its Font Awesome links to a CDN; ``JUPYTER_PATH`` makes it visible.
    """
    voila = Path(sys.executable).parent / "voila"
    exe = str(voila) if voila.exists() else shutil.which("voila")
    if exe is None:
        raise PlanError(Problem("aiplan app", 'needs Voilà: pip install "aiplan[notebooks]"', has_value=False))
    templates = Path(__file__).resolve().parent / "templates" / "jupyter"
    env = dict(os.environ)
    env["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(templates), env.get("JUPYTER_PATH", "")) if p)
    argv = [exe, str(planner_notebook()), "--template=aiplan", "--show_tracebacks=True"]
    if port:
        argv.append(f"--port={port}")
    if not open_browser:
        argv.append("--no-browser")
    return argv, env


def _cmd_app(args: argparse.Namespace) -> int:
    argv, env = voila_command(args.port, not args.no_browser)
    return subprocess.call(argv, env=env)


def _cmd_report(args: argparse.Namespace) -> int:
    from .report import main as report_main

    return report_main(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="aiplan", description="Plan AI infrastructure: model -> cluster -> "
                                     "facility -> cost.")
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser("evaluate", help="evaluate a plan file")
    ev.add_argument("plan", help="plan YAML file")
    ev.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="override one field (repeatable), e.g. --set cluster.gpus=512")
    ev.add_argument("--format", choices=("json", "table"), default="table")
    ev.set_defaults(func=_cmd_evaluate)

    cat = sub.add_parser("catalog", help="list catalog rows")
    cat.add_argument("table", choices=tuple(CATALOG_COLUMNS))
    cat.add_argument("--format", choices=("json", "table"), default="table")
    cat.set_defaults(func=_cmd_catalog)

    rep = sub.add_parser("report", help="render client reports (HTML, optional PDF/XLSX)")
    rep.add_argument("plans", nargs="+", help="plan files or folders of plan files")
    rep.add_argument("-o", "--output", required=True, help="output folder")
    rep.add_argument("--pdf", action="store_true", help="also print a PDF with the system Chromium")
    rep.add_argument("--xlsx", action="store_true", help="also write the result tables as an Excel workbook")
    rep.add_argument("--jobs", type=int, default=1, help="plans rendered in parallel (processes)")
    rep.set_defaults(func=_cmd_report)

    app = sub.add_parser("app", help="serve the planner app (Voilà, offline) in the browser")
    app.add_argument("--port", type=int, default=None, help="port to serve on (default: Voilà's 8866)")
    app.add_argument("--no-browser", action="store_true", help="do not open a browser")
    app.set_defaults(func=_cmd_app)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except PlanError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug in aiplan: one line, traceback on request
        if os.environ.get("AIPLAN_DEBUG"):
            raise
        print(f"internal error: {type(exc).__name__}: {exc} (set AIPLAN_DEBUG=1 for a traceback)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
