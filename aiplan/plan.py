"""The plan: one schema table, defaults, validation, YAML load and dump.

A plan is a YAML file or the same nested dict. Every field is one row of the schema table
(:data:`TOP`, :data:`MODEL` and :data:`SECTIONS`): its type, allowed range or choices, default
(a value, or where it comes from), unit, label and one-line description. Validation, the
defaults reported back in ``result['plan']`` and the reference ``docs/plan.md`` all come from
that table; rules that relate several fields are the rows of :data:`MODEL_RULES` and
:data:`PLAN_RULES`.

:func:`load_plan` fills every default (from the table and the catalog), validates every field
and every rule, and raises one :class:`~aiplan.errors.PlanError` listing all problems found
("cluster.gpus: must be an integer from 1 to 10,000,000 [GPUs], got -8"). Problems that follow
from another one (a misspelt section, a field that is already wrong) are not repeated. The
filled plan (``Plan.data``) round-trips through YAML unchanged. Fields that are ``None`` after
loading are left for the kit to decide (e.g. the parallel layout).

Inputs come through :mod:`aiplan.inputs` (size, encoding and YAML rules). Relative folder
paths in a plan (``catalog:``) resolve against the plan file's folder (the current folder for
a plan given as data).
"""

from __future__ import annotations

import copy
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .catalog import GPU, TABLES, Catalog, CloudOffer, Model, Region, Server, load_catalog
from .errors import PlanError, Problem, unknown, unknown_keys
from .inputs import check_depth, parse_yaml, read_yaml
from .units import MAX_GPUS

KINDS = ("pretrain", "finetune", "inference")
#: longest text field (a plan name, a client) [characters]
MAX_TEXT_CHARS = 200
#: most catalog folders in a plan, and the longest folder path [characters]
MAX_PATHS, MAX_PATH_CHARS = 20, 4096
TRAIN = ("pretrain", "finetune")
LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")
PRICINGS = ("on-demand", "reserved-1y", "reserved-3y", "spot")
#: serving precisions of weights and KV cache (fp4: NVFP4/MXFP4 on GPUs whose catalog row has fp4_tflops)
SERVING_PRECISIONS = ("bf16", "fp8", "fp4", "int8", "int4")


@dataclass(frozen=True)
class F:
    """One plan field of the schema table.

    ``default`` is a value, a callable ``(ctx) -> value`` (``ctx`` holds the filled sections so
    far and the catalog; ``default_doc`` says where it comes from), or ``None`` (left for the
    kit). ``kinds`` lists the workload kinds the field applies to (empty = all). Numbers lie in
    ``[lo, hi]`` (``lo`` excluded when ``lo_open``). ``label`` is the short human label the app and
    the report show; ``fmt`` the display format (:func:`aiplan.fields.format_value`);
    ``judgement`` marks a default that is our judgement rather than a published figure.
    """

    kind: str  # int | float | str | bool | choice | id | list | paths
    default: Any = None
    lo: float | None = None
    lo_open: bool = False
    hi: float | None = None
    choices: tuple = ()
    table: str | None = None
    kinds: tuple = ()
    unit: str = ""
    doc: str = ""
    label: str = ""
    fmt: str = ""
    default_doc: str = ""
    judgement: bool = False
    advanced: bool = False


def _gpu(ctx) -> GPU:
    return ctx.catalog.gpus[ctx.data["cluster"]["gpu"]]


def _server(ctx) -> Server:
    return ctx.catalog.servers[ctx.data["facility"]["server"]]


def _region(ctx) -> Region:
    return ctx.catalog.regions[ctx.data["facility"]["region"]]


def _seq_len_default(ctx) -> int:
    return int(min(4096, ctx.model.context))


#: Llama 3 405B: 419 unexpected interruptions in a 54-day snapshot on 16,384 H100 (Llama Team
#: 2024, arXiv:2407.21783 §3.3.4) -> per GPU-year [1/yr].
LLAMA3_INTERRUPTIONS_PER_GPU_YEAR = 419 / (16384 * 54 / 365.25)

TOP: dict[str, F] = {
    "name": F("str", "Unnamed plan", label="Plan name", doc="shown on the app, the report and file names"),
    "client": F("str", None, label="Client", doc="client the plan is for (report cover)"),
    "prepared_by": F("str", None, label="Prepared by", doc="author of the plan (report cover)"),
    "catalog": F("paths", None, label="Own catalog folders",
                 doc="folders of catalog CSV files that extend or replace the shipped catalog; relative paths "
                     "resolve against the plan file's folder"),
}

WORKLOAD: dict[str, F] = {
    "kind": F("choice", "pretrain", choices=KINDS, label="Workload", doc="what the cluster is for"),
    "tokens": F("float", None, lo=1, hi=1e16, kinds=TRAIN, unit="tokens", fmt="big",
                label="Training tokens", doc="training tokens (dataset tokens x epochs); required for training"),
    "method": F("choice", "full", choices=("full", "lora", "qlora"), kinds=("finetune",), label="Method",
                doc="fine-tuning method"),
    "lora_rank": F("int", 16, lo=1, hi=65536, kinds=("finetune",), label="LoRA rank", doc="LoRA rank r"),
    "lora_targets": F("list", ["q", "k", "v", "o"], choices=LORA_TARGETS, kinds=("finetune",),
                      label="LoRA targets", doc="matrices that get LoRA adapters", advanced=True),
    "seq_len": F("int", _seq_len_default, lo=1, hi=100_000_000, kinds=TRAIN, unit="tokens", label="Sequence length",
                 doc="training sequence length", default_doc="the model's context, at most 4,096"),
    "micro_batch": F("int", 1, lo=1, hi=65536, kinds=TRAIN, unit="sequences", label="Micro-batch",
                     doc="sequences per micro-batch per GPU (the layout search may choose another)", advanced=True),
    "global_batch_tokens": F("float", lambda ctx: 4.0e6 if ctx.data["workload"]["kind"] == "pretrain" else 1.0e6,
                             lo=1, hi=1e10, kinds=TRAIN, unit="tokens", fmt="big",
                             label="Global batch", doc="tokens per optimizer step",
                             default_doc="4 million tokens for pretraining, 1 million for fine-tuning", judgement=True),
    "precision": F("choice", "bf16", choices=("fp32", "fp16", "bf16", "fp8", "fp4"), kinds=TRAIN, label="Precision",
                   doc="training compute precision (mixed precision keeps fp32 master weights; fp4 = NVFP4/MXFP4 "
                       "matmuls, on GPUs with FP4 tensor cores)"),
    "optimizer": F("choice", "adamw", choices=("adamw", "adamw-8bit", "sgd", "adafactor"), kinds=TRAIN,
                   label="Optimizer", doc="optimizer (decides the optimizer state per parameter)", advanced=True),
    "recompute": F("choice", "selective", choices=("none", "selective", "full"), kinds=TRAIN,
                   label="Recomputation", doc="activation recomputation (Korthikanti et al. 2022)", advanced=True),
    "flash_attention": F("bool", True, label="Flash attention", doc="fused attention: no s^2 activation term",
                         advanced=True),
    "requests_per_s": F("float", 1.0, lo=1e-6, hi=10_000_000, kinds=("inference",), unit="req/s",
                        label="Requests per second", doc="request rate the service must carry"),
    "prompt_tokens": F("int", 1000, lo=1, hi=100_000_000, kinds=("inference",), unit="tokens",
                       label="Prompt tokens", doc="input tokens per request"),
    "output_tokens": F("int", 250, lo=1, hi=100_000_000, kinds=("inference",), unit="tokens",
                       label="Output tokens", doc="generated tokens per request"),
    "weight_precision": F("choice", "bf16", choices=SERVING_PRECISIONS, kinds=("inference",),
                          label="Weight precision",
                          doc="precision of the served weights (fp4 = NVFP4/MXFP4, on GPUs with FP4 tensor cores)"),
    "kv_precision": F("choice", "bf16", choices=SERVING_PRECISIONS, kinds=("inference",),
                      label="KV-cache precision", doc="precision of the key/value cache", advanced=True),
    "max_batch": F("int", None, lo=1, hi=1_000_000, kinds=("inference",), unit="sequences", label="Batch cap",
                   doc="cap on concurrent sequences per replica", default_doc="as many as fit", advanced=True),
    # defaults: MLPerf Inference rules, Llama 2 70B Server scenario, TTFT 2,000 ms and TPOT 200 ms (99th
    # percentiles) [mlcommons-inference-rules-v5.1]
    "ttft_ms_target": F("float", 2000.0, lo=1, hi=3_600_000, kinds=("inference",), unit="ms",
                        label="Time-to-first-token target",
                        doc="longest acceptable time to the first output token (MLPerf Inference Server "
                            "scenario, Llama 2 70B: 2,000 ms)"),
    "tpot_ms_target": F("float", 200.0, lo=0.1, hi=60_000, kinds=("inference",), unit="ms",
                        label="Time-per-output-token target",
                        doc="longest acceptable time between output tokens (MLPerf Inference Server "
                            "scenario, Llama 2 70B: 200 ms)"),
}

CLUSTER: dict[str, F] = {
    "gpu": F("id", "h100-sxm", table="gpus", label="GPU", doc="GPU model (catalog id)"),
    "gpus": F("int", None, lo=1, hi=MAX_GPUS, unit="GPUs", fmt="count", label="GPUs",
              doc="GPU count; or leave it out and give deadline_days (training) or let the load size it (serving)",
              default_doc="sized for the deadline or the load"),
    "deadline_days": F("float", None, lo=0.01, hi=36525, kinds=TRAIN, unit="days", label="Deadline",
                       doc="training deadline; the kit sizes the GPUs to meet it"),
    "deadline_confidence": F("float", 0.5, lo=0.5, hi=0.99, kinds=TRAIN, fmt="pct", label="Deadline confidence",
                             doc="chance of meeting the deadline the GPU count is sized for (0.5: the median; "
                                 "0.9: nine runs in ten finish in time)"),
    "gpus_per_node": F("int", lambda ctx: _server(ctx).gpus_per_node, lo=1, hi=1024, label="GPUs per server",
                       doc="GPUs in one server", default_doc="the server's", advanced=True),
    "tensor_parallel": F("int", None, lo=1, hi=1024, label="Tensor parallel",
                         doc="GPUs that split each layer", default_doc="the layout search", advanced=True),
    "pipeline_parallel": F("int", None, lo=1, hi=10_000, label="Pipeline parallel",
                           doc="pipeline stages", default_doc="the layout search", advanced=True),
    "data_parallel": F("int", None, lo=1, hi=MAX_GPUS, label="Data parallel", doc="model replicas",
                       default_doc="GPUs / (tensor x pipeline parallel)", advanced=True),
    "expert_parallel": F("int", None, lo=1, hi=100_000, label="Expert parallel",
                         doc="GPUs the routed experts are spread over", default_doc="1", advanced=True),
    "zero_stage": F("int", None, lo=0, hi=3, label="ZeRO stage", doc="0..3 (FSDP full shard = 3)",
                    default_doc="the layout search", advanced=True),
    "sequence_parallel": F("bool", True, kinds=TRAIN, label="Sequence parallel",
                           doc="shard activations along the sequence with tensor parallelism", advanced=True),
    "mfu": F("float", None, lo=0, lo_open=True, hi=1, fmt="pct", label="MFU",
             doc="model FLOP utilisation in steady state, against the peak at the training precision",
             default_doc="calibrated for the GPU, precision, model size, MoE, fine-tuning method and GPU count"),
    "run_overhead": F("float", None, lo=1, hi=10, kinds=TRAIN, label="Run overhead",
                      doc="end-to-end GPU-hours over steady-state GPU-hours, interruptions excluded "
                          "(evaluation, warm-up, stragglers, checkpoint stalls)",
                      default_doc="calibrated on published training runs", advanced=True),
    "usable_memory_fraction": F("float", 0.90, lo=0.05, hi=1, fmt="pct", label="Usable GPU memory",
                                doc="share of GPU memory the job may use (CUDA context, fragmentation)",
                                judgement=True, advanced=True),
    "interruptions_per_gpu_year": F("float", LLAMA3_INTERRUPTIONS_PER_GPU_YEAR, lo=0, hi=1000, unit="1/yr",
                                    label="Interruptions per GPU-year",
                                    doc="job-stopping interruptions per GPU-year (Llama 3 405B rate)", advanced=True),
    "restart_min": F("float", 10.0, lo=0, hi=10080, unit="min", label="Restart time",
                     doc="time to restart after an interruption", judgement=True, advanced=True),
    "checkpoint_interval_min": F("float", None, lo=0.1, hi=1_000_000, kinds=TRAIN, unit="min",
                                 label="Checkpoint interval", doc="time between checkpoints",
                                 default_doc="the Young/Daly optimum", advanced=True),
    "fabric_switch": F("id", lambda ctx: _server(ctx).default_switch or "qm9700", table="switches",
                       label="Fabric switch", doc="compute-fabric switch (catalog id)",
                       default_doc="the server's reference design; else Quantum-2 QM9700", advanced=True),
    "fabric_radix": F("int", lambda ctx: ctx.catalog.switches[ctx.data["cluster"]["fabric_switch"]].ports, lo=4,
                      hi=4096, label="Switch ports", doc="ports per fabric switch", default_doc="the switch's",
                      advanced=True),
    "oversubscription": F("float", 1.0, lo=1, hi=100, label="Oversubscription",
                          doc="leaf downlink:uplink bandwidth ratio", advanced=True),
    "in_network_reduction": F("bool", True, label="In-network reduction", doc="SHARP-style all-reduce in the switches",
                              advanced=True),
    "storage_read_gb_per_s": F("float", None, lo=0.001, hi=1e9, unit="GB/s", label="Storage read",
                               doc="aggregate storage read bandwidth", default_doc="1 GB/s per GPU (rule)",
                               advanced=True),
    "storage_write_gb_per_s": F("float", None, lo=0.001, hi=1e9, unit="GB/s", label="Storage write",
                                doc="aggregate storage write bandwidth", default_doc="the read bandwidth",
                                advanced=True),
    "dataset_tb": F("float", None, lo=1e-6, hi=1e9, unit="TB", label="Data set",
                    doc="size of the training data set", default_doc="tokens x bytes per token", advanced=True),
    "checkpoints_kept": F("int", 3, lo=1, hi=1000, kinds=TRAIN, label="Checkpoints kept",
                          doc="checkpoints kept on fast storage", judgement=True, advanced=True),
    "storage_growth_factor": F("float", 10.0, lo=1, hi=1000, label="Storage growth",
                               doc="headroom on data-set storage (rule: plan for 10x)", advanced=True),
}

FACILITY: dict[str, F] = {
    "server": F("id", lambda ctx: _gpu(ctx).default_server, table="servers", label="Server",
                doc="GPU server (catalog id)", default_doc="the GPU's default server"),
    "pue": F("float", 1.3, lo=1, hi=5, label="PUE",
             doc="power usage effectiveness (total / IT); 1.3 = AI data-centre design target (Uptime 2023 "
                 "average 1.58)"),
    "rack_kw": F("float", 40.0, lo=0.1, hi=2000, unit="kW", label="Rack power",
                 doc="power budget per rack (4 DGX H100 per rack is 40.8 kW)"),
    "redundancy": F("choice", "N+1", choices=("N", "N+1", "2N", "2N+1"), label="Power redundancy",
                    doc="spare power modules: N none, N+1 one, 2N a full second set"),
    "power_module_kw": F("float", None, lo=1, hi=1e7, unit="kW", label="Power module",
                         doc="UPS/power module size; redundancy adds whole modules",
                         default_doc="the smallest standard size giving about four modules for the load",
                         advanced=True),
    "region": F("id", "us", table="regions", label="Grid region", doc="grid region (carbon intensity, power price)"),
    "electricity_usd_per_kwh": F("float", lambda ctx: _region(ctx).electricity_usd_per_kwh or 0.0806,
                                 lo=0, hi=10, unit="USD/kWh", fmt="usd_rate", label="Electricity price",
                                 doc="price of electricity",
                                 default_doc="the region's; else the US industrial average 2023 (EIA)"),
    "grid_kg_co2_per_kwh": F("float", lambda ctx: _region(ctx).grid_kg_co2_per_kwh, lo=0, hi=5,
                             unit="kg CO2e/kWh", label="Grid carbon intensity",
                             doc="carbon intensity of the grid", default_doc="the region's", advanced=True),
    "cooling": F("choice", "auto", choices=("auto", "air", "rear-door", "liquid"), label="Cooling",
                 doc="cooling type; auto = what the rack density needs"),
    "floor_m2_per_rack": F("float", 2.8, lo=0.1, hi=100, unit="m²", label="Floor per rack",
                           doc="white space per rack incl. aisles (30 ft²)", judgement=True, advanced=True),
    "floor_kg_per_rack": F("float", 1000.0, lo=1, hi=100_000, unit="kg", label="Floor rating",
                           doc="floor-loading limit per rack position (raised floors 700-1,000 kg)", advanced=True),
    "growth_per_year": F("float", 0.0, lo=0, hi=10, fmt="pct", label="Growth per year",
                         doc="capacity growth per year (0.5 = +50%)", advanced=True),
    "growth_years": F("int", 3, lo=1, hi=10, unit="years", label="Growth years", doc="years of growth planned",
                      advanced=True),
}

COST: dict[str, F] = {
    "cloud": F("id", lambda ctx: _gpu(ctx).default_cloud, table="clouds", label="Cloud offer",
               doc="cloud offer to compare with (catalog id)", default_doc="the GPU's default offer"),
    "pricing": F("choice", "on-demand", choices=PRICINGS, label="Cloud pricing", doc="cloud pricing"),
    "capacity_reused": F("bool", False, kinds=TRAIN, label="Capacity reused",
                         doc="reserved or bought capacity is reused after this run (the run pays its share); "
                             "otherwise a reservation or a purchase for one run is paid in full"),
    "utilisation": F("float", 0.7, lo=0.001, hi=1, fmt="pct", label="Utilisation",
                     doc="share of hours the cluster does useful work", judgement=True),
    "years": F("float", 3.0, lo=0.1, hi=15, unit="years", label="Ownership period",
               doc="years the cluster is kept (straight-line depreciation)"),
    "server_price_usd": F("float", lambda ctx: _server(ctx).price_usd, lo=1, hi=1e9, unit="USD",
                          fmt="usd", label="Server price", doc="purchase price of one server",
                          default_doc="the catalog's dated price"),
    "facility_model": F("choice", "colocation", choices=("colocation", "build"), label="Facility",
                        doc="rent colocation space per kW, or build"),
    "colocation_usd_per_kw_month": F("float", 184.06, lo=0, hi=100_000, unit="USD/kW-month", fmt="usd_rate",
                                     label="Colocation price",
                                     doc="wholesale colocation per kW of IT load (CBRE North America H2 2024)",
                                     advanced=True),
    "build_usd_per_mw": F("float", 11.5e6, lo=0, hi=1e9, unit="USD/MW", fmt="usd", label="Build cost",
                          doc="facility build cost per MW of IT load (midpoint of $8-15M)", judgement=True,
                          advanced=True),
    "staff_usd_per_year": F("float", 250000.0, lo=0, hi=1e8, unit="USD/yr", fmt="usd", label="Engineer cost",
                            doc="cost of one engineer per year (NAG HPC TCO calculator default)", advanced=True),
    "servers_per_engineer": F("float", 75.0, lo=0.1, hi=1e6, label="Servers per engineer",
                              doc="GPU servers one engineer runs ('1 FTE per 50-100 GPU servers')", advanced=True),
    "maintenance_fraction_per_year": F("float", 0.10, lo=0, hi=1, fmt="pct", label="Maintenance per year",
                                       doc="maintenance and support per year, share of hardware capex",
                                       judgement=True, advanced=True),
    "network_cost_fraction": F("float", 0.19, lo=0, hi=0.9, fmt="pct", label="Network share of cost",
                               doc="interconnect share of cluster cost (Epoch AI)", advanced=True),
    "storage_usd_per_tb": F("float", 150.0, lo=0, hi=1e6, unit="USD/TB", fmt="usd_rate", label="Storage price",
                            doc="installed storage capex per TB", judgement=True, advanced=True),
    "hybrid_owned_fraction": F("float", 0.5, lo=0, hi=1, fmt="pct", label="Hybrid share owned",
                               doc="hybrid option: share of GPUs owned (they carry the steady load; peaks are "
                                   "rented)", advanced=True),
    "spot_interruptions_per_instance_month": F("float", 0.10, lo=0, hi=1000, unit="1/month",
                                               label="Spot reclaims per month",
                                               doc="spot reclaims per instance-month (AWS Spot Instance Advisor "
                                                   "bands run <5% to >20%)", judgement=True, advanced=True),
}

SECTIONS: dict[str, dict[str, F]] = {
    "workload": WORKLOAD,
    "cluster": CLUSTER,
    "facility": FACILITY,
    "cost": COST,
}

MODEL: dict[str, F] = {
    "from": F("id", None, table="models", label="Start from", doc="start from a catalog model and change fields"),
    "name": F("str", "custom model", label="Name", doc="model name"),
    "params": F("float", None, lo=1e3, hi=1e16, fmt="big", label="Parameters",
                doc="parameter count", default_doc="from the architecture"),
    "layers": F("int", None, lo=1, hi=10_000, label="Layers", doc="transformer layers (required)"),
    "hidden": F("int", None, lo=1, hi=1_000_000, label="Hidden size", doc="model width (required)"),
    "heads": F("int", None, lo=1, hi=100_000, label="Attention heads", doc="query heads (required)"),
    "kv_heads": F("int", lambda m: m["heads"], lo=1, hi=100_000, label="KV heads", doc="key/value heads",
                  default_doc="heads (multi-head attention)"),
    "head_dim": F("int", None, lo=1, hi=100_000, label="Head size", doc="width of one head",
                  default_doc="hidden / heads"),
    "ffn_hidden": F("int", lambda m: 4 * m["hidden"], lo=1, hi=10_000_000, label="MLP size",
                    doc="dense MLP inner size", default_doc="4 x hidden"),
    "vocab": F("int", None, lo=1, hi=100_000_000, label="Vocabulary", doc="vocabulary size (required)"),
    "context": F("int", 4096, lo=1, hi=100_000_000, unit="tokens", label="Context", doc="longest context"),
    "tied_embeddings": F("bool", False, label="Tied embeddings", doc="the output head shares the embedding"),
    "gated_mlp": F("bool", True, label="Gated MLP", doc="SwiGLU-style gated MLP"),
    "norm": F("choice", "rmsnorm", choices=("rmsnorm", "layernorm"), label="Norm", doc="normalisation layers"),
    "qkv_bias": F("bool", False, label="QKV bias", doc="biases on the query/key/value projections"),
    "mlp_bias": F("bool", False, label="MLP bias", doc="biases on the MLP"),
    "position": F("choice", "rope", choices=("rope", "learned", "alibi"), label="Positions",
                  doc="position encoding"),
    "max_position": F("int", None, lo=1, hi=100_000_000, label="Learned positions", doc="learned position rows"),
    "experts": F("int", 1, lo=1, hi=100_000, label="Experts", doc="routed experts (1 = dense)"),
    "active_experts": F("int", 1, lo=1, hi=100_000, label="Active experts", doc="routed experts per token"),
    "shared_experts": F("int", 0, lo=0, hi=10_000, label="Shared experts", doc="experts every token uses"),
    "moe_ffn_hidden": F("int", None, lo=1, hi=10_000_000, label="Expert MLP size", doc="MLP inner size of an expert",
                        default_doc="ffn_hidden"),
    "dense_layers": F("int", None, lo=0, hi=10_000, label="Dense layers", doc="leading dense layers of an MoE model"),
    "attention": F("choice", lambda m: ("mha" if m["kv_heads"] == m["heads"]
                                        else "mqa" if m["kv_heads"] == 1 else "gqa"),
                   choices=("mha", "gqa", "mqa", "mla"), label="Attention", doc="attention type",
                   default_doc="from heads and kv_heads"),
    "kv_lora_rank": F("int", None, lo=1, hi=1_000_000, label="KV latent rank", doc="MLA key/value latent rank"),
    "q_lora_rank": F("int", None, lo=1, hi=1_000_000, label="Query latent rank", doc="MLA query latent rank"),
    "qk_rope_head_dim": F("int", None, lo=1, hi=100_000, label="RoPE head size", doc="MLA decoupled RoPE key width"),
    "qk_nope_head_dim": F("int", None, lo=1, hi=100_000, label="Non-RoPE head size", doc="MLA query/key width"),
    "v_head_dim": F("int", None, lo=1, hi=100_000, label="Value head size", doc="MLA value width"),
    "sliding_window": F("int", None, lo=1, hi=100_000_000, unit="tokens", label="Sliding window",
                        doc="attention window of the local layers"),
    "global_layers": F("int", None, lo=0, hi=10_000, label="Global layers",
                       doc="with a sliding window: layers that attend to the whole context",
                       default_doc="0 (every layer local)"),
    "moe_layer_step": F("int", None, lo=1, hi=10_000, label="MoE layer step",
                        doc="with experts: every n-th layer is a mixture-of-experts layer", default_doc="1"),
}
MODEL_REQUIRED = ("layers", "hidden", "heads", "vocab")
TOP_LEVEL = ("name", "client", "prepared_by", "model", "catalog", *SECTIONS)


@dataclass(frozen=True)
class Rule:
    """A rule relating several fields: when ``broken(values)`` is true, ``path`` gets ``message``.

    ``values`` is a dict of the (validated) fields the rule reads; a rule is skipped when one of
    its inputs is already wrong (no follow-on errors) or missing (unless it is ``optional``).
    ``message`` is formatted with ``values``; ``shown`` names the value the problem reports (none
    when empty).
    """

    path: str
    inputs: tuple[str, ...]
    broken: Callable[[dict], bool]
    message: str
    shown: str = ""
    optional: tuple[str, ...] = ()


#: rules of a model given as a mapping (inputs are model fields)
MODEL_RULES: tuple[Rule, ...] = (
    Rule("model.heads", ("hidden", "heads", "head_dim"), lambda v: v["head_dim"] is None and v["hidden"] % v["heads"],
         "must divide hidden ({hidden}) when head_dim is not given", "heads", optional=("head_dim",)),
    Rule("model.kv_heads", ("heads", "kv_heads"), lambda v: v["heads"] % v["kv_heads"], "must divide heads ({heads})",
         "kv_heads"),
    Rule("model.active_experts", ("experts", "active_experts"), lambda v: v["active_experts"] > v["experts"],
         "must be at most experts ({experts})", "active_experts"),
    Rule("model.dense_layers", ("layers", "dense_layers"),
         lambda v: v["dense_layers"] is not None and v["dense_layers"] > v["layers"],
         "must be at most layers ({layers})", "dense_layers", optional=("dense_layers",)),
    Rule("model.attention", ("attention", "kv_lora_rank", "qk_rope_head_dim"),
         lambda v: v["attention"] == "mla" and not (v["kv_lora_rank"] and v["qk_rope_head_dim"]),
         "mla needs kv_lora_rank and qk_rope_head_dim", "attention", optional=("kv_lora_rank", "qk_rope_head_dim")),
)

_TP_PP = ("cluster.tensor_parallel", "cluster.pipeline_parallel")
#: smallest model FLOP utilisation the kit computes with (a run at less would take ages; below it
#: figures overflow)
MFU_MIN = 0.001

def _fp4_rule(path: str, kinds: tuple[str, ...]) -> Rule:
    """A precision field set to fp4 needs a GPU with FP4 tensor cores."""
    return Rule(path, ("kind", path, "gpu.has_fp4"),
                lambda v: v["kind"] in kinds and v[path] == "fp4" and not v["gpu.has_fp4"],
                "fp4 needs a GPU with FP4 tensor cores (catalog fp4_tflops); {cluster.gpu} has none", path)


#: rules across plan sections (inputs are ``section.field`` paths; ``model.*`` reads the model record,
#: ``kind`` the workload kind)
PLAN_RULES: tuple[Rule, ...] = (
    Rule("workload.tokens", ("kind", "workload.tokens"), lambda v: v["kind"] in TRAIN and v["workload.tokens"] is None,
         "is required for a {kind} plan (training tokens)", optional=("workload.tokens",)),
    Rule("cluster.gpus", ("kind", "cluster.gpus", "cluster.deadline_days"),
         lambda v: v["kind"] in TRAIN and v["cluster.gpus"] is None and v["cluster.deadline_days"] is None,
         "a {kind} plan needs cluster.gpus or cluster.deadline_days",
         optional=("cluster.gpus", "cluster.deadline_days")),
    Rule("workload.lora_rank", ("kind", "workload.method", "workload.lora_rank", "model.hidden"),
         lambda v: v["kind"] == "finetune" and v["workload.method"] in ("lora", "qlora")
         and v["workload.lora_rank"] > v["model.hidden"],
         "must be at most the model's hidden size ({model.hidden})", "workload.lora_rank"),
    Rule("workload.seq_len", ("kind", "workload.seq_len", "model.context"),
         lambda v: v["kind"] in TRAIN and v["workload.seq_len"] > v["model.context"],
         "must be at most the model's context ({model.context})", "workload.seq_len"),
    Rule("workload.prompt_tokens", ("kind", "workload.prompt_tokens", "workload.output_tokens", "model.context"),
         lambda v: v["kind"] == "inference" and v["workload.prompt_tokens"] + v["workload.output_tokens"]
         > v["model.context"],
         "prompt + output tokens must be at most the model's context ({model.context})", "prompt+output"),
    *(_fp4_rule(path, kinds) for path, kinds in (("workload.precision", TRAIN),
                                                  ("workload.weight_precision", ("inference",)),
                                                  ("workload.kv_precision", ("inference",)))),
    Rule("facility.server", ("facility.server", "cluster.gpu", "server.gpu"),
         lambda v: v["server.gpu"] != v["cluster.gpu"], "holds {server.gpu} GPUs, but cluster.gpu is {cluster.gpu}",
         "facility.server"),
    Rule("cost.cloud", ("cost.cloud", "cluster.gpu", "cloud.gpu"), lambda v: v["cloud.gpu"] != v["cluster.gpu"],
         "offers {cloud.gpu} GPUs, but cluster.gpu is {cluster.gpu}", "cost.cloud"),
    Rule("cluster.mfu", ("cluster.mfu",), lambda v: v["cluster.mfu"] < MFU_MIN,
         f"must be at least {MFU_MIN:g} ({MFU_MIN:.1%}); published training runs reach 20-60%",
         "cluster.mfu"),
    Rule("cluster.tensor_parallel", ("cluster.tensor_parallel", "model.heads"),
         lambda v: v["model.heads"] % v["cluster.tensor_parallel"], "must divide the model's heads ({model.heads})",
         "cluster.tensor_parallel"),
    Rule("cluster.tensor_parallel", ("cluster.tensor_parallel", "cluster.gpus_per_node"),
         lambda v: v["cluster.tensor_parallel"] > v["cluster.gpus_per_node"],
         "must be at most gpus_per_node ({cluster.gpus_per_node})", "cluster.tensor_parallel"),
    Rule("cluster.pipeline_parallel", ("cluster.pipeline_parallel", "model.layers"),
         lambda v: v["model.layers"] % v["cluster.pipeline_parallel"],
         "must divide the model's layers ({model.layers})", "cluster.pipeline_parallel"),
    Rule("cluster.expert_parallel", ("cluster.expert_parallel", "model.experts"),
         lambda v: v["model.experts"] % v["cluster.expert_parallel"],
         "must divide the model's experts ({model.experts})", "cluster.expert_parallel"),
    Rule("cluster.data_parallel", ("cluster.gpus", "cluster.tensor_parallel", "cluster.pipeline_parallel",
                                   "cluster.data_parallel"),
         lambda v: v["cluster.tensor_parallel"] * v["cluster.pipeline_parallel"] * v["cluster.data_parallel"]
         != v["cluster.gpus"],
         "tensor x pipeline x data parallel must equal gpus ({cluster.gpus})", "cluster.data_parallel"),
    Rule("cluster.tensor_parallel", ("cluster.gpus", "tp_pp", *_TP_PP), lambda v: v["tp_pp"] > v["cluster.gpus"],
         "tensor x pipeline parallel must be at most gpus ({cluster.gpus})", "tp_pp", optional=_TP_PP),
    Rule("cluster.gpus", ("cluster.gpus", "tp_pp", *_TP_PP), lambda v: v["cluster.gpus"] % v["tp_pp"],
         "must be a multiple of tensor x pipeline parallel ({tp_pp})", "cluster.gpus", optional=_TP_PP),
)


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


# --- value checking -------------------------------------------------------------------------------


def allowed(spec: F) -> str:
    """What a field allows, in words ("must be an integer from 1 to 10,000,000 [GPUs]")."""
    if spec.kind == "choice":
        return "must be one of " + ", ".join(map(str, spec.choices))
    if spec.kind == "bool":
        return "must be true or false"
    if spec.kind == "str":
        return f"must be a text value of at most {MAX_TEXT_CHARS} characters"
    if spec.kind == "id":
        return "must be a text value"
    if spec.kind == "list":
        return "must be a list of " + ", ".join(spec.choices)
    if spec.kind == "paths":
        return f"must be a list of at most {MAX_PATHS} folder paths"
    word = "an integer" if spec.kind == "int" else "a number"
    unit = f" [{spec.unit}]" if spec.unit else ""
    lo, hi = _bound(spec.lo), _bound(spec.hi)
    if spec.lo_open:
        return f"must be {word} > {lo} and <= {hi}{unit}"
    return f"must be {word} from {lo} to {hi}{unit}"


def _bound(x: float) -> str:
    """A range bound for a message: 10,000,000 with separators, 0.001 and 1e16 as such."""
    if float(x).is_integer() and abs(x) < 1e13:
        return f"{int(x):,}"
    return f"{x:g}" if 1e-4 <= abs(x) < 1e13 else f"{x:.0e}".replace("+", "").replace("e-0", "e-")


def _as_number(value: Any) -> float | int | None:
    """A plain int/float from an int, float, numpy number or numeric text; None if it is not one."""
    if isinstance(value, str):
        try:
            return float(value.strip().replace("_", ""))
        except ValueError:
            return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return None


_YES_NO = ("yes", "no", "on", "off", "y", "n", "true", "false")


def _is_bool(value: Any) -> bool:
    """A Python or numpy boolean (``numpy.bool_``, named ``numpy.bool`` since numpy 2)."""
    kind = type(value)
    return isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool"))


def _check_number(path: str, value: Any, spec: F) -> tuple[Any, Problem | None]:
    bad = Problem(path, allowed(spec), value)
    if _is_bool(value):
        return value, Problem(path, allowed(spec), value, hint="true/false is a yes/no value, not a number")
    number = _as_number(value)
    if number is None:
        if isinstance(value, str) and value.strip().lower() in _YES_NO:
            return value, Problem(path, allowed(spec), value, hint="yes/no/on/off are words, not numbers")
        return value, bad
    try:
        as_float = float(number)
    except OverflowError:
        return value, Problem(path, f"is too large: {allowed(spec)}", value)
    if not math.isfinite(as_float):
        return value, Problem(path, "must be a finite number", value)
    if spec.kind == "int":
        if not as_float.is_integer():
            return value, bad
        number = int(number)
    else:
        number = as_float
    if as_float < spec.lo or (spec.lo_open and as_float == spec.lo) or as_float > spec.hi:
        return value, bad
    return number, None


def _check_id(path: str, value: Any, spec: F, catalog: Catalog | None) -> tuple[Any, Problem | None]:
    rows = catalog.table(spec.table) if catalog else {}
    if isinstance(value, str) and value in rows:
        return value, None
    return value, unknown(path, value, TABLES[spec.table][2], rows)


def _check_other(path: str, value: Any, spec: F) -> tuple[Any, Problem | None]:
    bad = Problem(path, allowed(spec), value)
    if spec.kind == "bool":
        if _is_bool(value):
            return bool(value), None
        if isinstance(value, str) and value.lower() in ("yes", "no", "on", "off"):
            return value, Problem(path, allowed(spec), value, hint="write true or false (yes/no/on/off are text)")
        return value, bad
    if spec.kind == "choice":
        ok = isinstance(value, str) and value in spec.choices
        return (value, None) if ok else (value, bad)
    if spec.kind == "str":
        ok = isinstance(value, str) and value.strip() and len(value) <= MAX_TEXT_CHARS
        return (value, None) if ok else (value, bad)
    if spec.kind == "list":
        if not isinstance(value, list) or not value or any(not isinstance(v, str) or v not in spec.choices
                                                           for v in value):
            return value, bad
        return list(dict.fromkeys(value)), None
    if spec.kind == "paths":
        value = [value] if isinstance(value, str) else value
        ok = isinstance(value, list) and 0 < len(value) <= MAX_PATHS and all(
            isinstance(v, str) and v.strip() and len(v) <= MAX_PATH_CHARS and "\0" not in v for v in value)
        return (list(value), None) if ok else (value, bad)
    raise AssertionError(spec.kind)


def check_value(path: str, value: Any, spec: F, catalog: Catalog | None = None) -> tuple[Any, Problem | None]:
    """Coerce ``value`` to ``spec``; return ``(value, None)`` or ``(value, Problem)``."""
    if spec.kind in ("int", "float"):
        return _check_number(path, value, spec)
    if spec.kind == "id":
        return _check_id(path, value, spec, catalog)
    return _check_other(path, value, spec)


# --- filling sections -------------------------------------------------------------------------------


def _fill_section(name: str, raw: Any, specs: dict[str, F], ctx: _Ctx, problems: list[Problem],
                  kind: str | None) -> dict:
    """Validate the given fields of one section and fill the defaults (``kind``: the workload kind)."""
    out: dict = {}
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        problems.append(Problem(name, "must be a mapping of fields", raw))
        raw = {}
    problems += unknown_keys(name, [key for key in raw if key not in specs], f"field of {name}", specs)
    ctx.data[name] = out
    for key, spec in specs.items():
        applies = not spec.kinds or kind is None or kind in spec.kinds
        if raw.get(key) is not None:
            if not applies:
                problems.append(Problem(f"{name}.{key}", f"only applies to {' or '.join(spec.kinds)} workloads",
                                        raw[key]))
                continue
            value, problem = check_value(f"{name}.{key}", raw[key], spec, ctx.catalog)
            if problem:
                problems.append(problem)
                value = None
            out[key] = value
        elif applies:
            if callable(spec.default):
                out[key] = None
                ctx.deferred.append((out, key, spec.default))  # may depend on a later section
            else:
                out[key] = copy.deepcopy(spec.default)
        # fields that do not apply to this workload are left out of the plan
    return out


def _check_rules(rules: tuple[Rule, ...], values: dict, problems: list[Problem], bad: set[str]) -> None:
    """Append the problems of the rules whose inputs are all known and valid."""
    for rule in rules:
        if rule.path in bad or any(name in bad or (values.get(name) is None and name not in rule.optional)
                                   for name in rule.inputs):
            continue
        if rule.broken(values):
            message = _format(rule.message, values)
            if rule.shown:
                problems.append(Problem(rule.path, message, values[rule.shown]))
            else:
                problems.append(Problem(rule.path, message, has_value=False))
            bad.add(rule.path)


def _format(message: str, values: dict) -> str:
    for key, value in values.items():
        message = message.replace("{" + key + "}", str(value))
    return message


def _model_base(raw: Mapping, catalog: Catalog, problems: list[Problem]) -> dict | None:
    """The fields of the catalog model ``from:`` names ({} without ``from``; None if it is unknown)."""
    if raw.get("from") is None:
        return {}
    value, problem = check_value("model.from", raw["from"], MODEL["from"], catalog)
    if problem:
        problems.append(problem)
        return None
    rec = catalog.models[value]
    base = {k: getattr(rec, k) for k in MODEL if hasattr(rec, k)}
    base.update(name=rec.name, params=None)  # params: derived from the (possibly changed) architecture
    return base


def _model_fields(raw: Mapping, base: dict, catalog: Catalog, problems: list[Problem]) -> tuple[dict, set]:
    """Each model field: the given value (checked), else the base model's, else the default."""
    out, bad = {}, set()
    for key, spec in MODEL.items():
        if raw.get(key) is not None:
            out[key], problem = check_value(f"model.{key}", raw[key], spec, catalog)
            if problem:
                problems.append(problem)
                bad.add(key)
        elif key in base:
            out[key] = base[key]
        elif key in MODEL_REQUIRED:
            problems.append(Problem(f"model.{key}", "is required for a model given as a mapping", has_value=False))
            bad.add(key)
            out[key] = None
        else:
            out[key] = None if callable(spec.default) else copy.deepcopy(spec.default)
    return out, bad


def _model_from_mapping(raw: Mapping, catalog: Catalog, problems: list[Problem]) -> tuple[dict, Model | None]:
    """Validate a model given as a mapping; the filled fields and a Model record (None if invalid)."""
    problems += unknown_keys("model", [key for key in raw if key not in MODEL], "model field", MODEL)
    base = _model_base(raw, catalog, problems)
    if base is None:
        return dict(raw), None
    n_before = len(problems)
    out, bad = _model_fields(raw, base, catalog, problems)
    if len(problems) > n_before:
        return out, None
    for key, spec in MODEL.items():  # defaults that depend on other fields
        if out[key] is None and callable(spec.default):
            out[key] = spec.default(out)
    _check_rules(MODEL_RULES, out, problems, bad)
    if len(problems) > n_before:
        return out, None
    if out["head_dim"] is None:
        out["head_dim"] = out["hidden"] // out["heads"]
    record_fields = {k: v for k, v in out.items() if k not in ("from", "params", "name")}
    model = Model(id=out["from"] or "custom", name=out["name"], params_published=out["params"],
                  status="estimate", sources="", as_of="1970-01-01", notes=None, **record_fields)
    return out, _architecture_in_range(model, problems)


def _architecture_in_range(model: Model, problems: list[Problem]) -> Model | None:
    """``model``, or None (and a problem) when its architecture has more parameters than ``params`` allows."""
    from .model.params import model_param_counts

    derived = model_param_counts(model)["params"]
    if derived <= MODEL["params"].hi:
        return model
    problems.append(Problem("model", f"has {derived:.3g} parameters by its architecture, more than the "
                                     f"{_bound(MODEL['params'].hi)} a plan may have: check layers, hidden, "
                                     f"ffn_hidden and experts", has_value=False))
    return None


def _fill_model(raw: Any, catalog: Catalog, problems: list[Problem]) -> tuple[Any, Model | None]:
    """Return (plan value, Model record) for ``model:`` given as an id or a mapping."""
    if raw is None:
        problems.append(Problem("model", "is required: a catalog model id (see `aiplan catalog models`) or a mapping",
                                has_value=False))
        return None, None
    if isinstance(raw, str):
        if raw in catalog.models:
            return raw, catalog.models[raw]
        problems.append(unknown("model", raw, "model id", catalog.models))
        return raw, None
    if not isinstance(raw, Mapping):
        problems.append(Problem("model", "must be a catalog model id or a mapping of architecture fields", raw))
        return raw, None
    return _model_from_mapping(raw, catalog, problems)


def _rule_values(data: dict, model: Model | None, catalog: Catalog) -> dict:
    """The values :data:`PLAN_RULES` read: every ``section.field``, the model's fields, the kind."""
    values = {f"{s}.{k}": v for s in SECTIONS for k, v in data[s].items()}
    values["kind"] = data["workload"].get("kind")
    if model is not None:
        values.update({f"model.{k}": getattr(model, k) for k in ("hidden", "heads", "layers", "context", "experts")})
    server = catalog.servers.get(values.get("facility.server")) if isinstance(values.get("facility.server"), str) \
        else None
    cloud = catalog.clouds.get(values.get("cost.cloud")) if isinstance(values.get("cost.cloud"), str) else None
    gpu = catalog.gpus.get(values.get("cluster.gpu")) if isinstance(values.get("cluster.gpu"), str) else None
    values["gpu.has_fp4"] = bool(gpu.fp4_tflops) if gpu else None
    values["server.gpu"] = server.gpu if server else None
    values["cloud.gpu"] = cloud.gpu if cloud else None
    tp, pp = values.get("cluster.tensor_parallel"), values.get("cluster.pipeline_parallel")
    values["tp_pp"] = (tp or 1) * (pp or 1) if (tp or pp) else None
    prompt, output = values.get("workload.prompt_tokens"), values.get("workload.output_tokens")
    values["prompt+output"] = prompt + output if prompt is not None and output is not None else None
    return values


def _top_level(plan: Mapping, problems: list[Problem]) -> set[str]:
    """Check the top-level keys; return the sections a misspelt key probably meant."""
    found = unknown_keys("", [key for key in plan if key not in TOP_LEVEL], "plan section", TOP_LEVEL)
    problems += found
    return {s for s in SECTIONS for problem in found if f"'{s}'" in problem.hint}


def _catalog_dirs(value: Any, base_dir: Path | None) -> list[str]:
    """The plan's catalog folders, relative ones resolved against ``base_dir``."""
    base = base_dir or Path.cwd()
    return [str((base / p).resolve()) if not Path(p).is_absolute() else p for p in value]


def plan_as_data(plan: Any) -> tuple[Any, Path | None]:
    """The plan as written, as data (a path or YAML text read, not filled with defaults), and the
    folder relative paths resolve against (the plan file's, None otherwise)."""
    is_path = isinstance(plan, str) and "\n" not in plan and plan.strip().endswith((".yaml", ".yml"))
    if isinstance(plan, Path) or is_path:
        return read_yaml(plan), Path(plan).resolve().parent
    if isinstance(plan, str):
        return parse_yaml(plan, "plan"), None
    check_depth(plan)
    return plan, None


def load_plan(plan: Any, catalog: Catalog | None = None, base_dir: str | Path | None = None) -> Plan:
    """Validate ``plan`` (a dict, a YAML text, a path, or a :class:`Plan`) and fill defaults.

    ``base_dir``: folder relative paths in the plan resolve against (default: the plan file's
    folder, else the current folder).

    Raises
    ------
    PlanError
        with one line per problem: field path, value received, what is allowed.
    """
    if isinstance(plan, Plan):
        return plan
    plan, file_dir = plan_as_data(plan)
    base = Path(base_dir) if base_dir is not None else file_dir
    if not isinstance(plan, Mapping):
        raise PlanError(Problem("plan", "must be a mapping with sections model, workload, cluster, facility, cost",
                                plan))
    problems: list[Problem] = []
    meant = _top_level(plan, problems)
    data: dict = {}
    for key in ("name", "client", "prepared_by", "catalog"):
        spec = TOP[key]
        if plan.get(key) is not None:
            data[key], problem = check_value(key, plan[key], spec)
            problems += [problem] if problem else []
        elif spec.default is not None:
            data[key] = spec.default
    folders = data.get("catalog") if not any(p.path == "catalog" for p in problems) else None
    if isinstance(folders, list):  # the plan as evaluated names its folders absolutely: it re-loads anywhere
        data["catalog"] = _catalog_dirs(folders, base)
    if catalog is None:
        extra = data["catalog"] if isinstance(folders, list) else []
        try:
            catalog = load_catalog(extra)
        except PlanError as exc:
            raise PlanError(problems + exc.problems) from None
    data["model"], model = _fill_model(plan.get("model"), catalog, problems)
    ctx = _Ctx(data, catalog, model)
    raw_w = plan.get("workload") if isinstance(plan.get("workload"), Mapping) else {}
    kind = raw_w.get("kind", "pretrain")
    kind = kind if isinstance(kind, str) and kind in KINDS else None
    for section, specs in SECTIONS.items():
        if section == "workload" and model is None:  # seq_len's default needs the model
            specs = {k: (F(s.kind, None, s.lo, s.lo_open, s.hi, s.choices, s.table, s.kinds) if callable(s.default)
                         else s) for k, s in specs.items()}
        _fill_section(section, plan.get(section), specs, ctx, problems, kind)
    ctx.resolve_deferred()
    bad = {p.path for p in problems}
    bad |= {f"{s}.{k}" for s in SECTIONS if s in meant or s in bad for k in SECTIONS[s]}
    _check_rules(PLAN_RULES, _rule_values(data, model, catalog), problems, bad)
    if problems:
        raise PlanError(problems)
    return Plan(data=data, catalog=catalog, model=model, gpu=catalog.gpus[data["cluster"]["gpu"]],
                server=catalog.servers[data["facility"]["server"]],
                cloud=catalog.clouds.get(data["cost"]["cloud"]) if data["cost"]["cloud"] else None,
                region=catalog.regions[data["facility"]["region"]])


# --- YAML and overrides ---------------------------------------------------------------------------


def _rounded(value: Any) -> Any:
    """Floats to 12 significant digits (0.4100000000000001 -> 0.41), recursively."""
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def dump_plan(data: Mapping, rounded: bool = False) -> str:
    """The plan as YAML, key order kept; round-trips through :func:`load_plan`.

    ``rounded``: floats to 12 significant digits (what a person typed, not the arithmetic noise of
    a slider: 0.4100000000000001 -> 0.41); the app saves plans this way.
    """
    if isinstance(data, Plan):
        data = data.data
    data = _rounded(dict(data)) if rounded else dict(data)
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True)


def apply_overrides(plan: Any, overrides: list[str]) -> dict:
    """Apply ``section.key=value`` overrides (values parsed as YAML) to a copy of ``plan``."""
    if plan is None:
        plan = {}
    if not isinstance(plan, Mapping):
        raise PlanError(Problem("plan", "must be a mapping with sections model, workload, cluster, facility, cost",
                                plan))
    out = copy.deepcopy(dict(plan))
    problems = []
    for item in overrides:
        path, _, text = item.partition("=")
        keys = [k for k in path.strip().split(".") if k]
        if not _ or not keys:
            problems.append(Problem("--set", "must look like section.key=value", item))
            continue
        try:
            value = parse_yaml(text, f"--set {path}", document=False) if text.strip() else None
        except PlanError:
            value = text
        node = out
        for key in keys[:-1]:
            if not isinstance(node.get(key), dict):
                node[key] = {"from": node[key]} if key == "model" and isinstance(node.get(key), str) else {}
            node = node[key]
        node[keys[-1]] = value
    if problems:
        raise PlanError(problems)
    return out
