"""Step 1: what the model needs (parameters, memory, FLOPs, time, inference).

The formula functions (``params``: parameter counts and FLOPs; ``memory``:
training memory per GPU; ``compute``: time and GPU counts; ``inference``: KV
cache, concurrency and roofline throughput; ``calibration``: published runs and
the vectorised plan table) are re-exported here. They are vectorised: every
numeric argument may be a scalar or a numpy array (they broadcast), so the same code serves one plan and
a sweep of a million layouts. Units are in the names (``_gb`` = 10^9 bytes,
``_s``, ``_h``, ``_days``; ``_bytes`` = bytes). Sources are named by their IDs
in ``shared/reference`` (S.., A.., M.., K.., Z..) with their status.

Pipeline entry points: :func:`describe` (``result['model']`` and, for training,
``compute.total_flops``/``compute.gpus``) and :func:`step` (``memory``,
``compute``, ``inference``). :func:`training_memory` is the vectorised memory
model the cluster step's layout search calls; :func:`training_table` evaluates
a DataFrame of plans at once; :func:`calibration_table` compares predicted with
published GPU-hours.
"""


from __future__ import annotations

import math

import numpy as np

from ..units import (BYTES_PER_ELEMENT, BYTES_PER_GB, DECODE_MEMORY_BW_FRACTION)
from .params import (  # noqa: F401
    recompute_code, RECOMPUTE_CODES, PRECISION_CODES, RULE_OF_THUMB_NOTE, attention_params,
    mla_attention_params, mlp_params, norm_params, embedding_params, _opt, model_param_counts,
    plan_param_counts, lora_params, attention_flops_per_token_fwd, training_flops_per_token,
    hardware_flops_per_token, inference_flops_per_token, chinchilla_tokens,
)
from .memory import (  # noqa: F401
    weight_bytes_per_param, gradient_bytes_per_param, optimizer_bytes_per_param, model_state_gb,
    zero_model_state_gb, activation_bytes_per_layer, activation_extra_bytes, microbatches_in_flight,
    activation_gb, usable_memory_gb, qlora_base_bytes_per_param, _finetune_split, training_memory,
    rule_of_thumb_gb,
)
from .compute import (peak_flops_per_s, gpu_hours, wall_clock_days, gpus_for_deadline)  # noqa: F401
from .inference import (  # noqa: F401
    kv_cache_bytes_per_token, kv_cache_gb, kv_shard_fraction, inference_tensor_parallel,
    max_concurrent_sequences, prefill_time_s, decode_step_time_s, experts_touched, requests_in_flight,
)
from .calibration import (CALIBRATION_RUNS, calibration_table, training_table)  # noqa: F401


# =============================================================================
# Pipeline steps
# =============================================================================


def _head_dims(m):
    hd = m.head_dim or m.hidden // m.heads
    if m.attention == "mla":
        qk = _opt(m.qk_nope_head_dim, hd - _opt(m.qk_rope_head_dim)) + _opt(m.qk_rope_head_dim)
        return qk, _opt(m.v_head_dim, hd)
    return hd, hd


def _attention_fwd(plan, seq_len):
    m = plan.model
    qk, v = _head_dims(m)
    return attention_flops_per_token_fwd(m.layers, seq_len, m.heads, qk, v, m.sliding_window)


def describe(plan, result):
    """Fill ``result['model']`` and, for training, ``compute.total_flops`` and ``compute.gpus``.

    ``model.flops_per_token`` is the training model FLOPs per token (6N + attention) for
    pretrain/finetune and the inference forward 2 x active params for inference
    (``model.flops_per_token_basis`` says which). ``compute.gpus`` is the plan's ``cluster.gpus``
    or, without it, the count that meets ``cluster.deadline_days`` at the plan MFU (goodput 1;
    the cluster step may refine it with :func:`gpus_for_deadline` and a goodput).
    """
    counts = plan_param_counts(plan)
    out = result["model"]
    out.update({"name": plan.model.name, "params": counts["params"], "active_params": counts["active_params"],
                "params_embedding": counts["params_embedding"], "params_experts": counts["params_experts"],
                "params_source": counts["params_source"],
                "chinchilla_tokens": chinchilla_tokens(counts["params"])})
    w, c = plan.workload, plan.cluster
    if plan.kind == "inference":
        out["flops_per_token"] = inference_flops_per_token(counts["active_params"])
        out["flops_per_token_basis"] = "inference forward: 2 x active params (attention excluded)"
        out["attention_flops_per_token"] = _attention_fwd(plan, w["prompt_tokens"] + w["output_tokens"])
        return
    attn = _attention_fwd(plan, w["seq_len"])
    fpt = training_flops_per_token(counts["active_params"], attn)
    out["flops_per_token"] = fpt
    out["flops_per_token_basis"] = "training model FLOPs: 6 x active params + attention (Korthikanti Eq. 7)"
    out["attention_flops_per_token"] = 3.0 * attn
    out["hardware_flops_per_token"] = hardware_flops_per_token(counts["active_params"], attn, w["recompute"])
    total = w["tokens"] * fpt
    comp = result["compute"]
    comp["total_flops"] = total
    comp["deadline_days"] = c.get("deadline_days")
    if c.get("gpus"):
        comp["gpus"] = c["gpus"]
    else:
        comp["gpus"] = int(gpus_for_deadline(total, peak_flops_per_s(plan.gpu, w["precision"]), c["mfu"],
                                             c["deadline_days"], c["gpus_per_node"]))


def _layout(plan, result):
    """(gpus, tp, pp, dp, zero, micro_batch, recompute, ep) from result['cluster'], else the plan."""
    rc, c, w = result.get("cluster") or {}, plan.cluster, plan.workload

    def pick(key, default):
        for v in (rc.get(key), c.get(key)):
            if v is not None:
                return v
        return default

    gpus = rc.get("gpus") or result["compute"].get("gpus") or c.get("gpus") or 1
    tp, pp = int(pick("tensor_parallel", 1)), int(pick("pipeline_parallel", 1))
    dp = int(pick("data_parallel", max(gpus // (tp * pp), 1)))
    zero = int(pick("zero_stage", 1))
    mb = rc.get("micro_batch") or w.get("micro_batch", 1)
    recompute = rc.get("recompute") or w.get("recompute", "selective")
    ep = int(pick("expert_parallel", 1))
    return gpus, tp, pp, dp, zero, mb, recompute, ep


def step(plan, result):
    """Fill ``result['memory']``, ``result['compute']`` and ``result['inference']``.

    Training reads the layout from ``result['cluster']`` (falling back to the plan, then tp = pp =
    1, ZeRO 1, dp = gpus / (tp pp)); ``compute.wall_clock_days`` is at goodput 1 (the cluster step
    rescales it). Inference sizes a tensor-parallel replica, its batch, latency and the replicas
    that serve ``requests_per_s``.
    """
    if "params" not in result["model"] or result["model"]["params"] is None:
        describe(plan, result)
    counts = plan_param_counts(plan)
    mem = result["memory"]
    mem["gpu_capacity_gb"] = plan.gpu.memory_gb
    mem["usable_gb"] = usable_memory_gb(plan.gpu.memory_gb, plan.cluster["usable_memory_fraction"])
    mem["usable_memory_fraction"] = plan.cluster["usable_memory_fraction"]
    mem["rule_of_thumb_gb"] = rule_of_thumb_gb(counts["params"])
    mem["rule_of_thumb_note"] = RULE_OF_THUMB_NOTE
    if plan.kind == "inference":
        _inference(plan, result, counts)
    else:
        _training(plan, result, counts)


def _mfu_band(plan):
    mfu = plan.cluster["mfu"]
    return mfu, min(plan.gpu.mfu_low, mfu), max(plan.gpu.mfu_high, mfu)


def _training(plan, result, counts):
    w, c = plan.workload, plan.cluster
    gpus, tp, pp, dp, zero, mb, recompute, ep = _layout(plan, result)
    memo = training_memory(plan, tp, pp, dp, zero, mb, recompute, ep, counts=counts)
    mem = result["memory"]
    for key in ("weights_gb", "gradients_gb", "optimizer_gb", "activations_gb", "per_gpu_gb"):
        mem[key] = float(memo[key])
    mem["kv_cache_gb"] = None
    mem["fits"] = bool(memo["fits"])
    mem["trainable_params"] = _finetune_split(plan, counts)[0]
    mem["method"] = w.get("method", "full")
    mem["layout"] = {"tensor_parallel": tp, "pipeline_parallel": pp, "data_parallel": dp, "zero_stage": zero,
                     "micro_batch": mb, "recompute": recompute, "expert_parallel": ep}
    comp = result["compute"]
    total = comp.get("total_flops") or w["tokens"] * result["model"]["flops_per_token"]
    peak = peak_flops_per_s(plan.gpu, w["precision"])
    mfu, lo, hi = _mfu_band(plan)
    hours = gpu_hours(total, peak, mfu)
    attn = _attention_fwd(plan, w["seq_len"])
    hw = hardware_flops_per_token(counts["active_params"], attn, recompute)
    result["model"]["hardware_flops_per_token"] = hw  # at the layout's recompute (describe used the plan's)
    comp.update({
        "total_flops": total, "gpus": gpus, "mfu": mfu, "mfu_low": lo, "mfu_high": hi,
        "peak_flops_per_s_per_gpu": peak,
        "hardware_flops": w["tokens"] * hw,
        "gpu_hours": hours, "gpu_hours_low": gpu_hours(total, peak, hi), "gpu_hours_high": gpu_hours(total, peak, lo),
        "wall_clock_days": wall_clock_days(hours, gpus),
        "days_low": wall_clock_days(gpu_hours(total, peak, hi), gpus),
        "days_high": wall_clock_days(gpu_hours(total, peak, lo), gpus),
        "tokens_per_s": gpus * peak * mfu / result["model"]["flops_per_token"],
        "deadline_days": c.get("deadline_days"),
    })
    comp["meets_deadline"] = (None if c.get("deadline_days") is None
                              else bool(comp["wall_clock_days"] <= c["deadline_days"] * (1 + 1e-9)))


def inference_tensor_parallel_for(plan, counts=None):
    """TP degree of one inference replica (for the cluster step's layout).

    The plan's ``cluster.tensor_parallel`` if given; else, among the powers of two from the
    smallest that holds the weights and one full-length sequence's KV cache
    (:func:`inference_tensor_parallel`) up to ``gpus_per_node`` (dividing the heads), the one that
    serves ``requests_per_s`` with the fewest GPUs (ties: the smaller TP). The smallest TP alone
    can leave room for only a few sequences (e.g. Llama 3.1 70B in FP8 on one 80 GB GPU).
    """
    return int(_serve_plan(plan, counts or plan_param_counts(plan))["tensor_parallel"])


def _inference_sizes(plan, counts):
    w, m = plan.workload, plan.model
    wbytes = BYTES_PER_ELEMENT[w["weight_precision"]]
    mla = m.attention == "mla"
    kvb = float(kv_cache_bytes_per_token(m.layers, m.kv_heads, m.head_dim or m.hidden // m.heads,
                                         BYTES_PER_ELEMENT[w["kv_precision"]], mla, _opt(m.kv_lora_rank),
                                         _opt(m.qk_rope_head_dim)))
    ctx = w["prompt_tokens"] + w["output_tokens"]
    return {"weights_gb": counts["params"] * wbytes / BYTES_PER_GB, "kv_bytes_per_token": kvb, "mla": mla,
            "kv_seq_gb": float(kv_cache_gb(kvb, 1, ctx, m.sliding_window)), "context": ctx,
            "usable_gb": usable_memory_gb(plan.gpu.memory_gb, plan.cluster["usable_memory_fraction"]),
            "weight_bytes_per_param": wbytes}


def _serve(plan, counts, s, tp):
    """Serving metrics of replicas of ``tp`` GPUs for the plan's load (scalars)."""
    w, m, gpu = plan.workload, plan.model, plan.gpu
    frac = float(kv_shard_fraction(tp, m.kv_heads, s["mla"]))
    w_gpu = s["weights_gb"] / tp
    kv_seq_gpu = s["kv_seq_gb"] * frac
    b_max = float(max_concurrent_sequences(s["usable_gb"], w_gpu, kv_seq_gpu))
    if w.get("max_batch"):
        b_max = min(b_max, w["max_batch"])
    b_cap = max(b_max, 1.0)
    mfu = plan.cluster["mfu"]
    peak = peak_flops_per_s(gpu, w["weight_precision"])
    active = counts["active_params"]
    prompt, out_tok = w["prompt_tokens"], w["output_tokens"]
    f_prefill = inference_flops_per_token(active) + _attention_fwd(plan, prompt)
    f_decode = inference_flops_per_token(active) + _attention_fwd(plan, prompt + out_tok / 2)
    t_prefill = float(np.maximum(prefill_time_s(prompt, f_prefill, peak, mfu, tp),
                                 w_gpu / (gpu.memory_bw_gb_per_s * DECODE_MEMORY_BW_FRACTION)))
    kv_avg_gpu = s["kv_bytes_per_token"] * frac * min(prompt + out_tok / 2, m.sliding_window or math.inf)
    n_exp = counts["params_experts"]

    def step_time(batch):
        touched = experts_touched(m.experts, m.active_experts, batch) / m.experts if m.experts > 1 else 1.0
        read = (counts["params"] - n_exp + n_exp * touched) * s["weight_bytes_per_param"] / tp
        return float(decode_step_time_s(read, batch * kv_avg_gpu, gpu.memory_bw_gb_per_s, batch, f_decode, peak,
                                        mfu, tp))

    # capacity of one replica at its full batch: each request costs its prefill plus its share of
    # the decode steps (continuous batching)
    rps_rep = 1.0 / (t_prefill + out_tok * step_time(b_cap) / b_cap)
    lam = w["requests_per_s"]
    replicas = max(math.ceil(lam / rps_rep - 1e-9), 1)
    # operating point: the batch each replica runs at this load (Little's law, fixed point)
    batch = b_cap
    for _ in range(20):
        latency = t_prefill + out_tok * step_time(batch)
        batch = float(min(max(math.ceil(requests_in_flight(lam / replicas, latency) - 1e-9), 1), b_cap))
    tpot = step_time(batch)
    latency = t_prefill + out_tok * tpot
    return {"tensor_parallel": tp, "fits": bool(w_gpu + kv_seq_gpu <= s["usable_gb"]), "weights_gb_per_gpu": w_gpu,
            "kv_seq_gb_per_gpu": kv_seq_gpu, "max_concurrent_sequences": b_max, "concurrent_sequences": batch,
            "peak": peak, "prefill_tokens_per_s_per_gpu": peak * mfu / f_prefill,
            "decode_tokens_per_s_per_gpu": batch / tpot / tp, "ttft_s": t_prefill, "tpot_s": tpot,
            "latency_s": latency, "requests_in_flight": requests_in_flight(lam, latency),
            "requests_per_s_per_replica": rps_rep, "replicas": replicas, "gpus": replicas * tp}


def _serve_plan(plan, counts):
    """:func:`_serve` at the plan's TP, or at the TP that needs the fewest GPUs."""
    s = _inference_sizes(plan, counts)
    if plan.cluster.get("tensor_parallel"):
        return {**_serve(plan, counts, s, int(plan.cluster["tensor_parallel"])), "sizes": s}
    m, gpn = plan.model, plan.cluster["gpus_per_node"]
    tp_min = int(inference_tensor_parallel(s["weights_gb"], s["kv_seq_gb"], s["usable_gb"], gpn, m.heads, m.kv_heads,
                                           s["mla"]))
    options = [_serve(plan, counts, s, tp) for tp in (2 ** k for k in range(10))
               if tp_min <= tp <= max(gpn, tp_min) and m.heads % tp == 0]
    best = min(options, key=lambda o: (not o["fits"], o["gpus"], o["tensor_parallel"]))
    return {**best, "tensor_parallel_min": tp_min, "sizes": s}


def _inference(plan, result, counts):
    w, c = plan.workload, plan.cluster
    o = _serve_plan(plan, counts)
    s, tp, batch = o["sizes"], o["tensor_parallel"], o["concurrent_sequences"]
    mem = result["memory"]
    mem.update({"weights_gb": o["weights_gb_per_gpu"], "kv_cache_gb": batch * o["kv_seq_gb_per_gpu"],
                "per_gpu_gb": o["weights_gb_per_gpu"] + batch * o["kv_seq_gb_per_gpu"],
                "gradients_gb": None, "optimizer_gb": None, "activations_gb": None, "fits": o["fits"]})
    inf = result["inference"]
    inf.update({key: o[key] for key in ("tensor_parallel", "prefill_tokens_per_s_per_gpu",
                                        "decode_tokens_per_s_per_gpu", "max_concurrent_sequences",
                                        "concurrent_sequences", "requests_in_flight", "latency_s",
                                        "requests_per_s_per_replica", "replicas", "gpus")})
    inf.update({"tensor_parallel_min": o.get("tensor_parallel_min", tp), "kv_bytes_per_token": s["kv_bytes_per_token"],
                "kv_cache_gb_per_sequence": s["kv_seq_gb"], "weights_gb": s["weights_gb"],
                "ttft_ms": o["ttft_s"] * 1e3, "tpot_ms": o["tpot_s"] * 1e3,
                "tokens_per_s_per_replica": o["requests_per_s_per_replica"] * w["output_tokens"],
                "memory_bw_fraction": DECODE_MEMORY_BW_FRACTION})
    mfu, lo, hi = _mfu_band(plan)
    gpus = c.get("gpus") or o["gpus"]
    result["compute"].update({"gpus": gpus, "mfu": mfu, "mfu_low": lo, "mfu_high": hi,
                              "peak_flops_per_s_per_gpu": o["peak"],
                              "tokens_per_s": w["requests_per_s"] * w["output_tokens"]})
    inf["meets_demand"] = bool(o["fits"] and gpus // tp >= o["replicas"])
