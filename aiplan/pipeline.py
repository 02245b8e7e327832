"""Chain the four steps (model -> cluster -> facility -> cost) into one result.

The result is a nested dict of plain numbers with every key of the contract
(``docs/contract.md``) present; a key that does not apply to
the workload, or that no step has computed, is ``None``.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from .core.catalog import Catalog
from .plan import Plan, load_plan

#: Required result keys by section (the public contract). Steps may add more.
RESULT_KEYS: dict[str, tuple[str, ...]] = {
    "model": ("params", "active_params", "flops_per_token"),
    "memory": ("weights_gb", "gradients_gb", "optimizer_gb", "activations_gb", "kv_cache_gb",
               "per_gpu_gb", "gpu_capacity_gb", "fits", "rule_of_thumb_gb"),
    "compute": ("total_flops", "gpus", "mfu", "gpu_hours", "gpu_hours_low", "gpu_hours_high",
                "wall_clock_days"),
    "inference": ("kv_bytes_per_token", "prefill_tokens_per_s_per_gpu", "decode_tokens_per_s_per_gpu",
                  "ttft_ms", "tpot_ms", "max_concurrent_sequences", "replicas", "gpus"),
    "cluster": ("nodes", "tensor_parallel", "pipeline_parallel", "data_parallel", "zero_stage"),
    "network": ("allreduce_s", "comm_fraction", "leaf_switches", "spine_switches", "core_switches", "cables"),
    "storage": ("read_gb_per_s", "write_gb_per_s", "capacity_tb"),
    "checkpoint": ("size_gb", "write_s", "interval_min"),
    "reliability": ("interruptions_per_day", "goodput"),
    "facility": ("it_kw", "total_kw", "provisioned_kw", "heat_btu_per_hr", "cooling_tons", "cooling",
                 "racks", "floor_m2", "energy_mwh", "co2_t"),
    "cost": ("cloud_usd", "onprem_usd", "cloud_usd_per_gpu_hour", "onprem_usd_per_gpu_hour",
             "breakeven_months", "breakeven_utilisation"),
}


def empty_result() -> dict[str, Any]:
    """A result with every required key set to ``None``."""
    result: dict[str, Any] = {"plan": None}
    result.update({section: dict.fromkeys(keys) for section, keys in RESULT_KEYS.items()})
    result["checks"] = []
    return result


def _steps():
    from . import cluster, cost, facility, model, uncertainty

    return (model.describe, cluster.layout, model.step, cluster.step, facility.step, cost.step, uncertainty.step)


def evaluate_plan(plan: Plan) -> dict[str, Any]:
    """Run the steps on a validated :class:`Plan`; the result keeps numpy values."""
    result = empty_result()
    result["plan"] = copy.deepcopy(plan.data)
    for step in _steps():
        step(plan, result)
    from .findings import run_checks

    result["checks"] = run_checks(plan, result)
    return result


def evaluate(plan: Any, catalog: Catalog | None = None, base_dir: Any = None) -> dict[str, Any]:
    """Evaluate a plan (dict, YAML text, path or :class:`Plan`) into the result dict.

    ``base_dir``: folder relative paths in the plan resolve against (default: the plan file's
    folder, else the current folder).

    Raises
    ------
    PlanError
        if the plan is invalid. A plan that does not fit is a result
        (``memory.fits: false``), not an error.
    """
    return to_plain(evaluate_plan(load_plan(plan, catalog, base_dir)))


def to_plain(value: Any) -> Any:
    """Convert numpy scalars/arrays and tuples to JSON-ready Python; NaN/inf become None."""
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if value is None or kind in (str, int, bool):
        return value
    if kind is dict:
        return {str(k): to_plain(v) for k, v in value.items()}
    if kind in (list, tuple):
        return [to_plain(v) for v in value]
    if hasattr(value, "tolist"):  # numpy scalar or array
        return to_plain(value.tolist())
    if isinstance(value, dict):  # subclasses, e.g. OrderedDict
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    return value
