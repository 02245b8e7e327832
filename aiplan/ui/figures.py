"""Key figures and findings of a result, as data and as HTML (no widgets).

Every key figure has a stable DOM id (``aiplan-<id>``) and carries its raw
number in ``data-value`` so browser tests and scripts can read it exactly.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from ..charts import get, gpu_count
from ..fields import describe
from ..fields import format_value as fmt
from ..units import KW_PER_MW

SEVERITY_COLOURS = {"critical": "#c62828", "warning": "#ef6c00", "info": "#1565c0"}
SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}

CSS = """
<style>
.aiplan-title {font-size: 22px; font-weight: 600; color: #1a237e; margin: 4px 0 0 0;}
.aiplan-subtitle {color: #555; font-size: 13px; margin: 0 0 4px 0;}
.aiplan-cards {display: flex; flex-wrap: wrap; gap: 8px;}
.aiplan-card {border: 1px solid #dde3ea; border-radius: 6px; padding: 6px 10px; min-width: 118px;
              background: #f8fafc;}
.aiplan-card .label {font-size: 11px; color: #607080; text-transform: uppercase; letter-spacing: .03em;}
.aiplan-card .value {font-size: 20px; font-weight: 600; color: #102030;}
.aiplan-card .detail {font-size: 11px; color: #607080;}
.aiplan-card.bad {border-color: #c62828; background: #fdecea;}
.aiplan-card.good {border-color: #2e7d32;}
.aiplan-finding {border-left: 4px solid; padding: 3px 8px; margin: 3px 0; font-size: 13px; background: #fafafa;}
.aiplan-finding .sev {font-weight: 600; text-transform: uppercase; font-size: 11px; margin-right: 6px;}
.aiplan-finding .src {color: #777; font-size: 11px;}
.aiplan-error {border: 1px solid #c62828; background: #fdecea; color: #8e0000; padding: 6px 10px;
               border-radius: 4px; font-size: 13px; white-space: pre-wrap;}
</style>
"""


def key_figures(result: Mapping) -> list[dict[str, Any]]:
    """The figures a client asks for first, as dicts ``{id, label, value, text, detail, state}``.

    ``value`` is the raw number from the result (``None`` when it does not apply);
    ``text`` is the formatted value; ``state`` is ``"bad"``, ``"good"`` or ``""``.
    """
    mem, cap = get(result, "memory", "per_gpu_gb"), get(result, "memory", "gpu_capacity_gb")
    usable = get(result, "memory", "usable_gb")
    fits = get(result, "memory", "fits")
    total_kw = get(result, "facility", "total_kw")
    days = get(result, "compute", "wall_clock_days")
    low, high = get(result, "compute", "days_low"), get(result, "compute", "days_high")
    cloud, onprem = get(result, "cost", "cloud_usd"), get(result, "cost", "onprem_usd")
    years = ((result.get("plan") or {}).get("cost") or {}).get("years")
    months = get(result, "cost", "breakeven_months")
    util = get(result, "cost", "breakeven_utilisation")
    per_tokens = get(result, "cost", "usd_per_million_tokens")
    figures = [
        dict(id="memory-per-gpu", label="Memory per GPU", value=mem, text=fmt(mem, "gb"),
             detail=(f"of {fmt(cap, 'gb')}" + (f" ({fmt(usable, 'gb')} usable)" if usable else "")) if cap else "",
             state="" if fits is None else ("good" if fits else "bad")),
        dict(id="gpu-capacity", label="GPU capacity", value=cap, text=fmt(cap, "gb"),
             detail=str(((result.get("plan") or {}).get("cluster") or {}).get("gpu", "")), state=""),
        dict(id="gpus", label="GPUs", value=gpu_count(result), text=fmt(gpu_count(result), "count"),
             detail=fmt(get(result, 'cluster', 'nodes'), "count", "servers") if get(result, "cluster", "nodes") else "",
             state=""),
        dict(id="days", label="Training days", value=days, text=fmt(days, "days"),
             detail=f"range {fmt(low, 'days')} – {fmt(high, 'days')}" if low and high else "", state=""),
        dict(id="power-mw", label="Facility power", value=None if total_kw is None else total_kw / KW_PER_MW,
             text=fmt(total_kw, "power"),
             detail=f"IT {fmt(get(result, 'facility', 'it_kw'), 'power')}" if total_kw else "", state=""),
        dict(id="racks", label="Racks", value=get(result, "facility", "racks"),
             text=fmt(get(result, "facility", "racks"), "count"), detail=str(get(result, "facility", "cooling", "")),
             state=""),
        dict(id="cloud-cost", label="Cloud cost", value=cloud, text=fmt(cloud, "usd"),
             detail=f"over {years:g} years" if years else "", state=""),
        dict(id="onprem-cost", label="On-prem cost", value=onprem, text=fmt(onprem, "usd"),
             detail=f"over {years:g} years" if years else "",
             state="" if cloud is None or onprem is None else ("good" if onprem < cloud else "")),
        dict(id="breakeven", label="Breakeven", value=months, text=fmt(months, "months"),
             detail=f"owning wins above {util:.0%} utilisation" if util is not None else "", state=""),
    ]
    if per_tokens is not None:
        figures.append(dict(id="usd-per-million-tokens", label="$ per M tokens", value=per_tokens,
                            text=fmt(per_tokens, "usd_rate"), detail="cloud", state=""))
    return figures


def key_figures_html(result: Mapping | None) -> str:
    """Key figures as cards, each value in ``<span id="aiplan-<id>" data-value="...">``."""
    if not result:
        return '<div class="aiplan-cards"></div>'
    cards = []
    for f in key_figures(result):
        raw = "" if f["value"] is None else repr(float(f["value"]))
        cards.append(
            f'<div class="aiplan-card {f["state"]}"><div class="label">{html.escape(f["label"])}</div>'
            f'<div class="value"><span id="aiplan-{f["id"]}" data-value="{raw}">{f["text"]}</span></div>'
            f'<div class="detail">{html.escape(f["detail"])}</div></div>')
    return '<div class="aiplan-cards">' + "".join(cards) + "</div>"


def findings_html(checks: list[Mapping] | None) -> str:
    """Findings of :func:`aiplan.run_checks`, most severe first, coloured by severity."""
    if not checks:
        return '<div id="aiplan-findings" class="aiplan-finding" style="border-color:#2e7d32">No findings.</div>'
    items = sorted(checks, key=lambda c: SEVERITY_ORDER.get(c.get("severity"), 3))
    rows = []
    for c in items:
        sev = c.get("severity", "info")
        colour = SEVERITY_COLOURS.get(sev, "#555")
        src = f' <span class="src">[{html.escape(str(c["source"]))}]</span>' if c.get("source") else ""
        rows.append(f'<div class="aiplan-finding aiplan-{html.escape(sev)}" style="border-color:{colour}">'
                    f'<span class="sev" style="color:{colour}">{html.escape(sev)}</span>'
                    f'{html.escape(str(c.get("message", "")))}{src}</div>')
    return '<div id="aiplan-findings">' + "".join(rows) + "</div>"


def error_html(error: Exception | None) -> str:
    """A PlanError as a red box, one line per problem (never a traceback)."""
    if error is None:
        return ""
    lines = "\n".join(html.escape(str(p)) for p in getattr(error, "problems", [error]))
    return f'<div id="aiplan-error" class="aiplan-error"><b>This plan is not valid:</b>\n{lines}</div>'


def summary_markdown(result: Mapping) -> str:
    """Key figures as a Markdown table (for headless notebooks and reports)."""
    lines = ["| figure | value | detail |", "|---|---|---|"]
    for f in key_figures(result):
        lines.append(f"| {f['label']} | {f['text']} | {f['detail']} |")
    return "\n".join(lines)


def _row(label: str, value: Any, kind: str = "number") -> str:
    return f"| {label} | {value if isinstance(value, str) else fmt(value, kind)} |"


def step_markdown(result: Mapping, step: str) -> str:
    """One step's figures as a Markdown table, the rule of thumb beside the detailed model.

    ``step`` is ``model``, ``cluster``, ``facility`` or ``cost``.
    """
    g = lambda s, k: get(result, s, k)  # noqa: E731
    rows = ["| | value |", "|---|---|"]
    if step == "model":
        rows += [_row("parameters", g("model", "params")), _row("active parameters", g("model", "active_params")),
                 _row("FLOPs per token", g("model", "flops_per_token")),
                 _row("memory per GPU, detailed model", g("memory", "per_gpu_gb"), "gb"),
                 _row("GPU capacity", g("memory", "gpu_capacity_gb"), "gb"),
                 _row("usable per GPU", g("memory", "usable_gb"), "gb"),
                 _row("fits", g("memory", "fits")),
                 _row("rule of thumb (params x 2 bytes x 4, whole model)", g("memory", "rule_of_thumb_gb"), "gb")]
        note = describe("memory.rule_of_thumb_gb")
    elif step == "cluster":
        rows += [_row("GPUs", gpu_count(result)), _row("nodes", g("cluster", "nodes")),
                 _row("tensor / pipeline / data parallel",
                      f"{fmt(g('cluster', 'tensor_parallel'))} / {fmt(g('cluster', 'pipeline_parallel'))} / "
                      f"{fmt(g('cluster', 'data_parallel'))}"),
                 _row("ZeRO stage", g("cluster", "zero_stage")), _row("MFU", g("compute", "mfu")),
                 _row("wall-clock days", g("compute", "wall_clock_days"), "days"),
                 _row("days, plausible range",
                      f"{fmt(g('compute', 'days_low'), 'days')} – {fmt(g('compute', 'days_high'), 'days')}"),
                 _row("GPU-hours", g("compute", "gpu_hours")),
                 _row("goodput", g("reliability", "goodput")),
                 _row("network switches (leaf / spine / core)",
                      f"{fmt(g('network', 'leaf_switches'))} / {fmt(g('network', 'spine_switches'))} / "
                      f"{fmt(g('network', 'core_switches'))}"),
                 _row("storage read, detailed", g("storage", "read_gb_per_s"), "gb_per_s"),
                 _row("storage read, rule of thumb (1 GB/s per GPU)", g("storage", "read_gb_per_s_rule"), "gb_per_s"),
                 _row("checkpoint size", g("checkpoint", "size_gb"), "gb")]
        note = None
    elif step == "facility":
        rows += [_row("IT power, detailed", g("facility", "it_kw"), "power"),
                 _row("rule of thumb (servers + 30-40%)",
                      f"{fmt(g('facility', 'rule_of_thumb_kw_low'), 'power')} – "
                      f"{fmt(g('facility', 'rule_of_thumb_kw_high'), 'power')}"),
                 _row("total with PUE", g("facility", "total_kw"), "power"),
                 _row("provisioned (redundancy)", g("facility", "provisioned_kw"), "power"),
                 _row("racks", g("facility", "racks")), _row("cooling", g("facility", "cooling")),
                 _row("floor", g("facility", "floor_m2"), "count"),
                 _row("energy per year", g("facility", "energy_mwh_per_year"), "energy"),
                 _row("CO2 per year", g("facility", "co2_t_per_year"), "count")]
        note = None
    elif step == "cost":
        rows += [_row("cloud", g("cost", "cloud_usd"), "usd"), _row("on-prem", g("cost", "onprem_usd"), "usd"),
                 _row("cloud per GPU-hour", g("cost", "cloud_usd_per_gpu_hour"), "usd"),
                 _row("on-prem per GPU-hour", g("cost", "onprem_usd_per_gpu_hour"), "usd"),
                 _row("breakeven", g("cost", "breakeven_months"), "months"),
                 _row("breakeven utilisation", g("cost", "breakeven_utilisation")),
                 _row("hybrid", g("cost", "hybrid_usd"), "usd"),
                 _row("cloud price source", g("cost", "price_source")),
                 _row("price as of", g("cost", "price_as_of"))]
        note = None
    else:
        raise ValueError(f"step must be model, cluster, facility or cost, got {step!r}")
    text = "\n".join(rows)
    return text + (f"\n\n*{note}*" if note else "")


def breakeven_claim_markdown(gpu: str = "h100-sxm", catalog=None) -> str:
    """When owning beats renting, for every priced offer of ``gpu`` in the catalog (Markdown list).

    The seed's claim ("owning wins at 40%+ utilisation, breakeven after 12-18 months") checked
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
        holds = "the seed's claim holds" if r["claim_holds"] else "the seed's claim does not hold"
        lines.append(f"- {r['label']}: {fmt(r['usd_per_gpu_hour'], 'usd_rate')} per GPU-hour — {verdict}; {holds}.")
    return "\n".join(lines)
