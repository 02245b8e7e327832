"""What the plan assumed and where every figure comes from: assumptions and bibliography (plain data).

:func:`assumptions` lists every plan field that applies to the workload: its value, whether the
plan gave it or the kit assumed it, where the default comes from (a catalog row, a published
figure, or the kit's judgement), the source's date and its age on the report date.
:func:`bibliography` gives the full entries of ``data/sources.csv`` for every source the result
cites: catalog rows, prices, findings and the defaults.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.assumptions import constants
from ..core.catalog import OWNING_PARTS, buyer_figure, parse_date
from ..core.fields import format_value as fmt
from ..plan import TRAINING_ONLY, UNUSED_UNLESS
from ..present.summary import LATENCY_SOURCE
from .bom import bill_of_materials, catalog_records, plan_catalog
from .figures import format_plan_value, get_path, plan_spec

PLAN_SECTIONS = ("workload", "cluster", "facility", "cost")
#: plan defaults read from a catalog row: field -> (record, attribute holding the row's date)
CATALOG_DEFAULTS: dict[str, tuple[str, str]] = {
    "cluster.gpu": ("gpu", "as_of"), "cluster.gpus_per_node": ("server", "as_of"), "cluster.mfu": ("gpu", "as_of"),
    "cluster.fabric_switch": ("switch", "as_of"), "cluster.fabric_radix": ("switch", "as_of"),
    "facility.server": ("server", "as_of"), "facility.region": ("region", "as_of"),
    "facility.electricity_usd_per_kwh": ("region", "as_of"), "facility.grid_kg_co2_per_kwh": ("region", "as_of"),
    "cost.cloud": ("cloud", "as_of"),
}
#: plan defaults set by the buyer profile (``buyer_profiles.csv``): field -> the profile's part
PROFILE_DEFAULTS: dict[str, str] = {f"cost.{part}": part for part in OWNING_PARTS}
#: plan fields the kit resolves (null in the plan): the result key of the value it used
RESOLVED: dict[str, str] = {
    "cluster.gpus": "cluster.gpus", "cluster.tensor_parallel": "cluster.tensor_parallel",
    "cluster.pipeline_parallel": "cluster.pipeline_parallel", "cluster.data_parallel": "cluster.data_parallel",
    "cluster.expert_parallel": "cluster.expert_parallel", "cluster.zero_stage": "cluster.zero_stage",
    "cluster.checkpoint_interval_min": "checkpoint.interval_min",
    "cluster.storage_read_gb_per_s": "storage.read_gb_per_s",
    "cluster.storage_write_gb_per_s": "storage.write_gb_per_s",
    "cluster.dataset_tb": "storage.dataset_tb", "facility.power_module_kw": "facility.power_module_kw",
    "cost.network_cost_fraction": "cost.network_cost_fraction", "cluster.mfu": "compute.mfu",
    "cluster.run_overhead": "compute.overhead_factor",
}
#: a serving plan's layout fields the kit resolves: the result key of the value it used (the serving layout)
SERVING_RESOLVED: dict[str, str] = {
    "cluster.tensor_parallel": "inference.tensor_parallel", "cluster.pipeline_parallel": "inference.pipeline_parallel",
    "cluster.expert_parallel": "inference.expert_parallel",
    "cluster.attention_data_parallel": "inference.attention_data_parallel",
    "cluster.disaggregated": "inference.disaggregated",
}
#: what the report calls the model and the data of a catalog record
RECORD_WORDS = {"gpu": "the GPU catalog", "server": "the server catalog", "switch": "the switch catalog",
                "cloud": "the cloud price list", "region": "the grid region table"}
_SNAKE = re.compile(r"\b(?:(workload|cluster|facility|cost)\.)?([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b")


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """A nested mapping as ``{"a.b": value}``."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def humanise(text: str, section: str = "") -> str:
    """Field names in a schema text replaced by their labels ("deadline_days" -> "Deadline"; a field of another
    section by its path: "workload.weight_precision" -> "Weight precision").

    >>> humanise("workload.weight_precision where it differs", "workload")
    'Weight precision where it differs'
    """

    def label(m: re.Match) -> str:
        where = m.group(1) or section
        spec = plan_spec(f"{where}.{m.group(2)}") if where else None
        return spec.label if spec is not None and spec.label else m.group(2).replace("_", " ")

    return _SNAKE.sub(label, text)


def age_text(date: Any, today: _dt.date) -> str:
    """How old a date is on ``today``, for people ("1.5 years"); "" without a date."""
    day = parse_date(date)
    return "" if day is None else fmt(max((today - day).days, 0), "days")


def _report_day(report_date: str) -> _dt.date:
    return parse_date(report_date) or _dt.date.today()


def _split(ids: Any) -> list[str]:
    return [i.strip() for i in str(ids or "").split(";") if i.strip()]


def short_sources(ids: Iterable[str], catalog: Any) -> str:
    """Short footnotes ("Author (year), Title") of source ids, joined by "; "."""
    return "; ".join(catalog.sources[i].short() for i in ids if i in catalog.sources)


def cite(ids: Iterable[str], refs: Mapping[str, int], catalog: Any, most: int = 2) -> str:
    """A short citation for a table cell: "Author (year) [n]" for the first ``most`` sources, then "+k more"."""
    known = [i for i in dict.fromkeys(ids) if i in catalog.sources]
    parts = []
    for i in known[:most]:
        parts.append(catalog.sources[i].author_year() + (f" [{refs[i]}]" if i in refs else ""))
    extra = len(known) - most
    return "; ".join(parts) + (f" and {extra} more" if extra > 0 else "")


def _default_origin(path: str, spec: Any, records: Mapping[str, Any], result: Mapping,
                    catalog: Any) -> tuple[str, list[str], str, bool]:
    """(where the default comes from, source ids, date, whether it is a judgement) of an assumed plan field."""
    profile = get_path(result, "plan.cost.buyer_profile")
    if path in PROFILE_DEFAULTS and profile:
        try:
            fig = buyer_figure(catalog, profile, PROFILE_DEFAULTS[path])
        except KeyError:
            return "the kit's default", [], "", bool(spec.judgement)
        return (f"the {profile.replace('-', ' ')} buyer's published figure" if fig.status != "estimate"
                else f"the {profile.replace('-', ' ')} buyer's figure (the kit's judgement: none published)",
                _split(fig.sources), fig.as_of, fig.status == "estimate")
    if path == "cost.server_price_usd":
        kind = get_path(result, "cost.server_price_kind")
        return (f"the catalog's {kind}" if kind else "the catalog's price",
                _split(get_path(result, "cost.server_price_source")),
                str(get_path(result, "cost.server_price_as_of") or ""), False)
    if path in CATALOG_DEFAULTS:
        name, date_attr = CATALOG_DEFAULTS[path]
        rec = records.get(name)
        if rec is not None:
            basis = spec.default_doc or f"from {RECORD_WORDS[name]}"
            return basis, _split(rec.sources), str(getattr(rec, date_attr, None) or rec.as_of or ""), False
    ids = list(spec.sources)
    basis = spec.default_doc or ("the kit's judgement" if spec.judgement else "a published figure" if ids
                                 else "the kit's default")
    return basis, ids, "", bool(spec.judgement)


def record_name(path: str, value: Any, records: Mapping[str, Any]) -> str | None:
    """The name of the catalog row a plan id names ("h100-sxm" -> "NVIDIA H100 SXM5 80GB"), or None."""
    name = {"cluster.gpu": "gpu", "facility.server": "server", "cluster.fabric_switch": "switch",
            "cost.cloud": "cloud", "facility.region": "region"}.get(path)
    rec = records.get(name) if name else None
    if rec is None or getattr(rec, "id", None) != value:
        return None
    if name == "cloud":
        return rec.name
    return rec.name.split(" (", 1)[0]


def _unused(path: str, result: Mapping) -> bool:
    """Whether a plan field changes nothing in this plan (:data:`aiplan.plan.UNUSED_UNLESS`)."""
    if path not in UNUSED_UNLESS:
        return False
    other, applies = UNUSED_UNLESS[path]
    return not applies(get_path(result, f"plan.{other}"))


def assumptions(result: Mapping, raw_plan: Any = None, report_date: str = "", plan: Any = None) -> list[dict]:
    """Every plan field that applies, as ``{path, label, meaning, value, value_text, given, basis, judgement,
    sources, source_text, date, age_text}``; defaults first, judgement values flagged."""
    catalog = plan_catalog(plan)
    records = catalog_records(result, plan)
    given = flatten(raw_plan if isinstance(raw_plan, Mapping) else {})
    kind = get_path(result, "plan.workload.kind")
    today = _report_day(report_date)
    rows = []
    for section in PLAN_SECTIONS:
        for name, value in (get_path(result, f"plan.{section}") or {}).items():
            path = f"{section}.{name}"
            spec = plan_spec(path)
            serving_unused = kind == "inference" and path in TRAINING_ONLY
            if spec is None or (spec.kinds and kind not in spec.kinds) or serving_unused or _unused(path, result):
                continue
            is_given = path in given or any(g.startswith(path + ".") for g in given)
            resolved = SERVING_RESOLVED.get(path) if kind == "inference" else None
            if value is None and (resolved or path in RESOLVED):
                value = get_path(result, resolved or RESOLVED[path])
            basis, ids, date, judged = (("given in the plan", [], "", False) if is_given
                                        else _default_origin(path, spec, records, result, catalog))
            if value is None and basis == spec.default_doc:  # the default says itself in the value column
                basis = "the kit's default"
            if ids and not date:
                date = next((catalog.sources[i].date for i in ids if i in catalog.sources and
                             catalog.sources[i].date), "") or ""
            rows.append({"path": path, "label": spec.label or name, "meaning": humanise(spec.doc, section),
                         "value": value, "value_text": record_name(path, value, records) or (
                             format_plan_value(path, value) if value is not None
                             else humanise(spec.default_doc or "not set", section)),
                         "given": is_given, "basis": humanise(basis, section),
                         "judgement": judged and not is_given, "sources": ids,
                         "source_text": short_sources(ids, catalog), "date": str(date),
                         "age_text": age_text(date, today) if date else ""})
    return sorted(rows, key=lambda r: r["given"])


def _constant_text(value: Any, unit: str, kind: str = "") -> str:
    if kind == "pct":
        return f"{fmt(value, 'pct')} {unit}".strip()
    if isinstance(value, (tuple, list)):
        return ", ".join(fmt(v, "count") for v in value) + (f" {unit}" if unit else "")
    kind = "count" if isinstance(value, int) and not isinstance(value, bool) else "number"
    return fmt(value, kind, unit) if unit and kind == "count" else f"{fmt(value, kind)} {unit}".strip()


def kit_constants(plan: Any = None, kind: str | None = None) -> list[dict]:
    """The kit's own constants (:data:`aiplan.core.assumptions.REGISTRY`) as ``{name, label, value,
    value_text, unit, basis, used_for, judgement, sources, source_text}``, sourced figures first: every one, or
    those that apply to plans of the workload ``kind`` (a serving plan lists no training constants)."""
    catalog = plan_catalog(plan)
    return [{"name": c.name, "label": c.label, "value": c.value, "value_text": _constant_text(c.value, c.unit, c.fmt),
             "unit": c.unit, "basis": c.basis, "used_for": c.used_for, "judgement": c.judgement,
             "sources": list(c.sources), "source_text": short_sources(c.sources, catalog)}
            for c in constants(kind)]


def cited_ids(result: Mapping, raw_plan: Any = None, plan: Any = None) -> list[str]:
    """Ids of every source the result cites: catalog rows, prices, published API prices, findings, defaults, the
    bill of materials."""
    ids: list[str] = []
    for rec in catalog_records(result, plan).values():
        ids += _split(getattr(rec, "sources", ""))
    model = plan_catalog(plan).models.get(get_path(result, "plan.model")) if isinstance(
        get_path(result, "plan.model"), str) else None
    ids += _split(getattr(model, "sources", ""))
    for key, value in flatten({k: v for k, v in result.items() if k != "plan"}).items():
        if key.endswith("_source"):
            ids += [i for i in _split(value) if re.fullmatch(r"[a-z0-9][a-z0-9.\-]*", i)]
    for check in result.get("checks") or []:
        ids += list(check.get("sources") or [])
    for price in get_path(result, "cost.api_prices") or []:
        ids += _split(price.get("sources"))
    for row in assumptions(result, raw_plan, plan=plan):
        ids += row["sources"]
    for line in bill_of_materials(result, plan):
        ids += _split(line["sources"])
    for c in constants(get_path(result, "plan.workload.kind")):
        ids += list(c.sources)
    if get_path(result, "plan.workload.kind") == "inference":
        ids.append(LATENCY_SOURCE)
    return list(dict.fromkeys(ids))


def bibliography(result: Mapping, raw_plan: Any = None, plan: Any = None) -> list[dict[str, str]]:
    """Full entries ``{id, author, title, date, url, accessed}`` of the cited sources, by author."""
    sources = plan_catalog(plan).sources
    entries = [sources[i] for i in cited_ids(result, raw_plan, plan) if i in sources]
    return [{"id": s.id, "author": s.author, "title": s.title, "date": s.date or "", "url": s.url or "",
             "accessed": s.accessed or ""} for s in sorted(entries, key=lambda s: (s.author.lower(), s.date or ""))]


def footnote_index(result: Mapping, raw_plan: Any = None, plan: Any = None) -> dict[str, int]:
    """Source id -> its number in :func:`bibliography` (for "[3]" references)."""
    return {e["id"]: n for n, e in enumerate(bibliography(result, raw_plan, plan), start=1)}
