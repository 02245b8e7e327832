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


def test_the_memory_fix_agrees_with_the_layout_search_and_is_the_fewest_gpus():
    raw = CASES["does-not-fit"]
    result = evaluate(raw)
    hinted = int(re.search(r"would fit on ([\d,]+) GPUs", result["cluster"]["fit_hint"]).group(1).replace(",", ""))
    fix = suggest_fix(raw, result)
    assert fix.overrides["cluster.gpus"] == hinted
    assert fix.label == f"Use {hinted} GPUs with ZeRO-3 and full recompute"
    one_server_less = with_overrides(raw, {"cluster.gpus": hinted - 8, "cluster.tensor_parallel": None,
                                           "cluster.pipeline_parallel": None, "cluster.zero_stage": None})
    assert evaluate(one_server_less)["memory"]["fits"] is False  # no layout at all fits on one server less


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
