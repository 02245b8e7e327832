"""Options explorer: ranking with known answers on a small synthetic catalog, P50 = the point
figure, monotonic properties, the commitment basis, excluded rows, and the command."""

from __future__ import annotations

import copy
import csv
import io
import json

import pytest
from conftest import INFERENCE, PLANS, PRETRAIN, make_plan

from aiplan import evaluate, load_catalog, load_plan
from aiplan.analysis import options
from aiplan.cli import main
from aiplan.core.units import HOURS_PER_YEAR
from aiplan.present import charts

REQUIRED = ("gpu", "offer", "pricing", "gpus", "fits", "days_p10", "days_p50", "days_p90", "run_cost_usd_p10",
            "run_cost_usd_p50", "run_cost_usd_p90", "deadline_probability", "mw", "co2_t", "excluded", "basis")
CLOUD_HEADER = ("id,provider,instance,gpu,gpus,region,on_demand_usd_per_hr,reserved_1y_usd_per_hr,"
                "reserved_3y_usd_per_hr,spot_usd_per_hr,usd_per_hr_low,usd_per_hr_high,derived_columns,status,sources,"
                "as_of,notes")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """The shipped catalog plus three invented H100 offers at $1, $2 and $4 per GPU-hour."""
    folder = tmp_path_factory.mktemp("catalog")
    rows = [f"test-{name},test,{name},h100-sxm,8,test,{8 * price},{8 * price * 0.6},{8 * price * 0.4},,,,,estimate,"
            f"seed-ai-training-quick-reference,2026-11-01,synthetic offer for a test"
            for name, price in (("one", 1.0), ("two", 2.0), ("four", 4.0))]
    (folder / "clouds.csv").write_text("\n".join([CLOUD_HEADER, *rows]) + "\n", encoding="utf-8")
    return load_catalog([folder])


def _plan(**cluster):
    return make_plan(PRETRAIN, cluster={"gpu": "h100-sxm", "gpus": 256, **cluster})


def _by_offer(rows, pricing="on-demand"):
    return {r["offer"]: r for r in rows if r["pricing"] == pricing}


def test_ranking_on_a_synthetic_catalog_follows_the_price(synthetic):
    rows = options.explore(_plan(), synthetic, gpus=["h100-sxm"], pricings=["on-demand"])
    ranked = [r["offer"] for r in rows if r["offer"].startswith("test-")]
    assert ranked == ["test-one", "test-two", "test-four"]
    by = _by_offer(rows)
    # the same GPU, the same run: the P50 cost is in the ratio of the prices
    assert by["test-two"]["run_cost_usd_p50"] / by["test-one"]["run_cost_usd_p50"] == pytest.approx(2.0, rel=1e-6)
    assert by["test-four"]["run_cost_usd_p50"] / by["test-one"]["run_cost_usd_p50"] == pytest.approx(4.0, rel=1e-6)
    assert all(r["rank"] == i for i, r in enumerate([r for r in rows if not r["excluded"]], 1))


def test_p50_is_the_deterministic_figure(synthetic):
    plan = _plan()
    point = evaluate(make_plan(plan, cost={"cloud": "test-two", "pricing": "on-demand"}), synthetic)
    row = _by_offer(options.explore(plan, synthetic, gpus=["h100-sxm"], pricings=["on-demand"]))["test-two"]
    assert row["days_p50"] == pytest.approx(point["compute"]["wall_clock_days"], rel=0.02)
    assert row["run_cost_usd_p50"] == pytest.approx(point["cost"]["cloud_run_usd"], rel=0.02)
    assert row["days_p10"] < row["days_p50"] < row["days_p90"]


def test_more_gpus_mean_fewer_days(synthetic):
    days = [_by_offer(options.explore(_plan(gpus=g), synthetic, gpus=["h100-sxm"], pricings=["on-demand"]))
            ["test-one"]["days_p50"] for g in (128, 256, 512)]
    assert days[0] > days[1] > days[2]


def test_reservation_for_one_run_pays_the_whole_term_unless_reused(synthetic):
    plan = _plan()
    once = _by_offer(options.explore(plan, synthetic, gpus=["h100-sxm"], pricings=["reserved-3y"]), "reserved-3y")
    reused = _by_offer(options.explore(make_plan(plan, cost={"capacity_reused": True}), synthetic,
                                       gpus=["h100-sxm"], pricings=["reserved-3y"]), "reserved-3y")
    whole = 256 * 3 * HOURS_PER_YEAR * 4.0 * 0.4  # 256 GPUs x 3 years x $1.60 per GPU-hour
    assert once["test-four"]["run_cost_usd_p50"] == pytest.approx(whole, rel=1e-9)
    assert once["test-four"]["run_cost_usd_p10"] == once["test-four"]["run_cost_usd_p90"]  # fixed commitment
    assert reused["test-four"]["run_cost_usd_p50"] < whole / 10
    assert "3-year" in once["test-four"]["basis"] and "reused" in reused["test-four"]["basis"]


def test_an_option_that_cannot_work_stays_listed_with_the_reason():
    plan = make_plan(PRETRAIN, model="llama-3.1-405b", cluster={"gpu": "h100-sxm", "gpus": 8})
    rows = options.explore(plan, gpus=["l4", "h100-sxm"])
    l4 = [r for r in rows if r["gpu"] == "l4"]
    assert l4 and all(r["excluded"] and r["rank"] is None for r in l4)
    assert any("memory" in r["excluded"] for r in l4)


def test_serving_options_rank_by_cost_per_month():
    rows = options.explore(PLANS / "inference.yaml", gpus=["h100-sxm", "h200"], pricings=["on-demand"])
    ranked = [r for r in rows if not r["excluded"]]
    assert ranked and all(r["usd_per_month"] > 0 and r["days_p50"] is None for r in ranked)
    assert [r["usd_per_month"] for r in ranked] == sorted(r["usd_per_month"] for r in ranked)
    assert [r["usd_per_million_tokens"] for r in ranked] == sorted(r["usd_per_million_tokens"] for r in ranked)


def test_serving_options_cover_precisions_layouts_and_pools():
    """Issue 23: every GPU x layout x precision x one pool or two, at the plan's load and targets."""
    rows = options.explore(PLANS / "inference.yaml", gpus=["h100-sxm", "b200"], pricings=["on-demand"])
    assert {r["pools"] for r in rows} == {"one", "two"}
    assert all(r["layout"] and r["precision"] for r in rows)
    b200 = {r["precision"] for r in rows if r["gpu"] == "b200"}
    assert any("weights FP4" in p for p in b200) and any("weights FP8" in p for p in b200)
    assert not any("weights FP4" in r["precision"] for r in rows if r["gpu"] == "h100-sxm" and not r["plans_own"])
    own = [r["offer"] for r in rows if r["gpu"] == "h100-sxm" and r["plans_own"]]
    assert own and len(own) == len(set(own))  # the plan's own variant once per offer


def test_the_serving_options_table_says_what_its_layout_codes_mean():
    """A client reads "TP2 PP2" in the Layout column: the table ends with what each code it shows means, and only
    those (a training table, with no layout column, has none)."""
    from aiplan.model import layout_legend

    rows = options.explore(PLANS / "inference.yaml", gpus=["h100-sxm", "b200"], pricings=["on-demand"])
    shown = [r["layout"] for r in rows if not r["excluded"]]
    legend = next(line for line in options.format_options(rows).splitlines() if line.startswith("Layouts: "))
    codes = {part.rstrip("0123456789") for text in shown for pool in text.split(", ")
             for part in pool.removeprefix("prefill ").removeprefix("decode ").split()}
    assert codes and {c.split(" n, ")[0] for c in legend.removeprefix("Layouts: ").split("; ")} == codes
    assert legend == layout_legend(shown) and "PP n, the layers in n stages" in layout_legend(["TP2 PP2"])
    assert not any(line.startswith("Layouts: ") for line in
                   options.format_options(options.explore(load_plan(PLANS / "finetune-lora.yaml"))).splitlines())


def test_the_plans_own_serving_option_shows_the_plans_own_costs():
    # the report puts the options table beside the plan's figures: the same offer, pricing and
    # server must cost the same per month and per million tokens in both
    plan = load_plan(PLANS / "inference.yaml")
    c = evaluate(plan)["cost"]
    rows = {(r["offer"], r["pricing"]): r for r in options.explore(plan) if r["gpu"] == plan.gpu.id and r["plans_own"]}
    rented, bought = rows[(c["cloud"], c["pricing_used"])], rows[(plan.server.id, "buy")]
    assert rented["usd_per_month"] == pytest.approx(c["cloud_usd_per_month"], rel=1e-9)
    assert rented["usd_per_million_tokens"] == pytest.approx(c["usd_per_million_tokens"], rel=1e-9)
    assert bought["usd_per_month"] == pytest.approx(c["onprem_usd_per_month"], rel=1e-9)
    assert bought["usd_per_million_tokens"] == pytest.approx(c["usd_per_million_tokens_onprem"], rel=1e-9)


def test_power_and_co2_count_the_gpus_rented_and_the_servers_bought():
    """Three GPUs rented on a 72-GPU rack draw 3/72 of the rack; buying takes the whole rack, whatever GPU count a
    serving variant needs."""
    catalog = load_catalog()
    plan = make_plan(INFERENCE, cluster={"gpu": "gb300"})
    fac = evaluate(plan)["facility"]
    rows = options.explore(plan, gpus=["gb300"])
    rented = [r for r in rows if r["pricing"] != "buy" and r.get("instances")]
    bought = [r for r in rows if r["pricing"] == "buy"]
    assert rented and bought and {r["gpus"] for r in rows} - {5}  # variants other than the plan's own GPU count
    for r in rented:
        share = r["instances"] * catalog.clouds[r["offer"]].gpus / 72
        assert r["mw"] * 1000 == pytest.approx(fac["total_kw"] * share, rel=1e-9)
        assert r["co2_t"] == pytest.approx(fac["co2_t"] * share, rel=1e-9)
    assert all(r["mw"] * 1000 == pytest.approx(fac["total_kw"], rel=1e-9) for r in bought)


def test_command_json_csv_and_bad_arguments(capsys):
    assert main(["options", str(PLANS / "example.yaml"), "--format", "json", "--top", "3",
                 "--gpus", "h100-sxm,h200,b200"]) == 0
    rows = json.loads(capsys.readouterr().out)
    ranked = [r for r in rows if r["rank"]]
    assert len(ranked) == 3 and all(set(REQUIRED) <= set(r) for r in rows)
    assert all(0.0 <= r["deadline_probability"] <= 1.0 for r in ranked)
    assert main(["options", str(PLANS / "example.yaml"), "--format", "csv", "--by", "days", "--gpus", "h100-sxm"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    days = [float(r["days_p50"]) for r in table if r["rank"]]
    assert days == sorted(days)
    assert main(["options", str(PLANS / "example.yaml"), "--gpus", "h100sxm"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "h100sxm" in err and "h100-sxm" in err
    # one line naming the option, what is allowed and the value given
    assert main(["options", str(PLANS / "example.yaml"), "--pricing", "spott"]) == 2
    assert capsys.readouterr().err == (
        "error: --pricing: must be one of on-demand, reserved-1y, reserved-3y, spot, buy, got 'spott'\n")
    # a service has no run time: ranking its options by days would rank none
    assert main(["options", str(PLANS / "inference.yaml"), "--by", "days"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--by: a serving plan has no run time to rank by" in err and "'days'" in err


def test_options_do_not_change_the_plan():
    plan = copy.deepcopy(_plan())
    before = copy.deepcopy(plan)
    options.explore(plan, gpus=["h100-sxm"], pricings=["on-demand"])
    assert plan == before


@pytest.mark.parametrize("plan", ["example.yaml", "inference.yaml"])
def test_pareto_chart_renders_offline(plan):
    import vl_convert as vlc

    rows = options.explore(PLANS / plan, gpus=["h100-sxm", "h200", "b200"])
    svg = vlc.vegalite_to_svg(charts.pareto_chart(rows, 30).to_json())
    assert svg.startswith("<svg") and "<path" in svg and "the best" in svg
    front = options.pareto_front(rows)
    for a in front:  # nothing on the front is beaten on both axes by another ranked option
        assert not any(b["days_p50"] < a["days_p50"] and b["run_cost_usd_p50"] < a["run_cost_usd_p50"]
                       for b in rows if not b["excluded"] and b.get("days_p50") is not None)


@pytest.mark.parametrize("low, high, text", [(18.2, 33.6, "18–34 days"), (0.62, 1.16, "15–28 hours"),
                                             (0.09, 0.12, "2–3 hours"), (0.5, 0.52, "12 hours"),
                                             (1.4, 2.6, "1–3 days")])
def test_run_times_read_in_days_or_hours(low, high, text):
    """A run of under two days reads in hours ("2–3 hours", not "0" days or "1 days"); whole days otherwise."""
    from aiplan.analysis.options import time_range_text

    assert time_range_text(low, high) == text


def test_the_options_table_speaks_words_and_leaves_out_what_does_not_apply():
    """`aiplan options` names pricings as the app does ("Reserved 3 years", not "reserved-3y"), counts the options it
    leaves out with a thousands separator, and has no deadline column for a plan without a deadline."""
    from aiplan.cost import PRICING_LABELS

    rows = options.explore(load_plan(PLANS / "finetune-lora.yaml"))
    text = options.format_options(rows)
    header = text.splitlines()[2]
    assert "Deadline odds" not in header and "Time P10–P90" in header
    ranked = [r for r in rows if not r["excluded"]]
    first = text.splitlines()[3]
    assert PRICING_LABELS[ranked[0]["pricing"]] in first and f" {ranked[0]['pricing']} " not in first
    left_out = sum(1 for r in rows if r["excluded"])
    assert f"Not ranked ({left_out:,} option{'s' if left_out != 1 else ''};" in text
    assert "Deadline odds" in options.format_options(options.explore(load_plan(PLANS / "example.yaml"))).splitlines()[2]
