"""Client reports: run ``notebooks/report.ipynb`` headless and publish it offline.

``aiplan report PLAN.yaml [PLAN2.yaml | FOLDER ...] -o OUT [--pdf] [--xlsx] [--jobs N]``
writes, for each plan ``NAME.yaml``:

- ``OUT/NAME.html``  one self-contained HTML file: no code, charts as inline SVG,
  nothing fetched from the network (an nbconvert template that drops the CDN
  scripts of the lab template, see ``aiplan/templates/offline``);
- ``OUT/NAME.ipynb`` the executed notebook (with papermill metadata), for audit: each
  chart as its Vega-Lite spec and the SVG drawn from it;
- ``OUT/NAME.json``  the key results and the full result (the notebook's sidecar);
- ``OUT/NAME.pdf``   with ``--pdf``: the HTML printed by the system Chromium;
- ``OUT/NAME.xlsx``  with ``--xlsx``: the result tables, one sheet per step.

Every output is first written to a temporary folder inside ``OUT`` and moved
into place with :func:`os.replace` only when all of that plan's outputs exist,
so a failed or interrupted run never leaves a half-written report and never
replaces a previous good one.

Exit status of :func:`main`: 0 when every report was written; 1 when any plan
failed (the others still run; a summary lists both); with a *single* plan an
invalid plan raises :class:`~aiplan.errors.PlanError` before anything runs
(the CLI prints it and exits 2). Bad arguments (no plan found, ``--jobs 0``)
are also a ``PlanError``.

This module also holds the small presentation helpers the report notebook calls
(tables, the executive summary, findings, sources), so the notebook keeps no
logic of its own, and :func:`key_results` / :func:`write_sidecar`, the JSON
sidecar the notebook regression tests compare with ``tests/golden``.
"""

from __future__ import annotations

import datetime as _dt
import functools
import html as _html
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from .errors import PlanError, Problem

# nbformat, papermill and nbconvert import jsonschema, which builds the grammar of the optional
# ``rfc3987_syntax`` package (~1 s per process) to check "iri" formats that no notebook schema
# uses; skipped here as in the kernel (see aiplan/charts.py).
sys.modules.setdefault("rfc3987_syntax", None)

#: Folder of the offline nbconvert template (``offline/index.html.j2``).
TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
#: Parameters :func:`run_notebook` passes to the report notebook (checked against its parameters cell).
REPORT_PARAMETERS = ("plan_path", "results_path", "report_date", "svg_charts")
#: Cell execution timeout for headless runs [s].
EXECUTION_TIMEOUT_S = 600
#: Sections of the result in report order, grouped by the four steps.
STEPS: dict[str, tuple[str, ...]] = {
    "Model": ("model", "memory", "compute", "inference"),
    "Cluster": ("cluster", "network", "storage", "checkpoint", "reliability"),
    "Facility": ("facility",),
    "Cost": ("cost",),
}
SECTIONS = tuple(s for group in STEPS.values() for s in group)


def report_notebook() -> Path:
    """Path of the report notebook.

    ``$AIPLAN_REPORT_NOTEBOOK`` if set, else ``notebooks/report.ipynb`` of the source
    checkout aiplan is imported from (editable install), else the copy a wheel ships as
    ``aiplan/notebooks/report.ipynb``, else ``notebooks/`` of the current folder.
    """
    env = os.environ.get("AIPLAN_REPORT_NOTEBOOK")
    here = Path(__file__).resolve().parent
    candidates = [Path(env)] if env else [here.parent / "notebooks" / "report.ipynb",
                                          here / "notebooks" / "report.ipynb",
                                          Path.cwd() / "notebooks" / "report.ipynb"]
    for path in candidates:
        if path.is_file():
            return path
    raise PlanError(Problem("report notebook", "not found (run from the repository root, or set "
                            "AIPLAN_REPORT_NOTEBOOK to the path of notebooks/report.ipynb)",
                            [str(p) for p in candidates]))


# --- presentation helpers used by the report notebook ------------------------------------


class Html(str):
    """A string that Jupyter displays as HTML (no IPython import needed)."""

    def _repr_html_(self) -> str:
        return str(self)


def esc(value: Any) -> str:
    """HTML-escape ``value`` as text."""
    return _html.escape(str(value), quote=True)


def fmt(value: Any) -> str:
    """A number for people: thousands separators, 3 significant digits, ``n/a`` for None."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "n/a"
        if value == 0:
            return "0"
        if abs(value) >= 1e9 or abs(value) < 1e-3:
            return f"{value:.3e}"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.3g}"
    if isinstance(value, (list, dict)):
        return esc(json.dumps(value)[:80])
    return str(value)


def _is_num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def table(rows: Iterable[Iterable[Any]], header: Iterable[str]) -> Html:
    """An HTML table (class ``aiplan``); numbers right-aligned and formatted with :func:`fmt`."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for v in row:
            if isinstance(v, Html):
                cells.append(f"<td>{v}</td>")
            elif _is_num(v):
                cells.append(f"<td class='num'>{esc(fmt(v))}</td>")
            else:
                cells.append(f"<td>{esc(fmt(v))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return Html(f"<table class='aiplan'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


def note(text: str) -> Html:
    """A short italic note, e.g. "not available"."""
    return Html(f"<p class='aiplan-na'>{esc(text)}</p>")


def read_plan(plan_path: str = "", plan_yaml: str = "") -> Any:
    """The raw plan (as written by the user) from YAML text or a file; PlanError if unreadable."""
    from .plan import parse_yaml, read_yaml

    if plan_yaml and plan_yaml.strip():
        return parse_yaml(plan_yaml, "plan_yaml")
    if not plan_path:
        raise PlanError(Problem("plan_path", "is required when plan_yaml is empty", has_value=False))
    return read_yaml(plan_path)


def header(result: Mapping, report_date: str = "") -> Html:
    """Title block: plan name, report date and aiplan version."""
    from . import __version__

    day = report_date or _dt.date.today().isoformat()
    name = (result.get("plan") or {}).get("name", "Unnamed plan")
    return Html(f"<h1>{esc(name)}</h1><p>Infrastructure plan report &middot; {esc(day)} &middot; "
                f"aiplan {esc(__version__)}</p>")


def _get(result: Mapping, dotted: str) -> Any:
    node: Any = result
    for key in dotted.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _first(result: Mapping, *keys: str) -> Any:
    for key in keys:
        value = _get(result, key)
        if value is not None:
            return value
    return None


def _usd(value: Any) -> str:
    if not _is_num(value):
        return "n/a"
    for scale, suffix in ((1e9, " bn"), (1e6, " M"), (1e3, " k")):
        if abs(value) >= scale:
            return f"${value / scale:,.3g}{suffix}"
    return f"${value:,.0f}"


def five_numbers(result: Mapping) -> list[tuple[str, str]]:
    """The answer in five numbers: (label, formatted value) pairs."""
    kind = _get(result, "plan.workload.kind")
    gpus = _first(result, "inference.gpus", "compute.gpus", "cluster.gpus") if kind == "inference" else \
        _first(result, "compute.gpus", "cluster.gpus", "inference.gpus")
    out = [("GPUs", fmt(gpus))]
    if kind == "inference":
        out.append(("time per output token [ms]", fmt(_get(result, "inference.tpot_ms"))))
    else:
        out.append(("wall-clock time [days]", fmt(_get(result, "compute.wall_clock_days"))))
    kw = _get(result, "facility.total_kw")
    out.append(("facility power [MW]" if _is_num(kw) and kw >= 1000 else "facility power [kW]",
                fmt(kw / 1000 if _is_num(kw) and kw >= 1000 else kw)))
    years = _get(result, "plan.cost.years")
    span = f" over {fmt(years)} years" if years is not None else ""
    out.append((f"cloud cost{span}", _usd(_get(result, "cost.cloud_usd"))))
    out.append((f"on-premises cost{span}", _usd(_get(result, "cost.onprem_usd"))))
    return out


def summary(result: Mapping) -> Html:
    """Executive summary: five numbers, whether it fits, which option is cheaper, critical findings."""
    kpis = "".join(f"<div class='aiplan-kpi'><div class='v'>{esc(v)}</div><div class='l'>{esc(k)}</div></div>"
                   for k, v in five_numbers(result))
    lines = []
    fits = _get(result, "memory.fits")
    if fits is False:
        lines.append("<b class='sev-critical'>The plan does not fit in GPU memory as laid out</b> "
                     f"({fmt(_get(result, 'memory.per_gpu_gb'))} GB needed per GPU, "
                     f"{fmt(_first(result, 'memory.usable_gb', 'memory.gpu_capacity_gb'))} GB available).")
    elif fits is True:
        lines.append(f"Fits: {fmt(_get(result, 'memory.per_gpu_gb'))} GB per GPU of "
                     f"{fmt(_get(result, 'memory.gpu_capacity_gb'))} GB.")
    cloud, onprem = _get(result, "cost.cloud_usd"), _get(result, "cost.onprem_usd")
    if _is_num(cloud) and _is_num(onprem):
        cheaper = "owning (on-premises)" if onprem < cloud else "renting (cloud)"
        months = _get(result, "cost.breakeven_months")
        extra = f"; owning breaks even after {fmt(months)} months" if months is not None else ""
        lines.append(f"Cheaper over the plan's horizon: {cheaper}{extra}.")
    crit = [c for c in result.get("checks") or [] if c.get("severity") == "critical"]
    if crit:
        lines.append(f"{len(crit)} critical finding(s): " + "; ".join(esc(c.get("message", "")) for c in crit))
    return Html(f"<div class='aiplan-kpis'>{kpis}</div>" + "".join(f"<p>{t}</p>" for t in lines))


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def assumed_defaults(raw_plan: Any, result: Mapping) -> list[tuple[str, Any, bool]]:
    """(field, value used, given by the user?) for every field of the evaluated plan."""
    given = _flatten(raw_plan if isinstance(raw_plan, Mapping) else {})
    used = _flatten(result.get("plan") or {})
    rows = []
    for key, value in used.items():
        user = key in given or any(g.startswith(key + ".") for g in given)
        rows.append((key, value, user))
    return rows


def plan_table(raw_plan: Any, result: Mapping) -> Html:
    """The plan as evaluated: every field, and whether the user gave it or a default was assumed."""
    rows = [(k, "" if v is None else v, "given" if user else "default")
            for k, v, user in assumed_defaults(raw_plan, result)]
    n_default = sum(1 for r in rows if r[2] == "default")
    return Html(f"<p>{len(rows)} fields, {n_default} of them defaults assumed by aiplan.</p>"
                + table(rows, ("field", "value", "")))


def scalars(result: Mapping, section: str) -> list[tuple[str, Any]]:
    """(key, value) of the plain values of one result section (lists and dicts left out)."""
    values = result.get(section) or {}
    return [(k, v) for k, v in values.items() if not isinstance(v, (list, dict))]


def applies(result: Mapping, section: str) -> bool:
    """False when every value of a section is None (e.g. ``inference`` for a training plan)."""
    return any(v is not None for _, v in scalars(result, section))


def section_table(result: Mapping, section: str) -> Html:
    """A section's figures as a table, or a note when the section does not apply."""
    if not applies(result, section):
        return Html(f"<h3>{esc(section)}</h3>") + note("does not apply to this plan")
    rows = [(k, v) for k, v in scalars(result, section) if v is not None and not k.endswith(("_source", "_note"))]
    return Html(f"<h3>{esc(section)}</h3>" + table(rows, ("figure", "value")))


def step(result: Mapping, name: str) -> Html:
    """Tables for every section of one step (``Model``, ``Cluster``, ``Facility``, ``Cost``)."""
    return Html("".join(section_table(result, s) for s in STEPS[name]))


def records_table(rows: Any, columns: Iterable[str] | None = None, limit: int = 40) -> Html:
    """A list of dicts (e.g. ``facility.growth``) as a table; a note if empty."""
    if not rows or not isinstance(rows, list) or not isinstance(rows[0], Mapping):
        return note("not available")
    columns = list(columns or rows[0].keys())
    return table(([r.get(c) for c in columns] for r in rows[:limit]), columns)


def findings(result: Mapping) -> Html:
    """The findings of ``checks``: severity, id, message and source, critical first."""
    order = {"critical": 0, "warning": 1, "info": 2}
    checks = sorted(result.get("checks") or [], key=lambda c: (order.get(c.get("severity"), 3), c.get("id", "")))
    if not checks:
        return note("no findings")
    rows = [(Html(f"<span class='sev-{esc(c.get('severity'))}'>{esc(c.get('severity'))}</span>"), c.get("id"),
             c.get("message"), c.get("source") or "") for c in checks]
    return table(rows, ("severity", "id", "finding", "source"))


#: (label, rule-of-thumb key(s), detailed key, comparable?, why they differ) shown side by side.
RULES_OF_THUMB = (
    ("training memory [GB]: rule for the whole model, detailed per GPU", ("memory.rule_of_thumb_gb",),
     "memory.per_gpu_gb", False, "see the note below the table"),
    ("facility power [kW]", ("facility.rule_of_thumb_kw_low", "facility.rule_of_thumb_kw_high"), "facility.total_kw",
     True, "servers' power +30-40% overhead vs. the detailed sum of servers, network, storage and PUE"),
    ("storage read bandwidth [GB/s]", ("storage.read_gb_per_s_rule",), "storage.read_gb_per_s", True,
     "1 GB/s per GPU vs. what the token rate and checkpoint restores need"),
    ("checkpoint size [GB]", ("checkpoint.size_rule_gb",), "checkpoint.size_gb", True,
     "rule: parameters x bytes per parameter; detailed: what a checkpoint actually stores"),
    ("training tokens (Chinchilla, 20 per parameter)", ("model.chinchilla_tokens",), "plan.workload.tokens", True,
     "compute-optimal tokens (Hoffmann et al. 2022) vs. the tokens the plan trains on"),
)


def rules_of_thumb(result: Mapping) -> Html:
    """The rule-of-thumb answer beside the detailed model's, with why they differ."""
    rows = []
    for label, rule_keys, detail_key, comparable, why in RULES_OF_THUMB:
        rule = [_get(result, k) for k in rule_keys]
        detail = _get(result, detail_key)
        if all(v is None for v in rule) or detail is None:
            continue
        rule_text = " - ".join(fmt(v) for v in rule)
        ratio = detail / rule[0] if comparable and _is_num(detail) and _is_num(rule[0]) and rule[0] else ""
        rows.append((label, rule_text, detail, ratio, why))
    text = _get(result, "memory.rule_of_thumb_note")
    out = table(rows, ("quantity", "rule of thumb", "detailed", "detailed / rule", "why they differ")) if rows \
        else note("no rule-of-thumb comparison available for this plan")
    return Html(out + (f"<p>{esc(text)}</p>" if text else ""))


def sources(plan: Any, result: Mapping) -> Html:
    """Source and date of every catalog record and price the result used."""
    rows = []
    for label, rec in (("GPU", getattr(plan, "gpu", None)), ("server", getattr(plan, "server", None)),
                       ("model", getattr(plan, "model", None)), ("cloud offer", getattr(plan, "cloud", None)),
                       ("region", getattr(plan, "region", None))):
        if rec is not None:
            rows.append((f"{label}: {rec.id}", getattr(rec, "status", ""), getattr(rec, "as_of", ""),
                         getattr(rec, "source", "")))
    for section in SECTIONS:
        values = result.get(section) or {}
        for key, value in values.items():
            if key.endswith("_source") and value:
                stem = key[: -len("_source")]
                as_of = values.get(f"{stem}_as_of") or ""
                rows.append((f"{section}.{stem or key}", "", as_of, value))
    if not rows:
        return note("no sources recorded")
    return table(rows, ("item", "status", "as of", "source"))


# --- key results (the regression sidecar) ---------------------------------------------------


def key_results(result: Mapping) -> dict[str, Any]:
    """The contract keys of ``result`` flattened to ``section.key`` plus the finding ids.

    This is what regression tests compare with ``tests/golden/*.json``: the public
    contract only (``aiplan.RESULT_KEYS``), so a step adding extra keys does not churn
    the golden files, but a changed contract value does.
    """
    from .evaluate import RESULT_KEYS

    out: dict[str, Any] = {"plan.name": _get(result, "plan.name"),
                           "plan.workload.kind": _get(result, "plan.workload.kind")}
    for section, keys in RESULT_KEYS.items():
        for key in keys:
            out[f"{section}.{key}"] = _get(result, f"{section}.{key}")
    out["checks"] = sorted(f"{c.get('severity')}:{c.get('id')}" for c in result.get("checks") or [])
    return out


def dumps_sorted(data: Any) -> str:
    """JSON with sorted keys and one value per line (diff-friendly golden files)."""
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write_sidecar(result: Mapping, path: str | os.PathLike = "", notebook: str = "") -> None:
    """Write ``{"key_results": ..., "result": ...}`` as JSON to ``path`` (no-op when empty).

    Notebooks call this in their last cell with their ``results_path`` parameter.
    """
    if not path:
        return
    from . import __version__
    from .evaluate import to_plain

    data = {"aiplan_version": __version__, "notebook": notebook, "key_results": key_results(result),
            "result": to_plain(dict(result))}
    Path(path).write_text(dumps_sorted(data), encoding="utf-8")


# --- Excel -----------------------------------------------------------------------------------


def _sheet_name(text: str) -> str:
    for ch in "[]:*?/\\":
        text = text.replace(ch, "_")
    return text[:31]


def write_xlsx(result: Mapping, path: str | os.PathLike) -> None:
    """The result tables as an Excel workbook: the plan, one sheet per step section, findings, and lists."""
    import pandas as pd

    with pd.ExcelWriter(path, engine="openpyxl") as xl:
        plan_rows = [{"field": k, "value": v if not isinstance(v, (list, dict)) else json.dumps(v)}
                     for k, v in _flatten(result.get("plan") or {}).items()]
        pd.DataFrame(plan_rows, columns=["field", "value"]).to_excel(xl, sheet_name="plan", index=False)
        lists = []
        for section in SECTIONS:
            values = result.get(section) or {}
            rows = [{"figure": k, "value": v} for k, v in values.items() if not isinstance(v, (list, dict))]
            pd.DataFrame(rows, columns=["figure", "value"]).to_excel(xl, sheet_name=section, index=False)
            for k, v in values.items():
                if isinstance(v, list) and v and isinstance(v[0], Mapping):
                    lists.append((f"{section} {k}", v))
                elif isinstance(v, Mapping):
                    lists.append((f"{section} {k}", [{"item": a, "value": b} for a, b in v.items()]))
        checks = result.get("checks") or []
        pd.DataFrame(checks, columns=["id", "severity", "message", "source"]).to_excel(
            xl, sheet_name="checks", index=False)
        for name, rows in lists:
            pd.DataFrame([{k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()}
                          for r in rows]).to_excel(xl, sheet_name=_sheet_name(name), index=False)


# --- notebook -> HTML -> PDF -------------------------------------------------------------------


def check_parameters(notebook: str | os.PathLike, names: Iterable[str]) -> None:
    """Fail if ``names`` are not all declared in the notebook's parameters cell (papermill only warns)."""
    import papermill

    declared = papermill.inspect_notebook(str(notebook))
    missing = sorted(set(names) - set(declared))
    if missing:
        raise RuntimeError(f"{notebook}: parameters {missing} are not declared in its parameters cell "
                           f"(declared: {sorted(declared)})")


def start_kernel(cwd: str | os.PathLike, kernel_name: str = "python3") -> Any:
    """Launch a kernel now and return its manager: it boots in its own process (~0.5 s)
    while this one imports papermill and nbconvert. Stop it with :func:`stop_kernel`.

    It listens on Unix sockets in a private temporary folder, not on TCP ports: no port
    races between parallel reports, and no "running over TCP without encryption" warning.
    """
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync

    sockets = Path(tempfile.mkdtemp(prefix="aiplan-kernel-"))
    km = AsyncKernelManager(kernel_name=kernel_name, transport="ipc", ip=str(sockets / "k"))
    try:
        run_sync(km.start_kernel)(cwd=str(cwd))
    except BaseException:
        shutil.rmtree(sockets, ignore_errors=True)
        raise
    return km


def kill_kernel(km: Any) -> None:
    """Kill a kernel of :func:`start_kernel` without waiting for it (every output is in by then)."""
    from jupyter_core.utils import run_sync

    if km is not None and km.has_kernel:
        run_sync(km.signal_kernel)(signal.SIGKILL)


def stop_kernel(km: Any) -> None:
    """Stop a kernel of :func:`start_kernel` and remove its sockets and connection file.

    Asking it to shut down takes 0.2-0.5 s, and even a kill waits 0.1 s for the process to
    go, unless :func:`kill_kernel` was called a moment before.
    """
    from jupyter_core.utils import run_sync

    if km is not None and km.has_kernel:
        run_sync(km.shutdown_kernel)(now=True)
    if km is not None and km.transport == "ipc":
        shutil.rmtree(Path(km.ip).parent, ignore_errors=True)


def run_notebook(notebook: str | os.PathLike, output: str | os.PathLike | None, parameters: Mapping[str, Any],
                 timeout_s: float = EXECUTION_TIMEOUT_S, kernel_name: str = "python3",
                 cwd: str | os.PathLike | None = None, on_cell_executed: Any = None, km: Any = None) -> Any:
    """Execute ``notebook`` with papermill; returns the executed notebook, also written to ``output``.

    Parameters are checked against the notebook's parameters cell first. The notebook is
    written once, at the end (not after every cell: the output only ever goes to a
    temporary folder), and the kernel is stopped at once when the last cell has replied
    (not asked to shut down, ~0.2-0.5 s: every output is in by then).
    ``on_cell_executed(cell=..., cell_index=..., execute_reply=...)`` is nbclient's hook,
    called as each cell finishes. ``km``: a kernel already started (:func:`start_kernel`)
    to run in instead of a new one; the caller stops it. The working folder is the
    notebook's unless ``cwd`` is given. One retry, in a new kernel, on a kernel that fails
    to start (parallel kernels can race for ZMQ ports).
    """
    import papermill

    check_parameters(notebook, parameters)
    hooks = {"on_cell_executed": on_cell_executed} if on_cell_executed else {}
    for attempt in (1, 2):
        try:
            return papermill.execute_notebook(
                str(notebook), str(output) if output else None, parameters=dict(parameters),
                kernel_name=kernel_name, cwd=str(cwd or Path(notebook).resolve().parent),
                execution_timeout=timeout_s, progress_bar=False, log_output=False,
                request_save_on_cell_execute=False, shutdown_kernel="immediate",
                **({"km": km} if km is not None and attempt == 1 else {}), **hooks)
        except papermill.PapermillExecutionError:
            raise
        except Exception as exc:  # kernel start failures only get one retry
            if attempt == 2 or not any(s in str(exc) for s in ("Address already in use", "Kernel died",
                                                                 "didn't respond")):
                raise


@functools.lru_cache(maxsize=1)
def html_exporter() -> Any:
    """The nbconvert exporter of reports (offline template; no code, prompts or remove-cell cells).

    One per process: its templates are compiled on first use and kept.
    """
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    config = Config()
    config.TagRemovePreprocessor.remove_cell_tags = {"remove-cell"}  # notes for notebook readers only
    return HTMLExporter(config=config, template_name="offline", extra_template_basedirs=[str(TEMPLATES_DIR)],
                        exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)


def warm_up_exporter() -> None:
    """Compile the exporter's templates (and import what they use) by exporting an empty notebook."""
    import nbformat

    html_exporter().from_notebook_node(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("#")]))


def export_html(executed: Any, html_path: str | os.PathLike) -> None:
    """The executed notebook (a path or a notebook) as one offline HTML file.

    No code, no prompts, no stderr, no CDN: a chart kept both as Vega-Lite and as SVG is
    published as the SVG only.
    """
    import copy

    import nbformat

    nb = nbformat.read(str(executed), as_version=4) if isinstance(executed, (str, os.PathLike)) \
        else copy.deepcopy(executed)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if not (o.get("output_type") == "stream"
                                                            and o.get("name") == "stderr")]
            for output in cell.outputs:
                data = output.get("data", {})
                if "image/svg+xml" in data:
                    for mime in [m for m in data if m.startswith(VEGALITE_MIMETYPE)]:
                        del data[mime]
    body, _ = html_exporter().from_notebook_node(
        nb, resources={"metadata": {"name": nb.metadata.get("title", "report")}})
    Path(html_path).write_text(body, encoding="utf-8")


# --- charts: Vega-Lite -> SVG in a warm worker process ---------------------------------------

#: Start of every Vega-Lite mimetype (the report kernel's is ``aiplan.charts.SPEC_MIMETYPE``,
#: ``application/vnd.vegalite.v6+json``; this module does not import the charts, nor altair).
VEGALITE_MIMETYPE = "application/vnd.vegalite."
_svg_worker: tuple[int, ProcessPoolExecutor] | None = None  # (owner pid, worker)


def vegalite_to_svg(spec: str | Mapping) -> str:
    """One Vega-Lite spec (JSON text or dict) drawn as SVG text by vl-convert.

    The same call as Altair's ``svg`` renderer (the Vega-Lite version comes from the spec's
    ``$schema``), so a chart drawn here is byte-identical to one drawn in the kernel. Data
    must be inline: no URL may be fetched.
    """
    import vl_convert as vlc

    spec = json.loads(spec) if isinstance(spec, str) else dict(spec)
    version = re.search(r"/v(\d+)\.(\d+)", spec.get("$schema", ""))
    return vlc.vegalite_to_svg(spec, vl_version=f"v{version[1]}_{version[2]}" if version else None,
                               allowed_base_urls=[])


def _warm_up() -> None:
    """Start vl-convert's JavaScript engine (~0.6 s, once per process) by drawing an empty chart."""
    vegalite_to_svg({"mark": "point"})


def svg_worker() -> ProcessPoolExecutor:
    """The process that draws charts, started (and warmed up) on first use and reused after.

    vl-convert holds the GIL while its engine starts, so it warms up in its own process,
    on the other core, while the kernel starts; then it draws each chart while the kernel
    runs the next cells. A batch worker keeps one for all its reports; it is shut down
    when its owner exits (before :mod:`multiprocessing` waits for its children).
    """
    global _svg_worker
    if _svg_worker is None or _svg_worker[0] != os.getpid():
        import multiprocessing
        from multiprocessing import util

        worker = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        # before multiprocessing closes the queues (priority 10) and joins the children
        util.Finalize(worker, worker.shutdown, exitpriority=100)
        worker.submit(_warm_up)
        _svg_worker = (os.getpid(), worker)
    return _svg_worker[1]


class ChartDrawer:
    """nbclient hook that sends each Vega-Lite output to :func:`svg_worker` as its cell finishes.

    :meth:`finish` then adds the SVG next to the Vega-Lite spec of every such output (the
    executed notebook keeps both: the SVG to read, the spec to audit).
    """

    def __init__(self) -> None:
        self.pending: list[tuple[Any, Any]] = []

    def __call__(self, cell: Any, **_: Any) -> None:
        for output in cell.get("outputs", []):
            for mime, spec in output.get("data", {}).items():
                if mime.startswith(VEGALITE_MIMETYPE):
                    self.pending.append((output, svg_worker().submit(vegalite_to_svg, json.dumps(spec))))

    def finish(self, timeout_s: float = EXECUTION_TIMEOUT_S) -> int:
        """Wait for every chart and put it in its output; returns how many were drawn."""
        global _svg_worker
        try:
            for output, future in self.pending:
                output["data"]["image/svg+xml"] = future.result(timeout=timeout_s)
        except BrokenProcessPool:
            _svg_worker = None  # the next report starts a new one
            raise
        return len(self.pending)


def chromium_path() -> str:
    """The system Chromium: ``$AIPLAN_CHROMIUM``, ``chromium`` on PATH, or ``/usr/bin/chromium``."""
    return os.environ.get("AIPLAN_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser") \
        or "/usr/bin/chromium"


def html_to_pdf(html_path: str | os.PathLike, pdf_path: str | os.PathLike, timeout_s: float = 120) -> None:
    """Print ``html_path`` to ``pdf_path`` with the system Chromium (headless; no browser download)."""
    exe = chromium_path()
    if not Path(exe).exists():
        raise RuntimeError(f"--pdf needs Chromium; not found at {exe} (apt-get install chromium, or set "
                           "AIPLAN_CHROMIUM)")
    with tempfile.TemporaryDirectory(prefix="aiplan-chromium-") as profile:
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-dev-shm-usage", "--no-first-run", "--no-pdf-header-footer", f"--user-data-dir={profile}",
               f"--print-to-pdf={Path(pdf_path).resolve()}", Path(html_path).resolve().as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    if not Path(pdf_path).is_file() or Path(pdf_path).stat().st_size == 0:
        raise RuntimeError(f"Chromium did not write the PDF (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")


# --- one report, atomically ----------------------------------------------------------------


@dataclass
class Outcome:
    """What happened to one plan."""

    plan: str
    ok: bool
    files: tuple[str, ...] = ()
    error: str = ""
    seconds: float = 0.0


def _error_text(exc: BaseException) -> str:
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    if ename:
        return f"notebook failed: {ename}: {evalue}"
    return f"{type(exc).__name__}: {exc}".strip()


def render(plan_path: str | os.PathLike, out_dir: str | os.PathLike, name: str | None = None, pdf: bool = False,
           xlsx: bool = False, report_date: str = "", notebook: str | os.PathLike | None = None) -> list[Path]:
    """Render one report for ``plan_path`` into ``out_dir``; returns the files written.

    Everything is produced in a temporary folder inside ``out_dir`` and moved into
    place only when complete; on any error the previous files are left untouched.
    """
    from .plan import load_plan

    plan_path = Path(plan_path).resolve()
    load_plan(plan_path)  # fail fast with the PlanError message
    notebook = Path(notebook) if notebook else report_notebook()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    name = name or plan_path.stem
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
                                           "report_date": report_date or _dt.date.today().isoformat(),
                                           "svg_charts": False}, on_cell_executed=drawer, km=km)
        kill_kernel(km)  # stopped in `finally`, by when it is gone
        drawer.finish()
        exporter_ready.join()
        import nbformat  # after the kernel started: its boot overlaps this process's imports

        nbformat.write(nb, str(executed))
        export_html(nb, html)
        produced = [executed, sidecar]
        if xlsx:
            result = json.loads(sidecar.read_text(encoding="utf-8"))["result"]
            write_xlsx(result, tmp / f"{name}.xlsx")
            produced.append(tmp / f"{name}.xlsx")
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


def _render_job(job: tuple[str, str, str, bool, bool, str]) -> Outcome:
    plan_path, out_dir, name, pdf, xlsx, report_date = job
    start = time.perf_counter()
    try:
        files = render(plan_path, out_dir, name, pdf=pdf, xlsx=xlsx, report_date=report_date)
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
              report_date: str = "", stream=None) -> list[Outcome]:
    """Render every plan (``jobs`` processes), printing a progress line per finished plan on ``stream``."""
    stream = stream if stream is not None else sys.stderr
    names = output_names(plans)
    work = [(str(p), str(out_dir), n, pdf, xlsx, report_date) for p, n in zip(plans, names)]
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
    from .plan import load_plan

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
    outcomes = run_batch(valid, out, jobs=args.jobs, pdf=bool(args.pdf), xlsx=bool(args.xlsx)) if valid else []
    order = {str(p): i for i, p in enumerate(plans)}
    outcomes = sorted(outcomes + invalid, key=lambda o: order.get(o.plan, 0))
    ok = [o for o in outcomes if o.ok]
    bad = [o for o in outcomes if not o.ok]
    print(f"{len(ok)} report(s) written to {out}, {len(bad)} failed")
    for o in ok:
        html = next((f for f in o.files if f.endswith(".html")), "")
        print(f"  ok      {o.plan} -> {html}")
    for o in bad:
        print(f"  FAILED  {o.plan}: {o.error}")
    return 0 if not bad else 1


# --- golden files ----------------------------------------------------------------------------


def _cli(argv: list[str] | None = None) -> int:
    """``python -m aiplan.report --regen-golden``: rewrite tests/golden from the notebooks."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m aiplan.report")
    parser.add_argument("--regen-golden", action="store_true",
                        help="re-run the regression notebooks and rewrite tests/golden/*.json")
    ns = parser.parse_args(argv)
    if not ns.regen_golden:
        parser.print_help()
        return 2
    root = Path(__file__).resolve().parent.parent
    tool = root / "tools" / "regen_golden.py"
    return subprocess.call([sys.executable, str(tool)], cwd=str(root))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(_cli())
