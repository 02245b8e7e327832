"""Property tests of the model step (hypothesis): monotonicity, linearity, no NaN or negative output."""

from __future__ import annotations

import math

import numpy as np
from conftest import model_only
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aiplan import load_catalog, load_plan
from aiplan import model as M

CATALOG = load_catalog()
MODELS = sorted(CATALOG.models)
GPUS = sorted(g for g in CATALOG.gpus if CATALOG.gpus[g].default_server in CATALOG.servers)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def training_plans(draw):
    model_id = draw(st.sampled_from(MODELS))
    m = CATALOG.models[model_id]
    kind = draw(st.sampled_from(["pretrain", "finetune"]))
    workload = {"kind": kind, "tokens": draw(st.floats(1e8, 2e13)),
                "seq_len": draw(st.sampled_from([s for s in (512, 2048, 4096, 8192) if s <= m.context])),
                "micro_batch": draw(st.integers(1, 4)),
                "precision": draw(st.sampled_from(["fp32", "fp16", "bf16", "fp8"])),
                "optimizer": draw(st.sampled_from(["adamw", "adamw-8bit", "sgd", "adafactor"])),
                "recompute": draw(st.sampled_from(["none", "selective", "full"])),
                "flash_attention": draw(st.booleans())}
    if kind == "finetune":
        workload["method"] = draw(st.sampled_from(["full", "lora", "qlora"]))
        workload["lora_rank"] = draw(st.sampled_from([4, 16, 64]))
    cluster = {"gpu": draw(st.sampled_from(GPUS)), "gpus": 8 * draw(st.integers(1, 512)),
               "sequence_parallel": draw(st.booleans())}
    return load_plan({"model": model_id, "workload": workload, "cluster": cluster}, CATALOG)


def _divisors_pow2(n, limit):
    return [d for d in (1, 2, 4, 8, 16, 32, 64) if n % d == 0 and d <= limit]


@SETTINGS
@given(plan=training_plans(), data=st.data())
def test_memory_never_rises_with_more_sharding(plan, data):
    m = plan.model
    tps = _divisors_pow2(m.heads, 8)
    pps = [p for p in (1, 2, 3, 4, 6, 8, 16) if m.layers % p == 0]
    tp = data.draw(st.sampled_from(tps))
    pp = data.draw(st.sampled_from(pps))
    dp = data.draw(st.integers(1, 512))
    zero = data.draw(st.integers(0, 3))

    def per_gpu(tp_, pp_, dp_, z_):
        return float(M.training_memory(plan, tp_, pp_, dp_, z_)["per_gpu_gb"])

    base = per_gpu(tp, pp, dp, zero)
    tol = 1e-9 * base
    for z in range(zero, 4):  # higher ZeRO stage
        assert per_gpu(tp, pp, dp, z) <= base + tol
    for t in tps:  # more tensor parallelism
        if t > tp:
            assert per_gpu(t, pp, dp, zero) <= base + tol
    assert per_gpu(tp, pp, dp * 2, zero) <= base + tol  # more data parallelism
    # more pipeline stages (ZeRO 2/3 with pipeline parallelism is unsupported in DeepSpeed/Megatron:
    # there the first-stage embedding activations, p sbh/t, of Korthikanti et al. 2022, §4.3
    # [arxiv-2205.05198], can outgrow fully sharded states)
    # Nor with adapter fine-tuning: its frozen (often 4-bit) base leaves almost no state for more
    # stages to save, while the first stage's in-flight embedding activations grow with them.
    if plan.workload.get("method", "full") != "full":
        return
    z_pp = min(zero, 1)
    ref = per_gpu(tp, pp, dp, z_pp)
    for p in pps:
        if p > pp:
            assert per_gpu(tp, p, dp, z_pp) <= ref * (1 + 1e-9)


def test_memory_monotone_vectorised():
    # the same property on one broadcast call, as the cluster layout search uses it
    plan = load_plan({"model": "llama-3.1-70b", "workload": {"kind": "pretrain", "tokens": 1e12},
                      "cluster": {"gpus": 1024}}, CATALOG)
    z = np.arange(4)[:, None, None]
    tp = np.array([1, 2, 4, 8])[None, :, None]
    dp = np.array([1, 2, 8, 64, 512])[None, None, :]
    mem = M.training_memory(plan, tp, 1, dp, z, 1, np.array(1))["per_gpu_gb"]
    assert mem.shape == (4, 4, 5)
    assert (np.diff(mem, axis=0) <= 1e-9).all() and (np.diff(mem, axis=1) <= 1e-9).all()
    assert (np.diff(mem, axis=2) <= 1e-9).all()


def _run(plan):
    return model_only(plan)


@SETTINGS
@given(plan=training_plans(), k=st.floats(0.01, 100))
def test_gpu_hours_linear_in_tokens(plan, k):
    data = dict(plan.data)
    data["workload"] = {**plan.workload, "tokens": plan.workload["tokens"] * k}
    scaled = load_plan(data, CATALOG)
    a, b = _run(plan)["compute"], _run(scaled)["compute"]
    assert math.isclose(b["gpu_hours"], k * a["gpu_hours"], rel_tol=1e-9)
    assert math.isclose(b["total_flops"], k * a["total_flops"], rel_tol=1e-9)


@SETTINGS
@given(plan=training_plans(), factor=st.integers(2, 16))
def test_time_falls_as_gpus_rise(plan, factor):
    data = dict(plan.data)
    data["cluster"] = {**plan.cluster, "gpus": plan.cluster["gpus"] * factor}
    more = load_plan(data, CATALOG)
    a, b = _run(plan)["compute"], _run(more)["compute"]
    # the compute of a step shrinks with the GPUs, losing at most GPUs^scale of MFU beyond 256 GPUs
    scale = -M.efficiency.training_constants()["scale"]
    shrink = a["step_compute_s"] / b["step_compute_s"]
    assert factor * (1 + 1e-9) >= shrink >= factor ** (1 - scale) * (1 - 1e-9)
    # the fixed time of a step does not shrink with the GPUs: GPU-hours never fall as GPUs are added
    assert b["gpu_hours"] >= a["gpu_hours"] * (1 - 1e-12)
    # while the fixed time is under half of each step, the run gets shorter (t_b < 2 c_b <= c_a <= t_a)
    if b["step_fixed_fraction"] < 0.5 and shrink >= 2:
        assert b["wall_clock_days_no_failures"] < a["wall_clock_days_no_failures"]
    fixed = {**data, "cluster": {**plan.cluster, "mfu": a["mfu"]}}
    c = _run(load_plan(fixed, CATALOG))["compute"]
    d = _run(load_plan({**fixed, "cluster": {**fixed["cluster"], "gpus": data["cluster"]["gpus"]}}, CATALOG))["compute"]
    assert math.isclose(d["gpu_hours"], c["gpu_hours"], rel_tol=1e-12)  # a fixed MFU: the same GPU-hours


@SETTINGS
@given(kvb=st.integers(1, 5_000_000), batch=st.integers(1, 512), ctx=st.integers(1, 131072), k=st.integers(2, 8))
def test_kv_cache_linear_in_batch_and_context(kvb, batch, ctx, k):
    base = M.kv_cache_gb(kvb, batch, ctx)
    assert math.isclose(M.kv_cache_gb(kvb, batch * k, ctx), k * base, rel_tol=1e-12)
    assert math.isclose(M.kv_cache_gb(kvb, batch, ctx * k), k * base, rel_tol=1e-12)


@st.composite
def any_plans(draw):
    kind = draw(st.sampled_from(["pretrain", "finetune", "inference"]))
    if kind != "inference":
        return draw(training_plans())
    model_id = draw(st.sampled_from(MODELS))
    m = CATALOG.models[model_id]
    prompt = draw(st.integers(1, m.context // 2))
    workload = {"kind": "inference", "requests_per_s": draw(st.floats(0.01, 500)), "prompt_tokens": prompt,
                "output_tokens": draw(st.integers(1, m.context - prompt)),
                "weight_precision": draw(st.sampled_from(["bf16", "fp8", "int8", "int4"])),
                "kv_precision": draw(st.sampled_from(["bf16", "fp8", "int8", "int4"]))}
    return load_plan({"model": model_id, "workload": workload, "cluster": {"gpu": draw(st.sampled_from(GPUS))}},
                     CATALOG)


def _numbers(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _numbers(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _numbers(v)
    elif isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        yield float(value)


@SETTINGS
@given(plan=any_plans())
def test_no_nan_or_negative_output(plan):
    result = _run(plan)
    for section in ("model", "memory", "compute", "inference"):
        for x in _numbers(result[section]):
            assert math.isfinite(x) and x >= 0, (section, result[section])
    if plan.kind == "inference":
        assert result["inference"]["replicas"] >= 1 and result["inference"]["tpot_ms"] > 0
    else:
        assert result["memory"]["per_gpu_gb"] > 0 and result["compute"]["gpu_hours"] > 0
