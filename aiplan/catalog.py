"""The catalog: GPUs, servers, models, cloud offers and grid regions.

Rows live in ``data/*.csv`` (shipped inside the package as ``aiplan/data``).
Each file is read into typed, frozen records and validated on load: required
columns, types, positive numbers, unique ids, references between tables, and a
``status``, ``source`` and ``as_of`` on every row.

Users extend or override the catalog without editing the package: put files
with the same names and columns (any subset of them, any subset of rows) in a
folder and name it in the ``AIPLAN_CATALOG_PATH`` environment variable
(several folders separated by ``os.pathsep``), in a plan's ``catalog:`` list, or
pass ``load_catalog(extra_dirs)``. A row whose id exists replaces it; a new id
extends the table. Later folders win.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import PlanError, Problem, unknown

STATUSES = ("CONFIRMED", "CORROBORATED", "UNCONFIRMED", "DERIVED", "P", "S", "JUDGEMENT")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def data_dir() -> Path:
    """Folder of the shipped catalog: ``aiplan/data`` when installed, ``data/`` in a checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "data", here.parent / "data"):
        if (candidate / "gpus.csv").is_file():
            return candidate
    raise FileNotFoundError(f"aiplan catalog not found next to {here}")


# --- records ------------------------------------------------------------------
# Field metadata "kind": str | float+ (positive) | float0 (non-negative) | int+ |
# int0 | bool | date | status; "optional": empty cell allowed (None).


def col(kind: str, optional: bool = False, doc: str = "") -> Any:
    return dataclasses.field(metadata={"kind": kind, "optional": optional, "doc": doc})


@dataclass(frozen=True)
class GPU:
    """One accelerator. Peaks are dense (datasheet sparse figures / 2)."""

    id: str = col("str")
    name: str = col("str")
    vendor: str = col("str")
    form_factor: str = col("str")
    memory_gb: float = col("float+", doc="HBM/GDDR capacity [GB]")
    memory_bw_gb_per_s: float = col("float+", doc="memory bandwidth [GB/s]")
    bf16_tflops: float = col("float+", doc="dense BF16/FP16 peak [TFLOP/s]")
    fp8_tflops: float | None = col("float+", True, "dense FP8 peak [TFLOP/s]")
    int8_tops: float | None = col("float+", True, "dense INT8 peak [TOP/s]")
    fp4_tflops: float | None = col("float+", True, "dense FP4 peak [TFLOP/s]")
    tdp_w: float = col("float+", doc="board power [W]")
    scale_up_gb_per_s: float = col("float+", doc="per-GPU scale-up bandwidth [GB/s]")
    scale_up_domain: int = col("int+", doc="GPUs in one scale-up domain")
    network_gbps_per_gpu: float = col("float+", doc="scale-out NIC bandwidth per GPU [Gb/s]")
    mfu_default: float = col("float+", doc="default model FLOP utilisation (judgement)")
    mfu_low: float = col("float+", doc="low end of the plausible MFU band")
    mfu_high: float = col("float+", doc="high end of the plausible MFU band")
    default_server: str = col("str", doc="id in servers")
    default_cloud: str | None = col("str", True, "id in clouds")
    status: str = col("status")
    source: str = col("str")
    as_of: str = col("date")
    notes: str | None = col("str", True)


@dataclass(frozen=True)
class Server:
    """One server (or rack-scale system treated as one node)."""

    id: str = col("str")
    name: str = col("str")
    gpu: str = col("str", doc="id in gpus")
    gpus_per_node: int = col("int+")
    max_power_kw: float = col("float+", doc="maximum system power [kW]")
    rack_units: float = col("float+", doc="height [U]")
    weight_kg: float = col("float+", doc="weight [kg]")
    price_usd: float | None = col("float+", True, "list or street price [USD]")
    price_as_of: str | None = col("date", True)
    nics_per_node: int = col("int+", doc="compute-fabric NICs")
    nic_gbps: float = col("float+", doc="speed of one compute NIC [Gb/s]")
    status: str = col("status")
    source: str = col("str")
    as_of: str = col("date")
    notes: str | None = col("str", True)


@dataclass(frozen=True)
class Model:
    """A transformer architecture (config.json fields)."""

    id: str = col("str")
    name: str = col("str")
    params_published: float | None = col("float+", True, "published total parameters")
    layers: int = col("int+")
    hidden: int = col("int+")
    heads: int = col("int+")
    kv_heads: int = col("int+")
    head_dim: int | None = col("int+", True)
    ffn_hidden: int = col("int+", doc="dense MLP inner size")
    vocab: int = col("int+")
    context: int = col("int+", doc="maximum context length [tokens]")
    tied_embeddings: bool = col("bool")
    gated_mlp: bool = col("bool")
    norm: str = col("str", doc="rmsnorm | layernorm")
    qkv_bias: bool = col("bool")
    mlp_bias: bool = col("bool")
    position: str = col("str", doc="rope | learned | alibi")
    max_position: int | None = col("int+", True, "learned position rows")
    experts: int = col("int+", doc="routed experts (1 = dense)")
    active_experts: int = col("int+", doc="routed experts per token")
    shared_experts: int = col("int0")
    moe_ffn_hidden: int | None = col("int+", True)
    dense_layers: int | None = col("int0", True, "leading dense layers in an MoE model")
    attention: str = col("str", doc="mha | gqa | mqa | mla")
    kv_lora_rank: int | None = col("int+", True)
    q_lora_rank: int | None = col("int+", True)
    qk_rope_head_dim: int | None = col("int+", True)
    qk_nope_head_dim: int | None = col("int+", True)
    v_head_dim: int | None = col("int+", True)
    sliding_window: int | None = col("int+", True)
    status: str = col("status")
    source: str = col("str")
    as_of: str = col("date")
    notes: str | None = col("str", True)


@dataclass(frozen=True)
class CloudOffer:
    """A priced cloud instance. Prices are per instance-hour [USD/h]."""

    id: str = col("str")
    provider: str = col("str")
    instance: str = col("str")
    gpu: str = col("str", doc="id in gpus")
    gpus: int = col("int+")
    region: str = col("str")
    on_demand_usd_per_hr: float = col("float+")
    reserved_1y_usd_per_hr: float | None = col("float+", True)
    reserved_3y_usd_per_hr: float | None = col("float+", True)
    spot_usd_per_hr: float | None = col("float+", True)
    status: str = col("status")
    source: str = col("str")
    as_of: str = col("date")
    notes: str | None = col("str", True)


@dataclass(frozen=True)
class Region:
    """Grid carbon intensity (and electricity price where sourced) of a region."""

    id: str = col("str")
    name: str = col("str")
    grid_kg_co2_per_kwh: float = col("float+", doc="[kgCO2e/kWh]")
    electricity_usd_per_kwh: float | None = col("float+", True, "[USD/kWh]")
    status: str = col("status")
    source: str = col("str")
    as_of: str = col("date")
    notes: str | None = col("str", True)


#: table name -> (file name, record type, singular label for messages)
TABLES: dict[str, tuple[str, type, str]] = {
    "gpus": ("gpus.csv", GPU, "GPU id"),
    "servers": ("servers.csv", Server, "server id"),
    "models": ("models.csv", Model, "model id"),
    "clouds": ("clouds.csv", CloudOffer, "cloud offer id"),
    "regions": ("regions.csv", Region, "region id"),
}


def _parse(kind: str, text: str) -> Any:
    """Parse one cell; raise ValueError with what is allowed."""
    if kind in ("str", "status"):
        if kind == "status" and text not in STATUSES:
            raise ValueError(f"must be one of {', '.join(STATUSES)}")
        return text
    if kind == "date":
        if not _DATE.match(text):
            raise ValueError("must be a date YYYY-MM-DD")
        return text
    if kind == "bool":
        low = text.lower()
        if low not in ("true", "false"):
            raise ValueError("must be true or false")
        return low == "true"
    number = float(text.replace("_", ""))  # ValueError on text
    if not math.isfinite(number):
        raise ValueError("must be a finite number")
    if kind.startswith("int"):
        if not number.is_integer():
            raise ValueError("must be a whole number")
        number = int(number)
    if kind.endswith("+") and number <= 0:
        raise ValueError("must be a positive number")
    if kind.endswith("0") and number < 0:
        raise ValueError("must be zero or positive")
    return number


def read_table(path: Path, record: type) -> tuple[dict[str, Any], list[Problem]]:
    """Read one CSV into ``{id: record}``; return the records and the problems found."""
    problems: list[Problem] = []
    rows: dict[str, Any] = {}
    seen: set[str] = set()
    fields = dataclasses.fields(record)
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        missing = [f.name for f in fields if f.name not in header and not f.metadata["optional"]]
        if missing:
            return {}, [Problem(str(path), f"missing required columns {missing}", has_value=False)]
        for lineno, raw in enumerate(reader, start=2):
            values: dict[str, Any] = {}
            row_id = (raw.get("id") or "").strip()
            where = f"{path.name}:{lineno} ({row_id or 'no id'})"
            for f in fields:
                text = (raw.get(f.name) or "").strip()
                if not text:
                    if not f.metadata["optional"]:
                        problems.append(Problem(f"{where}.{f.name}", "is required", has_value=False))
                    values[f.name] = None
                    continue
                try:
                    values[f.name] = _parse(f.metadata["kind"], text)
                except ValueError as exc:
                    msg = str(exc) if "must" in str(exc) else "must be a number"
                    problems.append(Problem(f"{where}.{f.name}", msg, text))
            if row_id in seen:
                problems.append(Problem(where, "duplicate id in the same file", row_id))
            seen.add(row_id)
            if not any(p.path.startswith(where) for p in problems):
                rows[row_id] = record(**values)
    return rows, problems


@dataclass(frozen=True)
class Catalog:
    """All catalog tables, keyed by id."""

    gpus: dict[str, GPU]
    servers: dict[str, Server]
    models: dict[str, Model]
    clouds: dict[str, CloudOffer]
    regions: dict[str, Region]
    sources: tuple[str, ...] = ()

    def table(self, name: str) -> dict[str, Any]:
        return getattr(self, name)

    def get(self, table: str, key: Any, path: str) -> Any:
        """Row ``key`` of ``table``; a PlanError naming ``path`` with suggestions if absent."""
        rows = self.table(table)
        if isinstance(key, str) and key in rows:
            return rows[key]
        raise PlanError(unknown(path, key, TABLES[table][2], rows))

    def records(self, table: str) -> list[dict[str, Any]]:
        """Rows of ``table`` as plain dicts (for JSON, tables and DataFrames)."""
        return [dataclasses.asdict(r) for r in self.table(table).values()]


def _check_references(cat: Catalog) -> list[Problem]:
    problems = []
    for g in cat.gpus.values():
        if not g.mfu_low <= g.mfu_default <= g.mfu_high <= 1:
            problems.append(Problem(f"gpus.csv ({g.id}).mfu_*",
                                    "must satisfy 0 < mfu_low <= mfu_default <= mfu_high <= 1",
                                    (g.mfu_low, g.mfu_default, g.mfu_high)))
        if g.default_server not in cat.servers:
            problems.append(unknown(f"gpus.csv ({g.id}).default_server", g.default_server, "server id", cat.servers))
        if g.default_cloud is not None and g.default_cloud not in cat.clouds:
            problems.append(unknown(f"gpus.csv ({g.id}).default_cloud", g.default_cloud, "cloud offer id", cat.clouds))
    for table in ("servers", "clouds"):
        for r in cat.table(table).values():
            if r.gpu not in cat.gpus:
                problems.append(unknown(f"{TABLES[table][0]} ({r.id}).gpu", r.gpu, "GPU id", cat.gpus))
    for m in cat.models.values():
        if m.active_experts > m.experts:
            problems.append(Problem(f"models.csv ({m.id}).active_experts", f"must be at most experts ({m.experts})",
                                    m.active_experts))
    return problems


def catalog_dirs(extra: Iterable[str | os.PathLike] = ()) -> tuple[str, ...]:
    """The shipped folder, then AIPLAN_CATALOG_PATH folders, then ``extra``."""
    dirs = [str(data_dir())]
    env = os.environ.get("AIPLAN_CATALOG_PATH", "")
    dirs += [d for d in env.split(os.pathsep) if d]
    dirs += [str(d) for d in extra]
    return tuple(dirs)


def load_catalog(extra_dirs: Iterable[str | os.PathLike] = ()) -> Catalog:
    """Load and validate the catalog (cached per list of folders).

    Parameters
    ----------
    extra_dirs : iterable of path
        User folders with override/extension CSVs, applied after the shipped
        catalog and ``AIPLAN_CATALOG_PATH``.

    Raises
    ------
    PlanError
        listing every invalid cell, duplicate id or dangling reference.
    """
    return _load(catalog_dirs(extra_dirs))


@lru_cache(maxsize=16)
def _load(dirs: tuple[str, ...]) -> Catalog:
    tables: dict[str, dict[str, Any]] = {name: {} for name in TABLES}
    problems: list[Problem] = []
    for i, folder in enumerate(dirs):
        path = Path(folder)
        if not path.is_dir():
            problems.append(Problem("catalog", "must be an existing folder of catalog CSV files", folder))
            continue
        for name, (filename, record, _) in TABLES.items():
            file = path / filename
            if not file.is_file():
                if i == 0:
                    problems.append(Problem(str(file), "shipped catalog file is missing", has_value=False))
                continue
            rows, found = read_table(file, record)
            problems += found
            tables[name].update(rows)
    if problems:
        raise PlanError(problems)
    cat = Catalog(**tables, sources=dirs)
    problems = _check_references(cat)
    if problems:
        raise PlanError(problems)
    return cat
