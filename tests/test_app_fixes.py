"""Suggested fixes: applying the overrides of :func:`aiplan.analysis.fixes.suggest_fix` makes the problem go away.

Each case is a plan that does not work for one of the reasons the app's banner covers (memory,
a missed or unreachable deadline, an absurd duration, a missing price); the fix is checked against
:func:`aiplan.evaluate` itself.
"""

from __future__ import annotations

import re

import pytest
import yaml
from conftest import PLANS

from aiplan import evaluate
from aiplan.analysis.fixes import PROBLEMS, TARGET_DAYS, problems, suggest_fix, with_overrides

CASES = {
    "does-not-fit": yaml.safe_load((PLANS / "does-not-fit.yaml").read_text()),
    "absurd-duration": {"name": "405B on one server", "model": "llama-3.1-405b",
                        "workload": {"kind": "pretrain", "tokens": 15e12}, "cluster": {"gpu": "h100-sxm", "gpus": 8}},
    "deadline-missed": {"name": "70B in 30 days on 512", "model": "llama-3.1-70b",
                        "workload": {"kind": "pretrain", "tokens": 2e12},
                        "cluster": {"gpu": "h100-sxm", "gpus": 512, "deadline_days": 30}},
    "deadline-unreachable": {"name": "405B in a quarter hour", "model": "llama-3.1-405b",
                             "workload": {"kind": "pretrain", "tokens": 15e12},
                             "cluster": {"gpu": "h100-sxm", "deadline_days": 0.01}},
    "no-server-price": {"name": "H200 DGX", "model": "llama-3.1-8b", "workload": {"kind": "finetune", "tokens": 1e9},
                        "cluster": {"gpu": "h200", "gpus": 8}, "facility": {"server": "dgx-h200"}},
    # one server of H100 (pipeline stages across servers would hold bf16: issue 23's serving layouts)
    "inference-does-not-fit": {"name": "405B on one H100 server", "model": "llama-3.1-405b",
                               "workload": {"kind": "inference", "requests_per_s": 5},
                               "cluster": {"gpu": "h100-sxm", "pipeline_parallel": 1}},
    "rack-over-budget": {"name": "DGX B200 on 10 kW racks", "model": "llama-3.1-70b",
                         "workload": {"kind": "pretrain", "tokens": 2e12}, "cluster": {"gpu": "b200", "gpus": 512},
                         "facility": {"rack_kw": 10}},
    "air-cooled-dgx": {"name": "DGX H100 on air", "model": "llama-3.1-70b", "workload": {"kind": "pretrain",
                       "tokens": 2e12}, "cluster": {"gpu": "h100-sxm", "gpus": 1024},
                       "facility": {"cooling": "air", "rack_kw": 60}},
}


def ids(result) -> set[str]:
    return {c["id"] for c in result["checks"]}


@pytest.mark.parametrize("case", CASES)
def test_applying_the_fix_removes_the_problem(case):
    raw = CASES[case]
    before = evaluate(raw)
    found = {c["id"] for c in problems(before)}
    assert found, f"{case} should not work as written"
    fix = suggest_fix(raw, before)
    assert fix is not None and fix.applicable, fix
    after = evaluate(with_overrides(raw, fix.overrides))
    assert not found & ids(after), (fix, ids(after))
    assert set(fix.solves) == found - ids(after)
    assert not re.search(r"[a-z]+_[a-z_]+|\baiplan\.", fix.label), fix.label  # words for a client


def test_the_memory_fix_is_the_fewest_gpus_that_keep_the_headroom():
    """The layout search says where the model fits at all; the fix goes as far as the fewest GPUs on which a
    layout stays within FIX_MEMORY_HEADROOM of the usable memory (landing at 99% is not a fix)."""
    from aiplan.analysis.fixes import FIX_MEMORY_HEADROOM
    from aiplan.cluster import parallel
    from aiplan.plan import load_plan

    raw = CASES["does-not-fit"]
    result = evaluate(raw)
    hinted = int(re.search(r"would fit on ([\d,]+) GPUs", result["cluster"]["fit_hint"]).group(1).replace(",", ""))
    fix = suggest_fix(raw, result)
    n = fix.overrides["cluster.gpus"]
    assert n >= hinted and n % 8 == 0
    assert fix.label.startswith(f"Use {n} GPUs with ZeRO-3")
    after = evaluate(with_overrides(raw, fix.overrides))
    assert after["memory"]["per_gpu_gb"] <= FIX_MEMORY_HEADROOM * after["memory"]["usable_gb"]
    plan = load_plan(raw)
    table = parallel.search(plan, parallel.inputs(plan, result), n - 8)  # one server less: nothing within headroom
    assert not (table["fits"] & (table["per_gpu_gb"] <= FIX_MEMORY_HEADROOM * result["memory"]["usable_gb"])).any()


@pytest.mark.parametrize("case", CASES)
def test_no_fix_lands_above_the_headroom_and_each_lists_its_changes(case):
    from aiplan.analysis.fixes import FIX_MEMORY_HEADROOM, suggest_fixes

    raw = CASES[case]
    before = evaluate(raw)
    fixes = suggest_fixes(raw, before)
    assert 1 <= len(fixes) <= 3
    for fix in fixes:
        after = evaluate(with_overrides(raw, fix.overrides))
        moved = after["memory"]["per_gpu_gb"] != before["memory"]["per_gpu_gb"]
        assert not moved or after["memory"]["per_gpu_gb"] <= FIX_MEMORY_HEADROOM * after["memory"]["usable_gb"]
        assert fix.changes and all(old != new for _path, old, new in fix.changes)
        assert {path for path, _old, _new in fix.changes} <= set(fix.overrides)
    assert len({tuple(sorted(f.overrides.items(), key=str)) for f in fixes}) == len(fixes)  # no choice twice


def test_a_fix_that_keeps_one_server_comes_with_a_quality_note():
    """405B full fine-tune on one server: more GPUs gives up the server; QLoRA keeps it and says to check quality."""
    from aiplan.analysis.fixes import suggest_fixes

    fixes = suggest_fixes(CASES["does-not-fit"])
    more, qlora = fixes[0], next(f for f in fixes if f.overrides.get("workload.method") == "qlora")
    nodes = evaluate(with_overrides(CASES["does-not-fit"], more.overrides))["cluster"]["nodes"]
    assert more.breaks == (f"needs {nodes} servers instead of one",) and nodes > 1
    assert "the 8 GPUs on one server" in qlora.keeps and qlora.breaks == ("changes the method",)
    assert "check the quality" in qlora.note
    assert evaluate(with_overrides(CASES["does-not-fit"], qlora.overrides))["cluster"]["nodes"] == 1


def test_serving_that_does_not_fit_gets_precisions_and_a_gpu_to_choose_from():
    from aiplan.analysis.fixes import suggest_fixes

    raw = {"name": "405B chat", "model": "llama-3.1-405b", "workload": {"kind": "inference", "requests_per_s": 2},
           "cluster": {"gpu": "h100-sxm", "pipeline_parallel": 1}}  # one server (pipeline stages would hold it)
    fixes = suggest_fixes(raw)
    precisions = [f.overrides.get("workload.weight_precision") for f in fixes]
    assert precisions[:2] == ["fp8", "int4"]  # they keep the GPU, so they come first
    assert "lossless" in fixes[0].note and "check the model's answers" in fixes[1].note
    assert fixes[2].overrides["cluster.gpu"] != "h100-sxm" and fixes[2].breaks == ("changes the GPU",)


def test_a_missed_deadline_offers_more_gpus_or_a_later_deadline():
    from aiplan.analysis.fixes import suggest_fixes

    raw = CASES["deadline-missed"]
    fixes = suggest_fixes(raw)
    by_field = {next(iter(f.overrides)): f for f in fixes}
    more = by_field["cluster.gpus"]
    assert more.breaks == (f"changes the GPUs from 512 to {more.overrides['cluster.gpus']:,}",)
    later = by_field["cluster.deadline_days"]
    assert later.breaks[0].startswith("moves the deadline to ") and "the plan's 512 GPUs" in later.keeps
    assert evaluate(with_overrides(raw, later.overrides))["compute"]["meets_deadline"] is True


def test_an_absurd_run_is_resized_to_the_target_time():
    fix = suggest_fix(CASES["absurd-duration"])
    after = evaluate(with_overrides(CASES["absurd-duration"], fix.overrides))
    assert after["compute"]["wall_clock_days"] <= TARGET_DAYS * 1.01
    assert after["memory"]["fits"] is True


def test_a_missed_deadline_is_met_by_the_gpus_the_deadline_sizes():
    raw = CASES["deadline-missed"]
    fix = suggest_fix(raw)
    assert fix.overrides["cluster.gpus"] > raw["cluster"]["gpus"]
    sized = evaluate(with_overrides(raw, {"cluster.gpus": None}))
    assert fix.overrides["cluster.gpus"] == sized["cluster"]["gpus"]
    assert evaluate(with_overrides(raw, fix.overrides))["compute"]["meets_deadline"] is True


def test_a_price_no_catalog_row_has_gets_words_not_overrides():
    raw = {"model": "llama-3.1-8b", "workload": {"kind": "finetune", "tokens": 1e9},
           "cluster": {"gpu": "mi325x", "gpus": 8}}  # no published MI325X server price
    result = evaluate(raw)
    assert "no-server-price" in ids(result)
    fix = suggest_fix(raw, result)
    assert not fix.applicable and fix.label.startswith("Enter the quoted price")


def test_a_plan_that_works_needs_no_fix():
    assert suggest_fix(PLANS / "example.yaml") is None
    assert not problems(evaluate(PLANS / "example.yaml"))


def test_with_overrides_sets_and_removes_fields_on_a_copy():
    raw = {"cluster": {"gpus": 8, "zero_stage": 0}}
    out = with_overrides(raw, {"cluster.gpus": 16, "cluster.zero_stage": None, "cost.cloud": "aws-p5.48xlarge"})
    assert out == {"cluster": {"gpus": 16}, "cost": {"cloud": "aws-p5.48xlarge"}}
    assert raw == {"cluster": {"gpus": 8, "zero_stage": 0}}


def test_every_problem_has_a_fixer_and_a_title():
    from aiplan.analysis.fixes import FIXERS, PROBLEM_TITLES

    assert set(FIXERS) == set(PROBLEMS) == set(PROBLEM_TITLES)
