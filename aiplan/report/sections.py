"""The blocks of the client report as HTML: one call of the report notebook each.

The notebook keeps no logic of its own. The report reads, in this order (:data:`REPORT_SECTIONS`):
cover, executive summary (:mod:`aiplan.present.summary`), bill of materials (:mod:`.bom`), one section
per step (:mod:`.figures`: figures with a sentence and the rule of thumb, then the charts),
findings, assumptions and sources (:mod:`.assumptions`), and the appendix with every figure.
Every number goes through the field registry (:mod:`aiplan.core.fields`); raw keys and exact values
appear only in the appendix.
"""

from __future__ import annotations

import datetime as _dt
import html as _html
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..core.errors import PlanError, Problem
from ..core.fields import RESULT_FIELDS, format_field
from ..core.fields import format_value as fmt
from ..core.inputs import parse_yaml, read_yaml
from ..core.version import __version__
from ..present.summary import SEVERITY_ORDER, client_summary, question
from .assumptions import assumptions as assumption_rows
from .assumptions import bibliography, cite, footnote_index, kit_constants
from .bom import bill_of_materials, plan_catalog
from .figures import (
    SECTIONS,
    STEP_CHARTS,
    STEP_FIGURES,
    STEPS,
    appendix,
    get_path,
    readable_sensitivity,
    records,
    step_figures,
    step_question,
)

#: the report's sections (h2 headings), in order; "Alternatives considered" (the options explorer)
#: belongs between "Findings" and "Assumptions"
REPORT_SECTIONS = ("Executive summary", "Bill of materials", "Step 1: Model", "Step 2: Cluster", "Step 3: Facility",
                   "Step 4: Cost", "Findings", "Alternatives considered", "Assumptions", "Sources",
                   "Appendix: every figure")
#: list-valued result keys the appendix shows as tables
APPENDIX_LISTS = ("cost.monthly", "cost.sensitivity", "cost.growth_capex", "facility.growth", "cluster.candidates")

__all__ = ["SECTIONS", "STEPS", "STEP_FIGURES"]


class Html(str):
    """A string that Jupyter displays as HTML (no IPython import needed)."""

    def _repr_html_(self) -> str:
        return str(self)


def esc(value: Any) -> str:
    """HTML-escape ``value`` as text."""
    return _html.escape(str(value), quote=True)


def _is_num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def table(rows: Iterable[Iterable[Any]], header: Iterable[str], cls: str = "") -> Html:
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
                cells.append(f"<td>{esc(fmt(v) if v is not None else '')}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return Html(f"<table class='aiplan {cls}'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


def num(text: str) -> Html:
    """A formatted number as a right-aligned cell."""
    return Html(f"<span class='num'>{esc(text)}</span>")


def note(text: str) -> Html:
    """A short italic note, e.g. "not available"."""
    return Html(f"<p class='aiplan-na'>{esc(text)}</p>")


def plan_folder(plan_path: str = "", plan_yaml: str = "") -> Path | None:
    """The folder a plan file's relative paths (``catalog:``) resolve against; None for YAML text."""
    return None if plan_yaml or not plan_path else Path(plan_path).resolve().parent


def read_plan(plan_path: str = "", plan_yaml: str = "") -> Any:
    """The raw plan (as written by the user) from YAML text or a file; PlanError if unreadable."""
    if plan_yaml and plan_yaml.strip():
        return parse_yaml(plan_yaml, "plan_yaml")
    if not plan_path:
        raise PlanError(Problem("plan_path", "is required when plan_yaml is empty", has_value=False))
    return read_yaml(plan_path)


# --- cover and summary ------------------------------------------------------------------------


def cover(result: Mapping, report_date: str = "") -> Html:
    """Cover block: plan name, client, author, date and aiplan version."""
    plan = result.get("plan") or {}
    day = report_date or _dt.date.today().isoformat()
    lines = [("Prepared for", plan.get("client")), ("Prepared by", plan.get("prepared_by")), ("Date", day),
             ("Made with", f"aiplan {__version__}")]
    facts = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in lines if v)
    return Html(f"<div class='aiplan-cover'><p class='kicker'>AI infrastructure plan</p>"
                f"<h1>{esc(plan.get('name', 'Unnamed plan'))}</h1><p class='question'>{esc(question(result))}</p>"
                f"<table class='facts'>{facts}</table></div>")


def _card(f: Mapping) -> str:
    state = f" {f['state']}" if f.get("state") else ""
    detail = f"<div class='d'>{esc(f['detail'])}</div>" if f.get("detail") else ""
    return (f"<div class='aiplan-kpi{state}' id='aiplan-{esc(f['id'])}'><div class='l'>{esc(f['label'])}</div>"
            f"<div class='v'>{esc(f['text'])}</div>{detail}</div>")


def executive_summary(result: Mapping) -> Html:
    """The client's question answered first (:func:`aiplan.present.summary.client_summary`): blocks of key
    figures, one recommendation, the top risks."""
    s = client_summary(result)
    out = [f"<p class='aiplan-recommendation'><b>Recommendation.</b> {esc(s['recommendation'])}</p>"]
    for block in s["blocks"]:
        cards = "".join(_card(f) for f in block["figures"])
        out.append(f"<div class='aiplan-block'><h3>{esc(block['title'])}</h3><p>{esc(block['caption'])}</p>"
                   f"<div class='aiplan-kpis'>{cards}</div></div>")
    if s["risks"]:
        items = "".join(f"<li><span class='sev-{esc(r['severity'])}'>{esc(r['severity'])}</span> "
                        f"{esc(r['message'])}" + (f" <span class='src'>({esc(r['source'])})</span>" if r["source"]
                                                  else "") + "</li>" for r in s["risks"])
        out.append(f"<div class='aiplan-block'><h3>Top risks</h3><ul class='aiplan-risks'>{items}</ul></div>")
    return Html("".join(out))


# --- bill of materials and steps --------------------------------------------------------------


def bom_table(result: Mapping, plan: Any = None) -> Html:
    """The bill of materials: item, quantity, unit price, total, notes."""
    rows = []
    for line in bill_of_materials(result, plan):
        item = Html(f"<b>{esc(line['item'])}</b>" + (f"<br><span class='d'>{esc(line['detail'])}</span>"
                                                       if line["detail"] else ""))
        rows.append((item, num(line["quantity_text"]), num(line["unit_price_text"]), num(line["total_text"]),
                     line["note"]))
    return Html("<p>What the plan takes to build, with the prices the kit knows; lines without a price are "
                "included in the network estimate or need a quote.</p>"
                + table(rows, ("Item", "Quantity", "Unit price", "Total", "Notes"), cls="bom"))


def step(result: Mapping, name: str) -> Html:
    """One step's figures: label, value with unit, the rule of thumb beside it, one sentence of meaning."""
    rows = [(Html(f"<b>{esc(f['label'])}</b>"), num(f["text"]), f["rule"], f["meaning"])
            for f in step_figures(result, name)]
    intro = f"<p class='aiplan-intro'>{esc(step_question(result, name))}</p>"
    if not rows:
        return Html(intro) + note("does not apply to this plan")
    return Html(intro + table(rows, ("Figure", "Value", "Rule of thumb", "What it means"), cls="figures"))


def step_charts(result: Mapping, name: str) -> list[Any]:
    """The charts of one step that apply to the plan (``display(*report.step_charts(result, "Cost"))``)."""
    from ..present import charts

    builders = {**charts.RESULT_CHARTS, **charts.SWEEP_CHARTS}
    kind = get_path(result, "plan.workload.kind")
    result = readable_sensitivity(result)
    skip = {"training_sweep"} if kind == "inference" else {"inference_sweep"}
    out = []
    for chart_name in STEP_CHARTS[name]:
        if chart_name in skip:
            continue
        chart = builders[chart_name](result)
        if charts.is_available(chart):
            out.append(chart)
    return out


def findings(result: Mapping) -> Html:
    """Every finding, critical first: severity, what it says, its sources."""
    checks = sorted(result.get("checks") or [], key=lambda c: SEVERITY_ORDER.get(c.get("severity"), 3))
    if not checks:
        return note("The plan raised no findings.")
    rows = [(Html(f"<span class='sev-{esc(c.get('severity'))}'>{esc(c.get('severity'))}</span>"),
             c.get("message", ""), c.get("source") or "") for c in checks]
    return table(rows, ("Severity", "Finding", "Source"), cls="findings")


# --- assumptions, sources, appendix -----------------------------------------------------------


def assumptions(raw_plan: Any, result: Mapping, report_date: str = "", plan: Any = None) -> Html:
    """Every default the plan took (value, where from, source, date, age; judgement flagged), then
    the values the plan gave."""
    catalog = plan_catalog(plan)
    refs = footnote_index(result, raw_plan, plan)
    rows = assumption_rows(result, raw_plan, report_date, plan)
    defaults = [r for r in rows if not r["given"]]
    judged = sum(r["judgement"] for r in defaults)
    body = [(Html(f"<b>{esc(r['label'])}</b>" + (" <span class='judgement'>judgement</span>" if r["judgement"]
                                                  else "") + f"<br><span class='d'>{esc(r['meaning'])}</span>"),
             num(r["value_text"]), r["basis"], cite(r["sources"], refs, catalog), r["date"], r["age_text"])
            for r in defaults]
    given = [(Html(f"<b>{esc(r['label'])}</b>"), num(r["value_text"])) for r in rows if r["given"]]
    out = (f"<p>The plan left {len(defaults)} settings to the kit. {judged} of them are the kit's judgement "
           "rather than a published figure (marked <span class='judgement'>judgement</span>): replace them with "
           "your own figures where you have them. Ages are counted to the report date.</p>"
           + table(body, ("Setting", "Value used", "Where it comes from", "Source", "Date", "Age"), cls="assume"))
    if given:
        out += "<h3>Given in the plan</h3>" + table(given, ("Setting", "Value"), cls="given")
    kit = kit_constants(plan, get_path(result, "plan.workload.kind"))
    judged_tag = " <span class='judgement'>judgement</span>"
    body = [(Html(f"<b>{esc(c['label'])}</b>" + (judged_tag if c["judgement"] else "")
                  + f"<br><span class='d'>Used for {esc(c['used_for'])}</span>"),
             num(c["value_text"]), c["basis"], cite(c["sources"], refs, catalog)) for c in kit]
    out += ("<h3>The kit's own constants</h3><p>Values the formulas use where neither the plan nor the catalog "
            f"gives one; {sum(c['judgement'] for c in kit)} of {len(kit)} are the kit's judgement.</p>"
            + table(body, ("Constant", "Value", "How it was reached", "Source"), cls="assume"))
    return Html(out)


def sources(result: Mapping, raw_plan: Any = None, plan: Any = None) -> Html:
    """The bibliography: author, date, title, URL and when it was read, numbered as cited."""
    entries = bibliography(result, raw_plan, plan)
    if not entries:
        return note("No sources recorded.")
    items = []
    for e in entries:
        url = f" <a href='{esc(e['url'])}'>{esc(e['url'])}</a>." if e["url"] else ""
        read = f" Accessed {esc(e['accessed'])}." if e["accessed"] else ""
        items.append(f"<li class='aiplan-bib'>{esc(e['author'])} ({esc(e['date'] or 'undated')}). "
                     f"<i>{esc(e['title'])}</i>.{url}{read}</li>")
    return Html(f"<ol class='aiplan-sources'>{''.join(items)}</ol>")


def _records_html(result: Mapping, key: str) -> str:
    labels, rows, items = records(result, key)
    if not rows:
        return ""

    def cell(item: str, value: Any) -> Any:
        spec = RESULT_FIELDS.get(f"{key}[].{item}")
        return num(format_field(f"{key}[].{item}", value)) if spec and value is not None else value

    title = RESULT_FIELDS[key].label if key in RESULT_FIELDS else key
    body = [[cell(i, v) for i, v in zip(items, row)] for row in rows]
    return f"<h3>{esc(title)}</h3>" + table(body, labels, cls="records")


def appendix_tables(result: Mapping) -> Html:
    """Every figure of the result with its label, unit, formatted and exact value and key; then the lists."""
    out = ["<p>Every figure of the result. The exact value is the number as computed; the key names it in "
           "the result file and the workbook.</p>"]
    for title, rows in appendix(result):
        body = [(label, num(text), Html(f"<code>{esc(exact)}</code>"), Html(f"<code>{esc(key)}</code>"))
                for label, text, exact, key in rows]
        out.append(f"<h3>{esc(title)}</h3>" + table(body, ("Figure", "Value", "Exact value", "Key"), cls="appendix"))
    out += [_records_html(result, key) for key in APPENDIX_LISTS]
    return Html("".join(out))


def colophon(result: Mapping, report_date: str = "") -> Html:
    """How the report was made: the closing block (kept whole on the last page)."""
    day = report_date or _dt.date.today().isoformat()
    name = (result.get("plan") or {}).get("name", "Unnamed plan")
    return Html(
        "<div class='aiplan-colophon'><h3>About this report</h3>"
        f"<p>This report on <b>{esc(name)}</b> was produced on {esc(day)} by aiplan {esc(__version__)}, an "
        "open-source kit that plans AI infrastructure in four steps: model, cluster, facility and cost. Every "
        "figure comes from the plan and the kit's dated catalog through published formulas; the sources list "
        "names each reference, and the assumptions list says which values are judgement.</p>"
        "<p>The figures are planning estimates, not quotes. Prices move: ask vendors and cloud providers for "
        "current quotes before deciding, and replace the judgement values with your own where you have them.</p>"
        "<p>The plan file reproduces this report exactly: run <code>aiplan report</code> on it with the same "
        "aiplan version. The workbook holds every figure with its number format, and the audit notebook shows "
        "how each one is obtained.</p></div>")
