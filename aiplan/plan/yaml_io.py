"""A plan as YAML: dump (optionally rounded for people) and ``--set`` overrides."""


from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

import yaml

from ..core.errors import PlanError, Problem
from ..core.inputs import parse_yaml
from .load import Plan

# --- YAML and overrides ---------------------------------------------------------------------------


def _rounded(value: Any) -> Any:
    """Floats to 12 significant digits (0.4100000000000001 -> 0.41), recursively."""
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def dump_plan(data: Mapping, rounded: bool = False) -> str:
    """The plan as YAML, key order kept; round-trips through :func:`load_plan`.

    ``rounded``: floats to 12 significant digits (what a person typed, not the arithmetic noise of
    a slider: 0.4100000000000001 -> 0.41); the app saves plans this way.
    """
    if isinstance(data, Plan):
        data = data.data
    data = _rounded(dict(data)) if rounded else dict(data)
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True)


def apply_overrides(plan: Any, overrides: list[str]) -> dict:
    """Apply ``section.key=value`` overrides (values parsed as YAML) to a copy of ``plan``."""
    if plan is None:
        plan = {}
    if not isinstance(plan, Mapping):
        raise PlanError(Problem("plan", "must be a mapping with sections model, workload, cluster, facility, cost",
                                plan))
    out = copy.deepcopy(dict(plan))
    problems = []
    for item in overrides:
        path, _, text = item.partition("=")
        keys = [k for k in path.strip().split(".") if k]
        if not _ or not keys:
            problems.append(Problem("--set", "must look like section.key=value", item))
            continue
        try:
            value = parse_yaml(text, f"--set {path}", document=False) if text.strip() else None
        except PlanError:
            value = text
        node = out
        for key in keys[:-1]:
            if not isinstance(node.get(key), dict):
                node[key] = {"from": node[key]} if key == "model" and isinstance(node.get(key), str) else {}
            node = node[key]
        node[keys[-1]] = value
    if problems:
        raise PlanError(problems)
    return out
