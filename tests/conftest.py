"""Shared fixtures: the shipped catalog and small plan builders."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from aiplan import load_catalog, load_plan

ROOT = Path(__file__).resolve().parent.parent
PLANS = ROOT / "plans"

PRETRAIN = {
    "name": "test pretrain",
    "model": "llama-2-7b",
    "workload": {"kind": "pretrain", "tokens": 2.0e12, "seq_len": 4096},
    "cluster": {"gpu": "a100-80gb", "gpus": 256},
}
FINETUNE = {
    "name": "test finetune",
    "model": "llama-3.1-8b",
    "workload": {"kind": "finetune", "method": "lora", "tokens": 1.0e9, "seq_len": 4096},
    "cluster": {"gpu": "h100-sxm", "gpus": 8},
}
INFERENCE = {
    "name": "test inference",
    "model": "llama-3.1-70b",
    "workload": {"kind": "inference", "requests_per_s": 10, "prompt_tokens": 2000, "output_tokens": 500},
    "cluster": {"gpu": "h100-sxm"},
}


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()


def make_plan(base: dict, **sections) -> dict:
    """Deep copy of ``base`` with ``section={field: value}`` merged in."""
    plan = copy.deepcopy(base)
    for section, fields in sections.items():
        if isinstance(fields, dict) and isinstance(plan.get(section), dict):
            plan.setdefault(section, {}).update(fields)
        else:
            plan[section] = fields
    return plan


@pytest.fixture
def pretrain():
    return load_plan(copy.deepcopy(PRETRAIN))
