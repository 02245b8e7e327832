"""The field registry: every result key's human label, unit, number format and meaning.

One table (:data:`RESULT_FIELDS`) says, for each key of a result (``memory.per_gpu_gb``; list
items as ``cost.monthly[].month``), how people read it: a short label, the unit, the kind of
number (which decides the format) and one sentence of meaning. The app, the report, the
spreadsheet, the CLI table and ``docs/result.md`` all read labels and formats from here, so a
figure looks the same everywhere. :func:`format_value` is the one number formatter: money as
$K/$M/$B, power as kW below 1 MW, durations in hours, days, months or years, large counts in
words, never e-notation.

Plan fields are described by the plan schema (:mod:`aiplan.plan`), which carries the same
label, unit and format attributes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

#: report/app step of each result section
SECTION_STEP = {
    "model": "Model", "memory": "Model", "compute": "Model", "inference": "Model",
    "cluster": "Cluster", "network": "Cluster", "storage": "Cluster", "checkpoint": "Cluster",
    "reliability": "Cluster", "facility": "Facility", "cost": "Cost", "checks": "Findings",
}
#: human title of each result section
SECTION_TITLES = {
    "model": "Model", "memory": "Memory", "compute": "Compute and time", "inference": "Serving",
    "cluster": "Cluster layout", "network": "Network", "storage": "Storage", "checkpoint": "Checkpoints",
    "reliability": "Reliability", "facility": "Facility", "cost": "Cost", "checks": "Findings",
}
#: format kinds and the Excel number format of each
EXCEL_FORMATS = {
    "count": "#,##0", "number": "#,##0.00", "big": "#,##0", "pct": "0.0%", "usd": '"$"#,##0',
    "usd_rate": '"$"#,##0.00', "power": "#,##0.0", "energy": "#,##0.0", "days": "#,##0.0", "hours": "#,##0.0",
    "minutes": "#,##0.0", "seconds": "#,##0.00", "ms": "#,##0.0", "months": "#,##0.0", "gb": "#,##0.0",
    "tb": "#,##0.0", "gb_per_s": "#,##0.0", "flops": "#,##0", "flops_rate": "#,##0", "text": "@", "bool": "@",
    "date": "yyyy-mm-dd", "range": "@",
}
NONE_TEXT = "n/a"


@dataclass(frozen=True)
class Field:
    """One result key: ``label`` [``unit``], formatted as ``kind``; ``doc`` says what it means."""

    key: str
    label: str
    unit: str
    kind: str
    doc: str

    @property
    def section(self) -> str:
        return self.key.split(".", 1)[0].split("[", 1)[0]

    @property
    def step(self) -> str:
        return SECTION_STEP.get(self.section, "")

    @property
    def label_with_unit(self) -> str:
        return f"{self.label} [{self.unit}]" if self.unit else self.label

    @property
    def excel_format(self) -> str:
        return EXCEL_FORMATS.get(self.kind, "General")


# --- formatting -------------------------------------------------------------------------------

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_WORDS = ((1e15, "quadrillion"), (1e12, "trillion"), (1e9, "billion"), (1e6, "million"))


def _sig(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, thousands separators, never e-notation."""
    if value == 0 or not math.isfinite(value):
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(digits - 1 - magnitude, 0)
    text = f"{round(value, decimals):,.{decimals}f}"
    return text


def _plain(value: float, digits: int = 3) -> str:
    """A plain number: integers >= 1,000 with separators, smaller ones to 3 significant digits."""
    return f"{value:,.0f}" if abs(value) >= 1000 else _sig(value, digits)


def _big(value: float) -> str:
    """Large counts in words ("70.6 billion"); beyond 10^18 as a power of ten ("9.75 × 10²³")."""
    v = abs(value)
    if v >= 1e18:
        exponent = math.floor(math.log10(v))
        return f"{_sig(value / 10 ** exponent)} × 10{str(exponent).translate(_SUPERSCRIPT)}"
    for scale, word in _WORDS:
        if v >= scale:
            return f"{_sig(value / scale)} {word}"
    return _plain(value)


def _usd(value: float) -> str:
    v = abs(value)
    sign = "-" if value < 0 else ""
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if v >= scale:
            return f"{sign}${_sig(v / scale)}{suffix}"
    return f"{sign}${v:,.2f}" if v < 100 else f"{sign}${v:,.0f}"


def _duration_days(days: float) -> str:
    if days < 1:
        return _duration_hours(days * 24)
    if days < 90:
        return f"{_sig(days)} days"
    if days < 730:
        return f"{_sig(days / 30.4375)} months"
    return f"{_sig(days / 365.25)} years"


def _duration_hours(hours: float) -> str:
    if hours < 1:
        return _duration_minutes(hours * 60)
    if hours < 48:
        return f"{_sig(hours)} hours"
    return _duration_days(hours / 24)


def _duration_minutes(minutes: float) -> str:
    if minutes < 1:
        return _duration_seconds(minutes * 60)
    if minutes < 120:
        return f"{_sig(minutes)} min"
    return _duration_hours(minutes / 60)


def _duration_seconds(seconds: float) -> str:
    if seconds < 1:
        return f"{_sig(seconds * 1000)} ms"
    if seconds < 120:
        return f"{_sig(seconds)} s"
    return _duration_minutes(seconds / 60)


def _scaled(value: float, units: tuple[tuple[float, str], ...]) -> str:
    """``value`` in the largest unit it reaches (``units`` from largest, each (size, name))."""
    for size, name in units:
        if abs(value) >= size:
            return f"{_plain(value / size)} {name}"
    return f"{_sig(value / units[-1][0])} {units[-1][1]}"


_NUMBER_KINDS = {
    "big": _big,
    "usd": _usd,
    "usd_rate": lambda v: f"${v:,.2f}" if abs(v) >= 0.01 else f"${v:.4f}",
    "power": lambda v: _scaled(v, ((1000.0, "MW"), (1.0, "kW"))) if abs(v) >= 1000 else f"{_plain(v)} kW",
    "energy": lambda v: _scaled(v, ((1000.0, "GWh"), (1.0, "MWh"))),
    "days": _duration_days,
    "hours": _duration_hours,
    "minutes": _duration_minutes,
    "seconds": _duration_seconds,
    "ms": lambda v: f"{_sig(v)} ms" if v < 1000 else _duration_seconds(v / 1000),
    "months": lambda v: f"{_sig(v)} months" if v < 36 else f"{_sig(v / 12)} years",
    "gb": lambda v: _scaled(v, ((1e6, "PB"), (1e3, "TB"), (1.0, "GB"))) if abs(v) >= 1 else f"{_sig(v)} GB",
    "tb": lambda v: _scaled(v, ((1e3, "PB"), (1.0, "TB"))) if abs(v) >= 1 else f"{_sig(v * 1000)} GB",
    "gb_per_s": lambda v: _scaled(v, ((1e3, "TB/s"), (1.0, "GB/s"))) if abs(v) >= 1 else f"{_sig(v * 1000)} MB/s",
    "flops": lambda v: f"{_big(v)} FLOP",
    "flops_rate": lambda v: _scaled(v, ((1e18, "EFLOP/s"), (1e15, "PFLOP/s"), (1e12, "TFLOP/s"), (1e9, "GFLOP/s"))),
}


def format_value(value: Any, kind: str = "number", unit: str = "") -> str:
    """A value for people: ``format_value(4.99e6, "usd") == "$4.99M"``; None gives "n/a".

    ``kind`` is a format kind of :data:`EXCEL_FORMATS`; ``count``, ``number`` and ``big`` append
    ``unit`` (singular for exactly 1: "1 GPU"); the other kinds carry their unit themselves. Lists of numbers (a range) are joined with
    an en dash.

    Examples
    --------
    >>> [format_value(v, k) for v, k in ((1803.67, "power"), (850.2, "power"), (0.38, "pct"),
    ...                                  (720646.8, "count"), (70553706496, "big"), (9.75e23, "flops"))]
    ['1.80 MW', '850 kW', '38%', '720,647', '70.6 billion', '9.75 × 10²³ FLOP']
    >>> [format_value(v, "days") for v in (0.5, 29.99, 400, 20462)]
    ['12.0 hours', '30.0 days', '13.1 months', '56.0 years']
    """
    if value is None:
        return NONE_TEXT
    if isinstance(value, bool) or kind == "bool":
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return "–".join(format_value(v, kind, unit) for v in value)
    if isinstance(value, str) or kind in ("text", "date", "range"):
        return str(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {format_value(v, kind, unit)}" for k, v in value.items())
    value = float(value)
    if not math.isfinite(value):
        return NONE_TEXT
    if kind in _NUMBER_KINDS:
        text = _NUMBER_KINDS[kind](value)
        return f"{text} {unit}" if unit and kind == "big" else text
    if kind == "pct":
        pct = value * 100
        text = f"{pct:.0f}%" if 10 <= abs(pct) < 99 or abs(pct) >= 100 else f"{_sig(pct, 2 if abs(pct) < 10 else 3)}%"
    elif kind == "count":
        text = f"{value:,.0f}"
    else:
        text = _plain(value)
    if unit and kind in ("count", "number"):
        singular = value == 1 and unit.endswith("s") and "/" not in unit
        return f"{text} {unit[:-1] if singular else unit}"
    return text


# --- the registry ---------------------------------------------------------------------------------

# key | label | unit | kind | meaning
_TABLE = """
model.name | Model |  | text | Name of the model as the catalog or the plan gives it.
model.params | Parameters |  | big | Total parameter count of the model (every expert of a mixture-of-experts model).
model.active_params | Active parameters |  | big | Parameters one token passes through (equal to the total for dense models).
model.params_embedding | Embedding parameters |  | big | Parameters of the token embedding, output head and learned positions.
model.params_experts | Expert parameters |  | big | Parameters of the routed experts (what expert parallelism shards); 0 for dense models.
model.params_source | Parameter count from |  | text | Whether the count comes from the architecture or was given in the plan.
model.chinchilla_tokens | Compute-optimal tokens |  | big | Training tokens a compute-optimal run would use: 20 per parameter (Hoffmann et al. 2022).
model.flops_per_token | FLOPs per token | FLOP | big | Model FLOPs per token: 6 x active parameters + attention for training, 2 x active parameters for serving.
model.flops_per_token_basis | FLOPs counted as |  | text | Which formula the FLOPs per token use.
model.attention_flops_per_token | Attention FLOPs per token | FLOP | big | FLOPs of the attention score and value products per token (training: forward and backward).
model.hardware_flops_per_token | Hardware FLOPs per token | FLOP | big | FLOPs the GPUs execute per token, counting recomputed activations.
memory.weights_gb | Weights per GPU | GB | gb | Model weights one GPU holds after tensor, pipeline and ZeRO sharding.
memory.gradients_gb | Gradients per GPU | GB | gb | Gradients one GPU holds (training).
memory.optimizer_gb | Optimizer state per GPU | GB | gb | Optimizer state one GPU holds, including the fp32 master copy of mixed-precision training.
memory.activations_gb | Activations per GPU | GB | gb | Activations the first pipeline stage keeps for the backward pass (Korthikanti et al. 2022).
memory.kv_cache_gb | KV cache per GPU | GB | gb | Key/value cache one GPU holds for the sequences it serves at once.
memory.per_gpu_gb | Memory per GPU | GB | gb | Everything one GPU holds: weights, gradients, optimizer state and activations (training) or weights and KV cache (serving).
memory.gpu_capacity_gb | GPU memory | GB | gb | Memory of one GPU as the datasheet gives it.
memory.usable_gb | Usable memory per GPU | GB | gb | GPU memory a job can use after the CUDA context, library workspaces and fragmentation.
memory.usable_memory_fraction | Usable share of GPU memory |  | pct | Share of GPU memory the plan lets a job use.
memory.fits | Fits in GPU memory |  | bool | Whether the memory per GPU is within the usable memory.
memory.rule_of_thumb_gb | Rule of thumb (whole model) | GB | gb | The quick rule "parameters x 2 bytes x 4" for the whole model. It undercounts mixed-precision Adam (16-18 bytes per parameter before activations), and sharding then divides the total across GPUs.
memory.trainable_params | Trainable parameters |  | big | Parameters with gradients and optimizer state: all of them for full training, the adapters for LoRA and QLoRA.
memory.method | Fine-tuning method |  | text | full, lora or qlora.
memory.layout.tensor_parallel | Tensor parallel (memory layout) |  | count | Tensor-parallel degree the memory figures assume.
memory.layout.pipeline_parallel | Pipeline parallel (memory layout) |  | count | Pipeline-parallel degree the memory figures assume.
memory.layout.data_parallel | Data parallel (memory layout) |  | count | Data-parallel degree the memory figures assume.
memory.layout.zero_stage | ZeRO stage (memory layout) |  | count | ZeRO stage the memory figures assume.
memory.layout.micro_batch | Micro-batch (memory layout) | sequences | count | Sequences per micro-batch the memory figures assume.
memory.layout.recompute | Recomputation (memory layout) |  | text | Activation recomputation the memory figures assume.
memory.layout.expert_parallel | Expert parallel (memory layout) |  | count | Expert-parallel degree the memory figures assume.
compute.total_flops | Training compute | FLOP | flops | Model FLOPs of the whole training run: tokens x FLOPs per token.
compute.hardware_flops | Hardware compute | FLOP | flops | FLOPs the GPUs execute over the run, counting recomputation.
compute.gpus | GPUs |  | count | GPUs of the plan (the same count as the cluster's).
compute.mfu | Model FLOP utilisation |  | pct | Share of the GPUs' peak FLOP/s that does model work (MFU) in steady state.
compute.mfu_low | MFU, low end |  | pct | Low end of the MFU the kit considers plausible for this GPU and scale.
compute.mfu_high | MFU, high end |  | pct | High end of the MFU the kit considers plausible for this GPU and scale.
compute.peak_flops_per_s_per_gpu | Peak compute per GPU | FLOP/s | flops_rate | Dense peak FLOP/s of one GPU at the plan's precision.
compute.gpu_hours | GPU-hours | GPU-h | count | GPU-hours of productive training at the planned MFU.
compute.gpu_hours_low | GPU-hours, low end | GPU-h | count | GPU-hours at the high end of the plausible MFU band.
compute.gpu_hours_high | GPU-hours, high end | GPU-h | count | GPU-hours at the low end of the plausible MFU band.
compute.gpu_hours_with_failures | GPU-hours with failures | GPU-h | count | GPU-hours including checkpoint writes, lost work and restarts.
compute.wall_clock_days | Training time | days | days | Wall-clock time of the run, including the time lost to failures.
compute.wall_clock_days_no_failures | Training time without failures | days | days | Wall-clock time if nothing ever failed.
compute.days_low | Training time, low end | days | days | Wall-clock time at the high end of the plausible MFU band.
compute.days_high | Training time, high end | days | days | Wall-clock time at the low end of the plausible MFU band.
compute.days_low_no_failures | Training time, low end, without failures | days | days | As the low end, if nothing ever failed.
compute.days_high_no_failures | Training time, high end, without failures | days | days | As the high end, if nothing ever failed.
compute.deadline_days | Deadline | days | days | The plan's deadline for the training run.
compute.meets_deadline | Meets the deadline |  | bool | Whether the training time is within the deadline.
compute.tokens_per_s | Throughput | tokens/s | count | Tokens processed per second by the whole cluster (serving: output tokens demanded).
inference.kv_bytes_per_token | KV cache per token | B | count | Key/value cache bytes per token for the whole model at the KV precision.
inference.kv_cache_gb_per_sequence | KV cache per sequence | GB | gb | KV cache of one sequence of prompt + output tokens, whole model.
inference.weights_gb | Weights (whole model) | GB | gb | Weights of the whole model at the serving precision.
inference.tensor_parallel | GPUs per replica |  | count | Tensor-parallel GPUs of one serving replica.
inference.tensor_parallel_min | Smallest replica |  | count | Fewest GPUs that hold the weights and one full-length sequence.
inference.prefill_tokens_per_s_per_gpu | Prefill speed per GPU | tokens/s | count | Prompt tokens one GPU processes per second.
inference.decode_tokens_per_s_per_gpu | Decode speed per GPU | tokens/s | count | Output tokens one GPU generates per second at the operating batch.
inference.ttft_ms | Time to first token | ms | ms | Time from a request's arrival to its first output token.
inference.tpot_ms | Time per output token | ms | ms | Time between output tokens of one request.
inference.max_concurrent_sequences | Most sequences per replica | sequences | count | Sequences whose KV cache fits beside the weights on a replica.
inference.concurrent_sequences | Sequences per replica | sequences | count | Sequences a replica decodes together at the planned load.
inference.requests_in_flight | Requests in flight | requests | count | Requests in the system at once (Little's law).
inference.latency_s | Request latency | s | seconds | Time from a request's arrival to its last output token.
inference.requests_per_s_per_replica | Requests per second per replica | req/s | number | Requests one replica completes per second at its full batch.
inference.tokens_per_s_per_replica | Output tokens per second per replica | tokens/s | count | Output tokens one replica generates per second at its full batch.
inference.replicas | Replicas |  | count | Serving replicas that carry the demanded request rate.
inference.gpus | GPUs needed to serve |  | count | Replicas x GPUs per replica.
inference.meets_demand | Meets the demand |  | bool | Whether the planned GPUs carry the demanded request rate.
inference.memory_bw_fraction | Memory bandwidth reached |  | pct | Share of datasheet memory bandwidth decoding reaches.
cluster.gpus | GPUs |  | count | GPUs of the cluster: the plan's count, or the count the kit sized for the deadline or the load.
cluster.gpus_per_node | GPUs per server |  | count | GPUs in one server (72 for a rack-scale NVL72 system).
cluster.nodes | Servers |  | count | Servers (nodes) of the cluster.
cluster.tensor_parallel | Tensor parallel |  | count | GPUs that split each layer's matrices (within a server).
cluster.pipeline_parallel | Pipeline parallel |  | count | Pipeline stages the layers are split into.
cluster.data_parallel | Data parallel |  | count | Replicas of the model that train on different data (serving: replicas).
cluster.expert_parallel | Expert parallel |  | count | GPUs the routed experts are spread over.
cluster.zero_stage | ZeRO stage |  | count | How far optimizer state, gradients and weights are sharded across data-parallel GPUs (0-3).
cluster.micro_batch | Micro-batch | sequences | count | Sequences per micro-batch.
cluster.recompute | Recomputation |  | text | Activation recomputation: none, selective or full.
cluster.proposed | Layout proposed by the kit |  | bool | Whether the kit chose the parallel layout.
cluster.fits | Layout fits |  | bool | Whether the chosen layout fits in GPU memory.
cluster.fit_hint | What would fit |  | text | When nothing fits: what would.
cluster.per_gpu_gb | Memory per GPU (layout) | GB | gb | Memory per GPU of the chosen layout.
cluster.step_time_s | Step time | s | seconds | Time of one optimizer step of the chosen layout: compute, exposed communication and pipeline bubble.
cluster.layouts_evaluated | Layouts evaluated |  | count | Parallel layouts the search evaluated.
cluster.candidates | Layout candidates |  | text | The best layouts of the search.
cluster.candidates[].tensor_parallel | Tensor parallel |  | count | Tensor-parallel degree of a candidate layout.
cluster.candidates[].pipeline_parallel | Pipeline parallel |  | count | Pipeline stages of a candidate layout.
cluster.candidates[].data_parallel | Data parallel |  | count | Data-parallel degree of a candidate layout.
cluster.candidates[].zero_stage | ZeRO stage |  | count | ZeRO stage of a candidate layout.
cluster.candidates[].micro_batch | Micro-batch | sequences | count | Micro-batch of a candidate layout.
cluster.candidates[].recompute | Recomputation |  | text | Recomputation of a candidate layout.
cluster.candidates[].per_gpu_gb | Memory per GPU | GB | gb | Memory per GPU of a candidate layout.
cluster.candidates[].step_time_s | Step time | s | seconds | Step time of a candidate layout.
cluster.candidates[].fits | Fits |  | bool | Whether a candidate layout fits in GPU memory.
network.leaf_switches | Leaf switches |  | count | Switches the servers connect to (first fabric tier).
network.spine_switches | Spine switches |  | count | Switches of the second fabric tier.
network.core_switches | Core switches |  | count | Switches of the third fabric tier (large clusters only).
network.switches | Switches |  | count | All compute-fabric switches.
network.fabric_tiers | Fabric tiers |  | count | Tiers of the fat-tree fabric (0 for a single server).
network.cables | Fabric cables |  | count | Cables of the compute fabric: server to leaf and between switch tiers.
network.cables_node_leaf | Cables server to leaf |  | count | Cables from server NICs to leaf switches.
network.cables_leaf_spine | Cables leaf to spine |  | count | Cables between leaf and spine switches.
network.cables_spine_core | Cables spine to core |  | count | Cables between spine and core switches.
network.transceivers | Transceivers |  | count | Optical transceivers of the fabric (twin-port cages).
network.endpoints | Fabric ports on servers |  | count | Compute NIC ports the fabric connects.
network.fabric_max_endpoints | Largest fabric of this switch |  | count | Endpoints a three-tier non-blocking fat tree of this switch can connect.
network.fabric_radix | Switch ports |  | count | Ports per fabric switch.
network.oversubscription | Oversubscription |  | number | Leaf downlink to uplink bandwidth ratio (1 = non-blocking).
network.rails | Rails |  | count | NICs per server wired as separate rails.
network.in_network_reduction | In-network reduction |  | bool | Whether all-reduce runs in the switches (SHARP).
network.scale_up_gb_per_s | Scale-up bandwidth per GPU | GB/s | gb_per_s | NVLink-class bandwidth per GPU, one direction.
network.scale_out_gb_per_s | Scale-out bandwidth per GPU | GB/s | gb_per_s | NIC bandwidth per GPU, one direction.
network.allreduce_gb | Gradient data per step | GB | gb | Gradient bytes one GPU synchronises per step.
network.allreduce_s | All-reduce time | s | seconds | Time of the gradient all-reduce per step.
network.allreduce_exposed_s | Exposed all-reduce time | s | seconds | Part of the all-reduce not hidden behind the backward pass.
network.allreduce_factor | All-reduce factor |  | number | Bus-bandwidth correction factor of the all-reduce (nccl-tests).
network.allreduce_bandwidth_gb_per_s | All-reduce bandwidth per GPU | GB/s | gb_per_s | Bandwidth of the link the data-parallel all-reduce runs on.
network.allreduce_to_compute_ratio | All-reduce to compute bandwidth |  | pct | All-reduce link bandwidth as a share of the GPU's scale-up ("compute") bandwidth; the rule asks for at least 10%.
network.tp_comm_s | Tensor-parallel communication | s | seconds | Tensor-parallel all-reduce time per step.
network.pp_comm_s | Pipeline communication | s | seconds | Pipeline send and receive time per step.
network.bubble_fraction | Pipeline bubble |  | pct | Share of the step the pipeline stages sit idle.
network.comm_fraction | Communication share |  | pct | Share of the step spent in exposed communication.
network.compute_s | Compute time per step | s | seconds | Compute time of one step at the planned MFU.
network.microbatches | Micro-batches per step |  | count | Micro-batches each data-parallel GPU runs per step.
storage.read_gb_per_s | Storage read bandwidth | GB/s | gb_per_s | Aggregate read bandwidth the storage provides (default: the 1 GB/s per GPU rule).
storage.write_gb_per_s | Storage write bandwidth | GB/s | gb_per_s | Aggregate write bandwidth for checkpoints.
storage.read_gb_per_s_rule | Read bandwidth, rule of thumb | GB/s | gb_per_s | The rule "1 GB/s of storage throughput per GPU".
storage.read_gb_per_s_tokens | Read bandwidth the data needs | GB/s | gb_per_s | What streaming the tokenised data set takes at the training speed.
storage.write_gb_per_s_needed | Write bandwidth needed | GB/s | gb_per_s | Write bandwidth that keeps checkpoint waste at the target.
storage.write_waste_target | Checkpoint waste target |  | pct | Share of time checkpoint writes may cost.
storage.bytes_per_token | Bytes per stored token | B | count | Bytes of one token id in the tokenised data set.
storage.dataset_tb | Data set | TB | tb | Size of the tokenised data set (serving: the model repository).
storage.checkpoint_tb | Checkpoints kept | TB | tb | Size of the checkpoints kept.
storage.growth_factor | Storage growth headroom |  | number | Headroom on data-set storage (the rule: plan for 10x).
storage.hot_tb | Hot tier | TB | tb | Fast storage: the data set in training and the checkpoints kept.
storage.warm_tb | Warm tier | TB | tb | Capacity storage: the data lake with growth headroom.
storage.cold_tb | Cold tier | TB | tb | Archive: a backup of the warm tier and of the checkpoints.
storage.capacity_tb | Storage capacity | TB | tb | Hot + warm + cold storage.
storage.nvidia_levels.good.read_gb_per_s | NVIDIA guidance "good", read | GB/s | gb_per_s | Read bandwidth of NVIDIA's "good" storage level for this many GPUs.
storage.nvidia_levels.good.write_gb_per_s | NVIDIA guidance "good", write | GB/s | gb_per_s | Write bandwidth of NVIDIA's "good" storage level.
storage.nvidia_levels.good.use | NVIDIA guidance "good", for |  | text | What the "good" level is for.
storage.nvidia_levels.better.read_gb_per_s | NVIDIA guidance "better", read | GB/s | gb_per_s | Read bandwidth of NVIDIA's "better" storage level.
storage.nvidia_levels.better.write_gb_per_s | NVIDIA guidance "better", write | GB/s | gb_per_s | Write bandwidth of NVIDIA's "better" storage level.
storage.nvidia_levels.better.use | NVIDIA guidance "better", for |  | text | What the "better" level is for.
storage.nvidia_levels.best.read_gb_per_s | NVIDIA guidance "best", read | GB/s | gb_per_s | Read bandwidth of NVIDIA's "best" storage level.
storage.nvidia_levels.best.write_gb_per_s | NVIDIA guidance "best", write | GB/s | gb_per_s | Write bandwidth of NVIDIA's "best" storage level.
storage.nvidia_levels.best.use | NVIDIA guidance "best", for |  | text | What the "best" level is for.
checkpoint.size_gb | Checkpoint size | GB | gb | A checkpoint training can resume from: weights and optimizer state.
checkpoint.size_weights_gb | Weights-only checkpoint | GB | gb | A checkpoint of the weights alone.
checkpoint.size_rule_gb | Checkpoint, rule of thumb | GB | gb | The rule "parameters x 2 bytes (BF16) or x 4 (FP32)"; it counts weights only.
checkpoint.saved_params | Parameters saved |  | big | Parameters a checkpoint stores (the adapters only for LoRA).
checkpoint.write_gb_per_s | Checkpoint write bandwidth | GB/s | gb_per_s | Bandwidth checkpoints are written at.
checkpoint.write_s | Checkpoint write time | s | seconds | Time to write one checkpoint (training pauses).
checkpoint.interval_min | Checkpoint interval | min | minutes | Time between checkpoints (default: the Young/Daly optimum).
checkpoint.interval_source | Interval from |  | text | Whether the plan or the Young/Daly optimum sets the interval.
checkpoint.young_min | Young optimum | min | minutes | Young's optimal interval, the square root of 2 x write time x MTBF.
checkpoint.daly_min | Daly optimum | min | minutes | Daly's first-order optimal interval.
checkpoint.step_s | Step time (wall clock) | s | seconds | Wall-clock time per optimizer step.
checkpoint.interval_steps | Checkpoint interval | steps | number | Optimizer steps between checkpoints.
checkpoint.seed_interval_steps | Rule-of-thumb interval | steps | count | The rule "every 500-1,000 steps".
checkpoint.seed_interval_min | Rule-of-thumb interval | min | minutes | The 500-1,000-step rule in minutes.
checkpoint.kept | Checkpoints kept |  | count | Checkpoints kept on fast storage.
reliability.interruptions_per_day | Interruptions per day |  | number | Expected job-stopping interruptions per day at this GPU count.
reliability.interruptions_per_gpu_year | Interruptions per GPU-year |  | number | Job-stopping interruptions per GPU per year the plan assumes.
reliability.mtbf_h | Time between interruptions | h | hours | Mean time between interruptions of the whole job.
reliability.restart_min | Restart time | min | minutes | Time to restart after an interruption.
reliability.overhead_fraction | Time lost (first order) |  | pct | Share of time lost to checkpoints, lost work and restarts (first-order).
reliability.goodput | Goodput |  | pct | Share of wall-clock time that advances training.
reliability.goodput_first_order | Goodput (first order) |  | pct | 1 minus the first-order time lost.
facility.it_kw | IT power | kW | power | Power of servers, network and storage at full load.
facility.total_kw | Facility power | kW | power | IT power x PUE: what the site draws, cooling included.
facility.provisioned_kw | Provisioned power | kW | power | Installed power capacity including redundancy.
facility.heat_btu_per_hr | Heat load | BTU/h | count | Heat the IT equipment gives off.
facility.cooling_tons | Cooling | tons | count | Refrigeration tons that remove the heat load.
facility.cooling | Cooling type |  | text | Air, rear-door heat exchanger or direct liquid cooling.
facility.cooling_recommended | Recommended cooling |  | text | The cooling the rack density calls for.
facility.racks | Racks |  | count | Compute racks plus network, storage and management racks.
facility.compute_racks | Compute racks |  | count | Racks holding GPU servers.
facility.other_racks | Other racks |  | count | Network, storage and management racks.
facility.servers_per_rack | Servers per rack |  | count | GPU servers one rack holds within its power budget and height.
facility.rack_kw_actual | Power per compute rack | kW | power | Power of one full compute rack.
facility.rack_kw_budget | Rack power budget | kW | power | The plan's power budget per rack.
facility.rack_weight_kg | Compute rack weight | kg | count | Weight of one full compute rack.
facility.floor_kg_per_rack | Floor rating per rack | kg | count | Floor-loading limit per rack position the plan assumes.
facility.floor_m2 | Floor space | m² | count | White space for the racks, aisles included.
facility.energy_mwh | Energy | MWh | energy | Energy of the training run (serving: per year at the planned utilisation).
facility.energy_mwh_run | Energy of the run | MWh | energy | Energy of the training run at facility power.
facility.energy_mwh_per_year | Energy per year | MWh | energy | Energy per year at the planned utilisation.
facility.co2_t | Emissions | t CO₂e | count | Operational emissions of the energy at the grid's carbon intensity.
facility.co2_t_per_year | Emissions per year | t CO₂e | count | Operational emissions per year at the planned utilisation.
facility.grid_kg_co2_per_kwh | Grid carbon intensity | kg CO₂e/kWh | number | Carbon intensity of the region's grid.
facility.grid_source | Grid intensity source |  | text | Where the grid carbon intensity comes from.
facility.grid_as_of | Grid intensity as of |  | date | Date of the grid carbon intensity.
facility.region | Region |  | text | Grid region of the site.
facility.servers_kw | Server power | kW | power | Power of the GPU servers at their maximum.
facility.gpu_kw | GPU power | kW | power | Board power of the GPUs alone.
facility.network_kw | Network power | kW | power | Power of the fabric switches.
facility.network_switches | Switches powered |  | count | Fabric switches the network power counts.
facility.storage_kw | Storage power | kW | power | Power of the storage systems.
facility.rule_of_thumb_kw_low | Rule of thumb, low | kW | power | Server power + 30%, the low end of the rule "+30-40% for networking, storage and cooling".
facility.rule_of_thumb_kw_high | Rule of thumb, high | kW | power | Server power + 40%.
facility.overhead_vs_servers | Overhead on server power |  | pct | Facility power above server power, as a share of server power.
facility.redundancy | Power redundancy |  | text | N, N+1, 2N or 2N+1 power modules.
facility.power_module_kw | Power module size | kW | power | Size of one UPS/power module.
facility.power_modules | Power modules |  | count | Power modules installed, spares included.
facility.growth | Growth phases |  | text | Capacity by year of planned growth.
facility.growth[].year | Year |  | count | Year of the growth phase (0 = start).
facility.growth[].gpus | GPUs |  | count | GPUs in that year.
facility.growth[].servers | Servers |  | count | Servers in that year.
facility.growth[].it_kw | IT power | kW | power | IT power in that year.
facility.growth[].total_kw | Facility power | kW | power | Facility power in that year.
facility.growth[].racks | Racks |  | count | Racks in that year.
cost.cloud | Cloud offer |  | text | The cloud offer priced.
cost.pricing | Pricing asked |  | text | The plan's cloud pricing.
cost.pricing_used | Pricing used |  | text | The pricing the cost uses (on-demand when the offer lacks the one asked).
cost.cloud_usd_per_hr | Cloud price per instance-hour | USD/h | usd_rate | Price of one cloud instance per hour.
cost.cloud_usd_per_gpu_hour | Cloud price per GPU-hour | USD/GPU-h | usd_rate | Cloud price per GPU-hour (spot: per useful GPU-hour after reclaims).
cost.price_source | Cloud price source |  | text | Where the cloud price comes from.
cost.price_as_of | Cloud price as of |  | date | Date of the cloud price.
cost.cloud_run_usd | Run cost, renting | USD | usd | What the training run costs rented at the chosen pricing.
cost.onprem_run_usd | Run cost, owned hardware | USD | usd | The run's share of owning: its GPU-hours at the owned cost per useful GPU-hour over the ownership period.
cost.cloud_usd | Fleet cost, renting | USD | usd | Renting the cluster for the ownership period at the planned utilisation.
cost.onprem_usd | Fleet cost, owning | USD | usd | Owning the cluster for the ownership period: capex plus operating costs.
cost.onprem_usd_per_gpu_hour | Owned cost per useful GPU-hour | USD/GPU-h | usd_rate | Owning cost per GPU-hour of useful work at the planned utilisation.
cost.owned_usd_per_gpu_hour_full | Owned cost per GPU-hour at full use | USD/GPU-h | usd_rate | Owning cost per GPU-hour when the cluster works every hour.
cost.breakeven_months | Breakeven | months | months | Months of use after which owning has cost less than renting.
cost.breakeven_utilisation | Breakeven utilisation |  | pct | Utilisation above which owning is cheaper than renting over the ownership period.
cost.server_price_usd | Server price | USD | usd | Purchase price of one GPU server.
cost.server_price_as_of | Server price as of |  | date | Date of the server price.
cost.server_price_source | Server price source |  | text | Where the server price comes from.
cost.network_cost_basis | Network cost basis |  | text | How the network's capex is estimated.
cost.facility_model | Facility model |  | text | Colocation (rent per kW) or building the data centre.
cost.capex_usd | Capex | USD | usd | Servers, network, storage and (when built) the facility.
cost.capex.servers_usd | Servers | USD | usd | Capex of the GPU servers.
cost.capex.network_usd | Network | USD | usd | Capex of the network (a share of cluster cost).
cost.capex.storage_usd | Storage | USD | usd | Capex of the storage capacity.
cost.capex.facility_usd | Facility build | USD | usd | Capex of building the facility (0 for colocation).
cost.opex_usd_per_year | Operating cost per year | USD/yr | usd | Power, colocation, staff and maintenance per year.
cost.opex.power_usd | Power per year | USD/yr | usd | Electricity per year at the planned utilisation.
cost.opex.colocation_usd | Colocation per year | USD/yr | usd | Colocation rent per year.
cost.opex.staff_usd | Staff per year | USD/yr | usd | Operations staff per year.
cost.opex.maintenance_usd | Maintenance per year | USD/yr | usd | Maintenance and support per year.
cost.onprem_opex_usd_per_month | Operating cost per month | USD/month | usd | Owning's operating cost per month.
cost.cloud_usd_per_month | Cloud cost per month | USD/month | usd | Renting per month at the planned utilisation.
cost.years | Ownership period | years | number | Years the cluster is kept (straight-line depreciation).
cost.utilisation | Utilisation |  | pct | Share of hours the cluster does useful work.
cost.monthly | Cumulative cost by month |  | text | Cumulative cost of renting and of owning, month by month.
cost.monthly[].month | Month |  | count | Month since the start.
cost.monthly[].cloud_usd | Renting, cumulative | USD | usd | Cumulative cost of renting by that month.
cost.monthly[].onprem_usd | Owning, cumulative | USD | usd | Cumulative cost of owning by that month (capex at month 0).
cost.hybrid_owned_fraction | Hybrid: share owned |  | pct | Share of GPUs owned in the hybrid option.
cost.hybrid_usd | Hybrid cost | USD | usd | Owning the planned share for the steady load and renting the peaks.
cost.hybrid_best_owned_fraction | Hybrid: best share owned |  | pct | Owned share with the lowest hybrid cost.
cost.hybrid_best_usd | Hybrid cost at the best share | USD | usd | Hybrid cost at the best owned share.
cost.sensitivity | Cost sensitivity |  | text | Each cost driver 20% lower and higher.
cost.sensitivity[].driver | Driver |  | text | The cost driver varied.
cost.sensitivity[].option | Option |  | text | Renting or owning.
cost.sensitivity[].low_usd | Cost with the driver 20% lower | USD | usd | Cost with that driver 20% lower.
cost.sensitivity[].high_usd | Cost with the driver 20% higher | USD | usd | Cost with that driver 20% higher.
cost.sensitivity[].base_usd | Base cost | USD | usd | Cost at the plan's values.
cost.usd_per_million_tokens | Cost per million tokens, renting | USD | usd_rate | Renting cost per million tokens served.
cost.usd_per_million_tokens_onprem | Cost per million tokens, owning | USD | usd_rate | Owning cost per million tokens served.
cost.growth_capex | Capex by growth phase |  | text | Capex of the servers each growth phase adds.
cost.growth_capex[].year | Year |  | count | Year of the growth phase.
cost.growth_capex[].servers_added | Servers added |  | count | Servers the phase adds.
cost.growth_capex[].capex_usd | Capex | USD | usd | Capex of the servers (with network and storage share) the phase adds.
checks | Findings |  | text | What the rules of thumb and common mistakes say about the plan.
checks[].id | Finding |  | text | Stable id of the finding.
checks[].severity | Severity |  | text | info, warning or critical.
checks[].message | Message |  | text | What the finding says.
checks[].source | Source |  | text | Where the rule comes from.
"""


def _parse(table: str) -> dict[str, Field]:
    out = {}
    for line in table.strip().splitlines():
        key, label, unit, kind, doc = (part.strip() for part in line.split(" | "))
        assert kind in EXCEL_FORMATS, f"{key}: unknown kind {kind}"
        out[key] = Field(key, label, unit, kind, doc)
    return out


#: every result key: key -> Field (list items as ``section.key[].item``)
RESULT_FIELDS: dict[str, Field] = _parse(_TABLE)


def field(key: str) -> Field:
    """The :class:`Field` of a result key; a KeyError names keys that have none."""
    return RESULT_FIELDS[key]


def label(key: str, with_unit: bool = False) -> str:
    """The human label of a result key (``"Memory per GPU"``), optionally with ``[unit]``."""
    f = RESULT_FIELDS[key]
    return f.label_with_unit if with_unit else f.label


def describe(key: str) -> str:
    """One sentence on what a result key means."""
    return RESULT_FIELDS[key].doc


def format_field(key: str, value: Any) -> str:
    """``value`` of result key ``key`` formatted for people (its unit included)."""
    f = RESULT_FIELDS.get(key)
    return format_value(value, f.kind, f.unit) if f else format_value(value)


def result_keys(result: Mapping, prefix: str = "") -> Iterable[str]:
    """Every value's key path in a result (not the nested sections themselves), list items as
    ``[]`` (the form :data:`RESULT_FIELDS` uses)."""
    for key, value in result.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if path == "plan":
            continue
        if isinstance(value, Mapping):
            yield from result_keys(value, path)
            continue
        yield path
        if isinstance(value, list) and value and isinstance(value[0], Mapping):
            for item_key in dict.fromkeys(k for item in value for k in item):
                yield f"{path}[].{item_key}"
