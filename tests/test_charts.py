"""Chart builders: valid Vega-Lite, the expected fields, and data taken from evaluate()."""

from __future__ import annotations

import copy
import re

import pytest

alt = pytest.importorskip("altair")
vl_convert = pytest.importorskip("vl_convert")

from conftest import INFERENCE, PLANS, make_plan  # noqa: E402

from aiplan import evaluate  # noqa: E402
from aiplan.pipeline import empty_result  # noqa: E402
from aiplan.present import charts as C  # noqa: E402

PLAN_FILES = ["example", "inference", "finetune-lora", "moe-pretrain", "does-not-fit"]


@pytest.fixture(scope="module")
def results():
    return {name: evaluate(PLANS / f"{name}.yaml") for name in PLAN_FILES}


def rows_of(spec: dict) -> list[list[dict]]:
    """Every inline dataset of a chart spec."""
    return list((spec.get("datasets") or {}).values())


def all_rows(spec: dict) -> list[dict]:
    return [row for ds in rows_of(spec) for row in ds]


def encodings(spec: dict) -> list[dict]:
    """Every encoding block in a (possibly layered / concatenated / faceted) spec."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            if "encoding" in node:
                found.append(node["encoding"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    return found


def fields(spec: dict) -> set[str]:
    return {ch.get("field") for enc in encodings(spec) for ch in enc.values() if isinstance(ch, dict)} - {None}


@pytest.mark.parametrize("plan", PLAN_FILES)
@pytest.mark.parametrize("name", sorted({**C.RESULT_CHARTS, **C.SWEEP_CHARTS}))
def test_every_builder_gives_valid_vega_lite(results, plan, name):
    builder = {**C.RESULT_CHARTS, **C.SWEEP_CHARTS}[name]
    chart = builder(results[plan])
    spec = chart.to_dict(validate=True)
    assert spec["usermeta"]["aiplan"]["chart"] == name
    assert len(all_rows(spec)) < 5000


@pytest.mark.parametrize("name", sorted(C.RESULT_CHARTS))
def test_missing_data_gives_a_note_not_an_error(name):
    chart = C.RESULT_CHARTS[name](empty_result())
    spec = chart.to_dict(validate=True)
    assert not C.is_available(chart)
    assert spec["usermeta"]["aiplan"]["available"] is False


def test_memory_chart_stacks_the_result_parts_against_capacity(results):
    res = results["example"]
    spec = C.memory_chart(res).to_dict(validate=True)
    parts = {r["part"]: r["gb"] for r in all_rows(spec) if "part" in r}
    for key, label in C.MEMORY_PARTS:
        if res["memory"][key]:
            assert parts[label] == pytest.approx(res["memory"][key])
    limits = {r["limit"]: r["gb"] for r in all_rows(spec) if "limit" in r}
    assert limits["GPU capacity"] == pytest.approx(res["memory"]["gpu_capacity_gb"])
    assert {"gb", "part"} <= fields(spec)


def test_cumulative_cost_marks_the_breakeven_month(results):
    res = results["example"]
    assert res["cost"]["breakeven_months"] is not None
    spec = C.cumulative_cost_chart(res).to_dict(validate=True)
    marks = [r for r in all_rows(spec) if "label" in r]
    assert marks and marks[0]["month"] == pytest.approx(res["cost"]["breakeven_months"])
    lines = [r for r in all_rows(spec) if r.get("option") == "cloud"]
    assert len(lines) == len(res["cost"]["monthly"])
    assert {"month", "usd", "option"} <= fields(spec)


def test_gpu_sweep_equals_evaluate_at_each_count(results):
    res = results["example"]
    counts = [256, 512, 1024]
    df = C.gpu_sweep(res, counts)
    assert list(df["gpus"]) == counts
    for n, days, onprem in zip(df["gpus"], df["wall_clock_days"], df["onprem_usd"]):
        plan = copy.deepcopy(res["plan"])
        plan["cluster"]["gpus"] = n
        plan["cluster"].pop("deadline_days")
        direct = evaluate(plan)
        assert days == direct["compute"]["wall_clock_days"]
        assert onprem == direct["cost"]["onprem_usd"]
    spec = C.training_sweep_chart(res, sweep=df).to_dict(validate=True)
    assert {"gpus", "wall_clock_days", "usd"} <= fields(spec)


def test_default_gpu_counts_bracket_the_plan(results):
    res = results["example"]
    counts = C.default_gpu_counts(res)
    assert min(counts) < C.gpu_count(res) < max(counts)


def test_utilisation_sweep_equals_evaluate(results):
    res = results["example"]
    df = C.utilisation_sweep(res, [0.3, 0.9])
    assert list(df["utilisation"]) == [0.3, 0.9]
    for u, cloud, onprem in zip(df["utilisation"], df["cloud_usd"], df["onprem_usd"]):
        plan = copy.deepcopy(res["plan"])
        plan["cost"]["utilisation"] = u
        at_u = evaluate(plan)["cost"]
        assert cloud == pytest.approx(at_u["cloud_usd"], rel=1e-12)
        assert onprem == pytest.approx(at_u["onprem_usd"], rel=1e-12)
    spec = C.utilisation_chart(res, sweep=df).to_dict(validate=True)
    marks = [r for r in all_rows(spec) if "label" in r]
    assert marks[0]["u"] == pytest.approx(res["cost"]["breakeven_utilisation"])


def test_inference_sweep_follows_the_request_rate(results):
    res = results["inference"]
    df = C.rate_sweep(res, [5, 20, 80])
    assert list(df["requests_per_s"]) == [5, 20, 80]
    plan = copy.deepcopy(res["plan"])
    plan["workload"]["requests_per_s"] = 80.0
    plan["cluster"].pop("gpus", None)
    assert df["gpus"].iloc[-1] == evaluate(plan)["inference"]["gpus"]
    assert not C.is_available(C.inference_sweep_chart(results["example"]))
    # counts tick at whole numbers (a sweep of 1 to 3 replicas ticked "0, 1, 1, 2, 2, 3, 3"), labels in words
    sweep = [{"requests_per_s": r, "gpus": g, "replicas": g, "pools": 1, "requests_per_s_per_replica": 5.5}
             for r, g in ((1, 1), (8, 2), (16, 3))]
    spec = C.inference_sweep_chart(res, sweep=sweep).to_dict()
    assert spec["encoding"]["y"]["axis"]["labelExpr"] == C.COUNT_LABEL_EXPR
    # drawn: a rack-scale service takes 1 compute and 1 other rack, an axis from 0 to 2 that Vega ticks at halves
    racks = C.racks_chart(evaluate(make_plan(INFERENCE, cluster={"gpu": "gb300"})))
    labels = [t for t in re.findall(r"<text[^>]*>([^<]*)</text>", vl_convert.vegalite_to_svg(racks.to_json()))
              if t.strip().isdigit()]
    assert labels == ["0", "1", "2"], labels
    assert {row["what"] for row in all_rows(spec) if "what" in row} == {"GPUs", "replicas"}


def test_the_rate_sweep_draws_replicas_only_where_one_pool_serves():
    """Where separate prefill and decode pools serve a rate, its GPUs are the two pools' and no one-pool replica
    count is drawn beside them (DeepSeek-R1 on H200 at a 50 ms time per output token: two pools from 25 req/s)."""
    res = evaluate({"model": "deepseek-r1", "workload": {
        "kind": "inference", "requests_per_s": 50, "prompt_tokens": 2000, "output_tokens": 500,
        "ttft_ms_target": 1000, "tpot_ms_target": 50}, "cluster": {"gpu": "h200"}})
    assert res["inference"]["disaggregated"]
    rows = C.rate_sweep_rows(res, [12.5, 50])
    by_rate = {row["requests_per_s"]: row for row in rows}
    assert by_rate[50]["pools"] == 2 and by_rate[50]["replicas"] is None
    assert by_rate[50]["gpus"] == res["inference"]["gpus"] == res["inference"]["two_pool_gpus"]
    assert by_rate[12.5]["pools"] == 1 and by_rate[12.5]["replicas"] >= 1
    title = C.inference_sweep_chart(res, sweep=rows).to_dict()["title"]
    assert title["subtitle"].endswith("two pools (prefill, decode) at 50 req/s")


def test_power_rows_add_up_to_the_facility_total(results):
    res = results["example"]
    rows = C.power_rows(res)
    assert sum(r["kw"] for r in rows) == pytest.approx(res["facility"]["total_kw"])
    assert "cooling and overhead (PUE)" in {r["part"] for r in rows}
    spec = C.facility_chart(res).to_dict(validate=True)
    assert "vconcat" in spec


def test_sensitivity_has_one_bar_per_driver_that_moves_the_cost(results):
    res = results["example"]
    drivers = {r["driver"] for r in res["cost"]["sensitivity"] if r["option"] == "onprem"}
    spec = C.sensitivity_chart(res).to_dict(validate=True)
    assert {r["driver"] for r in all_rows(spec) if "driver" in r} == drivers - {"cloud_price"}  # owning's price only
    # renting moves with its price and the MFU only; a service's cost over the period never moves with the MFU
    spec = C.sensitivity_chart(res, "cloud").to_dict(validate=True)
    assert {r["driver"] for r in all_rows(spec) if "driver" in r} == {"cloud_price", "mfu"}
    served = evaluate(PLANS / "inference.yaml")
    spec = C.sensitivity_chart(served).to_dict(validate=True)
    assert "mfu" not in {r["driver"] for r in all_rows(spec) if "driver" in r}


def test_layout_chart_from_candidates():
    res = empty_result()
    res["memory"]["gpu_capacity_gb"] = 80.0
    res["cluster"].update(tensor_parallel=8, pipeline_parallel=1, data_parallel=4, zero_stage=1, candidates=[
        dict(tensor_parallel=8, pipeline_parallel=1, data_parallel=4, zero_stage=1, micro_batch=1, recompute="none",
             per_gpu_gb=60.0, step_time_s=2.0, fits=True),
        dict(tensor_parallel=4, pipeline_parallel=2, data_parallel=4, zero_stage=1, micro_batch=1, recompute="none",
             per_gpu_gb=95.0, step_time_s=1.5, fits=False)])
    chart = C.layout_chart(res)
    spec = chart.to_dict(validate=True)
    pts = [r for r in all_rows(spec) if "layout" in r]
    assert [p["chosen"] for p in pts] == [True, False]
    assert {"per_gpu_gb", "step_time_s", "fits"} <= fields(spec)


def test_comparison_chart_and_table(results):
    picked = [results["example"], results["moe-pretrain"], results["inference"]]
    table = C.comparison_table(picked, ["a", "b", "c"])
    assert list(table.columns) == ["a", "b", "c"]
    assert table.loc["racks", "a"] == results["example"]["facility"]["racks"]
    spec = C.comparison_chart(picked, ["a", "b", "c"]).to_dict(validate=True)
    assert "facet" in spec
    assert {r["plan"] for r in all_rows(spec)} == {"a", "b", "c"}


def test_offline_svg_rendering_has_no_cdn(results):
    vlc = pytest.importorskip("vl_convert")
    svg = vlc.vegalite_to_svg(C.cumulative_cost_chart(results["example"]).to_dict())
    assert svg.startswith("<svg") and "cdn.jsdelivr" not in svg


def test_spec_renderer_gives_a_mimetype_nbformat_accepts(results):
    """The report kernel's ``spec`` renderer: the Vega-Lite spec under a ``+json`` mimetype.

    Altair's own ``mimetype`` renderer writes ``application/vnd.vegalite.v6.json``, which
    nbformat rejects as output data; this test fails if ours ever does the same.
    """
    nbformat = pytest.importorskip("nbformat")
    chart = C.memory_chart(results["example"])
    with alt.renderers.enable("spec"):
        bundle = chart._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert data[C.SPEC_MIMETYPE] == chart.to_dict()
    assert C.SPEC_MIMETYPE.startswith("application/vnd.vegalite.") and C.SPEC_MIMETYPE.endswith("+json")
    output = nbformat.v4.new_output("display_data", data=data)  # validates
    assert output["data"][C.SPEC_MIMETYPE]["usermeta"]["aiplan"]["chart"] == "memory"


def test_sweeps_as_rows_or_frames_draw_the_same_chart(results):
    res = results["example"]
    rows = C.gpu_sweep_rows(res, [256, 512])
    assert C.training_sweep_chart(res, sweep=rows).to_dict() == \
        C.training_sweep_chart(res, sweep=C.gpu_sweep(res, [256, 512])).to_dict()
