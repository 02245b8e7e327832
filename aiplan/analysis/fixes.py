"""What would make a plan that cannot work work: one suggested change, in plain words, with its overrides.

A plan can be valid and still not work: the model does not fit in GPU memory, the run misses its
deadline (or no GPU count could meet it), a price the cost needs is missing, the run would take
longer than anyone would wait (or never finish), a server draws more than its rack may, the cooling
is too weak, or spot capacity would never get the work done. :func:`problems` lists those findings
of a result (the app's banner shows them); :func:`suggest_fix` says what would work ("Use 120 GPUs with ZeRO-3 and full
recompute") and gives the plan fields to change. A suggestion is only made when the plan with
those changes, evaluated again, no longer has the problem; a problem the kit cannot fix by itself
(a price no catalog row has) gets a sentence saying what to enter, and no overrides.

No formula lives here: GPU counts and layouts come from the layout search
(:mod:`aiplan.cluster.parallel`) and every suggestion is checked with :func:`aiplan.evaluate`.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..cluster import parallel
from ..cluster.parallel import layout_word
from ..core.assumptions import LARGEST_PUBLISHED_GPUS, TARGET_DAYS
from ..core.errors import PlanError
from ..core.fields import format_value as fmt
from ..pipeline import evaluate
from ..plan import Plan, load_plan, plan_as_data

#: findings that mean the plan does not work as written, in the order they are fixed (a fix that
#: changes the GPU count comes before the memory fix at that count)
PROBLEMS = ("deadline-unreachable", "run-never-finishes", "duration-absurd", "deadline-missed", "model-does-not-fit",
            "rack-over-budget", "rack-density-cooling", "spot-never-finishes", "no-server-power", "no-server-price",
            "no-cloud-offer")
#: what each problem means, in words (the banner's headline)
PROBLEM_TITLES = {
    "deadline-unreachable": "No cluster can meet the deadline",
    "duration-absurd": "The run would take longer than any plan can wait",
    "deadline-missed": "The run misses its deadline",
    "model-does-not-fit": "The model does not fit in GPU memory",
    "run-never-finishes": "The run would never finish",
    "rack-over-budget": "One server draws more than a rack's power budget",
    "rack-density-cooling": "The cooling cannot remove the racks' heat",
    "spot-never-finishes": "Spot capacity would make no progress",
    "no-server-power": "The server's power draw is unknown",
    "no-server-price": "The owned servers have no price",
    "no-cloud-offer": "No cloud price to compare with",
}
#: rounds of fixing (a fix may reveal the next problem: more GPUs, then a layout that fits)
MAX_ROUNDS = 3
#: global-batch doublings tried when the batch leaves too few sequences for the data-parallel ranks
#: (Llama 3 405B grew its batch from 4M to 16M tokens on up to 16,384 GPUs [arxiv-2407.21783])
MAX_BATCH_DOUBLINGS = 3


@dataclass(frozen=True)
class Fix:
    """A change that makes a plan work.

    ``label`` says it in plain words; ``overrides`` maps plan field paths (``cluster.gpus``) to new
    values (``None`` removes the field: the kit decides); ``solves`` lists the finding ids it makes
    go away; empty ``overrides`` means the kit cannot make the change itself and ``label`` says what
    to enter.
    """

    label: str
    overrides: dict[str, Any] = field(default_factory=dict)
    solves: tuple[str, ...] = ()

    @property
    def applicable(self) -> bool:
        return bool(self.overrides)


def problems(result: Mapping) -> list[dict]:
    """The findings of ``result`` that mean the plan does not work: those of :data:`PROBLEMS` in that
    order, then any other critical finding."""
    checks = result.get("checks") or []
    by_id = {c.get("id"): c for c in checks}
    return [by_id[i] for i in PROBLEMS if i in by_id] + [c for c in checks if c.get("severity") == "critical"
                                                         and c.get("id") not in PROBLEMS]


def with_overrides(plan: Mapping, overrides: Mapping[str, Any]) -> dict:
    """A copy of the plan dict with ``overrides`` (``{"cluster.gpus": 120}``; ``None`` removes) applied."""
    out = copy.deepcopy(dict(plan))
    for path, value in overrides.items():
        section, key = path.split(".", 1)
        part = out.get(section)
        part = dict(part) if isinstance(part, Mapping) else {}
        if value is None:
            part.pop(key, None)
        else:
            part[key] = value
        out[section] = part
    return out


# --- one fix per problem ------------------------------------------------------------------------------


def _evaluate(raw: Mapping, catalog=None) -> dict | None:
    try:
        return evaluate(raw, catalog)
    except PlanError:
        return None


def _ids(result: Mapping | None) -> set[str]:
    return {c.get("id") for c in (result or {}).get("checks") or []}


def _layout_words(row: Mapping, before: Mapping, keys: tuple[str, ...]) -> list[str]:
    """The layout changes of ``row`` against ``before``, in words ("ZeRO-3", "full recompute")."""
    return [layout_word(k, row[k]) for k in keys if row.get(k) != before.get(k)]


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _fewest_layout(plan, result: Mapping) -> tuple[int, dict] | None:
    """The fewest GPUs (from the plan's own count up) on which a layout fits, and that layout."""
    inp = parallel.inputs(plan, result)
    layouts: dict[int, dict | None] = {}

    def fits(n: int) -> bool | None:
        if n not in layouts:
            table = parallel.search(plan, inp, n)
            layouts[n] = parallel.row(table) if len(table["tp"]) and table["fits"][0] else None
            if not len(table["tp"]):
                return None
        return layouts[n] is not None

    n = parallel.fewest_gpus(fits, int(result["cluster"]["gpus"]), int(plan.cluster["gpus_per_node"]))
    return (n, layouts[n]) if n else None


def _training_memory(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    """The fewest GPUs on which a layout fits; when the global batch leaves too few sequences for the
    data-parallel ranks, a larger batch (doubled up to :data:`MAX_BATCH_DOUBLINGS` times)."""
    overrides: dict[str, Any] = {}
    found = _fewest_layout(plan, result)
    batch = plan.workload["global_batch_tokens"]
    for k in range(1, MAX_BATCH_DOUBLINGS + 1):
        if found:
            break
        overrides = {"workload.global_batch_tokens": batch * 2**k}
        plan = load_plan(with_overrides(raw, overrides), plan.catalog)
        found = _fewest_layout(plan, result)
    if not found:
        return None
    n, row = found
    gpus, before = int(result["cluster"]["gpus"]), result["cluster"]
    pinned = any((raw.get("cluster") or {}).get(k) is not None
                 for k in ("tensor_parallel", "pipeline_parallel", "data_parallel", "zero_stage"))
    if n != gpus or "gpus" in (raw.get("cluster") or {}):
        overrides["cluster.gpus"] = n
    if pinned:
        overrides.update({"cluster.tensor_parallel": row["tensor_parallel"],
                          "cluster.pipeline_parallel": row["pipeline_parallel"], "cluster.data_parallel": None,
                          "cluster.zero_stage": row["zero_stage"], "workload.micro_batch": row["micro_batch"],
                          "workload.recompute": row["recompute"]})
    keys = ("zero_stage", "recompute") if n != gpus else ("tensor_parallel", "pipeline_parallel", "zero_stage",
                                                          "recompute", "micro_batch")
    words = _layout_words(row, before, keys)
    if "workload.global_batch_tokens" in overrides:
        words.append(f"a global batch of {fmt(overrides['workload.global_batch_tokens'], 'big', 'tokens')}")
    if n != gpus:
        return f"Use {fmt(n, 'count', 'GPUs')}" + (f" with {_and(words)}" if words else ""), overrides
    return f"Use {_and(words) if words else 'the layout the kit finds'} on the same {fmt(n, 'count', 'GPUs')}", \
        overrides


def _inference_memory(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    """Smaller weights (FP8, then INT4) on the same GPU, else the GPU with the least memory that fits."""
    work = raw.get("workload") or {}
    for precision in ("fp8", "int4"):
        if work.get("weight_precision") == precision:
            continue
        overrides = {"workload.weight_precision": precision, "workload.kv_precision": "fp8"}
        if "model-does-not-fit" not in _ids(_evaluate(with_overrides(raw, overrides), plan.catalog)):
            return f"Serve {precision.upper()} weights with an FP8 KV cache", overrides
    bigger = sorted((g for g in plan.catalog.gpus.values() if g.capacity_gb > plan.gpu.capacity_gb and g.default_cloud),
                    key=lambda g: g.capacity_gb)
    for gpu in bigger:
        overrides = {"cluster.gpu": gpu.id, "cluster.gpus": None, "facility.server": None, "cost.cloud": None}
        if "model-does-not-fit" not in _ids(_evaluate(with_overrides(raw, overrides), plan.catalog)):
            return f"Use {gpu.name} GPUs ({fmt(gpu.capacity_gb, 'gb')} each)", overrides
    return None


def _memory(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    if plan.kind == "inference":
        return _inference_memory(raw, plan, result)
    return _training_memory(raw, plan, result)


def _sized_for(raw: dict, plan, days: float) -> int | None:
    """GPUs the kit sizes the plan to for a deadline of ``days`` (the layout left to the kit)."""
    trial = with_overrides(raw, {"cluster.gpus": None, "cluster.data_parallel": None, "cluster.deadline_days": days})
    sized = _evaluate(trial, plan.catalog)
    return int(sized["cluster"]["gpus"]) if sized and sized["cluster"].get("gpus") else None


def _deadline_missed(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    deadline = plan.cluster["deadline_days"]
    n = _sized_for(raw, plan, deadline)
    if not n:
        return None
    return (f"Use {fmt(n, 'count', 'GPUs')} to meet the deadline of {fmt(deadline, 'days')}",
            {"cluster.gpus": n, "cluster.data_parallel": None})


def _duration_absurd(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    n = _sized_for(raw, plan, TARGET_DAYS)
    if not n:
        return None
    return (f"Use {fmt(n, 'count', 'GPUs')} to finish in about {TARGET_DAYS:g} days",
            {"cluster.gpus": n, "cluster.data_parallel": None})


def _deadline_unreachable(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    trial = with_overrides(raw, {"cluster.gpus": LARGEST_PUBLISHED_GPUS, "cluster.deadline_days": None,
                                 "cluster.data_parallel": None})
    at_largest = _evaluate(trial, plan.catalog)
    days = (at_largest or {}).get("compute", {}).get("wall_clock_days")
    if not days:
        return None
    days = float(math.ceil(days))
    return (f"Extend the deadline to {days:,.0f} days (about {fmt(LARGEST_PUBLISHED_GPUS, 'count')} GPUs, "
            f"the largest published training cluster)", {"cluster.deadline_days": days})


def _run_never_finishes(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    return "Checkpoint more often, write checkpoints faster, or use fewer GPUs (Cluster, More options)", {}


def _rack_over_budget(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    kw = float(math.ceil(result["facility"]["rack_kw_actual"]))
    return f"Raise the rack power budget to {fmt(kw, 'power')}", {"facility.rack_kw": kw}


def _rack_density_cooling(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    cooling = result["facility"].get("cooling_recommended")
    return (f"Use {cooling} cooling", {"facility.cooling": cooling}) if cooling else None


def _spot_never_finishes(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    return "Rent on-demand instead of spot", {"cost.pricing": "on-demand"}


def _server_with(plan, has: Callable[[Any], bool]) -> Any:
    """Another server of the plan's GPU for which ``has(server)``, the GPU's default first."""
    servers = [s for s in plan.catalog.servers.values() if s.gpu == plan.gpu.id and s.id != plan.server.id and has(s)]
    return next(iter(sorted(servers, key=lambda s: s.id != plan.gpu.default_server)), None)


def _no_server_power(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    server = _server_with(plan, lambda s: s.max_power_kw is not None)
    if server is None:
        return f"Enter the power of one {plan.server.name} in your own catalog", {}
    return f"Use {server.name}, whose power is published", {"facility.server": server.id}


def _no_server_price(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    server = _server_with(plan, lambda s: s.price_usd is not None and s.max_power_kw is not None)
    if server is None:
        return f"Enter the quoted price of one {plan.server.name} under Cost, Server price", {}
    return (f"Use {server.name}, priced at {fmt(server.price_usd, 'usd')} each",
            {"facility.server": server.id, "cost.server_price_usd": None})


def _no_cloud_offer(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    offers = [c for c in plan.catalog.clouds.values() if c.gpu == plan.gpu.id]
    if not offers:
        return f"Add a cloud offer for {plan.gpu.name} to your own catalog to compare with renting", {}
    offer = next((c for c in offers if c.id == plan.gpu.default_cloud), offers[0])
    return f"Compare with {offer.name}", {"cost.cloud": offer.id}


FIXERS: dict[str, Callable[[dict, Any, Mapping], tuple[str, dict] | None]] = {
    "deadline-unreachable": _deadline_unreachable,
    "duration-absurd": _duration_absurd,
    "deadline-missed": _deadline_missed,
    "model-does-not-fit": _memory,
    "run-never-finishes": _run_never_finishes,
    "rack-over-budget": _rack_over_budget,
    "rack-density-cooling": _rack_density_cooling,
    "spot-never-finishes": _spot_never_finishes,
    "no-server-power": _no_server_power,
    "no-server-price": _no_server_price,
    "no-cloud-offer": _no_cloud_offer,
}


# --- the suggestion -------------------------------------------------------------------------------


def _sentence(parts: list[str]) -> str:
    parts = [parts[0]] + [p[0].lower() + p[1:] for p in parts[1:]]
    return "; then ".join(parts)


def suggest_fix(plan: Any, result: Mapping | None = None, catalog=None) -> Fix | None:
    """What would make ``plan`` work, or ``None`` when nothing in :data:`PROBLEMS` is wrong.

    ``plan`` is the plan as the user wrote it (dict, path or YAML text); ``result`` its
    :func:`aiplan.evaluate` result (evaluated here when not given). Problems are fixed one after the
    other (up to :data:`MAX_ROUNDS`), each fix checked by evaluating the plan again; the returned
    :class:`Fix` holds every override and the problems it solves. A problem the kit cannot fix gets
    a label saying what to enter and no overrides. For ``plans/does-not-fit.yaml`` (a 405B full
    fine-tune on 8 GPUs) the label is "Use 120 GPUs with ZeRO-3 and full recompute".
    """
    if isinstance(plan, Plan):
        loaded, raw = plan, copy.deepcopy(plan.data)
    else:
        data, folder = plan_as_data(plan)
        raw = copy.deepcopy(data)
        loaded = load_plan(data, catalog, base_dir=folder)
    result = result if result is not None else _evaluate(raw, loaded.catalog)
    if result is None or not problems(result):
        return None
    labels: list[str] = []
    overrides: dict[str, Any] = {}
    solved: list[str] = []
    current, current_plan = result, loaded
    for _ in range(MAX_ROUNDS):
        open_ = [c["id"] for c in problems(current) if c["id"] not in solved and c["id"] in FIXERS]
        if not open_:
            break
        step = FIXERS[open_[0]](with_overrides(raw, overrides), current_plan, current)
        if step is None:
            break
        label, change = step
        if not change:  # nothing the kit can change: say what to enter, and stop here
            labels.append(label)
            break
        trial = with_overrides(raw, {**overrides, **change})
        evaluated = _evaluate(trial, loaded.catalog)
        if evaluated is None or open_[0] in _ids(evaluated):
            break
        labels.append(label)
        overrides.update(change)
        solved += [i for i in _ids(current) & set(PROBLEMS) if i not in _ids(evaluated)]
        current, current_plan = evaluated, load_plan(trial, loaded.catalog)
    if not labels:
        return None
    return Fix(label=_sentence(labels), overrides=overrides, solves=tuple(dict.fromkeys(solved)))
