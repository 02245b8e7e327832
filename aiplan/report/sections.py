"""Presentation helpers the report notebook calls: tables, summary, findings, sources.

The notebook keeps no logic of its own: every block of the report is one call here.
"""

from __future__ import annotations

import datetime as _dt
import html as _html
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import PlanError, Problem
from ..fields import describe
from ..fields import format_value as fmt

#: Sections of the result in report order, grouped by the four steps.
STEPS: dict[str, tuple[str, ...]] = {
    "Model": ("model", "memory", "compute", "inference"),
    "Cluster": ("cluster", "network", "storage", "checkpoint", "reliability"),
    "Facility": ("facility",),
    "Cost": ("cost",),
}
SECTIONS = tuple(s for group in STEPS.values() for s in group)


class Html(str):
    """A string that Jupyter displays as HTML (no IPython import needed)."""

    def _repr_html_(self) -> str:
        return str(self)


def esc(value: Any) -> str:
    """HTML-escape ``value`` as text."""
    return _html.escape(str(value), quote=True)


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
    from ..plan import parse_yaml, read_yaml

    if plan_yaml and plan_yaml.strip():
        return parse_yaml(plan_yaml, "plan_yaml")
    if not plan_path:
        raise PlanError(Problem("plan_path", "is required when plan_yaml is empty", has_value=False))
    return read_yaml(plan_path)


def header(result: Mapping, report_date: str = "") -> Html:
    """Title block: plan name, report date and aiplan version."""
    from .. import __version__

    day = report_date or _dt.date.today().isoformat()
    name = (result.get("plan") or {}).get("name", "Unnamed plan")
    return Html(f"<h1>{esc(name)}</h1><p>Infrastructure plan report &middot; {esc(day)} &middot; "
                f"aiplan {esc(__version__)}</p>")


def get_path(result: Mapping, dotted: str) -> Any:
    node: Any = result
    for key in dotted.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _first(result: Mapping, *keys: str) -> Any:
    for key in keys:
        value = get_path(result, key)
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
    kind = get_path(result, "plan.workload.kind")
    out = [("GPUs", fmt(get_path(result, "cluster.gpus")))]
    if kind == "inference":
        out.append(("time per output token [ms]", fmt(get_path(result, "inference.tpot_ms"))))
    else:
        out.append(("wall-clock time [days]", fmt(get_path(result, "compute.wall_clock_days"))))
    kw = get_path(result, "facility.total_kw")
    out.append(("facility power [MW]" if _is_num(kw) and kw >= 1000 else "facility power [kW]",
                fmt(kw / 1000 if _is_num(kw) and kw >= 1000 else kw)))
    years = get_path(result, "plan.cost.years")
    span = f" over {fmt(years)} years" if years is not None else ""
    out.append((f"cloud cost{span}", _usd(get_path(result, "cost.cloud_usd"))))
    out.append((f"on-premises cost{span}", _usd(get_path(result, "cost.onprem_usd"))))
    return out


def summary(result: Mapping) -> Html:
    """Executive summary: five numbers, whether it fits, which option is cheaper, critical findings."""
    kpis = "".join(f"<div class='aiplan-kpi'><div class='v'>{esc(v)}</div><div class='l'>{esc(k)}</div></div>"
                   for k, v in five_numbers(result))
    lines = []
    fits = get_path(result, "memory.fits")
    if fits is False:
        lines.append("<b class='sev-critical'>The plan does not fit in GPU memory as laid out</b> "
                     f"({fmt(get_path(result, 'memory.per_gpu_gb'))} GB needed per GPU, "
                     f"{fmt(_first(result, 'memory.usable_gb', 'memory.gpu_capacity_gb'))} GB available).")
    elif fits is True:
        lines.append(f"Fits: {fmt(get_path(result, 'memory.per_gpu_gb'))} GB per GPU of "
                     f"{fmt(get_path(result, 'memory.gpu_capacity_gb'))} GB.")
    cloud, onprem = get_path(result, "cost.cloud_usd"), get_path(result, "cost.onprem_usd")
    if _is_num(cloud) and _is_num(onprem):
        cheaper = "owning (on-premises)" if onprem < cloud else "renting (cloud)"
        months = get_path(result, "cost.breakeven_months")
        extra = f"; owning breaks even after {fmt(months)} months" if months is not None else ""
        lines.append(f"Cheaper over the plan's horizon: {cheaper}{extra}.")
    crit = [c for c in result.get("checks") or [] if c.get("severity") == "critical"]
    if crit:
        lines.append(f"{len(crit)} critical finding(s): " + "; ".join(esc(c.get("message", "")) for c in crit))
    return Html(f"<div class='aiplan-kpis'>{kpis}</div>" + "".join(f"<p>{t}</p>" for t in lines))


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def assumed_defaults(raw_plan: Any, result: Mapping) -> list[tuple[str, Any, bool]]:
    """(field, value used, given by the user?) for every field of the evaluated plan."""
    given = flatten(raw_plan if isinstance(raw_plan, Mapping) else {})
    used = flatten(result.get("plan") or {})
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
        rule = [get_path(result, k) for k in rule_keys]
        detail = get_path(result, detail_key)
        if all(v is None for v in rule) or detail is None:
            continue
        rule_text = " - ".join(fmt(v) for v in rule)
        ratio = detail / rule[0] if comparable and _is_num(detail) and _is_num(rule[0]) and rule[0] else ""
        rows.append((label, rule_text, detail, ratio, why))
    text = describe("memory.rule_of_thumb_gb") if get_path(result, "memory.rule_of_thumb_gb") is not None else ""
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
                         getattr(rec, "sources", "")))
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
