"""Checks on the catalog CSVs beyond what loading enforces: plausible ranges, units, dates, sources.

Loading (:func:`aiplan.core.catalog.load_catalog`) already rejects malformed cells, duplicate ids and
dangling references. :func:`check_catalog` adds what a reviewer would look for: values in a
physically plausible range (a GPU of 8 TB would be a unit mistake), dates not in the future, prices
in a sensible order, every source with a URL, every bibliography entry cited somewhere. It runs in
CI through ``tools/check_catalog.py``; ``data/README.md`` says how to update the catalog.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterable

from .catalog import PRICE_COLUMNS, TABLES, Catalog, data_dir, load_catalog, parse_date
from .errors import PlanError

#: plausible range of each numeric column: table -> column -> (low, high), inclusive
RANGES: dict[str, dict[str, tuple[float, float]]] = {
    "gpus": {"memory_gb": (8, 400), "memory_bw_gb_per_s": (100, 30_000), "bf16_tflops": (50, 10_000),
             "fp8_tflops": (50, 40_000), "fp4_tflops": (100, 80_000), "int8_tops": (50, 40_000), "tdp_w": (50, 3_000),
             "scale_up_gb_per_s": (16, 10_000), "scale_up_domain": (1, 20_000), "nics_per_gpu": (0.05, 8),
             "network_gbps_per_gpu": (10, 3_200)},
    "servers": {"gpus_per_node": (1, 144), "max_power_kw": (0.1, 500), "rack_units": (1, 60), "weight_kg": (5, 3_000),
                "price_usd": (1_000, 1e8), "nics_per_node": (1, 200), "nic_gbps": (10, 3_200)},
    "switches": {"ports": (4, 1_024), "port_gbps": (10, 3_200), "power_w": (50, 20_000), "rack_units": (1, 20),
                 "price_usd": (100, 1e7)},
    "models": {"layers": (1, 1_000), "hidden": (64, 100_000), "heads": (1, 1_024), "kv_heads": (1, 1_024),
               "vocab": (1_000, 1_000_000), "context": (512, 100_000_000), "experts": (1, 10_000),
               "params_published": (1e6, 1e14)},
    "clouds": {"gpus": (1, 144), **{c: (0.01, 5_000) for c in PRICE_COLUMNS},
               "usd_per_hr_low": (0.01, 5_000), "usd_per_hr_high": (0.01, 5_000)},
    "regions": {"grid_kg_co2_per_kwh": (0.0, 1.5), "electricity_usd_per_kwh": (0.005, 1.0)},
    "server_prices": {"price_usd": (1_000, 1e8)},
}
#: plausible range of each owning-cost part of ``buyer_profiles.csv`` (a percentage typed as 11 for 0.11)
PART_RANGES: dict[str, tuple[float, float]] = {
    "years": (1, 15), "cost_of_capital": (0, 0.5), "colocation_usd_per_kw_month": (10, 2_000),
    "support_usd_per_gpu_year": (0, 50_000), "maintenance_fraction_per_year": (0, 0.5)}
#: bibliography entries that may lack a URL: the two seed articles the kit was written from, which
#: were supplied as text (publisher named, no address found)
SOURCES_WITHOUT_URL = ("seed-",)


def _ranges(cat: Catalog) -> Iterable[str]:
    for table, columns in RANGES.items():
        filename = TABLES[table][0]
        for row in cat.table(table).values():
            for column, (lo, hi) in columns.items():
                value = getattr(row, column)
                if value is not None and not lo <= value <= hi:
                    yield f"{filename} ({row.id}).{column}: {value:g} is outside the plausible range {lo:g}..{hi:g}"


def _consistency(cat: Catalog) -> Iterable[str]:
    for g in cat.gpus.values():
        faster = [(g.fp8_tflops, "fp8_tflops"), (g.fp4_tflops, "fp4_tflops")]
        for value, name in faster:
            if value is not None and value < g.bf16_tflops:
                yield f"gpus.csv ({g.id}).{name}: {value:g} is below bf16_tflops {g.bf16_tflops:g} (dense figures?)"
    for s in cat.servers.values():
        gpu = cat.gpus[s.gpu]
        if s.max_power_kw and gpu.tdp_w and not gpu.tdp_w * s.gpus_per_node / 1000 <= s.max_power_kw:
            yield f"servers.csv ({s.id}).max_power_kw: {s.max_power_kw:g} kW is less than its GPUs draw"
    for c in cat.clouds.values():
        od = c.on_demand_usd_per_hr
        for column in PRICE_COLUMNS[1:]:
            price = getattr(c, column)
            if od is not None and price is not None and price >= od:
                yield f"clouds.csv ({c.id}).{column}: {price:g} is not below on-demand {od:g}"
        if c.usd_per_hr_low and c.usd_per_hr_high and c.usd_per_hr_low > c.usd_per_hr_high:
            yield f"clouds.csv ({c.id}): usd_per_hr_low is above usd_per_hr_high"
        for column in filter(None, (c.derived_columns or "").split(";")):
            if column not in PRICE_COLUMNS:
                yield f"clouds.csv ({c.id}).derived_columns: {column!r} is not a price column"


def _parts(cat: Catalog) -> Iterable[str]:
    for f in cat.buyer_profiles.values():
        lo, hi = PART_RANGES[f.part]
        if not lo <= f.value <= hi:
            yield f"buyer_profiles.csv ({f.id}).value: {f.value:g} is outside the plausible range {lo:g}..{hi:g}"


def _dates(cat: Catalog, today: _dt.date) -> Iterable[str]:
    for table, (filename, _, _) in TABLES.items():
        for row in cat.table(table).values():
            for column in ("as_of", "price_as_of", "date", "accessed"):
                value = getattr(row, column, None)
                if value and parse_date(value) > today:
                    yield f"{filename} ({row.id}).{column}: {value} is in the future"


def _sources(cat: Catalog, check_cited: bool) -> Iterable[str]:
    for s in cat.sources.values():
        if not s.url and not s.id.startswith(SOURCES_WITHOUT_URL):
            yield f"sources.csv ({s.id}): has no url"
    if not check_cited:
        return
    cited = {i for table in TABLES if table != "sources" for row in cat.table(table).values()
             for i in (row.sources or "").split(";")} | set(extra_citations())
    for sid in sorted(set(cat.sources) - cited):
        yield f"sources.csv ({sid}): is cited nowhere (no catalog row, docstring or finding)"


def extra_citations() -> set[str]:
    """Source ids cited outside the catalog tables: ``[id]`` in the package's code and data files."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent  # the aiplan package folder
    found: set[str] = set()
    pattern = re.compile(r"\[([a-z0-9][a-z0-9.\-]*(?:;\s?[a-z0-9][a-z0-9.\-]*)*)\]")
    files = list(root.rglob("*.py")) + list(root.rglob("*.csv"))

    files += list((data_dir() / "calibration").glob("*.csv")) if (data_dir() / "calibration").is_dir() else []
    tests = root.parent / "tests"  # a source checkout: the reference tests cite what they reproduce
    files += list(tests.rglob("*.py")) + list(tests.rglob("*.csv")) if tests.is_dir() else []
    quoted = re.compile(r"[\"']([a-z][a-z0-9]*(?:[.\-][a-z0-9]+)+)[\"']")  # findings cite ids as strings
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in pattern.findall(text):
            found |= {i.strip() for i in match.split(";")}
        if path.suffix == ".py":
            found |= set(quoted.findall(text))
        if path.suffix == ".csv" and "sources" in text.split("\n", 1)[0]:
            import csv
            import io

            for row in csv.DictReader(io.StringIO(text)):
                found |= {i.strip() for i in (row.get("sources") or "").split(";") if i.strip()}
    return found


def check_catalog(folders: Iterable[str | os.PathLike] = (), today: _dt.date | None = None,
                  check_cited: bool = True) -> list[str]:
    """Problems with the catalog (the shipped one, plus ``folders``), one line each; [] if none.

    Loading errors (malformed cells, duplicate ids, unknown references or source ids) come first,
    as :class:`~aiplan.core.errors.PlanError` lines.
    """
    try:
        cat = load_catalog(folders)
    except PlanError as exc:
        return [str(p) for p in exc.problems]
    today = today or _dt.date.today()
    return [*_ranges(cat), *_consistency(cat), *_parts(cat), *_dates(cat, today), *_sources(cat, check_cited)]
