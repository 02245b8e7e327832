"""Command line: ``aiplan evaluate | options | catalog | sources | validate | report | app``.

Bad input prints one line per problem on stderr and exits with status 2; no
traceback reaches the user. User text (plan names, ids) is printed without control
characters.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .analysis.options import COLUMNS, explore, format_options
from .calibration.validation import format_validation, serving_segments, validation_rows, validation_summary
from .core import fields
from .core.catalog import load_catalog
from .core.errors import PlanError, Problem, unknown
from .core.fields import get_path
from .core.inputs import clean_text, read_yaml
from .core.version import __version__
from .model.step import ONE_POOL_KEYS
from .pipeline import evaluate, to_plain
from .plan import apply_overrides, load_plan
from .present.summary import api_price_lines

EXIT_BAD_INPUT = 2


#: result keys of training state the text table leaves out of a serving plan (the quick memory rule counts
#: gradients and optimizer states a served model does not hold)
TRAINING_ONLY = frozenset({"memory.rule_of_thumb_gb"})


#: where a plan served by two pools lists the figures of one pool, the alternative it does not use
ONE_POOL_SECTION, ONE_POOL_TITLE = "one_pool", "One pool instead (the alternative the plan does not use)"
#: cluster keys of a serving plan that repeat the one-pool layout (listed under that heading as ``inference`` keys)
ONE_POOL_TWINS = frozenset({"cluster.tensor_parallel", "cluster.pipeline_parallel", "cluster.expert_parallel"})


def format_table(result: dict) -> str:
    """A readable, sectioned text table of a result: human labels and formatted values.

    Sections in pipeline order; within a section the registry's order; values that do not apply
    (None) and lists (monthly curves, candidates) are left out, except the published API prices of a
    serving plan's model, listed after the sections beside the plan's cost per million tokens. Findings
    come last.
    """
    plan = result.get("plan") or {}
    serving = (plan.get("workload") or {}).get("kind") == "inference"
    two_pools = serving and bool(get_path(result, "inference.disaggregated"))
    lines = [f"Plan: {clean_text(plan.get('name', ''))}"]
    by_section: dict[str, list[str]] = {}
    catalog = load_catalog()
    for key, spec in fields.RESULT_FIELDS.items():
        section, _, rest = key.partition(".")
        value = get_path(result, key)
        if not rest or "[]" in key or value is None or isinstance(value, (list, dict)) or (
                serving and key in TRAINING_ONLY) or (two_pools and key in ONE_POOL_TWINS):
            continue
        if two_pools and section == "inference" and rest in ONE_POOL_KEYS:
            section = ONE_POOL_SECTION
        by_section.setdefault(section, []).extend(_table_row(spec.label, clean_text(_value_text(key, value, catalog))))
    titles = {**fields.SECTION_TITLES, ONE_POOL_SECTION: ONE_POOL_TITLE}
    order = [s for s in by_section if s != ONE_POOL_SECTION]
    if ONE_POOL_SECTION in by_section:  # right after the serving figures it is the alternative to
        order.insert(order.index("inference") + 1, ONE_POOL_SECTION)
    for section in order:
        lines += ["", titles[section], *by_section[section]]
    api = api_price_lines(result)
    if api:
        mine = get_path(result, "cost.usd_per_million_tokens")
        beside = f" (this plan, renting: {fields.format_value(mine, 'usd_rate')} per million tokens)" if mine else ""
        lines += ["", fields.RESULT_FIELDS["cost.api_prices"].label + beside, *(f"  {clean_text(t)}" for t in api)]
    checks = result.get("checks") or []
    lines += ["", f"Findings ({len(checks)})"]
    for c in checks:
        lines.append(f"  {c['severity'].upper():<8} {clean_text(c['message'])}")
    return "\n".join(lines)


#: result keys whose value is a catalog id: the catalog table that names it (the table shows "name (id)")
ID_TABLES = {"network.fabric_switch": "switches", "cost.cloud": "clouds", "facility.region": "regions"}


def _value_text(key: str, value: Any, catalog: Any) -> str:
    """A figure of the text table in words: a catalog id as its record's name ("NVIDIA Quantum-2 QM9700 (NDR
    InfiniBand) (qm9700)"), a list of source ids as their authors and years with the command that prints them in full,
    anything else formatted by the field registry."""
    record = catalog.table(ID_TABLES[key]).get(value) if key in ID_TABLES else None
    if record is not None and getattr(record, "name", None):
        return f"{record.name} ({value})"
    ids = [i.strip() for i in str(value).split(";")] if isinstance(value, str) else []
    if ids and all(i in catalog.sources for i in ids):
        cited = "; ".join(dict.fromkeys(catalog.sources[i].author_year() for i in ids))
        return f"{cited} (in full: aiplan sources {' '.join(ids)})"
    spec = fields.RESULT_FIELDS[key]
    return fields.format_value(value, spec.kind, spec.unit)


#: where a value starts in `aiplan evaluate`'s table, and how wide a line may be [characters]
VALUE_COLUMN, LINE_WIDTH = 45, 110


def _table_row(label: str, text: str) -> list[str]:
    """One figure of the text table: its label, and its value from :data:`VALUE_COLUMN` on (on the next line
    after a longer label), wrapped at :data:`LINE_WIDTH` and never cut."""
    text = re.sub(r";(?=\S)", "; ", text)   # lists of source ids break between ids
    wrapped = textwrap.wrap(text, LINE_WIDTH - VALUE_COLUMN, break_on_hyphens=False) or [""]
    pad, head = " " * VALUE_COLUMN, f"  {label}".ljust(VALUE_COLUMN - 1) + " "
    if len(head) > VALUE_COLUMN:
        return [f"  {label}", *(pad + w for w in wrapped)]
    return [head + wrapped[0], *(pad + w for w in wrapped[1:])]


def _records_table(rows: list[dict], columns: Sequence[str]) -> str:
    def cell(value: Any) -> str:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return clean_text("-" if value is None else value)

    cells = [[cell(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    out = ["  ".join(c.ljust(w) for c, w in zip(columns, widths))]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(out)


CATALOG_COLUMNS = {
    "gpus": ("id", "memory_gb", "memory_bw_gb_per_s", "bf16_tflops", "fp8_tflops", "tdp_w", "family",
             "status", "as_of"),
    "servers": ("id", "gpu", "gpus_per_node", "max_power_kw", "rack_units", "weight_kg", "price_usd", "status",
                "as_of"),
    "models": ("id", "params_published", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "experts",
               "active_experts", "status"),
    "clouds": ("id", "gpu", "gpus", "on_demand_usd_per_hr", "reserved_1y_usd_per_hr", "reserved_3y_usd_per_hr",
               "spot_usd_per_hr", "status", "as_of"),
    "regions": ("id", "grid_kg_co2_per_kwh", "electricity_usd_per_kwh", "status", "as_of"),
    "switches": ("id", "ports", "port_gbps", "power_w", "typical_power_w", "status", "as_of"),
    "server_prices": ("id", "server", "price_usd", "kind", "condition", "buyer", "status", "as_of"),
    "buyer_profiles": ("id", "profile", "part", "value", "unit", "status", "as_of"),
    "api_prices": ("id", "model", "provider", "input_usd_per_mtok", "output_usd_per_mtok", "precision", "status",
                   "as_of"),
}


def _cmd_evaluate(args: argparse.Namespace) -> int:
    raw = read_yaml(args.plan)
    if args.set:
        raw = apply_overrides(raw, args.set)
    result = evaluate(raw, base_dir=Path(args.plan).resolve().parent)
    print(json.dumps(result, indent=2) if args.format == "json" else format_table(result))
    return 0


def _cmd_catalog(args: argparse.Namespace) -> int:
    cat = load_catalog()
    rows = [r for r in cat.records(args.table) if not args.status or r["status"] == args.status]
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    else:
        print(_records_table(rows, CATALOG_COLUMNS[args.table]))
    return 0


def source_entry(src) -> str:
    """A bibliography entry as text: id, author, date, title, URL, accessed."""
    parts = [f"{src.author} ({src.date or 'undated'}). {src.title}."]
    parts.append(src.url or "(no URL)")
    if src.accessed:
        parts.append(f"Accessed {src.accessed}.")
    return clean_text(f"[{src.id}] " + " ".join(parts))


def _cmd_sources(args: argparse.Namespace) -> int:
    sources = load_catalog().sources
    ids = args.ids or sorted(sources)
    missing = [unknown("sources", i, "source id", sources) for i in ids if i not in sources]
    if missing:
        raise PlanError(missing)
    if args.format == "json":
        import dataclasses

        print(json.dumps([dataclasses.asdict(sources[i]) for i in ids], indent=2))
    else:
        print("\n".join(source_entry(sources[i]) for i in ids))
    return 0


def planner_notebook() -> Path:
    """``planner.ipynb`` of the source checkout, else the copy a wheel ships in ``aiplan/notebooks``."""
    here = Path(__file__).resolve().parent
    for path in (here.parent / "notebooks" / "planner.ipynb", here / "notebooks" / "planner.ipynb"):
        if path.is_file():
            return path
    raise PlanError(Problem("planner.ipynb", "not found next to the aiplan package", has_value=False))


#: the planner app's port and host by default (the host: this machine only)
APP_PORT = 8866
APP_HOST = "localhost"
#: kernels kept warm by default (one consultant); ``--pool N`` for a team sharing the server
APP_POOL = 1
#: most kernels ``--pool`` may keep warm (each holds about 100 MB and starts with a few CPU-seconds)
APP_POOL_MAX = 64
#: a closed tab's kernel is shut down when the page closes; one whose page vanished without saying so
#: (a crash, a dropped network) is culled after this long idle without a connection [s]; with the
#: check every CULL_INTERVAL_S that is within 4.5 minutes
CULL_IDLE_S = 240
CULL_INTERVAL_S = 30
#: the next tab's kernel is warmed up this long after a page takes the preheated one [s], so the
#: warm-up does not compete with the first changes on the page (the machine may have two cores)
POOL_FILL_DELAY_S = 20
#: JupyterLab extensions of the environment the page does not need (syntax colours, the editor's
#: preview button): each would only make the page slower to open
LAB_EXTENSIONS_UNUSED = '["jupyterlab_pygments", "@voila-dashboards/jupyterlab-preview"]'
#: Voilà's log lines once the preheated kernel has started (and goes on to run the notebook), and
#: naming each kernel it starts
READY_MARK = "Kernel pool of"
KERNEL_STARTED = "Kernel started: "
#: the preheated kernel has run the notebook once it has been busy and then idle this long [s]
WARM_IDLE_S = 1.5


def voila_command(port: int | None = None, open_browser: bool = True, host: str = APP_HOST,
                  cull_idle_s: int = CULL_IDLE_S, pool: int = APP_POOL) -> tuple[list[str], dict[str, str]]:
    """The command and environment that serve the planner app with Voilà, fully offline.

    The ``aiplan`` Voilà template (``aiplan/templates/jupyter``) is the default ``lab`` template
    without its Font Awesome links to a CDN; ``JUPYTER_PATH`` makes it visible. ``pool`` kernels
    are kept preheated (Voilà's ``preheat_kernel``: the notebook already run, so a new tab opens
    in seconds; a kernel taken is replaced :data:`POOL_FILL_DELAY_S` later), kernels of vanished
    pages are culled after ``cull_idle_s`` idle, and the port is exactly ``port`` (no silent move
    to another).
    """
    voila = Path(sys.executable).parent / "voila"
    exe = str(voila) if voila.exists() else shutil.which("voila")
    if exe is None:
        raise PlanError(Problem("aiplan app", 'needs Voilà: pip install "aiplan[notebooks]"', has_value=False))
    templates = Path(__file__).resolve().parent / "templates" / "jupyter"
    env = dict(os.environ)
    env["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(templates), env.get("JUPYTER_PATH", "")) if p)
    argv = [exe, str(planner_notebook()), "--template=aiplan", f"--port={port or APP_PORT}", f"--Voila.ip={host}",
            "--Voila.port_retries=0", "--preheat_kernel=True", f"--pool_size={pool}",
            f"--VoilaKernelManager.fill_delay={POOL_FILL_DELAY_S}",
            f"--MappingKernelManager.cull_idle_timeout={cull_idle_s}",
            f"--MappingKernelManager.cull_interval={min(CULL_INTERVAL_S, max(1, cull_idle_s // 2))}",
            "--MappingKernelManager.cull_connected=False",
            f"--VoilaConfiguration.extension_denylist={LAB_EXTENSIONS_UNUSED}"]
    if not open_browser:
        argv.append("--no-browser")
    return argv, env


def app_url(host: str, port: int) -> str:
    """The address to open ("http://localhost:8866/"); an all-interfaces host is shown as this machine's name."""
    shown = socket.gethostname() if host in ("0.0.0.0", "::", "") else host
    return f"http://[{shown}]:{port}/" if ":" in shown else f"http://{shown}:{port}/"


def _port_free(host: str, port: int) -> bool:
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror:
        return True  # Voilà reports an unknown host itself
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(address)
            except OSError:
                return False
    return True


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the server gets SIGTERM if ``aiplan app`` itself is killed (even with SIGKILL)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def kernel_state(url: str, kernel_id: str) -> str | None:
    """A kernel's execution state ("busy", "idle", ...) from the server, or None if it has none."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"{url}api/kernels/{kernel_id}", timeout=5) as reply:
            return json.load(reply).get("execution_state")
    except (urllib.error.URLError, OSError, ValueError):
        return None


def wait_until_warm(url: str, kernel_id: str, timeout_s: float = 300) -> bool:
    """Wait until the preheated kernel has run the notebook: busy once, then idle for WARM_IDLE_S.

    Voilà announces the pool as filled when the kernel has started, before the notebook has run;
    a page opened then waits for the rest of the run.
    """
    deadline = time.monotonic() + timeout_s
    busy, idle_since = False, None
    while time.monotonic() < deadline:
        state = kernel_state(url, kernel_id)
        now = time.monotonic()
        if state == "busy":
            busy, idle_since = True, None
        elif state == "idle" and busy:
            idle_since = idle_since or now
            if now - idle_since >= WARM_IDLE_S:
                return True
        time.sleep(0.1)
    return False


def run_app(argv: list[str], env: dict[str, str], url: str, out=None, open_browser: bool = False) -> int:
    """Run Voilà until it stops; print the URL (and open a browser on it) once the preheated kernel has
    run the notebook.

    SIGTERM, SIGINT (Ctrl-C) and SIGHUP are passed on to Voilà as SIGTERM, which shuts down
    every kernel before it exits; Voilà's own warnings and errors are passed through.
    """
    out = out or sys.stdout
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)

    def stop(_signum, _frame):
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    print(f"aiplan app: starting the planner at {url} (Ctrl-C stops it and its kernels)", file=out, flush=True)
    def announce(kernel_id: str) -> None:
        wait_until_warm(url, kernel_id)
        print(f"aiplan app: the planner is ready, open {url}", file=out, flush=True)
        if open_browser:
            import webbrowser

            webbrowser.open(url)

    kernel_id, warming = "", None
    try:
        for line in proc.stdout:
            if KERNEL_STARTED in line:
                kernel_id = line.split(KERNEL_STARTED, 1)[1].strip()
            if READY_MARK in line and warming is None:
                warming = threading.Thread(target=announce, args=(kernel_id,), daemon=True)
                warming.start()
            elif any(mark in line for mark in (" ERROR ", " CRITICAL ", "Traceback", "Error:")):
                print(line.rstrip(), file=sys.stderr, flush=True)
        return proc.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if proc.poll() is None:
            proc.terminate()
            proc.wait(30)


def _cmd_app(args: argparse.Namespace) -> int:
    port = args.port or APP_PORT
    if not _port_free(args.host, port):
        raise PlanError(Problem("--port", f"must be a free port on {args.host}; another program listens on it", port,
                                hint="choose another with --port"))
    if not 1 <= args.pool <= APP_POOL_MAX:
        raise PlanError(Problem("--pool", f"must be a whole number from 1 to {APP_POOL_MAX}", args.pool))
    # the charts' offline JavaScript, built once for every kernel to read (kernels then never load vl-convert)
    subprocess.run([sys.executable, "-c", "from aiplan.present.charts import jupyterchart_bundle; "
                    "jupyterchart_bundle()"], check=False, timeout=300)
    argv, env = voila_command(port, False, args.host, pool=args.pool)  # the browser opens once the planner is ready
    return run_app(argv, env, app_url(args.host, port), open_browser=not args.no_browser)


def _cmd_options(args: argparse.Namespace) -> int:
    plan = load_plan(read_yaml(args.plan), base_dir=Path(args.plan).resolve().parent)
    rows = to_plain(explore(plan, gpus=_csv_list(args.gpus), pricings=_csv_list(args.pricing), by=args.by,
                            top=args.top))
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    elif args.format == "csv":
        import csv

        writer = csv.DictWriter(sys.stdout, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    else:
        print(format_options(rows, by=args.by))
    return 0


def _csv_list(text):
    return [part.strip() for part in text.split(",") if part.strip()] if text else None


def _cmd_validate(args: argparse.Namespace) -> int:
    rows = validation_rows()
    summary = validation_summary(rows)
    segs = serving_segments()
    if args.format == "json":
        print(json.dumps(to_plain({"summary": summary, "cases": rows, "segments": segs}), indent=2))
    else:
        print(format_validation(rows, summary, segs))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .report import main as report_main

    return report_main(args)


EXIT_CODES = "exit status: 0 done; 1 a run failed (reports: any plan failed); 2 invalid input or arguments"


def _sub(sub, name: str, help_: str, func) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=help_, description=help_, epilog=EXIT_CODES,
                            formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.set_defaults(func=func)
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="aiplan", description="Plan AI infrastructure: model -> cluster -> "
                                     "facility -> cost.", epilog=EXIT_CODES)
    parser.add_argument("--version", action="version", version=f"aiplan {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ev = _sub(sub, "evaluate", "evaluate a plan file", _cmd_evaluate)
    ev.add_argument("plan", help="plan YAML file")
    ev.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="override one field (repeatable), e.g. --set cluster.gpus=512")
    ev.add_argument("--format", choices=("json", "table"), default="table", help="output format")

    cat = _sub(sub, "catalog", "list catalog rows", _cmd_catalog)
    cat.add_argument("table", choices=tuple(CATALOG_COLUMNS), help="catalog table")
    cat.add_argument("--format", choices=("json", "table"), default="table", help="output format")
    cat.add_argument("--status", choices=("published", "secondary", "derived", "estimate"), default=None,
                     help="only rows of this status (estimate: the figures to replace with quotes)")

    src = _sub(sub, "sources", "print bibliography entries (all, or the ids given)", _cmd_sources)
    src.add_argument("ids", nargs="*", metavar="ID", help="source ids, e.g. arxiv-2407.21783")
    src.add_argument("--format", choices=("json", "table"), default="table", help="output format")

    opt = _sub(sub, "options", "rank every GPU, cloud offer, pricing and buying for the plan's workload", _cmd_options)
    opt.add_argument("plan", help="plan YAML file")
    opt.add_argument("--format", choices=("table", "json", "csv"), default="table", help="output format")
    opt.add_argument("--by", choices=("cost", "days", "co2"), default="cost",
                     help="rank by the median run cost (serving: cost per month), median days or CO2")
    opt.add_argument("--top", type=int, default=None, help="keep the best N options (excluded ones are listed after)")
    opt.add_argument("--gpus", default=None, metavar="A,B", help="only these catalog GPU ids")
    opt.add_argument("--pricing", default=None, metavar="P,Q",
                     help="only these pricings: on-demand, reserved-1y, reserved-3y, spot, buy")

    val = _sub(sub, "validate", "compare the kit's predictions with published training runs, MLPerf results, "
               "serving benchmarks, owning costs and metered energy", _cmd_validate)
    val.add_argument("--format", choices=("json", "table"), default="table", help="output format")

    rep = _sub(sub, "report", "render client reports (HTML, optional PDF/XLSX/PPTX and chart files)", _cmd_report)
    rep.add_argument("plans", nargs="+", help="plan files or folders of plan files")
    rep.add_argument("-o", "--output", required=True, help="output folder")
    rep.add_argument("--pdf", action="store_true", help="also print a PDF with the system Chromium")
    rep.add_argument("--paper", choices=("a4", "letter"), default="a4", help="paper size of the PDF")
    rep.add_argument("--xlsx", action="store_true", help="also write an Excel workbook (summary, one sheet per step, "
                     "bill of materials, monthly cost, assumptions, sources)")
    rep.add_argument("--pptx", action="store_true", help="also write a short PowerPoint deck to edit and present")
    rep.add_argument("--charts", action="store_true", help="also save every chart as PNG and SVG, named by step")
    rep.add_argument("--jobs", type=int, default=1, help="plans rendered in parallel (processes)")

    app = _sub(sub, "app", "serve the planner app (Voilà, offline) in the browser", _cmd_app)
    app.add_argument("--port", type=int, default=APP_PORT, help="port to serve on")
    app.add_argument("--host", default=APP_HOST,
                     help="address to listen on (localhost: this machine only; 0.0.0.0: every network)")
    app.add_argument("--no-browser", action="store_true", help="do not open a browser")
    app.add_argument("--pool", type=int, default=APP_POOL,
                     help="kernels kept warm, so that many tabs open in seconds (a team: one per expected "
                          "concurrent user; each holds about 100 MB)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except PlanError as exc:
        for line in exc.lines():
            print(f"error: {line}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`, which stopped reading
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # a bug in aiplan: one line, traceback on request
        if os.environ.get("AIPLAN_DEBUG"):
            raise
        print(f"internal error: {type(exc).__name__}: {clean_text(exc)[:300]} (set AIPLAN_DEBUG=1 for a traceback)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
