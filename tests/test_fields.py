"""The field registry: every result key has a label, unit and format, and the one formatter reads well."""

from __future__ import annotations

import copy
import re

import pytest
from conftest import FINETUNE, INFERENCE, PLANS, PRETRAIN, make_plan

from aiplan import evaluate
from aiplan.core import fields
from aiplan.core.fields import format_value

#: plans that between them reach every optional branch of the result (LoRA, QLoRA, spot, growth, MoE)
EXTRA_PLANS = [
    make_plan(FINETUNE, workload={"method": "qlora"}, cost={"pricing": "spot"}),
    make_plan(PRETRAIN, facility={"growth_per_year": 0.5}),
    make_plan(PRETRAIN, cluster={"gpus": None, "deadline_days": 0.01}, workload={"tokens": 1e16}),
    copy.deepcopy(INFERENCE),
]


@pytest.fixture(scope="module")
def results():
    return [evaluate(p) for p in sorted(PLANS.glob("*.yaml"))] + [evaluate(p) for p in EXTRA_PLANS]


def test_every_result_key_has_a_registry_entry(results):
    missing = sorted({k for r in results for k in fields.result_keys(r)} - set(fields.RESULT_FIELDS))
    assert not missing, f"add these keys to aiplan/core/result_fields.csv: {missing}"


def test_every_registry_entry_is_a_key_some_result_has(results):
    seen = {k for r in results for k in fields.result_keys(r)}
    assert not sorted(set(fields.RESULT_FIELDS) - seen), "stale registry entries"


def test_labels_are_human():
    for f in fields.RESULT_FIELDS.values():
        assert f.label and "_" not in f.label and f.label[0].isupper(), f.key
        assert f.doc.endswith(".") and "_" not in f.doc.replace("cluster.gpus", ""), f.key


def test_two_quantities_never_share_a_label(results):
    """A spreadsheet or the CLI table lists every field by its label: two figures under one label must be
    the same quantity (the one exception, GPUs, is checked to agree in every result)."""
    by_label: dict[str, list[str]] = {}
    for f in fields.RESULT_FIELDS.values():
        if "[]" not in f.key:
            by_label.setdefault(f.label, []).append(f.key)
    shared = {label: keys for label, keys in by_label.items() if len(keys) > 1}
    assert shared == {"GPUs": ["compute.gpus", "cluster.gpus"]}
    for r in results:
        assert r["compute"]["gpus"] == r["cluster"]["gpus"]


@pytest.mark.parametrize("value,kind,text", [
    (4_990_000.0, "usd", "$4.99M"), (127_664_377.3, "usd", "$128M"), (1.28e9, "usd", "$1.28B"),
    (41_667.0, "usd", "$41.7K"), (950.0, "usd", "$950"), (12.29, "usd", "$12.29"), (6.88, "usd_rate", "$6.88"),
    (0.1, "usd_rate", "$0.10"), (0.055, "usd_rate", "$0.055"),
    (1803.67, "power", "1.80 MW"), (850.2, "power", "850 kW"), (13.6, "power", "13.6 kW"),
    (0.38, "pct", "38%"), (0.0533, "pct", "5.3%"), (0.9934, "pct", "99.3%"), (1.0, "pct", "100%"),
    (0.5, "days", "12.0 hours"), (1.35, "days", "32.4 hours"), (2.0, "days", "2.00 days"),
    (29.99, "days", "30.0 days"), (400.0, "days", "13.1 months"),
    (20462.0, "days", "56.0 years"), (9.9, "minutes", "9.90 min"), (0.98, "seconds", "980 ms"),
    (720_646.8, "count", "720,647"), (1, "count", "1"), (70_553_706_496, "big", "70.6 billion"),
    (2.0e12, "big", "2.00 trillion"), (9.75e23, "flops", "9.75 × 10²³ FLOP"), (47.89, "gb", "47.9 GB"),
    (988.0, "gb", "988 GB"), (5681.9, "gb", "5.68 TB"), (173.9, "tb", "174 TB"), (1008.0, "gb_per_s", "1.01 TB/s"),
    (None, "usd", "n/a"), (True, "bool", "yes"), (float("nan"), "number", "n/a"),
    (0.897, "odds", "89%"), (0.8, "odds", "80%"), (0.29, "odds", "29%"), (1.0, "odds", "100%"),
    (0.004, "odds", "under 1%"), (0.0, "odds", "0%"),
])
def test_format_value(value, kind, text):
    assert format_value(value, kind) == text


def test_large_quantities_read_in_words_and_counts_stay_exact():
    """GPU-hours, cluster throughput and heat load are quantities, not counts: from a million on they read in
    words; cooling reads with three figures (1.49 tons, not "1 tons"); switches and cables stay exact counts."""
    assert fields.format_field("compute.gpu_hours", 10_192_391.4) == "10.2 million GPU-h"
    assert fields.format_field("compute.gpu_hours", 314.4) == "314 GPU-h"
    assert fields.format_field("compute.tokens_per_s", 3_679_215.0) == "3.68 million tokens/s"
    assert fields.format_field("facility.heat_btu_per_hr", 69_033_631.0) == "69.0 million BTU/h"
    assert fields.format_field("facility.cooling_tons", 1.49) == "1.49 tons"
    assert fields.format_field("network.cables", 27_048) == "27,048"


def test_units_and_singulars():
    assert format_value(1, "count", "servers") == "1 server"
    assert format_value(126, "count", "servers") == "126 servers"
    assert format_value(1, "count", "tokens/s") == "1 tokens/s"


def test_no_e_notation_in_any_formatted_value(results):
    for r in results:
        for key in fields.result_keys(r):
            node = r
            for part in key.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            if isinstance(node, (int, float)) and not isinstance(node, bool):
                text = fields.format_field(key, node)
                assert not re.search(r"\de[+-]?\d", text), (key, text)


def test_the_odds_shown_never_exceed_the_odds_sized_for():
    """Whole GB200 NVL72 racks give a 70B pretraining plan 504 GPUs and a 0.897 chance of its deadline, short of the
    576 GPUs a 90% chance takes: the chance reads 89%, not a rounded 90% beside "576 for a 90% chance"."""
    result = evaluate(make_plan(PRETRAIN, model="llama-3.1-70b", cluster={"gpu": "gb200", "gpus": None,
                                                                          "deadline_days": 30},
                                facility={"server": "gb200-nvl72", "rack_kw": 150}, cost={"cloud": None},
                                workload={"seq_len": 8192, "global_batch_tokens": 16e6}))
    chance, gpus = result["compute"]["deadline_probability"], result["cluster"]["gpus"]
    assert chance < 0.9 and gpus < result["compute"]["deadline_gpus_p90"]
    shown = fields.format_field("compute.deadline_probability", chance)
    assert int(shown.rstrip("%")) < 90 and int(shown.rstrip("%")) == int(chance * 100)

