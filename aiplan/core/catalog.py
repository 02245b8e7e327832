"""The catalog: GPUs, servers, fabric switches, models, cloud offers, grid regions and sources.

Rows live in ``data/*.csv`` (shipped inside the package as ``aiplan/data``).
Each file is read into typed, frozen records and validated on load: required
columns, types, positive numbers, unique ids, references between tables, and a
``status``, ``sources`` and ``as_of`` on every row. ``sources`` lists ids of the
bibliography ``data/sources.csv`` (id, author, title, date, url, accessed); every
id must resolve. ``status`` is one of :data:`STATUSES`:

- ``published``: read in the primary source (vendor datasheet or documentation,
  paper, official model configuration, the provider's own price list);
- ``secondary``: only reported second-hand (press, blogs, aggregators, price trackers);
- ``derived``: arithmetic from cited figures (the notes give the formula);
- ``estimate``: our judgement where no source states the figure (the notes say why);
  replace these with a client's quotes (``aiplan catalog TABLE --status estimate``).

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
import datetime as _dt
import io
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import PlanError, Problem, clean_text, unknown
from .inputs import MAX_CSV_BYTES, read_text

STATUSES = ("published", "secondary", "derived", "estimate")
AVAILABILITY = ("shipping", "announced")
#: serving precisions of weights and KV cache (fp4: NVFP4/MXFP4; int4: weight-only, e.g. AWQ)
SERVING_PRECISIONS = ("bf16", "fp8", "fp4", "int8", "int4")
#: units a datasheet memory figure may be in (GPU table, ``memory_unit``)
MEMORY_UNITS = ("GiB", "GB")
#: bytes of one GiB and one MiB
GIB_BYTES, MIB_BYTES = 2.0 ** 30, 2.0 ** 20
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_PARTIAL_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


@lru_cache(maxsize=1)
def data_dir() -> Path:
    """Folder of the shipped catalog: ``aiplan/data`` when installed, ``data/`` in a checkout."""
    here = Path(__file__).resolve().parent.parent  # the aiplan package folder
    for candidate in (here / "data", here.parent / "data"):
        if (candidate / "gpus.csv").is_file():
            return candidate
    raise FileNotFoundError(f"aiplan catalog not found next to {here}")


@lru_cache(maxsize=16)
def _name_values(path: str, stamp: int) -> dict[str, float]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {row["name"]: float(row["value"]) for row in csv.DictReader(fh)}


def read_constants(path: str | Path) -> dict[str, float]:
    """The ``name,value`` rows of a fitted-constants CSV as floats; read again when the file changes."""
    path = os.fspath(path)
    return _name_values(path, os.stat(path).st_mtime_ns)


@lru_cache(maxsize=32)
def calibration_file(name: str) -> str:
    """Path of a file of the shipped ``calibration/`` folder."""
    return os.path.join(data_dir(), "calibration", name)


def forget_constants() -> None:
    """Drop the read constants (after a refit writes them, however coarse the file clock)."""
    _name_values.cache_clear()


def parse_date(text: Any) -> _dt.date | None:
    """A full or partial ISO date ("2024", "2024-06", "2024-06-30") as its first day; None otherwise."""
    m = re.match(r"^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?", str(text or ""))
    if not m:
        return None
    try:
        return _dt.date(int(m[1]), int(m[2] or 1), int(m[3] or 1))
    except ValueError:
        return None


def parse_number(text: Any) -> float | None:
    """A number in a data cell ("1,024", "2.5e12", 7) as a float; None for an empty or non-numeric
    cell and for inf/NaN. The one parser of numbers the calibration tables hold.

    >>> parse_number("1,024"), parse_number(""), parse_number("n/a"), parse_number("inf")
    (1024.0, None, None, None)
    """
    try:
        value = float(str(text).replace(",", ""))
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


#: the MLPerf Inference benchmark whose latency limits are the kit's reference (Llama 2 70B, v5.1 rules)
MLPERF_REFERENCE = ("llama2-70b", "v5.1")


@lru_cache(maxsize=1)
def mlperf_benchmarks() -> dict[tuple[str, str], dict]:
    """The MLPerf Inference benchmark definitions of ``calibration/serving_benchmarks.csv`` by
    (benchmark, round): datasets, token counts and latency limits as the rules publish them."""
    with open(data_dir() / "calibration" / "serving_benchmarks.csv", newline="", encoding="utf-8") as fh:
        return {(r["benchmark"], r["round"]): r for r in csv.DictReader(fh)}


def mlperf_latency_limits_ms(scenario: str, benchmark: str = MLPERF_REFERENCE[0],
                             round_: str = MLPERF_REFERENCE[1]) -> tuple[float | None, float | None]:
    """(99th-percentile TTFT, TPOT) limits of an MLPerf Inference scenario [ms]; (None, None) for
    Offline. The one home of the limits: the plan's default targets, the cards' context and the
    calibration all read them from the published rules.

    >>> mlperf_latency_limits_ms("Server"), mlperf_latency_limits_ms("Interactive")
    ((2000.0, 200.0), (450.0, 40.0))
    """
    bench = mlperf_benchmarks()[(benchmark, round_)]
    if scenario == "Interactive":
        return parse_number(bench["interactive_ttft_ms_limit"]), parse_number(bench["interactive_tpot_ms_limit"])
    if scenario == "Server":
        return parse_number(bench["ttft_ms_limit"]), parse_number(bench["tpot_ms_limit"])
    return None, None


def memory_capacity_gb(memory, unit=None, driver_mib=None):
    """GPU memory in GB (10^9 B): the driver's total where known, else the datasheet figure in its unit.

    Vendors print HBM and GDDR capacities in binary units and call them "GB" (H200 "141 GB" is
    141 GiB of HBM3e); the driver reports slightly less (H100 81,559 MiB of 81,920; B300 275,040
    of 294,912, which NVIDIA's own MLPerf systems call "270GB"). Reading the figure as decimal GB
    understates memory by about 7%.

    Parameters
    ----------
    memory : float
        datasheet figure [GiB or GB].
    unit : str or None
        ``"GiB"`` (default) or ``"GB"``.
    driver_mib : float or None
        total the driver reports [MiB].

    Returns
    -------
    float
        [GB].

    References
    ----------
    .. [1] nvidia-smi totals: H100 81559 MiB, A100 80GB 81920 MiB (modal-labs/modal-client pull
       request 2797) [modal-client-pr-2797]; B200 183359 MiB [nvidia-trtllm-issue-10278].

    Examples
    --------
    H100 SXM: the driver's 81,559 MiB are 85.5 GB; its datasheet "80 GB" read as GiB is 85.9 GB.

    >>> round(memory_capacity_gb(80, "GiB", 81559), 1), round(memory_capacity_gb(80), 1)
    (85.5, 85.9)
    """
    if driver_mib:
        return driver_mib * MIB_BYTES / 1e9
    return memory * (GIB_BYTES / 1e9 if unit in (None, "GiB") else 1.0)


# --- records ------------------------------------------------------------------
# Field metadata "kind": str | float+ (positive) | float0 (non-negative) | int+ |
# int0 | bool | date | status; "optional": empty cell allowed (None).


def col(kind: str, optional: bool = False, doc: str = "", default: Any = dataclasses.MISSING) -> Any:
    return dataclasses.field(metadata={"kind": kind, "optional": optional, "doc": doc}, default=default)


@dataclass(frozen=True)
class GPU:
    """One accelerator. Peaks are dense (datasheet sparse figures / 2)."""

    id: str = col("str")
    name: str = col("str")
    vendor: str = col("str")
    family: str = col("str", doc="architecture generation (calibration groups GPUs by it)")
    form_factor: str = col("str")
    availability: str = col("availability", doc="shipping | announced")
    memory_gb: float = col("float+", doc="HBM/GDDR capacity as the datasheet prints it, in memory_unit")
    memory_unit: str | None = col("memory_unit", True, "unit the datasheet figure is in: GiB (binary, as vendors "
                                                       "mean HBM and GDDR capacities; the default) or GB")
    memory_driver_mib: float | None = col("float+", True, "total memory the driver reports (nvidia-smi) [MiB]")
    memory_bw_gb_per_s: float = col("float+", doc="memory bandwidth [GB/s]")
    bf16_tflops: float = col("float+", doc="dense BF16/FP16 peak [TFLOP/s]")
    fp8_tflops: float | None = col("float+", True, "dense FP8 peak [TFLOP/s]")
    int8_tops: float | None = col("float+", True, "dense INT8 peak [TOP/s]")
    fp4_tflops: float | None = col("float+", True, "dense FP4 peak [TFLOP/s]")
    tdp_w: float | None = col("float+", True, "board power [W]")
    scale_up_gb_per_s: float = col("float+", doc="per-GPU scale-up bandwidth [GB/s]")
    scale_up_domain: int = col("int+", doc="GPUs in one scale-up domain")
    nics_per_gpu: float | None = col("float+", True, "scale-out NICs per GPU in the reference server")
    network_gbps_per_gpu: float | None = col("float+", True, "scale-out NIC bandwidth per GPU [Gb/s]")
    default_server: str = col("str", doc="id in servers")
    default_cloud: str | None = col("str", True, "id in clouds")
    status: str = col("status")
    sources: str = col("ids", doc="ids in sources.csv, separated by ;")
    as_of: str = col("date")
    notes: str | None = col("str", True)

    @property
    def capacity_gb(self) -> float:
        """Memory of one GPU in GB (10^9 B) as the kit uses it: the driver's figure where the catalog
        cites one, else the datasheet figure in the unit the vendor meant (:func:`memory_capacity_gb`)."""
        return memory_capacity_gb(self.memory_gb, self.memory_unit, self.memory_driver_mib)


@dataclass(frozen=True)
class Server:
    """One server (or rack-scale system treated as one node)."""

    id: str = col("str")
    name: str = col("str")
    gpu: str = col("str", doc="id in gpus")
    gpus_per_node: int = col("int+")
    availability: str = col("availability", doc="shipping | announced")
    max_power_kw: float | None = col("float+", True, "maximum system power [kW]")
    rack_units: float | None = col("float+", True, "height [U]")
    weight_kg: float | None = col("float+", True, "weight [kg]")
    price_usd: float | None = col("float+", True, "list or street price [USD]")
    price_as_of: str | None = col("date", True)
    nics_per_node: int | None = col("int+", True, "compute-fabric NICs")
    nic_gbps: float | None = col("float+", True, "speed of one compute NIC [Gb/s]")
    default_switch: str | None = col("str", True, "id in switches: the compute-fabric switch of the vendor's design")
    status: str = col("status")
    sources: str = col("ids", doc="ids in sources.csv, separated by ;")
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
    moe_layer_step: int | None = col("int+", True, "with experts: every n-th layer is MoE (Llama 4 Maverick 2)")
    global_layers: int | None = col("int0", True, "with a sliding window: layers that attend to the whole context")
    status: str = col("status")
    sources: str = col("ids", doc="ids in sources.csv, separated by ;")
    as_of: str = col("date")
    notes: str | None = col("str", True)
    precision_attention: str | None = col("precision", True, "published checkpoint format of the attention weights "
                                                             "(empty: bf16)", None)
    precision_dense: str | None = col("precision", True, "published format of the dense MLP, shared experts and "
                                                         "router (empty: bf16)", None)
    precision_experts: str | None = col("precision", True, "published format of the routed experts (empty: bf16)", None)
    precision_embeddings: str | None = col("precision", True, "published format of the embeddings and output head "
                                                              "(empty: bf16)", None)
    mtp_modules: int | None = col("int0", True, "multi-token-prediction modules shipped with the weights (a built-in "
                                                "draft for speculative decoding)", None)


#: providers' own spelling of their names (catalog ids are lower case)
PROVIDER_NAMES = {"aws": "AWS", "gcp": "Google Cloud", "azure": "Azure", "oracle": "Oracle", "coreweave": "CoreWeave",
                  "crusoe": "Crusoe", "lambda": "Lambda", "nebius": "Nebius", "runpod": "RunPod",
                  "tensorwave": "TensorWave", "together": "Together AI", "hyperstack": "Hyperstack",
                  "semianalysis": "SemiAnalysis", "vultr": "Vultr", "cr8dl": "CR8DL", "digitalocean": "DigitalOcean",
                  "verda": "Verda"}


@dataclass(frozen=True)
class CloudOffer:
    """A priced cloud instance. Prices are per instance-hour [USD/h]."""

    id: str = col("str")
    provider: str = col("str")
    instance: str = col("str")
    gpu: str = col("str", doc="id in gpus")
    gpus: int = col("int+")
    region: str = col("str")
    on_demand_usd_per_hr: float | None = col("float+", True)
    reserved_1y_usd_per_hr: float | None = col("float+", True)
    reserved_3y_usd_per_hr: float | None = col("float+", True)
    spot_usd_per_hr: float | None = col("float+", True)
    usd_per_hr_low: float | None = col("float+", True, "lowest published price of the offer (regions, quotes)")
    usd_per_hr_high: float | None = col("float+", True, "highest published price of the offer")
    derived_columns: str | None = col("str", True, "price columns derived rather than published, separated by ;")
    status: str = col("status")
    sources: str = col("ids", doc="ids in sources.csv, separated by ;")
    as_of: str = col("date")
    notes: str | None = col("str", True)
    scale_up_gpus: int | None = col("int+", True, "for an offer priced per GPU but rented on a larger machine: the "
                                    "GPUs of that machine's scale-up domain (NVLink, Infinity Fabric or ICI) a "
                                    "tensor-parallel group can span (the GPU's reference server, the NVL72 rack, the "
                                    "TPU slice); empty = the instance's own GPUs")

    @property
    def scale_up(self) -> int:
        """GPUs a tensor-parallel group can span on this offer [GPU]: ``scale_up_gpus``, else ``gpus``."""
        return self.scale_up_gpus or self.gpus

    @property
    def name(self) -> str:
        """Provider and instance as a client reads them ("AWS p5.48xlarge")."""
        provider = PROVIDER_NAMES.get(self.provider) or (
            self.provider.upper() if len(self.provider) <= 3 else self.provider.title())
        return f"{provider} {self.instance}"


@dataclass(frozen=True)
class Region:
    """Grid carbon intensity (and electricity price where sourced) of a region."""

    id: str = col("str")
    name: str = col("str")
    grid_kg_co2_per_kwh: float = col("float+", doc="[kgCO2e/kWh]")
    electricity_usd_per_kwh: float | None = col("float+", True, "[USD/kWh]")
    status: str = col("status")
    sources: str = col("ids", doc="ids in sources.csv, separated by ;")
    as_of: str = col("date")
    notes: str | None = col("str", True)


@dataclass(frozen=True)
class Switch:
    """A compute-fabric switch."""

    id: str = col("str")
    name: str = col("str")
    vendor: str = col("str")
    ports: int = col("int+", doc="ports at port_gbps (the radix)")
    port_gbps: float = col("float+", doc="speed of one port [Gb/s]")
    power_w: float | None = col("float+", True, "maximum power with optics [W]")
    typical_power_w: float | None = col("float+", True, "typical power in use [W] (energy; power_w sizes the facility)")
    rack_units: float | None = col("float+", True, "height [U]")
    price_usd: float | None = col("float+", True, "list or street price [USD]")
    price_as_of: str | None = col("date", True)
    status: str = col("status")
    sources: str = col("ids", doc="ids in sources.csv, separated by ;")
    as_of: str = col("date")
    notes: str | None = col("str", True)


@dataclass(frozen=True)
class Source:
    """One bibliography entry: who published what, when, where, and when we read it."""

    id: str = col("str")
    author: str = col("str", doc="author(s) or organisation")
    title: str = col("str")
    date: str | None = col("partial_date", True, "publication date: YYYY, YYYY-MM or YYYY-MM-DD")
    url: str | None = col("str", True, "URL or https://doi.org/...")
    accessed: str | None = col("date", True, "when the kit's authors read it")

    def author_year(self) -> str:
        """"Author (year)", or the author alone without a date (a citation in running text)."""
        return f"{self.author} ({self.date[:4]})" if self.date else self.author

    def short(self) -> str:
        """"Author (year), Title" (a footnote)."""
        return f"{self.author_year()}, {self.title}"


def short_name(record: Any, fallback: str = "") -> str:
    """A catalog record's name without its parenthesised remarks ("NVIDIA GB200 NVL72 rack", "NVIDIA Quantum-2
    QM9700"), for sentences and tables a client reads."""
    name = getattr(record, "name", None) or fallback
    return name.split(" (", 1)[0]


#: the buyer profiles of ``buyer_profiles.csv``, each setting the owning-cost parts it publishes
BUYER_PROFILES = ("hyperscaler", "large-neocloud", "enterprise")
#: the parts of owning a buyer profile sets (plan fields of the ``cost`` section)
OWNING_PARTS = ("years", "cost_of_capital", "colocation_usd_per_kw_month", "support_usd_per_gpu_year",
                "maintenance_fraction_per_year")
#: kinds of server price: a vendor's list price, a reseller's street price, a large buyer's volume price
#: (an analyst's average selling price) or an analyst's estimate of a system's price
PRICE_KINDS = ("list", "street", "volume", "estimate")
CONDITIONS = ("new", "used")


@dataclass(frozen=True)
class ServerPrice:
    """One dated price of a server (``servers.csv``), new or used, of one kind [USD per server]."""

    id: str = col("str")
    server: str = col("str", doc="id in servers")
    price_usd: float = col("float+", doc="price of one server [USD]")
    kind: str = col("price_kind", doc="list | street | volume | estimate")
    condition: str = col("condition", doc="new | used")
    buyer: str | None = col("profile", True, "the buyer profile the price is for (empty: any buyer)")
    status: str = col("status")
    sources: str = col("ids", doc="ids in sources.csv, separated by ;")
    as_of: str = col("date")
    notes: str | None = col("str", True)


@dataclass(frozen=True)
class BuyerFigure:
    """One owning-cost part of a buyer profile (depreciation life, cost of capital, colocation, support)."""

    id: str = col("str")
    profile: str = col("profile", doc="hyperscaler | large-neocloud | enterprise")
    part: str = col("owning_part", doc="the plan field of the cost section it sets")
    value: float = col("float0")
    unit: str = col("str")
    status: str = col("status")
    sources: str = col("ids", doc="ids in sources.csv, separated by ;")
    as_of: str = col("date")
    notes: str | None = col("str", True)


@dataclass(frozen=True)
class ApiPrice:
    """A published per-token API price of a model at one provider [USD per million tokens]."""

    id: str = col("str")
    model: str = col("str", doc="id in models")
    provider: str = col("str", doc="the API provider as it names itself (DeepInfra, Fireworks AI)")
    offering: str = col("str", doc="the provider's model name or price tier the price is for")
    input_usd_per_mtok: float = col("float+", doc="price of a million prompt (input) tokens [USD]")
    output_usd_per_mtok: float = col("float+", doc="price of a million output tokens [USD]")
    precision: str | None = col("str", True, "the precision the provider serves the model at, when it says")
    status: str = col("status")
    sources: str = col("ids", doc="ids in sources.csv, separated by ;")
    as_of: str = col("date", doc="the day the price was read from the provider's page")
    notes: str | None = col("str", True)


#: the price column of each pricing of a cloud offer
PRICING_COLUMN = {"on-demand": "on_demand_usd_per_hr", "reserved-1y": "reserved_1y_usd_per_hr",
                  "reserved-3y": "reserved_3y_usd_per_hr", "spot": "spot_usd_per_hr"}
PRICE_COLUMNS = tuple(PRICING_COLUMN.values())

#: table name -> (file name, record type, singular label for messages)
TABLES: dict[str, tuple[str, type, str]] = {
    "gpus": ("gpus.csv", GPU, "GPU id"),
    "servers": ("servers.csv", Server, "server id"),
    "switches": ("switches.csv", Switch, "switch id"),
    "models": ("models.csv", Model, "model id"),
    "clouds": ("clouds.csv", CloudOffer, "cloud offer id"),
    "regions": ("regions.csv", Region, "region id"),
    "server_prices": ("server_prices.csv", ServerPrice, "server price id"),
    "buyer_profiles": ("buyer_profiles.csv", BuyerFigure, "buyer profile figure id"),
    "api_prices": ("api_prices.csv", ApiPrice, "API price id"),
    "sources": ("sources.csv", Source, "source id"),
}


_CHOICES = {"status": STATUSES, "availability": AVAILABILITY, "price_kind": PRICE_KINDS, "condition": CONDITIONS,
            "profile": BUYER_PROFILES, "owning_part": OWNING_PARTS, "memory_unit": MEMORY_UNITS,
            "precision": SERVING_PRECISIONS}


def _parse_text(kind: str, text: str) -> Any:
    if kind in _CHOICES and text not in _CHOICES[kind]:
        raise ValueError(f"must be one of {', '.join(_CHOICES[kind])}")
    if kind == "date" and not _DATE.match(text):
        raise ValueError("must be a date YYYY-MM-DD")
    if kind == "partial_date" and not _PARTIAL_DATE.match(text):
        raise ValueError("must be a date YYYY, YYYY-MM or YYYY-MM-DD")
    if kind == "ids" and not all(_ID.match(i.strip()) for i in text.split(";")):
        raise ValueError("must be source ids (lowercase, hyphens) separated by ;")
    if kind == "bool":
        if text.lower() not in ("true", "false"):
            raise ValueError("must be true or false")
        return text.lower() == "true"
    return ";".join(i.strip() for i in text.split(";")) if kind == "ids" else text


def _parse(kind: str, text: str) -> Any:
    """Parse one cell; raise ValueError with what is allowed."""
    if not (kind.startswith("int") or kind.startswith("float")):
        return _parse_text(kind, text)
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


_ID = re.compile(r"^[a-z0-9][a-z0-9.\-]*$")


def _read_rows(path: Path) -> tuple[list[str], list[dict]]:
    """Header and rows of a catalog CSV: UTF-8 (a byte-order mark allowed), at most MAX_CSV_BYTES."""
    text = read_text(path, MAX_CSV_BYTES, what="catalog CSV file")
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        return list(reader.fieldnames or []), list(reader)
    except csv.Error as exc:  # e.g. a cell longer than the csv module's field limit
        raise PlanError(Problem(clean_text(path), f"is not a valid CSV file ({clean_text(exc)})",
                                has_value=False)) from None


def _record(record: type, raw: dict, where: str, problems: list[Problem]) -> Any:
    """One row as a record, or None (its problems appended)."""
    values: dict[str, Any] = {}
    n_before = len(problems)
    for f in dataclasses.fields(record):
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
    return record(**values) if len(problems) == n_before else None


def read_table(path: Path, record: type) -> tuple[dict[str, Any], list[Problem]]:
    """Read one CSV into ``{id: record}``; return the records and the problems found."""
    problems: list[Problem] = []
    rows: dict[str, Any] = {}
    header, raw_rows = _read_rows(path)
    missing = [f.name for f in dataclasses.fields(record) if f.name not in header and not f.metadata["optional"]]
    if missing:
        return {}, [Problem(clean_text(path), f"is missing the required columns {', '.join(missing)}",
                            has_value=False)]
    seen: set[str] = set()
    for lineno, raw in enumerate(raw_rows, start=2):
        row_id = (raw.get("id") or "").strip()
        where = f"{path.name}:{lineno} ({clean_text(row_id) or 'no id'})"
        if row_id in seen:
            problems.append(Problem(where, "duplicate id in the same file", row_id))
            continue
        seen.add(row_id)
        rec = _record(record, raw, where, problems)
        if rec is not None:
            rows[row_id] = rec
    return rows, problems


@dataclass(frozen=True)
class Catalog:
    """All catalog tables, keyed by id."""

    gpus: dict[str, GPU]
    servers: dict[str, Server]
    switches: dict[str, Switch]
    models: dict[str, Model]
    clouds: dict[str, CloudOffer]
    regions: dict[str, Region]
    server_prices: dict[str, ServerPrice]
    buyer_profiles: dict[str, BuyerFigure]
    api_prices: dict[str, ApiPrice]
    sources: dict[str, Source]
    folders: tuple[str, ...] = ()

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


def _ref(problems: list[Problem], where: str, value: Any, rows: dict, kind: str) -> None:
    if value is not None and value not in rows:
        problems.append(unknown(where, value, kind, rows))


def _check_api_prices(cat: Catalog) -> list[Problem]:
    """Each published API price names a catalog model."""
    problems: list[Problem] = []
    for a in cat.api_prices.values():
        _ref(problems, f"api_prices.csv ({a.id}).model", a.model, cat.models, "model id")
    return problems


def _check_references(cat: Catalog) -> list[Problem]:
    """References between tables: GPUs, servers, switches, clouds and every row's source ids."""
    problems: list[Problem] = []
    for g in cat.gpus.values():
        _ref(problems, f"gpus.csv ({g.id}).default_server", g.default_server, cat.servers, "server id")
        _ref(problems, f"gpus.csv ({g.id}).default_cloud", g.default_cloud, cat.clouds, "cloud offer id")
    for table in ("servers", "clouds"):
        for r in cat.table(table).values():
            _ref(problems, f"{TABLES[table][0]} ({r.id}).gpu", r.gpu, cat.gpus, "GPU id")
    for c in cat.clouds.values():
        if all(getattr(c, col) is None for col in PRICE_COLUMNS):
            problems.append(Problem(f"clouds.csv ({c.id})", "needs at least one price (on-demand, reserved or spot)",
                                    has_value=False))
    for s in cat.servers.values():
        _ref(problems, f"servers.csv ({s.id}).default_switch", s.default_switch, cat.switches, "switch id")
    for p in cat.server_prices.values():
        _ref(problems, f"server_prices.csv ({p.id}).server", p.server, cat.servers, "server id")
    seen: dict[tuple, str] = {}
    for f in cat.buyer_profiles.values():
        if (f.profile, f.part) in seen:
            problems.append(Problem(f"buyer_profiles.csv ({f.id})", f"repeats {f.profile} {f.part} of "
                                    f"{seen[(f.profile, f.part)]}", has_value=False))
        seen[(f.profile, f.part)] = f.id
    for m in cat.models.values():
        if m.active_experts > m.experts:
            problems.append(Problem(f"models.csv ({m.id}).active_experts", f"must be at most experts ({m.experts})",
                                    m.active_experts))
    return problems + _check_source_ids(cat)


def _check_source_ids(cat: Catalog) -> list[Problem]:
    """Every id in a row's ``sources`` is an entry of the bibliography."""
    problems: list[Problem] = []
    for table, (filename, _, _) in TABLES.items():
        rows = cat.table(table).values() if table != "sources" else ()
        for r in rows:
            for sid in (r.sources or "").split(";"):
                _ref(problems, f"{filename} ({r.id}).sources", sid, cat.sources, "source id")
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
    dirs = catalog_dirs(extra_dirs)
    return _load(dirs, _stamp(dirs))


def _stamp(dirs: tuple[str, ...]) -> tuple:
    """What the cache keys on besides the folders: each catalog file's size and modification time."""
    out = []
    for folder in dirs:
        for filename, _, _ in TABLES.values():
            try:
                st = os.stat(os.path.join(folder, filename))
                out.append((st.st_size, st.st_mtime_ns))
            except OSError:
                out.append(None)
    return tuple(out)


@lru_cache(maxsize=16)
def _load(dirs: tuple[str, ...], stamp: tuple = ()) -> Catalog:
    tables: dict[str, dict[str, Any]] = {name: {} for name in TABLES}
    problems: list[Problem] = []
    for i, folder in enumerate(dirs):
        path = Path(folder)
        try:
            files = {name: path / filename for name, (filename, _, _) in TABLES.items()
                     if (path / filename).is_file()} if path.is_dir() else None
        except OSError as exc:  # a path too long, a folder we may not read
            problems.append(Problem("catalog", f"cannot be read ({exc.strerror or exc})", clean_text(folder)))
            continue
        if files is None:
            problems.append(Problem("catalog", "must be an existing folder of catalog CSV files", clean_text(folder)))
            continue
        if i == 0 and len(files) < len(TABLES):
            problems.append(Problem(str(path), "shipped catalog files are missing", has_value=False))
        elif not files:
            problems.append(Problem("catalog", f"folder holds none of the catalog files "
                                    f"({', '.join(f for f, _, _ in TABLES.values())})", clean_text(folder)))
        for name, file in files.items():
            rows, found = read_table(file, TABLES[name][1])
            problems += found
            tables[name].update(rows)
    if problems:
        raise PlanError(problems)
    cat = Catalog(**tables, folders=dirs)
    problems = _check_references(cat) + _check_api_prices(cat)
    if problems:
        raise PlanError(problems)
    return cat


# --- owning: buyer profiles and dated server prices ---------------------------------------------------

#: the kinds of server price each buyer pays, most likely first: large buyers pay volume prices where
#: an analyst publishes them, then street prices; an enterprise pays street prices, the list price
#: being the fallback (flagged by the cost step)
PRICE_PREFERENCE = {"hyperscaler": ("volume", "street", "estimate", "list"),
                    "large-neocloud": ("volume", "street", "estimate", "list"),
                    "enterprise": ("street", "list", "estimate", "volume")}


def buyer_figure(catalog: Catalog, profile: str, part: str) -> BuyerFigure:
    """The published figure of owning-cost ``part`` for buyer ``profile`` (``buyer_profiles.csv``).

    Raises
    ------
    KeyError
        when the catalog has no such figure (a user catalog that drops a row).
    """
    for f in catalog.buyer_profiles.values():
        if f.profile == profile and f.part == part:
            return f
    raise KeyError(f"buyer_profiles.csv has no {part} for {profile}")


def pick_server_price(catalog: Catalog, server: str, profile: str, date: Any = None,
                      condition: str = "new") -> ServerPrice | None:
    """The price of ``server`` a ``profile`` buyer pays on ``date`` (``server_prices.csv``), or None.

    The newest price on or before ``date`` (any date when None; the earliest later one when none is
    that old) of the kind the buyer is most likely to pay (:data:`PRICE_PREFERENCE`), a price for this
    buyer before a price for any buyer; prices for another buyer are never used. ``condition`` "used"
    takes used prices, else (none published) the new ones.

    Examples
    --------
    An A100 server bought in mid-2023 at its street price, not the 2021 DGX list price:

    >>> cat = load_catalog()
    >>> pick_server_price(cat, "hgx-a100-8gpu", "enterprise", "2023-12-31").price_usd
    148390.0
    >>> pick_server_price(cat, "dgx-a100", "enterprise").kind
    'list'
    """
    rows = [p for p in catalog.server_prices.values() if p.server == server and p.buyer in (None, profile)]
    chosen = [p for p in rows if p.condition == condition] or [p for p in rows if p.condition == "new"]
    if not chosen:
        return None
    day = parse_date(date) if date else None
    if day is not None:
        before = [p for p in chosen if parse_date(p.as_of) <= day]
        chosen = before or [min(chosen, key=lambda p: p.as_of)]
    order = PRICE_PREFERENCE.get(profile, PRICE_KINDS)
    return min(chosen, key=lambda p: (order.index(p.kind) if p.kind in order else len(order),
                                      p.buyer != profile, _negated(p.as_of)))


def _negated(as_of: str) -> int:
    """A sort key putting the newest date first."""
    return -parse_date(as_of).toordinal()
