"""Training calibration: constants reproducible from the data, fit and check kept apart by the data
vintage, the model's structure (precision, memory bandwidth, Blackwell Ultra, MoE, strong scaling,
QLoRA) and the validation targets of the issue, per segment."""

from __future__ import annotations

import copy
import csv
import math
import subprocess
import sys

import numpy as np
import pytest
from conftest import PRETRAIN, ROOT, make_plan

from aiplan import evaluate, findings, load_catalog, load_plan, uncertainty
from aiplan import model as M
from aiplan.calibration import training as T
from aiplan.calibration.validation import (
    SEGMENT_MAX_MEDIAN_PCT,
    SEGMENT_MIN_CASES,
    segment_summary,
    validation_rows,
    validation_summary,
)
from aiplan.core.catalog import parse_date


@pytest.fixture(scope="module")
def cases(catalog):
    return T.training_cases(catalog)


@pytest.fixture(scope="module")
def summary():
    return {(s["set"], s["role"]): s for s in validation_summary(validation_rows())}


def test_committed_constants_equal_a_refit():
    """tools/calibrate.py refits every constant from data/calibration in one command."""
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "calibrate.py"), "--check"], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.slow
def test_committed_leave_one_source_out_predictions_equal_a_refit():
    """serving_loo.csv (each fit case predicted without its source, the serving band's basis) is what a refit of the
    committed code and data writes: `tools/calibrate.py --check --loo` refits without each source in turn."""
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "calibrate.py"), "--check", "--loo"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_check_cases_are_never_fitting_data(cases, catalog):
    """Changing every check case's published figure changes no fitted constant."""
    fitted = T._fit(cases, catalog)
    scrambled = [dict(c, published=c["published"] * 3.0) if c["role"] == "check" else c for c in cases]
    assert T._fit(scrambled, catalog) == fitted
    # and the fit cases do move it (the test above could not pass by ignoring everything)
    moved = [dict(c, published=c["published"] * 3.0) if c["role"] == "fit" and c["kind"] == "run" else c
             for c in cases]
    assert T._fit(moved, catalog)["overhead"] == pytest.approx(3.0 * fitted["overhead"])


def _read(name):
    with open(ROOT / "data" / "calibration" / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_roles_follow_the_data_vintage(catalog):
    """Results published before FIT_PUBLISHED_BEFORE fit, later ones only check (MLPerf Training up
    to v5.1 fit, v6.0 check; runs by their publication date; tables by their source's date)."""
    vintage = parse_date(M.efficiency.FIT_PUBLISHED_BEFORE)

    def fit_by_date(text):
        return parse_date(text) < vintage

    for row in _read("mlperf_training.csv"):
        repo = next(s for s in row["sources"].split(";") if "training-results" in s)
        assert (row["role"] == "fit") == fit_by_date(catalog.sources[repo].date), row["id"]
    for row in _read("training_runs.csv"):
        assert (row["role"] == "fit") == fit_by_date(row["published"]), row["id"]
    for name in ("training_throughput.csv", "training_qlora.csv"):
        for row in _read(name):
            assert row["role"] == "fit" and fit_by_date(catalog.sources[row["sources"].split(";")[0]].date), row["id"]
    rounds = {row["round"]: row["role"] for row in _read("mlperf_training.csv")}
    assert rounds == {"v4.0": "fit", "v4.1": "fit", "v5.0": "fit", "v5.1": "fit", "v6.0": "check"}


def test_lora_counts_four_n_plus_attention():
    """LoRA skips the weight gradients of the frozen weights: 2N forward + 2N activation gradients
    (Hu et al. 2021, LoRA §4) [arxiv-2106.09685]."""
    full = evaluate(make_plan({**PRETRAIN, "workload": {"kind": "finetune", "method": "full", "tokens": 1e9,
                                                         "seq_len": 4096}}))["model"]
    lora = evaluate(make_plan({**PRETRAIN, "workload": {"kind": "finetune", "method": "lora", "tokens": 1e9,
                                                         "seq_len": 4096}}))["model"]
    assert lora["flops_per_token"] == pytest.approx(full["flops_per_token"] - 2.0 * full["active_params"])
    assert lora["flops_per_token"] == pytest.approx(4.0 * full["active_params"] + lora["attention_flops_per_token"])


def _compute(gpu, precision="bf16", kind="pretrain", method="full", model="llama-2-70b", gpus=64):
    workload = {"kind": kind, "tokens": 1e11, "seq_len": 4096, "precision": precision}
    if kind == "finetune":
        workload["method"] = method
    return evaluate(make_plan({**PRETRAIN, "model": model, "workload": workload,
                               "cluster": {"gpu": gpu, "gpus": gpus}}))["compute"]


def _days(*args, **kwargs):
    return _compute(*args, **kwargs)["wall_clock_days_no_failures"]


def test_fp8_speed_up_is_calibrated_not_the_peak_ratio():
    """fp8 on H100 is faster than bf16, by less than the 2x of the peaks (the issue: the kit gave
    fp8 its peak at the bf16 MFU); the steady-state gain is the fitted one per doubling of the peak,
    which grows with the GPU's memory bandwidth against its compute."""
    speed_up = _days("h100-sxm", "bf16") / _days("h100-sxm", "fp8")
    k, gpu = M.efficiency.training_constants(), load_catalog().gpus["h100-sxm"]
    gain = math.exp(k["low_precision.hopper"] + k["precision_bandwidth"] * math.log(gpu.memory_bw_gb_per_s /
                                                                                    gpu.bf16_tflops))
    assert 1.0 < speed_up < gain < 2.0  # the per-step fixed time does not speed up with the precision
    steady = {p: _compute("h100-sxm", p)["mfu_steady"] * M.peak_flops_per_s(gpu, p) for p in ("bf16", "fp8")}
    assert steady["fp8"] / steady["bf16"] == pytest.approx(gain, rel=1e-9)


def test_memory_bandwidth_buys_speed_where_published_results_show_it(cases):
    """MLPerf Training v4.1, Llama 2 70B LoRA on 8 GPUs in FP8 (NVIDIA's own submissions): H200 27.928 ->
    24.035 min against H100 (T049, T069) [mlcommons-training-results-v4.1]. The kit puts H200 ahead of
    H100 in FP8, by about that much; no result before 2026 compares them in BF16, where they differ only
    by the per-step fixed costs."""
    published = 27.928 / 24.035
    kit = _days("h100-sxm", "fp8", "finetune", "lora") / _days("h200", "fp8", "finetune", "lora")
    assert kit == pytest.approx(published, rel=0.10)
    assert _days("h200", "fp8") < _days("h100-sxm", "fp8")
    assert _days("h200") == pytest.approx(_days("h100-sxm"), rel=0.01)


def test_blackwell_ultra_is_fitted_not_borrowed(catalog):
    """GB300 and B300 have published results before 2026 (MLPerf Training v5.1, Megatron-Bridge 25.11), so
    their family has its own fitted intercept; Megatron-Bridge 25.11 measures GB300 at 1.05-1.25x GB200 at
    the same precision (e.g. Llama 3 8B FP8: 37,556 against 31,508 tokens/s per GPU)
    [nvidia-megatron-bridge-perf-summary-25.11]."""
    judged = T.training_judgements()
    assert not {"b300", "gb300", "mi355x", "mi350x"} & set(judged)
    assert "intercept.blackwell-ultra" in M.efficiency.training_constants()
    ratio = _days("gb200", "fp8", gpus=72) / _days("gb300", "fp8", gpus=72)
    assert 1.05 < ratio < 1.30


def test_strong_scaling_has_a_floor(cases):
    """MLPerf Training v5.1, Llama 3.1 8B at a global batch of 64 x 8,192 tokens: GB300 on 72 GPUs 12.750 min
    (C092), on 512 GPUs 5.164 min (C094) [mlcommons-training-results-v5.1]: 7.1x the GPUs, 2.5x faster. The
    steady-state MFU alone predicts about 6x; with the per-step fixed costs the kit gives about 3x (its
    one depth constant for every GPU but Hopper leaves the 512-GPU run 19% too fast)."""
    by_id = {c["id"]: c for c in cases}
    constants = M.efficiency.training_constants()
    no_floor = {**constants, "step_dp_exposed": 0.0, "step_depth_s.hopper": 0.0, "step_depth_s.other": 0.0}
    catalog = load_catalog()

    def speed_up(k):
        return T.predict(by_id["C092"], k, catalog) / T.predict(by_id["C094"], k, catalog)

    published = 12.750 / 5.164
    assert speed_up(no_floor) > 2.0 * published
    assert speed_up(constants) == pytest.approx(published, rel=0.30)


def test_adding_gpus_to_a_small_model_stops_paying():
    """A small model at a small global batch: each doubling of GPUs saves less, and beyond
    compute.scaling_limit_gpus a doubling saves less than a quarter of the time."""
    plan = make_plan({**PRETRAIN, "model": "llama-3.1-8b", "workload": {
        "kind": "pretrain", "tokens": 1e11, "seq_len": 8192, "precision": "fp8", "global_batch_tokens": 524288},
        "cluster": {"gpu": "gb200", "gpus": 72}})
    limit = evaluate(plan)["compute"]["scaling_limit_gpus"]
    assert limit is not None and 72 < limit < 4096
    days = []
    for gpus in (limit // 2, limit, 2 * limit):
        plan["cluster"]["gpus"] = gpus
        days.append(evaluate(plan)["compute"]["wall_clock_days_no_failures"])
    assert days[1] / days[0] < 0.75  # a doubling up to the limit still saves more than a quarter
    assert days[2] / days[1] > 0.75  # beyond it, less


def test_qlora_pays_for_dequantisation():
    """QLoRA takes longer than LoRA: LitGPT on one A100 40GB, Llama 2 7B, micro-batch 1: 7.062 (LoRA) against
    4.529 samples/s (QLoRA nf4) [litgpt-resource-tables-2023-10]; the kit's fitted dequantisation cost
    reproduces the pair within 10%, and a 405B QLoRA fine-tune takes longer than the LoRA one."""
    pair = next(c for c in T.qlora_cases(load_catalog()) if c["id"] == "Q28")
    predicted = T.predict(pair, M.efficiency.training_constants(), load_catalog())
    assert predicted == pytest.approx(1 / 4.529, rel=0.10)
    lora, qlora = (_compute("h100-sxm", "bf16", "finetune", m, "llama-3.1-405b") for m in ("lora", "qlora"))
    assert qlora["wall_clock_days_no_failures"] > lora["wall_clock_days_no_failures"]
    assert qlora["qlora_dequant_s"] > 0 and lora["qlora_dequant_s"] is None


def test_largest_expert_is_the_largest_fitted(cases):
    """The expert-size gain stops at the largest routed expert among the fit cases (Grok-1's gated MLP,
    3 x 6,144 x 32,768 in xAI's released code), so no plan is extrapolated beyond the data."""
    fitted = [c["expert"] for c in cases if c["role"] == "fit"]
    assert max(fitted) == M.efficiency.EXPERT_LARGEST_FITTED_PARAMS == 3 * 6144 * 32768
    assert sum(e > M.efficiency.EXPERT_HINGE_PARAMS for e in fitted) >= 20  # DeepSeek-V3, Llama 4, Grok-1 rows


def test_large_experts_run_closer_to_a_dense_model(catalog):
    """MoE efficiency grows with the size of one expert, from the hinge to Grok-1's, and a mixture never
    runs faster than the dense model of its active size; an unknown size pays the whole MoE cost."""
    gpu = catalog.gpus["gb200"]

    def mfu(moe, expert):
        return float(M.steady_mfu_bf16(gpu, "bf16", 3e10, moe, 256, "full", catalog, expert_params=expert))

    small, deepseek, grok, beyond = (mfu(True, e) for e in (5e6, 3 * 7168 * 2048, 3 * 6144 * 32768, 1e10))
    assert mfu(True, 0.0) == small < deepseek < grok == beyond <= mfu(False, 0.0)


def test_a_plan_passes_its_experts_size(catalog):
    """A training plan's efficiency uses the size of its model's experts (Mixtral 8x7B: 3 x 4,096 x 14,336,
    Jiang et al. 2024, Table 1)."""
    plan = load_plan(make_plan(PRETRAIN, model="mixtral-8x7b", cluster={"gpu": "h100-sxm", "gpus": 256}))
    counts = M.params.plan_param_counts(plan)
    assert counts["params_per_expert"] == 3 * 4096 * 14336
    steady = M.efficiency.plan_step(plan, 256)["mfu_steady"]
    args = (plan.gpu, plan.workload["precision"], counts["active_params"], True, 256, "full", catalog)
    assert steady == pytest.approx(M.efficiency.calibrated_mfu(*args, expert_params=3 * 4096 * 14336))
    assert steady > M.efficiency.calibrated_mfu(*args)


def test_mfu_falls_at_scale(catalog):
    gpu = catalog.gpus["h100-sxm"]
    small, large = (float(M.steady_mfu_bf16(gpu, "bf16", 7e10, False, g, "full")) for g in (256, 16384))
    assert large < small


def test_every_catalog_gpu_has_a_training_efficiency(catalog):
    """Fitted families, or a documented judgement (data/calibration/training_judgements.csv)."""
    for gpu in catalog.gpus.values():
        mfu = float(M.steady_mfu_bf16(gpu, "bf16", 7e10, False, 1024, "full", catalog))
        assert 0.05 < mfu < 0.9, (gpu.id, mfu)


def test_band_holds_about_eight_in_ten_published_runs(summary):
    """The P10-P90 prediction interval comes from the leave-one-source-out errors, so about 80% of the
    fitted runs fall inside it when each is predicted without its own source."""
    fit = summary[("Training GPU-hours", "fit")]
    assert 0.70 <= fit["inside_band_loo"] <= 0.90


def test_training_gpu_hours_out_of_source(summary):
    """Runs published before 2026, each predicted with its own source left out of the fit: median error
    within the issue's 15%."""
    fit = summary[("Training GPU-hours", "fit")]
    assert fit["cases"] >= 35 and fit["median_error_loo_pct"] <= 15.0


@pytest.mark.xfail(strict=True, reason="four published 2026 runs with GPU-hours (Olmo Hybrid and Kolibri-1 on B200, "
                                       "Trinity Large and CloverLM on B300): 23% median, three inside the band (issue "
                                       "target: 15%, 85%)")
def test_training_gpu_hours_targets_on_runs_the_kit_was_not_fitted_to(summary):
    """Issue target: median error <= 15% and >= 85% inside the band on runs published in 2026."""
    check = summary[("Training GPU-hours", "check")]
    assert check["median_error_pct"] <= 15.0 and check["inside_band"] >= 0.85


def test_blackwell_run_finding_quotes_the_check():
    """The finding blackwell-runs-slower quotes the 2026 runs on Blackwell as `aiplan validate` predicts them
    (published over predicted GPU-hours: lowest, median, highest); it must change when they do."""
    catalog = load_catalog()
    ratios = [1.0 / (1.0 + r["error_pct"] / 100.0) for r in validation_rows()
              if r["kind"] == "run" and r["role"] == "check"
              and catalog.gpus[r["gpu"]].family in findings.BLACKWELL_FAMILIES]
    quoted = findings.BLACKWELL_RUN_SLOWDOWN
    assert len(ratios) == quoted["runs"]
    assert (min(ratios), float(np.median(ratios)), max(ratios)) == pytest.approx(
        (quoted["low"], quoted["median"], quoted["high"]), abs=0.005)
    assert quoted["longer"] == sum(r > 1.0 for r in ratios)


def test_mlperf_time_to_train_target_on_rounds_the_kit_was_not_fitted_to(summary):
    """Issue target on MLPerf Training v6.0 (2026, never fitted): median error <= 20%, >= 60% within +-25%."""
    check = summary[("MLPerf Training time-to-train", "check")]
    assert check["cases"] >= 12
    assert check["median_error_pct"] <= 20.0 and check["within_25"] >= 0.60


def test_no_segment_is_far_off():
    """aiplan validate by segment (GPU family, precision, model size, scale): no segment of five or more
    cases of the run time, MLPerf time-to-train or steady-state MFU misses by more than 30% in median
    (fitted cases with their own source left out); the segments are in every validation row."""
    rows = validation_rows()
    assert all(r["segment"] for r in rows if r["kind"] in ("run", "mlperf", "steady"))
    far = [s for s in segment_summary(rows)
           if s["set"] in ("Training GPU-hours", "MLPerf Training time-to-train", "Steady-state MFU")
           and s["with_error"] >= SEGMENT_MIN_CASES and s["median_error_pct"] > SEGMENT_MAX_MEDIAN_PCT]
    assert not far, far


def test_amd_training_is_fitted_not_borrowed(catalog):
    """MI300X, MI325X, MI355X and MI350X have published training results before 2026, so their families are
    fitted (no judgement row); a GPU with less board power per unit of peak sustains less of it."""
    judged = T.training_judgements()
    assert not {"mi300x", "mi325x", "mi355x", "mi350x"} & set(judged)
    mi300x, mi325x = (float(M.steady_mfu_bf16(catalog.gpus[g], "bf16", 7e10, False, 8, "full")) for g in
                      ("mi300x", "mi325x"))
    assert M.efficiency.training_constants()["power"] > 0 and mi325x > mi300x  # 1,000 W against 750 W


def test_mlperf_time_to_train_out_of_source(summary):
    """MLPerf Training v4.0-v5.1, each predicted with its own round left out of the fit."""
    assert summary[("MLPerf Training time-to-train", "fit")]["median_error_loo_pct"] <= 20.0


def test_monte_carlo_median_is_the_point_figure_and_the_band_its_p10_p90():
    r = evaluate(make_plan(copy.deepcopy(PRETRAIN)))
    c = r["compute"]
    assert c["wall_clock_days_p50"] == pytest.approx(c["wall_clock_days"], rel=0.02)
    # the efficiency band alone (GPU-hours at the P10/P90 MFU, with the mean failure loss) is within
    # 3% of the simulated band, which adds Poisson interruptions around that mean
    to_days = r["reliability"]["goodput"] * c["gpus"] * 24
    assert c["wall_clock_days_p10"] == pytest.approx(c["gpu_hours_low"] / to_days, rel=0.03)
    assert c["wall_clock_days_p90"] == pytest.approx(c["gpu_hours_high"] / to_days, rel=0.03)
    assert (c["days_low"], c["days_high"]) == (c["wall_clock_days_p10"], c["wall_clock_days_p90"])
    assert r["cost"]["run_usd_p10"] < r["cost"]["run_usd_p50"] < r["cost"]["run_usd_p90"]


def test_split_normal_has_the_calibrated_percentiles():
    z = np.random.default_rng(1).standard_normal(400_000)
    r = uncertainty.efficiency_log_errors(z, -0.3, 0.4)
    assert np.percentile(r, [10, 50, 90]) == pytest.approx([-0.3, 0.0, 0.4], abs=0.005)


def test_deadline_probability_rises_with_gpus():
    base = make_plan({**PRETRAIN, "cluster": {"gpu": "a100-80gb", "gpus": 256, "deadline_days": 40}})
    probabilities = []
    for gpus in (192, 256, 384):
        plan = copy.deepcopy(base)
        plan["cluster"]["gpus"] = gpus
        probabilities.append(evaluate(plan)["compute"]["deadline_probability"])
    assert probabilities == sorted(probabilities) and probabilities[0] < probabilities[-1]


@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.9])
def test_deadline_confidence_sizes_the_gpus_for_those_odds(confidence):
    """Sizing for a confidence gives about that chance of meeting the deadline in the Monte Carlo."""
    plan = make_plan({**PRETRAIN, "model": "llama-2-70b", "cluster": {"gpu": "h100-sxm", "deadline_days": 30,
                                                                      "deadline_confidence": confidence}})
    r = evaluate(plan)["compute"]
    assert r["deadline_probability"] == pytest.approx(confidence, abs=0.04)


def test_the_gpus_for_a_90_percent_chance_give_that_chance():
    """compute.deadline_gpus_p90 (sizing at the band's quantile) checked by the Monte Carlo at that count."""
    plan = make_plan({**PRETRAIN, "model": "llama-2-70b", "cluster": {"gpu": "h100-sxm", "deadline_days": 30}})
    r = evaluate(plan)
    sure = r["compute"]["deadline_gpus_p90"]
    assert sure > r["cluster"]["gpus"] and sure % 8 == 0  # whole servers
    plan["cluster"]["gpus"] = sure
    assert evaluate(plan)["compute"]["deadline_probability"] == pytest.approx(0.9, abs=0.04)


def test_no_deadline_no_gpus_for_odds():
    assert evaluate(PRETRAIN)["compute"].get("deadline_gpus_p90") is None
