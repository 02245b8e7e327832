"""The model step of the pipeline: ``describe`` (the ``model`` record) and ``step``.

``describe`` runs first: parameter counts, FLOPs per token and, for training, the run's FLOPs.
``step`` makes the ``memory``, ``compute`` and ``inference`` records: for training after the
layout step (it reads the ``cluster`` record: GPUs and parallel layout), for serving before it
(it sizes the replicas the layout step then lays out). :func:`first_gpus` is the deadline sizing
at goodput 1 that the layout step starts from.
"""

from __future__ import annotations

import math
from functools import lru_cache

from ..core.assumptions import MAX_GPUS
from ..core.records import record, record_of
from ..core.units import max_gpus_in_servers
from .compute import gpu_hours, gpus_for_deadline, peak_flops_per_s, wall_clock_days
from .efficiency import (
    ADAPTER_METHODS,
    band_factors,
    efficiency_quantile,
    plan_mfu,
    plan_overhead,
    plan_step,
    scaling_limit_gpus,
    training_constants,
)
from .inference import requests_in_flight
from .memory import finetune_split, rule_of_thumb_gb, training_memory, usable_memory_gb
from .params import (
    chinchilla_tokens,
    hardware_flops_per_token,
    inference_flops_per_token,
    model_attention_flops_fwd,
    plan_method,
    plan_param_counts,
    training_flops_per_token,
)
from .serving import serve_plan

#: fixed-point iterations of GPUs <-> calibrated MFU (the MFU changes by < 1% per doubling of GPUs)
_MFU_ITERATIONS = 6


def describe(plan, result):
    """The ``model`` record: parameter counts, FLOPs per token and, for training, the run's FLOPs.

    ``model.flops_per_token`` is the training model FLOPs per token (6N + attention) for
    pretrain/finetune and the inference forward 2 x active params for inference
    (``model.flops_per_token_basis`` says which); ``compute.total_flops`` = tokens x that.
    """
    counts = plan_param_counts(plan)
    out = {"name": plan.model.name, "params": counts["params"], "active_params": counts["active_params"],
           "params_embedding": counts["params_embedding"], "params_experts": counts["params_experts"],
           "params_source": counts["params_source"], "chinchilla_tokens": chinchilla_tokens(counts["params"])}
    w = plan.workload
    if plan.kind == "inference":
        context = w["prompt_tokens"] + w["output_tokens"]
        return record("model", **out, flops_per_token=inference_flops_per_token(counts["active_params"]),
                      flops_per_token_basis="inference forward: 2 x active params (attention excluded)",
                      attention_flops_per_token=model_attention_flops_fwd(plan.model, context))
    attn = model_attention_flops_fwd(plan.model, w["seq_len"])
    grads = weight_grad_fraction(plan)
    fpt = training_flops_per_token(counts["active_params"], attn, grads)
    basis = ("training model FLOPs: 6 x active params + attention (Korthikanti Eq. 7)" if grads
             else "adapter fine-tuning FLOPs: 4 x active params + attention (no weight gradients for the frozen "
                  "weights)")
    return record("model", **out, flops_per_token=fpt, flops_per_token_basis=basis,
                  attention_flops_per_token=3.0 * attn, total_flops=w["tokens"] * fpt)


def first_gpus(plan, total_flops) -> tuple[int, int | None]:
    """(GPUs, GPUs the deadline needs when out of reach) before failures are counted.

    The plan's ``cluster.gpus`` or, without it, the count that meets ``cluster.deadline_days``
    at goodput 1; when that count is beyond what the kit plans for, the most it plans for and the
    count needed.
    """
    c = plan.cluster
    if c.get("gpus"):
        return int(c["gpus"]), None
    gpus = deadline_gpus_at_goodput(plan, total_flops, 1.0)
    if gpus > MAX_GPUS:  # the deadline is out of reach: plan the most the kit plans for, and say so
        return int(max_gpus_in_servers(c["gpus_per_node"])), int(gpus)
    return int(gpus), None


def weight_grad_fraction(plan) -> float:
    """1 for full training, 0 for adapter fine-tuning (LoRA/QLoRA: the base weights are frozen) [-]."""
    return 0.0 if plan_method(plan) in ADAPTER_METHODS else 1.0


def confidence_factor(plan, constants=None) -> float:
    """Work multiplier that sizes a deadline plan for ``cluster.deadline_confidence`` [ratio].

    1 at the median (0.5); at 0.9 the slow end of the calibrated P10-P90 band.
    """
    confidence = plan.cluster.get("deadline_confidence", 0.5)
    if confidence <= 0.5:
        return 1.0
    k = constants or training_constants()
    return _band_quantile_factor(confidence, k["band.q10"], k["band.q90"])


@lru_cache(maxsize=64)
def _band_quantile_factor(confidence, q10, q90) -> float:
    """exp of the ``confidence`` quantile of the calibrated band (P10 ``q10``, P90 ``q90``) [ratio]."""
    return math.exp(efficiency_quantile(confidence, q10, q90))


def deadline_gpus_at_goodput(plan, total_flops, goodput, gpus=None, constants=None) -> int:
    """GPUs that finish ``total_flops`` by ``cluster.deadline_days`` at ``goodput`` [GPUs].

    The calibrated MFU falls with the GPU count, so the count is iterated to a fixed point from
    ``gpus`` (or the count at the MFU of one server's worth). With ``cluster.deadline_confidence``
    above 0.5 the work is taken at that quantile of the calibrated band (:func:`confidence_factor`).
    ``constants``: :func:`~aiplan.model.efficiency.training_constants`, when the caller has read them.
    """
    c, w = plan.cluster, plan.workload
    k = constants or training_constants()  # read once for the whole fixed point
    peak = peak_flops_per_s(plan.gpu, w["precision"])
    work = total_flops * plan_overhead(plan, k) * confidence_factor(plan, k)
    gpus = gpus or c["gpus_per_node"]
    for _ in range(_MFU_ITERATIONS):
        new = int(gpus_for_deadline(work, peak, plan_mfu(plan, gpus, constants=k), c["deadline_days"],
                                    c["gpus_per_node"], goodput=goodput))
        if new == gpus:
            break
        gpus = new
    return gpus


def plan_layout(plan, result):
    """(gpus, tp, pp, dp, zero, micro_batch, recompute, ep) of the layout step's ``cluster`` record."""
    rc, w = result["cluster"], plan.workload
    gpus = rc["gpus"] or 1
    tp, pp = int(rc.get("tensor_parallel", 1)), int(rc.get("pipeline_parallel", 1))
    dp = int(rc.get("data_parallel", max(gpus // (tp * pp), 1)))
    zero = int(rc.get("zero_stage", 1))
    mb = rc.get("micro_batch") or w.get("micro_batch", 1)
    recompute = rc.get("recompute") or w.get("recompute", "selective")
    ep = int(rc.get("expert_parallel", 1))
    return gpus, tp, pp, dp, zero, mb, recompute, ep


def step(plan, result):
    """The ``memory``, ``compute`` and ``inference`` records.

    Training reads the layout step's ``cluster`` record; its times are without failures (the
    cluster step's ``schedule`` adds them). Inference sizes a tensor-parallel replica, its batch,
    latency and the replicas that serve ``requests_per_s`` (the layout step then lays the
    cluster out around them).
    """
    counts = plan_param_counts(plan)
    mem = {"gpu_capacity_gb": plan.gpu.capacity_gb,
           "usable_gb": usable_memory_gb(plan.gpu.capacity_gb, plan.cluster["usable_memory_fraction"]),
           "usable_memory_fraction": plan.cluster["usable_memory_fraction"],
           "rule_of_thumb_gb": rule_of_thumb_gb(counts["params"])}
    if plan.kind == "inference":
        return _inference(plan, result, counts, mem)
    return _training(plan, result, counts, mem)


def mfu_band(plan, gpus, calibrated=False):
    """(MFU, low, high) of a plan at ``gpus`` GPUs: the MFU and the calibrated prediction interval.

    The band is the P10-P90 of the leave-one-source-out GPU-hour errors on published runs
    (:func:`~aiplan.model.efficiency.band_factors`), expressed as MFU. ``calibrated``: around the
    calibrated MFU even when the plan gives its own.
    """
    mfu = float(plan_mfu(plan, gpus, calibrated))
    low_hours, high_hours = band_factors()
    return mfu, mfu / high_hours, mfu / low_hours


def _training(plan, result, counts, mem):
    w, c = plan.workload, plan.cluster
    gpus, tp, pp, dp, zero, mb, recompute, ep = plan_layout(plan, result)
    memo = training_memory(plan, tp, pp, dp, zero, mb, recompute, ep, counts=counts)
    mem.update({key: float(memo[key]) for key in ("weights_gb", "gradients_gb", "optimizer_gb", "activations_gb",
                                                  "per_gpu_gb")})
    mem.update({"fits": bool(memo["fits"]), "trainable_params": finetune_split(plan, counts)[0],
                "method": w.get("method", "full"),
                "layout": {"tensor_parallel": tp, "pipeline_parallel": pp, "data_parallel": dp, "zero_stage": zero,
                           "micro_batch": mb, "recompute": recompute, "expert_parallel": ep}})
    total = result["compute"]["total_flops"]
    peak = peak_flops_per_s(plan.gpu, w["precision"])
    mfu, lo, hi = mfu_band(plan, gpus)
    overhead = plan_overhead(plan)
    hours = gpu_hours(total, peak, mfu) * overhead
    hours_low, hours_high = gpu_hours(total, peak, hi) * overhead, gpu_hours(total, peak, lo) * overhead
    attn = model_attention_flops_fwd(plan.model, w["seq_len"])
    hw = hardware_flops_per_token(counts["active_params"], attn, recompute, weight_grad_fraction(plan))
    comp = {
        "gpus": gpus, "mfu": mfu, "mfu_low": lo, "mfu_high": hi, "peak_flops_per_s_per_gpu": peak,
        "hardware_flops_per_token": hw, "hardware_flops": w["tokens"] * hw,
        "mfu_source": "plan" if c.get("mfu") is not None else "calibrated",
        "mfu_bf16": mfu * peak / peak_flops_per_s(plan.gpu, "bf16"), "overhead_factor": overhead,
        "gpu_hours": hours, "gpu_hours_low": hours_low, "gpu_hours_high": hours_high,
        "wall_clock_days_no_failures": wall_clock_days(hours, gpus),
        "days_low_no_failures": wall_clock_days(hours_low, gpus),
        "days_high_no_failures": wall_clock_days(hours_high, gpus),
        "tokens_per_s": gpus * peak * mfu / overhead / result["model"]["flops_per_token"],
        "deadline_days": c.get("deadline_days"),
    }
    if c.get("mfu") is None:
        comp.update(_step_parts(plan, gpus))
    return record_of("memory", mem), record_of("compute", comp), record("inference")


def _step_parts(plan, gpus) -> dict:
    """The calibrated step of :func:`~aiplan.model.efficiency.plan_step` as ``compute`` keys."""
    st = {k: float(v) for k, v in plan_step(plan, gpus).items()}
    return {"mfu_steady": st["mfu_steady"], "step_compute_s": st["compute_s"], "step_fixed_s": st["fixed_s"],
            "step_fixed_fraction": st["fixed_s"] / st["step_s"],
            "qlora_dequant_s": st["dequant_s"] if plan_method(plan) == "qlora" else None,
            "scaling_limit_gpus": scaling_limit_gpus(plan)}


#: ``inference`` keys that describe one pool of replicas that prefill and decode together; where two pools
#: serve the plan they describe that alternative, and the ``prefill_*`` and ``decode_*`` keys the pools
ONE_POOL_KEYS = ("tensor_parallel", "attention_data_parallel", "expert_parallel", "pipeline_parallel",
                 "gpus_per_replica", "layout", "replicas", "max_concurrent_sequences", "concurrent_sequences_at_slo",
                 "requests_per_s_per_replica", "tokens_per_s_per_replica", "tokens_per_s_per_gpu_at_slo")


def _inference(plan, result, counts, mem):
    w, c = plan.workload, plan.cluster
    o = serve_plan(plan, counts)
    s, batch = o["sizes"], o["concurrent_sequences"]
    weights_gb = o["weights_gb_per_gpu"]
    kv_gb = batch / max(o["attention_data_parallel"], 1) * o["kv_mean_seq_gb_per_gpu"]
    if o["disaggregated"]:  # the decode pool's GPUs: they hold the cache of every sequence being written
        weights_gb, kv_gb = o["two_pools"]["decode_weights_gb_per_gpu"], o["two_pools"]["decode_kv_cache_gb_per_gpu"]
    mem.update({"weights_gb": weights_gb, "kv_cache_gb": kv_gb, "per_gpu_gb": weights_gb + kv_gb, "fits": o["fits"]})
    inf = {key: o[key] for key in ("tensor_parallel", "attention_data_parallel", "expert_parallel",
                                   "pipeline_parallel", "gpus_per_replica", "layout", "prefill_tokens_per_s_per_gpu",
                                   "decode_tokens_per_s_per_gpu", "max_concurrent_sequences", "concurrent_sequences",
                                   "concurrent_sequences_at_slo", "requests_in_flight", "latency_s",
                                   "requests_per_s_per_replica", "tokens_per_s_per_replica", "max_tokens_per_s_per_gpu",
                                   "tokens_per_s_per_gpu_at_slo", "meets_latency", "replicas", "gpus",
                                   "memory_bw_fraction", "tokens_per_step")}
    inf.update({"tensor_parallel_min": o.get("tensor_parallel_min", o["gpus_per_replica"]),
                "kv_bytes_per_token": s["kv_bytes_per_token"], "kv_cache_gb_per_sequence": s["kv_seq_gb"],
                "weights_gb": s["weights_gb"], "ttft_ms": o["ttft_s"] * 1e3, "ttft_ms_p99": o["ttft_p99_s"] * 1e3,
                "ttft_ms_mean": o["ttft_mean_s"] * 1e3, "tpot_ms": o["tpot_s"] * 1e3,
                "tpot_ms_p99": o["tpot_p99_s"] * 1e3,
                "ttft_ms_target": w["ttft_ms_target"], "tpot_ms_target": w["tpot_ms_target"],
                "precision": precision_text(o["precisions"], plan.model.experts > 1),
                "disaggregated": o["disaggregated"],
                "one_pool_gpus": o["gpus"], "one_pool_meets_latency": bool(o["meets_latency"])})
    fastest = o.get("fastest")
    if fastest:
        inf.update({"ttft_ms_fastest": fastest["ttft_ms"], "tpot_ms_fastest": fastest["tpot_ms"],
                    "tpot_fastest_layout": fastest["tpot_layout"], "ttft_fastest_layout": fastest["ttft_layout"]})
    two = o["two_pools"]
    if two:
        inf.update({"two_pool_gpus": two["gpus"], "prefill_layout": two["prefill_layout"],
                    "decode_layout": two["decode_layout"], "kv_transfer_ms": two["kv_transfer_s"] * 1e3})
    if o["disaggregated"]:  # two pools serve: their GPUs, latencies and per-GPU rate
        inf.update({"gpus": two["gpus"], "prefill_gpus": two["prefill_gpus"], "decode_gpus": two["decode_gpus"],
                    "prefill_replicas": two["prefill_replicas"], "decode_replicas": two["decode_replicas"],
                    "ttft_ms": two["ttft_p99_s"] * 1e3, "ttft_ms_p99": two["ttft_p99_s"] * 1e3,
                    "ttft_ms_mean": two["ttft_s"] * 1e3, "tpot_ms": two["tpot_s"] * 1e3,
                    "tpot_ms_p99": two["tpot_p99_s"] * 1e3,
                    "meets_latency": two["meets_latency"], "concurrent_sequences": two["decode_batch"]})
        latency = two["ttft_s"] + w["output_tokens"] * two["tpot_s"]
        inf.update({"latency_s": latency, "requests_in_flight": requests_in_flight(w["requests_per_s"], latency),
                    "decode_tokens_per_s_per_gpu": w["requests_per_s"] * w["output_tokens"] / two["decode_gpus"]})
    gpus_r = o["gpus_per_replica"]
    gpus = c.get("gpus") or inf["gpus"] or gpus_r
    served = inf["gpus"]
    inf["meets_demand"] = bool(o["fits"] and served is not None and gpus >= served)
    # serving has its own calibrated efficiencies (prefill, decode bandwidth); a training MFU does not apply
    comp = {"gpus": gpus, "peak_flops_per_s_per_gpu": o["peak"],
            "tokens_per_s": w["requests_per_s"] * w["output_tokens"], "deadline_days": c.get("deadline_days")}
    return record_of("memory", mem), record_of("compute", comp), record_of("inference", inf)


def precision_text(p: dict, moe: bool = True) -> str:
    """The part precisions of a served model in short words ("weights FP8, head BF16, KV FP8";
    "experts FP4, attention BF16, dense BF16, head BF16, KV FP8").

    Examples
    --------
    >>> precision_text({"attention": "fp8", "dense": "fp8", "head": "bf16", "kv": "fp8"}, moe=False)
    'weights FP8, head BF16, KV FP8'
    >>> precision_text({"experts": "fp4", "attention": "bf16", "dense": "bf16", "head": "bf16", "kv": "fp8"})
    'experts FP4, attention BF16, dense BF16, head BF16, KV FP8'
    """
    p = {part: value.upper() if isinstance(value, str) else value for part, value in p.items()}
    parts = {"experts": p["experts"], "attention": p["attention"], "dense": p["dense"]} if moe else \
        {"attention": p["attention"], "dense": p["dense"]}
    if len(set(parts.values())) == 1:
        out = [f"weights {next(iter(parts.values()))}"]
    else:
        out = [f"{name} {value}" for name, value in parts.items()]
    out += [f"head {p['head']}", f"KV {p['kv']}"]
    if p.get("activation"):
        out.append(f"activations {p['activation']}")
    return ", ".join(out)
