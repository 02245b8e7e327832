"""The model step of the pipeline: ``describe`` (parameters, FLOPs, first GPU count) and ``step``.

``describe`` runs first and fills ``result['model']`` and, for training, ``compute.total_flops``
and a first ``cluster.gpus`` (the plan's, or the count that meets ``cluster.deadline_days`` at
goodput 1; the cluster step refines it for failures). ``step`` runs after the cluster step's
layout and fills ``memory``, ``compute`` and ``inference``. ``cluster.gpus`` is the one GPU
count every later step reads; ``compute.gpus`` repeats it.
"""

from __future__ import annotations

import math

from ..core.units import MAX_GPUS, max_gpus_in_servers
from .compute import gpu_hours, gpus_for_deadline, peak_flops_per_s, wall_clock_days
from .efficiency import ADAPTER_METHODS, band_factors, plan_mfu, plan_overhead, training_constants
from .memory import finetune_split, rule_of_thumb_gb, training_memory, usable_memory_gb
from .params import (
    chinchilla_tokens,
    hardware_flops_per_token,
    inference_flops_per_token,
    model_attention_flops_fwd,
    plan_param_counts,
    training_flops_per_token,
)
from .serving import serve_plan

#: fixed-point iterations of GPUs <-> calibrated MFU (the MFU changes by < 1% per doubling of GPUs)
_MFU_ITERATIONS = 6


def describe(plan, result):
    """Fill ``result['model']`` and, for training, ``compute.total_flops`` and ``cluster.gpus``.

    ``model.flops_per_token`` is the training model FLOPs per token (6N + attention) for
    pretrain/finetune and the inference forward 2 x active params for inference
    (``model.flops_per_token_basis`` says which). ``cluster.gpus`` is the plan's ``cluster.gpus``
    or, without it, the count that meets ``cluster.deadline_days`` at the plan MFU (goodput 1;
    the cluster step refines it with :func:`gpus_for_deadline` and a goodput).
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
        context = w["prompt_tokens"] + w["output_tokens"]
        out["attention_flops_per_token"] = model_attention_flops_fwd(plan.model, context)
        return
    attn = model_attention_flops_fwd(plan.model, w["seq_len"])
    grads = weight_grad_fraction(plan)
    fpt = training_flops_per_token(counts["active_params"], attn, grads)
    out["flops_per_token"] = fpt
    out["flops_per_token_basis"] = ("training model FLOPs: 6 x active params + attention (Korthikanti Eq. 7)" if grads
                                    else "adapter fine-tuning FLOPs: 4 x active params + attention (no weight "
                                         "gradients for the frozen weights)")
    out["attention_flops_per_token"] = 3.0 * attn
    out["hardware_flops_per_token"] = hardware_flops_per_token(counts["active_params"], attn, w["recompute"], grads)
    total = w["tokens"] * fpt
    comp = result["compute"]
    comp["total_flops"] = total
    comp["deadline_days"] = c.get("deadline_days")
    if c.get("gpus"):
        gpus = c["gpus"]
    else:
        gpus = deadline_gpus_at_goodput(plan, total, 1.0)
        if gpus > MAX_GPUS:  # the deadline is out of reach: plan the most the kit plans for, and say so
            comp["deadline_gpus_needed"] = gpus
            gpus = max_gpus_in_servers(c["gpus_per_node"])
    result["cluster"]["gpus"] = int(gpus)


def weight_grad_fraction(plan) -> float:
    """1 for full training, 0 for adapter fine-tuning (LoRA/QLoRA: the base weights are frozen) [-]."""
    return 0.0 if plan.kind == "finetune" and plan.workload.get("method", "full") in ADAPTER_METHODS else 1.0


def confidence_factor(plan) -> float:
    """Work multiplier that sizes a deadline plan for ``cluster.deadline_confidence`` [ratio].

    1 at the median (0.5); at 0.9 the slow end of the calibrated P10-P90 band.
    """
    from ..uncertainty import efficiency_quantile

    confidence = plan.cluster.get("deadline_confidence", 0.5)
    if confidence <= 0.5:
        return 1.0
    k = training_constants()
    return math.exp(efficiency_quantile(confidence, k["band.q10"], k["band.q90"]))


def deadline_gpus_at_goodput(plan, total_flops, goodput, gpus=None) -> int:
    """GPUs that finish ``total_flops`` by ``cluster.deadline_days`` at ``goodput`` [GPUs].

    The calibrated MFU falls with the GPU count, so the count is iterated to a fixed point from
    ``gpus`` (or the count at the MFU of one server's worth). With ``cluster.deadline_confidence``
    above 0.5 the work is taken at that quantile of the calibrated band (:func:`confidence_factor`).
    """
    c, w = plan.cluster, plan.workload
    peak = peak_flops_per_s(plan.gpu, w["precision"])
    work = total_flops * plan_overhead(plan) * confidence_factor(plan)
    gpus = gpus or c["gpus_per_node"]
    for _ in range(_MFU_ITERATIONS):
        new = int(gpus_for_deadline(work, peak, plan_mfu(plan, gpus), c["deadline_days"], c["gpus_per_node"],
                                    goodput=goodput))
        if new == gpus:
            break
        gpus = new
    return gpus


def plan_layout(plan, result):
    """(gpus, tp, pp, dp, zero, micro_batch, recompute, ep) from ``result['cluster']``, else the plan."""
    rc, c, w = result.get("cluster") or {}, plan.cluster, plan.workload

    def pick(key, default):
        for v in (rc.get(key), c.get(key)):
            if v is not None:
                return v
        return default

    gpus = rc.get("gpus") or c.get("gpus") or 1
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
    that serve ``requests_per_s``, and sets ``cluster.gpus``.
    """
    if result["model"].get("params") is None:
        describe(plan, result)
    counts = plan_param_counts(plan)
    mem = result["memory"]
    mem["gpu_capacity_gb"] = plan.gpu.memory_gb
    mem["usable_gb"] = usable_memory_gb(plan.gpu.memory_gb, plan.cluster["usable_memory_fraction"])
    mem["usable_memory_fraction"] = plan.cluster["usable_memory_fraction"]
    mem["rule_of_thumb_gb"] = rule_of_thumb_gb(counts["params"])
    if plan.kind == "inference":
        _inference(plan, result, counts)
    else:
        _training(plan, result, counts)


def mfu_band(plan, gpus, calibrated=False):
    """(MFU, low, high) of a plan at ``gpus`` GPUs: the MFU and the calibrated prediction interval.

    The band is the P10-P90 of the leave-one-source-out GPU-hour errors on published runs
    (:func:`~aiplan.model.efficiency.band_factors`), expressed as MFU. ``calibrated``: around the
    calibrated MFU even when the plan gives its own.
    """
    mfu = float(plan_mfu(plan, gpus, calibrated))
    low_hours, high_hours = band_factors()
    return mfu, mfu / high_hours, mfu / low_hours


def _training(plan, result, counts):
    w, c = plan.workload, plan.cluster
    gpus, tp, pp, dp, zero, mb, recompute, ep = plan_layout(plan, result)
    memo = training_memory(plan, tp, pp, dp, zero, mb, recompute, ep, counts=counts)
    mem = result["memory"]
    for key in ("weights_gb", "gradients_gb", "optimizer_gb", "activations_gb", "per_gpu_gb"):
        mem[key] = float(memo[key])
    mem["kv_cache_gb"] = None
    mem["fits"] = bool(memo["fits"])
    mem["trainable_params"] = finetune_split(plan, counts)[0]
    mem["method"] = w.get("method", "full")
    mem["layout"] = {"tensor_parallel": tp, "pipeline_parallel": pp, "data_parallel": dp, "zero_stage": zero,
                     "micro_batch": mb, "recompute": recompute, "expert_parallel": ep}
    comp = result["compute"]
    total = comp.get("total_flops") or w["tokens"] * result["model"]["flops_per_token"]
    peak = peak_flops_per_s(plan.gpu, w["precision"])
    mfu, lo, hi = mfu_band(plan, gpus)
    overhead = plan_overhead(plan)
    hours = gpu_hours(total, peak, mfu) * overhead
    attn = model_attention_flops_fwd(plan.model, w["seq_len"])
    hw = hardware_flops_per_token(counts["active_params"], attn, recompute, weight_grad_fraction(plan))
    result["model"]["hardware_flops_per_token"] = hw  # at the layout's recompute (describe used the plan's)
    result["cluster"]["gpus"] = gpus
    comp.update({
        "total_flops": total, "gpus": gpus, "mfu": mfu, "mfu_low": lo, "mfu_high": hi,
        "peak_flops_per_s_per_gpu": peak,
        "hardware_flops": w["tokens"] * hw,
        "mfu_source": "plan" if c.get("mfu") is not None else "calibrated",
        "mfu_bf16": mfu * peak / peak_flops_per_s(plan.gpu, "bf16"), "overhead_factor": overhead,
        "gpu_hours": hours, "gpu_hours_low": gpu_hours(total, peak, hi) * overhead,
        "gpu_hours_high": gpu_hours(total, peak, lo) * overhead,
        "wall_clock_days": wall_clock_days(hours, gpus),
        "days_low": wall_clock_days(gpu_hours(total, peak, hi) * overhead, gpus),
        "days_high": wall_clock_days(gpu_hours(total, peak, lo) * overhead, gpus),
        "tokens_per_s": gpus * peak * mfu / overhead / result["model"]["flops_per_token"],
        "deadline_days": c.get("deadline_days"),
    })
    comp["meets_deadline"] = (None if c.get("deadline_days") is None
                              else bool(comp["wall_clock_days"] <= c["deadline_days"] * (1 + 1e-9)))


def _inference(plan, result, counts):
    w, c = plan.workload, plan.cluster
    o = serve_plan(plan, counts)
    s, tp, batch = o["sizes"], o["tensor_parallel"], o["concurrent_sequences"]
    mem = result["memory"]
    kv_gb = batch * o["kv_mean_seq_gb_per_gpu"]
    mem.update({"weights_gb": o["weights_gb_per_gpu"], "kv_cache_gb": kv_gb,
                "per_gpu_gb": o["weights_gb_per_gpu"] + kv_gb, "gradients_gb": None, "optimizer_gb": None,
                "activations_gb": None, "fits": o["fits"]})
    inf = result["inference"]
    inf.update({key: o[key] for key in ("tensor_parallel", "prefill_tokens_per_s_per_gpu",
                                        "decode_tokens_per_s_per_gpu", "max_concurrent_sequences",
                                        "concurrent_sequences", "concurrent_sequences_at_slo", "requests_in_flight",
                                        "latency_s", "requests_per_s_per_replica", "tokens_per_s_per_replica",
                                        "max_tokens_per_s_per_gpu", "tokens_per_s_per_gpu_at_slo", "meets_latency",
                                        "replicas", "gpus", "memory_bw_fraction")})
    inf.update({"tensor_parallel_min": o.get("tensor_parallel_min", tp), "kv_bytes_per_token": s["kv_bytes_per_token"],
                "kv_cache_gb_per_sequence": s["kv_seq_gb"], "weights_gb": s["weights_gb"],
                "ttft_ms": o["ttft_s"] * 1e3, "tpot_ms": o["tpot_s"] * 1e3,
                "ttft_ms_target": w["ttft_ms_target"], "tpot_ms_target": w["tpot_ms_target"]})
    gpus = c.get("gpus") or o["gpus"] or tp
    result["cluster"]["gpus"] = gpus
    # serving has its own calibrated efficiencies (prefill, decode bandwidth); a training MFU does not apply
    result["compute"].update({"gpus": gpus, "mfu": None, "mfu_low": None, "mfu_high": None,
                              "peak_flops_per_s_per_gpu": o["peak"],
                              "tokens_per_s": w["requests_per_s"] * w["output_tokens"]})
    inf["meets_demand"] = bool(o["fits"] and o["replicas"] is not None and gpus // tp >= o["replicas"])
