"""The pipeline: the steps in order, each making its own records; ``evaluate(plan) -> result``.

A step is a function ``(plan, result) -> record(s)``. It reads the records of the steps before it
through a read-only :class:`~aiplan.core.records.ResultView` (the same public keys as the final
result) and returns its own records; it never writes another step's record, and reading a record
a later step makes raises :class:`~aiplan.core.records.NotYetMade`. The public result is then
assembled from the records (:func:`~aiplan.core.records.assemble`) with every key of the
contract (``docs/contract.md``); a key that does not apply to the workload is ``None``.

Training and serving run the same steps; only the order of the first ones differs:

* training: the model is described, the cluster is sized for the deadline and laid out
  (``cluster``), then the model's memory and time follow that layout;
* serving: the model step sizes the replicas first (``inference``), then the cluster is laid
  out around them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from math import isfinite
from typing import Any

from . import cluster, cost, facility, findings, model, uncertainty
from .core.catalog import Catalog
from .core.records import ResultView, assemble, record
from .plan import Plan, load_plan


@dataclass(frozen=True)
class Step:
    """One step: its name, the function, and the records it makes (in the order it returns them)."""

    name: str
    run: Any
    makes: tuple[str, ...]


DESCRIBE = Step("model", model.describe, ("model",))
LAYOUT = Step("layout", cluster.layout, ("cluster",))
MODEL = Step("memory and time", model.step, ("memory", "compute", "inference"))
CLUSTER = Step("network, storage and reliability", cluster.step,
               ("network", "storage", "checkpoint", "reliability", "schedule"))
FACILITY = Step("facility", facility.step, ("facility",))
COST = Step("cost", cost.step, ("cost",))
UNCERTAINTY = Step("uncertainty", uncertainty.step, ("uncertainty",))

#: the steps of a training plan (pretrain, finetune), in order
TRAINING_STEPS: tuple[Step, ...] = (DESCRIBE, LAYOUT, MODEL, CLUSTER, FACILITY, COST, UNCERTAINTY)
#: the steps of a serving plan, in order
SERVING_STEPS: tuple[Step, ...] = (DESCRIBE, MODEL, LAYOUT, CLUSTER, FACILITY, COST, UNCERTAINTY)

#: Required result keys by section (the public contract). The records add more.
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


def steps_of(plan: Plan) -> tuple[Step, ...]:
    """The steps of ``plan`` in the order they run."""
    return SERVING_STEPS if plan.kind == "inference" else TRAINING_STEPS


def run(plan: Plan, until: str | None = None) -> ResultView:
    """Run the steps on a validated plan (up to and including the step named ``until``).

    Returns the :class:`~aiplan.core.records.ResultView` of the records made (a test or a notebook
    may stop after any step and read what it made).
    """
    view = ResultView(plan.data)
    for s in steps_of(plan):
        made = s.run(plan, view)
        made = made if isinstance(made, tuple) else (made,)
        names = tuple(r.kind for r in made)
        if names != s.makes:
            raise AssertionError(f"step {s.name!r} made {names}, not {s.makes}")
        view.add(*made)
        if s.name == until:
            break
    return view


def run_model(plan: Plan, **layout: Any) -> ResultView:
    """The model step alone on a plan: ``describe``, then ``step`` on a given layout, no search.

    Training: the layout is ``layout`` (``tensor_parallel=2, zero_stage=3``, ...), else the plan's
    own fields, else tp = pp = 1, ZeRO 1 and dp = gpus / (tp pp) on the plan's GPUs (one server's
    worth when the plan gives a deadline instead). Serving: the model step sizes the replicas.
    """
    view = run(plan, until=DESCRIBE.name)
    if plan.kind != "inference":
        c = plan.cluster
        gpus = c.get("gpus") or c["gpus_per_node"]
        lay = {k: c[k] for k in ("tensor_parallel", "pipeline_parallel", "data_parallel", "zero_stage",
                                 "expert_parallel") if c.get(k) is not None}
        lay.update(layout)
        tp, pp = lay.setdefault("tensor_parallel", 1), lay.setdefault("pipeline_parallel", 1)
        lay.setdefault("data_parallel", max(gpus // (tp * pp), 1))
        lay.setdefault("zero_stage", 1)
        lay.setdefault("expert_parallel", 1)
        view.add(record("cluster", gpus=gpus, **lay))
    view.add(*MODEL.run(plan, view))
    return view


def empty_result() -> dict[str, Any]:
    """A result with every key set to ``None`` (and no findings)."""
    return assemble(None, {})


def evaluate_plan(plan: Plan) -> dict[str, Any]:
    """Run the steps on a validated :class:`Plan`; the result keeps numpy values."""
    view = run(plan)
    result = assemble(_copy(plan.data), view.records)
    result["checks"] = findings.run_checks(plan, result)
    return result


def _copy(data: Any) -> Any:
    """A deep copy of plain plan data (dicts, lists, scalars), faster than :func:`copy.deepcopy`."""
    if isinstance(data, dict):
        return {k: _copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_copy(v) for v in data]
    return data


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


#: types :func:`to_plain` passes through unchanged
_PLAIN = frozenset({str, int, bool, type(None)})


def to_plain(value: Any) -> Any:
    """Convert numpy scalars/arrays and tuples to JSON-ready Python; NaN/inf become None."""
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if kind in _PLAIN:
        return value
    if kind is dict:  # plain values and finite floats inline: most of a result's values are
        return {k if type(k) is str else str(k): v if type(v) in _PLAIN or type(v) is float and isfinite(v)
                else to_plain(v) for k, v in value.items()}
    if kind in (list, tuple):
        return [v if type(v) in _PLAIN or type(v) is float and isfinite(v) else to_plain(v) for v in value]
    if hasattr(value, "tolist"):  # numpy scalar or array
        return to_plain(value.tolist())
    if isinstance(value, dict):  # subclasses, e.g. OrderedDict
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    return value
