"""Key figures, the problem banner, findings and errors of a result, as data and as HTML (no widgets).

The cards answer the client's question first: for training, *this run* (GPUs, time with its band,
the run's cost renting and on owned hardware, memory per GPU), then the facility, then what
keeping the cluster for years costs (a block with that title); for serving, the service (GPUs,
cost per month and per million tokens, latencies). Every card carries its raw number in
``<span id="aiplan-<id>" data-value="...">`` so browser tests and scripts read it exactly; labels
and number formats come from the field registry (:mod:`aiplan.fields`). A card a problem affects
(:mod:`aiplan.fixes`) is marked, never green. Text shown to a client names plan fields by their
labels (:func:`humanize`), never by their keys.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..charts import get, gpu_count
from ..fields import describe, format_field
from ..fields import format_value as fmt
from ..fixes import PROBLEM_TITLES, Fix, problems
from ..plan import SECTIONS
from ..units import KW_PER_MW

SEVERITY_COLOURS = {"critical": "#c62828", "warning": "#ef6c00", "info": "#1565c0"}
SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}
#: how each severity group is titled
SEVERITY_TITLES = {"critical": "Must fix", "warning": "Worth checking", "info": "Good to know"}
#: cards each problem makes wrong ("bad") or unreliable ("doubt": they assume the plan runs as written)
AFFECTED = {
    "model-does-not-fit": ({"memory-per-gpu"}, {"days", "run-cost-cloud", "run-cost-owned", "cloud-cost",
                                                "onprem-cost", "breakeven", "cost-per-month-cloud",
                                                "cost-per-month-owned", "usd-per-million-tokens",
                                                "usd-per-million-tokens-owned", "ttft", "tpot"}),
    "deadline-unreachable": ({"days", "gpus"}, {"run-cost-cloud", "run-cost-owned", "power-mw", "racks",
                                                "cloud-cost", "onprem-cost"}),
    "duration-absurd": ({"days"}, {"run-cost-cloud", "run-cost-owned"}),
    "deadline-missed": ({"days"}, set()),
    "no-server-power": ({"power-mw", "racks"}, {"run-cost-owned", "onprem-cost", "breakeven"}),
    "no-server-price": ({"run-cost-owned", "onprem-cost", "cost-per-month-owned", "usd-per-million-tokens-owned"},
                        {"breakeven"}),
    "no-cloud-offer": ({"run-cost-cloud", "cloud-cost", "cost-per-month-cloud", "usd-per-million-tokens"},
                       {"breakeven"}),
}

CSS = """
<style>
.aiplan-app {font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #102030;}
.aiplan-app, .aiplan-app * {box-sizing: border-box;}
.aiplan-title {font-size: 20px; font-weight: 600; color: #1a237e; margin: 2px 0 0 0; line-height: 1.25;}
.aiplan-subtitle {color: #455a64; font-size: 13px; margin: 0 0 2px 0;}
.aiplan-block {border: 1px solid #e3e8ee; border-radius: 8px; padding: 3px 6px 6px 6px; margin: 0 0 6px 0;
               background: #fff; flex: 1 1 auto; min-width: 0;}
.aiplan-block[data-block="run"], .aiplan-block[data-block="serving"] {flex: 1 1 100%;}
.aiplan-block[data-block="facility"] {flex: 2 1 280px;}
.aiplan-block[data-block="fleet"] {flex: 3 1 420px;}
.aiplan-block-title {font-size: 12px; font-weight: 600; color: #37474f; margin: 0 0 4px 2px;}
.aiplan-blocks {display: flex; flex-wrap: wrap; gap: 0 8px;}
.aiplan-cards {display: flex; flex-wrap: wrap; gap: 6px;}
.aiplan-card {border: 1px solid #dde3ea; border-radius: 6px; padding: 3px 8px; flex: 1 1 130px;
              min-width: 120px; background: #f8fafc; overflow-wrap: anywhere;}
.aiplan-card .label {font-size: 12px; color: #455a64; font-weight: 600;}
.aiplan-card .value {font-size: 19px; font-weight: 600; color: #102030; white-space: nowrap; line-height: 1.25;}
.aiplan-card .detail {font-size: 11px; color: #607080; line-height: 1.3;}
.aiplan-card.bad {border-color: #c62828; background: #fdecea;}
.aiplan-card.bad .value {color: #b71c1c;}
.aiplan-card.doubt {border-color: #ef6c00; border-style: dashed; background: #fff8e1;}
.aiplan-card.doubt .value {color: #6d4c41;}
.aiplan-card .mark {font-size: 10px; font-weight: 600; color: #b71c1c; text-transform: uppercase;}
.aiplan-card.doubt .mark {color: #e65100;}
.aiplan-card.good {border-color: #2e7d32;}
.aiplan-banner {border: 2px solid #c62828; background: #fdecea; border-radius: 8px; padding: 6px 10px;
                font-size: 13px; color: #5d0000;}
.aiplan-banner.soft {border-color: #ef6c00; background: #fff3e0; color: #4e2600;}
.aiplan-banner b.what {font-size: 14px;}
.aiplan-banner ul {margin: 2px 0 2px 18px; padding: 0;}
.aiplan-banner .fix {font-weight: 600; color: #1b5e20;}
.aiplan-finding {border-left: 4px solid; padding: 3px 8px; margin: 3px 0; font-size: 13px; background: #fafafa;}
.aiplan-finding .src {color: #777; font-size: 11px; display: block;}
.aiplan-findings-group {font-weight: 600; font-size: 12px; margin: 6px 0 2px 0;}
.aiplan-findings details summary {cursor: pointer; font-weight: 600; font-size: 12px; margin: 6px 0 2px 0;}
.aiplan-error {border: 1px solid #c62828; background: #fdecea; color: #8e0000; padding: 6px 10px;
               border-radius: 4px; font-size: 13px;}
.aiplan-error ul {margin: 2px 0 0 18px; padding: 0;}
.aiplan-stale {opacity: 0.35; filter: grayscale(60%); transition: opacity .15s;}
.aiplan-scenarios-table {border-collapse: collapse; font-size: 13px; margin: 4px 0;}
.aiplan-scenarios-table th, .aiplan-scenarios-table td {border: 1px solid #dde3ea; padding: 3px 8px;
                                                        text-align: right; white-space: nowrap;}
.aiplan-scenarios-table th:first-child, .aiplan-scenarios-table td:first-child {text-align: left;}
.aiplan-scenarios-table .delta {font-size: 11px; color: #607080; margin-left: 4px;}
.aiplan-scenarios-table .delta.up {color: #b71c1c;}
.aiplan-scenarios-table .delta.down {color: #1b5e20;}
.aiplan-section-title {font-weight: 600; font-size: 13px; color: #37474f; margin: 6px 0 2px 0;}
.aiplan-note {color: #607080; font-size: 12px;}
</style>
"""


# --- words for a client ----------------------------------------------------------------------------

_FIELD_LABELS = {f"{section}.{key}": spec.label or key.replace("_", " ")
                 for section, specs in SECTIONS.items() for key, spec in specs.items()}
_BARE_LABELS = {path.split(".", 1)[1]: label for path, label in _FIELD_LABELS.items()}
_PATH = re.compile(r"\b(?:workload|cluster|facility|cost)\.[a-z_]+\b")
_SNAKE = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b")
_CATALOG_FILE = re.compile(r"\b(gpus|servers|models|clouds|regions|switches)\.csv\b")


def field_label(path: str) -> str:
    """The label of a plan field path (``cluster.gpus_per_node`` -> "GPUs per server")."""
    return _FIELD_LABELS.get(path) or path.rsplit(".", 1)[-1].replace("_", " ")


def humanize(text: Any) -> str:
    """Client-facing text: plan field paths and keys replaced by their labels, catalog files by words.

    "give cluster.deadline_days" -> "give Deadline"; "at most gpus_per_node (8)" -> "at most GPUs
    per server (8)"; "(servers.csv)" -> "(the servers table)".
    """
    text = _PATH.sub(lambda m: field_label(m.group(0)), str(text))
    text = _CATALOG_FILE.sub(lambda m: f"the {m.group(1)} table", text)
    return _SNAKE.sub(lambda m: _BARE_LABELS.get(m.group(0), m.group(0).replace("_", " ")), text)


# --- the cards ---------------------------------------------------------------------------------------


def _figure(id_: str, label: str, value: Any, text: str | None = None, detail: str = "", key: str = "",
            extra: str = "") -> dict[str, Any]:
    """One card: ``text`` defaults to the registry format of ``key``."""
    shown = text if text is not None else (format_field(key, value) if key else fmt(value))
    return {"id": id_, "key": key, "label": label, "value": value, "text": shown, "detail": detail, "state": "",
            "extra": extra}


def _n(value: Any, unit: str = "") -> str:
    """A number as typed ("3 years", "1 year", "2.5 years", "1.3")."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return fmt(value)
    text = f"{value:,.4g}" if abs(value) < 1e6 else fmt(value, "big")
    if not unit:
        return text
    return f"{text} {unit[:-1] if value == 1 and unit.endswith('s') else unit}"


def _plan(result: Mapping, section: str, key: str) -> Any:
    return ((result.get("plan") or {}).get(section) or {}).get(key)


def _days_detail(result: Mapping) -> str:
    """The band of the training time (calibrated percentiles when the result has them) and the deadline."""
    p10, p90 = get(result, "compute", "wall_clock_days_p10"), get(result, "compute", "wall_clock_days_p90")
    low, high = get(result, "compute", "days_low"), get(result, "compute", "days_high")
    if p10 is not None and p90 is not None:
        band = f"likely {_span(p10, p90, 'days')}"
    elif low is not None and high is not None:
        band = f"range {_span(low, high, 'days')}"
    else:
        band = ""
    deadline = get(result, "compute", "deadline_days")
    chance = get(result, "compute", "deadline_probability")
    if deadline is None:
        return band
    if chance is not None:
        return f"{band}; {fmt(chance, 'pct')} chance of meeting the deadline ({fmt(deadline, 'days')})"
    meets = get(result, "compute", "meets_deadline")
    return f"{band}; {'meets' if meets else 'misses'} the deadline ({fmt(deadline, 'days')})" if meets is not None \
        else band


def _span(low: Any, high: Any, kind: str) -> str:
    """A range in one unit: "23.7 to 38.0 days" (the unit once when both ends share it)."""
    a, b = fmt(low, kind), fmt(high, kind)
    unit = b.rsplit(" ", 1)[-1] if " " in b else ""
    return f"{a[: -len(unit) - 1] if unit and a.endswith(' ' + unit) else a} to {b}"


def _owned_basis(result: Mapping) -> str:
    hours = get(result, "compute", "gpu_hours_with_failures") or get(result, "compute", "gpu_hours")
    rate = get(result, "cost", "onprem_usd_per_gpu_hour")
    years, util = _plan(result, "cost", "years"), _plan(result, "cost", "utilisation")
    if hours is None or rate is None:
        return "no server price"
    return (f"{fmt(hours, 'count')} GPU-h at {fmt(rate, 'usd_rate')} each, owning for {_n(years, 'years')} at "
            f"{fmt(util, 'pct')}")


def _cloud_basis(result: Mapping) -> str:
    pricing = get(result, "cost", "pricing_used") or _plan(result, "cost", "pricing")
    rate = get(result, "cost", "cloud_usd_per_gpu_hour")
    return f"{pricing}, {fmt(rate, 'usd_rate')} per GPU-h" if rate is not None else "no cloud price"


def _memory_figure(result: Mapping) -> dict[str, Any]:
    mem, cap = get(result, "memory", "per_gpu_gb"), get(result, "memory", "gpu_capacity_gb")
    usable = get(result, "memory", "usable_gb")
    fits = get(result, "memory", "fits")
    capacity = (f'<span id="aiplan-gpu-capacity" data-value="{_raw(cap)}">{html.escape(fmt(cap, "gb"))}</span>'
                if cap is not None else "")
    if usable:
        detail, extra = (f"of {fmt(usable, 'gb')} usable ({fmt(cap, 'gb')} GPU)",
                         f"of {html.escape(fmt(usable, 'gb'))} usable ({capacity} GPU)")
    else:
        detail, extra = f"of {fmt(cap, 'gb')}", f"of {capacity}"
    fig = _figure("memory-per-gpu", "Memory per GPU", mem, key="memory.per_gpu_gb", detail=detail, extra=extra)
    fig["state"] = "" if fits is None else ("good" if fits else "bad")
    return fig


def _facility_block(result: Mapping) -> dict[str, Any]:
    total_kw = get(result, "facility", "total_kw")
    it_kw = get(result, "facility", "it_kw")
    cooling = get(result, "facility", "cooling")
    return {"id": "facility", "title": "The facility", "figures": [
        _figure("power-mw", "Facility power", None if total_kw is None else total_kw / KW_PER_MW,
                text=fmt(total_kw, "power"), detail=f"IT load {fmt(it_kw, 'power')}, PUE "
                f"{_n(_plan(result, 'facility', 'pue'))}" if it_kw is not None else ""),
        _figure("racks", "Racks", get(result, "facility", "racks"), key="facility.racks",
                detail=f"{cooling} cooling" if cooling else ""),
    ]}


def _fleet_block(result: Mapping, serving: bool = False) -> dict[str, Any]:
    years, util = _plan(result, "cost", "years"), _plan(result, "cost", "utilisation")
    what = "the serving cluster" if serving else "the cluster"
    title = f"If you keep {what} for {_n(years, 'years')} at {fmt(util, 'pct')} utilisation"
    months = get(result, "cost", "breakeven_months")
    be_u = get(result, "cost", "breakeven_utilisation")
    cloud, onprem = get(result, "cost", "cloud_usd"), get(result, "cost", "onprem_usd")
    onprem_fig = _figure("onprem-cost", "Owning, total", onprem, key="cost.onprem_usd",
                         detail="servers, network, storage, power, space, staff")
    onprem_fig["state"] = "good" if cloud is not None and onprem is not None and onprem < cloud else ""
    return {"id": "fleet", "title": title, "figures": [
        _figure("cloud-cost", "Renting, total", cloud, key="cost.cloud_usd", detail=_cloud_basis(result)),
        onprem_fig,
        _figure("breakeven", "Owning pays back after", months, key="cost.breakeven_months",
                text=fmt(months, "months") if months is not None else "never",
                detail=f"owning wins above {fmt(be_u, 'pct')} utilisation" if be_u is not None else
                "renting stays cheaper"),
    ]}


def _question(result: Mapping) -> str:
    """What the plan asks, in one line ("Pretrain Llama 3.1 70B on 2.00 trillion tokens within 30.0 days")."""
    kind = _plan(result, "workload", "kind")
    model = get(result, "model", "name") or str((result.get("plan") or {}).get("model") or "the model")
    if kind == "inference":
        return f"Serve {model} at {_n(_plan(result, 'workload', 'requests_per_s'), 'requests per second')}"
    verb = "Fine-tune" if kind == "finetune" else "Pretrain"
    text = f"{verb} {model} on {fmt(_plan(result, 'workload', 'tokens'), 'big', 'tokens')}"
    deadline = get(result, "compute", "deadline_days")
    return text + (f" within {fmt(deadline, 'days')}" if deadline is not None else "")


def question(result: Mapping | None) -> str:
    """What the plan asks, in one line (empty without a result)."""
    return _question(result) if result else ""


def _latency(result: Mapping, metric: str, label: str) -> dict[str, Any]:
    value = get(result, "inference", f"{metric}_ms")
    target = next((v for k, v in ((result.get("plan") or {}).get("workload") or {}).items()
                   if metric in k and isinstance(v, (int, float)) and not isinstance(v, bool)), None)
    fig = _figure(metric, label, value, key=f"inference.{metric}_ms",
                  detail=f"target {fmt(target, 'ms')}" if target is not None else "")
    if target is not None and value is not None:
        fig["state"] = "good" if value <= target else "bad"
    return fig


def _serving_block(result: Mapping) -> dict[str, Any]:
    years = _plan(result, "cost", "years")
    owned = get(result, "cost", "onprem_usd")
    owned_month = owned / (years * 12) if owned is not None and years else None
    replicas, per_replica = get(result, "inference", "replicas"), get(result, "inference", "tensor_parallel")
    gpus = get(result, "inference", "gpus") or gpu_count(result)
    return {"id": "serving", "title": "The service", "figures": [
        _figure("gpus", "GPUs", gpus, key="inference.gpus",
                detail=f"{fmt(replicas, 'count', 'replicas')} of {fmt(per_replica, 'count', 'GPUs')}"
                if replicas is not None and per_replica is not None else ""),
        _figure("cost-per-month-cloud", "Per month, renting", get(result, "cost", "cloud_usd_per_month"),
                key="cost.cloud_usd_per_month", detail=_cloud_basis(result)),
        _figure("cost-per-month-owned", "Per month, owning", owned_month, text=fmt(owned_month, "usd"),
                detail=f"owning spread over {_n(years, 'years')}" if years else ""),
        _figure("usd-per-million-tokens", "Per million tokens, renting", get(result, "cost", "usd_per_million_tokens"),
                text=fmt(get(result, "cost", "usd_per_million_tokens"), "usd_rate"), detail="output tokens"),
        _figure("usd-per-million-tokens-owned", "Per million tokens, owning",
                get(result, "cost", "usd_per_million_tokens_onprem"),
                text=fmt(get(result, "cost", "usd_per_million_tokens_onprem"), "usd_rate"), detail="output tokens"),
        _latency(result, "ttft", "Time to first token"),
        _latency(result, "tpot", "Time per output token"),
        _memory_figure(result),
    ]}


def _run_block(result: Mapping) -> dict[str, Any]:
    kind = _plan(result, "workload", "kind")
    nodes = get(result, "cluster", "nodes")
    meets = get(result, "compute", "meets_deadline")
    days = get(result, "compute", "wall_clock_days_p50")
    days = days if days is not None else get(result, "compute", "wall_clock_days")
    days_fig = _figure("days", "Fine-tuning time" if kind == "finetune" else "Training time", days,
                       key="compute.wall_clock_days", detail=_days_detail(result))
    days_fig["state"] = "" if meets is None else ("good" if meets else "bad")
    return {"id": "run", "title": "This fine-tuning run" if kind == "finetune" else "This training run", "figures": [
        _figure("gpus", "GPUs", gpu_count(result), key="cluster.gpus",
                detail=fmt(nodes, "count", "servers") if nodes else ""),
        days_fig,
        _figure("run-cost-cloud", "Run cost, renting", get(result, "cost", "cloud_run_usd"), text=fmt(
            get(result, "cost", "cloud_run_usd"), "usd"), detail=_cloud_basis(result)),
        _figure("run-cost-owned", "Run cost, owned hardware", get(result, "cost", "onprem_run_usd"), text=fmt(
            get(result, "cost", "onprem_run_usd"), "usd"), detail=_owned_basis(result)),
        _memory_figure(result),
    ]}


def figure_blocks(result: Mapping) -> list[dict[str, Any]]:
    """The cards in blocks ``{id, title, figures}``, the client's question first.

    Each figure is ``{id, key, label, value, text, detail, state, extra}``: ``value`` the raw number
    (``None`` when it does not apply), ``text`` formatted for people, ``state`` ``"bad"`` (wrong:
    a problem of :mod:`aiplan.fixes` says so), ``"doubt"`` (it assumes the plan runs as written),
    ``"good"`` or ``""``.
    """
    serving = _plan(result, "workload", "kind") == "inference"
    blocks = ([_serving_block(result)] if serving else [_run_block(result)]) + [
        _facility_block(result), _fleet_block(result, serving)]
    found = [p["id"] for p in problems(result)]
    bad = set().union(*(AFFECTED[i][0] for i in found)) if found else set()
    doubt = set().union(*(AFFECTED[i][1] for i in found)) if found else set()
    for block in blocks:
        for fig in block["figures"]:
            if fig["id"] in bad:
                fig["state"] = "bad"
            elif fig["id"] in doubt:
                fig["state"] = "doubt"
            elif found and fig["state"] == "good":
                fig["state"] = ""  # nothing is green in a plan that does not work
    return blocks


def key_figures(result: Mapping) -> list[dict[str, Any]]:
    """Every card of :func:`figure_blocks`, in order, as one list."""
    return [fig for block in figure_blocks(result) for fig in block["figures"]]


def _raw(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return "" if value is None else str(value).lower()
    return repr(float(value))


MARKS = {"bad": "wrong", "doubt": "if the plan ran as written"}


def _card(fig: Mapping) -> str:
    mark = f'<div class="mark">{MARKS[fig["state"]]}</div>' if fig["state"] in MARKS else ""
    detail = fig.get("extra") or html.escape(fig["detail"])
    return (f'<div class="aiplan-card {fig["state"]}" data-card="{fig["id"]}"><div class="label">'
            f'{html.escape(fig["label"])}</div><div class="value"><span id="aiplan-{fig["id"]}" '
            f'data-value="{_raw(fig["value"])}">{html.escape(fig["text"])}</span></div>'
            f'<div class="detail">{detail}</div>{mark}</div>')


def key_figures_html(result: Mapping | None) -> str:
    """The cards in their blocks, each value in ``<span id="aiplan-<id>" data-value="...">``."""
    if not result:
        return '<div class="aiplan-blocks"></div>'
    blocks = []
    for block in figure_blocks(result):
        cards = "".join(_card(f) for f in block["figures"])
        blocks.append(f'<div class="aiplan-block" data-block="{block["id"]}"><div class="aiplan-block-title">'
                      f'{html.escape(block["title"])}</div><div class="aiplan-cards">{cards}</div></div>')
    return '<div class="aiplan-blocks">' + "".join(blocks) + "</div>"


# --- the banner, findings and errors ------------------------------------------------------------------


def first_sentence(text: str) -> str:
    """The first sentence of a finding ("... has 80.0 GB." of a longer message)."""
    return re.split(r"(?<=[A-Za-z0-9%)]\.)\s+(?=[A-Z])", str(text), maxsplit=1)[0]


def banner_html(result: Mapping | None, fix: Fix | None) -> str:
    """What is wrong with a plan that cannot work and what would work (empty when nothing is wrong)."""
    found = problems(result or {})
    if not found:
        return ""
    critical = any(p.get("severity") == "critical" for p in found)
    items = "".join(f"<li><b>{html.escape(PROBLEM_TITLES[p['id']])}.</b> "
                    f"{html.escape(humanize(first_sentence(p['message'])))}</li>" for p in found)
    head = "This plan cannot work as written" if critical else "This plan is missing a figure"
    what = (f'<div>What would work: <span class="fix">{html.escape(fix.label)}</span>.</div>' if fix and
            fix.applicable else f"<div>{html.escape(fix.label)}.</div>" if fix else "")
    return (f'<div id="aiplan-banner" class="aiplan-banner{"" if critical else " soft"}" role="alert">'
            f'<b class="what">{head}</b><ul>{items}</ul>{what}</div>')


def _finding(c: Mapping) -> str:
    sev = c.get("severity", "info")
    colour = SEVERITY_COLOURS.get(sev, "#555")
    src = f'<span class="src">Source: {html.escape(str(c["source"]))}</span>' if c.get("source") else ""
    return (f'<div class="aiplan-finding aiplan-{html.escape(sev)}" style="border-color:{colour}">'
            f'{html.escape(humanize(c.get("message", "")))}{src}</div>')


def findings_html(checks: Sequence[Mapping] | None) -> str:
    """Findings grouped by severity (most severe first); the "good to know" ones fold away."""
    if not checks:
        return '<div id="aiplan-findings" class="aiplan-findings"><div class="aiplan-note">No findings.</div></div>'
    groups = []
    for sev in ("critical", "warning", "info"):
        items = [c for c in checks if c.get("severity", "info") == sev]
        if not items:
            continue
        title = f"{SEVERITY_TITLES[sev]} ({len(items)})"
        body = "".join(_finding(c) for c in items)
        if sev == "info":
            groups.append(f'<details class="aiplan-{sev}-group"><summary>{title}</summary>{body}</details>')
        else:
            groups.append(f'<div class="aiplan-findings-group" style="color:{SEVERITY_COLOURS[sev]}">{title}</div>'
                          + body)
    return '<div id="aiplan-findings" class="aiplan-findings">' + "".join(groups) + "</div>"


def error_lines(error: Exception) -> list[tuple[str, str]]:
    """``(field label, what is wrong)`` of each problem of a PlanError, in words."""
    out = []
    for p in getattr(error, "problems", [error]):
        path = getattr(p, "path", "")
        text = str(p)
        rest = text[len(path) + 2:] if path and text.startswith(f"{path}: ") else text
        out.append((field_label(path) if path else "", humanize(rest)))
    return out


def error_html(error: Exception | None) -> str:
    """A PlanError as a red box, one line per problem naming the field (never a traceback)."""
    if error is None:
        return ""
    lines = "".join(f"<li><b>{html.escape(label)}</b>{': ' if label else ''}{html.escape(msg)}</li>"
                    for label, msg in error_lines(error))
    return (f'<div id="aiplan-error" class="aiplan-error" role="alert"><b>This plan is not valid; the figures '
            f'below are from the last valid plan.</b><ul>{lines}</ul></div>')


# --- Markdown for headless notebooks -----------------------------------------------------------------


def summary_markdown(result: Mapping) -> str:
    """The cards as Markdown tables, one per block (for headless notebooks)."""
    out = []
    for block in figure_blocks(result):
        out += [f"**{block['title']}**", "", "| figure | value | detail |", "|---|---|---|"]
        out += [f"| {f['label']} | {f['text']} | {f['detail']} |" for f in block["figures"]]
        out.append("")
    return "\n".join(out).rstrip()


def _row(label: str, value: Any, kind: str = "number") -> str:
    return f"| {label} | {value if isinstance(value, str) else fmt(value, kind)} |"


def _rows(result: Mapping, keys: Sequence[str]) -> list[str]:
    """Table rows of result keys: the registry's label and format."""
    from ..fields import RESULT_FIELDS

    rows = []
    for key in keys:
        section, name = key.split(".", 1)
        rows.append(f"| {RESULT_FIELDS[key].label} | {format_field(key, get(result, section, name))} |")
    return rows


def step_markdown(result: Mapping, step: str) -> str:
    """One step's figures as a Markdown table, the rule of thumb beside the detailed model.

    ``step`` is ``model``, ``cluster``, ``facility`` or ``cost``.
    """
    g = lambda s, k: get(result, s, k)  # noqa: E731
    rows = ["| | value |", "|---|---|"]
    note = None
    if step == "model":
        rows += _rows(result, ("model.params", "model.active_params", "model.flops_per_token", "memory.per_gpu_gb",
                               "memory.gpu_capacity_gb", "memory.usable_gb", "memory.fits",
                               "memory.rule_of_thumb_gb"))
        note = describe("memory.rule_of_thumb_gb")
    elif step == "cluster":
        rows += _rows(result, ("cluster.gpus", "cluster.nodes"))
        rows.append(_row("Tensor, pipeline and data parallel",
                         f"{fmt(g('cluster', 'tensor_parallel'))} / {fmt(g('cluster', 'pipeline_parallel'))} / "
                         f"{fmt(g('cluster', 'data_parallel'))}"))
        rows += _rows(result, ("cluster.zero_stage", "compute.mfu", "compute.wall_clock_days"))
        rows.append(_row("Training time, plausible range",
                         f"{fmt(g('compute', 'days_low'), 'days')} to {fmt(g('compute', 'days_high'), 'days')}"))
        rows += _rows(result, ("compute.gpu_hours", "reliability.goodput"))
        rows.append(_row("Switches (leaf, spine, core)",
                         f"{fmt(g('network', 'leaf_switches'))} / {fmt(g('network', 'spine_switches'))} / "
                         f"{fmt(g('network', 'core_switches'))}"))
        rows += _rows(result, ("storage.read_gb_per_s", "storage.read_gb_per_s_rule", "checkpoint.size_gb"))
    elif step == "facility":
        rows += _rows(result, ("facility.it_kw",))
        rows.append(_row("Rule of thumb (servers + 30-40%)",
                         f"{fmt(g('facility', 'rule_of_thumb_kw_low'), 'power')} to "
                         f"{fmt(g('facility', 'rule_of_thumb_kw_high'), 'power')}"))
        rows += _rows(result, ("facility.total_kw", "facility.provisioned_kw", "facility.racks", "facility.cooling",
                               "facility.floor_m2", "facility.energy_mwh_per_year", "facility.co2_t_per_year"))
    elif step == "cost":
        rows += _rows(result, ("cost.cloud_run_usd", "cost.onprem_run_usd", "cost.cloud_usd", "cost.onprem_usd",
                               "cost.cloud_usd_per_gpu_hour", "cost.onprem_usd_per_gpu_hour",
                               "cost.breakeven_months", "cost.breakeven_utilisation", "cost.hybrid_usd",
                               "cost.price_source", "cost.price_as_of"))
    else:
        raise ValueError(f"step must be model, cluster, facility or cost, got {step!r}")
    text = "\n".join(rows)
    return text + (f"\n\n*{note}*" if note else "")


def breakeven_claim_markdown(gpu: str = "h100-sxm", catalog=None) -> str:
    """When owning beats renting, for every priced offer of ``gpu`` in the catalog (Markdown list).

    The rule of thumb ("owning wins at 40%+ utilisation, breakeven after 12-18 months") checked
    against each dated cloud price with :func:`aiplan.cost.breakeven_table` (the reference's
    owned-cost inputs: DGX H100 at $270k, 4 years, PUE 1.3, colocation).
    """
    from ..cost import breakeven_table

    rows = sorted(breakeven_table(gpu=gpu, catalog=catalog), key=lambda r: -r["usd_per_gpu_hour"])
    if not rows:
        return f"The catalog has no priced cloud offer for {gpu}."
    owned = rows[0]["owned_usd_per_gpu_hour"]
    lines = [f"Owning costs about {fmt(owned, 'usd_rate')} per GPU-hour at full use. Against each cloud price:", ""]
    for r in rows:
        u, months = r["breakeven_utilisation_reference"], r["months_continuous"]
        verdict = (f"owning wins above {fmt(u, 'pct')} utilisation and pays back after {fmt(months, 'months')} "
                   f"of continuous use" if u is not None else "owning never wins")
        holds = "the rule of thumb holds" if r["claim_holds"] else "the rule of thumb does not hold"
        lines.append(f"- {r['label']}: {fmt(r['usd_per_gpu_hour'], 'usd_rate')} per GPU-hour — {verdict}; {holds}.")
    return "\n".join(lines)
