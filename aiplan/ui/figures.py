"""Key figures, the problem banner, findings and errors of a result, as data and as HTML (no widgets).

The cards answer the client's question first, as the report does (:mod:`aiplan.present.summary`): the
recommendation, then for training *this run* (GPUs, time with its band, the run's cost renting and
on owned hardware), for serving the service (GPUs, cost per month and per million tokens,
latencies); then memory per GPU and the facility; then what keeping the cluster for years costs (a
block with that title). Every card carries its raw number in
``<span id="aiplan-<id>" data-value="...">`` so browser tests and scripts read it exactly; labels
and number formats come from the field registry (:mod:`aiplan.core.fields`). A card a problem affects
(:mod:`aiplan.analysis.fixes`) is marked, never green. Text shown to a client names plan fields by their
labels (:func:`humanize`), never by their keys.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis.fixes import PROBLEM_TITLES, Fix, problems
from ..core.catalog import load_catalog
from ..core.fields import RESULT_FIELDS, describe, format_field, get_path, label
from ..core.fields import format_value as fmt
from ..core.units import KW_PER_MW
from ..cost import breakeven_table
from ..plan import SECTIONS
from ..present import summary
from ..report.assumptions import assumptions as assumption_rows
from ..report.assumptions import kit_constants
from ..report.figures import choice_label, format_plan_value
from .controls import offer_name

SEVERITY_COLOURS = {"critical": "#c62828", "warning": "#ef6c00", "info": "#1565c0"}
#: how each severity group is titled
SEVERITY_TITLES = {"critical": "Must fix", "warning": "Worth checking", "info": "Good to know"}
#: cards each problem makes wrong ("bad") or unreliable ("doubt": they assume the plan runs as written)
AFFECTED = {
    "model-does-not-fit": ({"memory-per-gpu"}, {"days", "run-cost-cloud", "run-cost-owned", "cloud-cost",
                                                "onprem-cost", "breakeven", "breakeven-utilisation",
                                                "cost-per-month-cloud",
                                                "cost-per-month-owned", "usd-per-million-tokens",
                                                "usd-per-million-tokens-owned", "ttft", "tpot"}),
    "deadline-unreachable": ({"days", "gpus"}, {"run-cost-cloud", "run-cost-owned", "power-mw", "racks",
                                                "cloud-cost", "onprem-cost"}),
    "duration-absurd": ({"days"}, {"run-cost-cloud", "run-cost-owned"}),
    "deadline-missed": ({"days"}, set()),
    "ttft-target-missed": ({"ttft"}, set()),
    "tpot-target-missed": ({"tpot"}, set()),
    "run-never-finishes": ({"days"}, {"run-cost-cloud", "run-cost-owned"}),
    "rack-over-budget": ({"racks"}, {"power-mw"}),
    "rack-density-cooling": ({"racks"}, set()),
    "spot-never-finishes": ({"run-cost-cloud", "cloud-cost"}, {"breakeven", "breakeven-utilisation"}),
    "no-server-power": ({"power-mw", "racks"}, {"run-cost-owned", "onprem-cost", "breakeven"}),
    "no-server-price": ({"run-cost-owned", "onprem-cost", "cost-per-month-owned", "usd-per-million-tokens-owned"},
                        {"breakeven", "breakeven-utilisation"}),
    "no-cloud-offer": ({"run-cost-cloud", "cloud-cost", "cost-per-month-cloud", "usd-per-million-tokens"},
                       {"breakeven", "breakeven-utilisation"}),
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
.aiplan-block[data-block="facility"] {flex: 5 1 380px;}
.aiplan-block[data-block="fleet"] {flex: 6 1 420px;}
.aiplan-advice {flex: 1 1 100%; color: #1b5e20; font-weight: 600; font-size: 13px; margin: 0 0 4px 2px;}
.aiplan-block-title {font-size: 12px; font-weight: 600; color: #37474f; margin: 0 0 3px 2px;}
.aiplan-blocks {display: flex; flex-wrap: wrap; gap: 0 8px;}
.aiplan-cards {display: flex; flex-wrap: wrap; gap: 6px;}
.aiplan-card {border: 1px solid #dde3ea; border-radius: 6px; padding: 3px 8px; flex: 1 1 130px;
              min-width: 120px; background: #f8fafc; overflow-wrap: anywhere;}
/* eight serving cards: on a grid, so a card that wraps keeps its column's width instead of filling the row */
.aiplan-block[data-block="serving"] .aiplan-cards {display: grid;
  grid-template-columns: repeat(auto-fit, minmax(120px, 1fr));}
.aiplan-card .label {font-size: 11.5px; color: #455a64; font-weight: 600; line-height: 1.3;}
.aiplan-card .value {font-size: 19px; font-weight: 600; color: #102030; white-space: nowrap; line-height: 1.25;}
.aiplan-card .detail {font-size: 10.5px; color: #607080; line-height: 1.25; display: -webkit-box;
  -webkit-line-clamp: 3; -webkit-box-orient: vertical; overflow: hidden;}
.aiplan-card[data-card="fleet-owned-gpu-hour"] .detail {-webkit-line-clamp: 2;}
.aiplan-card.bad {border-color: #c62828; background: #fdecea;}
.aiplan-card.bad .value {color: #b71c1c;}
.aiplan-card.doubt {border-color: #ef6c00; border-style: dashed; background: #fff8e1;}
.aiplan-card.doubt .value {color: #6d4c41;}
.aiplan-card .mark {font-size: 10.5px; font-weight: 600; color: #b71c1c; line-height: 1.25;}
.aiplan-card.doubt .mark {color: #e65100;}
.aiplan-card.good {border-color: #2e7d32;}
.aiplan-banner {border: 2px solid #c62828; background: #fdecea; border-radius: 8px; padding: 6px 10px;
                font-size: 13px; color: #5d0000;}
.aiplan-banner.soft {border-color: #ef6c00; background: #fff3e0; color: #4e2600;}
.aiplan-banner b.what {font-size: 14px;}
.aiplan-banner ul {margin: 2px 0 2px 18px; padding: 0;}
.aiplan-banner .fix, .aiplan-fix-choice .fix {font-weight: 600; color: #1b5e20;}
.aiplan-fix-choice {font-size: 12.5px; line-height: 1.35;}
.aiplan-fix-choice .breaks {color: #8e3b00;}
.aiplan-fix-choice .changes {color: #37474f;}
.aiplan-fix-choice .quality {color: #6d4c41; font-style: italic;}
.aiplan-notice {font-size: 13px; color: #1b5e20; background: #f1f8e9; border: 1px solid #c5e1a5; border-radius: 6px;
                padding: 4px 10px;}
.aiplan-finding {border-left: 4px solid; padding: 3px 8px; margin: 3px 0; font-size: 13px; background: #fafafa;}
.aiplan-finding .src {color: #777; font-size: 11px; display: block;}
.aiplan-assume {border-collapse: collapse; font-size: 12px; width: 100%;}
.aiplan-assume th, .aiplan-assume td {border-bottom: 1px solid #e3e8ee; padding: 2px 6px; text-align: left;
                                      vertical-align: top;}
.aiplan-judgement {color: #8d6e00; font-size: 11px; font-weight: 400;}
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


#: app DOM id of each figure of :func:`aiplan.present.summary.client_summary` (the key-figure ids are stable)
APP_IDS = {"run-gpus": "gpus", "run-days": "days", "serving-gpus": "gpus", "fleet-cloud": "cloud-cost",
           "fleet-owned": "onprem-cost", "fleet-breakeven-months": "breakeven",
           "fleet-breakeven-utilisation": "breakeven-utilisation", "serving-cost-month-cloud": "cost-per-month-cloud",
           "serving-cost-month-owned": "cost-per-month-owned", "serving-cost-mtok-cloud": "usd-per-million-tokens",
           "serving-cost-mtok-owned": "usd-per-million-tokens-owned", "serving-ttft": "ttft", "serving-tpot": "tpot",
           "serving-api-prices": "api-prices"}


def _figure(id_: str, heading: str, value: Any, text: str | None = None, detail: str = "", key: str = "",
            extra: str = "") -> dict[str, Any]:
    """One card: ``text`` defaults to the registry format of ``key``."""
    shown = text if text is not None else (format_field(key, value) if key else fmt(value))
    return {"id": id_, "key": key, "label": heading, "value": value, "text": shown, "detail": detail, "state": "",
            "extra": extra}


def _plan(result: Mapping, section: str, key: str) -> Any:
    return ((result.get("plan") or {}).get(section) or {}).get(key)


def _memory_figure(result: Mapping) -> dict[str, Any]:
    mem, cap = get_path(result, "memory.per_gpu_gb"), get_path(result, "memory.gpu_capacity_gb")
    usable = get_path(result, "memory.usable_gb")
    fits = get_path(result, "memory.fits")
    capacity = (f'<span id="aiplan-gpu-capacity" data-value="{_raw(cap)}">{html.escape(fmt(cap, "gb"))}</span>'
                if cap is not None else "")
    if usable:
        detail, extra = (f"of {fmt(usable, 'gb')} usable ({fmt(cap, 'gb')} GPU)",
                         f"of {html.escape(fmt(usable, 'gb'))} usable ({capacity} GPU)")
    else:
        detail, extra = f"of {fmt(cap, 'gb')}", f"of {capacity}"
    fig = _figure("memory-per-gpu", label("memory.per_gpu_gb"), mem, key="memory.per_gpu_gb", detail=detail,
                  extra=extra)
    fig["state"] = "" if fits is None else ("good" if fits else "bad")
    return fig


def _facility_block(result: Mapping) -> dict[str, Any]:
    total_kw = get_path(result, "facility.total_kw")
    it_kw = get_path(result, "facility.it_kw")
    cooling = get_path(result, "facility.cooling")
    pue = _plan(result, "facility", "pue")
    return {"id": "facility", "title": "Memory and facility", "caption": "", "figures": [
        _memory_figure(result),
        _figure("power-mw", label("facility.total_kw"), None if total_kw is None else total_kw / KW_PER_MW,
                text=fmt(total_kw, "power"),
                detail=f"IT load {fmt(it_kw, 'power')}, PUE {pue:g}" if it_kw is not None and pue else ""),
        _figure("racks", label("facility.racks"), get_path(result, "facility.racks"), key="facility.racks",
                detail=f"{cooling} cooling" if cooling else ""),
    ]}


def question(result: Mapping | None) -> str:
    """What the plan asks, in one line (:func:`aiplan.present.summary.question`; empty without a result)."""
    return summary.question(result) if result else ""


def recommendation(result: Mapping | None) -> str:
    """What to do first, in one sentence (:func:`aiplan.present.summary.recommendation`)."""
    return summary.recommendation(result) if result else ""


def figure_blocks(result: Mapping) -> list[dict[str, Any]]:
    """The cards in blocks ``{id, title, caption, figures}``, the client's question first.

    The blocks and figures of :func:`aiplan.present.summary.client_summary` (the report's answer: the run or
    the service, then keeping the cluster; the breakeven's two figures on one card), with a block of
    memory per GPU and the facility second. Each figure is ``{id, key, label, value, text, detail, state, extra}``:
    ``id`` the app's DOM id (:data:`APP_IDS`), ``value`` the raw number, ``text`` formatted for
    people, ``state`` ``"bad"`` (wrong: a problem of :mod:`aiplan.analysis.fixes` says so), ``"doubt"`` (it
    assumes the plan runs as written), ``"good"`` or ``""`` (always for a figure without a value: "unknown, a
    price is missing" is not in doubt).
    """
    answer = summary.client_summary(result)
    blocks = []
    for block in answer["blocks"]:
        figures = [dict(f, id=APP_IDS.get(f["id"], f["id"]), extra="") for f in block["figures"]]
        by_id = {f["id"]: f for f in figures}
        if "breakeven" in by_id and "breakeven-utilisation" in by_id:  # one card: after how long, above what use
            pays = by_id.pop("breakeven-utilisation")
            by_id["breakeven"]["detail"] = "; ".join(
                t for t in (by_id["breakeven"]["detail"], f"owning pays above {pays['text']} utilisation") if t)
            figures = list(by_id.values())
        blocks.append({**block, "figures": figures})
    blocks.insert(1, _facility_block(result))
    found = [p["id"] for p in problems(result)]
    bad = set().union(*(AFFECTED.get(i, ((), ()))[0] for i in found)) if found else set()
    doubt = set().union(*(AFFECTED.get(i, ((), ()))[1] for i in found)) if found else set()
    for block in blocks:
        for fig in block["figures"]:
            if fig.get("value") is None and fig["id"] in bad | doubt:
                fig["state"] = ""  # no figure to doubt: its detail says what is missing
            elif fig["id"] in bad:
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


#: classes that keep JupyterLab's MathJax off an HTML output ("$1.2M ... $3.4M" is money, not mathematics)
NO_MATHS = "tex2jax_ignore mathjax_ignore"

MARKS = {"bad": "not workable: see above", "doubt": "only if the plan ran as written"}


def _card(fig: Mapping) -> str:
    mark = f'<div class="mark">{MARKS[fig["state"]]}</div>' if fig["state"] in MARKS else ""
    detail = fig.get("extra") or html.escape(fig["detail"])
    return (f'<div class="aiplan-card {fig["state"]}" data-card="{fig["id"]}"><div class="label">'
            f'{html.escape(fig["label"])}</div><div class="value"><span id="aiplan-{fig["id"]}" '
            f'data-value="{_raw(fig["value"])}">{html.escape(fig["text"])}</span></div>'
            f'<div class="detail" title="{html.escape(fig["detail"])}">{detail}</div>{mark}</div>')


def key_figures_html(result: Mapping | None) -> str:
    """The recommendation, then the cards in their blocks, each value in
    ``<span id="aiplan-<id>" data-value="...">``."""
    if not result:
        return f'<div class="aiplan-blocks {NO_MATHS}"></div>'
    advice = recommendation(result)
    blocks = [f'<div id="aiplan-recommendation" class="aiplan-advice">{html.escape(advice)}</div>'] if advice else []
    for block in figure_blocks(result):
        cards = "".join(_card(f) for f in block["figures"])
        blocks.append(f'<div class="aiplan-block" data-block="{block["id"]}" title="{html.escape(block["caption"])}">'
                      f'<div class="aiplan-block-title">{html.escape(block["title"])}</div>'
                      f'<div class="aiplan-cards">{cards}</div></div>')
    return f'<div class="aiplan-blocks {NO_MATHS}">' + "".join(blocks) + "</div>"


# --- the banner, findings and errors ------------------------------------------------------------------


def first_sentence(text: str) -> str:
    """The first sentence of a finding ("... has 80.0 GB." of a longer message)."""
    return re.split(r"(?<=[A-Za-z0-9%)]\.)\s+(?=[A-Z])", str(text), maxsplit=1)[0]


def _in_sentence(text: str) -> str:
    """A label as it reads inside a sentence: "Reserved 1 year" -> "reserved 1 year"; "QLoRA", "FP8", "N+1" kept."""
    rest = text.split(" ", 1)[0][1:]
    return text[:1].lower() + text[1:] if rest != rest.upper() and rest == rest.lower() else text


def plan_value_text(path: str, value: Any, catalog=None) -> str:
    """A plan field's value as a client reads it: catalog ids by their names, pricings in words, numbers in the
    field's format and unit; "auto" where the kit decides."""
    if value is None:
        return "auto"
    spec = SECTIONS.get(path.split(".", 1)[0], {}).get(path.split(".", 1)[-1])
    table = getattr(spec, "table", None)
    if table and isinstance(value, str):
        catalog = catalog or load_catalog()
        record = catalog.table(table).get(value)
        if record is not None:
            return offer_name(record) if table == "clouds" else str(getattr(record, "name", value))
    if isinstance(value, str) and getattr(spec, "kind", None) == "choice":   # as the dropdowns name it
        return _in_sentence(choice_label(path, value))
    if isinstance(value, str):
        return value.replace("-", " ")
    text = format_plan_value(path, value)
    unit = getattr(spec, "unit", "") or ""
    return text[:-len(unit) - 1] if unit and unit == field_label(path) and text.endswith(f" {unit}") else text


def changes_text(changes: Sequence[tuple[str, Any, Any]], catalog=None) -> str:
    """What a fix or a loaded option changed: "GPUs: 8 → 136; ZeRO stage: 0 → 3"."""
    return "; ".join(f"{field_label(path)}: {plan_value_text(path, old, catalog)} → "
                     f"{plan_value_text(path, new, catalog)}" for path, old, new in changes)


def fix_html(fix: Fix, catalog=None) -> str:
    """One suggested fix: what to do, what it keeps and gives up, what changes, and its quality note."""
    parts = [f'<span class="fix">{html.escape(fix.label)}.</span>']
    if fix.keeps:
        parts.append(f'<span class="keeps">Keeps {html.escape(_and(fix.keeps))}.</span>')
    if fix.breaks:
        parts.append(f'<span class="breaks">Gives up: {html.escape("; ".join(fix.breaks))}.</span>')
    if fix.changes:
        parts.append(f'<span class="changes">Changes {html.escape(changes_text(fix.changes, catalog))}.</span>')
    if fix.note:
        parts.append(f'<span class="quality">{html.escape(fix.note)}</span>')
    return '<div class="aiplan-fix-choice">' + " ".join(parts) + "</div>"


def _and(words: Sequence[str]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def banner_html(result: Mapping | None, fixes: Fix | Sequence[Fix] | None, choices: bool = True,
                catalog=None) -> str:
    """What is wrong with a plan that cannot work and what would work (empty when nothing is wrong).

    ``fixes`` are the choices (:func:`aiplan.analysis.fixes.suggest_fixes`); with ``choices`` they are listed
    in the banner (static pages), else the app shows each beside its own button.
    """
    found = problems(result or {})
    if not found:
        return ""
    fixes = [fixes] if isinstance(fixes, Fix) else list(fixes or [])
    critical = any(p.get("severity") == "critical" for p in found)
    items = "".join(f"<li><b>{html.escape(PROBLEM_TITLES.get(p['id'], 'This does not work as planned'))}.</b> "
                    f"{html.escape(humanize(first_sentence(p['message'])))}</li>" for p in found)
    head = "This plan cannot work as written" if critical else "This plan is missing a figure"
    applicable = [f for f in fixes if f.applicable]
    if not applicable:
        what = f"<div>{html.escape(fixes[0].label)}.</div>" if fixes else ""
    elif choices:
        listed = "".join(f"<li>{fix_html(f, catalog)}</li>" for f in applicable)
        what = f'<div>What would work{", choose one" if len(applicable) > 1 else ""}:</div><ol>{listed}</ol>'
    else:
        what = f'<div>What would work{", choose one" if len(applicable) > 1 else ""}:</div>'
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
        return (f'<div id="aiplan-findings" class="aiplan-findings {NO_MATHS}"><div class="aiplan-note">No findings.'
                '</div></div>')
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
    return f'<div id="aiplan-findings" class="aiplan-findings {NO_MATHS}">' + "".join(groups) + "</div>"


def assumptions_html(result: Mapping | None, raw_plan: Mapping | None = None) -> str:
    """What the kit assumed, as the report lists it: the plan's defaults (judgements marked), then the
    kit's own constants, each with its value, basis and source (the assumptions registry)."""
    if not result:
        return ""
    rows = [r for r in assumption_rows(result, raw_plan) if not r["given"]]
    kit = kit_constants(kind=get_path(result, "plan.workload.kind"))

    def row(label: str, value: str, basis: str, source: str, judged: bool) -> str:
        tag = ' <span class="aiplan-judgement">judgement</span>' if judged else ""
        return (f"<tr><td><b>{html.escape(label)}</b>{tag}</td><td>{html.escape(value)}</td>"
                f"<td>{html.escape(basis)}</td><td>{html.escape(source or ('the kit' if judged else ''))}</td></tr>")

    head = "<tr><th>Setting</th><th>Value</th><th>Where it comes from</th><th>Source</th></tr>"
    plan_rows = "".join(row(r["label"], r["value_text"], r["basis"], r["source_text"], r["judgement"]) for r in rows)
    kit_rows = "".join(row(c["label"], c["value_text"], c["basis"], c["source_text"], c["judgement"]) for c in kit)
    judged = sum(r["judgement"] for r in rows) + sum(c["judgement"] for c in kit)
    return (f'<div id="aiplan-assumptions" class="aiplan-assumptions"><p>{len(rows)} settings the plan left to the '
            f"kit and {len(kit)} constants of its own; {judged} are the kit's judgement rather than a published "
            f'figure.</p><table class="aiplan-assume">{head}{plan_rows}</table>'
            f'<div class="aiplan-findings-group">The kit\'s own constants</div>'
            f'<table class="aiplan-assume">{head}{kit_rows}</table></div>')


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
    return markdown_text("\n".join(out).rstrip())


def _row(label: str, value: Any, kind: str = "number") -> str:
    return f"| {label} | {value if isinstance(value, str) else fmt(value, kind)} |"


def _rows(result: Mapping, keys: Sequence[str]) -> list[str]:
    """Table rows of result keys: the registry's label and format."""
    rows = []
    for key in keys:
        rows.append(f"| {RESULT_FIELDS[key].label} | {format_field(key, get_path(result, key))} |")
    return rows


def step_markdown(result: Mapping, step: str) -> str:
    """One step's figures as a Markdown table, the rule of thumb beside the detailed model.

    ``step`` is ``model``, ``cluster``, ``facility`` or ``cost``.
    """
    g = lambda s, k: get_path(result, f"{s}.{k}")  # noqa: E731
    rows = ["| | value |", "|---|---|"]
    note = None
    if step == "model":
        rows += _rows(result, ("model.params", "model.active_params", "model.flops_per_token", "memory.per_gpu_gb",
                               "memory.gpu_capacity_gb", "memory.usable_gb", "memory.fits"))
        if get_path(result, "plan.workload.kind") != "inference":  # the quick rule sizes training state
            rows += _rows(result, ("memory.rule_of_thumb_gb",))
            note = describe("memory.rule_of_thumb_gb")
    elif step == "cluster" and get_path(result, "plan.workload.kind") == "inference":
        pools = (("inference.prefill_gpus", "inference.prefill_replicas", "inference.prefill_layout",
                  "inference.decode_gpus", "inference.decode_replicas", "inference.decode_layout")
                 if get_path(result, "inference.prefill_gpus") is not None
                 else ("inference.replicas", "inference.gpus_per_replica", "inference.layout"))
        rows += _rows(result, ("inference.gpus", *pools, "cluster.nodes", "inference.concurrent_sequences",
                               "inference.ttft_ms", "inference.ttft_ms_target", "inference.tpot_ms",
                               "inference.tpot_ms_target", "inference.meets_latency"))
    elif step == "cluster":
        rows += _rows(result, ("cluster.gpus", "cluster.nodes"))
        rows.append(_row("Tensor, pipeline and data parallel",
                         f"{fmt(g('cluster', 'tensor_parallel'), 'count')} / "
                         f"{fmt(g('cluster', 'pipeline_parallel'), 'count')} / "
                         f"{fmt(g('cluster', 'data_parallel'), 'count')}"))
        rows += _rows(result, ("cluster.zero_stage", "compute.mfu", "compute.wall_clock_days"))
        rows.append(_row("Training time, plausible range",
                         f"{fmt(g('compute', 'days_low'), 'days')} to {fmt(g('compute', 'days_high'), 'days')}"))
        rows += _rows(result, ("compute.gpu_hours", "reliability.goodput"))
        rows.append(_row("Switches (leaf, spine, core)",
                         f"{fmt(g('network', 'leaf_switches'), 'count')} / "
                         f"{fmt(g('network', 'spine_switches'), 'count')} / "
                         f"{fmt(g('network', 'core_switches'), 'count')}"))
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
                               "cost.cloud_usd_per_gpu_hour", "cost.onprem_usd_per_gpu_hour"))
        rows.append(_row(label("cost.breakeven_months"), summary.breakeven_text(g("cost", "breakeven_months"))))
        rows += _rows(result, ("cost.breakeven_utilisation", "cost.hybrid_usd"))
        rows.append(_row("Cloud offer", plan_value_text("cost.cloud", _plan(result, "cost", "cloud"))
                         if _plan(result, "cost", "cloud") else "none"))
        rows += _rows(result, ("cost.price_as_of",))
    else:
        raise ValueError(f"step must be model, cluster, facility or cost, got {step!r}")
    text = "\n".join(rows)
    return markdown_text(text + (f"\n\n*{note}*" if note else ""))


def markdown_text(text: str) -> str:
    """Markdown whose dollar amounts stay dollar amounts: "$" escaped, so JupyterLab and nbconvert never read
    "$1.2M ... $3.4M" as mathematics (which also merges table rows)."""
    return re.sub(r"(?<!\\)\$", r"\\$", text)


def breakeven_claim_markdown(gpu: str = "h100-sxm", catalog=None) -> str:
    """When owning beats renting, for every priced offer of ``gpu`` in the catalog (Markdown list).

    The rule of thumb ("owning wins at 40%+ utilisation, breakeven after 12-18 months") checked
    against each dated cloud price with :func:`aiplan.cost.breakeven_table` (the reference's
    owned-cost inputs: DGX H100 at $270k, 4 years, PUE 1.3, colocation).
    """
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
    return markdown_text("\n".join(lines))
