"""Serving a plan's inference load: replica size, batch, latency and replicas (scalars per plan).

The formula functions live in :mod:`.inference`; this module applies them to one plan.
"""

from __future__ import annotations

import math

import numpy as np

from ..units import BYTES_PER_ELEMENT, BYTES_PER_GB, DECODE_MEMORY_BW_FRACTION
from .compute import peak_flops_per_s
from .efficiency import plan_mfu
from .inference import (
    decode_step_time_s,
    experts_touched,
    inference_tensor_parallel,
    kv_cache_bytes_per_token,
    kv_cache_gb,
    kv_shard_fraction,
    max_concurrent_sequences,
    prefill_time_s,
    requests_in_flight,
)
from .memory import usable_memory_gb
from .params import (
    attended_tokens,
    inference_flops_per_token,
    local_layer_fraction,
    model_attention_flops_fwd,
    plan_param_counts,
    value_or,
)


def serving_sizes(plan, counts):
    """Whole-model sizes of a serving plan: weights [GB], KV cache per token [B] and per sequence [GB]."""
    w, m = plan.workload, plan.model
    wbytes = BYTES_PER_ELEMENT[w["weight_precision"]]
    mla = m.attention == "mla"
    kvb = float(kv_cache_bytes_per_token(m.layers, m.kv_heads, m.head_dim or m.hidden // m.heads,
                                         BYTES_PER_ELEMENT[w["kv_precision"]], mla, value_or(m.kv_lora_rank),
                                         value_or(m.qk_rope_head_dim)))
    ctx = w["prompt_tokens"] + w["output_tokens"]
    return {"weights_gb": counts["params"] * wbytes / BYTES_PER_GB, "kv_bytes_per_token": kvb, "mla": mla,
            "kv_seq_gb": float(kv_cache_gb(kvb, 1, ctx, m.sliding_window, local_layer_fraction(m))), "context": ctx,
            "usable_gb": usable_memory_gb(plan.gpu.memory_gb, plan.cluster["usable_memory_fraction"]),
            "weight_bytes_per_param": wbytes}


def serve_replica(plan, counts, sizes, tensor_parallel):
    """Serving metrics of replicas of ``tensor_parallel`` GPUs for the plan's load (scalars)."""
    w, m, gpu = plan.workload, plan.model, plan.gpu
    s, tp = sizes, tensor_parallel
    frac = float(kv_shard_fraction(tp, m.kv_heads, s["mla"]))
    w_gpu = s["weights_gb"] / tp
    kv_seq_gpu = s["kv_seq_gb"] * frac
    b_max = float(max_concurrent_sequences(s["usable_gb"], w_gpu, kv_seq_gpu))
    if w.get("max_batch"):
        b_max = min(b_max, w["max_batch"])
    b_cap = max(b_max, 1.0)
    mfu = float(plan_mfu(plan, plan.cluster.get("gpus") or plan.cluster["gpus_per_node"]))
    peak = peak_flops_per_s(gpu, w["weight_precision"])
    active = counts["active_params"]
    prompt, out_tok = w["prompt_tokens"], w["output_tokens"]
    f_prefill = inference_flops_per_token(active) + model_attention_flops_fwd(m, prompt)
    f_decode = inference_flops_per_token(active) + model_attention_flops_fwd(m, prompt + out_tok / 2)
    t_prefill = float(np.maximum(prefill_time_s(prompt, f_prefill, peak, mfu, tp),
                                 w_gpu / (gpu.memory_bw_gb_per_s * DECODE_MEMORY_BW_FRACTION)))
    kv_avg_gpu = s["kv_bytes_per_token"] * frac * float(attended_tokens(prompt + out_tok / 2, m.sliding_window,
                                                                         local_layer_fraction(m)))
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


def serve_plan(plan, counts=None):
    """:func:`serve_replica` at the plan's TP, or at the TP that needs the fewest GPUs.

    Without ``cluster.tensor_parallel``: among the powers of two from the smallest TP that holds
    the weights and one full-length sequence's KV cache (:func:`.inference_tensor_parallel`) up
    to ``gpus_per_node`` (dividing the heads), the one that serves ``requests_per_s`` with the
    fewest GPUs (ties: the smaller TP). The smallest TP alone can leave room for only a few
    sequences (e.g. Llama 3.1 70B in FP8 on one 80 GB GPU).
    """
    counts = counts or plan_param_counts(plan)
    s = serving_sizes(plan, counts)
    if plan.cluster.get("tensor_parallel"):
        return {**serve_replica(plan, counts, s, int(plan.cluster["tensor_parallel"])), "sizes": s}
    m, gpn = plan.model, plan.cluster["gpus_per_node"]
    tp_min = int(inference_tensor_parallel(s["weights_gb"], s["kv_seq_gb"], s["usable_gb"], gpn, m.heads, m.kv_heads,
                                           s["mla"]))
    options = [serve_replica(plan, counts, s, tp) for tp in (2 ** k for k in range(10))
               if tp_min <= tp <= max(gpn, tp_min) and m.heads % tp == 0]
    best = min(options, key=lambda o: (not o["fits"], o["gpus"], o["tensor_parallel"]))
    return {**best, "tensor_parallel_min": tp_min, "sizes": s}
