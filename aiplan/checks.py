"""Rules of thumb and common mistakes -> findings on a plan and its result.

Each check is a small function ``(plan, result) -> finding | None``; a finding
is ``{id, severity, message, source}`` with severity ``info`` (worth knowing),
``warning`` (likely to cost time or money) or ``critical`` (the plan does not
work as written). :func:`run_checks` runs them all and tolerates sections that
earlier steps left ``None``: a check whose inputs are missing stays silent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import units as U

SEED_QR = "seed 'AI Training Infrastructure - Quick Reference' (rules of thumb)"
SEED_WHAT = "seed 'What is AI infrastructure?' (common mistakes)"
FNC = "facility_network_cost.md"

#: a training run longer than this is "long" for the single-point-of-failure check
#: [days] (JUDGEMENT: Llama 3 saw ~8 interruptions a day at 16k GPUs, §4.2)
LONG_RUN_DAYS = 7.0
#: checkpoint interval further than this factor from the Young/Daly optimum is flagged
#: (JUDGEMENT: wasted time ~ d/t + t/2M rises ~25% at 2x or 0.5x the optimum, §4.1)
CHECKPOINT_FACTOR = 2.0


def _get(result, section, key):
    sec = result.get(section) or {}
    return sec.get(key) if isinstance(sec, dict) else None


def finding(id_: str, severity: str, message: str, source: str) -> dict[str, str]:
    assert severity in ("info", "warning", "critical")
    return {"id": id_, "severity": severity, "message": message, "source": source}


def _training(plan) -> bool:
    return plan.kind in ("pretrain", "finetune")


# --- the checks ---------------------------------------------------------------------


def model_does_not_fit(plan, result):
    if _get(result, "memory", "fits") is not False:
        return None
    per, cap = _get(result, "memory", "per_gpu_gb"), _get(result, "memory", "gpu_capacity_gb")
    need = f" needs {per:.0f} GB per GPU of {cap:.0f} GB" if per is not None and cap is not None else " does not fit"
    hint = _get(result, "cluster", "fit_hint")
    msg = f"The model{need} on {plan.gpu.name}."
    msg += f" {hint}" if hint else (" Use more tensor/pipeline parallelism, a higher ZeRO stage, recomputation, "
                                    "or a larger GPU.")
    return finding("model-does-not-fit", "critical", msg,
                   "ZeRO (Rajbhandari et al. 2019, S18) and activation memory (Korthikanti et al. 2022); "
                   "memory_and_compute.md")


def mfu_low(plan, result):
    if not _training(plan):
        return None
    mfu = _get(result, "compute", "mfu") or plan.cluster.get("mfu")
    if mfu is None:
        return None
    floor = U.SEED_MFU_BOTTLENECK_SHARE * U.SEED_MFU_TARGET
    if mfu >= floor:
        return None
    low = plan.gpu.mfu_low
    severity = "warning" if mfu < low else "info"
    msg = (f"Planned MFU {mfu:.0%} is below half the seed's 80% target ({floor:.0%}). The 80% target is "
           f"aspirational: published large runs reach about 38-55% (Llama 3 405B 38-43%, MegaScale 55.2%), "
           f"and the seed's 'below 50% indicates a bottleneck' would flag most of them.")
    if mfu < low:
        msg += (f" It is also below the low end of the band the kit considers plausible for {plan.gpu.id} "
                f"({low:.0%}): look for a data, network or parallelism bottleneck.")
    return finding("mfu-low", severity, msg,
                   f"{SEED_QR}: 'aim for 80%+ MFU; below 50% indicates a bottleneck'; calibration runs in "
                   f"memory_and_compute.md §5 (S07, S19); {FNC} §4.2 (MegaScale)")


def storage_bandwidth_low(plan, result):
    if not _training(plan):
        return None
    read = _get(result, "storage", "read_gb_per_s")
    gpus = _get(result, "cluster", "gpus")
    if read is None or not gpus:
        return None
    per = read / gpus
    if per >= U.STORAGE_GB_PER_S_PER_GPU_RULE:
        return None
    return finding("storage-bandwidth-low", "warning",
                   f"Storage read bandwidth is {per:.2f} GB/s per GPU ({read:.0f} GB/s for {gpus} GPUs), below the "
                   f"1 GB/s per GPU rule: GPUs may wait on data, and checkpoint writes will stall training longer.",
                   f"{SEED_QR}: 'target 1 GB/s of storage throughput per GPU'; DDN 'usual minimum requirement of "
                   f"1 GB/s/GPU' ({FNC} §7.2)")


def allreduce_bandwidth_low(plan, result):
    ratio = _get(result, "network", "allreduce_to_compute_ratio")
    if ratio is None or not _training(plan) or ratio >= U.ALLREDUCE_TO_COMPUTE_MIN:
        return None
    return finding("allreduce-bandwidth-low", "warning",
                   f"All-reduce bandwidth is {ratio:.1%} of GPU compute bandwidth, below the 10% rule: gradient "
                   f"synchronisation is likely to slow each step. Consider faster NICs, in-network reduction, or "
                   f"more data parallelism inside a node.",
                   f"{SEED_QR}: 'all-reduce bandwidth should be at least 10% of GPU compute bandwidth'")


def rack_density(plan, result):
    kw = _get(result, "facility", "rack_kw_actual")
    if kw is None:
        return None
    chosen = plan.facility.get("cooling", "auto")
    rec = _get(result, "facility", "cooling_recommended")
    src = (f"{FNC} §1.4 (air ~25-30 kW practical, ~41 kW with perfect containment; rear door <= 60 kW; "
           "direct liquid above)")
    order = {"air": 0, "rear-door": 1, "liquid": 2}
    if chosen != "auto" and rec in order and order.get(chosen, 0) < order[rec]:
        return finding("rack-density-cooling", "critical",
                       f"Racks draw {kw:.1f} kW but the plan chose {chosen} cooling; at this density use {rec} "
                       f"(air cooling tops out near 30 kW per rack, about 41 kW with perfect containment).", src)
    if kw > U.AIR_COOLING_MAX_KW_PER_RACK:
        severity = "info" if kw <= U.AIR_CONTAINMENT_MAX_KW_PER_RACK else "warning"
        return finding("rack-density-beyond-air", severity,
                       f"Racks draw {kw:.1f} kW, beyond practical air cooling (~30 kW); the kit recommends {rec}. "
                       f"NVIDIA's 4 x DGX H100 rack (> 40 kW) is air-cooled only with strict containment.", src)
    return None


def rack_over_budget(plan, result):
    kw, budget = _get(result, "facility", "rack_kw_actual"), plan.facility.get("rack_kw")
    if kw is None or budget is None or kw <= budget:
        return None
    return finding("rack-over-budget", "critical",
                   f"One {plan.server.name} draws {kw:.1f} kW, more than the {budget:.0f} kW rack power budget: "
                   f"raise facility.rack_kw or choose another server.", f"{FNC} §1.4 (rack-scale NVL72 ~120 kW)")


def floor_loading(plan, result):
    kg, limit = _get(result, "facility", "rack_weight_kg"), plan.facility.get("floor_kg_per_rack")
    if kg is None or limit is None or kg <= limit:
        return None
    return finding("floor-loading", "warning",
                   f"A full compute rack weighs about {kg:.0f} kg, above the {limit:.0f} kg floor rating per rack "
                   f"position: check the slab or raised floor.",
                   f"{FNC} §1.5 ('most raised floors rated 700-1,000 kg per rack', [S] UNCONFIRMED)")


def utilisation_below_breakeven(plan, result):
    u = plan.cost.get("utilisation")
    be = _get(result, "cost", "breakeven_utilisation")
    cloud, onprem = _get(result, "cost", "cloud_usd"), _get(result, "cost", "onprem_usd")
    if u is None or cloud is None or onprem is None:
        return None
    src = f"{FNC} §5.4 (DERIVED breakeven; '40% / 12-18 months' holds only against hyperscaler on-demand prices)"
    if be is None:
        return finding("owning-never-cheaper", "warning",
                       f"At {_get(result, 'cost', 'cloud_usd_per_gpu_hour'):.2f} $/GPU-h, owning never beats renting, "
                       f"even at 100% utilisation.", src)
    if u >= be:
        return None
    return finding("utilisation-below-breakeven", "warning",
                   f"Planned utilisation {u:.0%} is below the breakeven {be:.0%}: renting is cheaper than owning at "
                   f"this cloud price.", src)


def breakeven_after_ownership(plan, result):
    months, years = _get(result, "cost", "breakeven_months"), plan.cost.get("years")
    if months is None or years is None or months <= years * U.MONTHS_PER_YEAR:
        return None
    return finding("breakeven-after-ownership", "warning",
                   f"Owning pays back only after {months:.0f} months, later than the {years:g}-year ownership period.",
                   f"{SEED_WHAT}: 'breakeven typically hits around 12-18 months'; {FNC} §5.4")


def checkpoint_interval(plan, result):
    if not _training(plan):
        return None
    t = _get(result, "checkpoint", "interval_min")
    opt = _get(result, "checkpoint", "daly_min") or _get(result, "checkpoint", "young_min")
    if t is None or not opt:
        return None
    r = t / opt
    if 1 / CHECKPOINT_FACTOR <= r <= CHECKPOINT_FACTOR:
        return None
    return finding("checkpoint-interval", "warning",
                   f"Checkpoints every {t:.0f} min are {r:.1f}x the optimum ({opt:.0f} min, Young/Daly): "
                   f"{'too rare: failures lose more work' if r > 1 else 'too frequent: writes stall training'}.",
                   f"Young (1974) / Daly (2006): interval = sqrt(2 x write time x MTBF) ({FNC} §4.1)")


def goodput_low(plan, result):
    g = _get(result, "reliability", "goodput")
    if g is None or not _training(plan) or g >= U.GOODPUT_MIN:
        return None
    return finding("goodput-low", "warning",
                   f"Goodput is {g:.0%}: more than 10% of the time goes to checkpoint writes, lost work and restarts. "
                   f"Faster checkpoints (async, local NVMe) or fewer interruptions would recover it.",
                   f"Llama 3 405B: > 90% effective training time on 16,384 H100 ({FNC} §4.2)")


def storage_growth(plan, result):
    factor = _get(result, "cluster", "storage_growth_factor") or plan.cluster.get("storage_growth_factor")
    if factor is None or factor >= U.SEED_STORAGE_GROWTH:
        return None
    return finding("storage-growth-headroom", "warning",
                   f"Storage is sized with {factor:g}x headroom; data sets tend to grow by an order of magnitude as "
                   f"projects mature. It is cheaper to overbuild storage than to retrofit it.",
                   f"{SEED_WHAT}: 'Plan for 10x growth in storage capacity and throughput'")


def oversubscription(plan, result):
    o = plan.cluster.get("oversubscription")
    if o is None or not _training(plan) or o <= U.TRAINING_OVERSUBSCRIPTION_MAX:
        return None
    return finding("oversubscription-training", "warning",
                   f"The fabric is {o:g}:1 oversubscribed; training all-reduce traffic needs a non-blocking (1:1) "
                   f"fabric, or at most about 2:1.",
                   f"NVIDIA DGX SuperPOD RA: rail-optimised full fat tree (1:1); HPC 1:1 vs cloud 1:12-1:20 "
                   f"({FNC} §2.1, §3.2)")


def single_point_of_failure(plan, result):
    if plan.facility.get("redundancy") != "N":
        return None
    days = _get(result, "compute", "wall_clock_days")
    if plan.kind == "inference":
        what = "an always-on inference service"
    elif days is not None and days > LONG_RUN_DAYS:
        what = f"a {days:.0f}-day training run"
    else:
        return None
    return finding("single-point-of-failure", "warning",
                   f"Power redundancy N has no spare module: one failure stops {what}. Use N+1 or 2N.",
                   f"NVIDIA GB200 SuperPOD RA ('Tier 3 ... no single point of failure'); Uptime survey outages "
                   f"22% of 2N vs 33% of N+1 sites ({FNC} §1.3)")


def deadline_missed(plan, result):
    deadline = plan.cluster.get("deadline_days")
    meets = _get(result, "compute", "meets_deadline")
    days = _get(result, "compute", "wall_clock_days")
    if deadline is None or not _training(plan):
        return None
    if meets is None:
        if days is None:
            return None
        meets = days <= deadline
    if meets:
        return None
    txt = f" takes {days:.0f} days" if days is not None else " misses it"
    return finding("deadline-missed", "critical",
                   f"The training run{txt}, past the {deadline:g}-day deadline: add GPUs or reduce tokens.",
                   "6ND training FLOPs (Kaplan et al. 2020; memory_and_compute.md) at the planned MFU")


def no_cloud_offer(plan, result):
    if plan.cloud is not None:
        used, asked = _get(result, "cost", "pricing_used"), plan.cost.get("pricing")
        if used and asked and used != asked:
            return finding("pricing-unavailable", "info",
                           f"{plan.cloud.id} has no {asked} price in the catalog; the kit used {used} "
                           f"({plan.cloud.as_of}).", f"data/clouds.csv ({plan.cloud.sources})")
        return None
    return finding("no-cloud-offer", "info",
                   f"The catalog has no priced cloud offer for {plan.gpu.id}: cloud costs and the breakeven are not "
                   f"computed. Set cost.cloud to an offer or add one to a user catalog (clouds.csv).",
                   "data/clouds.csv (facility_network_cost.md §5.1)")


def no_server_price(plan, result):
    if plan.cost.get("server_price_usd") is not None:
        return None
    return finding("no-server-price", "info",
                   f"No dated price for {plan.server.id} in the catalog: on-prem cost is not computed. "
                   f"Set cost.server_price_usd.", "data/servers.csv (facility_network_cost.md §5.2)")


CHECKS: tuple[Callable, ...] = (
    model_does_not_fit, mfu_low, storage_bandwidth_low, allreduce_bandwidth_low, rack_density,
    rack_over_budget, floor_loading, utilisation_below_breakeven, breakeven_after_ownership,
    checkpoint_interval, goodput_low, storage_growth, oversubscription, single_point_of_failure,
    deadline_missed, no_cloud_offer, no_server_price,
)


def run_checks(plan, result: dict[str, Any]) -> list[dict[str, str]]:
    """Findings ``{id, severity, message, source}`` for ``plan`` and its ``result``.

    ``plan`` is a :class:`~aiplan.plan.Plan` (or anything :func:`~aiplan.plan.load_plan` accepts).
    """
    from .plan import load_plan

    plan = load_plan(plan)
    out = []
    for check in CHECKS:
        f = check(plan, result)
        if f is not None:
            out.append(f)
    return out
