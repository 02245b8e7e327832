"""Issue 25, items 2 and 3: costs like for like (whole instances, reservations billed for their term,
renting and owning on equal capacity, cost per million tokens split into input and output, published
API prices beside it) and options one can buy (exclusions with the reason, spot only for
interruption-tolerant work, capacity risk)."""

from __future__ import annotations

import math

import pytest
from conftest import INFERENCE, PRETRAIN, make_plan

from aiplan import evaluate, findings, load_catalog, load_plan
from aiplan.analysis import options
from aiplan.core.assumptions import CAPACITY_RISK_GPUS
from aiplan.core.units import HOURS_PER_MONTH, MONTHS_PER_YEAR
from aiplan.cost import billed_years, capacity_risk, prefill_share, rented_gpus, whole_instances

CLOUD_HEADER = ("id,provider,instance,gpu,gpus,region,on_demand_usd_per_hr,reserved_1y_usd_per_hr,"
                "reserved_3y_usd_per_hr,spot_usd_per_hr,usd_per_hr_low,usd_per_hr_high,derived_columns,status,sources,"
                "as_of,notes")
P5 = "aws-p5.48xlarge"


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """The shipped catalog plus two invented H100 offers at $2 per GPU-hour on demand: one of 8-GPU
    instances (reserved and spot too) and one sold per GPU (1-GPU instances)."""
    folder = tmp_path_factory.mktemp("catalog")
    rows = ["test-eight,test,eight,h100-sxm,8,test,16,9.6,6.4,4,,,,estimate,seed-ai-training-quick-reference,"
            "2026-11-01,synthetic offer for a test",
            "test-single,test,single,h100-sxm,1,test,2,,,0.5,,,,estimate,seed-ai-training-quick-reference,"
            "2026-11-01,synthetic offer for a test"]
    (folder / "clouds.csv").write_text("\n".join([CLOUD_HEADER, *rows]) + "\n", encoding="utf-8")
    return load_catalog([folder])


def _serving(**cost):
    return make_plan(INFERENCE, cost={"cloud": P5, **cost})


# --- whole instances, reservations for the term, equal capacity ------------------------------------


def test_rentals_are_whole_instances():
    assert float(rented_gpus(12, 8)) == 16.0 and int(whole_instances(12, 8)) == 2
    assert float(rented_gpus(16, 8)) == 16.0 and float(rented_gpus(17, 8)) == 24.0
    assert float(rented_gpus(3, 1)) == 3.0


def test_a_serving_fleet_is_billed_in_whole_instances():
    plan = load_plan(_serving(utilisation=0.6))
    r = evaluate(plan)
    gpus, offer = r["cluster"]["gpus"], plan.cloud
    c = r["cost"]
    assert c["rented_gpus"] == math.ceil(gpus / offer.gpus) * offer.gpus >= gpus
    assert c["cloud_instances"] * offer.gpus == c["rented_gpus"]
    # on demand: whole instances for the hours used, at the catalog's instance price
    expected = c["cloud_instances"] * HOURS_PER_MONTH * 0.6 * offer.on_demand_usd_per_hr
    assert c["cloud_usd_per_month"] == pytest.approx(expected, rel=1e-9)
    assert c["billed_hours_per_month"] == pytest.approx(HOURS_PER_MONTH * 0.6)


def test_a_training_run_on_part_of_an_instance_pays_the_whole_instance():
    plan = make_plan(PRETRAIN, model="llama-2-7b", cluster={"gpu": "h100-sxm", "gpus": 12},
                     cost={"cloud": P5, "pricing": "on-demand"})
    r = evaluate(plan)
    c = r["cost"]
    assert c["rented_gpus"] == 16
    work = r["compute"]["gpu_hours"] / r["reliability"]["goodput"]
    # 12 GPUs used, 16 billed, for the run's wall-clock hours
    assert c["cloud_run_usd"] == pytest.approx(work * 16 / 12 * c["cloud_usd_per_gpu_hour"], rel=1e-9)


def test_a_reservation_is_billed_every_hour_of_its_term():
    low, high = (evaluate(_serving(pricing="reserved-1y", utilisation=u))["cost"] for u in (0.3, 0.9))
    # utilisation does not change what a reservation costs a month, nor per instance: every hour is billed
    assert low["cloud_usd_per_month"] == pytest.approx(high["cloud_usd_per_month"], rel=1e-12)
    assert low["billed_hours_per_month"] == pytest.approx(HOURS_PER_MONTH)
    offer = load_catalog().clouds[P5]
    assert low["cloud_usd_per_month"] == pytest.approx(
        low["cloud_instances"] * HOURS_PER_MONTH * offer.reserved_1y_usd_per_hr, rel=1e-9)
    assert low["breakeven_utilisation"] is None and "billed for the term" in low["cloud_basis"]
    # the cost per token falls as the reserved fleet is used more
    assert high["usd_per_million_tokens"] < low["usd_per_million_tokens"]
    # on demand, the month's bill follows the hours used
    od = [evaluate(_serving(pricing="on-demand", utilisation=u))["cost"]["cloud_usd_per_month"] for u in (0.3, 0.9)]
    assert od[1] == pytest.approx(3 * od[0], rel=1e-9)


def test_a_reservation_longer_than_the_horizon_is_paid_in_full():
    assert float(billed_years(1.0, 3.0)) == 3.0 and float(billed_years(3.0, 1.0)) == 3.0
    c = evaluate(_serving(pricing="reserved-3y", years=1))["cost"]
    assert c["cloud_usd"] == pytest.approx(c["cloud_usd_per_month"] * 3 * MONTHS_PER_YEAR, rel=1e-9)


def test_renting_and_owning_compare_equal_capacity_and_hours():
    plan = load_plan(_serving(utilisation=0.6))
    r = evaluate(plan)
    c = r["cost"]
    # an 8-GPU instance against an 8-GPU server: the same GPUs on both sides, whole units of each
    assert plan.cloud.gpus == r["cluster"]["gpus_per_node"]
    assert c["owned_gpus"] == c["rented_gpus"] == r["cluster"]["nodes"] * r["cluster"]["gpus_per_node"]
    # both over the same horizon: the rented total is the monthly bill over the ownership period
    assert c["cloud_usd"] == pytest.approx(c["cloud_usd_per_month"] * MONTHS_PER_YEAR * c["years"], rel=1e-9)
    assert f"{c['rented_gpus']:,.0f} GPUs" in c["cloud_basis"] and f"{c['owned_gpus']:,.0f} GPUs" in c["onprem_basis"]
    # the breakeven is the months after which capex plus opex undercuts the rented bill
    months = c["capex_usd"] / (c["cloud_usd_per_month"] - c["onprem_opex_usd_per_month"])
    assert c["breakeven_months"] == pytest.approx(months, rel=1e-9)


# --- cost per million tokens: input and output ------------------------------------------------------


def test_input_and_output_prices_sum_to_the_blended_figure_at_the_planned_mix():
    r = evaluate(_serving(utilisation=0.6))
    c, w, inf = r["cost"], r["plan"]["workload"], r["inference"]
    p, o = w["prompt_tokens"], w["output_tokens"]
    for suffix in ("", "_onprem"):
        blended = c[f"usd_per_million_tokens{suffix}"]
        split = c[f"usd_per_million_input_tokens{suffix}"] * p + c[f"usd_per_million_output_tokens{suffix}"] * o
        assert split == pytest.approx(blended * (p + o), rel=1e-9)
    # the split is the serving engine's share of GPU time on prefill
    share = prefill_share(p, o, inf["prefill_tokens_per_s_per_gpu"], inf["decode_tokens_per_s_per_gpu"])
    assert c["prefill_share"] == pytest.approx(float(share)) and 0 < c["prefill_share"] < 1
    # reading a prompt token is cheaper than writing an output token (prefill is compute-bound, batched)
    assert c["usd_per_million_input_tokens"] < c["usd_per_million_output_tokens"]


def test_published_api_prices_sit_beside_the_plans_cost_per_token():
    catalog = load_catalog()
    r = evaluate(_serving())
    rows = r["cost"]["api_prices"]
    published = [a for a in catalog.api_prices.values() if a.model == "llama-3.1-70b"]
    assert rows and len(rows) == len(published)
    w = r["plan"]["workload"]
    for row in rows:
        mix = (row["input_usd_per_mtok"] * w["prompt_tokens"] + row["output_usd_per_mtok"] * w["output_tokens"]) / (
            w["prompt_tokens"] + w["output_tokens"])
        assert row["usd_per_mtok_at_plan_mix"] == pytest.approx(mix)
        assert all(catalog.sources[i].url for i in row["sources"].split(";"))
    assert [x["usd_per_mtok_at_plan_mix"] for x in rows] == sorted(x["usd_per_mtok_at_plan_mix"] for x in rows)
    # a training plan has none
    assert evaluate(PRETRAIN)["cost"]["api_prices"] is None


def test_every_api_price_is_sourced_and_input_is_never_dearer_than_output():
    for a in load_catalog().api_prices.values():
        assert a.sources and a.as_of
        assert a.input_usd_per_mtok <= a.output_usd_per_mtok, a.id


def test_api_prices_of_the_newer_serving_models_are_the_sources_figures():
    prices = load_catalog().api_prices
    # LiteLLM's price file as shipped in litellm 1.110.2 (PyPI, 2026-11-20), entry
    # 'together_ai/openai/gpt-oss-120b': input_cost_per_token 1.5e-07, output_cost_per_token 6e-07 [USD/token]
    together = prices["together-gpt-oss-120b"]
    assert (together.input_usd_per_mtok, together.output_usd_per_mtok) == pytest.approx((0.15, 0.60))
    # same file, 'together_ai/deepseek-ai/DeepSeek-R1-0528': 3e-06 and 7e-06 [USD/token]
    r1 = prices["together-deepseek-r1"]
    assert (r1.input_usd_per_mtok, r1.output_usd_per_mtok) == pytest.approx((3.00, 7.00))
    # Cerebras' model page for gpt-oss-120b: "Input $0.35 / M tokens", "Output $0.75 / M tokens" (LiteLLM agrees)
    cerebras = prices["cerebras-gpt-oss-120b"]
    assert (cerebras.input_usd_per_mtok, cerebras.output_usd_per_mtok) == pytest.approx((0.35, 0.75))
    # second-hand rows say so, and name the dated copy they come from
    assert all(p.status == "secondary" and "litellm-prices-1.110.2" in p.sources.split(";")
               for p in (together, r1, cerebras))


@pytest.mark.parametrize("model", ["deepseek-r1", "deepseek-v3", "deepseek-v3.1", "gpt-oss-120b", "gpt-oss-20b",
                                   "llama-3.1-405b", "llama-4-scout", "llama-4-maverick", "qwen3-30b-a3b",
                                   "qwen3-32b", "qwen3-235b-a22b", "kimi-k2", "gemma-3-27b"])
def test_the_catalogs_serving_models_have_prices_from_two_providers_or_more(model):
    providers = {a.provider for a in load_catalog().api_prices.values() if a.model == model}
    assert len(providers) >= 2, (model, providers)


def test_a_serving_plan_on_gpt_oss_120b_sets_the_published_prices_beside_its_own_cost():
    from aiplan.cli import format_table
    from aiplan.present.summary import client_summary
    from aiplan.report.assumptions import cited_ids

    r = evaluate(make_plan(INFERENCE, model="gpt-oss-120b"))
    rows = r["cost"]["api_prices"]
    published = [a for a in load_catalog().api_prices.values() if a.model == "gpt-oss-120b"]
    assert rows and len(rows) == len(published) >= 2
    assert all(row["provider"] and row["as_of"] and row["status"] in ("published", "secondary") for row in rows)
    # the key figure: the cheapest price at the plan's mix, every provider named with its date
    figure = next(f for b in client_summary(r)["blocks"] for f in b["figures"] if f["id"] == "serving-api-prices")
    assert figure["value"] == pytest.approx(min(x["usd_per_mtok_at_plan_mix"] for x in rows))
    for row in rows:
        assert row["provider"] in figure["detail"] and f"as of {row['as_of']}" in figure["detail"]
    assert "second-hand" in figure["detail"]
    # `aiplan evaluate` lists them beside the plan's own cost per million tokens
    table = format_table(r)
    section = table[table.index("Published API prices for this model"):table.index("Findings (")]
    assert "this plan, renting" in section and all(row["offering"] in section for row in rows)
    # and the report's bibliography cites where they come from
    assert {i for row in rows for i in row["sources"].split(";")} <= set(cited_ids(r))


# --- options one can buy ------------------------------------------------------------------------------


def test_spot_is_offered_only_to_work_that_tolerates_interruption(synthetic):
    rows = options.explore(make_plan(INFERENCE, cost={"cloud": "test-eight"}), synthetic, gpus=["h100-sxm"])
    spot = [r for r in rows if r["pricing"] == "spot" and r["offer"] == "test-eight"]
    assert spot and all(r["rank"] is None and "interruption" in r["excluded"] for r in spot)
    rows = options.explore(make_plan(INFERENCE, cost={"cloud": "test-eight"}, workload={"interruptible": True}),
                           synthetic, gpus=["h100-sxm"])
    assert any(r["rank"] for r in rows if r["pricing"] == "spot" and r["offer"] == "test-eight")
    assert load_plan(PRETRAIN).workload["interruptible"] is True
    assert load_plan(INFERENCE).workload["interruptible"] is False


def test_an_instance_that_cannot_hold_the_tensor_parallel_group_is_excluded_with_the_reason(synthetic):
    rows = options.explore(make_plan(INFERENCE, cost={"cloud": "test-eight"}), synthetic, gpus=["h100-sxm"])
    single = [r for r in rows if r["offer"] == "test-single" and r["pricing"] == "on-demand"]
    for r in single:
        tp, unit = findings.pool_groups(r["layout"].split(",")[0]) if r["layout"] else (1, 1)
        if tp > 1:
            assert r["rank"] is None and "tensor-parallel group" in r["excluded"], r
    assert any(r["excluded"] and "tensor-parallel group" in r["excluded"] for r in single)
    # every ranked row's layout fits its instance
    catalog_offers = synthetic.clouds
    for r in rows:
        if r["rank"] and r["offer"] in catalog_offers and r["layout"]:
            for part in r["layout"].split(","):
                assert findings.pool_groups(part)[0] <= catalog_offers[r["offer"]].scale_up


def test_multi_instance_training_needs_a_scale_out_fabric(synthetic):
    plan = make_plan(PRETRAIN, cluster={"gpu": "h100-sxm", "gpus": 64, "tensor_parallel": 1},
                     cost={"cloud": "test-eight"})
    rows = options.explore(plan, synthetic, gpus=["h100-sxm"], pricings=["on-demand"], samples=200)
    single = next(r for r in rows if r["offer"] == "test-single")
    assert single["rank"] is None and "scale-out fabric" in single["excluded"]
    assert next(r for r in rows if r["offer"] == "test-eight")["rank"]


def test_large_on_demand_fleets_carry_a_capacity_risk(synthetic):
    assert capacity_risk("on-demand", CAPACITY_RISK_GPUS + 8) == "high"
    assert capacity_risk("spot", CAPACITY_RISK_GPUS) == "low"
    assert capacity_risk("reserved-3y", 10 * CAPACITY_RISK_GPUS) == capacity_risk("buy", 0) == "contracted"
    plan = make_plan(PRETRAIN, cluster={"gpu": "h100-sxm", "gpus": 1024}, cost={"cloud": "test-eight"})
    rows = options.explore(plan, synthetic, gpus=["h100-sxm"], samples=200)
    eight = {r["pricing"]: r for r in rows if r["offer"] == "test-eight"}
    assert eight["on-demand"]["capacity_risk"] == eight["spot"]["capacity_risk"] == "high"
    assert eight["reserved-1y"]["capacity_risk"] == "contracted"
    assert eight["on-demand"]["instances"] == 1024 / 8
    # the plan itself gets the finding
    r = evaluate(plan, synthetic)
    assert "capacity-risk" in {c["id"] for c in r["checks"]}
    small = evaluate(make_plan(plan, cluster={"gpus": 64}), synthetic)
    assert "capacity-risk" not in {c["id"] for c in small["checks"]}


def test_an_offer_priced_per_gpu_of_a_larger_machine_holds_that_machines_group():
    catalog = load_catalog()
    # a real 1-GPU product (RunPod's 1-GPU pod, Azure's 1-GPU VM) holds no tensor-parallel group
    assert catalog.clouds["runpod-h100-sxm"].scale_up == catalog.clouds["azure-nc40ads-h100-v5"].scale_up == 1
    # a per-GPU price of an NVL72 rack or an 8-GPU machine is quoted on that machine
    assert catalog.clouds["oracle-gb200"].scale_up == catalog.servers["gb200-nvl72"].gpus_per_node
    assert catalog.clouds["hyperstack-h100-sxm"].scale_up == catalog.servers["dgx-h100"].gpus_per_node
    for o in catalog.clouds.values():
        assert o.scale_up >= o.gpus


def test_a_node_of_a_rented_nvl72_rack_lets_tensor_parallelism_span_the_rack():
    """CoreWeave rents GB200 NVL72 racks whole, billed per 4-GPU node: a TP8 training plan on GB200 (its default
    offer) is not told that its tensor-parallel group must fit in one node."""
    catalog = load_catalog()
    assert catalog.gpus["gb200"].default_cloud == "coreweave-gb200-nvl72"
    assert catalog.clouds["coreweave-gb200-nvl72"].scale_up == catalog.gpus["gb200"].scale_up_domain == 72
    plan = make_plan(PRETRAIN, cluster={"gpu": "gb200", "gpus": 144, "tensor_parallel": 8, "deadline_days": None})
    r = evaluate(plan)
    assert r["cluster"]["tensor_parallel"] == 8 and r["cost"]["cloud"] == "coreweave-gb200-nvl72"
    assert "offer-unsuitable" not in {c["id"] for c in r["checks"]}


def test_the_renting_basis_names_a_per_gpu_price_as_such():
    """Hyperstack prices H100 per GPU of its 8-GPU machines: the basis says so instead of "N instances of 1 GPU";
    RunPod's 1-GPU pods are instances of one GPU."""
    per_gpu = evaluate(make_plan(PRETRAIN, cluster={"gpu": "h100-sxm", "gpus": 64},
                                 cost={"cloud": "hyperstack-h100-sxm"}))["cost"]
    assert per_gpu["cloud_basis"].startswith("64 NVIDIA H100 SXM5 80GB priced per GPU (on 8-GPU machines), ")
    pods = evaluate(make_plan(PRETRAIN, cluster={"gpu": "h100-sxm", "gpus": 64},
                              cost={"cloud": "runpod-h100-sxm"}))["cost"]
    assert pods["cloud_basis"].startswith("64 instances of 1 NVIDIA H100 SXM5 80GB (64 GPUs), ")
    # a per-GPU price of an NVL72 rack, and a TPU priced per chip of its slice
    rack = evaluate(make_plan(PRETRAIN, cluster={"gpu": "gb200", "gpus": 72}, cost={"cloud": "oracle-gb200"}))["cost"]
    assert "priced per GPU (on 72-GPU racks), " in rack["cloud_basis"]
    tpu = evaluate(make_plan(PRETRAIN, cluster={"gpu": "tpu-v5p", "gpus": 512}, cost={"cloud": "gcp-tpu-v5p"}))["cost"]
    assert tpu["cloud_basis"].startswith("512 Google TPU v5p priced per chip (in slices of up to 8,960 chips), ")
