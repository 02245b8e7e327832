"""The serving model: formulas on hand-computed and published cases, engine properties, plans, the fit and its check."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from conftest import INFERENCE, make_plan
from numpy.testing import assert_allclose

from aiplan import evaluate, findings, load_plan
from aiplan.calibration import serving as cal
from aiplan.calibration.validation import SEGMENT_MAX_PCT, SEGMENT_MIN_CASES, serving_segments
from aiplan.core.errors import PlanError
from aiplan.model import inference as I
from aiplan.model import serving as S
from aiplan.model.params import model_param_counts


@pytest.fixture(scope="module")
def constants():
    return S.serving_constants()


def _precisions(w="fp8", kv="fp8", **parts):
    return {"attention": parts.get("attention", w), "dense": parts.get("dense", w), "experts": parts.get("experts", w),
            "head": parts.get("head", "bf16"), "kv": kv, "activation": parts.get("activation")}


def _engine(catalog, constants, model="llama-2-70b", gpu="h100-sxm", lay=(1, 1, 1, 1), n=1, prompt=1000, output=250,
            precisions=None, **kw):
    m = catalog.models[model]
    s = S.serving_inputs(m, model_param_counts(m), catalog.gpus[gpu], precisions or _precisions(), prompt, output,
                         0.9, **kw)
    rows = S.stack_inputs([s] * n)
    layout = {key: np.full(n, float(v)) for key, v in zip(("tp", "dp", "ep", "pp"), lay)}
    return S.Engine(rows, S.constants_for(constants, rows["family"]), layout)


# --- formulas, hand-computed or published -------------------------------------------------------------


def test_kv_batch_limit_hand_case():
    # 60 GB of KV room, 163,840 B/token (Llama 2 70B, fp8 KV), 1,000 tokens a sequence: 366 sequences
    assert I.kv_batch_limit(60.0, 163_840, 1000) == math.floor(60e9 / 163_840e3)
    assert I.kv_capacity_gb(72.0, 80.0) == 0.0


def test_prefill_queue_md1_and_its_tail():
    # M/D/1: rho = 0.5, S = 1 s -> W = 0.5 x 1 / (2 x 0.5) = 0.5 s (Pollaczek-Khinchine)
    # [kleinrock-1975-queueing-systems]
    assert_allclose(I.prefill_wait_s(0.5, 1.0), 0.5)
    assert I.prefill_wait_s(1.0, 1.0) == np.inf
    # exponential tail: t_99 = (W / rho) ln(rho / 0.01) = 1 x ln 50
    assert_allclose(I.wait_quantile_s(0.5, 0.5, 0.99), math.log(50))
    assert I.wait_quantile_s(0.5, 0.005, 0.99) == 0.0


@pytest.mark.parametrize("drafts,accepted", [(1, 1.92), (2, 2.58), (3, 2.82), (4, 2.99), (5, 3.01)])
def test_mtp_acceptance_reproduces_published_accepted_lengths(drafts, accepted):
    # TensorRT-LLM tech blog 1 (DeepSeek-R1 on B200, MTP 1-5): 1.92, 2.58, 2.82, 2.99, 3.01 accepted tokens
    # per step [trtllm-techblog1-b200-latency]; the calibration turns each into a per-token acceptance
    a = cal._acceptance_for(drafts, accepted)
    assert 0 < a < 1
    assert float(I.accepted_tokens_per_step(drafts, a)) == pytest.approx(accepted, rel=1e-6)
    assert float(I.accepted_tokens_per_step(0, a)) == 1.0


def test_absorbed_mla_does_more_attention_work_per_cached_token():
    # DeepSeek-V3 (61 layers, 128 heads, q/k 192, v 128, latent 512 + rope 64): absorbed decode works on
    # 2 x 512 + 64 = 1,088 per head and cached token, against 192 + 128 = 320 without absorption (derived)
    dense = I.attention_core_flops_per_token(61, 128, 192, 128, 1.0)
    absorbed = I.attention_core_flops_per_token(61, 128, 192, 128, 1.0, True, 512, 64)
    assert float(absorbed / dense) == pytest.approx(1088 / 320)


def test_prefill_share_hand_case():
    # 16 sequences of 8,192-in / 1,024-out, chunk 8,192: 16 x 8 = 128 prompt tokens a step, one chunk in 64 steps
    assert float(I.prefill_step_share(16, 8192, 1024, 8192)) == pytest.approx(1 / 64)
    assert float(I.prefill_step_share(4096, 8192, 1024, 8192)) == 1.0


# --- memory in the unit the vendor meant -------------------------------------------------------------


def test_gpu_capacity_is_the_driver_total_where_cited(catalog):
    # nvidia-smi totals: H100 81,559 MiB [modal-client-pr-2797], B200 183,359 MiB [nvidia-trtllm-issue-10278],
    # B300 275,040 MiB [nvidia-trtllm-issue-12651]
    for gpu, mib in (("h100-sxm", 81559), ("b200", 183359), ("b300", 275040)):
        assert catalog.gpus[gpu].capacity_gb == pytest.approx(mib * 2**20 / 1e9)
    # the H200's "141 GB" is binary: 151.4 GB, not 141 (issue 23: the driver reports 150.8 GB)
    assert catalog.gpus["h200"].capacity_gb == pytest.approx(141 * 2**30 / 1e9)


def test_deepseek_r1_fp8_fits_on_four_b200():
    # a published configuration (issue 23) the decimal reading declared not to fit: 671B FP8 weights on 4 B200
    # (168 GB a GPU at TP4 of 173 usable; at 180 decimal GB x 0.9 = 162 it did not)
    plan = load_plan(make_plan(INFERENCE, model="deepseek-r1", cluster={"gpu": "b200", "tensor_parallel": 4,
                                                                        "attention_data_parallel": 1,
                                                                        "pipeline_parallel": 1}))
    r = evaluate(plan)
    assert r["memory"]["fits"] and r["inference"]["gpus_per_replica"] == 4
    assert r["memory"]["per_gpu_gb"] > 180 * 0.9


# --- precision per part ---------------------------------------------------------------------------------


def test_gpt_oss_serves_its_published_checkpoint_format(catalog):
    """MXFP4 experts, BF16 attention, embeddings and head by default [openai-gpt-oss-readme]; on Hopper the 4-bit
    experts are weight-only and multiply at BF16 speed, on Blackwell at the FP4 rate."""
    plan = load_plan(make_plan(INFERENCE, model="gpt-oss-120b"))
    w = plan.workload
    assert (w["weight_precision"], w["expert_precision"], w["attention_precision"], w["embedding_precision"]) == \
        ("fp4", "fp4", "bf16", "bf16")
    assert S.compute_precision(catalog.gpus["h100-sxm"], "fp4") == "bf16"
    assert S.compute_precision(catalog.gpus["b200"], "fp4") == "fp4"
    assert S.compute_precision(catalog.gpus["h100-sxm"], "fp4", "fp8") == "fp8"  # W4A8
    assert S.compute_precision(catalog.gpus["h100-sxm"], "int4") == "bf16"


def test_gpt_oss_120b_fits_one_80gb_gpu():
    # "gpt-oss-120b ... fits into a single 80GB GPU" with its MXFP4 MoE weights [openai-gpt-oss-readme]
    r = evaluate(make_plan(INFERENCE, model="gpt-oss-120b", cluster={"gpu": "h100-sxm", "tensor_parallel": 1}))
    assert r["memory"]["fits"]
    assert r["inference"]["weights_gb"] < 80


def test_fp4_activations_need_fp4_tensor_cores():
    with pytest.raises(PlanError, match="fp4 needs a GPU with FP4"):
        load_plan(make_plan(INFERENCE, workload={"activation_precision": "fp4"}))
    load_plan(make_plan(INFERENCE, workload={"weight_precision": "fp4"}))  # weight-only on H100: allowed


def test_deepseek_fp8_checkpoint_keeps_bf16_embeddings(catalog):
    plan = load_plan(make_plan(INFERENCE, model="deepseek-r1"))
    assert plan.workload["expert_precision"] == "fp8" and plan.workload["embedding_precision"] == "bf16"
    assert plan.workload["speculative_method"] == "mtp"  # DeepSeek ships one MTP module [deepseek-v3-readme]


# --- engine properties ------------------------------------------------------------------------------------


def test_tensor_parallel_beyond_nvlink_runs_over_pcie_within_a_server(catalog):
    """GPUs of one PCIe server beyond their NVLink domain exchange activations over PCIe, not the NICs:
    four L40S (no NVLink, PCIe 4.0 x16: 64 GB/s both ways [nvidia-l40s-page]) at 32 GB/s each way;
    eight H100 PCIe at the NVLink bridge within a pair, PCIe 5.0 x16 across pairs (about 63 GB/s each
    way [pci-sig-pcie-base-5.0]), their NIC share only beyond the server."""
    def link(gpu_id, ranks, node=8):
        g = catalog.gpus[gpu_id]
        m = catalog.models["llama-2-70b"]
        s = S.serving_inputs(m, model_param_counts(m), g, _precisions(), 1000, 250, 0.9, gpus_per_node=node)
        return S.link_gb_per_s(np.asarray(ranks, dtype=float), s["scale_up_gb_per_s"], s["scale_up_domain"],
                               s["node_gpus"], s["network_gb_per_s"])
    assert link("l40s", [4]).tolist() == [32.0]
    assert link("h100-pcie", [2, 4, 8, 16]).tolist() == [300.0, 63.0, 63.0, 25.0]
    assert link("h100-sxm", [8, 16]).tolist() == [450.0, 50.0]


def test_v41_pcie_cases_carry_the_submitters_layouts(cases):
    """MLPerf v4.1 Llama 2 70B on PCIe cards ran the layouts of the submitters' configs
    (mlcommons/inference_results_v4.1 closed/*/configs/llama2-70b): Lenovo's H100 NVL TP1, ASUSTeK's
    H100 PCIe TP2 (NVIDIA's base config), Fujitsu's L40S TP4."""
    want = {"h100-nvl": (1, 1, 1, 1), "h100-pcie": (2, 1, 1, 1), "l40s": (4, 1, 1, 1)}
    got = {(c["gpu"], c["layout"]) for c in cases if c["round"] == "v4.1" and c["gpu"] in want}
    assert got == set(want.items())


def test_more_batch_longer_step_and_more_throughput(catalog, constants):
    eng = _engine(catalog, constants, gpu="h200", n=6)
    batch = np.array([1.0, 8, 32, 128, 256, 512])
    st = eng.steps(batch)
    assert np.all(np.diff(st["tpot_s"]) > 0) and np.all(np.diff(batch / st["tpot_s"]) > 0)


def test_a_step_at_batch_one_takes_at_least_the_weight_read(catalog, constants):
    # Llama 2 70B FP8 on one H100: 69 GB of weights at 3,350 GB/s is 20.6 ms a step (roofline floor)
    eng = _engine(catalog, constants, gpu="h100-sxm", prompt=100, output=100)
    weights = sum(eng.s[f"w_{p}"][0] for p in S.PARTS)
    assert eng.steps(np.ones(1))["decode_s"][0] >= weights / 3350e9


def test_mla_decode_slows_with_context(catalog, constants):
    """Absorbed MLA attention is compute-bound: DeepSeek's step grows with the context (issue 23)."""
    short = _engine(catalog, constants, model="deepseek-r1", gpu="h200", lay=(1, 8, 8, 1), prompt=1000, output=1000)
    long = _engine(catalog, constants, model="deepseek-r1", gpu="h200", lay=(1, 8, 8, 1), prompt=8000, output=1000)
    b = np.full(1, 256.0)
    assert long.steps(b)["decode_s"][0] > 1.1 * short.steps(b)["decode_s"][0]


def test_attention_data_parallel_holds_more_sequences_than_tensor_parallel(catalog, constants):
    """TP copies MLA's latent KV on every rank; attention DP holds each sequence once (issue 23)."""
    memory_only = {**constants, "engine_max_batch": 1e9, "engine_max_batch_dp": 1e9}  # engine limits lifted
    tp8 = _engine(catalog, memory_only, model="deepseek-r1", gpu="h200", lay=(8, 1, 1, 1))
    dep8 = _engine(catalog, memory_only, model="deepseek-r1", gpu="h200", lay=(1, 8, 8, 1))
    b_tp, b_dep = S.batch_limit(tp8.s, tp8.k, tp8.lay)[0], S.batch_limit(dep8.s, dep8.k, dep8.lay)[0]
    # 8 copies of the latent against one; DEP keeps the 17 GB of attention and dense weights on every GPU,
    # so its KV room is a little smaller (derived)
    assert 4 * b_tp < b_dep < 8 * b_tp


def test_a_sequence_is_admitted_only_when_its_full_length_fits(catalog, constants):
    """The batch memory allows holds each sequence's prompt and whole output (TensorRT-LLM's default
    GUARANTEED_NO_EVICT scheduler; calibration step 17), not the mean length: the same prompt with a
    longer output admits fewer sequences, in proportion to the full length."""
    memory_only = {**constants, "engine_max_batch": 1e9, "engine_max_batch_dp": 1e9}
    short, long = (_engine(catalog, memory_only, model="llama-3.1-70b", lay=(8, 1, 1, 1), prompt=1000, output=o)
                   for o in (1000, 3000))
    b_short, b_long = (float(S.batch_limit(e.s, e.k, e.lay)[0]) for e in (short, long))
    assert b_short / b_long == pytest.approx((1000 + 3000) / (1000 + 1000), rel=1e-9)
    cap_gb = float(S.kv_capacity_gb(short.s["usable_gb"], S.weights_gb_per_gpu(short.s, short.lay))[0])
    per_seq_gb = float(S.kv_bytes_per_token_per_gpu(short.s, short.lay)[0]) * 2000 / 1e9
    assert b_short == pytest.approx(cap_gb / per_seq_gb, rel=1e-9)


def test_attention_data_parallel_groups_have_their_own_sequence_limit(catalog, constants):
    """Where memory allows more, a tensor-parallel replica runs ``engine_max_batch`` sequences and a
    replica of 8 attention-DP groups 8 x ``engine_max_batch_dp`` (fitted apart, calibration step 18)."""
    roomy = dict(model="llama-3.1-8b", gpu="b200", prompt=100, output=100)
    tp8 = _engine(catalog, constants, lay=(8, 1, 1, 1), **roomy)
    dep8 = _engine(catalog, constants, model="qwen3-30b-a3b", gpu="b200", lay=(1, 8, 8, 1), prompt=100, output=100)
    assert S.batch_limit(tp8.s, tp8.k, tp8.lay)[0] == pytest.approx(constants["engine_max_batch"])
    assert S.batch_limit(dep8.s, dep8.k, dep8.lay)[0] == pytest.approx(8 * constants["engine_max_batch_dp"])


def test_long_prompts_are_prefilled_in_chunks_not_every_step(catalog, constants):
    """At 4 sequences of 8k-in/1k-out a step carries a prompt chunk only once in 256 steps, so the mean step
    stays within 20% of a decode step (the old model added 32 prompt tokens to every step)."""
    eng = _engine(catalog, constants, model="deepseek-r1", gpu="h200", lay=(1, 8, 8, 1), prompt=8192, output=1024)
    st = eng.steps(np.full(1, 4.0))
    assert st["share"][0] == pytest.approx(4 * 8 / 8192)
    assert st["mean_s"][0] < 1.2 * st["decode_s"][0]


@pytest.mark.parametrize("gpu,w", [("h100-sxm", "fp8"), ("h200", "bf16"), ("b200", "fp4"), ("mi300x", "fp8")])
def test_latency_constrained_at_most_offline(catalog, constants, gpu, w):
    eng = _engine(catalog, constants, model="llama-3.1-70b", gpu=gpu, lay=(2, 1, 1, 1), n=1,
                  precisions=_precisions(w))
    off, slo = S.offline(eng), S.at_slo(eng, 2.0, 0.1)
    assert slo["tokens_per_s"][0] <= off["tokens_per_s"][0] / eng.k["server_load_factor"][0] + 1e-6
    tight = S.at_slo(eng, 2.0, 0.03)
    assert tight["tokens_per_s"][0] <= slo["tokens_per_s"][0] + 1e-9
    assert slo["ttft_p99_s"][0] >= slo["ttft_s"][0]


def test_the_batch_sized_for_the_targets_meets_them(catalog, constants):
    """The batch :func:`at_slo` and :func:`decode_pool` return meets the targets it is the largest batch for, with
    no tolerance: a pool sized and loaded to it meets them (linear interpolation of the margin used to land a
    few parts in 10^5 past the TPOT target, so a loaded pool, one or two, missed a target it was sized for)."""
    n = 24
    eng = _engine(catalog, constants, model="llama-3.1-70b", lay=(8, 1, 1, 1), n=n, prompt=2000, output=500)
    fastest = S.fastest_latencies(eng)["tpot_ms"] / 1e3
    tpot = fastest * np.linspace(1.0, 2.0, n)
    slo = S.at_slo(eng, 2.0, tpot)
    assert (slo["batch"] >= 1).all()
    assert (eng.k["tpot_p99_factor"] * slo["tpot_s"] <= tpot).all()
    assert (slo["ttft_p99_s"] <= 2.0).all()
    dec = S.decode_pool(eng, tpot)
    assert (dec["batch"] >= 1).all() and (dec["tpot_p99_s"] <= tpot).all()
    # the check moves the interpolated batch back by less than a thousandth, not onto a coarser grid point
    loose = S.at_slo(eng, 2.0, tpot, checked=False)["batch"]
    assert (slo["batch"] <= loose).all()
    assert_allclose(slo["batch"], loose, rtol=1e-3)


def test_ttft_p99_is_not_below_the_mean(catalog, constants):
    """The 99th-percentile TTFT of a load is at least its mean, at every batch, for a short and a long prompt
    (the p99 wait is the mean wait plus a fitted excess; the p99 prompt is the longest)."""
    for prompt in (200, 8000):
        eng = _engine(catalog, constants, model="deepseek-r1", gpu="b200", lay=(1, 8, 8, 1), prompt=prompt,
                      output=1000, ttft_prompt_tokens=prompt)
        for batch in (1.0, 16.0, 256.0):
            b = np.full(1, batch)
            st = eng.steps(b)
            assert eng.ttft_s(b, st, quantile=0.99)[0] >= eng.ttft_s(b, st)[0]


def test_ttft_has_a_weight_read_floor(catalog, constants):
    # one 100-token prompt on an idle H100 still reads the 69 GB of FP8 weights once (20.6 ms)
    eng = _engine(catalog, constants, prompt=100, output=100)
    st = eng.steps(np.ones(1))
    assert eng.ttft_s(np.ones(1), st)[0] >= 69e9 / 3350e9


def test_speculative_decoding_shortens_tpot_at_small_batch(catalog, constants):
    plain = _engine(catalog, constants, model="deepseek-r1", gpu="b200", lay=(1, 8, 8, 1), prompt=1024, output=2048,
                    precisions=_precisions("fp8"))
    mtp = _engine(catalog, constants, model="deepseek-r1", gpu="b200", lay=(1, 8, 8, 1), prompt=1024, output=2048,
                  precisions=_precisions("fp8"), speculative_tokens=3, acceptance=cal._acceptance_for(3, 2.82),
                  draft_cost=1 / 61)
    one = np.ones(1)
    assert mtp.steps(one)["tau"][0] == pytest.approx(2.82, rel=1e-6)
    assert mtp.steps(one)["tpot_s"][0] < plain.steps(one)["tpot_s"][0]


# --- one plan ---------------------------------------------------------------------------------------------


def test_plan_result_keys_and_targets():
    r = evaluate(copy.deepcopy(INFERENCE))
    inf = r["inference"]
    for key in ("max_tokens_per_s_per_gpu", "tokens_per_s_per_gpu_at_slo", "ttft_ms", "ttft_ms_mean", "ttft_ms_p99",
                "tpot_ms", "meets_latency", "kv_bytes_per_token", "prefill_tokens_per_s_per_gpu",
                "decode_tokens_per_s_per_gpu", "max_concurrent_sequences", "replicas", "gpus", "layout", "precision",
                "one_pool_gpus", "gpus_per_replica"):
        assert inf[key] is not None, key
    assert inf["ttft_ms"] == inf["ttft_ms_p99"] >= inf["ttft_ms_mean"]
    assert inf["meets_latency"] and inf["ttft_ms"] <= 2000 and inf["tpot_ms"] <= 200
    assert inf["replicas"] * inf["requests_per_s_per_replica"] >= 10
    for target in (60, 40, 10):
        tight = evaluate(make_plan(INFERENCE, workload={"tpot_ms_target": target}))["inference"]
        assert tight["one_pool_gpus"] >= inf["one_pool_gpus"]
        assert tight["tpot_ms"] <= target if tight["meets_latency"] else tight["tokens_per_s_per_gpu_at_slo"] == 0


def test_each_gpu_family_reads_at_its_own_bandwidth_share(constants):
    """Calibration step 16: a family group's memory bandwidth share is its own decode_bw_efficiency row, fitted
    apart from its compute factor and never above the datasheet; a plan reports the share of its GPU."""
    share = {gpu: evaluate(make_plan(INFERENCE, cluster={"gpu": gpu}))["inference"]["memory_bw_fraction"]
             for gpu in ("h100-sxm", "mi300x", "b200")}
    expected = {"h100-sxm": "decode_bw_efficiency", "mi300x": "decode_bw_efficiency.cdna",
                "b200": "decode_bw_efficiency.blackwell"}
    for gpu, name in expected.items():
        assert share[gpu] == pytest.approx(constants[name]) and 0.0 < share[gpu] <= 1.0, gpu


def test_plan_fields_fix_the_layout():
    r = evaluate(make_plan(INFERENCE, model="deepseek-r1", cluster={"gpu": "h200", "tensor_parallel": 1,
                                                                    "attention_data_parallel": 8,
                                                                    "expert_parallel": 8}))
    inf = r["inference"]
    assert inf["layout"] == "DEP8" and inf["gpus_per_replica"] == 8
    assert r["cluster"]["tensor_parallel"] == 1 and r["cluster"]["expert_parallel"] == 8


def test_two_pools_when_the_plan_asks_for_them():
    r = evaluate(make_plan(INFERENCE, cluster={"disaggregated": True}))["inference"]
    assert r["disaggregated"] and r["gpus"] == r["prefill_gpus"] + r["decode_gpus"] == r["two_pool_gpus"]
    assert r["kv_transfer_ms"] > 0
    # the request's latency, the requests in flight (Little's law) and the decode rate are the two pools' own
    rate, output = INFERENCE["workload"]["requests_per_s"], INFERENCE["workload"]["output_tokens"]
    assert r["latency_s"] == pytest.approx(r["ttft_ms_mean"] / 1e3 + output * r["tpot_ms"] / 1e3)
    assert r["requests_in_flight"] == pytest.approx(rate * r["latency_s"])
    assert r["decode_tokens_per_s_per_gpu"] * r["decode_gpus"] == pytest.approx(rate * output)
    one = evaluate(make_plan(INFERENCE, cluster={"disaggregated": False}))["inference"]
    assert not one["disaggregated"] and one["gpus"] == one["one_pool_gpus"]


def test_two_pools_memory_per_gpu_is_the_decode_pools():
    """A two-pool plan's memory per GPU is what one GPU of its decode replicas holds: the weights of the decode
    layout (as a one-pool plan fixed to that layout holds them) and the cache of the decode batch."""
    two = evaluate(make_plan(INFERENCE, model="deepseek-r1", workload={"ttft_ms_target": 1000, "tpot_ms_target": 50},
                             cluster={"gpu": "h200", "disaggregated": True}))
    tp, dp, ep, pp = S.layout_degrees(two["inference"]["decode_layout"])
    fixed = evaluate(make_plan(INFERENCE, model="deepseek-r1", workload={"ttft_ms_target": 1000, "tpot_ms_target": 50},
                               cluster={"gpu": "h200", "disaggregated": False, "tensor_parallel": tp,
                                        "attention_data_parallel": dp, "expert_parallel": ep,
                                        "pipeline_parallel": pp}))
    mem = two["memory"]
    assert two["inference"]["layout"] != two["inference"]["decode_layout"]  # else the check below proves nothing
    assert mem["weights_gb"] == pytest.approx(fixed["memory"]["weights_gb"])
    per_sequence = fixed["memory"]["kv_cache_gb"] / fixed["inference"]["concurrent_sequences"]
    assert mem["kv_cache_gb"] == pytest.approx(two["inference"]["concurrent_sequences"] * per_sequence)
    assert mem["per_gpu_gb"] == pytest.approx(mem["weights_gb"] + mem["kv_cache_gb"]) and mem["fits"]


def test_speculative_decoding_plan_fields():
    base = make_plan(INFERENCE, model="deepseek-r1", workload={"requests_per_s": 1, "tpot_ms_target": 50},
                     cluster={"gpu": "b200", "tensor_parallel": 1, "attention_data_parallel": 8, "expert_parallel": 8,
                              "pipeline_parallel": 1})
    off = evaluate(base)["inference"]
    on = evaluate(make_plan(base, workload={**base["workload"], "speculative_tokens": 2}))["inference"]
    assert off["tokens_per_step"] == 1.0
    assert on["tokens_per_step"] == pytest.approx(float(I.accepted_tokens_per_step(2, 0.7)))
    assert on["tpot_ms"] < off["tpot_ms"]
    assert on["tokens_per_s_per_gpu_at_slo"] > off["tokens_per_s_per_gpu_at_slo"]


def test_serving_capacity_fast_entry_point():
    plan = load_plan(make_plan(INFERENCE, workload={"weight_precision": "fp8", "kv_precision": "fp8"}))
    own = S.serving_capacity(plan)
    assert own["gpu"] == "h100-sxm" and own["supported"] and own["fits"] and own["gpus"] >= 1
    h200 = S.serving_capacity(plan, "h200")
    assert h200["max_tokens_per_s_per_gpu"] > own["max_tokens_per_s_per_gpu"]
    assert S.serving_capacity(plan, "h200", tensor_parallel=4)["tensor_parallel"] == 4


# --- calibration ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cases():
    return cal.serving_cases()


def test_fit_cases_were_published_before_2026(cases):
    """2026 results and results of uncertain date are check cases only; the fit never sees them."""
    for c in cases:
        if c["set"] == "fit":
            assert c["published"] < "2026-01-01" and len(c["published"]) >= 7, c["id"]
    assert all(c["set"] == "check" for c in cases if c["file"] == "serving_check_2026.csv")
    assert all(c["set"] == "fit" for c in cal._fit_cases(cases))
    assert sum(1 for c in cases if c["set"] == "check" and not c["skipped"]) >= 250
    assert all(c["sources"] for c in cases)


def test_leave_one_source_out_file_covers_the_fit_cases(cases):
    """tools/calibrate.py writes each fit case's prediction without its source (serving_loo.csv)."""
    loo = cal.read_loo()
    fit = [c["id"] for c in cal._fit_cases(cases)]
    assert set(fit) <= set(loo)


@pytest.mark.xfail(strict=True, reason="issue 23 target not yet met: MoE segments (check: DeepSeek-R1 offline on "
                   "Blackwell and Blackwell Ultra; fit, leave-one-source-out: DeepSeek on Blackwell and Hopper, Qwen3 "
                   "on Blackwell and Hopper, Llama 4 on Hopper, Mixtral on CDNA 3) and dense Llama on CDNA 3 "
                   "Interactive and CDNA 4 Offline are above 35%; see data/calibration/serving.md. "
                   "strict: the mark must go when the target is met")
def test_serving_segments_within_35_percent():
    """Issue 23: no segment (model family x GPU family x scenario) of five or more cases has a median error
    above 35% (check cases; fit cases with their source left out)."""
    over = [s for s in serving_segments() if s["over"]]
    assert SEGMENT_MIN_CASES == 5 and SEGMENT_MAX_PCT == 35.0
    assert not over, "\n".join(f"{s['set']} {s['model_family']} {s['family']} {s['scenario']}: n={s['n']}, "
                               f"{s['median_abs_error_pct']:.0f}%" for s in over)


@pytest.fixture(scope="module")
def validation(cases):
    return cal.serving_validation(cases, loo=True)


def test_moe_few_sequences_finding_quotes_the_check(validation, catalog):
    """The finding moe-serving-few-sequences quotes the 2026 fixed-concurrency runs as `aiplan validate` predicts
    them (published over predicted output tokens/s: DeepSeek-R1's median, P10 and P90 on six GPU types, gpt-oss-120b's
    median on H100, rounded as the text prints them); it must change when they do."""
    def rows(pick):
        return [r for r in validation["rows"]
                if r["set"] == "check" and r["scenario"] == "concurrency" and pick(r) and cal._usable(r["error_pct"])]

    def ratios(rows_):
        return [1.0 / (1.0 + r["error_pct"] / 100.0) for r in rows_]

    deepseek_rows = rows(lambda r: r["model"] == "deepseek-r1")
    deepseek, gpt_oss = ratios(deepseek_rows), ratios(rows(lambda r: r["model"] == "gpt-oss-120b"
                                                                and r["gpu"] == "h100-sxm"))
    assert len(deepseek) >= 200 and len(gpt_oss) >= 3 and len({r["gpu"] for r in deepseek_rows}) == 6
    quoted = findings.MOE_FEW_SEQUENCES_RATIO
    assert [round(float(x), 1) for x in (np.median(deepseek), np.percentile(deepseek, 10),
                                          np.percentile(deepseek, 90))] == [quoted["median"], quoted["low"],
                                                                            quoted["high"]]
    assert round(float(np.median(gpt_oss))) == quoted["gpt_oss_h100"]
    cdna3 = [r for r in deepseek_rows if catalog.gpus[r["gpu"]].family == findings.SLOWER_FEW_SEQUENCES_FAMILY]
    few = [r for r in cdna3 if int(r["id"].split("-c")[-1].split("-")[0]) <= findings.FEW_SEQUENCES]
    assert len(cdna3) >= 20 and len(few) >= 6
    assert round(float(np.median(ratios(cdna3))), 1) == quoted["cdna3_median"]
    assert round(float(np.median(ratios(few))), 1) == quoted["cdna3_few"]


def test_check_set_summary_printed(capsys, validation):
    v = validation
    s = v["summary"]
    with capsys.disabled():
        c = s["check"]
        print(f"\nserving check (2026): n = {c['n']}, median |error| {c['median_abs_error_pct']:.1f}%, offline "
              f"{c['offline_pct']:.1f}%, online {c['online_pct']:.1f}%, within 25% {c['within_25_share']:.0%}; "
              f"fit LOO {s['loo']['median_abs_error_pct']:.1f}%")
    assert s["check"]["n"] >= 250 and s["fit"]["n"] > 900
    skipped = [r for r in v["rows"] if r["skipped"]]
    assert all(r["predicted_tokens_per_s"] is None for r in skipped)


def test_error_band_skips_zero_and_missing_predictions(tmp_path):
    """A zero or missing leave-one-source-out prediction is skipped and counted, never divided by."""
    def row(set_, err, loo_err, scenario="server"):
        return {"set": set_, "scenario": scenario, "excluded": "", "error_pct": err, "loo_error_pct": loo_err}

    good = [row("check", e, None) for e in (-20.0, 0.0, 25.0)] + [row("fit", None, e) for e in (-10.0, 10.0)]
    bad = [row("fit", None, -100.0),  # a zero prediction: predicted / published = 0
           row("fit", None, None),  # no leave-one-source-out prediction
           row("fit", None, float("nan"))]
    q = cal.error_quantiles(good + bad + [row("fit", None, -100.0, scenario="offline")])
    assert q["n"] == 5 and q["skipped"] == 3 and q["zero"] == 2  # NaN: no finite prediction either
    assert q == pytest.approx(cal.error_quantiles(good) | {"skipped": 3, "zero": 2})
    text = cal.write_error_quantiles(good + bad, tmp_path / "band.csv").read_text(encoding="utf-8")
    assert "3 without a usable prediction skipped (2 zero, 1 missing)" in text
    with pytest.raises(ValueError, match="no usable"):
        cal.error_quantiles(bad)


def test_gpu_ratio_skips_zero_predictions():
    """A zero prediction (no batch meets the latency limits) has no GPU ratio: left out and counted."""
    def row(gpu, err):
        return {"model": "m", "scenario": "server", "precision": "fp8/fp8", "id": f"x-{gpu}-y", "gpu": gpu,
                "error_pct": err}

    rows = [row("h100-sxm", 10.0), row("h200", -100.0), row("b200", 21.0)]
    assert cal.gpu_ratio_error(rows) == pytest.approx(100.0 * (1.0 - 1.10 / 1.21))
    assert cal.unusable_predictions(rows) == 1
