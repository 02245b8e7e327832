"""Serving a load as 2026 engines run it: layouts, mixed precision, chunked prefill, TTFT, one pool or two.

The formula functions live in :mod:`.inference` and :mod:`.collectives`; this module puts them
together. The engine works on dicts of numpy arrays, one element per (case, layout), so the
calibration (:mod:`aiplan.calibration.serving`) evaluates every published result at once and a
plan tries every layout at once.

**Inputs** (:func:`serving_inputs`): one model on one GPU at the plan's precisions and load: the
bytes and FLOPs of each part of the model (attention, dense MLP, routed experts, output head),
each part's matmul peak at its compute precision (weight-only quantisation computes at the
activation precision), the KV cache and the attention core per token.

**Layouts** (:func:`layouts`): ``tp`` tensor-parallel GPUs per attention group, ``dp`` attention
data-parallel groups (each with its own sequences and KV cache), the routed experts spread over
``ep`` of the ``tp x dp`` GPUs of a stage, ``pp`` pipeline stages; ``tp x dp x pp`` GPUs a
replica, within a node or a rack-scale NVLink domain (NVL72), expert all-to-alls beyond it over
the scale-out network.

**A step** (:func:`forward_s`): weights read (dense parts and the experts the step's tokens
touch) against the linear layers' compute (a matmul efficiency that rises with the tokens per GPU
and per expert), then the attention (the KV-cache read, or the attention compute where that is
longer: absorbed MLA), the tensor-parallel all-reduces and expert all-to-alls, and a fixed and a
per-sequence cost per layer. Prefill runs in chunks of ``prefill_chunk_tokens`` inside the decode
steps (:func:`.prefill_step_share` of them carry one); speculative decoding verifies ``1 + draft``
tokens a step and advances :func:`.accepted_tokens_per_step`.

**Capacity**: :func:`offline` (the batch memory allows), :func:`at_slo` (the largest batch
whose TPOT and 99th-percentile TTFT meet the targets), :func:`at_concurrency` (a fixed number of
sequences); :func:`disaggregated` sizes separate prefill and decode pools. :func:`serve_plan`
applies it to one plan, :func:`serving_table` to many GPUs and precisions at once (the options
explorer).

The calibrated constants come from ``data/calibration/serving_constants.csv`` (refit with
``tools/calibrate.py``); a constant ``name.group`` overrides ``name`` for GPUs of that group
(:data:`FAMILY_GROUPS`).
"""

from __future__ import annotations

import csv
import math
import re
from functools import lru_cache

import numpy as np

from ..core.catalog import calibration_file, read_constants
from ..core.units import BYTES_PER_ELEMENT, BYTES_PER_GB, PCIE5_X16_GB_PER_S
from .collectives import all_to_all_time_s, scale_up_gb_per_s, tp_allreduce_s
from .compute import peak_flops_per_s
from .inference import (
    accepted_tokens_per_step,
    attention_core_flops_per_token,
    kv_cache_bytes_per_token,
    kv_cache_gb,
    kv_capacity_gb,
    kv_shard_fraction,
    kv_transfer_time_s,
    mean_sequence_tokens,
    prefill_step_share,
    prefill_wait_s,
    requests_in_flight,
    wait_quantile_s,
)
from .memory import pipeline_divisor, usable_memory_gb
from .params import (
    attended_tokens,
    head_dims,
    local_layer_fraction,
    model_param_counts,
    moe_layer_count,
    plan_param_counts,
    value_or,
)

#: the calibrated constants the engine needs (names in serving_constants.csv)
CONSTANTS = ("decode_bw_efficiency", "compute_efficiency", "compute_tokens_half", "expert_tokens_half",
             "expert_compute_efficiency", "attention_efficiency",
             "step_overhead_s_per_layer", "sequence_overhead_s_per_layer", "moe_overhead_s_per_layer",
             "tpot_p99_factor", "ttft_mean_steps", "ttft_p99_extra_steps",
             "collective_latency_s", "tp_scaling_efficiency", "server_load_factor", "engine_max_batch",
             "engine_max_batch_dp", "family_efficiency", "fp4_compute_efficiency")

#: constants that may be absent (their value then)
OPTIONAL = {"family_efficiency": 1.0}

#: catalog GPU families that share calibrated constants (``name.group`` rows)
FAMILY_GROUPS = {"cdna3": "cdna", "cdna4": "cdna", "blackwell-ultra": "blackwell"}

#: the parts of a model the engine tracks, and the precision field of each
PARTS = ("attention", "dense", "experts", "head")
PRECISION_FIELDS = {"attention": "attention_precision", "dense": "dense_precision", "experts": "expert_precision",
                    "head": "embedding_precision"}

#: degrees the layout search tries for tensor, attention-data, expert and pipeline parallelism
POWERS = (1, 2, 4, 8, 16, 32, 64)
PIPELINE_CANDIDATES = (1, 2, 4)

#: bisection steps for the latency-constrained batch and the operating point
_BISECTION_STEPS = 14

#: the TTFT quantile latency targets apply to (MLPerf constrains the 99th percentile)
#: [mlcommons-inference-rules-v5.1]
TTFT_QUANTILE = 0.99

#: bytes per activation element in the tensor-parallel all-reduces and expert all-to-alls (bf16)
ACT_BYTES = 2.0

#: bit widths that order precisions (a matmul runs at the wider of its weights and activations)
_BITS = {"bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "fp4": 4.5, "int4": 4}


# --- constants ---------------------------------------------------------------------------------


def constants_path():
    """Path of ``data/calibration/serving_constants.csv``."""
    return calibration_file("serving_constants.csv")


def serving_constants(path=None) -> dict[str, float]:
    """The calibrated serving constants, ``{name: value}`` (``name.group`` rows are family overrides).

    Examples
    --------
    The shipped file holds every constant the engine needs (``family_efficiency`` may be absent):

    >>> set(CONSTANTS) - set(OPTIONAL) <= set(serving_constants())
    True
    """
    return dict(read_constants(path or constants_path()))


#: the P10/P50/P90 of published over predicted serving throughput, written by tools/calibrate.py
ERROR_QUANTILES_FILE = "serving_error_quantiles.csv"


@lru_cache(maxsize=1)
def serving_error_quantiles() -> dict[int, float]:
    """The calibrated band of serving throughput: ``{10: ratio, 50: ratio, 90: ratio}`` [published / predicted].

    Read from ``data/calibration/serving_error_quantiles.csv``, which ``tools/calibrate.py`` writes
    from the out-of-sample errors of the serving validation
    (:func:`aiplan.calibration.serving.error_quantiles`: the 2026 check results and the
    leave-one-source-out predictions of the fit results, MLPerf Server and Interactive scenarios).
    One published result in ten reached less than the P10 ratio of the predicted throughput.
    """
    with open(calibration_file(ERROR_QUANTILES_FILE), newline="", encoding="utf-8") as fh:
        return {int(r["percentile"]): float(r["throughput_ratio"]) for r in csv.DictReader(fh)}


def constants_for(constants: dict, families) -> dict[str, np.ndarray]:
    """Each engine constant as an array over ``families``: the ``name.group`` row if any, else ``name``.

    Examples
    --------
    A ``name.group`` row overrides ``name`` for that group's families (CDNA 3 and CDNA 4 share
    ``cdna``); an absent optional constant takes its default:

    >>> k = constants_for({"engine_max_batch": 256.0, "engine_max_batch.cdna": 128.0}, ["hopper", "cdna3", "cdna4"])
    >>> k["engine_max_batch"].tolist(), k["family_efficiency"].tolist()
    ([256.0, 128.0, 128.0], [1.0, 1.0, 1.0])
    """
    fams = np.atleast_1d(np.asarray(families, dtype=object))
    names, index = np.unique(fams.astype(str), return_inverse=True)
    groups = [FAMILY_GROUPS.get(f, f) for f in names]
    table = np.array([[constants.get(f"{name}.{g}", constants.get(name, OPTIONAL.get(name))) for g in groups]
                      for name in CONSTANTS], dtype=float)[:, index]   # one row per constant, one column per family
    return dict(zip(CONSTANTS, table))


# --- precision -----------------------------------------------------------------------------------


def compute_precision(gpu, weight_precision: str, activation_precision: str | None = None) -> str:
    """The precision a part's matmuls run at on ``gpu``.

    The wider of the weight and activation precisions; with no activation precision given, the
    weight's own where the GPU multiplies at it (FP8 and NVFP4/MXFP4 checkpoints run W8A8 and
    W4A4), else bf16. Weight-only formats (int4; fp4 or fp8 on a GPU without those tensor cores)
    are dequantised and multiplied at bf16.

    References
    ----------
    .. [1] Lin et al. 2023, "AWQ: Activation-aware Weight Quantization", arXiv:2306.00978 §4
       (4-bit weights dequantised to FP16 for the matmul). [arxiv-2306.00978]
    .. [2] NVIDIA 2025, "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference"
       (FP4 matmuls on Blackwell tensor cores). [nvidia-nvfp4-blog]
    .. [3] NVIDIA Blackwell Architecture Technical Brief (FP4 Tensor Cores; Hopper has none).
       [nvidia-blackwell-tech-brief]

    Examples
    --------
    H100 multiplies FP8 (W8A8) but has no FP4 tensor cores: fp4 and int4 weights are dequantised to
    bf16; B200 runs FP4 as W4A4, or at FP8 beside FP8 activations (references [1]-[3]):

    >>> from aiplan.core.catalog import load_catalog
    >>> gpus = load_catalog().gpus
    >>> [compute_precision(gpus["h100-sxm"], p) for p in ("bf16", "fp8", "fp4", "int4")]
    ['bf16', 'fp8', 'bf16', 'bf16']
    >>> compute_precision(gpus["b200"], "fp4"), compute_precision(gpus["b200"], "fp4", "fp8")
    ('fp4', 'fp8')
    """
    native = {"fp8": gpu.fp8_tflops, "fp4": gpu.fp4_tflops, "int8": gpu.int8_tops}
    act = activation_precision or (weight_precision if native.get(weight_precision) else "bf16")
    wider = weight_precision if _BITS[weight_precision] >= _BITS[act] else act
    return wider if native.get(wider) else "bf16"


def compute_peak_flops_per_s(gpu, weight_precision, activation_precision=None):
    """Dense peak FLOP/s a part's matmuls run at on a catalog GPU (:func:`compute_precision`) [FLOP/s].

    Examples
    --------
    H100 SXM [nvidia-h100-page]: FP8 weights at the dense FP8 peak (1,979 TFLOP/s), int4 weights at
    the BF16 one (989.5):

    >>> from aiplan.core.catalog import load_catalog
    >>> h100 = load_catalog().gpus["h100-sxm"]
    >>> compute_peak_flops_per_s(h100, "fp8") / 1e12, compute_peak_flops_per_s(h100, "int4") / 1e12
    (1979.0, 989.5)
    """
    return peak_flops_per_s(gpu, compute_precision(gpu, weight_precision, activation_precision))


# --- inputs --------------------------------------------------------------------------------------


def part_params(model, counts) -> dict[str, float]:
    """Parameters of each part of a model: ``attention``, ``dense`` (dense MLPs, shared experts,
    routers, norms), ``experts`` (routed), ``head`` (output projection, or the tied table),
    ``embedding`` (an untied input table: stored, gathered, never read whole), and the active
    ``experts_active``.

    Examples
    --------
    The parts add up to Mixtral 8x7B's 46.7B parameters and, with the active experts in place of all
    of them, to its 12.9B active ones ("47B" and "13B", Jiang et al. 2024) [arxiv-2401.04088]:

    >>> from aiplan.core.catalog import load_catalog
    >>> from aiplan.model.params import model_param_counts
    >>> mixtral = load_catalog().models["mixtral-8x7b"]
    >>> p = part_params(mixtral, model_param_counts(mixtral))
    >>> total = sum(p[k] for k in ("attention", "dense", "experts", "head", "embedding"))
    >>> round(total / 1e9, 1), round((total - p["experts"] + p["experts_active"]) / 1e9, 1)
    (46.7, 12.9)
    """
    emb, head = counts["params_embedding"], counts["params_head"]
    attn, experts = counts["params_attention"], counts["params_experts"]
    dense = counts["params"] - attn - experts - emb
    return {"attention": attn, "dense": dense, "experts": experts, "head": head,
            "embedding": 0.0 if model.tied_embeddings else emb - head,
            "experts_active": counts["active_params"] - attn - dense - emb}


def serving_inputs(model, counts, gpu, precisions: dict, prompt_tokens, output_tokens, usable_fraction,
                   max_batch=None, chunk_tokens=8192, speculative_tokens=0, acceptance=0.0, draft_cost=0.0,
                   ttft_prompt_tokens=None, gpus_per_node=8) -> dict:
    """The plain numbers the engine needs for one model on one GPU at one load (scalars).

    ``precisions`` maps ``attention``, ``dense``, ``experts``, ``head`` (embeddings and output head)
    and ``kv`` to a serving precision, and ``activation`` to an activation precision or None
    (:func:`compute_precision`). ``counts`` is :func:`.model_param_counts` (or a plan's).
    ``ttft_prompt_tokens`` is the prompt the 99th-percentile TTFT is for (default the mean);
    ``gpus_per_node`` the GPUs of one server (beyond the scale-up domain they talk over PCIe,
    :func:`link_gb_per_s`).
    """
    act = precisions.get("activation")
    parts = part_params(model, counts)
    mla = model.attention == "mla"
    qk, v = head_dims(model)
    kvb = float(kv_cache_bytes_per_token(model.layers, model.kv_heads, model.head_dim or model.hidden // model.heads,
                                         BYTES_PER_ELEMENT[precisions["kv"]], mla, value_or(model.kv_lora_rank),
                                         value_or(model.qk_rope_head_dim)))
    local = local_layer_fraction(model)
    mean_tokens = float(mean_sequence_tokens(prompt_tokens, output_tokens))
    core = {absorbed: float(attention_core_flops_per_token(model.layers, model.heads, qk, v, 1.0, absorbed and mla,
                                                           value_or(model.kv_lora_rank),
                                                           value_or(model.qk_rope_head_dim)))
            for absorbed in (True, False)}
    kv_read = float(attended_tokens(prompt_tokens + output_tokens / 2.0, model.sliding_window, local))
    out = {f"w_{p}": parts[p] * BYTES_PER_ELEMENT[precisions[p]] for p in PARTS}
    out["w_embedding"] = parts["embedding"] * BYTES_PER_ELEMENT[precisions["head"]]
    flops = {"attention": parts["attention"], "dense": parts["dense"], "experts": parts["experts_active"],
             "head": parts["head"]}
    peaks = {}
    for p in PARTS:
        cp = compute_precision(gpu, precisions[p], act)
        out[f"f_{p}"] = 2.0 * flops[p]
        out[f"pk_{p}"] = peaks[p] = peak_flops_per_s(gpu, cp)
        out[f"fp4_{p}"] = float(cp == "fp4")
    kv_compute = "fp8" if precisions["kv"] in ("fp8", "fp4") and gpu.fp8_tflops else "bf16"
    moe = model.experts > 1
    n_moe = float(moe_layer_count(model.layers, value_or(model.dense_layers), value_or(model.moe_layer_step, 1))) \
        if moe else 0.0
    out.update({
        "pk_core": peak_flops_per_s(gpu, kv_compute),
        "attn_dec_flops": core[True] * kv_read,
        "attn_pre_flops": core[False] * float(attended_tokens(prompt_tokens / 2.0, model.sliding_window, local)),
        "kv_bytes_per_token": kvb, "kv_heads": float(model.kv_heads), "mla": float(mla),
        "kv_read_tokens": kv_read,
        "kv_seq_tokens": float(attended_tokens(prompt_tokens + output_tokens, model.sliding_window, local)),
        "mean_tokens": float(attended_tokens(mean_tokens, model.sliding_window, local)),
        "layers": float(model.layers), "moe_layers": n_moe, "hidden": float(model.hidden),
        "heads": float(model.heads), "experts": float(model.experts), "active_experts": float(model.active_experts),
        "prompt_tokens": float(prompt_tokens), "output_tokens": float(output_tokens),
        "ttft_prompt_tokens": float(ttft_prompt_tokens or prompt_tokens),
        "chunk_tokens": float(chunk_tokens), "draft_tokens": float(speculative_tokens),
        "acceptance": float(acceptance), "draft_cost": float(draft_cost),
        "usable_gb": float(usable_memory_gb(gpu.capacity_gb, usable_fraction)),
        "memory_bw_gb_per_s": float(gpu.memory_bw_gb_per_s),
        "scale_up_gb_per_s": float(scale_up_gb_per_s(gpu.scale_up_gb_per_s or 0.0)),
        "scale_up_domain": float(gpu.scale_up_domain or 1),
        "node_gpus": float(gpus_per_node or 1),
        "network_gb_per_s": float((gpu.network_gbps_per_gpu or 0.0) / 8.0),
        "max_batch": float(max_batch) if max_batch else math.inf,
        "family": gpu.family,
    })
    return out


def stack_inputs(rows: list[dict]) -> dict[str, np.ndarray]:
    """Stack :func:`serving_inputs` dicts into arrays (one element per row).

    Examples
    --------
    >>> s = stack_inputs([{"layers": 80, "family": "hopper"}, {"layers": 61, "family": "blackwell"}])
    >>> s["layers"].tolist(), s["family"].tolist()
    ([80.0, 61.0], ['hopper', 'blackwell'])
    """
    return {k: np.array([r[k] for r in rows], dtype=object if k == "family" else float) for k in rows[0]}


def take(s: dict, index) -> dict:
    """Rows ``index`` of stacked inputs (or of a layout).

    Examples
    --------
    >>> {k: v.tolist() for k, v in take({"tp": np.array([1, 2, 4]), "pp": np.array([1, 1, 2])}, [0, 2]).items()}
    {'tp': [1, 4], 'pp': [1, 2]}
    """
    return {k: v[index] for k, v in s.items()}


# --- layouts -------------------------------------------------------------------------------------


def layouts(model, gpu, gpus_per_node=8, fixed=None, max_gpus=None) -> dict[str, np.ndarray]:
    """Every serving layout of a replica the kit tries (:func:`_layouts`; arrays ``tp``, ``dp``, ``ep``, ``pp``).

    Examples
    --------
    Llama 3.1 70B (64 heads, dense) on 8-GPU H100 servers: TP 1, 2, 4 or 8 times 1, 2 or 4 pipeline
    stages, 12 layouts:

    >>> from aiplan.core.catalog import load_catalog
    >>> catalog = load_catalog()
    >>> lay = layouts(catalog.models["llama-3.1-70b"], catalog.gpus["h100-sxm"])
    >>> len(lay["tp"]), sorted(set(lay["tp"].tolist())), sorted(set(lay["pp"].tolist()))
    (12, [1.0, 2.0, 4.0, 8.0], [1.0, 2.0, 4.0])
    """
    key = tuple(sorted((k, v) for k, v in (fixed or {}).items() if v))
    a = _layouts(model.heads, model.experts, model.layers, max(int(gpu.scale_up_domain or 1), int(gpus_per_node or 1)),
                 key, max_gpus)
    return {"tp": a[:, 0], "dp": a[:, 1], "ep": a[:, 2], "pp": a[:, 3]}


@lru_cache(maxsize=512)
def _layouts(heads, experts, n_layers, domain, fixed_items, max_gpus) -> np.ndarray:
    """Every serving layout of a replica the kit tries (arrays ``tp``, ``dp``, ``ep``, ``pp``).

    Tensor parallelism is a power of two dividing the heads; attention data parallelism and
    expert parallelism apply to a mixture of experts, whose experts are either split by tensor
    parallelism (``ep = 1``) or spread over every GPU of a stage (``ep = tp x dp``, dividing the
    experts); ``tp x dp`` stays within the scale-up domain (an NVL72 rack, else the node) unless
    ``max_gpus`` allows more (expert all-to-alls then cross the scale-out network); up to 4
    pipeline stages (:func:`fitting_layouts` keeps a pipeline only where one stage cannot hold the
    model). ``fixed`` maps ``tensor_parallel``, ``attention_data_parallel``, ``expert_parallel``,
    ``pipeline_parallel`` to degrees the plan fixes.
    """
    fixed = dict(fixed_items)
    group = max_gpus or domain
    moe = experts > 1
    rows = []
    for tp in POWERS:
        if heads % tp or tp > domain:
            continue
        for dp in POWERS if moe else (1,):
            ranks = tp * dp
            if ranks > group:
                continue
            for ep in sorted({1, ranks}) if moe else (1,):
                if ep > 1 and experts % ep:
                    continue
                rows += [(tp, dp, ep, pp) for pp in PIPELINE_CANDIDATES if pp == 1 or n_layers >= 4 * pp]
    keys = ("tensor_parallel", "attention_data_parallel", "expert_parallel", "pipeline_parallel")
    rows = [r for r in rows if all(fixed.get(k) in (None, v) for k, v in zip(keys, r))]
    if not rows:  # the plan fixes a layout outside the search: take it as given
        rows = [tuple(int(fixed.get(k, 1)) for k in keys)]
    a = np.array(rows, dtype=float)
    a.setflags(write=False)
    return a


def fitting_layouts(s: dict, lay: dict) -> dict:
    """The layouts whose GPUs hold the weights and one full-length sequence, a pipeline only where no
    shallower one of the same tensor, data and expert degrees does; all of them if none fits.
    ``s`` is one row of :func:`serving_inputs`.

    Examples
    --------
    140 GB of weights and a 8,192-token sequence of 327,680 B/token (2.7 GB) in 72 GB a GPU: TP 1
    needs two stages (70 + 1.3 GB); TP 2 and TP 4 fit in one, so their two-stage layouts are dropped.

    >>> s = {"w_attention": 0.0, "w_dense": 140e9, "w_head": 0.0, "w_embedding": 0.0, "w_experts": 0.0,
    ...      "kv_bytes_per_token": 327680.0, "kv_heads": 8.0, "mla": 0.0, "kv_seq_tokens": 8192.0, "usable_gb": 72.0,
    ...      "layers": 80.0}
    >>> lay = {"tp": np.array([1, 1, 2, 2, 4, 4]), "dp": np.ones(6), "ep": np.ones(6),
    ...        "pp": np.array([1, 2, 1, 2, 1, 2])}
    >>> kept = fitting_layouts(s, lay)
    >>> list(zip(kept["tp"].tolist(), kept["pp"].tolist()))
    [(1, 2), (2, 1), (4, 1)]
    """
    need = weights_gb_per_gpu(s, lay) + kv_bytes_per_token_per_gpu(s, lay) * s["kv_seq_tokens"] / BYTES_PER_GB
    fits = need <= s["usable_gb"]
    if not fits.any():
        return lay
    key = lay["tp"] * 1e6 + lay["dp"] * 1e3 + lay["ep"]
    shallowest = {}
    for i in np.flatnonzero(fits):
        shallowest[key[i]] = min(shallowest.get(key[i], np.inf), lay["pp"][i])
    keep = np.array([bool(f) and lay["pp"][i] == shallowest[key[i]] for i, f in enumerate(fits)])
    return take(lay, keep)


def replica_gpus(lay) -> np.ndarray:
    """GPUs of one replica: tensor x attention-data x pipeline parallel.

    Examples
    --------
    >>> replica_gpus({"tp": np.array([8, 1]), "dp": np.array([1, 8]), "pp": np.array([2, 1])}).tolist()
    [16, 8]
    """
    return lay["tp"] * lay["dp"] * lay["pp"]


def layout_name(tp, dp, ep, pp) -> str:
    """A layout as engines and their documentation write it ("TP8", "DEP8", "TP4 EP4 PP2").

    Examples
    --------
    >>> layout_name(8, 1, 1, 1), layout_name(1, 8, 8, 1), layout_name(2, 4, 8, 1), layout_name(4, 1, 4, 2)
    ('TP8', 'DEP8', 'TP2 DEP8', 'TP4 EP4 PP2')
    """
    tp, dp, ep, pp = (int(x) for x in (tp, dp, ep, pp))
    if dp > 1 and ep == tp * dp:
        name = f"DEP{ep}" if tp == 1 else f"TP{tp} DEP{ep}"
    else:
        name = f"TP{tp}" + (f" DP{dp}" if dp > 1 else "") + (f" EP{ep}" if ep > 1 else "")
    return name + (f" PP{pp}" if pp > 1 else "")


_LAYOUT_PART = re.compile(r"\b(TP|DP|DEP|EP|PP)(\d+)")


def layout_degrees(layout: str) -> tuple[int, int, int, int]:
    """(tensor, attention-data, expert, pipeline) parallel degrees of a layout as :func:`layout_name` writes it.

    >>> layout_degrees("TP8"), layout_degrees("TP2 DEP8"), layout_degrees("TP1 DP4 PP2")
    ((8, 1, 1, 1), (2, 4, 8, 1), (1, 4, 1, 2))
    """
    n = {k: int(v) for k, v in _LAYOUT_PART.findall(layout)}
    tp, pp = n.get("TP", 1), n.get("PP", 1)
    dp, ep = (n["DEP"] // tp, n["DEP"]) if "DEP" in n else (n.get("DP", 1), n.get("EP", 1))
    return tp, dp, ep, pp


def layout_words(layout: str) -> str:
    """A layout as :func:`layout_name` writes it, in words for a client.

    Examples
    --------
    >>> for name in ("TP8", "TP1", "DEP8", "TP1 DP8", "TP2 DEP8", "TP4 EP4 PP2"):
    ...     print(f"{name}: {layout_words(name)}")
    TP8: each layer split over 8 GPUs
    TP1: the whole model on one GPU
    DEP8: 8 attention groups of one GPU, each with its own requests; the experts spread over the 8 GPUs
    TP1 DP8: 8 attention groups of one GPU, each with its own requests; every expert split over the 8 GPUs
    TP2 DEP8: 4 attention groups of 2 GPUs, each with its own requests; the experts spread over the 8 GPUs
    TP4 EP4 PP2: attention split over 4 GPUs; the experts spread over 4 GPUs; the layers in 2 stages
    """
    tp, dp, ep, pp = layout_degrees(layout)
    parts = []
    if dp > 1:
        parts += [f"{dp} attention groups of {'one GPU' if tp == 1 else f'{tp} GPUs'}, each with its own requests",
                  f"the experts spread over the {ep} GPUs" if ep > 1 else f"every expert split over the {tp * dp} GPUs"]
    elif ep > 1:
        parts += [f"attention split over {tp} GPUs", f"the experts spread over {ep} GPUs"]
    elif tp > 1:
        parts.append(f"each layer split over {tp} GPUs")
    if pp > 1:
        parts.append(f"the layers in {pp} stages")
    return "; ".join(parts) or "the whole model on one GPU"


def layout_explained(layout: str) -> str:
    """A layout's code followed by its words, as the report and the findings name a replica's layout.

    >>> layout_explained("TP2 PP2")
    'TP2 PP2: each layer split over 2 GPUs; the layers in 2 stages'
    """
    return f"{layout}: {layout_words(layout)}"


#: what each part of a layout code means, in the order :func:`layout_name` writes them
LAYOUT_CODES = (("TP", "each layer split over n GPUs (tensor parallel)"),
                ("DP", "n attention groups, each with its own requests (attention data parallel)"),
                ("DEP", "the experts spread over n GPUs, the attention in groups that each take their own requests"),
                ("EP", "the experts spread over n GPUs (expert parallel)"),
                ("PP", "the layers in n stages (pipeline parallel)"))


def layout_legend(layouts) -> str:
    """What the codes of the layouts in ``layouts`` mean, for the note under a table that shows them ("" if none).

    >>> print(layout_legend(["TP2", "prefill TP1, decode TP2 PP2"]))
    Layouts: TP n, each layer split over n GPUs (tensor parallel); PP n, the layers in n stages (pipeline parallel).
    >>> layout_legend(["TP1 DP8", "DEP8"]).count(";"), layout_legend(["", None])
    (2, '')
    """
    found = {code for text in layouts for code, _ in _LAYOUT_PART.findall(str(text or ""))}
    parts = [f"{code} n, {words}" for code, words in LAYOUT_CODES if code in found]
    return f"Layouts: {'; '.join(parts)}." if parts else ""


# --- memory --------------------------------------------------------------------------------------


def weights_gb_per_gpu(s, lay) -> np.ndarray:
    """Weights one GPU of a replica holds [GB]: dense parts split by tensor parallelism, routed experts
    over every GPU of a stage, layers over the pipeline stages.

    Examples
    --------
    8 GB of dense parts and 64 GB of experts on TP 2 x DP 4: 8 / 2 + 64 / 8 = 12 GB a GPU; two
    pipeline stages of a 32-layer model halve it; three hold 11, 11 and 10 layers, the busiest
    11/32 of it (:func:`.pipeline_divisor`).

    >>> s = {"w_attention": 2e9, "w_dense": 4e9, "w_head": 1e9, "w_embedding": 1e9, "w_experts": 64e9,
    ...      "layers": 32.0}
    >>> weights_gb_per_gpu(s, {"tp": 2, "dp": 4, "pp": np.array([1, 2, 3])}).tolist()
    [12.0, 6.0, 4.125]
    """
    dense = s["w_attention"] + s["w_dense"] + s["w_head"] + s["w_embedding"]
    return (dense / lay["tp"] + s["w_experts"] / (lay["tp"] * lay["dp"])) / stage_divisor(s, lay) / BYTES_PER_GB


def stage_divisor(s, lay) -> np.ndarray:
    """What one GPU's share of the layers is divided by along the pipeline: ``L / ceil(L / pp)`` (the
    busiest stage, :func:`.pipeline_divisor`; ``pp`` when the stages divide the layers) [-]."""
    return pipeline_divisor(s["layers"], lay["pp"])


def kv_bytes_per_token_per_gpu(s, lay) -> np.ndarray:
    """KV-cache bytes per token one GPU holds for its own sequences [B/token]: KV heads split by
    tensor parallelism (MLA's latent copied on every tensor-parallel rank), layers by stage.

    Examples
    --------
    Llama 3.1 70B in bf16 (327,680 B/token, 8 KV heads): TP 4 holds a quarter, TP 8 and TP 16 an
    eighth (:func:`.kv_shard_fraction`):

    >>> s = {"kv_bytes_per_token": 327680.0, "kv_heads": 8.0, "mla": 0.0, "layers": 80.0}
    >>> kv_bytes_per_token_per_gpu(s, {"tp": np.array([4, 8, 16]), "pp": 1}).tolist()
    [81920.0, 40960.0, 40960.0]
    """
    return s["kv_bytes_per_token"] * kv_shard_fraction(lay["tp"], s["kv_heads"], s["mla"] > 0) / stage_divisor(s, lay)


def accepted(s) -> np.ndarray:
    """Tokens a sequence advances per step (speculative decoding; 1 without).

    Examples
    --------
    No speculation, one draft token at 85% acceptance (DeepSeek-V3's MTP, :func:`.accepted_tokens_per_step`),
    three at 80%: (1 - 0.8^4) / 0.2 = 2.952.

    >>> accepted({"draft_tokens": np.array([0, 1, 3]), "acceptance": np.array([0.0, 0.85, 0.8])}).round(3).tolist()
    [1.0, 1.85, 2.952]
    """
    return accepted_tokens_per_step(s["draft_tokens"], s["acceptance"])


def link_gb_per_s(ranks, scale_up_gb_per_s, scale_up_domain, node_gpus, network_gb_per_s):
    """Per-GPU one-way bandwidth of a collective over a group of ``ranks`` GPUs [GB/s].

    Within the scale-up domain (NVLink: a node's NVSwitch, an NVL72 rack, an NVLink-bridged pair of
    PCIe cards) the scale-up bandwidth; beyond it but within one server, PCIe: the GPUs of a
    PCIe-only server exchange their activations peer to peer over their host link, at most a PCIe
    5.0 x16 link each way (a PCIe 4.0 card such as the L40S carries its PCIe figure as its
    scale-up bandwidth, which bounds it lower); beyond the server, the scale-out NICs (never more
    than the scale-up link).

    ``scale_up_gb_per_s`` and ``network_gb_per_s`` are one-way figures [GB/s]; ``ranks``,
    ``scale_up_domain`` and ``node_gpus`` are GPU counts [-].

    References
    ----------
    .. [1] PCI-SIG, PCI Express Base Specification 5.0 (x16: about 63 GB/s each way). [pci-sig-pcie-base-5.0]
    .. [2] NVIDIA L40S product page (no NVLink; PCIe Gen4 x16, 64 GB/s bidirectional). [nvidia-l40s-page]
    .. [3] NVIDIA H100 PCIe Product Brief PB-11133-001 (PCIe Gen5 host interface; NVLink bridge
       joins two cards). [nvidia-h100-pcie-pb]

    Examples
    --------
    Four L40S of an 8-GPU server (PCIe 4.0 x16, 32 GB/s each way, no NVLink): PCIe, not the
    server's 6.25 GB/s NIC share; eight H100 PCIe: NVLink bridge within a pair (300 GB/s), PCIe
    5.0 (63 GB/s) across pairs in the server, the NICs (25 GB/s) beyond it:

    >>> link_gb_per_s(np.array([4.0]), 32.0, 1.0, 8.0, 6.25).tolist()
    [32.0]
    >>> link_gb_per_s(np.array([2.0, 8.0, 16.0]), 300.0, 2.0, 8.0, 25.0).tolist()
    [300.0, 63.0, 25.0]
    """
    pcie = np.minimum(scale_up_gb_per_s, PCIE5_X16_GB_PER_S / 2.0)
    return np.where(ranks <= scale_up_domain, scale_up_gb_per_s,
                    np.where(ranks <= node_gpus, pcie, np.minimum(scale_up_gb_per_s, network_gb_per_s)))


def _link_gb_per_s(s, ranks) -> np.ndarray:
    """:func:`link_gb_per_s` of stacked inputs."""
    return link_gb_per_s(ranks, s["scale_up_gb_per_s"], s["scale_up_domain"], s["node_gpus"], _network_gb_per_s(s))


def _network_gb_per_s(s) -> np.ndarray:
    return np.where(s["network_gb_per_s"] > 0, s["network_gb_per_s"], PCIE5_X16_GB_PER_S / 2.0)


def prepare(s, k, lay) -> dict:
    """The terms of a replica's step that do not depend on its batch (arrays over rows).

    A step of ``n_r`` tokens per attention group (``seqs_r`` decoding sequences of ``q`` tokens and
    ``pre_r`` prompt tokens) on one GPU of a stage takes, for each of the ``pp`` micro-batches,
    ``max(weights read, linear compute) + attention + all-reduces + all-to-alls + overhead``
    (:func:`forward_s`); this holds each term's coefficient times ``pp``, those of a decode-only step
    summed (``lin_decode``, ``per_seq``), and ``moe`` (a bool: whether any row has routed experts;
    without, :func:`forward_s` skips their terms, which are 0).
    """
    tp, dp, ep, pp = lay["tp"], lay["dp"], lay["ep"], lay["pp"]
    ranks, share = tp * dp, 1.0 / stage_divisor(s, lay)    # the busiest stage's share of the layers
    scale = k["family_efficiency"] * k["tp_scaling_efficiency"] ** np.log2(tp)
    # each GPU reads its own shard at its family group's decode_bw_efficiency row (calibration step 16: the family
    # factor is on compute only); tensor parallelism costs in the collectives and the split matmuls (step 15)
    bw = s["memory_bw_gb_per_s"] * BYTES_PER_GB * k["decode_bw_efficiency"]
    ce = k["compute_efficiency"] * scale

    def peak(part):
        return s[f"pk_{part}"] * np.where(s[f"fp4_{part}"] > 0, k["fp4_compute_efficiency"], 1.0)

    experts = np.maximum(s["experts"], 1.0)
    core = s["pk_core"] * k["attention_efficiency"] * scale * tp
    core_prefill = s["pk_core"] * ce * tp    # prompt attention: tiled, compute-bound, at the matmul share
    link = _link_gb_per_s(s, ranks)
    layers, moe_layers = share * s["layers"], share * s["moe_layers"]
    dense_layers = layers - moe_layers
    # attention: one all-reduce a layer over the tensor-parallel group; MLP: experts over EP ranks
    # (dispatch and combine all-to-alls; dense layers all-reduce over TP), or split over every GPU of
    # the stage (the tokens of all attention groups gathered and reduced: an all-reduce over them)
    moe_ep = ep > 1
    n_tp = layers + np.where(moe_ep, dense_layers, 0.0)
    n_a2a = np.where(moe_ep, 2.0 * moe_layers, 0.0)
    n_all = np.where(moe_ep, 0.0, layers)
    per_token = (tp_allreduce_s(1.0, s["hidden"], n_tp, tp, link, ACT_BYTES)
                 + tp_allreduce_s(dp, s["hidden"], n_all, ranks, link, ACT_BYTES)
                 + n_a2a * all_to_all_time_s(1.0, s["hidden"], s["active_experts"], ep, link, ACT_BYTES))
    calls = n_tp * (tp > 1) + n_all * (ranks > 1) + n_a2a
    # every time term is per micro-batch, once for each of the pp micro-batches: folded in here
    e = {
        "read_dense": share * (s["w_attention"] + s["w_dense"] + s["w_head"]) / tp / bw,
        "read_experts": share * s["w_experts"] / ranks / bw,
        "lin_dense": share * (s["f_attention"] / peak("attention") + s["f_dense"] / peak("dense")) / (tp * ce),
        "lin_head": share * s["f_head"] / peak("head") / (tp * ce),
        "lin_experts": share * s["f_experts"] / (peak("experts") * ranks * ce * k["expert_compute_efficiency"]),
        "kv": kv_bytes_per_token_per_gpu(s, lay) * s["kv_read_tokens"] / bw,   # the stage's KV: its layers' share
        "attn_dec": share * s["attn_dec_flops"] / core, "attn_pre": share * s["attn_pre_flops"] / core_prefill,
        "comm1": per_token, "over1": layers * k["sequence_overhead_s_per_layer"],
        "fixed": calls * k["collective_latency_s"] + layers * k["step_overhead_s_per_layer"]
        + share * s["moe_layers"] * k["moe_overhead_s_per_layer"],
    }
    e = {key: pp * v for key, v in e.items()}
    # a decode-only step of one query token per sequence: every per-sequence term in one coefficient
    e["lin_decode"] = e["lin_dense"] + e["lin_head"]
    e["per_seq"] = np.maximum(e["kv"], e["attn_dec"]) + e["comm1"] + e["over1"]
    # experts: the tokens of all dp groups are routed (dp n_r), each to active_experts of the experts; a
    # touched expert's grouped GEMM costs a tile of expert_tokens_half tokens more
    per_expert = s["active_experts"] / experts
    e.update({
        "inv_groups": 1.0 / (dp * pp), "dp": dp, "pp": pp, "base_dp": (1.0 - per_expert) ** dp,
        "lin_routed": e["lin_experts"] * dp, "lin_tile": e["lin_experts"] * k["expert_tokens_half"] / per_expert,
        "tokens_half": k["compute_tokens_half"] + 0.0 * tp,
        "moe": bool(np.any(s["w_experts"] > 0) or np.any(s["f_experts"] > 0)),   # else the expert terms are 0
    })
    return e


def _columns(e: dict) -> dict:
    """Prepared terms as column vectors, to broadcast against a grid of batches per row."""
    return {key: v[:, None] if isinstance(v, np.ndarray) else v for key, v in e.items()}


def forward_s(e, seqs, query_tokens=1.0, chunk=0.0) -> np.ndarray:
    """Time of one engine step of a replica [s]: ``seqs`` decoding sequences with ``query_tokens``
    each (1 + draft tokens when verifying) and ``chunk`` prompt tokens, with the terms
    :func:`prepare` holds.

    .. math:: t = p_p\\bigl(\\max(t_W, t_{lin}) + \\max(t_{KV}, t_{attn}) + t_{pre} + t_{comm} + t_0\\bigr)

    Weights: the dense parts and the routed experts the step's tokens touch (:func:`.experts_touched`);
    linear compute at :func:`.matmul_efficiency` of the tokens per GPU (per expert for the experts);
    decode attention: the KV-cache read or the attention compute (absorbed MLA), whichever is
    longer; the chunk's attention compute (at the linear layers' share of the peak: a prompt's
    attention is tiled into large matrix multiplications, as FlashAttention-3 runs it at 75% of an
    H100's peak [4]); all-reduces and all-to-alls of the step's tokens; a
    fixed and a per-sequence cost per layer (and a fixed cost per MoE layer).

    References
    ----------
    .. [1] Williams, Waterman, Patterson 2009, "Roofline", CACM 52(4) (per-operator roofline).
       [doi-10.1145-1498765.1498785]
    .. [2] Agrawal et al. 2024, Sarathi-Serve, arXiv:2403.02310 §3 (decodes piggyback on the
       prefill chunk's matrix multiplications; attention is computed per request). [arxiv-2403.02310]
    .. [3] Pope et al. 2022, "Efficiently Scaling Transformer Inference", arXiv:2211.05102 §2-3
       (decode reads the weights and the KV cache; partitioning layouts). [arxiv-2211.05102]
    .. [4] Shah et al. 2024, "FlashAttention-3", arXiv:2407.08608, abstract (740 TFLOP/s in FP16,
       75% of an H100's peak; close to 1.2 PFLOP/s in FP8). [arxiv-2407.08608]
    """
    # (the branches skip terms that are exactly 0: no query tokens beyond one, no prompt chunk, no experts;
    # prepare() folded the pp micro-batches into the coefficients and summed those of a plain decode step)
    seqs_r = np.asarray(seqs, dtype=float) * e["inv_groups"]
    one_query = np.isscalar(query_tokens) and query_tokens == 1.0
    dec_r = seqs_r if one_query else seqs_r * query_tokens
    prompt = not (np.isscalar(chunk) and chunk == 0.0)
    decode_only = one_query and not prompt   # every per-sequence term in prepare()'s summed coefficients
    if prompt:
        pre_r = np.asarray(chunk, dtype=float) * e["inv_groups"]
        n_r = dec_r + pre_r
    else:
        n_r = dec_r
    dense_rows = (n_r + e["tokens_half"]) / np.maximum(n_r, 1e-9)   # 1 / efficiency, relative to the peak share
    if decode_only:
        linear = dense_rows * n_r * e["lin_decode"]
    else:
        linear = dense_rows * (n_r * e["lin_dense"] + dec_r * e["lin_head"])
    read = e["read_dense"]
    if e["moe"]:
        touched = 1.0 - e["base_dp"] ** n_r     # the share of the experts the dp groups' tokens touch
        read = read + e["read_experts"] * touched
        # each touched expert's grouped GEMM runs its routed tokens plus a fixed tile's worth (expert_tokens_half)
        linear = linear + e["lin_routed"] * n_r + e["lin_tile"] * touched
    if decode_only:
        return np.maximum(read, linear) + seqs_r * e["per_seq"] + e["fixed"]
    attention = np.maximum(seqs_r * e["kv"], dec_r * e["attn_dec"])
    if prompt:
        attention = attention + pre_r * e["attn_pre"]
    return np.maximum(read, linear) + attention + e["fixed"] + e["comm1"] * n_r + e["over1"] * seqs_r


class Engine:
    """A replica's inputs, constants, layout and prepared step terms, and its step times.

    ``Engine(s, k, lay)`` for rows of stacked inputs; every method takes a batch per row (or a
    grid: an array of shape ``(rows, g)``).
    """

    def __init__(self, s, k, lay):
        self.s, self.k, self.lay = s, k, lay
        self.e = prepare(s, k, lay)
        self.tau = accepted(s)
        self.draft = bool(np.any(s["draft_tokens"] > 0))
        self.chunk = np.minimum(s["chunk_tokens"], s["prompt_tokens"])   # one prompt's chunk
        self.budget = s["chunk_tokens"] * lay["dp"]                       # prompt tokens a replica step takes
        self._grid = None                                                 # the same as columns, made once

    def _terms(self, grid):
        """(prepared terms, inputs, tau, one prompt's chunk, the replica's chunk budget), as columns for a grid."""
        if not grid:
            return self.e, self.s, self.tau, self.chunk, self.budget
        if self._grid is None:
            self._grid = (_columns(self.e), {key: self.s[key][:, None] for key in (
                "draft_tokens", "draft_cost", "prompt_tokens", "output_tokens", "chunk_tokens",
                "ttft_prompt_tokens")}, self.tau[:, None], self.chunk[:, None], self.budget[:, None])
        return self._grid

    def steps(self, batch, grid=False) -> dict[str, np.ndarray]:
        """Step times at ``batch`` sequences serving prompts and decodes together.

        In steady state ``B tau p / o`` prompt tokens must be prefilled a step. A step that prefills
        carries whole prompts up to the chunk budget ``C`` (several short prompts together, or a
        chunk of a long one): ``c = min(C, max(min(p, C), B tau p / o))`` tokens, in a share
        ``B tau p / (o c)`` of the steps (:func:`.prefill_step_share`). Returns ``decode_s`` (no
        prompt), ``mixed_s`` (with ``c`` prompt tokens), ``chunk`` (c), ``share``, ``mean_s``, ``tau``
        (tokens per sequence per step) and ``tpot_s`` (mean step / tau).

        References
        ----------
        .. [1] Yu et al. 2022, "Orca", OSDI '22 §3 (iteration-level scheduling: requests join and leave
           the batch at every step). [osdi22-orca]
        .. [2] Agrawal et al. 2024, Sarathi-Serve, arXiv:2403.02310 §4 (chunked prefills within a token
           budget per step). [arxiv-2403.02310]
        """
        e, s, tau, first, budget = self._terms(grid)
        batch = np.maximum(np.asarray(batch, dtype=float), 0.0)
        q = 1.0 + s["draft_tokens"] if self.draft else 1.0
        needed = batch * tau * s["prompt_tokens"] / s["output_tokens"]
        chunk = np.minimum(budget, np.maximum(first, needed))
        dec, mix = forward_s(e, batch, q), forward_s(e, batch, q, chunk)
        if self.draft:
            draft = s["draft_tokens"] * s["draft_cost"] * forward_s(e, batch)
            dec, mix = dec + draft, mix + draft
        f = prefill_step_share(batch, s["prompt_tokens"], s["output_tokens"], chunk, tau)
        mean = dec + f * (mix - dec)
        return {"decode_s": dec, "mixed_s": mix, "chunk": chunk, "share": f, "mean_s": mean, "tau": tau + 0.0 * mean,
                "tpot_s": mean / tau}

    def prefill_s(self, batch, prompt_tokens, st, grid=False) -> np.ndarray:
        """Time to prefill one prompt of ``prompt_tokens`` at ``batch`` decoding sequences: its chunks,
        each a step that also decodes. A prompt is prefilled by one attention group, which the others
        wait for in the step's collectives: a step as long as if every group had a chunk of it [s]."""
        e, s, _, _, _ = self._terms(grid)
        c = np.minimum(s["chunk_tokens"], prompt_tokens)
        q = 1.0 + s["draft_tokens"] if self.draft else 1.0
        step = forward_s(e, batch, q, np.maximum(c / e["inv_groups"] / e["pp"], st["chunk"]))
        return prompt_tokens / c * step

    def ttft_s(self, batch, st, quantile=None, grid=False) -> np.ndarray:
        """Time to first token at ``batch`` sequences [s].

        Prompts queue for the replica's prefill budget (``C`` tokens a step per attention group):
        M/D/1 (:func:`.prefill_wait_s`) at the budget's utilisation ``rho = B tau p / (o C dp)``, each
        prompt taking ``p / (C dp)`` of a step; the steps a request waits at step boundaries before the
        scheduler takes it in (``ttft_mean_steps`` decode steps on average, ``ttft_p99_extra_steps`` more at the
        99th percentile, calibrated on measured TTFT); then its own prefill steps (for a
        ``quantile``, of the ``ttft_prompt_tokens``, with :func:`.wait_quantile_s`).

        References
        ----------
        .. [1] Agrawal et al. 2024, Sarathi-Serve, arXiv:2403.02310 §2.3 (TTFT is dominated by the
           prefill, queueing included; TPOT by the decode steps). [arxiv-2403.02310]
        .. [2] Kleinrock 1975, "Queueing Systems, Volume 1", §5.6 (M/D/1). [kleinrock-1975-queueing-systems]
        """
        _, s, tau, first, budget = self._terms(grid)
        steps_mean = self.k["ttft_mean_steps"]
        steps_p99 = steps_mean + self.k["ttft_p99_extra_steps"]
        if grid:
            steps_mean, steps_p99 = steps_mean[:, None], steps_p99[:, None]
        needed = np.asarray(batch, dtype=float) * tau * s["prompt_tokens"] / s["output_tokens"]
        rho = np.minimum(needed / budget, 0.999)
        service = s["prompt_tokens"] / budget * st["mixed_s"]
        wait = prefill_wait_s(rho / np.maximum(service, 1e-12), service)
        if quantile is None:
            own = self.prefill_s(batch, s["prompt_tokens"], st, grid)
            return wait + steps_mean * st["decode_s"] + own
        own = self.prefill_s(batch, s["ttft_prompt_tokens"], st, grid)
        return wait_quantile_s(wait, rho, quantile) + steps_p99 * st["decode_s"] + own

    def largest(self, margin, b_max, points=12, checks=3):
        """The largest batch in ``[1, b_max]`` whose ``margin(batch grid) >= 0``, per row; 0 where even one
        sequence fails. ``margin`` must fall with the batch. A geometric grid, a finer one inside the
        bracket it finds, then linear interpolation of the margin (so the batch moves smoothly with
        the constants, which the fit needs), checked with up to ``checks`` more margins
        (:meth:`_checked`): the batch returned then meets the margin, so a pool sized and loaded to
        it meets the targets it was sized for. ``checks=0``: the interpolated batch, unchecked (the
        calibration's predictions of measured rates, which the committed constants were fitted on)."""
        lo, hi = np.ones_like(b_max), np.maximum(b_max, 1.0)
        rows = np.arange(len(lo))
        t = np.linspace(0.0, 1.0, points)
        for rnd in range(2):
            grid = lo[:, None] * (hi / lo)[:, None] ** t[None, :]
            m = margin(grid)
            good = m >= 0
            last = np.where(good.any(axis=1), points - 1 - np.argmax(good[:, ::-1], axis=1), -1)
            if rnd == 0:
                any_ok = last >= 0
            nxt = np.minimum(np.maximum(last, 0) + 1, points - 1)
            b_lo, b_hi = grid[rows, np.maximum(last, 0)], grid[rows, nxt]
            m_lo, m_hi = m[rows, np.maximum(last, 0)], m[rows, nxt]
            lo, hi = np.where(last >= 0, b_lo, 1.0), np.where(last >= 0, np.maximum(b_hi, b_lo), 1.0)
        frac = np.clip(m_lo / np.maximum(m_lo - m_hi, 1e-12), 0.0, 1.0)
        b = np.where(m_hi >= 0, hi, lo + (hi - lo) * frac)
        if checks:
            b = self._checked(margin, b, lo, hi, m_hi, checks)
        return np.where(any_ok, np.maximum(b, 1.0), 0.0)

    @staticmethod
    def _checked(margin, b, lo, hi, m_hi, checks):
        """``b`` where ``margin(b) >= 0``; elsewhere the first of up to ``checks`` secant steps back that
        meets it (else ``lo``, the grid's last batch that does).

        Linear interpolation overshoots the root of a convex margin (a target over a step time that
        rises with the batch, minus 1, is one): the interpolated batch then misses the target by a
        few parts in 10^5, and a pool loaded to it misses it. The secant through that batch and
        ``hi`` (two batches that miss) lands at or below the root of a convex margin, and close to it:
        the batch moves back by about the overshoot, smoothly with the constants, and meets the target.
        """
        out, done = np.where(m_hi >= 0, hi, lo), m_hi >= 0   # batches known to meet the margin
        top = hi                                              # the lowest batch known to miss it
        x, x_prev, m_prev = b, hi, m_hi
        for _ in range(checks):
            m = margin(x[:, None])[:, 0]
            ok = ~done & (m >= 0)
            out, done = np.where(ok, x, out), done | ok
            if done.all():
                break
            top = np.where(done, top, np.minimum(top, x))
            with np.errstate(divide="ignore", invalid="ignore"):
                step = x - m * (x - x_prev) / (m - m_prev)
            x_prev, m_prev = x, m
            x = np.where(done | ~np.isfinite(step), out, np.clip(step, out, top))
        return out


def batch_limit(s, k, lay, tokens_per_step=None) -> np.ndarray:
    """Sequences a replica runs at once: each attention group's paged KV cache beside the weights, a
    sequence admitted only when the cache can hold it to its last output token (its full length,
    ``kv_seq_tokens``; kept fractional: a replica's capacity, not a count of slots), capped by the
    plan's ``max_batch``, the engine's sequence limit per attention group (``engine_max_batch``; in
    a replica of several attention-data-parallel groups ``engine_max_batch_dp``, fitted apart,
    calibration step 18) and the prefill the chunk budget can feed (:func:`.prefill_step_share` at
    most 1).

    TensorRT-LLM's default scheduler (``GUARANTEED_NO_EVICT``) admits a request only when its prompt
    and its maximum output fit, so that no started request is ever paused; an engine that allocates
    blocks as tokens arrive and pauses sequences when memory runs out (vLLM) holds on average only
    ``prompt + output / 2`` (:func:`.mean_sequence_tokens`). The full length was chosen with every
    source left out in turn (calibration step 17, ``data/calibration/serving.md``): a fitted share of
    the output held in reserve settles at all of it. [nvidia-trtllm-runtime-flags]

    Examples
    --------
    Llama 3.1 70B in bf16 on TP 8 (40,960 B/token a GPU, :func:`kv_bytes_per_token_per_gpu`) with
    40 GB left beside the weights, 1,024-token prompts and outputs: 40e9 / (40,960 x 2,048) = 476.8
    sequences, not the 635.8 of the mean length (1,536 tokens):

    >>> s = {"usable_gb": np.array([58.0]), "w_attention": 0.0, "w_dense": 144e9, "w_head": 0.0,
    ...      "w_embedding": 0.0, "w_experts": 0.0, "layers": 80.0, "kv_bytes_per_token": 327680.0,
    ...      "kv_heads": 8.0, "mla": 0.0, "kv_seq_tokens": 2048.0, "max_batch": np.inf,
    ...      "output_tokens": 1024.0, "prompt_tokens": 1024.0, "chunk_tokens": 8192.0,
    ...      "draft_tokens": 0.0, "acceptance": 0.0}
    >>> lay = {"tp": np.array([8.0]), "dp": np.array([1.0]), "ep": np.array([1.0]), "pp": np.array([1.0])}
    >>> round(float(batch_limit(s, {"engine_max_batch": 1e6, "engine_max_batch_dp": 1e6}, lay)[0]), 1)
    476.8
    """
    cap = kv_capacity_gb(s["usable_gb"], weights_gb_per_gpu(s, lay))
    kv = cap * BYTES_PER_GB / (kv_bytes_per_token_per_gpu(s, lay) * s["kv_seq_tokens"])
    per_group = np.minimum(kv, np.where(lay["dp"] > 1, k["engine_max_batch_dp"], k["engine_max_batch"]))
    tau = accepted(s) if tokens_per_step is None else tokens_per_step
    fed = s["output_tokens"] * s["chunk_tokens"] * lay["dp"] / (tau * s["prompt_tokens"])
    return np.minimum(np.minimum(per_group * lay["dp"], s["max_batch"]), np.maximum(fed, 1.0))


# --- capacity ------------------------------------------------------------------------------------


def _usable(s, b) -> np.ndarray:
    return (b >= 1) & np.isfinite(s["pk_experts"]) & np.isfinite(s["pk_attention"])


def offline(eng: Engine) -> dict[str, np.ndarray]:
    """Offline (maximum) capacity of a replica: batch as large as memory and the chunk budget allow.

    ``batch``, ``tpot_s``, ``tokens_per_s`` (output tokens per second of the replica; 0 where not
    even one sequence fits).
    """
    b = batch_limit(eng.s, eng.k, eng.lay, eng.tau)
    ok = _usable(eng.s, b)
    bb = np.where(ok, b, 1.0)
    st = eng.steps(bb)
    return {"batch": np.where(ok, b, 0.0), "tpot_s": st["tpot_s"], "tokens_per_s": np.where(ok, bb / st["tpot_s"], 0.0)}


def at_concurrency(eng: Engine, concurrency) -> dict[str, np.ndarray]:
    """A replica running a fixed number of sequences (a closed-loop benchmark at that concurrency).

    Each client waits for its answer before the next request: ``tokens_per_s = c o / (TTFT + o TPOT)``
    with the TTFT of an unqueued prompt.
    """
    b_max = batch_limit(eng.s, eng.k, eng.lay, eng.tau)
    c = np.minimum(np.maximum(np.asarray(concurrency, dtype=float), 1.0), np.maximum(b_max, 1.0))
    st = eng.steps(c)
    ttft = eng.k["ttft_mean_steps"] * st["decode_s"] + eng.prefill_s(c, eng.s["prompt_tokens"], st)  # unqueued
    out = eng.s["output_tokens"]
    rate = c * out / (ttft + out * st["tpot_s"])
    return {"batch": c, "tpot_s": st["tpot_s"], "ttft_s": ttft,
            "tokens_per_s": np.where(_usable(eng.s, b_max), rate, 0.0)}


def at_slo(eng: Engine, ttft_target_s, tpot_target_s, checked=True, latencies=True) -> dict[str, np.ndarray]:
    """Latency-constrained capacity: the largest batch whose TPOT and 99th-percentile TTFT meet the targets.

    The targets bound the 99th percentiles, as MLPerf's limits do: TTFT by :meth:`Engine.ttft_s`, TPOT
    as ``tpot_p99_factor`` times the mean step (a request's own mean TPOT varies with the prompts
    prefilled beside it; calibrated on MLPerf's measured means). Both rise with the batch
    (:meth:`Engine.largest`). ``tokens_per_s`` is the replica's output
    rate at that batch times ``server_load_factor`` (the share of it a Poisson arrival stream can
    use); 0 where even one sequence misses the targets. ``ttft_s`` is the mean TTFT there,
    ``ttft_p99_s`` the 99th percentile. ``checked=False``: the batch :meth:`Engine.largest` interpolates,
    unchecked (it can miss the targets by a few parts in 10^5; the calibration predicts with it).
    ``latencies=False``: no ``ttft_s`` and ``ttft_p99_s`` (sizing needs only the batch and the rate).
    """
    b_max = batch_limit(eng.s, eng.k, eng.lay, eng.tau)
    ttft_t, tpot_t = np.asarray(ttft_target_s, dtype=float) + 0.0 * b_max, np.asarray(tpot_target_s) + 0.0 * b_max

    def margin(grid):
        st = eng.steps(grid, grid=True)
        tpot99 = eng.k["tpot_p99_factor"][:, None] * st["tpot_s"]
        return np.minimum(tpot_t[:, None] / tpot99, ttft_t[:, None] / eng.ttft_s(grid, st, TTFT_QUANTILE, True)) - 1.0

    b = np.where(_usable(eng.s, b_max), eng.largest(margin, b_max, checks=3 if checked else 0), 0.0)
    bb = np.maximum(b, 1.0)
    st = eng.steps(bb)
    out = {"batch": b, "tpot_s": st["tpot_s"], "tokens_per_s": np.where(b > 0, eng.k["server_load_factor"] * bb
                                                                        / st["tpot_s"], 0.0)}
    if latencies:
        out.update(ttft_s=eng.ttft_s(bb, st), ttft_p99_s=eng.ttft_s(bb, st, TTFT_QUANTILE))
    return out


def prefill_pool(eng: Engine) -> dict[str, np.ndarray]:
    """A prefill-only replica (disaggregated serving): chunks of ``C`` prompt tokens back to back.

    ``tokens_per_s`` (prompt tokens per second), ``service_s`` (a mean prompt's prefill),
    ``p99_s`` (the prefill of the prompt the 99th-percentile TTFT is for), ``fits``.
    """
    s, lay = eng.s, eng.lay
    full = forward_s(eng.e, 0.0, 1.0, s["chunk_tokens"])
    service = s["prompt_tokens"] / eng.chunk * forward_s(eng.e, 0.0, 1.0, eng.chunk)
    c99 = np.minimum(s["chunk_tokens"], s["ttft_prompt_tokens"])
    p99 = s["ttft_prompt_tokens"] / c99 * forward_s(eng.e, 0.0, 1.0, c99)
    fits = (weights_gb_per_gpu(s, lay) + kv_bytes_per_token_per_gpu(s, lay) * s["chunk_tokens"] / lay["dp"]
            / BYTES_PER_GB) <= s["usable_gb"]
    return {"tokens_per_s": np.where(fits, s["chunk_tokens"] / full, 0.0), "service_s": service, "p99_s": p99,
            "fits": fits}


def decode_pool(eng: Engine, tpot_target_s) -> dict[str, np.ndarray]:
    """A decode-only replica (disaggregated serving): the largest batch whose decode step meets the TPOT
    target, and its output tokens per second (times ``server_load_factor``)."""
    s, k, lay = eng.s, eng.k, eng.lay
    b_max = batch_limit(dict(s, chunk_tokens=np.full_like(s["chunk_tokens"], 1e12)), k, lay, eng.tau)
    t = np.asarray(tpot_target_s, dtype=float) + 0.0 * b_max

    def margin(grid):
        tpot99 = eng.k["tpot_p99_factor"][:, None] * eng.steps(grid, grid=True)["decode_s"] / eng.tau[:, None]
        return t[:, None] / tpot99 - 1.0

    b = np.where(_usable(s, b_max), eng.largest(margin, b_max), 0.0)
    bb = np.maximum(b, 1.0)
    dec = eng.steps(bb)["decode_s"]
    return {"batch": b, "tpot_s": dec / eng.tau, "tpot_p99_s": k["tpot_p99_factor"] * dec / eng.tau, "decode_s": dec,
            "tokens_per_s": np.where(b > 0, k["server_load_factor"] * bb * eng.tau / dec, 0.0)}


def disaggregated(pre: dict, dec: dict, s, g_p, g_d, requests_per_s, ttft_target_s, tpot_target_s) -> dict:
    """Separate prefill and decode pools for ``requests_per_s`` (arrays over pairs of replicas).

    ``pre`` and ``dec`` are :func:`prefill_pool` and :func:`decode_pool` of the paired layouts (of
    ``g_p`` and ``g_d`` GPUs). Decode replicas carry the output rate at the TPOT target; prefill
    replicas are added until the 99th-percentile TTFT (M/D/1 wait, the prompt's chunks, the KV
    transfer to the decode pool and the first decode step) meets its target. The KV moves over
    NVLink when both replicas fit in one scale-up domain, else over the prefill replica's
    scale-out NICs.

    References
    ----------
    .. [1] Zhong et al. 2024, DistServe, arXiv:2401.09670 §3-4 (placement of prefill and decode
       instances for TTFT and TPOT targets). [arxiv-2401.09670]
    .. [2] Patel et al. 2024, Splitwise, arXiv:2311.18677 §4 (phase-split clusters). [arxiv-2311.18677]
    """
    lam = np.asarray(requests_per_s, dtype=float)
    n_d = np.maximum(np.ceil(lam * s["output_tokens"] / np.maximum(dec["tokens_per_s"], 1e-9) - 1e-9), 1.0)
    link = np.where(g_p + g_d <= s["scale_up_domain"], s["scale_up_gb_per_s"], _network_gb_per_s(s)) * g_p
    transfer = kv_transfer_time_s(s["ttft_prompt_tokens"], s["kv_bytes_per_token"], link)
    need = lam * s["prompt_tokens"] / np.maximum(pre["tokens_per_s"], 1e-9)

    def ttft(n_p, q=None):
        rho = np.minimum(need / n_p, 0.999)
        wait = prefill_wait_s(rho / np.maximum(pre["service_s"], 1e-12), pre["service_s"])
        if q is None:
            return wait + pre["service_s"] + transfer + dec["decode_s"]
        return wait_quantile_s(wait, rho, q) + pre["p99_s"] + transfer + dec["decode_s"]

    n_p = np.maximum(np.ceil(need / 0.9), 1.0)
    for _ in range(8):  # add prefill replicas until the TTFT target holds
        n_p = np.where(ttft(n_p, TTFT_QUANTILE) > ttft_target_s, np.ceil(n_p * 1.25 + 0.5), n_p)
    ok = pre["fits"] & (dec["tokens_per_s"] > 0) & (pre["tokens_per_s"] > 0)
    ttft99 = ttft(n_p, TTFT_QUANTILE)
    tol = 1 + 1e-9
    return {"prefill_replicas": n_p, "decode_replicas": n_d, "prefill_gpus": n_p * g_p, "decode_gpus": n_d * g_d,
            "gpus": np.where(ok, n_p * g_p + n_d * g_d, np.inf), "ttft_s": ttft(n_p), "ttft_p99_s": ttft99,
            "tpot_s": dec["tpot_s"], "kv_transfer_s": transfer, "decode_batch": dec["batch"],
            "meets_latency": ok & (ttft99 <= ttft_target_s * tol) & (dec["tpot_p99_s"] <= tpot_target_s * tol)}


# --- one plan ------------------------------------------------------------------------------------


def plan_precisions(plan) -> dict:
    """The precision of each part of the served model, the KV cache and the activations (plan fields)."""
    w = plan.workload
    out = {part: w.get(field) or w["weight_precision"] for part, field in PRECISION_FIELDS.items()}
    out.update(kv=w["kv_precision"], activation=w.get("activation_precision"))
    return out


def plan_inputs(plan, counts, gpu=None, precisions=None, gpus_per_node=None) -> dict:
    """:func:`serving_inputs` of a plan (on another GPU, at other precisions or in another server when given)."""
    w = plan.workload
    return serving_inputs(plan.model, counts, gpu or plan.gpu, precisions or plan_precisions(plan),
                          w["prompt_tokens"], w["output_tokens"], plan.cluster["usable_memory_fraction"],
                          w.get("max_batch"), w.get("prefill_chunk_tokens") or 8192, w.get("speculative_tokens") or 0,
                          w.get("speculative_acceptance") or 0.0, w.get("draft_cost") or 0.0,
                          gpus_per_node=gpus_per_node or plan.cluster["gpus_per_node"])


def _fixed_layout(plan) -> dict:
    c = plan.cluster
    return {key: c.get(key) for key in ("tensor_parallel", "attention_data_parallel", "expert_parallel",
                                        "pipeline_parallel")}


def _repeat(s: dict, n: int) -> dict:
    """Each input of one GPU and model (``s``) repeated for ``n`` rows (the family as objects, the rest floats)."""
    numbers = [key for key in s if key != "family"]
    table = np.repeat(np.array([np.nan if s[key] is None else s[key] for key in numbers], dtype=float)[:, None], n, 1)
    rows = dict(zip(numbers, table))
    return {key: np.array([v] * n, dtype=object) if key == "family" else rows[key] for key, v in s.items()}


def serve_options(plan, inputs: dict, constants: dict, lay: dict, prefill=True) -> dict[str, np.ndarray]:
    """Serving figures of one pool of replicas of each layout in ``lay`` for the plan's load (arrays).

    Replicas carry ``requests_per_s`` at the latency-constrained capacity (at the Offline one
    times ``server_load_factor``, with ``meets_latency`` false, where no batch meets the
    targets); the batch at the plan's load follows from Little's law; TTFT (mean and 99th
    percentile) and TPOT are at that batch. ``prefill``: also the prefill-only rate per GPU.
    """
    w = plan.workload
    n = len(lay["tp"])
    s = _repeat(inputs, n)
    eng = Engine(s, constants_for(constants, s["family"]), lay)
    return _one_pool(eng, w["requests_per_s"], w["ttft_ms_target"] / 1e3, w["tpot_ms_target"] / 1e3, prefill)


def _one_pool(eng: Engine, requests_per_s, ttft_target, tpot_target, prefill=True) -> dict[str, np.ndarray]:
    s, k, lay = eng.s, eng.k, eng.lay
    off, slo = offline(eng), at_slo(eng, ttft_target, tpot_target, latencies=False)
    gpus_r = replica_gpus(lay)
    off_rate = np.where(off["tokens_per_s"] > 0, off["tokens_per_s"], 1.0 / eng.steps(np.ones_like(gpus_r))["tpot_s"])
    slo_rate = slo["tokens_per_s"]
    sized_on = np.where(slo_rate > 0, slo_rate, k["server_load_factor"] * off_rate)
    out_tok, lam = s["output_tokens"], np.asarray(requests_per_s, dtype=float)
    replicas = np.maximum(np.ceil(lam * out_tok / sized_on - 1e-9), 1.0)
    b_hi = np.where(slo_rate > 0, slo["batch"], np.maximum(off["batch"], 1.0))
    batch = _operating_point(eng, lam / replicas, b_hi)
    st = eng.steps(batch)
    ttft, ttft99 = eng.ttft_s(batch, st), eng.ttft_s(batch, st, TTFT_QUANTILE)
    latency = ttft + out_tok * st["tpot_s"]
    kv_seq_gpu = kv_bytes_per_token_per_gpu(s, lay) * s["kv_seq_tokens"] / BYTES_PER_GB
    weights_gpu = weights_gb_per_gpu(s, lay)
    pre = prefill_pool(eng) if prefill else {"tokens_per_s": np.full_like(gpus_r, np.nan)}
    tol = 1 + 1e-9
    return {
        "tensor_parallel": lay["tp"], "attention_data_parallel": lay["dp"], "expert_parallel": lay["ep"],
        "pipeline_parallel": lay["pp"], "gpus_per_replica": gpus_r,
        "fits": (weights_gpu + kv_seq_gpu <= s["usable_gb"]) & (off["batch"] >= 1),
        "supported": np.isfinite(s["pk_experts"]), "weights_gb_per_gpu": weights_gpu, "kv_seq_gb_per_gpu": kv_seq_gpu,
        "kv_mean_seq_gb_per_gpu": kv_seq_gpu * s["mean_tokens"] / s["kv_seq_tokens"],
        "max_concurrent_sequences": off["batch"], "concurrent_sequences": batch,
        "concurrent_sequences_at_slo": slo["batch"], "peak": s["pk_experts"],
        "prefill_tokens_per_s_per_gpu": pre["tokens_per_s"] / gpus_r,
        "decode_tokens_per_s_per_gpu": batch * st["tau"] / st["mean_s"] / gpus_r,
        "max_tokens_per_s_per_gpu": off_rate / gpus_r, "tokens_per_s_per_gpu_at_slo": slo_rate / gpus_r,
        "ttft_s": ttft99, "ttft_mean_s": ttft, "ttft_p99_s": ttft99, "tpot_s": st["tpot_s"], "latency_s": latency,
        "tokens_per_step": st["tau"],
        "meets_latency": (slo_rate > 0) & (ttft99 <= ttft_target * tol)
        & (k["tpot_p99_factor"] * st["tpot_s"] <= tpot_target * tol),
        "requests_in_flight": requests_in_flight(lam, latency),
        "requests_per_s_per_replica": sized_on / out_tok, "tokens_per_s_per_replica": sized_on,
        "replicas": replicas, "gpus": replicas * gpus_r,
        "memory_bw_fraction": k["decode_bw_efficiency"].copy(),
    }


def _operating_point(eng: Engine, rate, b_hi):
    """The batch replicas run at ``rate`` requests/s each: the root of ``rate x latency(b) = b`` (Little's law).

    ``b_hi`` is the batch at the capacity the replicas were sized on; the root below it is found
    on a grid (:meth:`Engine.largest`; the batch is ``b_hi`` where the load exceeds it).
    """
    out = eng.s["output_tokens"][:, None]
    r = np.asarray(rate, dtype=float)[:, None] + 0.0 * out

    def busy(grid):
        st = eng.steps(grid, grid=True)
        return requests_in_flight(r, eng.ttft_s(grid, st, grid=True) + out * st["tpot_s"]) / grid - 1.0

    b = eng.largest(busy, np.maximum(b_hi, 1.0), checks=0)  # a root, not a bound: the targets hold up to b_hi
    return np.clip(b, 1.0, np.maximum(b_hi, 1.0))


_INTS = ("tensor_parallel", "attention_data_parallel", "expert_parallel", "pipeline_parallel", "gpus_per_replica",
         "replicas", "gpus")
_BOOLS = ("fits", "supported", "meets_latency")


def _option(opts: dict, i: int) -> dict:
    """Option ``i`` of :func:`serve_options` as plain Python scalars."""
    return {key: (int(v[i]) if key in _INTS else bool(v[i]) if key in _BOOLS else float(v[i]))
            for key, v in opts.items()}


def best_index(opts: dict) -> int:
    """Index of the option to serve on: usable ones by (meets targets, fewest GPUs, smaller replica),
    else the one that needs the least memory.

    Examples
    --------
    Two options meet the targets on 16 GPUs, one misses them on 8: the smaller replica of the two
    that meet them wins.

    >>> opts = {"fits": np.array([True, True, True]), "supported": np.array([True, True, True]),
    ...         "meets_latency": np.array([True, False, True]), "gpus": np.array([16, 8, 16]),
    ...         "gpus_per_replica": np.array([8, 8, 4])}
    >>> best_index(opts)
    2
    """
    usable = opts["fits"] & opts["supported"]
    if usable.any():
        return int(np.lexsort((opts["gpus_per_replica"], opts["gpus"], ~opts["meets_latency"], ~usable))[0])
    return int(np.argmin(opts["weights_gb_per_gpu"] + opts["kv_seq_gb_per_gpu"]))


#: layouts of each pool a two-pool search pairs (the best by prefill and by decode throughput per GPU)
POOL_SHORTLIST = 4


def two_pools(eng: Engine, requests_per_s, ttft_target, tpot_target) -> dict[str, np.ndarray]:
    """The best pair of prefill and decode pools for each row group of ``eng`` (one plan: all rows).

    Pairs the :data:`POOL_SHORTLIST` layouts with the most prefill tokens per second per GPU with
    those with the most decode tokens per second per GPU at the TPOT target
    (:func:`disaggregated`); returns the pair that meets the targets with the fewest GPUs, with
    ``prefill_index`` and ``decode_index`` into the rows.
    """
    pre, dec = prefill_pool(eng), decode_pool(eng, tpot_target)
    g = replica_gpus(eng.lay)
    ip = np.argsort(-pre["tokens_per_s"] / g)[:POOL_SHORTLIST]
    idd = np.argsort(-dec["tokens_per_s"] / g)[:POOL_SHORTLIST]
    a, b = np.repeat(ip, len(idd)), np.tile(idd, len(ip))
    pair = disaggregated(take(pre, a), take(dec, b), take(eng.s, a), g[a], g[b], requests_per_s, ttft_target,
                         tpot_target)
    i = int(np.lexsort((pair["gpus"], ~pair["meets_latency"]))[0])
    out = {key: v[i] for key, v in pair.items()}
    out.update(prefill_index=int(a[i]), decode_index=int(b[i]))
    return out


def _pools(plan, eng: Engine, one: dict) -> dict | None:
    """The plan's best two-pool option as plain numbers (None when no pair is usable)."""
    w = plan.workload
    two = two_pools(eng, w["requests_per_s"], w["ttft_ms_target"] / 1e3, w["tpot_ms_target"] / 1e3)
    if not np.isfinite(two["gpus"]):
        return None
    out = {key: (bool(v) if key == "meets_latency" else int(v) if key.endswith(("_index", "replicas", "gpus"))
                 else float(v)) for key, v in two.items()}
    for pool in ("prefill", "decode"):
        i = out[f"{pool}_index"]
        out[f"{pool}_layout"] = layout_name(*(eng.lay[x][i] for x in ("tp", "dp", "ep", "pp")))
    out["beats_one_pool"] = bool(out["meets_latency"] and (not one["meets_latency"] or out["gpus"] < one["gpus"]))
    return out


def _tp_min(s, lay) -> int | None:
    """Fewest GPUs of a layout that hold the weights and one full-length sequence."""
    need = weights_gb_per_gpu(s, lay) + kv_bytes_per_token_per_gpu(s, lay) * s["kv_seq_tokens"] / BYTES_PER_GB
    ok = need <= s["usable_gb"]
    return int(replica_gpus(lay)[ok].min()) if ok.any() else None


def serving_sizes(plan, counts, s=None) -> dict:
    """Whole-model sizes of a serving plan: weights [GB], KV cache per token [B] and per sequence [GB]."""
    s = s or plan_inputs(plan, counts)
    ctx = plan.workload["prompt_tokens"] + plan.workload["output_tokens"]
    weights = sum(s[f"w_{p}"] for p in (*PARTS, "embedding"))
    return {"weights_gb": weights / BYTES_PER_GB, "kv_bytes_per_token": s["kv_bytes_per_token"],
            "kv_seq_gb": float(kv_cache_gb(s["kv_bytes_per_token"], 1, s["kv_seq_tokens"])),
            "context": ctx, "usable_gb": s["usable_gb"], "mla": bool(s["mla"])}


def fastest_latencies(eng: Engine) -> dict | None:
    """The lowest 99th-percentile TTFT and TPOT any usable layout of ``eng`` reaches: one request at a time.

    At batch 1 a step reads the weights and one sequence's KV cache and nothing else, so no load
    serves a request faster on these layouts at these precisions (a lower target is out of reach
    on this GPU). TPOT is ``tpot_p99_factor`` times the step at batch 1, TTFT the 99th percentile
    of :meth:`Engine.ttft_s` at batch 1, as the targets bound them, on one pool of replicas that
    prefill and decode together (separate prefill and decode pools can reach a somewhat lower
    TTFT at a large prefill pool; the plan's sizing tries them). Returns ``tpot_ms``,
    ``ttft_ms`` [ms] and the ``tpot_layout`` / ``ttft_layout`` that reach them; None when no
    layout is usable.
    """
    lay = eng.lay
    usable = _usable(eng.s, batch_limit(eng.s, eng.k, lay)) & np.isfinite(eng.s["pk_experts"])
    if not usable.any():
        return None
    one = np.ones(len(lay["tp"]))
    st = eng.steps(one)
    tpot = np.where(usable, eng.k["tpot_p99_factor"] * st["tpot_s"], np.inf)
    ttft = np.where(usable, eng.ttft_s(one, st, TTFT_QUANTILE), np.inf)
    i, j = int(np.argmin(tpot)), int(np.argmin(ttft))
    name = [layout_name(*(lay[x][k] for x in ("tp", "dp", "ep", "pp"))) for k in (i, j)]
    return {"tpot_ms": float(tpot[i] * 1e3), "ttft_ms": float(ttft[j] * 1e3), "tpot_layout": name[0],
            "ttft_layout": name[1]}


def _fastest(plan, inputs: dict, constants: dict, eng: Engine) -> dict | None:
    """:func:`fastest_latencies` of the plan's GPU on every layout the search considers (a layout the plan fixes
    is not kept: the question is what the GPU can reach)."""
    if any(v is not None for v in _fixed_layout(plan).values()):
        lay = fitting_layouts(inputs, layouts(plan.model, plan.gpu, plan.cluster["gpus_per_node"], {}))
        if not len(lay["tp"]):
            return None
        s = _repeat(inputs, len(lay["tp"]))
        eng = Engine(s, constants_for(constants, s["family"]), lay)
    return fastest_latencies(eng)


def fastest_on(plan, gpu_id: str, constants=None) -> dict | None:
    """:func:`fastest_latencies` of a validated serving plan's model, precisions and lengths on another catalog GPU
    (every layout of one server of it; fast, no re-validation); None where nothing fits."""
    gpu = plan.catalog.gpus[gpu_id]
    server = plan.catalog.servers.get(gpu.default_server) if gpu.default_server else None
    node = server.gpus_per_node if server else 8
    s = plan_inputs(plan, _counts(plan), gpu, gpus_per_node=node)
    lay = fitting_layouts(s, layouts(plan.model, gpu, node, {}))
    if not len(lay["tp"]):
        return None
    rows = _repeat(s, len(lay["tp"]))
    return fastest_latencies(Engine(rows, constants_for(constants or serving_constants(), rows["family"]), lay))


def serve_plan(plan, counts=None, constants=None) -> dict:
    """The plan's serving figures on the layout (and one pool or two) that needs the fewest GPUs.

    Layout fields the plan gives (``cluster.tensor_parallel``, ``attention_data_parallel``,
    ``expert_parallel``, ``pipeline_parallel``) are kept, the others searched (:func:`layouts`);
    ``cluster.disaggregated`` fixes one pool or two. Returns the one-pool option's figures, the
    ``two_pools`` figures (or None) and ``disaggregated`` (which one is served).
    """
    counts = counts or plan_param_counts(plan)
    constants = constants or serving_constants()
    inputs = plan_inputs(plan, counts)
    lay = fitting_layouts(inputs, layouts(plan.model, plan.gpu, plan.cluster["gpus_per_node"], _fixed_layout(plan)))
    s = _repeat(inputs, len(lay["tp"]))
    eng = Engine(s, constants_for(constants, s["family"]), lay)
    w = plan.workload
    opts = _one_pool(eng, w["requests_per_s"], w["ttft_ms_target"] / 1e3, w["tpot_ms_target"] / 1e3)
    best = _option(opts, best_index(opts))
    best["layout"] = layout_name(best["tensor_parallel"], best["attention_data_parallel"], best["expert_parallel"],
                                 best["pipeline_parallel"])
    choice = plan.cluster.get("disaggregated")
    two = _pools(plan, eng, best) if choice is not False and best["fits"] else None
    served_two = two is not None and (choice is True or (choice is None and two["beats_one_pool"]))
    best["tpot_p99_s"] = float(eng.k["tpot_p99_factor"][best_index(opts)] * best["tpot_s"])
    if two is not None:
        d = two["decode_index"]
        two["tpot_p99_s"] = float(eng.k["tpot_p99_factor"][d] * two["tpot_s"])
        two.update(decode_pool_memory(opts, d, two["decode_batch"]))
    return {**best, "tensor_parallel_min": _tp_min(s, lay) or best["gpus_per_replica"],
            "fastest": _fastest(plan, inputs, constants, eng),
            "sizes": serving_sizes(plan, counts, inputs), "two_pools": two, "disaggregated": served_two,
            "precisions": plan_precisions(plan)}


def decode_pool_memory(opts: dict, i: int, batch: float) -> dict[str, float]:
    """What one GPU of a decode replica of layout ``i`` holds at ``batch`` sequences a replica [GB]: its share of the
    weights and of the paged KV cache of its attention group's sequences (at their mean length).

    >>> opts = {"weights_gb_per_gpu": np.array([80.0, 40.0]), "kv_mean_seq_gb_per_gpu": np.array([0.5, 0.25]),
    ...         "attention_data_parallel": np.array([1, 4])}
    >>> decode_pool_memory(opts, 1, 64)
    {'decode_weights_gb_per_gpu': 40.0, 'decode_kv_cache_gb_per_gpu': 4.0}
    """
    groups = max(int(opts["attention_data_parallel"][i]), 1)
    return {"decode_weights_gb_per_gpu": float(opts["weights_gb_per_gpu"][i]),
            "decode_kv_cache_gb_per_gpu": float(batch / groups * opts["kv_mean_seq_gb_per_gpu"][i])}


def serving_capacity(plan, gpu_id=None, tensor_parallel=None, constants=None) -> dict:
    """GPUs, replicas, per-GPU throughput and latency of a validated plan's load on a GPU (fast, no re-validation).

    Parameters
    ----------
    plan : Plan
        a validated inference plan (its model, load, precisions and latency targets are used).
    gpu_id : str, optional
        catalog GPU to serve on (default the plan's).
    tensor_parallel : int, optional
        tensor-parallel degree of a replica (default: searched with the other layout degrees).

    Returns
    -------
    dict
        ``gpu``, ``supported``, ``fits``, ``tensor_parallel``, ``layout``, ``replicas``, ``gpus``,
        ``max_tokens_per_s_per_gpu`` (Offline), ``tokens_per_s_per_gpu_at_slo``, ``ttft_ms``
        (99th percentile), ``ttft_ms_mean``, ``tpot_ms`` (at the plan's load) and ``meets_latency``.
    """
    gpu = plan.catalog.gpus[gpu_id] if gpu_id else plan.gpu
    s = plan_inputs(plan, _counts(plan), gpu)
    fixed = _fixed_layout(plan)
    if tensor_parallel:
        fixed["tensor_parallel"] = tensor_parallel
    lay = fitting_layouts(s, layouts(plan.model, gpu, plan.cluster["gpus_per_node"], fixed))
    opts = serve_options(plan, s, constants or serving_constants(), lay, prefill=False)
    o = _option(opts, best_index(opts))
    return {"gpu": gpu.id, "supported": o["supported"], "fits": o["fits"], "tensor_parallel": o["tensor_parallel"],
            "layout": layout_name(o["tensor_parallel"], o["attention_data_parallel"], o["expert_parallel"],
                                  o["pipeline_parallel"]),
            "replicas": o["replicas"], "gpus": o["gpus"], "max_tokens_per_s_per_gpu": o["max_tokens_per_s_per_gpu"],
            "tokens_per_s_per_gpu_at_slo": o["tokens_per_s_per_gpu_at_slo"], "ttft_ms": o["ttft_s"] * 1e3,
            "ttft_ms_mean": o["ttft_mean_s"] * 1e3, "tpot_ms": o["tpot_s"] * 1e3, "meets_latency": o["meets_latency"]}


def _counts(plan) -> dict:
    """Parameter counts of a plan (cached on the model record when the plan gives no ``params``)."""
    given = plan.data["model"].get("params") if isinstance(plan.data["model"], dict) else None
    return plan_param_counts(plan) if given else model_param_counts(plan.model)


# --- many GPUs and precisions at once (the options explorer) -------------------------------------


def precision_options(plan, gpu) -> list[dict]:
    """Part precisions worth trying for a plan on ``gpu``: the plan's own, and its linear layers at
    each of bf16, fp8 and fp4 the GPU multiplies at (fp4 also weight-only, where the model's
    checkpoint ships it), embeddings, KV cache and activations as the plan has them."""
    own = plan_precisions(plan)
    out = [own]
    for p in ("bf16", "fp8", "fp4"):
        native = {"bf16": True, "fp8": gpu.fp8_tflops, "fp4": gpu.fp4_tflops}[p]
        if not native and not (p == "fp4" and "fp4" in own.values()):
            continue
        alt = dict(own, attention=p, dense=p, experts=p)
        if plan.model.experts > 1 and own["experts"] == "fp4" and p != "fp4":
            alt["experts"] = own["experts"] if p == "bf16" else p
        if alt not in out:
            out.append(alt)
    return out


def serving_table(plan, combos, constants=None) -> list[dict]:
    """The best one-pool and two-pool option of the plan's load for each ``(gpu, precisions)`` of
    ``combos`` (all layouts of all combos evaluated together, :func:`fitting_layouts`).

    Returns one dict per combo: ``gpu``, ``precisions``, ``precision`` (text), ``one`` and ``two``
    (each ``None`` or ``gpus``, ``layout``, ``meets_latency``, ``fits``, ``ttft_ms``, ``tpot_ms``).
    """
    constants = constants or serving_constants()
    counts = _counts(plan)
    w = plan.workload
    rows, lays, owner = [], [], []
    for i, (gpu, prec) in enumerate(combos):
        inp = plan_inputs(plan, counts, gpu, prec)
        lay = fitting_layouts(inp, layouts(plan.model, gpu, plan.cluster["gpus_per_node"], _fixed_layout(plan)))
        n = len(lay["tp"])
        rows.append(_repeat(inp, n))
        lays.append(lay)
        owner.append(np.full(n, i))
    s = {key: np.concatenate([r[key] for r in rows]) for key in rows[0]}
    lay = {key: np.concatenate([x[key] for x in lays]) for key in ("tp", "dp", "ep", "pp")}
    owner = np.concatenate(owner)
    eng = Engine(s, constants_for(constants, s["family"]), lay)
    ttft_t, tpot_t = w["ttft_ms_target"] / 1e3, w["tpot_ms_target"] / 1e3
    opts = _one_pool(eng, w["requests_per_s"], ttft_t, tpot_t)
    pre, dec = prefill_pool(eng), decode_pool(eng, tpot_t)
    g = replica_gpus(lay)
    out = []
    for i, (gpu, prec) in enumerate(combos):
        idx = np.flatnonzero(owner == i)
        sub = {key: v[idx] for key, v in opts.items()}
        b = idx[best_index(sub)]
        one = {"gpus": int(opts["gpus"][b]), "meets_latency": bool(opts["meets_latency"][b]),
               "fits": bool(opts["fits"][b] and opts["supported"][b]), "ttft_ms": float(opts["ttft_s"][b] * 1e3),
               "tpot_ms": float(opts["tpot_s"][b] * 1e3),
               "layout": layout_name(*(lay[x][b] for x in ("tp", "dp", "ep", "pp")))}
        ip = idx[np.argsort(-pre["tokens_per_s"][idx] / g[idx])[:POOL_SHORTLIST]]
        idd = idx[np.argsort(-dec["tokens_per_s"][idx] / g[idx])[:POOL_SHORTLIST]]
        a, bb = np.repeat(ip, len(idd)), np.tile(idd, len(ip))
        pair = disaggregated(take(pre, a), take(dec, bb), take(s, a), g[a], g[bb], w["requests_per_s"], ttft_t, tpot_t)
        j = int(np.lexsort((pair["gpus"], ~pair["meets_latency"]))[0])
        two = None
        if np.isfinite(pair["gpus"][j]):
            two = {"gpus": int(pair["gpus"][j]), "meets_latency": bool(pair["meets_latency"][j]), "fits": True,
                   "ttft_ms": float(pair["ttft_p99_s"][j] * 1e3), "tpot_ms": float(pair["tpot_s"][j] * 1e3),
                   "layout": "prefill " + layout_name(*(lay[x][a[j]] for x in ("tp", "dp", "ep", "pp")))
                   + ", decode " + layout_name(*(lay[x][bb[j]] for x in ("tp", "dp", "ep", "pp")))}
        out.append({"gpu": gpu.id, "precisions": prec, "one": one, "two": two})
    return out
