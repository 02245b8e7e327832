"""A report as an Excel workbook a client reuses: numbers as numbers, with Excel number formats.

Sheets: "Summary" first (the plan, the client's question answered, the recommendation, the top
risks), one sheet per step (figure, value, unit, key, source: every figure of the step), the bill
of materials, the monthly cost (month, renting and owning, each with its cumulative), the lists
of the result (growth, sensitivity, layout candidates), assumptions, findings and sources. Header
rows are frozen, columns sized, and no cell holds JSON.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.catalog import parse_date
from ..core.fields import EXCEL_FORMATS, RESULT_FIELDS
from ..core.version import __version__
from ..present.summary import client_summary
from .assumptions import assumptions, bibliography, kit_constants, short_sources
from .bom import bill_of_materials, plan_catalog
from .figures import STEPS, get_path, plan_spec, records, scalar_keys

#: a key's source: the result key naming the sources of the figures it belongs to
KEY_SOURCES = {
    "cost.cloud_usd_per_hr": "cost.price_source", "cost.cloud_usd_per_gpu_hour": "cost.price_source",
    "cost.price_as_of": "cost.price_source", "cost.server_price_usd": "cost.server_price_source",
    "cost.server_price_as_of": "cost.server_price_source", "facility.grid_kg_co2_per_kwh": "facility.grid_source",
    "facility.grid_as_of": "facility.grid_source",
}
COMPUTED = "aiplan calculation"
USD = EXCEL_FORMATS["usd"]
HEADER_FILL = "DDE6F0"


def cell_value(value: Any, kind: str = "") -> tuple[Any, str | None]:
    """(what the cell holds, its number format): numbers stay numbers, dates become dates,
    booleans "yes"/"no", lists joined text; never JSON."""
    if value is None:
        return None, None
    if isinstance(value, bool):
        return ("yes" if value else "no"), None
    if isinstance(value, (int, float)):
        return value, EXCEL_FORMATS.get(kind, "#,##0.###")
    if kind == "date" or (isinstance(value, str) and len(value) == 10 and parse_date(value)):
        day = parse_date(value)
        if day is not None and len(str(value)) == 10:
            return day, EXCEL_FORMATS["date"]
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)), None
    if isinstance(value, Mapping):
        return "; ".join(f"{k} {v}" for k, v in value.items()), None
    return str(value), None


def _sheet(book: Any, title: str, header: Iterable[str], rows: Iterable[Iterable[Any]],
           formats: Iterable[Iterable[str | None]] | None = None) -> Any:
    """A sheet: bold frozen header, one row per item, number formats, sized columns."""
    from openpyxl.styles import Alignment, Font, PatternFill

    ws = book.create_sheet(title[:31])
    header = list(header)
    ws.append(header)
    for cell in ws[1]:
        cell.font = Font(bold=True)
        cell.fill = PatternFill("solid", fgColor=HEADER_FILL)
    formats = list(formats) if formats is not None else None
    widths = [len(h) for h in header]
    for i, row in enumerate(rows):
        row = list(row)
        ws.append(row)
        for j, value in enumerate(row):
            c = ws.cell(row=i + 2, column=j + 1)
            fmt = formats[i][j] if formats is not None and j < len(formats[i]) else None
            if fmt:
                c.number_format = fmt
            if isinstance(value, str) and len(value) > 60:
                c.alignment = Alignment(wrap_text=True, vertical="top")
            text = value.isoformat() if isinstance(value, _dt.date) else (
                f"{value:,.2f}" if isinstance(value, float) else str(value if value is not None else ""))
            widths[j] = max(widths[j], len(text) + (3 if fmt and "$" in fmt else 1))
    ws.freeze_panes = "A2"
    from openpyxl.utils import get_column_letter

    for j, width in enumerate(widths):
        ws.column_dimensions[get_column_letter(j + 1)].width = min(max(width + 2, 8), 70)
    return ws


def _split_cells(values: Iterable[tuple[Any, str]]) -> tuple[list[Any], list[str | None]]:
    cells = [cell_value(v, k) for v, k in values]
    return [c[0] for c in cells], [c[1] for c in cells]


def _summary_sheet(book: Any, result: Mapping, report_date: str) -> None:
    plan = result.get("plan") or {}
    s = client_summary(result)
    rows, formats = [], []

    def add(part: str, label: str, value: Any, kind: str = "text", unit: str = "", note: str = "") -> None:
        v, f = cell_value(value, kind)
        rows.append([part, label, v, unit, note])
        formats.append([None, None, f, None, None])

    add("Plan", "Plan name", plan.get("name"))
    for key, label in (("client", "Client"), ("prepared_by", "Prepared by")):
        if plan.get(key):
            add("Plan", label, plan[key])
    add("Plan", "Report date", report_date or _dt.date.today().isoformat(), "date")
    add("Plan", "Made with", f"aiplan {__version__}")
    add("Plan", "Question", s["question"])
    for block in s["blocks"]:
        for f in block["figures"]:
            spec = RESULT_FIELDS.get(f["key"])
            add(block["title"], f["label"], f["value"], spec.kind if spec else "usd", spec.unit if spec else "USD",
                f["detail"])
    add("Recommendation", "Recommendation", s["recommendation"])
    for r in s["risks"]:
        add("Top risks", r["severity"].capitalize(), r["message"], note=r["source"])
    _sheet(book, "Summary", ("Part", "Figure", "Value", "Unit", "Note"), rows, formats)


def key_source(result: Mapping, key: str, catalog: Any) -> str:
    """Where a result figure comes from: the catalog sources of a price or a grid figure, else the kit."""
    ids = get_path(result, KEY_SOURCES[key]) if key in KEY_SOURCES else None
    text = short_sources(str(ids).split(";"), catalog) if ids else ""
    return text or COMPUTED


def _step_sheet(book: Any, result: Mapping, step: str, catalog: Any) -> None:
    rows, formats = [], []
    for key in scalar_keys(result, STEPS[step]):
        spec = RESULT_FIELDS[key]
        v, f = cell_value(get_path(result, key), spec.kind)
        rows.append([spec.label, v, spec.unit, key_source(result, key, catalog), key])
        formats.append([None, f, None, None, None])
    ws = _sheet(book, step, ("Figure", "Value", "Unit", "Source", "Key"), rows, formats)
    ws.column_dimensions["E"].hidden = True  # the result key, for an analyst's lookups: unhide to see it


def monthly_rows(result: Mapping) -> list[list[Any]]:
    """Month, renting and owning that month, each with its cumulative (from ``cost.monthly``)."""
    out, last_cloud, last_owned = [], 0.0, 0.0
    for m in get_path(result, "cost.monthly") or []:
        cloud, owned = m.get("cloud_usd"), m.get("onprem_usd")
        out.append([m.get("month"), None if cloud is None else cloud - last_cloud, cloud,
                    None if owned is None else owned - last_owned, owned])
        last_cloud, last_owned = cloud or 0.0, owned or 0.0
    return out


def _records_sheet(book: Any, result: Mapping, key: str, title: str) -> None:
    labels, rows, items = records(result, key)
    if not rows:
        return
    formats = [[EXCEL_FORMATS.get(RESULT_FIELDS[f"{key}[].{i}"].kind) if f"{key}[].{i}" in RESULT_FIELDS
                and isinstance(v, (int, float)) and not isinstance(v, bool) else None for i, v in zip(items, row)]
               for row in rows]
    _sheet(book, title, labels, [[cell_value(v)[0] for v in row] for row in rows], formats)


def _assumption_sheet(book: Any, result: Mapping, raw_plan: Any, report_date: str, plan: Any, catalog: Any) -> None:
    rows, formats = [], []
    for r in assumptions(result, raw_plan, report_date, plan):
        spec = plan_spec(r["path"])
        kind = (spec.fmt or ("count" if spec.kind == "int" else "number")) if spec else "number"
        value = r["value"] if isinstance(r["value"], (int, float)) and not isinstance(r["value"], bool) \
            else r["value_text"]
        v, f = cell_value(value, kind)
        d, df = cell_value(r["date"], "date") if r["date"] else (None, None)
        rows.append([r["label"], v, spec.unit if spec else "", "given" if r["given"] else "default",
                     "judgement" if r["judgement"] else "", r["basis"], short_sources(r["sources"], catalog), d,
                     r["age_text"]])
        formats.append([None, f, None, None, None, None, None, df, None])
    for c in kit_constants(plan, get_path(result, "plan.workload.kind")):
        value = c["value"] if isinstance(c["value"], (int, float)) and not isinstance(c["value"], bool) \
            else c["value_text"]
        kind = "pct" if c["value_text"].endswith("%") or "% " in c["value_text"] else \
            "count" if isinstance(value, int) else "number"
        rows.append([c["label"], value, c["unit"], "kit constant", "judgement" if c["judgement"] else "",
                     c["basis"], c["source_text"], None, ""])
        formats.append([None, EXCEL_FORMATS[kind] if isinstance(value, (int, float)) else None] + [None] * 7)
    _sheet(book, "Assumptions", ("Setting", "Value", "Unit", "Given or default", "Judgement", "Where it comes from",
                                 "Source", "Date", "Age"), rows, formats)


def write_xlsx(result: Mapping, path: str | os.PathLike, raw_plan: Any = None, report_date: str = "",
               plan: Any = None) -> None:
    """The report as an Excel workbook at ``path`` (see the module docstring for its sheets)."""
    from openpyxl import Workbook

    catalog = plan_catalog(plan)
    book = Workbook()
    book.remove(book.active)
    _summary_sheet(book, result, report_date)
    for step in STEPS:
        _step_sheet(book, result, step, catalog)
    bom = bill_of_materials(result, plan)
    _sheet(book, "Bill of materials", ("Item", "Detail", "Quantity", "Unit", "Unit price", "Total", "Notes"),
           [[b["item"], b["detail"], b["quantity"], b["unit"], b["unit_price"], b["total"], b["note"]] for b in bom],
           [[None, None, "#,##0", None, USD, USD, None] for _ in bom])
    monthly = monthly_rows(result)
    _sheet(book, "Monthly cost", ("Month", "Renting", "Renting, cumulative", "Owning", "Owning, cumulative"), monthly,
           [["0", USD, USD, USD, USD] for _ in monthly])
    for key, title in (("facility.growth", "Growth"), ("cost.growth_capex", "Growth capex"),
                       ("cost.sensitivity", "Cost sensitivity"), ("cluster.candidates", "Layout candidates")):
        _records_sheet(book, result, key, title)
    _assumption_sheet(book, result, raw_plan, report_date, plan, catalog)
    checks = result.get("checks") or []
    _sheet(book, "Findings", ("Severity", "Finding", "Source"),
           [[str(c.get("severity") or "").capitalize(), c.get("message"), c.get("source") or ""] for c in checks])
    entries = bibliography(result, raw_plan, plan)
    rows, formats = [], []
    for e in entries:
        date, date_fmt = cell_value(e["date"]) if e["date"] else (None, None)
        read, read_fmt = cell_value(e["accessed"]) if e["accessed"] else (None, None)
        rows.append([e["author"], e["title"], date, e["url"], read, e["id"]])
        formats.append([None, None, date_fmt, None, read_fmt, None])
    _sheet(book, "Sources", ("Author", "Title", "Date", "URL", "Accessed", "Id"), rows, formats)
    book.save(path)
