"""What would make a plan that cannot work work: two or three changes to choose from, in plain words.

A plan can be valid and still not work: the model does not fit in GPU memory, the run misses its
deadline (or no GPU count could meet it), a price the cost needs is missing, the run would take
longer than anyone would wait (or never finish), a server draws more than its rack may, the cooling
is too weak, or spot capacity would never get the work done. :func:`problems` lists those findings
of a result (the app's banner shows them); :func:`suggest_fixes` gives up to three ways out
("Use 128 GPUs with ZeRO-3 and full recompute", "Fine-tune with QLoRA on the same 8 GPUs"), each
with the plan fields to change, what changes (before and after), the client's constraints it
keeps or gives up (a fixed GPU count, one server, the deadline, the GPU, the method), and a note
where the fix costs quality (quantisation). A suggestion is only made when the plan with those
changes, evaluated again, no longer has the problem and, where the fix moves the memory, stays
within :data:`~aiplan.core.assumptions.FIX_MEMORY_HEADROOM` of the usable memory; fixes that keep
the constraints come first. :func:`suggest_fix` is the first of them. A problem the kit cannot fix
by itself (a price no catalog row has) gets a sentence saying what to enter, and no overrides.

No formula lives here: GPU counts and layouts come from the layout search
(:mod:`aiplan.cluster.parallel`) and every suggestion is checked with :func:`aiplan.evaluate`.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..cluster import parallel
from ..cluster.parallel import layout_word
from ..core.assumptions import FIX_MEMORY_HEADROOM, LARGEST_PUBLISHED_GPUS, RELAX_TARGET_MULTIPLE, TARGET_DAYS
from ..core.catalog import PRICING_COLUMN, short_name
from ..core.errors import PlanError
from ..core.fields import format_value as fmt
from ..core.fields import get_path
from ..findings import instance_problem, spot_problem
from ..model.serving import fastest_on
from ..pipeline import evaluate
from ..plan import Plan, load_plan, plan_as_data

#: findings that mean the plan does not work as written, in the order they are fixed (a fix that
#: changes the GPU count comes before the memory fix at that count)
PROBLEMS = ("deadline-unreachable", "run-never-finishes", "duration-absurd", "deadline-missed", "model-does-not-fit",
            "ttft-target-missed", "tpot-target-missed", "budget-exceeded", "rack-over-budget", "rack-density-cooling",
            "spot-never-finishes", "no-server-power", "no-server-price", "no-cloud-offer")
#: what each problem means, in words (the banner's headline)
PROBLEM_TITLES = {
    "deadline-unreachable": "No cluster can meet the deadline",
    "duration-absurd": "The run would take longer than any plan can wait",
    "deadline-missed": "The run misses its deadline",
    "model-does-not-fit": "The model does not fit in GPU memory",
    "ttft-target-missed": "The time to first token misses its target",
    "tpot-target-missed": "The time per output token misses its target",
    "budget-exceeded": "The cost is above the budget",
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


#: alternatives tried per kind of alternative (each costs an evaluation or two)
MAX_TRIES = 3
#: quality notes of the fixes that change what is computed, shown beside the fix
NOTES = {
    "fp8": "FP8 weights were found effectively lossless on the Llama 3.1 family (Kurtic et al., 2024).",
    "int4": "INT4 weights cost some accuracy: check the model's answers on your own tasks before relying on it "
            "(Kurtic et al., 2024, found 4-bit weights close to 8-bit on Llama 3.1, not lossless).",
    "fp4": "FP4 weights cost some accuracy: check the model's answers on your own tasks before relying on it.",
    "lora": "LoRA trains small adapters instead of every weight; its paper matched full fine-tuning on its "
            "benchmarks (Hu et al., 2021): check the quality on your own tasks.",
    "qlora": "QLoRA trains adapters on 4-bit base weights; its paper matched 16-bit fine-tuning on its benchmarks "
             "(Dettmers et al., 2023): check the quality on your own tasks.",
}


@dataclass(frozen=True)
class Fix:
    """A change that makes a plan work.

    ``label`` says it in plain words; ``overrides`` maps plan field paths (``cluster.gpus``) to new
    values (``None`` removes the field: the kit decides); ``solves`` lists the finding ids it makes
    go away; empty ``overrides`` means the kit cannot make the change itself and ``label`` says what
    to enter. ``changes`` lists ``(plan field path, value before, value after)`` of the filled
    plans (what the client sees change); ``note`` what to check before relying on the fix (the
    accuracy of quantised weights); ``keeps`` and ``breaks`` the client's constraints it keeps and
    gives up, in words ("the 8 GPUs on one server"; "needs 16 servers instead of one", with
    "no fix keeps it" when none does); ``memory_share`` the per-GPU memory after the fix as a share
    of the usable memory.
    """

    label: str
    overrides: dict[str, Any] = field(default_factory=dict)
    solves: tuple[str, ...] = ()
    changes: tuple[tuple[str, Any, Any], ...] = ()
    note: str = ""
    keeps: tuple[str, ...] = ()
    breaks: tuple[str, ...] = ()
    memory_share: float | None = None

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


def _memory_limit_gb(result: Mapping) -> float | None:
    """The most per-GPU memory a fix may land at [GB]: :data:`FIX_MEMORY_HEADROOM` of the usable memory."""
    usable = get_path(result, "memory.usable_gb")
    return None if usable is None else FIX_MEMORY_HEADROOM * float(usable)


def _fewest_layout(plan, result: Mapping) -> tuple[int, dict, bool] | None:
    """The fewest GPUs (from the plan's own count up) on which a layout fits within the fix headroom, that
    layout, and whether it is the layout search's own first choice at that count."""
    inp = parallel.inputs(plan, result)
    limit = _memory_limit_gb(result)
    layouts: dict[int, tuple[dict, bool] | None] = {}

    def fits(n: int) -> bool | None:
        if n not in layouts:
            table = parallel.search(plan, inp, n)
            if not len(table["tp"]):
                layouts[n] = None
                return None
            ok = table["fits"] & (table["per_gpu_gb"] <= (limit if limit is not None else float("inf")))
            first = int(ok.argmax()) if ok.any() else -1
            layouts[n] = (parallel.row(table, first), first == 0) if first >= 0 else None
        return layouts[n] is not None

    n = parallel.fewest_gpus(fits, int(result["cluster"]["gpus"]), int(plan.cluster["gpus_per_node"]))
    return (n, *layouts[n]) if n else None


def _training_memory(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    """The fewest GPUs on which a layout fits (within the fix headroom); when the global batch leaves too few
    sequences for the data-parallel ranks, a larger batch (doubled up to :data:`MAX_BATCH_DOUBLINGS` times)."""
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
    n, row, kits_own = found
    gpus, before = int(result["cluster"]["gpus"]), result["cluster"]
    pinned = not kits_own or any((raw.get("cluster") or {}).get(k) is not None
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


#: the layout fields a fix that changes the GPU or the method hands back to the kit
LAYOUT_PINS = ("cluster.tensor_parallel", "cluster.pipeline_parallel", "cluster.data_parallel", "cluster.zero_stage")


def _serve_precision(precision: str) -> Callable[[dict, Any, Mapping], tuple[str, dict, str] | None]:
    def fixer(raw: dict, plan, result: Mapping) -> tuple[str, dict, str] | None:
        if plan.kind != "inference" or (raw.get("workload") or {}).get("weight_precision") == precision:
            return None
        return (f"Serve {precision.upper()} weights with an FP8 KV cache",
                {"workload.weight_precision": precision, "workload.kv_precision": "fp8"}, NOTES.get(precision, ""))
    return fixer


def _other_gpus(plan, better: Callable[[Any], bool], key: Callable[[Any], float]) -> list:
    """Catalog GPUs other than the plan's for which ``better(gpu)``, with a server and a cloud offer, by ``key``."""
    return sorted((g for g in plan.catalog.gpus.values() if g.id != plan.gpu.id and g.default_server
                   and g.default_cloud and better(g)), key=key)[:MAX_TRIES]


def _gpu_overrides(gpu, keep_count: bool) -> dict[str, Any]:
    out = {"cluster.gpu": gpu.id, "facility.server": None, "cost.cloud": None, "cluster.gpus_per_node": None,
           **dict.fromkeys(LAYOUT_PINS)}
    if not keep_count:
        out["cluster.gpus"] = None
    return out


def _first_that(raw: dict, plan, candidates, solved: str) -> tuple[Any, dict] | None:
    """The first ``(candidate, overrides)`` whose plan, evaluated, no longer has the finding ``solved``, fits and
    keeps the fix headroom."""
    for candidate, overrides in candidates:
        evaluated = _evaluate(with_overrides(raw, overrides), plan.catalog)
        if evaluated and solved not in _ids(evaluated) and _within_headroom(evaluated):
            return candidate, overrides
    return None


def _units_of(gpu) -> str:
    """What a client calls one of ``gpu``: "GPUs", or "chips" for TPUs and Trainium."""
    return "GPUs" if gpu.vendor in ("nvidia", "amd", "intel") else "chips"


def _bigger_gpu(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    """A GPU with more memory (the least that fits); training keeps the GPU count. A serving replica is
    only tried on GPUs of which a server of eight could hold what the replica needs now."""
    training = plan.kind != "inference"
    need_gb = (get_path(result, "memory.per_gpu_gb") or 0.0) * (get_path(result, "inference.gpus_per_replica") or 1)
    gpus = _other_gpus(plan, lambda g: g.capacity_gb > plan.gpu.capacity_gb
                       and (training or 8 * g.capacity_gb >= need_gb), lambda g: g.capacity_gb)
    found = _first_that(raw, plan, ((g, _gpu_overrides(g, training)) for g in gpus), "model-does-not-fit")
    if not found:
        return None
    gpu, overrides = found
    same = f" on the same {fmt(result['cluster']['gpus'], 'count', 'GPUs')}" if training else ""
    return f"Use {gpu.name} {_units_of(gpu)} ({fmt(gpu.capacity_gb, 'gb')} each){same}", overrides


def _finetune_method(method: str) -> Callable[[dict, Any, Mapping], tuple[str, dict, str] | None]:
    def fixer(raw: dict, plan, result: Mapping) -> tuple[str, dict, str] | None:
        if plan.kind != "finetune" or plan.workload.get("method") in (method, "qlora"):
            return None
        overrides = {"workload.method": method, **dict.fromkeys(LAYOUT_PINS)}
        if "workload.lora_rank" not in raw:
            overrides["workload.lora_rank"] = plan.workload.get("lora_rank") or 16
        name = {"lora": "LoRA", "qlora": "QLoRA"}[method]
        return (f"Fine-tune with {name} on the same {fmt(result['cluster']['gpus'], 'count', 'GPUs')}", overrides,
                NOTES[method])
    return fixer


def _memory(raw: dict, plan, result: Mapping) -> tuple[str, dict] | tuple[str, dict, str] | None:
    if plan.kind == "inference":
        return _serve_precision("fp8")(raw, plan, result) or _serve_precision("int4")(raw, plan, result) \
            or _bigger_gpu(raw, plan, result)
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
        return f"Enter the power of one {short_name(plan.server)} in your own catalog", {}
    return f"Use {short_name(server)}, whose power is published", {"facility.server": server.id}


def _no_server_price(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    server = _server_with(plan, lambda s: s.price_usd is not None and s.max_power_kw is not None)
    if server is None:
        return f"Enter the quoted price of one {short_name(plan.server)} under Cost, Server price", {}
    return (f"Use {short_name(server)}, priced at {fmt(server.price_usd, 'usd')} each",
            {"facility.server": server.id, "cost.server_price_usd": None})


def _no_cloud_offer(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    offers = [c for c in plan.catalog.clouds.values() if c.gpu == plan.gpu.id]
    if not offers:
        return f"Add a cloud offer for {plan.gpu.name} to your own catalog to compare with renting", {}
    offer = next((c for c in offers if c.id == plan.gpu.default_cloud), offers[0])
    return f"Compare with {offer.name}", {"cost.cloud": offer.id}


def _faster_gpu(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    """A faster GPU (by dense BF16 peak) on the same GPU count that meets the deadline."""
    n = fmt(result["cluster"]["gpus"], "count", "GPUs")
    gpus = _other_gpus(plan, lambda g: g.bf16_tflops > plan.gpu.bf16_tflops, lambda g: g.bf16_tflops)
    found = _first_that(raw, plan, ((g, _gpu_overrides(g, True)) for g in gpus), "deadline-missed")
    return (f"Use {found[0].name} {_units_of(found[0])}, the same {n}", found[1]) if found else None


def _move_deadline(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    """The deadline the plan's own cluster meets (whole days, at the plan's deadline confidence)."""
    days = get_path(result, "compute.wall_clock_days_p90") or get_path(result, "compute.wall_clock_days")
    if not days:
        return None
    for later in (math.ceil(days), math.ceil(days * 1.25)):
        overrides = {"cluster.deadline_days": float(later)}
        evaluated = _evaluate(with_overrides(raw, overrides), plan.catalog)
        if evaluated and "deadline-missed" not in _ids(evaluated):
            return (f"Move the deadline to {fmt(later, 'count', 'days')} (the run's 90th percentile) and keep the "
                    f"{fmt(result['cluster']['gpus'], 'count', 'GPUs')}", overrides)
    return None


def _spread_racks(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    """Keep the cooling the plan asks for and spread the servers over racks it can cool."""
    from ..core.assumptions import AIR_COOLING_MAX_KW_PER_RACK, REAR_DOOR_MAX_KW_PER_RACK

    ceiling = {"air": AIR_COOLING_MAX_KW_PER_RACK, "rear-door": REAR_DOOR_MAX_KW_PER_RACK}.get(
        (raw.get("facility") or {}).get("cooling"))
    if ceiling is None:
        return None
    return (f"Keep the cooling and spread the servers over racks of {fmt(ceiling, 'power')}",
            {"facility.rack_kw": float(ceiling)})


def _reserved_instead_of_spot(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    if plan.cloud is None or not plan.cloud.reserved_1y_usd_per_hr:
        return None
    return "Rent reserved for 1 year instead of spot", {"cost.pricing": "reserved-1y"}


def _other_offer(rank: int) -> Callable[[dict, Any, Mapping], tuple[str, dict] | None]:
    def fixer(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
        offers = sorted((c for c in plan.catalog.clouds.values() if c.gpu == plan.gpu.id),
                        key=lambda c: (c.id != plan.gpu.default_cloud, c.name, c.as_of))
        names = list(dict.fromkeys(c.name for c in offers))  # an offer listed under two dates once
        if rank >= len(names):
            return None
        offer = max((c for c in offers if c.name == names[rank]), key=lambda c: c.as_of)
        return f"Compare with {offer.name}", {"cost.cloud": offer.id}
    return fixer


# --- the plan's own targets: latency and budget -------------------------------------------------------

#: what each latency target is in words, and the GPU figure that shortens it (decode reads memory; prefill
#: computes) [catalog column]
TARGET_WORDS = {"ttft": ("time-to-first-token", "bf16_tflops"), "tpot": ("time-per-output-token",
                                                                          "memory_bw_gb_per_s")}


def round_up(value: float, digits: int = 2) -> float:
    """``value`` rounded up to ``digits`` significant digits (14.81 -> 15, 191 -> 200 with 2)."""
    if value <= 0:
        return value
    step = 10.0 ** (math.floor(math.log10(value)) - digits + 1)
    return float(math.ceil(value / step - 1e-9) * step)


def _faster_serving_gpu(metric: str) -> Callable[[dict, Any, Mapping], tuple[str, dict] | None]:
    """A GPU faster at what the target bounds (memory bandwidth for TPOT, compute for TTFT) on which the
    plan, sized again, meets the target: the least fast of those that do. Only GPUs whose fastest figure
    (:func:`~aiplan.model.serving.fastest_on`) is within the target are tried."""
    words, column = TARGET_WORDS[metric]

    def fixer(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
        if plan.kind != "inference":
            return None
        target = plan.workload[f"{metric}_ms_target"]

        def reaches(g) -> bool:
            if getattr(g, column) <= getattr(plan.gpu, column):
                return False
            try:
                fastest = fastest_on(plan, g.id)
            except (KeyError, ValueError, PlanError):
                return False
            return bool(fastest) and fastest[f"{metric}_ms"] <= target

        gpus = _other_gpus(plan, reaches, lambda g: getattr(g, column))
        found = _first_that(raw, plan, ((g, _gpu_overrides(g, False)) for g in gpus), f"{metric}-target-missed")
        return (f"Serve on {found[0].name} GPUs, which meet the {words} target", found[1]) if found else None
    return fixer


def _relax_target(metric: str) -> Callable[[dict, Any, Mapping], tuple[str, dict] | None]:
    """Relax the target to the fastest the kit finds on the plan's GPU (rounded up to two significant digits), or,
    where the plan sized again misses that, to :data:`RELAX_STEPS` times it."""
    words, _ = TARGET_WORDS[metric]

    def fixer(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
        fastest = get_path(result, f"inference.{metric}_ms_fastest")
        if plan.kind != "inference" or not fastest:
            return None
        now = plan.workload[f"{metric}_ms_target"]
        targets = [t for t in dict.fromkeys(round_up(float(fastest) * k) for k in RELAX_STEPS) if t > now]
        found = _first_that(raw, plan, ((t, {f"workload.{metric}_ms_target": t}) for t in targets),
                            f"{metric}-target-missed")
        if not found:
            return None
        fastest_words = "the fastest" if found[0] == targets[0] else \
            f"{found[0] / float(fastest):.1f} times the fastest"
        return (f"Relax the {words} target to {fmt(found[0], 'ms')} ({fastest_words} the {plan.gpu.name} reaches "
                f"for this model)", found[1])
    return fixer


#: multiples of the fastest figure a relaxed target is tried at (the fastest, then the assumptions registry's)
RELAX_STEPS = (1.0, RELAX_TARGET_MULTIPLE)


def _cheaper_pricing(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    """A longer commitment than the plan's pricing (reserved for 3 years, then 1 year) that brings the cost within
    the budget."""
    if plan.cloud is None:
        return None
    offers = [("reserved-3y", plan.cloud.reserved_3y_usd_per_hr), ("reserved-1y", plan.cloud.reserved_1y_usd_per_hr)]
    candidates = ((p, {"cost.pricing": p}) for p, price in offers if price and p != plan.cost.get("pricing"))
    found = _first_that(raw, plan, candidates, "budget-exceeded")
    return (f"Rent {PRICING_WORDS[found[0]]} instead", found[1]) if found else None


#: pricings in words (fix labels)
PRICING_WORDS = {"reserved-3y": "reserved for 3 years", "reserved-1y": "reserved for 1 year",
                 "on-demand": "on demand", "spot": "at the spot price"}
#: most other offers of the plan's GPU a budget fix evaluates (the cheapest per GPU-hour first)
CHEAPER_OFFERS_TRIED = 6


def _cheaper_offer(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    """The same GPUs rented from another offer (another provider or instance, at any pricing the workload
    suits) that brings the cost within the budget: the cheapest per GPU-hour of those that do. Offers whose
    instances cannot hold the layout, and spot for a workload that does not tolerate interruption, are not
    tried (as the options explorer excludes them)."""
    now = get_path(result, "cost.cloud_usd_per_gpu_hour")
    candidates = []
    for offer in plan.catalog.clouds.values():
        if offer.gpu != plan.gpu.id or (plan.cloud and offer.id == plan.cloud.id) \
                or instance_problem(plan, result, offer):
            continue
        for pricing, column in PRICING_COLUMN.items():
            price = getattr(offer, column)
            if price and not spot_problem(plan, pricing) and (now is None or price / offer.gpus < now):
                candidates.append((price / offer.gpus, offer.name.removesuffix(" (per GPU)"), pricing, offer.id))
    candidates = sorted(candidates)[:CHEAPER_OFFERS_TRIED]
    found = _first_that(raw, plan, (((name, pricing), {"cost.cloud": oid, "cost.pricing": pricing})
                                    for _, name, pricing, oid in candidates), "budget-exceeded")
    if not found:
        return None
    (name, pricing), overrides = found
    return f"Rent the same GPUs from {name} {PRICING_WORDS[pricing]}", overrides


def _raise_budget(raw: dict, plan, result: Mapping) -> tuple[str, dict] | None:
    """The budget the plan's cheaper cost fits in (rounded up to three significant digits)."""
    figures = [get_path(result, k) for k in (("cost.cloud_run_usd", "cost.onprem_run_usd")
                                            if plan.kind != "inference" else
                                            ("cost.cloud_usd_per_month", "cost.onprem_usd_per_month"))]
    known = [float(v) for v in figures if v is not None]
    if not known:
        return None
    budget = round_up(min(known), 3)
    what = "for the run" if plan.kind != "inference" else "per month"
    return f"Raise the budget to {fmt(budget, 'usd')} {what}", {"cost.budget_usd": budget}


def _target_constraints(raw: Mapping) -> list[tuple[str, Callable[[Mapping], str | None]]]:
    """The latency targets and the budget a plan states, as constraints of :func:`_constraints`."""
    w, cst = raw.get("workload") or {}, raw.get("cost") or {}
    out: list[tuple[str, Callable[[Mapping], str | None]]] = []
    for metric, (words, _) in TARGET_WORDS.items():
        target = w.get(f"{metric}_ms_target")
        if target is not None and w.get("kind") == "inference":
            out.append((f"the {words} target of {fmt(target, 'ms')}", lambda r, m=metric, t=target, d=words: None
                        if get_path(r, f"plan.workload.{m}_ms_target") == t else
                        f"relaxes the {d} target to {fmt(get_path(r, f'plan.workload.{m}_ms_target'), 'ms')}"))
    budget = cst.get("budget_usd")
    if budget is not None:
        out.append((f"the budget of {fmt(budget, 'usd')}", lambda r: None
                    if get_path(r, "plan.cost.budget_usd") == budget else
                    f"raises the budget to {fmt(get_path(r, 'plan.cost.budget_usd'), 'usd')}"))
    return out


FIXERS: dict[str, Callable[[dict, Any, Mapping], tuple[str, dict] | None]] = {
    "ttft-target-missed": _faster_serving_gpu("ttft"),
    "tpot-target-missed": _faster_serving_gpu("tpot"),
    "budget-exceeded": _cheaper_pricing,
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
#: the other ways out of each problem, after the one of :data:`FIXERS` (each may decline with None)
ALTERNATIVES: dict[str, tuple[Callable[[dict, Any, Mapping], tuple | None], ...]] = {
    "ttft-target-missed": (_serve_precision("fp8"), _relax_target("ttft")),
    "tpot-target-missed": (_serve_precision("fp8"), _relax_target("tpot")),
    "budget-exceeded": (_cheaper_offer, _serve_precision("fp8"), _raise_budget),
    "model-does-not-fit": (_serve_precision("int4"), _bigger_gpu, _finetune_method("lora"),
                           _finetune_method("qlora")),
    "deadline-missed": (_faster_gpu, _move_deadline),
    "rack-density-cooling": (_spread_racks,),
    "spot-never-finishes": (_reserved_instead_of_spot,),
    "no-cloud-offer": (_other_offer(1), _other_offer(2)),
}


# --- the suggestions --------------------------------------------------------------------------------


def _sentence(parts: list[str]) -> str:
    parts = [parts[0]] + [p[0].lower() + p[1:] for p in parts[1:]]
    return "; then ".join(parts)


def _memory_share(result: Mapping) -> float | None:
    used, usable = get_path(result, "memory.per_gpu_gb"), get_path(result, "memory.usable_gb")
    return float(used) / float(usable) if used is not None and usable else None


def _within_headroom(result: Mapping) -> bool:
    share = _memory_share(result)
    return share is None or share <= FIX_MEMORY_HEADROOM + 1e-9


def _constraints(raw: Mapping, result: Mapping) -> list[tuple[str, Callable[[Mapping], str | None]]]:
    """The client's constraints a plan states, each as (what is kept, in words; a function of a fixed result that
    says in words how it breaks the constraint, or None when it keeps it)."""
    c, w = raw.get("cluster") or {}, raw.get("workload") or {}
    out: list[tuple[str, Callable[[Mapping], str | None]]] = []
    gpus, node = c.get("gpus"), get_path(result, "plan.cluster.gpus_per_node")
    training = get_path(result, "plan.workload.kind") != "inference"
    if isinstance(gpus, int) and training:
        count = fmt(gpus, "count", "GPUs")
        if node and gpus <= node:
            out.append((f"the {count} on one server", lambda r: None if (r["cluster"].get("nodes") or 1) <= 1 and
                        r["cluster"].get("gpus") == gpus else
                        f"needs {fmt(r['cluster'].get('nodes'), 'count', 'servers')} instead of one"))
        else:
            out.append((f"the plan's {count}", lambda r: None if r["cluster"].get("gpus") == gpus else
                        f"changes the GPUs from {fmt(gpus, 'count')} to {fmt(r['cluster'].get('gpus'), 'count')}"))
    if c.get("deadline_days") is not None and training:
        days = c["deadline_days"]
        out.append((f"the deadline of {_days(days)}", lambda r: None
                    if get_path(r, "plan.cluster.deadline_days") == days else
                    f"moves the deadline to {_days(get_path(r, 'plan.cluster.deadline_days'))}"))
    if c.get("gpu"):
        out.append(("the GPU", lambda r: None if get_path(r, "plan.cluster.gpu") == c["gpu"] else "changes the GPU"))
    if w.get("method") and get_path(result, "plan.workload.kind") == "finetune":
        out.append((f"the {w['method']} fine-tune".replace("full fine-tune", "full fine-tune of every weight"),
                    lambda r: None if get_path(r, "plan.workload.method") == w["method"] else "changes the method"))
    if w.get("weight_precision") and not training:
        out.append((f"{w['weight_precision'].upper()} weights", lambda r: None if get_path(
            r, "plan.workload.weight_precision") == w["weight_precision"] else "changes the weight precision"))
    return out + _target_constraints(raw)


#: plan fields a fix hands back to the kit that follow from others (not listed as changes)
DERIVED = ("cluster.data_parallel", "cluster.gpus_per_node")


def _days(days: float) -> str:
    return fmt(days, "count", "days") if days >= 1 else fmt(days, "days")


def changed_fields(before: Mapping, after: Mapping, paths) -> tuple[tuple[str, Any, Any], ...]:
    """(path, before, after) of the plan fields ``paths`` whose values differ between two results (the filled
    plans; a layout field the kit decides by the result's own value); derived fields left out."""
    out = []
    def value(result: Mapping, path: str) -> Any:  # a layout field the kit decides: the result's value
        filled = get_path(result, f"plan.{path}")
        return get_path(result, path) if filled is None else filled

    for path in paths:
        if path in DERIVED:
            continue
        old, new = value(before, path), value(after, path)
        if old != new:
            out.append((path, old, new))
    return tuple(out)


def _load(plan: Any, catalog=None) -> tuple[Any, dict]:
    if isinstance(plan, Plan):
        return plan, copy.deepcopy(plan.data)
    data, folder = plan_as_data(plan)
    return load_plan(data, catalog, base_dir=folder), copy.deepcopy(data)


def _layout_within_headroom(raw: dict, overrides: dict, plan, result: Mapping,
                            solved: list[str]) -> tuple[str, dict, Mapping] | None:
    """A training fix whose own layout lands beyond the fix headroom (the layout search ranks by step time
    and keeps every layout that fits): the layout within the headroom, on the fewest GPUs from the fix's
    count up (:func:`_training_memory`), as (label, overrides, evaluated result); None when there is none
    or it brings back a problem the fix solved."""
    if plan.kind == "inference":
        return None
    step = _training_memory(with_overrides(raw, overrides), plan, result)
    if step is None:
        return None
    evaluated = _evaluate(with_overrides(raw, {**overrides, **step[1]}), plan.catalog)
    if evaluated is None or not _within_headroom(evaluated) or set(solved) & _ids(evaluated):
        return None
    return step[0], step[1], evaluated


def _complete(raw: dict, loaded, result: Mapping, first: tuple) -> Fix | None:
    """The fix that starts with ``first`` ((label, overrides[, note]) for the plan's first problem) and fixes
    what it reveals (up to :data:`MAX_ROUNDS`), each change checked by evaluating the plan again."""
    labels: list[str] = []
    overrides: dict[str, Any] = {}
    solved: list[str] = []
    note = first[2] if len(first) > 2 else ""
    current, current_plan = result, loaded
    step: tuple | None = first
    for _ in range(MAX_ROUNDS):
        if step is None:
            open_ = [c["id"] for c in problems(current) if c["id"] not in solved and c["id"] in FIXERS]
            if not open_:
                break
            step = FIXERS[open_[0]](with_overrides(raw, overrides), current_plan, current)
            if step is None:
                break
        label, change = step[0], step[1]
        step = None
        if not change:  # nothing the kit can change: say what to enter, and stop here
            labels.append(label)
            break
        trial = with_overrides(raw, {**overrides, **change})
        evaluated = _evaluate(trial, loaded.catalog)
        target = [c["id"] for c in problems(current) if c["id"] not in solved and c["id"] in FIXERS][:1]
        if evaluated is None or set(target) & _ids(evaluated):
            break
        labels.append(label)
        overrides.update(change)
        solved += [i for i in _ids(current) & set(PROBLEMS) if i not in _ids(evaluated)]
        current, current_plan = evaluated, load_plan(trial, loaded.catalog)
    if not labels:
        return None
    if overrides:
        moved = get_path(current, "memory.per_gpu_gb") != get_path(result, "memory.per_gpu_gb")
        if moved and not _within_headroom(current):
            roomier = _layout_within_headroom(raw, overrides, current_plan, current, solved)
            if roomier is None:
                return None  # it would land too close to the memory's edge
            label, change, current = roomier
            labels.append(label)
            overrides.update(change)
        if not solved:
            return None
    return Fix(label=_sentence(labels), overrides=overrides, solves=tuple(dict.fromkeys(solved)),
               changes=changed_fields(result, current, overrides) if overrides else (), note=note,
               memory_share=_memory_share(current) if overrides else None), current


def suggest_fixes(plan: Any, result: Mapping | None = None, catalog=None, limit: int = 3) -> list[Fix]:
    """Up to ``limit`` ways to make ``plan`` work, those that keep the client's constraints first; ``[]`` when
    nothing in :data:`PROBLEMS` is wrong.

    ``plan`` is the plan as the user wrote it (dict, path or YAML text); ``result`` its
    :func:`aiplan.evaluate` result (evaluated here when not given). The plan's first problem gets the
    fix of :data:`FIXERS` and those of :data:`ALTERNATIVES`; each is completed by fixing what it
    reveals and checked by evaluating the plan again (:class:`Fix`). Fixes are ranked by the number
    of constraints they give up (a fixed GPU count or one server, the deadline, the GPU, the
    fine-tuning method, the serving precision), then in the order they were found; a constraint
    every fix gives up says so ("no fix keeps it"). A problem the kit cannot fix gets one
    :class:`Fix` whose label says what to enter and which has no overrides.
    """
    loaded, raw = _load(plan, catalog)
    result = result if result is not None else _evaluate(raw, loaded.catalog)
    if result is None:
        return []
    first = next((c["id"] for c in problems(result) if c["id"] in FIXERS), None)
    if first is None:
        return []
    found: list[tuple[Fix, dict]] = []
    for fixer in (FIXERS[first], *ALTERNATIVES.get(first, ())):
        step = fixer(raw, loaded, result)
        done = _complete(raw, loaded, result, step) if step else None
        if done and not any(f.overrides == done[0].overrides for f, _ in found):
            found.append(done)
    if any(f.applicable for f, _ in found):
        found = [(f, r) for f, r in found if f.applicable]
    else:
        return [f for f, _ in found[:1]]
    constraints = _constraints(raw, result)
    broken = [[(kept, check(r)) for kept, check in constraints] for _f, r in found]
    never_kept = {kept for kept, _ in constraints if all(dict(b)[kept] for b in broken)}
    fixes = []
    for (fix, _r), marks in zip(found, broken):
        keeps = tuple(kept for kept, why in marks if not why)
        breaks = tuple(why + ("; no fix keeps it" if kept in never_kept else "") for kept, why in marks if why)
        fixes.append(replace(fix, keeps=keeps, breaks=breaks))
    order = sorted(range(len(fixes)), key=lambda i: (len(fixes[i].breaks), i))
    return [fixes[i] for i in order][:limit]


def suggest_fix(plan: Any, result: Mapping | None = None, catalog=None) -> Fix | None:
    """The first of :func:`suggest_fixes`, or ``None`` when nothing in :data:`PROBLEMS` is wrong.

    For ``plans/does-not-fit.yaml`` (a 405B full fine-tune on 8 GPUs) the label is "Use 128 GPUs with
    ZeRO-3 and full recompute" (the fewest GPUs that hold it within the fix headroom).
    """
    fixes = suggest_fixes(plan, result, catalog, limit=1)
    return fixes[0] if fixes else None
