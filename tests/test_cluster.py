"""Cluster step: layout search, contract keys, goodput, and properties (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
from conftest import FINETUNE, INFERENCE, PLANS, PRETRAIN, make_plan
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aiplan import evaluate, load_plan, model
from aiplan.cluster import layout, network, parallel, reliability, step
from aiplan.model import collectives
from aiplan.pipeline import RESULT_KEYS, run

SECTIONS = ("cluster", "network", "storage", "checkpoint", "reliability")


def _describe(plan_dict):
    plan = load_plan(plan_dict)
    return plan, run(plan, until="model")


# --- contract ---------------------------------------------------------------------------


def test_training_result_fills_every_contract_key():
    r = evaluate(PRETRAIN)
    for section in SECTIONS:
        for key in RESULT_KEYS[section]:
            assert r[section][key] is not None, f"{section}.{key}"
    c = r["cluster"]
    assert c["tensor_parallel"] * c["pipeline_parallel"] * c["data_parallel"] == c["gpus"] == 256
    assert c["nodes"] == 256 // c["gpus_per_node"]
    assert 1 <= len(c["candidates"]) <= parallel.N_CANDIDATES
    assert set(c["candidates"][0]) == {"tensor_parallel", "pipeline_parallel", "data_parallel", "zero_stage",
                                       "micro_batch", "recompute", "per_gpu_gb", "step_time_s", "fits"}


def test_proposed_layout_matches_memory_section():
    r = evaluate(PRETRAIN)
    c, mem = r["cluster"], r["memory"]
    assert c["proposed"] is True and c["fits"] is True and mem["fits"] is True
    assert math.isclose(c["per_gpu_gb"], mem["per_gpu_gb"], rel_tol=1e-9)
    assert mem["per_gpu_gb"] <= mem["usable_gb"]


def test_fixed_layout_is_kept():
    r = evaluate(make_plan(PRETRAIN, cluster={"tensor_parallel": 2, "pipeline_parallel": 4, "zero_stage": 2}))
    c = r["cluster"]
    assert (c["tensor_parallel"], c["pipeline_parallel"], c["data_parallel"], c["zero_stage"]) == (2, 4, 32, 2)
    assert c["proposed"] is False
    assert c["recompute"] == "selective" and c["micro_batch"] == 1  # the plan's workload values


def test_partly_fixed_layout_searches_the_rest():
    r = evaluate(make_plan(PRETRAIN, cluster={"tensor_parallel": 4}))
    assert r["cluster"]["tensor_parallel"] == 4 and r["cluster"]["proposed"] is True


def test_no_fit_is_a_result_with_a_hint():
    r = evaluate(PLANS / "does-not-fit.yaml")
    assert r["memory"]["fits"] is False and r["cluster"]["fits"] is False
    hint = r["cluster"]["fit_hint"]
    assert "would fit on" in hint and "GPUs" in hint
    # the GPU count the hint names must really fit (re-run the search there)
    gpus = int(hint.split("would fit on ")[1].split(" GPUs")[0])
    plan = load_plan(PLANS / "does-not-fit.yaml")
    res = run(plan, until="model")
    assert parallel.search(plan, parallel.inputs(plan, res, gpus), gpus)["fits"][0]
    fewer = gpus - plan.cluster["gpus_per_node"]
    assert not parallel.search(plan, parallel.inputs(plan, res, fewer), fewer)["fits"].any()
    # ZeRO-3 shards nothing with one data-parallel copy (tensor parallel 8 on 8 GPUs): it is not offered as a lever
    assert "full recompute gives" in hint and "ZeRO-3 gives" not in hint


def test_fit_hint_none_when_it_fits():
    assert evaluate(PRETRAIN)["cluster"]["fit_hint"] is None


def test_inference_cluster_from_inference_section():
    r = evaluate(INFERENCE)
    inf, c = r["inference"], r["cluster"]
    assert c["tensor_parallel"] == inf["tensor_parallel"]
    assert c["data_parallel"] == inf["replicas"] and c["gpus"] == inf["gpus"]
    assert r["checkpoint"]["size_gb"] is None and r["reliability"]["goodput"] is None
    assert r["reliability"]["interruptions_per_day"] > 0
    assert r["storage"]["read_gb_per_s"] is not None
    assert c["proposed"]  # the plan fixes no serving layout field: the kit chose it


def test_a_serving_cluster_counts_replicas_of_the_whole_replica_layout():
    """With attention data parallelism a replica spans tensor x attention-data x pipeline GPUs: the cluster's data
    parallel degree is its replicas (DeepSeek-R1 on DEP8 PP2 replicas of 16 GPUs, not GPUs / (TP x PP)), and a plan
    that fixes the layout did not have it proposed."""
    r = evaluate(make_plan(INFERENCE, model="deepseek-r1", cluster={
        "gpu": "h200", "attention_data_parallel": 8, "expert_parallel": 8, "pipeline_parallel": 2,
        "disaggregated": False}))
    inf, c = r["inference"], r["cluster"]
    assert inf["gpus_per_replica"] == 16 and not inf["disaggregated"]
    assert c["data_parallel"] == inf["replicas"] == inf["gpus"] // 16 and not c["proposed"]


def test_goodput_rescales_wall_clock_and_gpu_hours():
    r = evaluate(PRETRAIN)
    comp, g = r["compute"], r["reliability"]["goodput"]
    assert 0 < g < 1
    assert math.isclose(comp["wall_clock_days"], comp["wall_clock_days_no_failures"] / g)
    # productive GPU-hours = GPUs x no-failure hours; with failures = GPUs x wall-clock hours
    assert math.isclose(comp["gpu_hours"], comp["gpus"] * comp["wall_clock_days_no_failures"] * 24, rel_tol=1e-9)
    assert math.isclose(comp["gpu_hours_with_failures"], comp["gpus"] * comp["wall_clock_days"] * 24,
                        rel_tol=1e-9)


def test_deadline_met_including_goodput():
    # at even odds the count is sized on the point estimate: one node fewer must miss it
    plan = make_plan(PRETRAIN, cluster={"gpus": None, "deadline_days": 20, "deadline_confidence": 0.5})
    plan["cluster"].pop("gpus")
    r = evaluate(plan)
    assert r["compute"]["meets_deadline"] is True
    assert r["compute"]["wall_clock_days"] <= 20 * (1 + 1e-9)
    assert r["cluster"]["gpus"] == r["compute"]["gpus"]
    # one node fewer would miss it (the sizing is not wasteful)
    comp = r["compute"]
    fewer = comp["gpus"] - r["cluster"]["gpus_per_node"]
    assert comp["wall_clock_days_no_failures"] * comp["gpus"] / fewer / r["reliability"]["goodput"] > 20
    # the default (80% odds) sizes more GPUs than even odds, and reports the even-odds count beside them
    plan["cluster"].pop("deadline_confidence")
    d = evaluate(plan)
    assert d["cluster"]["gpus"] > r["cluster"]["gpus"] == d["compute"]["deadline_gpus_median"]


def test_checkpoint_keys_and_seed_comparison():
    r = evaluate(PRETRAIN)
    ck = r["checkpoint"]
    # resumable (weights + optimizer) > weights-only = the x2 BF16 rule of thumb [seed-ai-training-quick-reference]
    assert ck["size_gb"] > ck["size_weights_gb"] == ck["size_rule_gb"]
    assert math.isclose(ck["interval_min"], ck["daly_min"])
    assert ck["interval_steps"] > 0 and ck["seed_interval_steps"] == [500, 1000]
    assert math.isclose(ck["write_s"], ck["size_gb"] / r["storage"]["write_gb_per_s"])


def test_lora_checkpoint_holds_the_adapters():
    r = evaluate(FINETUNE)
    assert r["checkpoint"]["size_weights_gb"] < 0.01 * r["model"]["params"] * 2 / 1e9


def test_storage_read_rules():
    r = evaluate(PRETRAIN)
    s = r["storage"]
    assert s["read_gb_per_s_rule"] == 256.0  # 1 GB/s per GPU
    assert 0 < s["read_gb_per_s_tokens"] < s["read_gb_per_s_rule"]
    assert s["capacity_tb"] == s["hot_tb"] + s["warm_tb"] + s["cold_tb"]
    assert math.isclose(s["warm_tb"], s["dataset_tb"] * 10.0)  # default growth factor


def test_allreduce_to_compute_ratio_dgx_h100():
    # DGX H100: 50 GB/s NIC per GPU vs 450 GB/s NVLink per direction (see ALLREDUCE_TO_COMPUTE_NOTE)
    r = evaluate(make_plan(PRETRAIN, cluster={"gpu": "h100-sxm", "gpus": 1024}))
    assert math.isclose(r["network"]["allreduce_to_compute_ratio"], 50 / 450)


def test_single_node_has_no_fabric():
    r = evaluate(FINETUNE)
    assert r["network"]["switches"] == 0 and r["network"]["fabric_tiers"] == 0


def test_layout_frame_for_notebooks():
    plan, result = _describe(PRETRAIN)
    result.add(layout(plan, result))
    frame = parallel.layout_frame(plan, result)
    assert len(frame) == result["cluster"]["layouts_evaluated"]
    assert set(frame["recompute"]) <= {"none", "selective", "full"}


def test_step_time_parts_add_up():
    plan, result = _describe(PRETRAIN)
    inp = parallel.inputs(plan, result, 256)
    t = parallel.step_time_table(inp, np.array([1, 2, 4]), np.array([1, 2, 4]), np.array([256, 64, 16]), 1, 1, 1)
    total = t["compute_s"] + t["bubble_s"] + t["tp_comm_s"] + t["pp_comm_s"] + t["dp_exposed_s"]
    np.testing.assert_allclose(total, t["step_time_s"])
    assert (t["dp_exposed_s"] <= t["allreduce_s"]).all()
    assert t["tp_comm_s"][0] == 0 and t["pp_comm_s"][0] == 0 and t["bubble_s"][0] == 0


# --- pipeline stages that do not divide the layers ---------------------------------------------

LLAMA3_405B_16K = {  # Llama 3 405B pre-training on 16,384 H100: TP 8, PP 16, DP 128, 8,192-token sequences, 16M
    # tokens per batch (Llama Team 2024, §3.3.2, Table 4) [arxiv-2407.21783]
    "name": "Llama 3 405B layout", "model": "llama-3.1-405b",
    "workload": {"kind": "pretrain", "tokens": 15.6e12, "seq_len": 8192, "global_batch_tokens": 16.0e6},
    "cluster": {"gpu": "h100-sxm", "gpus": 16384, "tensor_parallel": 8, "pipeline_parallel": 16,
                "data_parallel": 128, "zero_stage": 1},
    "facility": {"server": "dgx-h100"},
}


def test_llama3_405b_paper_layout_is_evaluated():
    r = evaluate(LLAMA3_405B_16K)
    c = r["cluster"]
    assert (c["tensor_parallel"], c["pipeline_parallel"], c["data_parallel"]) == (8, 16, 128)
    assert c["proposed"] is False
    assert math.isfinite(c["step_time_s"]) and c["step_time_s"] > 0
    assert math.isfinite(r["memory"]["per_gpu_gb"]) and r["memory"]["per_gpu_gb"] > 0
    assert math.isclose(c["per_gpu_gb"], r["memory"]["per_gpu_gb"], rel_tol=1e-9)


def test_pipeline_degrees_searched():
    # the divisors of the layers and every power of two up to them: Llama 3 405B's PP 16 on 126 layers
    # (Table 4) [arxiv-2407.21783] and DeepSeek-V3's 16-way PP on 61 layers (§3.2) [arxiv-2412.19437]
    for layers in (1, 2, 7, 32, 61, 80, 96, 126):
        got = parallel.pipeline_degrees(layers)
        want = {p for p in range(1, layers + 1) if layers % p == 0 or p & (p - 1) == 0}
        assert got == sorted(want)
    assert 16 in parallel.pipeline_degrees(126) and 16 in parallel.pipeline_degrees(61)
    plan, result = _describe(LLAMA3_405B_16K)
    grid = parallel.enumerate_layouts(16384, parallel.inputs(plan, result, 16384), tensor_parallel=8,
                                      pipeline_parallel=16)
    assert len(grid["tp"]) and set(grid["dp"].tolist()) == {128}


def test_step_time_of_uneven_stages_is_the_busiest_stage():
    plan, result = _describe(LLAMA3_405B_16K)
    inp = parallel.inputs(plan, result, 16384)
    t = parallel.step_time_table(inp, np.array([8]), np.array([16]), np.array([128]), 1, 1, 1)
    even = inp.train_flops_per_token * inp.tokens_per_step * inp.flops_factors[1] / (16384 * inp.peak_flops * inp.mfu)
    # the 8-layer stage does 8 / (126/16) of the mean stage's work; the 1F1B bubble idles (p-1)/m of it
    # (Narayanan et al. 2021, §2.2.1) [arxiv-2104.04473]
    np.testing.assert_allclose(t["compute_s"], even * 16 * 8 / 126, rtol=1e-12)
    np.testing.assert_allclose(t["bubble_s"], t["compute_s"] * 15 / t["microbatches"], rtol=1e-12)
    # send/receive per stage boundary, unchanged by the stages' sizes (Narayanan et al. 2021, §4.1)
    np.testing.assert_allclose(t["pp_comm_s"], network.pipeline_comm_s(
        1, 8192, plan.model.hidden, t["microbatches"], 8, 16, inp.scale_out_gb_per_s, inp.act_bytes), rtol=1e-12)
    # the busiest stage's gradients: 8/126 of the trainable parameters over TP 8, 2 B each
    np.testing.assert_allclose(t["allreduce_gb"], inp.grad_params * 8 / 126 / 8 * 2 / 1e9, rtol=1e-12)
    total = t["compute_s"] + t["bubble_s"] + t["tp_comm_s"] + t["pp_comm_s"] + t["dp_exposed_s"]
    np.testing.assert_allclose(total, t["step_time_s"])


def test_step_time_with_stages_that_divide_the_layers_is_unchanged():
    # invariant: with PP dividing the layers every stage holds L/p layers and does the mean stage's work, to the
    # last bit: compute at the plan's MFU spread over all GPUs, TP all-reduces of L/p layers (Shoeybi et al. 2019,
    # §3) [arxiv-1909.08053], gradients P / (t p) (Transformer Math 101, "3D Parallelism")
    # [eleuther-transformer-math-101]
    plan, result = _describe(PRETRAIN)
    inp = parallel.inputs(plan, result, 256)
    grid = parallel.enumerate_layouts(256, inp)
    assert set(grid["pp"].tolist()) == {1, 2, 4, 8, 16, 32}  # llama-2-7b: 32 layers
    tp, pp, dp, zero, mb, rc = (grid[k] for k in ("tp", "pp", "dp", "zero", "mb", "rc"))
    t = parallel.step_time_table(inp, tp, pp, dp, zero, mb, rc)
    gpus = tp * pp * dp
    factor = np.asarray(inp.flops_factors)[rc]
    assert (t["compute_s"] == inp.train_flops_per_token * inp.tokens_per_step * factor
            / (gpus * inp.peak_flops * inp.mfu)).all()
    micro = np.ceil(inp.batch_seqs / (dp * mb))
    assert (t["tp_comm_s"] == collectives.tensor_parallel_comm_s(
        mb, inp.seq_len, inp.hidden, inp.layers / pp, micro, tp, inp.scale_up_gb_per_s, inp.act_bytes,
        rc == 2)).all()
    assert (t["allreduce_gb"] == network.gradient_allreduce_gb(inp.grad_params, tp, pp, inp.grad_bytes, zero)).all()


# --- properties ----------------------------------------------------------------------------

radix = st.sampled_from([16, 32, 64, 128])
oversub = st.sampled_from([1.0, 2.0, 3.0])
rails_ = st.sampled_from([1, 4, 8])


@given(radix, oversub, rails_, st.integers(1, 300_000), st.integers(0, 300_000))
def test_fabric_switch_counts_never_fall(k, o, r, n, extra):
    a = network.fabric(n, k, o, r)
    b = network.fabric(n + extra, k, o, r)
    for key in ("leaf_switches", "spine_switches", "core_switches", "switches", "cables", "transceivers"):
        assert b[key] >= a[key], key


@given(radix, oversub, rails_, st.integers(1, 300_000))
def test_transceivers_serve_the_ports_in_use(k, o, r, n):
    """Switch-side cages: at least half the switch ports the cables use, at most every cage of every switch."""
    f = network.fabric(n, k, o, r)
    used = f["cables_node_leaf"] + 2 * (f["cables_leaf_spine"] + f["cables_spine_core"])
    assert -(-used // 2) <= f["transceivers_switch"] <= f["switches"] * (k // 2)


def test_a_partly_used_switch_needs_optics_only_for_its_used_ports():
    # derived: 4 servers of 8 NICs on one 64-port leaf use 32 ports, 16 twin-port cages (not its 32)
    f = network.fabric(32, 64, 1.0, 8, 0, 4, 8)
    assert (f["switches"], f["transceivers_switch"], f["transceivers_node"]) == (1, 16, 16)


@given(st.floats(1e-3, 1e7), st.floats(1e-3, 1e7), st.floats(1e-2, 1e9) | st.just(math.inf), st.floats(0, 1e6))
def test_goodput_in_unit_interval(tau, delta, mtbf, restart):
    g = float(reliability.goodput(tau, delta, mtbf, restart))
    assert 0 < g <= 1


@given(st.floats(1e-2, 1e5), st.floats(1.0, 1e8), st.floats(1.0001, 100.0))
def test_checkpoint_interval_rises_with_mtbf(delta, mtbf, factor):
    for f in (reliability.young_interval_s, reliability.daly_interval_s):
        assert f(delta, mtbf * factor) >= f(delta, mtbf)
    if mtbf > 2 * delta:  # Daly's formula in its range: strictly rising
        assert reliability.daly_interval_s(delta, mtbf * factor) > reliability.daly_interval_s(delta, mtbf)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["llama-2-7b", "llama-3.1-70b", "mixtral-8x7b"]),
       st.sampled_from(["a100-80gb", "h100-sxm", "h200"]), st.integers(1, 64))
def test_proposed_layout_always_fits(model_id, gpu, nodes):
    plan = {"model": model_id, "workload": {"kind": "pretrain", "tokens": 1e12, "seq_len": 4096},
            "cluster": {"gpu": gpu, "gpus": 8 * nodes}}
    plan_obj, result = _describe(plan)
    result.add(layout(plan_obj, result))
    c = result["cluster"]
    usable = model.usable_memory_gb(plan_obj.gpu.capacity_gb, plan_obj.cluster["usable_memory_fraction"])
    if c["fits"]:
        mem = model.training_memory(plan_obj, c["tensor_parallel"], c["pipeline_parallel"], c["data_parallel"],
                                    c["zero_stage"], c["micro_batch"], c["recompute"])
        assert float(mem["per_gpu_gb"]) <= usable
        assert c["tensor_parallel"] * c["pipeline_parallel"] * c["data_parallel"] == 8 * nodes
        assert plan_obj.model.heads % c["tensor_parallel"] == 0
        assert c["pipeline_parallel"] in parallel.pipeline_degrees(plan_obj.model.layers)
    else:
        assert c["fit_hint"]
    for cand in c["candidates"]:
        assert cand["fits"] == (cand["per_gpu_gb"] <= usable)


def test_step_runs_on_described_result():
    plan, result = _describe(PRETRAIN)
    result.add(layout(plan, result))
    result.add(*model.step(plan, result))
    result.add(*step(plan, result))
    assert result["reliability"]["goodput"] > 0.5
