"""The plan: schema, defaults, validation, YAML load and dump.

A plan is a YAML file or the same nested dict. :func:`load_plan` fills every
default (from the schema below and from the catalog), validates every field
and every cross-field rule, and raises one :class:`~aiplan.errors.PlanError`
listing all problems found ("cluster.gpus: must be a positive integer, got
-8"). The filled plan (``Plan.data``) is what ``evaluate`` reports back, and it
round-trips through YAML unchanged.

Fields that are ``None`` after loading are left for the kit to decide (e.g. the
parallel layout) and are reported in the result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import yaml

from .catalog import GPU, Catalog, CloudOffer, Model, Region, Server, load_catalog
from .errors import PlanError, Problem, unknown

KINDS = ("pretrain", "finetune", "inference")
TRAIN = ("pretrain", "finetune")
LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")


@dataclass(frozen=True)
class F:
    """Specification of one plan field.

    ``default`` is a value, a callable ``(ctx) -> value`` (``ctx`` holds the
    filled sections so far and the catalog), or ``None`` (left for the kit).
    ``kinds`` lists the workload kinds the field applies to (empty = all).
    """

    kind: str  # int | float | str | bool | choice | id | list
    default: Any = None
    lo: float | None = None
    lo_open: bool = False
    hi: float | None = None
    choices: tuple = ()
    table: str | None = None
    kinds: tuple = ()
    unit: str = ""
    doc: str = ""


def _gpu(ctx) -> GPU:
    return ctx.catalog.gpus[ctx.data["cluster"]["gpu"]]


def _server(ctx) -> Server:
    return ctx.catalog.servers[ctx.data["facility"]["server"]]


def _region(ctx) -> Region:
    return ctx.catalog.regions[ctx.data["facility"]["region"]]


def _seq_len_default(ctx) -> int:
    return int(min(4096, ctx.model.context))


#: Llama 3 405B: 419 unexpected interruptions in a 54-day snapshot on 16,384
#: H100 (S07 §3.3.4; facility_network_cost.md §4.2) -> per GPU-year [1/yr].
LLAMA3_INTERRUPTIONS_PER_GPU_YEAR = 419 / (16384 * 54 / 365.25)

WORKLOAD: dict[str, F] = {
    "kind": F("choice", "pretrain", choices=KINDS, doc="what the cluster is for"),
    "tokens": F("float", None, lo=0, lo_open=True, kinds=TRAIN, unit="tokens",
                doc="training tokens (dataset tokens x epochs)"),
    "method": F("choice", "full", choices=("full", "lora", "qlora"), kinds=("finetune",),
                doc="fine-tuning method"),
    "lora_rank": F("int", 16, lo=1, kinds=("finetune",), doc="LoRA rank r"),
    "lora_targets": F("list", ["q", "k", "v", "o"], choices=LORA_TARGETS, kinds=("finetune",),
                      doc="matrices that get LoRA adapters"),
    "seq_len": F("int", _seq_len_default, lo=1, kinds=TRAIN, unit="tokens", doc="training sequence length"),
    "micro_batch": F("int", 1, lo=1, kinds=TRAIN, unit="sequences", doc="micro-batch per GPU"),
    "global_batch_tokens": F("float", lambda ctx: 4.0e6 if ctx.data["workload"]["kind"] == "pretrain" else 1.0e6,
                             lo=0, lo_open=True, kinds=TRAIN, unit="tokens", doc="tokens per optimizer step"),
    "precision": F("choice", "bf16", choices=("fp32", "fp16", "bf16", "fp8"), kinds=TRAIN,
                   doc="training compute precision (mixed precision keeps fp32 master weights)"),
    "optimizer": F("choice", "adamw", choices=("adamw", "adamw-8bit", "sgd", "adafactor"), kinds=TRAIN),
    "recompute": F("choice", "selective", choices=("none", "selective", "full"), kinds=TRAIN,
                   doc="activation recomputation (Korthikanti et al. 2022)"),
    "flash_attention": F("bool", True, doc="fused attention: no s^2 activation term"),
    "requests_per_s": F("float", 1.0, lo=0, lo_open=True, kinds=("inference",), unit="1/s"),
    "prompt_tokens": F("int", 1000, lo=1, kinds=("inference",), unit="tokens"),
    "output_tokens": F("int", 250, lo=1, kinds=("inference",), unit="tokens"),
    "weight_precision": F("choice", "bf16", choices=("bf16", "fp8", "int8", "int4"), kinds=("inference",)),
    "kv_precision": F("choice", "bf16", choices=("bf16", "fp8", "int8", "int4"), kinds=("inference",)),
    "max_batch": F("int", None, lo=1, kinds=("inference",), unit="sequences",
                   doc="cap on concurrent sequences per replica (default: as many as fit)"),
}

CLUSTER: dict[str, F] = {
    "gpu": F("id", "h100-sxm", table="gpus"),
    "gpus": F("int", None, lo=1, doc="GPU count (or give deadline_days)"),
    "deadline_days": F("float", None, lo=0, lo_open=True, kinds=TRAIN, unit="days"),
    "gpus_per_node": F("int", lambda ctx: _server(ctx).gpus_per_node, lo=1),
    "tensor_parallel": F("int", None, lo=1),
    "pipeline_parallel": F("int", None, lo=1),
    "data_parallel": F("int", None, lo=1),
    "expert_parallel": F("int", None, lo=1),
    "zero_stage": F("int", None, lo=0, hi=3, doc="0..3 (FSDP full shard = 3)"),
    "sequence_parallel": F("bool", True, kinds=TRAIN),
    "mfu": F("float", lambda ctx: _gpu(ctx).mfu_default, lo=0, lo_open=True, hi=1,
             doc="model FLOP utilisation (default: the catalog's calibrated value)"),
    "usable_memory_fraction": F("float", 0.90, lo=0, lo_open=True, hi=1,
                                doc="share of GPU memory usable by the job (CUDA context, fragmentation)"),
    "interruptions_per_gpu_year": F("float", LLAMA3_INTERRUPTIONS_PER_GPU_YEAR, lo=0, unit="1/yr",
                                    doc="job-stopping interruptions per GPU-year (Llama 3 405B)"),
    "restart_min": F("float", 10.0, lo=0, unit="min", doc="time to restart after an interruption"),
    "checkpoint_interval_min": F("float", None, lo=0, lo_open=True, kinds=TRAIN, unit="min",
                                 doc="default: the Young/Daly optimum"),
    "fabric_radix": F("int", 64, lo=4, doc="switch ports (64 = NDR QM9700)"),
    "oversubscription": F("float", 1.0, lo=1, doc="leaf downlink:uplink bandwidth ratio"),
    "in_network_reduction": F("bool", True, doc="SHARP-style all-reduce in the switches"),
    "storage_read_gb_per_s": F("float", None, lo=0, lo_open=True, unit="GB/s"),
    "storage_write_gb_per_s": F("float", None, lo=0, lo_open=True, unit="GB/s"),
    "dataset_tb": F("float", None, lo=0, lo_open=True, unit="TB"),
    "checkpoints_kept": F("int", 3, lo=1, kinds=TRAIN),
    "storage_growth_factor": F("float", 10.0, lo=1, doc="headroom on dataset storage (seed: plan for 10x)"),
}

FACILITY: dict[str, F] = {
    "server": F("id", lambda ctx: _gpu(ctx).default_server, table="servers"),
    "pue": F("float", 1.3, lo=1, doc="power usage effectiveness (total / IT); 1.3 = AI DC spec target "
                                  "(Epoch energy.py citing SemiAnalysis; Uptime 2023 average 1.58)"),
    "rack_kw": F("float", 40.0, lo=0, lo_open=True, unit="kW",
                 doc="power budget per rack (NVIDIA H100 RA: 4 DGX H100 per rack is 40.8 kW)"),
    "redundancy": F("choice", "N+1", choices=("N", "N+1", "2N", "2N+1")),
    "power_module_kw": F("float", None, lo=0, lo_open=True, unit="kW",
                         doc="UPS/power module size; redundancy adds whole modules (Schneider WP75); "
                             "default: the smallest standard size giving about four modules for the load"),
    "region": F("id", "us", table="regions"),
    "electricity_usd_per_kwh": F("float", lambda ctx: _region(ctx).electricity_usd_per_kwh or 0.0806,
                                 lo=0, unit="USD/kWh"),
    "grid_kg_co2_per_kwh": F("float", lambda ctx: _region(ctx).grid_kg_co2_per_kwh, lo=0, unit="kg/kWh"),
    "cooling": F("choice", "auto", choices=("auto", "air", "rear-door", "liquid")),
    "floor_m2_per_rack": F("float", 2.8, lo=0, lo_open=True, unit="m2",
                           doc="white space per rack incl. aisles (30 ft2; enterprise 25-30, AI halls 30-50 ft2 [S])"),
    "floor_kg_per_rack": F("float", 1000.0, lo=0, lo_open=True, unit="kg",
                           doc="floor-loading limit per rack position (raised floors 700-1,000 kg [S])"),
    "growth_per_year": F("float", 0.0, lo=0, doc="capacity growth per year (0.5 = +50%)"),
    "growth_years": F("int", 3, lo=1, hi=10),
}

COST: dict[str, F] = {
    "cloud": F("id", lambda ctx: _gpu(ctx).default_cloud, table="clouds"),
    "pricing": F("choice", "on-demand", choices=("on-demand", "reserved-1y", "reserved-3y", "spot")),
    "utilisation": F("float", 0.7, lo=0, lo_open=True, hi=1, doc="share of hours the cluster does useful work"),
    "years": F("float", 3.0, lo=0, lo_open=True, hi=15, unit="yr", doc="ownership / depreciation period"),
    "server_price_usd": F("float", lambda ctx: _server(ctx).price_usd, lo=0, lo_open=True, unit="USD"),
    "facility_model": F("choice", "colocation", choices=("colocation", "build")),
    "colocation_usd_per_kw_month": F("float", 184.06, lo=0, unit="USD/kW-month",
                                     doc="wholesale colocation per kW of IT load (CBRE NA H2 2024)"),
    "build_usd_per_mw": F("float", 11.5e6, lo=0, unit="USD/MW",
                          doc="facility build cost per MW of IT load (midpoint of $8-15M, UNCONFIRMED [S])"),
    "staff_usd_per_year": F("float", 250000.0, lo=0, unit="USD/yr", doc="cost of one engineer (NAG TCO default)"),
    "servers_per_engineer": F("float", 75.0, lo=0, lo_open=True,
                              doc="GPU servers per engineer ('1 FTE per 50-100 GPU servers' [S])"),
    "maintenance_fraction_per_year": F("float", 0.10, lo=0, hi=1,
                                       doc="maintenance/support per year as a share of hardware capex"),
    "network_cost_fraction": F("float", 0.19, lo=0, hi=0.9, doc="interconnect share of cluster cost"),
    "storage_usd_per_tb": F("float", 150.0, lo=0, unit="USD/TB",
                            doc="installed storage capex per TB (JUDGEMENT, no sourced figure)"),
    "hybrid_owned_fraction": F("float", 0.5, lo=0, hi=1,
                               doc="hybrid option: share of the cluster's GPUs owned (they carry the steady "
                                   "load; peaks above it are rented at the cloud price)"),
    "spot_interruptions_per_instance_month": F("float", 0.10, lo=0, unit="1/month",
                                               doc="spot reclaims per instance-month (JUDGEMENT: AWS Spot "
                                                   "Instance Advisor bands run <5% to >20% per month)"),
}

SECTIONS: dict[str, dict[str, F]] = {
    "workload": WORKLOAD,
    "cluster": CLUSTER,
    "facility": FACILITY,
    "cost": COST,
}

MODEL: dict[str, F] = {
    "from": F("id", None, table="models", doc="start from a catalog model and override fields"),
    "name": F("str", "custom model"),
    "params": F("float", None, lo=0, lo_open=True, doc="parameter count (default: from the architecture)"),
    "layers": F("int", None, lo=1),
    "hidden": F("int", None, lo=1),
    "heads": F("int", None, lo=1),
    "kv_heads": F("int", lambda m: m["heads"], lo=1),
    "head_dim": F("int", None, lo=1),
    "ffn_hidden": F("int", lambda m: 4 * m["hidden"], lo=1),
    "vocab": F("int", None, lo=1),
    "context": F("int", 4096, lo=1),
    "tied_embeddings": F("bool", False),
    "gated_mlp": F("bool", True),
    "norm": F("choice", "rmsnorm", choices=("rmsnorm", "layernorm")),
    "qkv_bias": F("bool", False),
    "mlp_bias": F("bool", False),
    "position": F("choice", "rope", choices=("rope", "learned", "alibi")),
    "max_position": F("int", None, lo=1),
    "experts": F("int", 1, lo=1),
    "active_experts": F("int", 1, lo=1),
    "shared_experts": F("int", 0, lo=0),
    "moe_ffn_hidden": F("int", None, lo=1),
    "dense_layers": F("int", None, lo=0),
    "attention": F("choice", lambda m: "mha" if m["kv_heads"] == m["heads"] else ("mqa" if m["kv_heads"] == 1 else "gqa"),
                   choices=("mha", "gqa", "mqa", "mla")),
    "kv_lora_rank": F("int", None, lo=1),
    "q_lora_rank": F("int", None, lo=1),
    "qk_rope_head_dim": F("int", None, lo=1),
    "qk_nope_head_dim": F("int", None, lo=1),
    "v_head_dim": F("int", None, lo=1),
    "sliding_window": F("int", None, lo=1),
}
MODEL_REQUIRED = ("layers", "hidden", "heads", "vocab")
TOP_LEVEL = ("name", "model", "catalog", *SECTIONS)


@dataclass
class _Ctx:
    data: dict
    catalog: Catalog
    model: Model | None = None
    deferred: list = field(default_factory=list)

    def resolve_deferred(self) -> None:
        """Fill defaults computed from other fields, once every section is read."""
        pending = self.deferred
        for _ in range(3):  # a default may depend on another default
            left = []
            for out, key, fn in pending:
                try:
                    out[key] = fn(self)
                except (KeyError, TypeError, AttributeError):
                    left.append((out, key, fn))  # depends on an invalid or unfilled field
            pending = left


@dataclass(frozen=True)
class Plan:
    """A validated plan with its catalog records resolved.

    ``data`` is the filled plan as plain data (what the result reports);
    ``model``, ``gpu``, ``server``, ``cloud`` and ``region`` are catalog records.
    """

    data: dict
    catalog: Catalog = field(repr=False)
    model: Model
    gpu: GPU
    server: Server
    cloud: CloudOffer | None
    region: Region

    @property
    def workload(self) -> dict:
        return self.data["workload"]

    @property
    def cluster(self) -> dict:
        return self.data["cluster"]

    @property
    def facility(self) -> dict:
        return self.data["facility"]

    @property
    def cost(self) -> dict:
        return self.data["cost"]

    @property
    def kind(self) -> str:
        return self.data["workload"]["kind"]


# --- value checking -------------------------------------------------------------


def _describe(spec: F) -> str:
    if spec.kind == "choice":
        return "must be one of " + ", ".join(map(str, spec.choices))
    if spec.kind == "bool":
        return "must be true or false"
    if spec.kind in ("str", "id"):
        return "must be a text value"
    if spec.kind == "list":
        return "must be a list of " + ", ".join(spec.choices)
    word = "integer" if spec.kind == "int" else "number"
    if spec.hi is None and ((spec.lo == 0 and spec.lo_open) or (spec.kind == "int" and spec.lo == 1)):
        return f"must be a positive {word}"
    parts = []
    if spec.lo is not None:
        parts.append(f"{'>' if spec.lo_open else '>='} {spec.lo:g}")
    if spec.hi is not None:
        parts.append(f"<= {spec.hi:g}")
    unit = f" [{spec.unit}]" if spec.unit else ""
    return f"must be a{'n' if word == 'integer' else ''} {word} {' and '.join(parts)}{unit}".rstrip()


def check_value(path: str, value: Any, spec: F, catalog: Catalog | None = None) -> tuple[Any, Problem | None]:
    """Coerce ``value`` to ``spec``; return ``(value, None)`` or ``(value, Problem)``."""
    bad = Problem(path, _describe(spec), value)
    original = value
    if spec.kind in ("int", "float"):
        if isinstance(value, bool):
            return value, bad
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                return value, bad
        if not isinstance(value, (int, float)):
            return value, bad
        if not math.isfinite(value):
            return original, Problem(path, "must be a finite number", original)
        if spec.kind == "int":
            if not float(value).is_integer():
                return original, bad
            value = int(value)
        else:
            value = float(value)
        if spec.lo is not None and (value < spec.lo or (spec.lo_open and value == spec.lo)):
            return original, bad
        if spec.hi is not None and value > spec.hi:
            return original, bad
        return value, None
    if spec.kind == "bool":
        return (value, None) if isinstance(value, bool) else (value, bad)
    if spec.kind == "choice":
        return (value, None) if value in spec.choices else (value, bad)
    if spec.kind == "str":
        return (value, None) if isinstance(value, str) and value.strip() else (value, bad)
    if spec.kind == "id":
        rows = catalog.table(spec.table) if catalog else {}
        if isinstance(value, str) and value in rows:
            return value, None
        from .catalog import TABLES

        return value, unknown(path, value, TABLES[spec.table][2], rows)
    if spec.kind == "list":
        if not isinstance(value, list) or not value or any(v not in spec.choices for v in value):
            return value, bad
        return list(dict.fromkeys(value)), None
    raise AssertionError(spec.kind)


def _fill_section(name: str, raw: Any, specs: dict[str, F], ctx: _Ctx, problems: list[Problem],
                  applies: Callable[[F], bool] = lambda s: True) -> dict:
    """Validate the given fields of one section and fill the defaults."""
    out: dict = {}
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        problems.append(Problem(name, "must be a mapping of fields", raw))
        raw = {}
    for key in raw:
        if key not in specs:
            problems.append(unknown(f"{name}.{key}", key, f"field of {name}", specs))
    ctx.data[name] = out
    for key, spec in specs.items():
        if key in raw and raw[key] is not None:
            if not applies(spec):
                problems.append(Problem(f"{name}.{key}", f"only applies to {' or '.join(spec.kinds)} workloads",
                                        raw[key]))
                continue
            value, problem = check_value(f"{name}.{key}", raw[key], spec, ctx.catalog)
            if problem:
                problems.append(problem)
                value = None
            out[key] = value
        elif applies(spec):
            if callable(spec.default):
                out[key] = None
                ctx.deferred.append((out, key, spec.default))  # may depend on a later section
            else:
                out[key] = _copy(spec.default)
        # fields that do not apply to this workload are left out of the plan
    return out


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def _fill_model(raw: Any, catalog: Catalog, problems: list[Problem]) -> tuple[Any, Model | None]:
    """Return (plan value, Model record) for ``model:`` given as an id or a mapping."""
    if isinstance(raw, str):
        if raw in catalog.models:
            return raw, catalog.models[raw]
        problems.append(unknown("model", raw, "model id", catalog.models))
        return raw, None
    if not isinstance(raw, Mapping):
        problems.append(Problem("model", "must be a catalog model id or a mapping of architecture fields", raw))
        return raw, None
    for key in raw:
        if key not in MODEL:
            problems.append(unknown(f"model.{key}", key, "model field", MODEL))
    base: dict = {}
    if raw.get("from") is not None:
        value, problem = check_value("model.from", raw["from"], MODEL["from"], catalog)
        if problem:
            problems.append(problem)
            return dict(raw), None
        rec = catalog.models[value]
        base = {k: getattr(rec, k) for k in MODEL if hasattr(rec, k)}
        base["name"] = rec.name
        base["params"] = None  # derived from the (possibly changed) architecture
    out: dict = {}
    n_before = len(problems)
    for key, spec in MODEL.items():
        if key in raw and raw[key] is not None:
            value, problem = check_value(f"model.{key}", raw[key], spec, catalog)
            if problem:
                problems.append(problem)
            out[key] = value
        elif key in base:
            out[key] = base[key]
        elif key in MODEL_REQUIRED:
            problems.append(Problem(f"model.{key}", "is required for a model given as a mapping", has_value=False))
            out[key] = None
        else:
            out[key] = None if callable(spec.default) else _copy(spec.default)  # callables: below
    if len(problems) > n_before:
        return out, None
    for key, spec in MODEL.items():  # defaults that depend on other fields
        if out[key] is None and callable(spec.default):
            out[key] = spec.default(out)
    if out["head_dim"] is None:
        if out["hidden"] % out["heads"]:
            problems.append(Problem("model.heads", f"must divide hidden ({out['hidden']}) when head_dim is not given",
                                    out["heads"]))
        else:
            out["head_dim"] = out["hidden"] // out["heads"]
    if out["heads"] % out["kv_heads"]:
        problems.append(Problem("model.kv_heads", f"must divide heads ({out['heads']})", out["kv_heads"]))
    if out["active_experts"] > out["experts"]:
        problems.append(Problem("model.active_experts", f"must be at most experts ({out['experts']})",
                                out["active_experts"]))
    if out["dense_layers"] is not None and out["dense_layers"] > out["layers"]:
        problems.append(Problem("model.dense_layers", f"must be at most layers ({out['layers']})",
                                out["dense_layers"]))
    if out["attention"] == "mla" and not (out["kv_lora_rank"] and out["qk_rope_head_dim"]):
        problems.append(Problem("model.attention", "mla needs kv_lora_rank and qk_rope_head_dim", "mla"))
    if len(problems) > n_before:
        return out, None
    record_fields = {k: v for k, v in out.items() if k not in ("from", "params", "name")}
    model = Model(id=out["from"] or "custom", name=out["name"], params_published=out["params"],
                  status="JUDGEMENT", source="plan", as_of="1970-01-01", notes=None, **record_fields)
    return out, model


def _cross_checks(data: dict, model: Model | None, catalog: Catalog, problems: list[Problem]) -> None:
    w, c, f, k = data["workload"], data["cluster"], data["facility"], data["cost"]
    bad = {p.path for p in problems}
    kind = w.get("kind")
    if kind in TRAIN:
        if w.get("tokens") is None and "workload.tokens" not in bad:
            problems.append(Problem("workload.tokens", f"is required for a {kind} plan (training tokens)",
                                    has_value=False))
        if (c.get("gpus") is None and c.get("deadline_days") is None
                and not bad & {"cluster", "cluster.gpus", "cluster.deadline_days"}):
            problems.append(Problem("cluster.gpus", f"a {kind} plan needs cluster.gpus or cluster.deadline_days",
                                    has_value=False))
        if kind == "finetune" and w.get("method") in ("lora", "qlora") and model and w.get("lora_rank"):
            if w["lora_rank"] > model.hidden:
                problems.append(Problem("workload.lora_rank", f"must be at most the model's hidden size ({model.hidden})",
                                        w["lora_rank"]))
        if model and w.get("seq_len") and w["seq_len"] > model.context:
            problems.append(Problem("workload.seq_len", f"must be at most the model's context ({model.context})",
                                    w["seq_len"]))
    if kind == "inference" and model and w.get("prompt_tokens") and w.get("output_tokens"):
        if w["prompt_tokens"] + w["output_tokens"] > model.context:
            problems.append(Problem("workload.prompt_tokens",
                                    f"prompt + output tokens must be at most the model's context ({model.context})",
                                    w["prompt_tokens"] + w["output_tokens"]))
    server = catalog.servers.get(f.get("server")) if isinstance(f.get("server"), str) else None
    if server and c.get("gpu") in catalog.gpus and server.gpu != c["gpu"]:
        problems.append(Problem("facility.server", f"holds {server.gpu} GPUs, but cluster.gpu is {c['gpu']}",
                                f["server"]))
    cloud = catalog.clouds.get(k.get("cloud")) if isinstance(k.get("cloud"), str) else None
    if cloud and c.get("gpu") in catalog.gpus and cloud.gpu != c["gpu"]:
        problems.append(Problem("cost.cloud", f"offers {cloud.gpu} GPUs, but cluster.gpu is {c['gpu']}", k["cloud"]))
    tp, pp, dp, gpn = (c.get(x) for x in ("tensor_parallel", "pipeline_parallel", "data_parallel", "gpus_per_node"))
    if model:
        if tp and model.heads % tp:
            problems.append(Problem("cluster.tensor_parallel", f"must divide the model's heads ({model.heads})", tp))
        if tp and gpn and tp > gpn:
            problems.append(Problem("cluster.tensor_parallel", f"must be at most gpus_per_node ({gpn})", tp))
        if pp and model.layers % pp:
            problems.append(Problem("cluster.pipeline_parallel", f"must divide the model's layers ({model.layers})",
                                    pp))
        ep = c.get("expert_parallel")
        if ep and model.experts % ep:
            problems.append(Problem("cluster.expert_parallel", f"must divide the model's experts ({model.experts})",
                                    ep))
    if bad & {"cluster.tensor_parallel", "cluster.pipeline_parallel", "cluster.data_parallel"} or \
            any(p.path in ("cluster.tensor_parallel", "cluster.pipeline_parallel") for p in problems):
        return
    gpus = c.get("gpus")
    if gpus and tp and pp and dp and tp * pp * dp != gpus:
        problems.append(Problem("cluster.data_parallel",
                                f"tensor x pipeline x data parallel must equal gpus ({gpus})", dp))
    elif gpus and (tp or 1) * (pp or 1) > gpus:
        problems.append(Problem("cluster.tensor_parallel", f"tensor x pipeline parallel must be at most gpus ({gpus})",
                                (tp or 1) * (pp or 1)))
    elif gpus and gpus % ((tp or 1) * (pp or 1)):
        problems.append(Problem("cluster.gpus", f"must be a multiple of tensor x pipeline parallel "
                                f"({(tp or 1) * (pp or 1)})", gpus))
    if k.get("cloud") is None and "cost.cloud" not in {p.path for p in problems}:
        k["cloud"] = None  # no priced offer for this GPU: the cost step reports it


def load_plan(plan: Any, catalog: Catalog | None = None) -> Plan:
    """Validate ``plan`` (a dict, a YAML text, a path, or a :class:`Plan`) and fill defaults.

    Raises
    ------
    PlanError
        with one line per problem: field path, value received, what is allowed.
    """
    if isinstance(plan, Plan):
        return plan
    if isinstance(plan, Path) or (isinstance(plan, str) and "\n" not in plan and plan.endswith((".yaml", ".yml"))):
        plan = read_yaml(plan)
    elif isinstance(plan, str):
        plan = parse_yaml(plan, "plan")
    if not isinstance(plan, Mapping):
        raise PlanError(Problem("plan", "must be a mapping with sections model, workload, cluster, facility, cost",
                                plan))
    problems: list[Problem] = []
    for key in plan:
        if key not in TOP_LEVEL:
            problems.append(unknown(str(key), key, "plan section", TOP_LEVEL))
    extra = plan.get("catalog") or []
    if isinstance(extra, str):
        extra = [extra]
    if not isinstance(extra, list) or not all(isinstance(x, str) for x in extra):
        problems.append(Problem("catalog", "must be a list of folder paths", plan.get("catalog")))
        extra = []
    if catalog is None:
        try:
            catalog = load_catalog(extra)
        except PlanError as exc:
            raise PlanError(problems + exc.problems) from None
    data: dict = {}
    name = plan.get("name", "Unnamed plan")
    if not isinstance(name, str) or not name.strip():
        problems.append(Problem("name", "must be a text value", name))
    data["name"] = name
    if "model" not in plan or plan["model"] is None:
        problems.append(Problem("model", "is required: a catalog model id (see `aiplan catalog models`) or a mapping",
                                has_value=False))
        model_value, model = None, None
    else:
        model_value, model = _fill_model(plan["model"], catalog, problems)
    data["model"] = model_value
    if extra:
        data["catalog"] = list(extra)
    ctx = _Ctx(data, catalog, model)
    raw_w = plan.get("workload") or {}
    kind = raw_w.get("kind", "pretrain") if isinstance(raw_w, Mapping) else "pretrain"
    kind_ok = kind in KINDS

    def applies(spec: F) -> bool:
        return not spec.kinds or not kind_ok or kind in spec.kinds

    for section, specs in SECTIONS.items():
        if section == "workload" and model is None:
            # seq_len's default needs the model: validate what was given only
            specs = {k: (F(s.kind, None, s.lo, s.lo_open, s.hi, s.choices, s.table, s.kinds) if callable(s.default)
                         else s) for k, s in specs.items()}
        _fill_section(section, plan.get(section), specs, ctx, problems, applies)
    ctx.resolve_deferred()
    _cross_checks(data, model, catalog, problems)
    if problems:
        raise PlanError(problems)
    return Plan(data=data, catalog=catalog, model=model, gpu=catalog.gpus[data["cluster"]["gpu"]],
                server=catalog.servers[data["facility"]["server"]],
                cloud=catalog.clouds.get(data["cost"]["cloud"]) if data["cost"]["cloud"] else None,
                region=catalog.regions[data["facility"]["region"]])


# --- YAML and overrides ------------------------------------------------------------


def parse_yaml(text: str, where: str) -> Any:
    """``yaml.safe_load`` with a PlanError naming ``where`` on a syntax error."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark else ""
        raise PlanError(Problem(where, f"is not valid YAML{line} ({getattr(exc, 'problem', exc)})",
                                has_value=False)) from None


def read_yaml(path: str | Path) -> Any:
    """Read a YAML plan file safely; a PlanError if it is missing or malformed."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PlanError(Problem(str(path), f"cannot be read ({exc.strerror})", has_value=False)) from None
    return parse_yaml(text, str(path))


def dump_plan(data: Mapping) -> str:
    """The filled plan as YAML (key order kept; round-trips through :func:`load_plan`)."""
    if isinstance(data, Plan):
        data = data.data
    return yaml.safe_dump(dict(data), sort_keys=False, default_flow_style=False, allow_unicode=True)


def apply_overrides(plan: Mapping, overrides: list[str]) -> dict:
    """Apply ``section.key=value`` overrides (values parsed as YAML) to a copy of ``plan``."""
    import copy

    out = copy.deepcopy(dict(plan))
    problems = []
    for item in overrides:
        if "=" not in item:
            problems.append(Problem("--set", "must look like section.key=value", item))
            continue
        path, text = item.split("=", 1)
        keys = [k for k in path.strip().split(".") if k]
        if not keys:
            problems.append(Problem("--set", "must look like section.key=value", item))
            continue
        try:
            value = yaml.safe_load(text) if text.strip() else None
        except yaml.YAMLError:
            value = text
        node = out
        for key in keys[:-1]:
            if not isinstance(node.get(key), dict):
                node[key] = {} if node.get(key) is None or not isinstance(node.get(key), str) else {"from": node[key]}
            node = node[key]
        node[keys[-1]] = value
    if problems:
        raise PlanError(problems)
    return out
