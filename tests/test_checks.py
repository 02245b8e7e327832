"""Checks: every check has a plan/result that triggers it and one that does not."""

from __future__ import annotations

import copy
import csv
import re

import pytest
from conftest import INFERENCE, PRETRAIN, make_plan

from aiplan import evaluate, load_catalog, load_plan
from aiplan.core import units as U
from aiplan.core.assumptions import PIPELINE_BUBBLE_MAX
from aiplan.core.catalog import data_dir
from aiplan.core.fields import format_value as fmt
from aiplan.findings import CHECKS, run_checks
from aiplan.model import layout_words
from aiplan.pipeline import empty_result

H100 = make_plan(PRETRAIN, cluster={"gpu": "h100-sxm", "gpus": 256}, facility={"server": "dgx-h100"},
                 cost={"cloud": "aws-p5.48xlarge"})


def _result(**sections):
    r = empty_result()
    for name, values in sections.items():
        r[name] = {**(r.get(name) or {}), **values}
    return r


def _api(provider, usd_per_mtok):
    """A published API price row as the cost step lists it (``cost.api_prices``)."""
    return {"provider": provider, "offering": "x", "usd_per_mtok_at_plan_mix": usd_per_mtok, "precision": None,
            "as_of": "2026-12-03", "status": "published", "sources": "deepinfra-llama-3.1-70b-turbo"}


def ids(plan, result):
    return {f["id"] for f in run_checks(load_plan(plan), result)}


# (id, plan, result that triggers, plan, result that does not)
CASES = [
    ("model-does-not-fit",
     H100, _result(memory={"fits": False, "per_gpu_gb": 120.0, "gpu_capacity_gb": 80.0}),
     H100, _result(memory={"fits": True})),
    ("mfu-low", make_plan(H100, cluster={"mfu": 0.2}), _result(), make_plan(H100, cluster={"mfu": 0.45}), _result()),
    ("storage-bandwidth-low", H100, _result(storage={"read_gb_per_s": 100.0}, cluster={"gpus": 256}),
     H100, _result(storage={"read_gb_per_s": 256.0}, cluster={"gpus": 256})),
    ("allreduce-bandwidth-low", H100, _result(network={"allreduce_to_compute_ratio": 0.05}),
     H100, _result(network={"allreduce_to_compute_ratio": 0.2})),
    ("rack-density-cooling", make_plan(H100, facility={"cooling": "air"}),
     _result(facility={"rack_kw_actual": 40.8, "cooling_recommended": "rear-door"}),
     make_plan(H100, facility={"cooling": "liquid"}),
     _result(facility={"rack_kw_actual": 40.8, "cooling_recommended": "rear-door"})),
    ("rack-density-beyond-air", H100, _result(facility={"rack_kw_actual": 50.0, "cooling_recommended": "rear-door"}),
     H100, _result(facility={"rack_kw_actual": 20.0, "cooling_recommended": "air"})),
    ("rack-over-budget", make_plan(H100, facility={"rack_kw": 8}), _result(facility={"rack_kw_actual": 10.2}),
     H100, _result(facility={"rack_kw_actual": 30.6})),
    ("floor-loading", H100, _result(facility={"rack_weight_kg": 1400.0}),
     H100, _result(facility={"rack_weight_kg": 650.0})),
    ("utilisation-below-breakeven", make_plan(H100, cost={"utilisation": 0.2}),
     _result(cost={"breakeven_utilisation": 0.4, "cloud_usd": 1.0, "onprem_usd": 2.0}),
     make_plan(H100, cost={"utilisation": 0.6}),
     _result(cost={"breakeven_utilisation": 0.4, "cloud_usd": 2.0, "onprem_usd": 1.0})),
    ("owning-never-cheaper", H100,
     _result(cost={"breakeven_utilisation": None, "cloud_usd": 1.0, "onprem_usd": 2.0, "cloud_usd_per_gpu_hour": 2.0}),
     H100, _result(cost={"breakeven_utilisation": 0.3, "cloud_usd": 2.0, "onprem_usd": 1.0})),
    ("breakeven-after-ownership", H100, _result(cost={"breakeven_months": 50.0}),
     H100, _result(cost={"breakeven_months": 14.0})),
    # 12 GPUs need two 8-GPU servers: owning pays for 4 idle GPUs; 16 fill them
    ("servers-partly-used", H100, _result(cluster={"gpus": 12, "nodes": 2, "gpus_per_node": 8},
                                          cost={"onprem_usd": 1e6}),
     H100, _result(cluster={"gpus": 16, "nodes": 2, "gpus_per_node": 8}, cost={"onprem_usd": 1e6})),
    # one GPU on an 8-GPU instance: 7 billed and idle; 8 GPUs fill it
    ("instances-partly-used", H100, _result(cluster={"gpus": 1, "nodes": 1, "gpus_per_node": 8},
                                            cost={"cloud_usd": 1e5, "rented_gpus": 8.0}),
     H100, _result(cluster={"gpus": 8, "nodes": 1, "gpus_per_node": 8}, cost={"cloud_usd": 1e5, "rented_gpus": 8.0})),
    ("checkpoint-interval", H100, _result(checkpoint={"interval_min": 120.0, "daly_min": 20.0}),
     H100, _result(checkpoint={"interval_min": 25.0, "daly_min": 20.0})),
    ("goodput-low", H100, _result(reliability={"goodput": 0.8}), H100, _result(reliability={"goodput": 0.95})),
    # 3 stages and 2 micro-batches idle (3 - 1) / 2 of the compute time, 37% of a step; 8 micro-batches, 12%
    ("pipeline-bubble", H100,
     _result(network={"bubble_fraction": 0.37, "microbatches": 2},
             cluster={"pipeline_parallel": 3, "data_parallel": 375}),
     H100, _result(network={"bubble_fraction": 0.12, "microbatches": 8},
                   cluster={"pipeline_parallel": 3, "data_parallel": 94})),
    ("two-pools-fewer-gpus", INFERENCE,
     _result(inference={"one_pool_gpus": 16, "two_pool_gpus": 12, "prefill_layout": "TP2", "decode_layout": "TP4",
                        "kv_transfer_ms": 3.0, "disaggregated": True}),
     INFERENCE, _result(inference={"one_pool_gpus": 16, "two_pool_gpus": None})),
    ("one-pool-enough", INFERENCE, _result(inference={"one_pool_gpus": 12, "two_pool_gpus": 14}),
     INFERENCE, _result(inference={"one_pool_gpus": 12, "two_pool_gpus": None})),
    # spot for a chat service that does not tolerate interruption; the same service reserved is fine
    ("offer-unsuitable", make_plan(INFERENCE, cost={"pricing": "spot"}),
     _result(cost={"pricing_used": "spot", "cloud_usd": 1e5}, inference={"layout": "TP2", "tensor_parallel": 2}),
     make_plan(INFERENCE, cost={"pricing": "reserved-1y"}),
     _result(cost={"pricing_used": "reserved-1y", "cloud_usd": 1e5},
             inference={"layout": "TP2", "tensor_parallel": 2})),
    # one pool cannot meet the targets at any size: the two pools the plan uses are needed, not a choice
    ("two-pools-needed", INFERENCE,
     _result(inference={"one_pool_gpus": 10, "two_pool_gpus": 248, "one_pool_meets_latency": False,
                        "disaggregated": True, "prefill_layout": "TP8", "decode_layout": "TP2"}),
     INFERENCE, _result(inference={"one_pool_gpus": 12, "two_pool_gpus": 14, "one_pool_meets_latency": True})),
    # AWS Capacity Blocks hold at most 64 instances (512 GPUs): more on demand is a capacity risk, a reservation is not
    ("capacity-risk", H100, _result(cost={"pricing_used": "on-demand", "rented_gpus": 1024.0}),
     H100, _result(cost={"pricing_used": "reserved-1y", "rented_gpus": 1024.0})),
    ("run-never-finishes", H100, _result(reliability={"goodput": 1e-9}), H100, _result(reliability={"goodput": 0.8})),
    ("spot-never-finishes", make_plan(H100, cost={"pricing": "spot"}),
     _result(cost={"pricing_used": "spot", "cloud_usd": None}, cluster={"gpus": 8_000_000}),
     make_plan(H100, cost={"pricing": "spot"}), _result(cost={"pricing_used": "spot", "cloud_usd": 1e6})),
    ("storage-growth-headroom", make_plan(H100, cluster={"storage_growth_factor": 2}), _result(),
     H100, _result()),
    ("oversubscription-training", make_plan(H100, cluster={"oversubscription": 4}), _result(),
     make_plan(H100, cluster={"oversubscription": 2}), _result()),
    ("single-point-of-failure", make_plan(H100, facility={"redundancy": "N"}),
     _result(compute={"wall_clock_days": 40.0}),
     make_plan(H100, facility={"redundancy": "N+1"}), _result(compute={"wall_clock_days": 40.0})),
    ("deadline-missed", make_plan(H100, cluster={"deadline_days": 30}),
     _result(compute={"wall_clock_days": 45.0, "meets_deadline": False}),
     make_plan(H100, cluster={"deadline_days": 30}),
     _result(compute={"wall_clock_days": 25.0, "meets_deadline": True})),
    ("deadline-unreachable", make_plan(H100, cluster={"deadline_days": 1}),
     _result(compute={"deadline_gpus_needed": 4e7}, cluster={"gpus": 10_000_000}),
     make_plan(H100, cluster={"deadline_days": 30}), _result(cluster={"gpus": 1024})),
    # MLPerf Training v5.1 measures NVFP4 on B200 (fitted); no AMD FP4 result was published before 2026
    ("fp4-training-extrapolated",
     make_plan(PRETRAIN, cluster={"gpu": "mi355x", "gpus": 64}, workload={"precision": "fp4"}), _result(),
     make_plan(PRETRAIN, cluster={"gpu": "b200", "gpus": 64}, workload={"precision": "fp4"}), _result()),
    ("newer-than-calibration", make_plan(PRETRAIN, cluster={"gpu": "rubin", "gpus": 72}), _result(),
     make_plan(PRETRAIN, cluster={"gpu": "gb300", "gpus": 72}), _result()),
    # published 2026 runs on Blackwell took longer than predicted; a measured utilisation replaces the kit's
    ("blackwell-runs-slower", make_plan(PRETRAIN, cluster={"gpu": "gb300", "gpus": 72}), _result(),
     make_plan(PRETRAIN, cluster={"gpu": "gb300", "gpus": 72, "mfu": 0.35}), _result()),
    ("duration-absurd", H100, _result(compute={"wall_clock_days": 20462.0}, cluster={"gpus": 8}),
     H100, _result(compute={"wall_clock_days": 30.0})),
    ("no-server-power", make_plan(PRETRAIN, cluster={"gpu": "tpu-v6e", "gpus": 64}), _result(), H100, _result()),
    ("scale-out-unknown", make_plan(PRETRAIN, cluster={"gpu": "tpu-v6e", "gpus": 64}), _result(), H100, _result()),
    # a catalog switch without a published power (QM8700) is scaled from the QM9700's; the QM9700's own is published
    ("switch-power-estimated", H100,
     _result(network={"fabric_switch": "qm8700"}, facility={"switch_power_basis": "scaled", "switch_power_reference":
                                                             "qm9700", "network_switches": 3.0, "switch_kw": 0.54,
                                                             "switch_typical_kw": 0.23}),
     H100, _result(network={"fabric_switch": "qm9700"}, facility={"switch_power_basis": "catalog"})),
    ("stale-price", make_plan(H100, cost={"cloud": "aws-p5.48xlarge-2023", "server_price_usd": 300000}), _result(),
     make_plan(H100, cost={"server_price_usd": 300000}), _result()),  # a quoted server price is not stale
    ("stale-spec", make_plan(PRETRAIN, cluster={"gpu": "h100-pcie", "gpus": 64}), _result(),
     H100, _result()),
    ("no-cloud-offer",
     make_plan(PRETRAIN, cluster={"gpu": "gaudi3", "gpus": 64}, facility={"server": "gaudi3-8oam"}), _result(),
     H100, _result()),
    ("pricing-unavailable", make_plan(H100, cost={"pricing": "spot"}), _result(cost={"pricing_used": "on-demand"}),
     make_plan(H100, cost={"pricing": "reserved-1y"}), _result(cost={"pricing_used": "reserved-1y"})),
    ("no-server-price", make_plan(PRETRAIN, cluster={"gpu": "h200"}, facility={"server": "dgx-h200"}), _result(),
     H100, _result()),
    # the plan's own targets: the planned 99th percentile above the target is critical, at or below it silent
    ("tpot-target-missed", make_plan(INFERENCE, workload={"tpot_ms_target": 5}),
     _result(inference={"tpot_ms_p99": 150.0, "tpot_ms_fastest": 14.8, "tpot_fastest_layout": "TP8", "gpus": 10}),
     make_plan(INFERENCE, workload={"tpot_ms_target": 200}), _result(inference={"tpot_ms_p99": 150.0})),
    ("ttft-target-missed", make_plan(INFERENCE, workload={"ttft_ms_target": 50}),
     _result(inference={"ttft_ms": 800.0, "ttft_ms_fastest": 191.0, "ttft_fastest_layout": "TP8", "gpus": 10}),
     make_plan(INFERENCE, workload={"ttft_ms_target": 2000}), _result(inference={"ttft_ms": 800.0})),
    # a mixture of experts at a few requests per attention group (the calibration's weak spot), not at hundreds
    ("moe-serving-few-sequences", make_plan(INFERENCE, model="gpt-oss-120b"),
     _result(inference={"concurrent_sequences": 28.0, "attention_data_parallel": 1}),
     make_plan(INFERENCE, model="gpt-oss-120b"),
     _result(inference={"concurrent_sequences": 1044.0, "attention_data_parallel": 2})),
    ("budget-exceeded", make_plan(H100, cost={"budget_usd": 1e6}),
     _result(cost={"cloud_run_usd": 4e6, "onprem_run_usd": 3e6}),
     make_plan(H100, cost={"budget_usd": 3.5e6}), _result(cost={"cloud_run_usd": 4e6, "onprem_run_usd": 3e6})),
    # a published API price below what the plan pays per million tokens (renting $0.60, owning $0.50); not above it
    ("api-cheaper", INFERENCE,
     _result(cost={"usd_per_million_tokens": 0.6, "usd_per_million_tokens_onprem": 0.5,
                   "api_prices": [_api("DeepInfra", 0.184)]}),
     INFERENCE, _result(cost={"usd_per_million_tokens": 0.6, "usd_per_million_tokens_onprem": 0.5,
                              "api_prices": [_api("Fireworks AI", 0.9)]})),
    # a pretraining plan of a model whose own pretraining was published with its GPU-hours (DeepSeek-V3 on H800);
    # a model without one (Llama 2 7B has one, Mistral 7B none)
    ("published-run", make_plan(PRETRAIN, model="deepseek-v3", cluster={"gpu": "h800", "gpus": 2048},
                                facility={"server": None}), _result(),
     make_plan(PRETRAIN, model="mistral-7b"), _result()),
    ("server-price-fallback",
     H100, _result(cost={"server_price_kind": "list price (no street or volume price published)"}),
     H100, _result(cost={"server_price_kind": "street price"})),
]


@pytest.mark.parametrize("check_id,plan_on,res_on,plan_off,res_off", CASES, ids=[c[0] for c in CASES])
def test_check_triggers_and_stays_silent(check_id, plan_on, res_on, plan_off, res_off):
    assert check_id in ids(plan_on, res_on)
    assert check_id not in ids(plan_off, res_off)


def test_every_check_is_covered():
    # every check function fires on at least one triggering case above
    for check in CHECKS:
        assert any(check(load_plan(plan), res) is not None for _, plan, res, _, _ in CASES), check.__name__


#: what a client should never read in a finding: plan paths ("cluster.deadline_days"), snake_case keys,
#: file names and layout shorthand ("tp 8")
DEVELOPER_WORDS = re.compile(r"\b(workload|cluster|facility|cost)\.[a-z]|\b[a-z0-9]+_[a-z0-9_]+\b|\.csv\b|\b[tdp]p \d")


@pytest.mark.parametrize("check_id,plan_on,res_on,plan_off,res_off", CASES, ids=[c[0] for c in CASES])
def test_findings_speak_the_clients_language(check_id, plan_on, res_on, plan_off, res_off):
    for f in run_checks(load_plan(plan_on), res_on):
        assert not DEVELOPER_WORDS.search(f["message"]), f["message"]


#: a replica layout as engines write it ("TP2 PP2", "TP1 DP8", "DEP8")
LAYOUT_CODE = re.compile(r"\b(?:TP|DEP)\d+(?: (?:DP|DEP|EP|PP)\d+)*\b")


@pytest.mark.parametrize("check_id,plan_on,res_on,plan_off,res_off", CASES, ids=[c[0] for c in CASES])
def test_findings_say_a_layout_in_words_beside_its_code(check_id, plan_on, res_on, plan_off, res_off):
    """A finding that names a replica's layout ("TP2 PP2") also says what it means."""
    res_on = copy.deepcopy(res_on)
    inf = res_on.get("inference") or {}
    for key in ("prefill_layout", "decode_layout", "tpot_fastest_layout", "ttft_fastest_layout"):
        if key in inf:  # layouts with more than one part, so the words say more than one thing
            inf[key] = {"TP2": "TP2 PP2", "TP4": "TP1 DP8"}.get(inf[key], inf[key])
    for f in run_checks(load_plan(plan_on), res_on):
        for code in LAYOUT_CODE.findall(f["message"]):
            assert layout_words(code) in f["message"], (code, f["message"])


def test_one_pool_enough_says_when_the_plan_uses_two_pools_anyway():
    """A plan that asks for two pools where one needs fewer GPUs is told that it uses the costlier pair."""
    found = {f["id"]: f["message"] for f in run_checks(load_plan(INFERENCE), _result(
        inference={"one_pool_gpus": 12, "two_pool_gpus": 14, "disaggregated": True,
                   "prefill_layout": "TP2", "decode_layout": "TP4"}))}
    assert found["one-pool-enough"].endswith("The plan asks for two pools and uses them.")
    kept = {f["id"]: f["message"] for f in run_checks(load_plan(INFERENCE), _result(
        inference={"one_pool_gpus": 12, "two_pool_gpus": 14, "disaggregated": False}))}
    assert "two pools and uses them" not in kept["one-pool-enough"]


def test_findings_count_one_thing_in_the_singular():
    """One GPU, one spot instance: a finding never reads "1 GPUs" (a plan of one GPU on spot capacity, with low
    storage bandwidth and more GPUs bought than used, triggers several counting findings at once)."""
    plan = load_plan(make_plan(H100, cluster={"gpus": 1}, cost={"pricing": "spot"}))
    result = _result(cluster={"gpus": 1, "nodes": 1, "gpus_per_node": 8}, storage={"read_gb_per_s": 0.5},
                     cost={"onprem_usd": 1e5, "pricing_used": "spot"},
                     inference={"one_pool_gpus": 1, "two_pool_gpus": 2})
    found = run_checks(plan, result)
    assert {"servers-partly-used", "storage-bandwidth-low", "spot-never-finishes"} <= {f["id"] for f in found}
    for f in found:
        assert not re.search(r"\b1 (GPUs|servers|spot instances|instances)\b", f["message"]), f["message"]


def test_fit_hint_from_cluster_is_used():
    r = _result(memory={"fits": False}, cluster={"fit_hint": "Try tensor_parallel 8."})
    f = [x for x in run_checks(load_plan(H100), r) if x["id"] == "model-does-not-fit"][0]
    assert "Try tensor_parallel 8." in f["message"] and f["severity"] == "critical"


def test_mfu_below_the_published_band_is_a_warning_and_the_default_is_silent():
    f = {x["id"]: x for x in run_checks(load_plan(make_plan(H100, cluster={"mfu": 0.2})), _result())}
    assert f["mfu-low"]["severity"] == "warning" and "published runs" in f["mfu-low"]["message"]
    assert "mfu-low" not in ids(H100, evaluate(H100))  # no finding shows on every plan


def test_idle_owned_gpus_warn_from_half_a_server_idle():
    """16 GPUs of a 72-GPU GB200 NVL72 rack: 56 idle, a warning that names what renting bills; 12 of 16: information."""
    rack = _result(cluster={"gpus": 16, "nodes": 1, "gpus_per_node": 72},
                   cost={"onprem_usd": 6e6, "cloud_usd": 2.6e6, "rented_gpus": 16.0})
    plan = load_plan(make_plan(INFERENCE, cluster={"gpu": "gb200"}, facility={"server": "gb200-nvl72"},
                               cost={"cloud": None}))
    found = {f["id"]: f for f in run_checks(plan, rack)}["servers-partly-used"]
    assert found["severity"] == "warning" and "56 (78%) are paid for and idle; renting bills 16" in found["message"]
    assert "1 NVIDIA GB200 NVL72 rack with 72 GPUs" in found["message"]  # the name without its catalog remark
    two = _result(cluster={"gpus": 12, "nodes": 2, "gpus_per_node": 8}, cost={"onprem_usd": 1e6})
    assert {f["id"]: f for f in run_checks(load_plan(H100), two)}["servers-partly-used"]["severity"] == "info"
    # renting 8-GPU instances bills the same 16 GPUs: the finding does not suggest renting avoids them
    two["cost"].update(cloud_usd=1e6, rented_gpus=16.0)
    assert "renting's whole instances bill them too" in \
        {f["id"]: f for f in run_checks(load_plan(H100), two)}["servers-partly-used"]["message"]
    one = _result(cluster={"gpus": 1, "nodes": 1, "gpus_per_node": 72}, cost={"onprem_usd": 6e6})
    assert {f["id"]: f for f in run_checks(plan, one)}["servers-partly-used"]["message"].startswith(
        "The plan uses 1 GPU, but")


def test_an_api_below_the_plans_own_price_warns_and_says_what_it_would_cost():
    """The cheapest API below both renting and owning is a warning with the month's API bill at the plan's load;
    below only the dearer side, information."""
    plan = load_plan(INFERENCE)  # 10 requests a second of 2,000 + 500 tokens, 70% of the time
    apis = [_api("DeepInfra", 0.184), _api("Nebius AI Studio", 0.184), _api("AWS Bedrock", 0.72)]
    below = _result(cost={"usd_per_million_tokens": 0.612, "usd_per_million_tokens_onprem": 0.512,
                          "cloud_usd_per_month": 48_200.0, "api_prices": apis})
    found = {f["id"]: f for f in run_checks(plan, below)}["api-cheaper"]
    tokens = 10 * 2500 * 3600 * U.HOURS_PER_MONTH * plan.cost["utilisation"]
    assert found["severity"] == "warning" and "2 of the 3 published API prices the kit has are below both" in \
        found["message"]
    assert f"would cost {fmt(tokens / 1e6 * 0.184, 'usd')} a month, against $48.2K renting" in found["message"]
    between = _result(cost={"usd_per_million_tokens": 0.612, "usd_per_million_tokens_onprem": 0.1,
                            "api_prices": apis})
    found = {f["id"]: f for f in run_checks(plan, between)}["api-cheaper"]
    assert found["severity"] == "info" and "it is below renting only" in found["message"]
    # an API at $1.05 against $1.05 renting (0.5% apart) is the same price as the reader sees it: nothing to say
    level = _result(cost={"usd_per_million_tokens": 1.054, "usd_per_million_tokens_onprem": 0.35,
                          "api_prices": [_api("DeepInfra", 1.046)]})
    assert "api-cheaper" not in {f["id"] for f in run_checks(plan, level)}


def test_a_small_global_batch_on_many_gpus_is_told_what_its_pipeline_idles():
    """Llama 3.1 405B in FP8 on GB200 within 58 days: at the default global batch of 4 million tokens the kit
    needs about 10,600 GPUs whose 441 data-parallel copies get 2 micro-batches each for 3 pipeline stages; at
    Llama 3's final 16 million tokens a step the same deadline needs fewer GPUs and the finding goes."""
    plan = {"name": "405B", "model": "llama-3.1-405b",
            "workload": {"kind": "pretrain", "tokens": 15e12, "seq_len": 8192, "precision": "fp8"},
            "cluster": {"gpu": "gb200", "deadline_days": 58}}
    small = evaluate(plan)
    message = next(c["message"] for c in small["checks"] if c["id"] == "pipeline-bubble")
    assert small["network"]["bubble_fraction"] >= PIPELINE_BUBBLE_MAX
    assert f"each of the {small['cluster']['data_parallel']:,} data-parallel copies only " \
           f"{small['network']['microbatches']} micro-batches" in message
    large = evaluate(make_plan(plan, workload={"global_batch_tokens": 16e6}))
    assert "pipeline-bubble" not in {c["id"] for c in large["checks"]}
    assert large["cluster"]["gpus"] < small["cluster"]["gpus"]


def test_a_small_service_on_a_large_instance_is_told_what_it_pays_for():
    """Llama 3.1 8B at 2 requests a second fits one L40S; its default offer (AWS g6e.48xlarge) rents 8 a time, so 7
    are billed and idle: a warning naming the catalog's smaller L40S offers. When owning is costed too,
    servers-partly-used says it of both, and this finding stays silent."""
    plan = {"name": "bot", "model": "llama-3.1-8b", "cluster": {"gpu": "l40s"},
            "workload": {"kind": "inference", "requests_per_s": 2, "prompt_tokens": 1000, "output_tokens": 300}}
    r = evaluate(plan)
    assert r["cluster"]["gpus"] == 1 and r["cost"]["rented_gpus"] == 8
    found = {c["id"]: c for c in r["checks"]}["instances-partly-used"]
    assert found["severity"] == "warning" and found["message"].startswith(
        "The plan uses 1 GPU, but AWS g6e.48xlarge rents 8 GPUs an instance: 8 are billed, so 7 (88%) are paid for")
    smaller = [o for o in load_catalog().clouds.values() if o.gpu == "l40s" and o.gpus < 8 and o.on_demand_usd_per_hr]
    assert smaller and all(o.name in found["message"] for o in smaller[:3])
    owned = evaluate(make_plan(plan, cost={"server_price_usd": 100_000}))
    assert {"servers-partly-used"} <= {c["id"] for c in owned["checks"]}
    assert "instances-partly-used" not in {c["id"] for c in owned["checks"]}


def test_capacity_risk_names_its_yardstick_beyond_aws():
    """The 512-GPU limit is AWS's Capacity Blocks: said as AWS's own for an AWS offer, as the kit's yardstick for
    another provider's (a per-GPU H800 offer)."""
    rented = _result(cost={"pricing_used": "on-demand", "rented_gpus": 2048.0})
    for cloud, yardstick in (("aws-p5.48xlarge", False), ("cr8dl-h800", True)):
        gpu = load_catalog().gpus[load_catalog().clouds[cloud].gpu]
        plan = load_plan(make_plan(H100, cluster={"gpu": gpu.id}, facility={"server": gpu.default_server},
                                   cost={"cloud": cloud}))
        found = {f["id"]: f for f in run_checks(plan, rented)}["capacity-risk"]
        assert ("the yardstick the kit uses for every provider" in found["message"]) == yardstick


def test_a_published_run_of_the_plans_model_is_set_beside_the_kits_prediction():
    """DeepSeek-AI reports 2.664 million H800 GPU-hours for DeepSeek-V3's pretraining on 14.8 trillion tokens, 180,000
    per trillion tokens times 14.8 [deepseek-v3-readme;arxiv-2412.19437]: a figure worked out from a training rate,
    which the finding says, set beside the kit's training time without its end-to-end overhead. Meta reports 7.0
    million H100 GPU-hours for Llama 3.1 70B on 15 trillion tokens [meta-llama3.1-model-card]: inside the band,
    information; 1.46 million for Llama 3.1 8B: outside it, a warning that names the published rate. A plan that sets
    its own utilisation, or fine-tunes, gets neither."""
    deepseek = load_plan(make_plan(PRETRAIN, model="deepseek-v3", cluster={"gpu": "h800", "gpus": 2048},
                                   facility={"server": None}))
    found = {f["id"]: f for f in run_checks(deepseek, _result())}["published-run"]
    assert found["message"].startswith("DeepSeek-AI (2024) reports 2.66 million GPU-hours on 2,048 NVIDIA H800")
    assert "14.8 trillion tokens, worked out from its training rate" in found["message"]
    assert "leaves out, as that one does, the time lost to evaluation, restarts and slow-downs" in found["message"]
    assert "This plan's own" not in found["message"]  # no figure of its own in this result
    # the plan's own figure, with that time added, is named beside it so the two do not read as a contradiction
    own = _result(compute={"gpu_hours": 4.89e6, "overhead_factor": 1.345})
    message = {f["id"]: f for f in run_checks(deepseek, own)}["published-run"]["message"]
    assert message.endswith("This plan's own 4.89 million GPU-hours add that lost time (the kit's end-to-end "
                            "overhead, ×1.34).")
    llama = load_plan(make_plan(PRETRAIN, model="llama-3.1-70b", cluster={"gpu": "h100-sxm", "gpus": 1024}))
    found = {f["id"]: f for f in run_checks(llama, _result())}["published-run"]
    assert found["severity"] == "info" and "reports 7.00 million GPU-hours on NVIDIA H100" in found["message"]
    assert "inside its 10th–90th percentile range" in found["message"]
    # the kit's figures read in the published figure's scale: Llama 3.1 8B's 1.46 million published GPU-hours
    # beside "0.702 million" predicted, not "702,220" [meta-llama3.1-model-card]
    small = load_plan(make_plan(PRETRAIN, model="llama-3.1-8b", cluster={"gpu": "h100-sxm", "gpus": 1024}))
    found = {f["id"]: f for f in run_checks(small, _result())}["published-run"]
    message = found["message"]
    assert found["severity"] == "warning" and "likely too low" in message
    assert "GPU-hours per trillion tokens on the NVIDIA H100" in message and "training rate" not in message
    assert "reports 1.46 million GPU-hours" in message
    assert re.search(r"the kit predicts 0\.\d{3} million \(", message)
    assert re.search(r"range \(0\.\d{3} to (0\.\d{3}|1\.\d\d) million\)", message)
    for quiet in (make_plan(PRETRAIN, model="llama-3.1-70b", cluster={"gpu": "h100-sxm", "mfu": 0.4}),
                  {**make_plan(PRETRAIN, model="llama-3.1-70b", cluster={"gpu": "h100-sxm"}),
                   "workload": {"kind": "finetune", "tokens": 1e9, "seq_len": 4096}}):
        assert "published-run" not in ids(quiet, _result())


@pytest.mark.parametrize("model", sorted({r["model"] for r in csv.DictReader(
    (data_dir() / "calibration" / "training_runs.csv").open(encoding="utf-8")) if r["model"]}))
def test_every_published_run_finding_reads_as_the_client_reads(model):
    """Each catalog model with a published pretraining run gets the finding, its message and its footnote free of
    file names and snake_case (the footnote quotes the run's sources)."""
    gpu = "h100-sxm" if model != "deepseek-v3" else "h800"
    plan = load_plan(make_plan(PRETRAIN, model=model, cluster={"gpu": gpu, "gpus": 1024}, facility={"server": None},
                               workload={"seq_len": 2048}))
    found = {f["id"]: f for f in run_checks(plan, _result())}["published-run"]
    for text in (found["message"], found["source"]):
        assert not DEVELOPER_WORDS.search(text) and not re.search(r"\.(md|py|json|csv)\b", text), text


def test_dense_racks_warn_until_the_plan_chooses_cooling_for_them():
    """150 kW racks: with cooling left to the kit, a warning that the site must supply liquid cooling; with liquid
    cooling chosen, the same fact as information, not as advice to do what the plan already does."""
    dense = _result(facility={"rack_kw_actual": 150.0, "cooling_recommended": "liquid"})
    auto = {f["id"]: f for f in run_checks(load_plan(H100), dense)}["rack-density-beyond-air"]
    assert auto["severity"] == "warning" and "must supply liquid cooling" in auto["message"]
    chosen = {f["id"]: f for f in run_checks(load_plan(make_plan(H100, facility={"cooling": "liquid"})), dense)}
    assert chosen["rack-density-beyond-air"]["severity"] == "info" and "rack-density-cooling" not in chosen


def test_a_thin_network_warns_only_where_the_step_waits_for_it():
    """Below the 10% rule of thumb the finding weighs the kit's own step: a GB200 NVL72 cluster (900 GB/s inside
    the rack, 50 GB/s between racks) that hides its synchronisation behind compute is told so, as information; the
    same layout whose step waits a tenth of its time for the network is warned."""
    plan = make_plan(PRETRAIN, cluster={"gpu": "gb200", "gpus": 504}, facility={"server": "gb200-nvl72"},
                     cost={"cloud": None})
    result = evaluate(plan)
    net, step_s = result["network"], result["cluster"]["step_time_s"]
    assert net["allreduce_to_compute_ratio"] < 0.10 and net["allreduce_exposed_s"] / step_s < 0.05
    found = {f["id"]: f for f in result["checks"]}["allreduce-bandwidth-low"]
    assert found["severity"] == "info" and f"({fmt(net['allreduce_exposed_s'] / step_s, 'pct')})" in found["message"]
    waiting = copy.deepcopy(result)
    waiting["network"]["allreduce_exposed_s"] = 0.1 * step_s
    found = {f["id"]: f for f in run_checks(load_plan(plan), waiting)}["allreduce-bandwidth-low"]
    assert found["severity"] == "warning" and "(10%) waits for it" in found["message"]
    # the fabric already reduces in the switches: that is not offered as a remedy; without it, it is
    assert waiting["network"]["in_network_reduction"] and "in-network reduction" not in found["message"]
    waiting["network"]["in_network_reduction"] = False
    found = {f["id"]: f for f in run_checks(load_plan(plan), waiting)}["allreduce-bandwidth-low"]
    assert "Faster NICs, in-network reduction or more data parallelism" in found["message"]


def test_single_point_of_failure_for_inference_service():
    plan = make_plan(INFERENCE, facility={"redundancy": "N"})
    assert "single-point-of-failure" in ids(plan, _result())


def test_findings_shape_on_real_results(catalog):
    for plan in (H100, PRETRAIN, INFERENCE, make_plan(H100, cost={"cloud": "aws-p5.48xlarge-2023"})):
        r = evaluate(plan)
        assert r["checks"]
        for f in r["checks"]:
            assert set(f) == {"id", "severity", "message", "source", "sources"}
            assert f["severity"] in ("info", "warning", "critical")
            assert f["message"] and all(i in catalog.sources for i in f["sources"])
            assert bool(f["source"]) == bool(f["sources"])
            assert "_" not in f["message"]


def test_stale_price_names_the_date_and_the_newer_offer(monkeypatch):
    plan = make_plan(H100, cost={"cloud": "aws-p5.48xlarge-2023"})
    monkeypatch.setenv("AIPLAN_TODAY", "2026-12-03")
    stale = {x["id"]: x for x in evaluate(plan)["checks"]}["stale-price"]
    message = stale["message"]
    offers = load_catalog().clouds
    old, new = offers["aws-p5.48xlarge-2023"].as_of, offers["aws-p5.48xlarge"].as_of  # the catalog rows' dates
    assert f"AWS p5.48xlarge price of {old}" in message and f"newer: AWS p5.48xlarge, {new}" in message
    server_date = evaluate(plan)["cost"]["server_price_as_of"]  # the newest published server price is old too
    assert f"DGX H100 price of {server_date}" in message
    assert {"epoch-hardware-prices"} <= set(stale["sources"])  # where the old prices come from
    monkeypatch.setenv("AIPLAN_TODAY", "2024-01-01")
    assert "stale-price" not in {x["id"] for x in evaluate(plan)["checks"]}


#: checks that read only the plan and the catalog (they may speak before anything is computed)
PLAN_ONLY = {"stale-spec", "no-server-price", "no-cloud-offer", "no-server-power", "published-run"}


def test_checks_tolerate_empty_result():
    """With nothing computed, a check whose figures are missing stays silent; only the checks of
    the plan and catalog alone speak, and no message shows a missing figure."""
    plan = load_plan(copy.deepcopy(H100))
    found = run_checks(plan, empty_result())
    assert {f["id"] for f in found} <= PLAN_ONLY
    assert {f["id"] for f in found} == {f["id"] for f in evaluate(H100)["checks"]} & PLAN_ONLY
    assert not any("n/a" in f["message"] for f in found)


def test_moe_few_sequences_says_which_way_the_published_runs_went():
    """On CDNA 3 (MI300X, MI325X) the 2026 runs at a few requests were slower than the kit predicts, elsewhere
    faster: the finding tells the client which way the GPU count is likely off."""
    res = _result(inference={"concurrent_sequences": 8.0, "attention_data_parallel": 1})

    def message(gpu):
        plan = load_plan(make_plan(INFERENCE, model="deepseek-r1", cluster={"gpu": gpu}))
        return [f for f in run_checks(plan, res) if f["id"] == "moe-serving-few-sequences"][0]["message"]

    assert "more likely too low" in message("mi300x") and "more likely too low" in message("mi325x")
    assert "more likely too high" in message("h200") and "more likely too high" in message("mi355x")
