"""Serving a load: continuous-batching replicas, their Offline and latency-constrained capacity, replicas.

The formula functions live in :mod:`.inference`; this module puts them together. The engine
(:func:`serving_inputs`, :func:`step_time_s`, :func:`offline`, :func:`at_slo`) works on dicts of
numpy arrays, one element per case, so the calibration (:mod:`aiplan.calibration.serving`)
evaluates every published result at once; :func:`serve_plan` applies it to one plan and
:func:`serving_capacity` is the fast entry point for an options explorer.

A replica is ``t`` tensor-parallel GPUs. Its batch is bounded by the KV cache that fits beside
the weights (:func:`.kv_batch_limit`, paged, at the mean sequence length) and by
``workload.max_batch``. Its **Offline** capacity is the output-token rate at that batch; its
**latency-constrained** capacity is the rate at the largest batch whose step time (TPOT) and
time to first token stay within ``workload.tpot_ms_target`` / ``ttft_ms_target``, times the
calibrated share of it a Poisson load can use (``server_load_factor``). Replicas are sized on
the latency-constrained capacity.

The calibrated constants come from ``data/calibration/serving_constants.csv`` (refit with
``tools/calibrate.py``); a constant ``name.family`` overrides ``name`` for GPUs of that
catalog ``family``.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.catalog import calibration_file, read_constants
from ..core.units import BYTES_PER_ELEMENT, BYTES_PER_GB, PCIE5_X16_GB_PER_S
from .compute import peak_flops_per_s
from .inference import (
    chunked_prefill_tokens_per_step,
    compute_time_s,
    kv_batch_limit,
    kv_cache_bytes_per_token,
    kv_cache_gb,
    kv_capacity_gb,
    kv_shard_fraction,
    mean_sequence_tokens,
    memory_time_s,
    prefill_time_s,
    prefill_wait_s,
    requests_in_flight,
    serving_step_time_s,
    step_overhead_s,
    time_to_first_token_s,
    tp_allreduce_time_s,
    wait_quantile_s,
    weight_bytes_read_per_step,
)
from .memory import usable_memory_gb
from .params import (
    attended_tokens,
    inference_flops_per_token,
    local_layer_fraction,
    model_attention_flops_fwd,
    model_param_counts,
    plan_param_counts,
    value_or,
)

#: the calibrated constants the engine needs (names in serving_constants.csv)
CONSTANTS = ("decode_bw_efficiency", "decode_compute_efficiency", "prefill_efficiency", "step_overhead_s_per_layer",
             "sequence_overhead_s_per_layer",
             "tp_scaling_efficiency", "server_load_factor", "engine_max_batch", "engine_max_tokens_per_step",
             "family_efficiency", "fp4_compute_efficiency")

#: constants that may be absent (their value then)
OPTIONAL = {"family_efficiency": 1.0}

#: tensor-parallel degrees the kit tries for a replica
TP_CANDIDATES = (1, 2, 4, 8, 16, 32, 64)

#: bisection steps for the latency-constrained batch (2^-16 of the batch range)
_BISECTION_STEPS = 16

#: bisection steps for the batch at the plan's load
_OPERATING_POINT_STEPS = 16

#: the TTFT quantile latency targets apply to (MLPerf constrains the 99th percentile)
#: [mlcommons-inference-rules-v5.1]
TTFT_QUANTILE = 0.99


# --- constants ---------------------------------------------------------------------------------


def constants_path():
    """Path of ``data/calibration/serving_constants.csv``."""
    return calibration_file("serving_constants.csv")


def serving_constants(path=None) -> dict[str, float]:
    """The calibrated serving constants, ``{name: value}`` (``name.family`` rows are family overrides)."""
    return dict(read_constants(path or constants_path()))


def constants_for(constants: dict, families) -> dict[str, np.ndarray]:
    """Each engine constant as an array over ``families``: the ``name.family`` row if any, else ``name``."""
    fams = np.atleast_1d(np.asarray(families, dtype=object))
    names, index = np.unique(fams.astype(str), return_inverse=True)
    return {name: np.array([constants.get(f"{name}.{f}", constants.get(name, OPTIONAL.get(name))) for f in names],
                           dtype=float)[index]
            for name in CONSTANTS}


def efficiencies(k, tp, fp4=0.0) -> tuple:
    """(memory bandwidth, decode compute, prefill compute) efficiencies of a replica of ``tp`` GPUs.

    Each calibrated efficiency times the GPU family's factor (``family_efficiency``, 1 unless the
    data set one) and ``tp_scaling_efficiency`` per doubling of the tensor-parallel degree (the
    share of a step lost to synchronising more GPUs and to their smaller matrix shards); FP4
    matmuls (``fp4`` = 1) reach ``fp4_compute_efficiency`` times the share FP8 matmuls reach of
    their (half as high) peak.
    """
    scale = k["family_efficiency"] * k["tp_scaling_efficiency"] ** np.log2(tp)
    comp = scale * np.where(np.asarray(fp4) > 0, k["fp4_compute_efficiency"], 1.0)
    return (k["decode_bw_efficiency"] * scale, k["decode_compute_efficiency"] * comp,
            k["prefill_efficiency"] * comp)


# --- precision -----------------------------------------------------------------------------------


def compute_peak_flops_per_s(gpu, weight_precision):
    """Dense peak FLOP/s a served model's matmuls run at on a catalog GPU, by weight precision [FLOP/s].

    fp8 weights run FP8 matmuls (``fp8_tflops``), fp4 (NVFP4/MXFP4) FP4 matmuls
    (``fp4_tflops``, ``None`` if the GPU has none), int8 INT8 matmuls (``int8_tops``); bf16 and
    int4 (weight-only quantisation, dequantised to 16-bit) run at ``bf16_tflops``. A missing
    fp8/int8 rate falls back to bf16.

    References
    ----------
    .. [1] NVIDIA H100 Tensor Core GPU, specifications table (FP8 and INT8 dense = 2 x BF16).
       [nvidia-h100-page]
    .. [2] NVIDIA Blackwell Architecture Technical Brief (FP4 Tensor Cores). [nvidia-blackwell-tech-brief]
    .. [3] Lin et al. 2023, "AWQ: Activation-aware Weight Quantization", arXiv:2306.00978 §4
       (4-bit weights dequantised to FP16 for the matmul). [arxiv-2306.00978]
    """
    if weight_precision == "fp4" and not gpu.fp4_tflops:
        return None
    return peak_flops_per_s(gpu, weight_precision)


# --- engine --------------------------------------------------------------------------------------


def serving_inputs(model, counts, gpu, weight_precision, kv_precision, prompt_tokens, output_tokens,
                   usable_fraction, max_batch=None) -> dict:
    """The plain numbers the engine needs for one model on one GPU (scalars; ``peak`` None if unsupported).

    ``counts`` is :func:`.model_param_counts` (or a plan's). Weight reads per step leave out the
    input embedding of an untied model (a step gathers only its tokens' rows).
    """
    wbytes = BYTES_PER_ELEMENT[weight_precision]
    mla = model.attention == "mla"
    kvb = float(kv_cache_bytes_per_token(model.layers, model.kv_heads, model.head_dim or model.hidden // model.heads,
                                         BYTES_PER_ELEMENT[kv_precision], mla, value_or(model.kv_lora_rank),
                                         value_or(model.qk_rope_head_dim)))
    gathered = 0.0 if model.tied_embeddings else float(model.vocab * model.hidden)
    experts = counts["params_experts"]
    mean_tokens = float(mean_sequence_tokens(prompt_tokens, output_tokens))
    active = counts["active_params"]
    return {
        "weights_bytes": counts["params"] * wbytes,
        "dense_read_bytes": (counts["params"] - experts - gathered) * wbytes,
        "expert_bytes": experts * wbytes,
        "experts": float(model.experts), "active_experts": float(model.active_experts),
        "kv_bytes_per_token": kvb, "kv_heads": float(model.kv_heads), "mla": mla,
        "kv_read_tokens": float(attended_tokens(mean_tokens, model.sliding_window, local_layer_fraction(model))),
        "kv_seq_tokens": float(attended_tokens(prompt_tokens + output_tokens, model.sliding_window,
                                               local_layer_fraction(model))),
        "mean_tokens": mean_tokens,
        "flops_decode": float(inference_flops_per_token(active)),
        "flops_prefill": float(inference_flops_per_token(active) + model_attention_flops_fwd(model, prompt_tokens / 2)),
        "hidden": float(model.hidden), "layers": float(model.layers), "heads": float(model.heads),
        "prompt_tokens": float(prompt_tokens), "output_tokens": float(output_tokens),
        "usable_gb": float(usable_memory_gb(gpu.memory_gb, usable_fraction)),
        "memory_bw_gb_per_s": float(gpu.memory_bw_gb_per_s), "scale_up_gb_per_s": float(gpu.scale_up_gb_per_s or 0.0),
        "scale_up_domain": float(gpu.scale_up_domain or 1),
        "peak": compute_peak_flops_per_s(gpu, weight_precision),
        "max_batch": float(max_batch) if max_batch else math.inf, "fp4": float(weight_precision == "fp4"),
        "family": gpu.family,
    }


def stack_inputs(rows: list[dict]) -> dict[str, np.ndarray]:
    """Stack :func:`serving_inputs` dicts into arrays (one element per case)."""
    keys = rows[0].keys()
    out = {k: np.array([r[k] for r in rows], dtype=object if k == "family" else float) for k in keys
           if k not in ("peak",)}
    out["peak"] = np.array([r["peak"] if r["peak"] else np.nan for r in rows], dtype=float)
    return out


def batch_limit(s, k, tp):
    """Sequences a replica of ``tp`` GPUs runs at once.

    The paged-KV limit (:func:`.kv_batch_limit`), capped by the plan's ``max_batch``, the
    engine's sequence limit (``engine_max_batch``) and its token budget per step
    (``engine_max_tokens_per_step`` >= decode tokens + prompt chunk, :func:`.chunked_prefill_tokens_per_step`).
    """
    kv_gpu = s["kv_bytes_per_token"] * kv_shard_fraction(tp, s["kv_heads"], s["mla"])
    cap = kv_capacity_gb(s["usable_gb"], s["weights_bytes"] / tp / BYTES_PER_GB)
    per_sequence = 1.0 + chunked_prefill_tokens_per_step(1.0, s["prompt_tokens"], s["output_tokens"])
    engine = np.minimum(k["engine_max_batch"], np.floor(k["engine_max_tokens_per_step"] / per_sequence))
    return np.minimum(np.minimum(kv_batch_limit(cap, kv_gpu, s["kv_read_tokens"]), s["max_batch"]), engine)


def step_time_s(s, k, tp, batch):
    """Step time of a replica of ``tp`` GPUs running ``batch`` sequences with chunked prefill [s]."""
    prompt_chunk = chunked_prefill_tokens_per_step(batch, s["prompt_tokens"], s["output_tokens"])
    tokens = batch + prompt_chunk
    weights = weight_bytes_read_per_step(s["dense_read_bytes"] / tp, s["expert_bytes"] / tp, s["experts"],
                                         s["active_experts"], tokens)
    kv_gpu = s["kv_bytes_per_token"] * kv_shard_fraction(tp, s["kv_heads"], s["mla"])
    bw_eff, dec_eff, pre_eff = efficiencies(k, tp, s["fp4"])
    comp = (compute_time_s(batch * s["flops_decode"], s["peak"], dec_eff, tp)
            + compute_time_s(prompt_chunk * s["flops_prefill"], s["peak"], pre_eff, tp))
    link = np.where(tp <= s["scale_up_domain"], s["scale_up_gb_per_s"],
                    np.minimum(s["scale_up_gb_per_s"], PCIE5_X16_GB_PER_S))  # beyond the domain: PCIe
    comm = tp_allreduce_time_s(tokens, s["hidden"], s["layers"], tp, link, 0.0)
    return serving_step_time_s(memory_time_s(weights, s["memory_bw_gb_per_s"], bw_eff), comp,
                               memory_time_s(batch * kv_gpu * s["kv_read_tokens"], s["memory_bw_gb_per_s"], bw_eff),
                               comm, step_overhead_s(s["layers"], batch, k["step_overhead_s_per_layer"],
                                                     k["sequence_overhead_s_per_layer"]))


def ttft_s(s, k, tp, batch, arrival_rate, prompt_tokens=None, quantile=None, step_s=None):
    """Time to first token at ``batch`` with requests arriving at ``arrival_rate`` per second [s].

    The prompt (``prompt_tokens``, default the mean prompt) is prefilled after the queue of
    prefills ahead of it: the M/D/1 mean wait (:func:`.prefill_wait_s`, service time the mean
    prompt's prefill), or its ``quantile`` (:func:`.wait_quantile_s`) when given. ``step_s`` is
    the step time at ``batch`` if already known.
    """
    prompt = s["prompt_tokens"] if prompt_tokens is None else prompt_tokens
    pre_eff = efficiencies(k, tp, s["fp4"])[2]
    service = prefill_time_s(s["prompt_tokens"], s["flops_prefill"], s["peak"], pre_eff, tp)
    wait = prefill_wait_s(arrival_rate, service)
    if quantile is not None:
        wait = wait_quantile_s(wait, arrival_rate * service, quantile)
    step = step_time_s(s, k, tp, batch) if step_s is None else step_s
    return time_to_first_token_s(wait, prefill_time_s(prompt, s["flops_prefill"], s["peak"], pre_eff, tp), step)


def arrival_rate_at(s, k, batch, step_s):
    """Requests per second a replica running ``batch`` sequences at ``step_s`` per step takes in.

    Its completion rate ``batch / (output tokens x step)`` times ``server_load_factor``.
    """
    return k["server_load_factor"] * batch / (s["output_tokens"] * step_s)


def offline(s, k, tp) -> dict[str, np.ndarray]:
    """Offline (maximum) capacity of a replica: batch as large as memory allows.

    Returns ``batch``, ``step_s`` and ``tokens_per_s`` (output tokens per second of the replica;
    0 where not even one sequence fits or the precision is unsupported).
    """
    b = batch_limit(s, k, tp)
    ok = (b >= 1) & np.isfinite(s["peak"])
    bb = np.where(ok, b, 1.0)
    step = step_time_s(s, k, tp, bb)
    return {"batch": np.where(ok, b, 0.0), "step_s": step, "tokens_per_s": np.where(ok, bb / step, 0.0)}


def at_slo(s, k, tp, ttft_target_s, tpot_target_s, ttft_prompt_tokens=None) -> dict[str, np.ndarray]:
    """Latency-constrained capacity: the largest batch whose TPOT and 99th-percentile TTFT meet the targets.

    TPOT is the step time; TTFT is :func:`ttft_s` at the 99th percentile
    (:data:`TTFT_QUANTILE`) for a prompt of ``ttft_prompt_tokens`` (default the mean prompt),
    with requests arriving at :func:`arrival_rate_at`. Both rise with the batch, so the batch is
    found by bisection. ``tokens_per_s`` is the replica's output rate at that batch times
    ``server_load_factor`` (the share of it a Poisson arrival stream can use); 0 where even one
    sequence misses the targets.
    """
    b_max = batch_limit(s, k, tp)

    def ttft(b, step):
        return ttft_s(s, k, tp, b, arrival_rate_at(s, k, b, step), ttft_prompt_tokens, TTFT_QUANTILE, step)

    def meets(b):
        step = step_time_s(s, k, tp, b)
        return (step <= tpot_target_s) & (ttft(b, step) <= ttft_target_s)

    ok = (b_max >= 1) & np.isfinite(s["peak"]) & meets(np.ones_like(b_max))
    lo, hi = np.ones_like(b_max), np.where(ok, b_max, 1.0)
    top = meets(hi)
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        good = meets(mid)
        lo, hi = np.where(good, mid, lo), np.where(good, hi, mid)
    b = np.where(top, hi, np.floor(lo))
    b = np.where(ok, np.maximum(b, 1.0), 0.0)
    bb = np.maximum(b, 1.0)
    step = step_time_s(s, k, tp, bb)
    rate = np.where(ok, k["server_load_factor"] * bb / step, 0.0)
    return {"batch": b, "step_s": step, "ttft_s": ttft(bb, step), "tokens_per_s": rate}


def tp_options(heads, gpus_per_node, tp_min=1):
    """Tensor-parallel degrees for a replica: powers of two dividing ``heads``, within a node."""
    return [t for t in TP_CANDIDATES if tp_min <= t <= max(gpus_per_node, 1) and heads % t == 0]


# --- one plan ------------------------------------------------------------------------------------


def _plan_inputs(plan, counts, gpu=None) -> dict:
    w = plan.workload
    return serving_inputs(plan.model, counts, gpu or plan.gpu, w["weight_precision"], w["kv_precision"],
                          w["prompt_tokens"], w["output_tokens"], plan.cluster["usable_memory_fraction"],
                          w.get("max_batch"))


def _tp_arrays(inputs: dict, tps) -> tuple[dict, np.ndarray]:
    """:func:`serving_inputs` repeated once per tensor-parallel option, and the options as an array."""
    n = len(tps)
    s = {k: (np.array([v] * n, dtype=object) if k == "family" else np.full(n, np.nan if v is None else v, float))
         for k, v in inputs.items()}
    return s, np.asarray(tps, dtype=float)


def _operating_point(s, k, tp, rate, b_hi):
    """The batch replicas run at ``rate`` requests/s each: the root of ``rate x latency(b) = b`` (Little's law).

    ``b_hi`` is the batch at the capacity the replicas were sized on; the root below it is found
    by bisection (the batch is ``b_hi`` where the load exceeds it).
    """
    out = s["output_tokens"]

    def excess(b):
        step = step_time_s(s, k, tp, b)
        return requests_in_flight(rate, ttft_s(s, k, tp, b, rate, step_s=step) + out * step) - b

    lo, hi = np.ones_like(tp), np.maximum(b_hi, 1.0)
    over = excess(hi) >= 0
    for _ in range(_OPERATING_POINT_STEPS):
        mid = 0.5 * (lo + hi)
        above = excess(mid) >= 0
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return np.where(over, np.maximum(b_hi, 1.0), np.maximum(hi, 1.0))


def serve_options(plan, inputs: dict, constants: dict, tps) -> dict[str, np.ndarray]:
    """Serving figures of replicas of each tensor-parallel degree in ``tps`` for the plan's load (arrays).

    Replicas carry ``requests_per_s`` at the latency-constrained capacity (at the Offline one
    times ``server_load_factor``, with ``meets_latency`` false, where no batch meets the
    targets); the batch at the plan's load follows from Little's law; TTFT (99th percentile) and
    TPOT are at that batch. Where not one sequence fits, the figures are those of one sequence
    and ``fits`` is false.
    """
    w = plan.workload
    s, tp = _tp_arrays(inputs, tps)
    k = constants_for(constants, s["family"])
    ttft_target, tpot_target = w["ttft_ms_target"] / 1e3, w["tpot_ms_target"] / 1e3
    off, slo = offline(s, k, tp), at_slo(s, k, tp, ttft_target, tpot_target)
    off_rate = np.where(off["tokens_per_s"] > 0, off["tokens_per_s"], 1.0 / step_time_s(s, k, tp, np.ones_like(tp)))
    slo_rate = slo["tokens_per_s"]
    sized_on = np.where(slo_rate > 0, slo_rate, k["server_load_factor"] * off_rate)
    out_tok, lam = w["output_tokens"], w["requests_per_s"]
    replicas = np.maximum(np.ceil(lam * out_tok / sized_on - 1e-9), 1.0)
    rate = lam / replicas
    b_max = batch_limit(s, k, tp)
    batch = _operating_point(s, k, tp, rate, np.where(slo_rate > 0, slo["batch"], np.maximum(b_max, 1.0)))
    tpot = step_time_s(s, k, tp, batch)
    ttft = ttft_s(s, k, tp, batch, rate, quantile=TTFT_QUANTILE, step_s=tpot)
    latency = ttft_s(s, k, tp, batch, rate, step_s=tpot) + out_tok * tpot
    share = kv_shard_fraction(tp, s["kv_heads"], s["mla"])
    kv_seq_gpu = kv_cache_gb(s["kv_bytes_per_token"], 1, s["kv_seq_tokens"]) * share
    weights_gpu = s["weights_bytes"] / tp / BYTES_PER_GB
    bw_eff, _, pre_eff = efficiencies(k, tp, s["fp4"])
    tol = 1 + 1e-9
    return {
        "tensor_parallel": tp, "fits": (weights_gpu + kv_seq_gpu <= s["usable_gb"]) & (b_max >= 1),
        "supported": np.isfinite(s["peak"]), "weights_gb_per_gpu": weights_gpu, "kv_seq_gb_per_gpu": kv_seq_gpu,
        "kv_mean_seq_gb_per_gpu": kv_seq_gpu * s["kv_read_tokens"] / s["kv_seq_tokens"],
        "max_concurrent_sequences": b_max, "concurrent_sequences": batch, "concurrent_sequences_at_slo": slo["batch"],
        "peak": s["peak"], "prefill_tokens_per_s_per_gpu": s["peak"] * pre_eff / s["flops_prefill"],
        "decode_tokens_per_s_per_gpu": batch / tpot / tp,
        "max_tokens_per_s_per_gpu": off_rate / tp, "tokens_per_s_per_gpu_at_slo": slo_rate / tp,
        "ttft_s": ttft, "tpot_s": tpot, "latency_s": latency,
        "meets_latency": (slo_rate > 0) & (ttft <= ttft_target * tol) & (tpot <= tpot_target * tol),
        "requests_in_flight": requests_in_flight(lam, latency),
        "requests_per_s_per_replica": sized_on / out_tok, "tokens_per_s_per_replica": sized_on,
        "replicas": replicas, "gpus": replicas * tp, "memory_bw_fraction": bw_eff,
    }


_INTS = ("tensor_parallel", "replicas", "gpus")
_BOOLS = ("fits", "supported", "meets_latency")


def _option(opts: dict, i: int) -> dict:
    """Option ``i`` of :func:`serve_options` as plain Python scalars."""
    return {key: (int(v[i]) if key in _INTS else bool(v[i]) if key in _BOOLS else float(v[i]))
            for key, v in opts.items()}


def _best(opts: dict) -> int:
    """Index of the option to serve on: usable ones by (meets targets, fewest GPUs, smaller TP), else the largest TP."""
    keys = [(0, not m, g, t) if f and u else (1, 0, 0, -t)
            for f, u, m, g, t in zip(opts["fits"], opts["supported"], opts["meets_latency"], opts["gpus"],
                                     opts["tensor_parallel"])]
    return min(range(len(keys)), key=keys.__getitem__)


def _best_replica(plan, inputs, constants, tensor_parallel=None) -> dict:
    m, gpn = plan.model, plan.cluster["gpus_per_node"]
    tps = [int(tensor_parallel)] if tensor_parallel else tp_options(m.heads, gpn) or [1]
    opts = serve_options(plan, inputs, constants, tps)
    return _option(opts, _best(opts))


def _tp_min(plan, inputs) -> int | None:
    """Smallest TP (power of two dividing the heads, up to 64) whose GPUs hold the weights and one full sequence."""
    for tp in tp_options(plan.model.heads, 64):
        share = float(kv_shard_fraction(tp, inputs["kv_heads"], inputs["mla"]))
        kv_seq = float(kv_cache_gb(inputs["kv_bytes_per_token"], 1, inputs["kv_seq_tokens"])) * share
        need = inputs["weights_bytes"] / tp / BYTES_PER_GB + kv_seq
        if need <= inputs["usable_gb"]:
            return tp
    return None


def serving_sizes(plan, counts, s=None) -> dict:
    """Whole-model sizes of a serving plan: weights [GB], KV cache per token [B] and per sequence [GB]."""
    s = s or _plan_inputs(plan, counts)
    ctx = plan.workload["prompt_tokens"] + plan.workload["output_tokens"]
    return {"weights_gb": s["weights_bytes"] / BYTES_PER_GB, "kv_bytes_per_token": s["kv_bytes_per_token"],
            "kv_seq_gb": float(kv_cache_gb(s["kv_bytes_per_token"], 1, s["kv_seq_tokens"])),
            "context": ctx, "usable_gb": s["usable_gb"], "mla": s["mla"]}


def serve_plan(plan, counts=None, constants=None) -> dict:
    """The plan's serving figures at ``cluster.tensor_parallel``, or at the TP that needs the fewest GPUs.

    Without ``cluster.tensor_parallel`` every power of two up to ``gpus_per_node`` (dividing the
    heads) is tried; the one that serves ``requests_per_s`` within the latency targets with the
    fewest GPUs wins (ties: the smaller TP). ``tensor_parallel_min`` is the smallest TP whose
    GPUs hold the weights and one full-length sequence.
    """
    counts = counts or plan_param_counts(plan)
    s = _plan_inputs(plan, counts)
    best = _best_replica(plan, s, constants or serving_constants(), plan.cluster.get("tensor_parallel"))
    return {**best, "tensor_parallel_min": _tp_min(plan, s) or best["tensor_parallel"],
            "sizes": serving_sizes(plan, counts, s)}


def serving_capacity(plan, gpu_id=None, tensor_parallel=None, constants=None) -> dict:
    """GPUs, replicas, per-GPU throughput and latency of a validated plan's load on a GPU (fast, no re-validation).

    Parameters
    ----------
    plan : Plan
        a validated inference plan (its model, load, precisions and latency targets are used).
    gpu_id : str, optional
        catalog GPU to serve on (default the plan's).
    tensor_parallel : int, optional
        GPUs per replica (default: the degree that needs the fewest GPUs).

    Returns
    -------
    dict
        ``gpu``, ``supported`` (the GPU runs the weight precision), ``fits``, ``tensor_parallel``,
        ``replicas``, ``gpus``, ``max_tokens_per_s_per_gpu`` (Offline),
        ``tokens_per_s_per_gpu_at_slo``, ``ttft_ms``, ``tpot_ms`` (at the plan's load) and
        ``meets_latency``.
    """
    gpu = plan.catalog.gpus[gpu_id] if gpu_id else plan.gpu
    counts = _counts(plan)
    s = _plan_inputs(plan, counts, gpu)
    if s["peak"] is None:  # the GPU has no matmul rate for the weight precision (fp4)
        return {"gpu": gpu.id, "supported": False, "fits": False, "tensor_parallel": None, "replicas": None,
                "gpus": None, "max_tokens_per_s_per_gpu": None, "tokens_per_s_per_gpu_at_slo": None,
                "ttft_ms": None, "tpot_ms": None, "meets_latency": False}
    o = _best_replica(plan, s, constants or serving_constants(), tensor_parallel)
    return {"gpu": gpu.id, "supported": o["supported"], "fits": o["fits"], "tensor_parallel": o["tensor_parallel"],
            "replicas": o["replicas"], "gpus": o["gpus"], "max_tokens_per_s_per_gpu": o["max_tokens_per_s_per_gpu"],
            "tokens_per_s_per_gpu_at_slo": o["tokens_per_s_per_gpu_at_slo"], "ttft_ms": o["ttft_s"] * 1e3,
            "tpot_ms": o["tpot_s"] * 1e3, "meets_latency": o["meets_latency"]}


def _counts(plan) -> dict:
    """Parameter counts of a plan (cached on the model record when the plan gives no ``params``)."""
    given = plan.data["model"].get("params") if isinstance(plan.data["model"], dict) else None
    return plan_param_counts(plan) if given else model_param_counts(plan.model)
