"""The plan schema: one table of every plan field (type, range or choices, default, unit, label).

:data:`TOP`, :data:`MODEL` and :data:`SECTIONS` hold one :class:`F` row per field. Validation, the
defaults reported back in ``result['plan']`` and ``docs/plan.md`` all come from this table.
"""


from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.assumptions import MAX_GPUS
from ..core.catalog import (
    BUYER_PROFILES,
    CONDITIONS,
    GPU,
    SERVING_PRECISIONS,
    Region,
    Server,
    buyer_figure,
    mlperf_latency_limits_ms,
    pick_server_price,
)

KINDS = ("pretrain", "finetune", "inference")
#: longest text field (a plan name, a client) [characters]
MAX_TEXT_CHARS = 200
#: most catalog folders in a plan, and the longest folder path [characters]
MAX_PATHS, MAX_PATH_CHARS = 20, 4096
TRAIN = ("pretrain", "finetune")
#: cluster fields every plan accepts that only a training plan uses (a serving plan's layout is its tensor,
#: attention-data, expert and pipeline parallelism): the app hides them and the report leaves them out for serving
TRAINING_ONLY = ("cluster.mfu", "cluster.data_parallel", "cluster.zero_stage")
_SPECULATING = ("workload.speculative_tokens", lambda n: (n or 0) > 0)
#: plan fields that change nothing unless another field of the filled plan passes a test: (that field, the test);
#: the report's assumptions leave them out where they do not apply (the draft settings with speculation off)
UNUSED_UNLESS = {
    "workload.speculative_method": _SPECULATING,
    "workload.speculative_acceptance": _SPECULATING,
    "workload.draft_cost": _SPECULATING,
    "cost.build_usd_per_mw": ("cost.facility_model", lambda model: model == "build"),
    "cost.colocation_usd_per_kw_month": ("cost.facility_model", lambda model: model == "colocation"),
    "facility.growth_years": ("facility.growth_per_year", lambda growth: (growth or 0) > 0),
}
LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")
PRICINGS = ("on-demand", "reserved-1y", "reserved-3y", "spot")


@dataclass(frozen=True)
class F:
    """One plan field of the schema table.

    ``default`` is a value, a callable ``(ctx) -> value`` (``ctx`` holds the filled sections so
    far and the catalog; ``default_doc`` says where it comes from), or ``None`` (left for the
    kit). ``kinds`` lists the workload kinds the field applies to (empty = all). Numbers lie in
    ``[lo, hi]`` (``lo`` excluded when ``lo_open``). ``label`` is the short human label the app and
    the report show; ``fmt`` the display format (:func:`aiplan.core.fields.format_value`);
    ``judgement`` marks a default that is our judgement rather than a published figure, and
    ``sources`` names where a published default comes from: with the kit's constants
    (:mod:`aiplan.core.assumptions`) they make the assumptions registry.
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
    #: ids of ``data/sources.csv`` the default comes from (a published figure or rule)
    sources: tuple = ()


def _gpu(ctx) -> GPU:
    return ctx.catalog.gpus[ctx.data["cluster"]["gpu"]]


def _server(ctx) -> Server:
    return ctx.catalog.servers[ctx.data["facility"]["server"]]


#: the default rack power budget [kW]: four DGX H100 (10.2 kW each) per rack [nvidia-ra-11333-001]
RACK_KW = 40.0


def _rack_kw(server: Server) -> float:
    """The default rack power budget [kW]: :data:`RACK_KW`, or the system's own power where one system draws
    more (a GB200 NVL72 is one rack of 120-150 kW: a 40 kW budget would declare NVIDIA's own design unworkable)."""
    kw = server.max_power_kw
    return float(kw) if kw is not None and kw > RACK_KW else RACK_KW


def _region(ctx) -> Region:
    return ctx.catalog.regions[ctx.data["facility"]["region"]]


def _profile(ctx, part: str) -> float:
    """The plan's buyer profile's published figure for an owning-cost ``part`` (``buyer_profiles.csv``)."""
    return buyer_figure(ctx.catalog, ctx.data["cost"]["buyer_profile"], part).value


def _server_price(ctx) -> float | None:
    """The server's price for the plan's buyer, date and condition (``server_prices.csv``), else the server
    catalog's price."""
    cst = ctx.data["cost"]
    price = pick_server_price(ctx.catalog, ctx.data["facility"]["server"], cst["buyer_profile"], cst["purchase_date"],
                              cst["hardware_condition"])
    return price.price_usd if price is not None else _server(ctx).price_usd
#: precisions activations may be computed in (weight-only quantisation computes at bf16)
ACTIVATION_PRECISIONS = ("bf16", "fp8", "fp4")
_PART_DEFAULT = "workload.weight_precision where it differs from the checkpoint format, else the model's published " \
                "format of this part, else bf16"


def model_part_precision(model, part: str) -> str:
    """The published checkpoint precision of one part of a catalog model (``attention``, ``dense``,
    ``experts``, ``embeddings``), bf16 where the catalog gives none."""
    return getattr(model, f"precision_{part}", None) or "bf16"


def checkpoint_precision(model) -> str:
    """The precision a model's weights are published in: of its routed experts for a mixture of experts
    (most of the weights), else of its dense MLP."""
    return model_part_precision(model, "experts" if model.experts > 1 else "dense")


def _part_precision(ctx, part: str) -> str:
    given = ctx.data["workload"]["weight_precision"]
    if given is None:
        raise KeyError("weight_precision")  # resolved later (deferred defaults are retried)
    return model_part_precision(ctx.model, part) if given == checkpoint_precision(ctx.model) else given


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
    "global_batch_tokens": F("float", lambda ctx: max(4.0e6 if ctx.data["workload"]["kind"] == "pretrain" else 1.0e6,
                                                      ctx.data["workload"].get("seq_len") or 0),
                             lo=1, hi=1e10, kinds=TRAIN, unit="tokens", fmt="big",
                             label="Global batch", doc="tokens per optimizer step",
                             default_doc="4 million tokens for pretraining, 1 million for fine-tuning, at least one "
                                         "sequence", judgement=True),
    "precision": F("choice", "bf16", choices=("fp32", "fp16", "bf16", "fp8", "fp4"), kinds=TRAIN, label="Precision",
                   doc="training compute precision (mixed precision keeps fp32 master weights; fp4 = NVFP4/MXFP4 "
                       "matmuls, on GPUs with FP4 tensor cores)"),
    "optimizer": F("choice", "adamw", choices=("adamw", "adamw-8bit", "sgd", "adafactor"), kinds=TRAIN,
                   label="Optimizer", doc="optimizer (decides the optimizer state per parameter)", advanced=True),
    "recompute": F("choice", "selective", choices=("none", "selective", "full"), kinds=TRAIN,
                   label="Recomputation", doc="activation recomputation (Korthikanti et al. 2022)", advanced=True,
                   sources=("arxiv-2205.05198",)),
    "flash_attention": F("bool", True, label="Flash attention", doc="fused attention: no s^2 activation term",
                         advanced=True),
    "requests_per_s": F("float", 1.0, lo=1e-6, hi=10_000_000, kinds=("inference",), unit="req/s",
                        label="Requests per second", doc="request rate the service must carry"),
    "prompt_tokens": F("int", 1000, lo=1, hi=100_000_000, kinds=("inference",), unit="tokens",
                       label="Prompt tokens", doc="input tokens per request"),
    "output_tokens": F("int", 250, lo=1, hi=100_000_000, kinds=("inference",), unit="tokens",
                       label="Output tokens", doc="generated tokens per request"),
    "weight_precision": F("choice", lambda ctx: checkpoint_precision(ctx.model), choices=SERVING_PRECISIONS,
                          kinds=("inference",), label="Weight precision",
                          doc="precision of the served linear layers (fp4 = NVFP4/MXFP4; on a GPU without FP4 "
                              "tensor cores fp4 and int4 weights are dequantised and computed at the activation "
                              "precision); the parts' own fields below override it",
                          default_doc="the model's published checkpoint format (of its experts for a mixture of "
                                      "experts), else bf16"),
    "attention_precision": F("choice", lambda ctx: _part_precision(ctx, "attention"), choices=SERVING_PRECISIONS,
                             kinds=("inference",), label="Attention weights",
                             doc="precision of the attention projections", advanced=True,
                             default_doc=_PART_DEFAULT),
    "dense_precision": F("choice", lambda ctx: _part_precision(ctx, "dense"), choices=SERVING_PRECISIONS,
                         kinds=("inference",), label="Dense MLP weights",
                         doc="precision of the dense MLP layers, shared experts and routers", advanced=True,
                         default_doc=_PART_DEFAULT),
    "expert_precision": F("choice", lambda ctx: _part_precision(ctx, "experts"), choices=SERVING_PRECISIONS,
                          kinds=("inference",), label="Expert weights",
                          doc="precision of the routed experts (mixture of experts)", advanced=True,
                          default_doc=_PART_DEFAULT),
    "embedding_precision": F("choice", lambda ctx: model_part_precision(ctx.model, "embeddings"),
                             choices=SERVING_PRECISIONS, kinds=("inference",), label="Embeddings and head",
                             doc="precision of the embedding table and the output head", advanced=True,
                             default_doc="the model's published checkpoint format, else bf16"),
    "activation_precision": F("choice", None, choices=ACTIVATION_PRECISIONS, kinds=("inference",),
                              label="Activation precision",
                              doc="precision the matrix multiplications take their activations in (bf16: "
                                  "low-bit weights are weight-only and compute at bf16 speed)", advanced=True,
                              default_doc="each part's weight precision where the GPU multiplies at it (FP8 and "
                                          "FP4 checkpoints run W8A8 and W4A4), else bf16"),
    "kv_precision": F("choice", "bf16", choices=SERVING_PRECISIONS, kinds=("inference",),
                      label="KV-cache precision", doc="precision of the key/value cache", advanced=True),
    "max_batch": F("int", None, lo=1, hi=1_000_000, kinds=("inference",), unit="sequences", label="Batch cap",
                   doc="cap on concurrent sequences per replica", default_doc="as many as fit", advanced=True),
    # defaults: MLPerf Inference rules, Llama 2 70B Server scenario, TTFT 2,000 ms and TPOT 200 ms (99th
    # percentiles) [mlcommons-inference-rules-v5.1]
    "ttft_ms_target": F("float", mlperf_latency_limits_ms("Server")[0], lo=1, hi=3_600_000, kinds=("inference",),
                        unit="ms",
                        label="Time-to-first-token target",
                        doc="longest acceptable time to the first output token (MLPerf Inference Server "
                            "scenario, Llama 2 70B: 2,000 ms)"),
    "tpot_ms_target": F("float", mlperf_latency_limits_ms("Server")[1], lo=0.1, hi=60_000, kinds=("inference",),
                        unit="ms",
                        label="Time-per-output-token target",
                        doc="longest acceptable time between output tokens (MLPerf Inference Server "
                            "scenario, Llama 2 70B: 200 ms)"),
    "prefill_chunk_tokens": F("int", 8192, lo=16, hi=10_000_000, kinds=("inference",), unit="tokens",
                              label="Prefill chunk", judgement=True, advanced=True,
                              doc="most prompt tokens one engine step prefills (chunked prefill; a value at least "
                                  "the prompt prefills whole prompts); 8,192 is the default token budget per step "
                                  "of TensorRT-LLM, SGLang and vLLM on data-centre GPUs"),
    "speculative_tokens": F("int", 0, lo=0, hi=16, kinds=("inference",), unit="tokens",
                            label="Draft tokens", advanced=True,
                            doc="draft tokens proposed per decoding step for speculative decoding (0: off)"),
    "speculative_method": F("choice", lambda ctx: "mtp" if (ctx.model.mtp_modules or 0) > 0 else "draft",
                            choices=("mtp", "draft"), kinds=("inference",), label="Draft method", advanced=True,
                            doc="mtp (multi-token prediction): the model's own multi-token-prediction module "
                                "drafts; draft (draft model): a small draft model or head",
                            default_doc="multi-token prediction for models that ship a module for it, else a draft "
                                        "model"),
    "speculative_acceptance": F("float", 0.7, lo=0, hi=1, kinds=("inference",), fmt="pct",
                                label="Draft acceptance", judgement=True, advanced=True,
                                doc="probability a draft token is accepted (DeepSeek-V3 reports 85-90% for its "
                                    "first MTP token; acceptance falls for later draft tokens)"),
    "draft_cost": F("float", lambda ctx: round(1.0 / ctx.model.layers, 4), lo=0, hi=1, kinds=("inference",),
                    fmt="pct", label="Draft cost per token", judgement=True, advanced=True,
                    doc="time to draft one token as a share of a decoding step of the served model",
                    default_doc="one layer of the model (an MTP module or an EAGLE-style head is one layer)"),
    "interruptible": F("bool", lambda ctx: ctx.data["workload"]["kind"] != "inference", label="Tolerates interruption",
                       doc="the workload may be stopped and restarted (spot capacity can be reclaimed at any time); "
                           "the options explorer offers spot only when it does",
                       default_doc="yes for training and fine-tuning (checkpoints make a run restartable), no for "
                                   "serving (a production service must stay up)", judgement=True),
}

CLUSTER: dict[str, F] = {
    "gpu": F("id", "h100-sxm", table="gpus", label="GPU", doc="GPU model"),
    "gpus": F("int", None, lo=1, hi=MAX_GPUS, unit="GPUs", fmt="count", label="GPUs",
              doc="GPU count; or leave it out and give deadline_days (training) or let the load size it (serving)",
              default_doc="sized for the deadline or the load"),
    "deadline_days": F("float", None, lo=0.01, hi=36525, kinds=TRAIN, unit="days", label="Deadline",
                       doc="training deadline; the kit sizes the GPUs to meet it"),
    "deadline_confidence": F("float", 0.8, lo=0.5, hi=0.99, kinds=TRAIN, fmt="pct", label="Deadline confidence",
                             doc="chance of meeting the deadline the GPU count is sized for (0.5: the median, even "
                                 "odds; 0.8, the default: four runs in five finish in time, as a client who gives a "
                                 "deadline means to meet it; 0.9: nine in ten); the count for even odds is shown "
                                 "beside it", judgement=True),
    "gpus_per_node": F("int", lambda ctx: _server(ctx).gpus_per_node, lo=1, hi=1024, label="GPUs per server",
                       doc="GPUs in one server", default_doc="the server's", advanced=True),
    "tensor_parallel": F("int", None, lo=1, hi=1024, label="Tensor parallel",
                         doc="GPUs that split each layer", default_doc="the layout search", advanced=True),
    "pipeline_parallel": F("int", None, lo=1, hi=10_000, label="Pipeline parallel",
                           doc="pipeline stages (at most the layers; when they do not divide the layers, a stage "
                               "holds ceil(layers / stages) layers at most)", default_doc="the layout search",
                           advanced=True),
    "data_parallel": F("int", None, lo=1, hi=MAX_GPUS, label="Data parallel", doc="model replicas",
                       default_doc="GPUs / (tensor x pipeline parallel)", advanced=True),
    "expert_parallel": F("int", None, lo=1, hi=100_000, label="Expert parallel",
                         doc="GPUs the routed experts are spread over",
                         default_doc="training: 1; serving: the layout search", advanced=True),
    "attention_data_parallel": F("int", None, lo=1, hi=1024, kinds=("inference",), label="Attention data parallel",
                                 doc="serving: attention ranks that each hold their own sequences and KV cache "
                                     "(with the experts spread over them: DeepSeek's DEP layout)",
                                 default_doc="the layout search", advanced=True),
    "disaggregated": F("bool", None, kinds=("inference",), label="Separate prefill and decode pools",
                       doc="serve prefill and decode on separate pools of GPUs, the KV cache moving between them",
                       default_doc="the kit chooses two pools when they need fewer GPUs", advanced=True),
    "zero_stage": F("int", None, lo=0, hi=3, label="ZeRO stage", doc="0..3 (FSDP full shard = 3)",
                    default_doc="the layout search", advanced=True),
    "sequence_parallel": F("bool", True, kinds=TRAIN, label="Sequence parallel",
                           doc="shard activations along the sequence with tensor parallelism", advanced=True),
    "mfu": F("float", None, lo=0, lo_open=True, hi=1, fmt="pct", label="MFU",
             doc="model FLOP utilisation over the run's steps, against the peak at the training precision",
             default_doc="calibrated for the GPU, precision, model size, MoE and its experts' size, fine-tuning "
                         "method and GPU count, with the per-step fixed costs at the plan's global batch"),
    "run_overhead": F("float", None, lo=1, hi=10, kinds=TRAIN, label="Run overhead",
                      doc="end-to-end GPU-hours over step-time GPU-hours, interruptions excluded "
                          "(evaluation, warm-up, stragglers, checkpoint stalls)",
                      default_doc="calibrated on published training runs", advanced=True),
    "usable_memory_fraction": F("float", 0.90, lo=0.05, hi=1, fmt="pct", label="Usable GPU memory",
                                doc="share of GPU memory the job may use (CUDA context, fragmentation)",
                                judgement=True, advanced=True),
    "interruptions_per_gpu_year": F("float", LLAMA3_INTERRUPTIONS_PER_GPU_YEAR, lo=0, hi=1000, unit="1/yr",
                                    label="Interruptions per GPU-year",
                                    doc="job-stopping interruptions per GPU-year (Llama 3 405B rate)", advanced=True,
                                    sources=("arxiv-2407.21783",)),
    "restart_min": F("float", 10.0, lo=0, hi=10080, unit="min", label="Restart time",
                     doc="time to restart after an interruption", judgement=True, advanced=True),
    "checkpoint_interval_min": F("float", None, lo=0.1, hi=1_000_000, kinds=TRAIN, unit="min",
                                 label="Checkpoint interval", doc="time between checkpoints",
                                 default_doc="the Young/Daly optimum", advanced=True,
                                 sources=("doi-10.1145-361147.361115", "acolyer-2015-daly")),
    "fabric_switch": F("id", lambda ctx: _server(ctx).default_switch or "qm9700", table="switches",
                       label="Fabric switch", doc="compute-fabric switch",
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
                               advanced=True, sources=("seed-ai-training-quick-reference",)),
    "storage_write_gb_per_s": F("float", None, lo=0.001, hi=1e9, unit="GB/s", label="Storage write",
                                doc="aggregate storage write bandwidth", default_doc="the read bandwidth",
                                advanced=True),
    "dataset_tb": F("float", None, lo=1e-6, hi=1e9, unit="TB", fmt="tb", label="Data set",
                    doc="size of the data held on storage: the training tokens, or the served model's weights",
                    default_doc="training: tokens x bytes per token; serving: the model's weights", advanced=True),
    "checkpoints_kept": F("int", 3, lo=1, hi=1000, kinds=TRAIN, label="Checkpoints kept",
                          doc="checkpoints kept on fast storage", judgement=True, advanced=True),
    "storage_growth_factor": F("float", 10.0, lo=1, hi=1000, label="Storage growth",
                               doc="headroom on data-set storage (rule: plan for 10x)", advanced=True,
                               sources=("seed-ai-training-quick-reference",)),
}

FACILITY: dict[str, F] = {
    "server": F("id", lambda ctx: _gpu(ctx).default_server, table="servers", label="Server",
                doc="GPU server", default_doc="the GPU's default server"),
    "pue": F("float", 1.3, lo=1, hi=5, label="PUE",
             doc="power usage effectiveness (total / IT); 1.3 = AI data-centre design target (Uptime 2023 "
                 "average 1.58)", sources=("uptime-uii-221-pue-2023",)),
    "rack_kw": F("float", lambda ctx: _rack_kw(_server(ctx)), lo=0.1, hi=2000, unit="kW", label="Rack power",
                 doc="power budget per rack (4 DGX H100 per rack is 40.8 kW)", sources=("nvidia-ra-11333-001",),
                 default_doc="40 kW; a rack-scale system (GB200 or GB300 NVL72) is a rack of its own: its power"),
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
               doc="cloud offer to compare with", default_doc="the GPU's default offer"),
    "pricing": F("choice", "on-demand", choices=PRICINGS, label="Cloud pricing", doc="cloud pricing"),
    "capacity_reused": F("bool", False, kinds=TRAIN, label="Capacity reused",
                         doc="reserved or bought capacity is reused after this run (the run pays its share); "
                             "otherwise a reservation or a purchase for one run is paid in full"),
    "budget_usd": F("float", None, lo=1, hi=1e13, unit="USD", fmt="usd", label="Budget",
                    doc="the most the client will spend: on the training run, or per month of serving; a plan whose "
                        "cheaper cost (renting at the chosen pricing, or owning) is above it gets a critical finding",
                    default_doc="none: the cost is not checked against a budget"),
    "utilisation": F("float", 0.7, lo=0.001, hi=1, fmt="pct", label="Utilisation",
                     doc="share of hours the cluster does useful work", judgement=True),
    "buyer_profile": F("choice", "enterprise", choices=BUYER_PROFILES, label="Buyer",
                       doc="who buys the cluster: hyperscaler, large neocloud or enterprise; sets the published "
                           "depreciation life, cost of capital, colocation, support and the kind of server price "
                           "(volume, street or list) the owning cost uses"),
    "years": F("float", lambda ctx: _profile(ctx, "years"), lo=0.1, hi=15, unit="years", label="Ownership period",
               doc="years the cluster is kept (straight-line depreciation)",
               default_doc="the buyer's published depreciation life (enterprise: 3 years, a judgement)"),
    "purchase_date": F("str", None, label="Purchase date",
                       doc="date the servers are bought, or valued at for servers already owned (YYYY-MM-DD): the "
                           "server price is the newest published price on or before it",
                       default_doc="the newest published price"),
    "hardware_condition": F("choice", "new", choices=CONDITIONS, label="Condition",
                            doc="new, or used (valued at published used prices: also the value of servers already "
                                "owned)"),
    "server_price_usd": F("float", _server_price, lo=1, hi=1e9, unit="USD",
                          fmt="usd", label="Server price", doc="purchase price of one server",
                          default_doc="the catalog's dated price for the buyer (volume, street, else list), the "
                                      "purchase date and the condition"),
    "facility_model": F("choice", "colocation", choices=("colocation", "build"), label="Facility",
                        doc="rent colocation space per kW, or build"),
    "colocation_usd_per_kw_month": F("float", lambda ctx: _profile(ctx, "colocation_usd_per_kw_month"), lo=0,
                                     hi=100_000, unit="USD/kW-month", fmt="usd_rate", label="Colocation price",
                                     doc="colocation per kW of IT capacity",
                                     default_doc="the buyer's: CBRE North America H2 2024, 250-500 kW", advanced=True),
    "build_usd_per_mw": F("float", 11.5e6, lo=0, hi=1e9, unit="USD/MW", fmt="usd", label="Build cost",
                          doc="facility build cost per MW of IT load (midpoint of $8-15M)", judgement=True,
                          advanced=True),
    "staff_usd_per_year": F("float", 250000.0, lo=0, hi=1e8, unit="USD/yr", fmt="usd", label="Engineer cost",
                            doc="cost of one engineer per year (NAG HPC TCO calculator default)", advanced=True,
                            sources=("nag-hpc-tco-calculator",)),
    "servers_per_engineer": F("float", 75.0, lo=0.1, hi=1e6, label="Servers per engineer",
                              doc="GPU servers one engineer runs, counted in 8-GPU servers ('1 FTE per 50-100 GPU "
                                  "servers')", advanced=True),
    "maintenance_fraction_per_year": F("float", lambda ctx: _profile(ctx, "maintenance_fraction_per_year"), lo=0, hi=1,
                                       fmt="pct", label="Maintenance per year",
                                       doc="hardware maintenance per year, share of hardware capex",
                                       default_doc="the buyer's (none published: 0, repairs are staff time and "
                                                   "warranty returns)", advanced=True),
    "support_usd_per_gpu_year": F("float", lambda ctx: _profile(ctx, "support_usd_per_gpu_year"), lo=0, hi=1e6,
                                  unit="USD/GPU-yr", fmt="usd", label="Support per GPU-year",
                                  doc="support subscription per GPU per year",
                                  default_doc="the buyer's (enterprise: NVIDIA AI Enterprise with support, about "
                                              "$4,500)", advanced=True),
    "cost_of_capital": F("float", lambda ctx: _profile(ctx, "cost_of_capital"), lo=0, hi=1, fmt="pct",
                         label="Cost of capital", doc="interest on the money tied up in the purchase, per year",
                         default_doc="the buyer's published borrowing rate", advanced=True),
    "network_cost_fraction": F("float", None, lo=0, hi=0.9, fmt="pct", label="Network share of cost",
                               doc="interconnect share of cluster cost",
                               default_doc="Epoch AI's 19% where a fabric joins the servers; none for one server "
                                           "or rack without fabric switches", advanced=True,
                               sources=("epoch-training-cost-trends",)),
    "storage_usd_per_tb": F("float", 150.0, lo=0, hi=1e6, unit="USD/TB", fmt="usd_rate", label="Storage price",
                            doc="installed storage capex per TB", judgement=True, advanced=True),
    "hybrid_owned_fraction": F("float", 0.5, lo=0, hi=1, fmt="pct", label="Hybrid share owned",
                               doc="hybrid option: share of GPUs owned (they carry the steady load; peaks are "
                                   "rented)", advanced=True),
    "spot_interruptions_per_instance_month": F("float", 0.10, lo=0, hi=1000, unit="1/month",
                                               label="Spot reclaims per month",
                                               doc="spot reclaims per instance-month (AWS Spot Instance Advisor "
                                                   "bands run <5% to >20%)", judgement=True, advanced=True,
                                                   sources=("aws-spot-instance-advisor",)),
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


