"""Rules of thumb and common mistakes -> findings on a plan and its result.

Each check is a small function ``(plan, result) -> finding | None``. A finding is
``{id, severity, message, source, sources}``: ``severity`` is ``info`` (worth knowing),
``warning`` (likely to cost time or money) or ``critical`` (the plan does not work as written);
``message`` is written for the client; ``sources`` lists ids of ``data/sources.csv`` and
``source`` is their short footnote ("Author (year), Title"). :func:`run_checks` runs them all
and tolerates sections that earlier steps left ``None``: a check whose inputs are missing stays
silent.

The evaluation date (for stale prices) is today, or ``AIPLAN_TODAY`` (YYYY-MM-DD) when set, so a
report can be reproduced later.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
from collections.abc import Callable
from typing import Any

from .core import assumptions as A
from .core import units as U
from .core.assumptions import ABSURD_DAYS, CHECKPOINT_FACTOR, LONG_RUN_DAYS, STALE_AFTER_DAYS
from .core.catalog import PRICING_COLUMN, short_name
from .core.fields import big_like, get_path
from .core.fields import format_value as fmt
from .cost import (
    COMMITMENT_YEARS,
    PRICING_LABELS,
    api_against_own,
    api_below,
    capacity_risk,
    owned_gpus,
    served_tokens_per_month,
)
from .model import (
    FIT_PUBLISHED_BEFORE,
    layout_degrees,
    layout_explained,
    layout_words,
    measured_in_fit,
    mfu_band,
    published_runs,
)
from .plan import load_plan

#: the seed's rules of thumb [source ids]
QUICK_REFERENCE = "seed-ai-training-quick-reference"
WHAT_IS = "seed-what-is-ai-infrastructure"


def today() -> _dt.date:
    """The evaluation date: ``AIPLAN_TODAY`` (YYYY-MM-DD) if set, else today."""
    text = os.environ.get("AIPLAN_TODAY", "")
    try:
        return _dt.date.fromisoformat(text) if text else _dt.date.today()
    except ValueError:
        return _dt.date.today()


def finding(id_: str, severity: str, message: str, sources: tuple[str, ...] | list[str] = ()) -> dict[str, Any]:
    """A finding; ``source`` is filled from ``sources`` by :func:`run_checks`."""
    assert severity in ("info", "warning", "critical")
    return {"id": id_, "severity": severity, "message": message, "sources": list(sources)}


def _training(plan) -> bool:
    return plan.kind in ("pretrain", "finetune")


# --- memory, time, scale -------------------------------------------------------------------------


def model_does_not_fit(plan, result):
    if get_path(result, "memory.fits") is not False:
        return None
    per, cap = get_path(result, "memory.per_gpu_gb"), get_path(result, "memory.gpu_capacity_gb")
    need = f" needs {fmt(per, 'gb')} per GPU; the {plan.gpu.name} has {fmt(cap, 'gb')}" if per and cap else \
        " does not fit in GPU memory"
    hint = get_path(result, "cluster.fit_hint")
    if not _training(plan):  # serving advice only: sharding optimizer states or recomputing does not apply
        return finding("model-does-not-fit", "critical", f"The model{need}. Serve smaller weights (FP8 or INT4), "
                       "spread each replica over more GPUs or use a GPU with more memory.",
                       ("arxiv-2309.06180",))
    msg = f"The model{need}." + (f" {hint}" if hint else " Use more GPUs, a higher ZeRO stage, recomputation or a "
                                                            "GPU with more memory.")
    return finding("model-does-not-fit", "critical", msg, ("arxiv-1910.02054", "arxiv-2205.05198"))


def mfu_outside_band(plan, result):
    given = plan.cluster.get("mfu")
    if not _training(plan) or given is None:
        return None
    gpus = get_path(result, "cluster.gpus") or plan.cluster.get("gpus") or plan.cluster["gpus_per_node"]
    calibrated, low, high = mfu_band(plan, gpus, calibrated=True)
    if low <= given <= high:
        return None
    direction = "below" if given < low else "above"
    return finding("mfu-low" if given < low else "mfu-high", "warning",
                   f"The plan assumes {fmt(given, 'pct')} model FLOP utilisation, {direction} the "
                   f"{fmt(low, 'pct')}–{fmt(high, 'pct')} that published runs of this kind reach on "
                   f"{plan.gpu.name} (calibrated: {fmt(calibrated, 'pct')}). "
                   + ("Look for a data, network or parallelism bottleneck before relying on this figure."
                      if given < low else "Few published runs reach this: the time and cost may be optimistic."),
                   ("arxiv-2407.21783", "arxiv-2205.05198", "mlcommons-training-results-v4.1"))


#: the calibration's data vintage in words (findings and messages)
FIT_DATA = (f"results published before {FIT_PUBLISHED_BEFORE} (MLPerf Training up to v5.1, throughput tables and "
            f"runs of 2025)")


def fp4_training_extrapolated(plan, result):
    if not _training(plan) or plan.workload.get("precision") != "fp4":
        return None
    family_seen, fp4_seen = measured_in_fit(plan.gpu, "fp4")
    if fp4_seen:
        return None
    return finding("fp4-training-extrapolated", "warning",
                   f"Training in FP4 on the {plan.gpu.name} is planned with a speed-up extrapolated from its BF16 "
                   f"and FP8 figures: the kit is fitted on {FIT_DATA}, and none of them measures FP4 training on "
                   f"this GPU family. Treat the time and cost as uncertain.",
                   ("mlcommons-training-results-v5.1", "nvidia-nvfp4-blog"))


def newer_than_calibration(plan, result):
    """The plan's GPU, or its precision on that GPU, is newer than every result the kit is fitted on."""
    if not _training(plan) or plan.cluster.get("mfu") is not None:
        return None
    precision = plan.workload.get("precision", "bf16")
    family_seen, precision_seen = measured_in_fit(plan.gpu, precision)
    if family_seen and (precision_seen or precision in ("fp4", "fp32")):
        return None  # fp4 has its own finding; fp32 keeps the BF16 utilisation of its own peak
    what = (f"training on the {plan.gpu.name}" if not family_seen
            else f"{precision.upper()} training on the {plan.gpu.name}")
    return finding("newer-than-calibration", "warning",
                   f"The kit's training efficiency is fitted on {FIT_DATA}; none of them measures {what}. Its "
                   f"time is extrapolated from other GPUs or precisions: compare it with the "
                   f"vendor's published training results before relying on it.",
                   ("mlcommons-training-results-v5.1",))


#: GPU families whose published production runs took longer than the kit predicts: the five runs of 2026 with
#: GPU-hours on B200 and B300 (Olmo Hybrid, Kolibri-1, the Token Superposition paper's MoE baseline, Trinity Large,
#: CloverLM; checked, never fitted) took 0.84-2.07 times the GPU-hours the kit predicts, 1.37 times at the median,
#: four of them longer (`aiplan validate`, training runs C08, C09, C11, C13, C14; a test recomputes these figures)
#: [quoted from the check, nothing fitted on it]
BLACKWELL_FAMILIES = ("blackwell", "blackwell-ultra")
BLACKWELL_RUN_SLOWDOWN = {"runs": 5, "low": 0.84, "median": 1.37, "high": 2.07, "longer": 4}
#: small counts in words
COUNT_WORDS = ("none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def blackwell_runs_slower(plan, result):
    """A training plan on Blackwell: the published runs there took longer than the kit predicts."""
    if not _training(plan) or plan.cluster.get("mfu") is not None or plan.gpu.family not in BLACKWELL_FAMILIES:
        return None
    r = BLACKWELL_RUN_SLOWDOWN
    return finding("blackwell-runs-slower", "warning",
                   f"The kit's training speed on the {plan.gpu.name} rests mostly on MLPerf Training results. The "
                   f"{COUNT_WORDS[r['runs']]} published training runs of 2026 on B200 and B300 that give their "
                   f"GPU-hours (Olmo Hybrid, Kolibri-1 and a 10B mixture of experts by Nous Research on B200, Trinity "
                   f"Large and CloverLM on B300) took {r['low']:.1f} to {r['high']:.1f} times the GPU-hours the kit "
                   f"predicts for them, {r['median']:.1f} times at the median; {COUNT_WORDS[r['longer']]} of the "
                   f"{COUNT_WORDS[r['runs']]} took longer. Plan on the high end of the time range, or set the "
                   f"utilisation you have measured.",
                   ("allenai-olmo-core-olmo-hybrid-readme", "aleph-alpha-kolibri-tech-report", "arxiv-2605.06546",
                    "arcee-trinity-large-blog", "cloverlm-report"))


def published_run(plan, result):
    """A pretraining plan of a model whose own pretraining was published with its GPU-hours: the published figure
    beside the kit's prediction for that run, so the client sees how far the kit is off for this model."""
    if plan.kind != "pretrain" or plan.cluster.get("mfu") is not None:
        return None
    runs = published_runs(plan.model.id)
    if not runs:
        return None
    run = runs[0]
    ref = plan.catalog.sources.get(run["sources"][0])
    who = ref.author_year() if ref is not None else "A published source"
    gpu = plan.catalog.gpus[run["gpu"]].name
    on = f"{fmt(run['gpus'], 'count')} {gpu}" if run["gpus"] else gpu
    ratio = run["predicted_gpu_hours"] / run["gpu_hours"] - 1.0
    off = f"{fmt(abs(ratio), 'pct')} {'more' if ratio > 0 else 'fewer'}"
    published = run["gpu_hours"]
    band = f"{big_like(run['low_gpu_hours'], published, word=False)} to {big_like(run['high_gpu_hours'], published)}"
    rate = fmt(run["gpu_hours"] / run["tokens"] * 1e12, "big")
    # a figure derived from a throughput rate is compared with the kit's training time alone
    basis = (", worked out from its training rate; the kit's figure beside it leaves out, as that one does, the "
             "time lost to evaluation, restarts and slow-downs") if run.get("basis") == "rate" else ""
    own, overhead = get_path(result, "compute.gpu_hours"), get_path(result, "compute.overhead_factor")
    # the plan's own figure adds that time: say so, or the two figures read as a contradiction
    plan_figure = (f" This plan's own {big_like(own, published)} GPU-hours add that lost time (the kit's "
                   f"end-to-end overhead, ×{overhead:.2f}).") if basis and own and overhead else ""
    if run["low_gpu_hours"] <= run["gpu_hours"] <= run["high_gpu_hours"]:
        verdict, severity = f"inside its 10th–90th percentile range ({band})", "info"
    else:
        verdict, severity = (f"outside its 10th–90th percentile range ({band}): for this model the kit's GPU-hours, "
                             f"time and cost are likely too {'high' if ratio > 0 else 'low'}. The published rate is "
                             f"{rate} GPU-hours per trillion tokens on the {gpu}; set a measured utilisation in the "
                             f"plan to plan on it"), "warning"
    return finding("published-run", severity,
                   f"{who} reports {fmt(run['gpu_hours'], 'big')} GPU-hours on {on} for pretraining "
                   f"{plan.model.name} on {fmt(run['tokens'], 'big')} tokens{basis}. For that run the kit predicts "
                   f"{big_like(run['predicted_gpu_hours'], published)} ({off}), {verdict}.{plan_figure}",
                   tuple(run["sources"]))


def duration_absurd(plan, result):
    days = get_path(result, "compute.wall_clock_days")
    if not _training(plan) or days is None or days <= ABSURD_DAYS:
        return None
    gpus = get_path(result, "cluster.gpus")
    return finding("duration-absurd", "critical",
                   f"On {fmt(gpus, 'count', 'GPUs')} the run would take {fmt(days, 'days')}: this is not a workable "
                   f"plan. Give a deadline and let the kit size the GPUs, or train on fewer tokens.")


def deadline_unreachable(plan, result):
    needed = get_path(result, "compute.deadline_gpus_needed")
    if needed is None:
        return None
    return finding("deadline-unreachable", "critical",
                   f"Meeting the {fmt(plan.cluster['deadline_days'], 'days')} deadline would take "
                   f"{fmt(needed, 'big', 'GPUs')}, more than the kit plans for "
                   f"({fmt(get_path(result, 'cluster.gpus'), 'count')} GPUs are shown): extend the deadline or reduce "
                   f"the training tokens.")


def deadline_missed(plan, result):
    deadline = plan.cluster.get("deadline_days")
    days = get_path(result, "compute.wall_clock_days")
    if deadline is None or not _training(plan) or days is None or get_path(result, "compute.meets_deadline"):
        return None
    gpus = get_path(result, "cluster.gpus")
    median, sure = get_path(result, "compute.deadline_gpus_median"), get_path(result, "compute.deadline_gpus_p90")
    meet = (f" {fmt(median, 'count', 'GPUs')} would meet it with even odds"
            + (f", {fmt(sure, 'count')} with a 90% chance" if sure else "") + ";") if median else ""
    return finding("deadline-missed", "critical",
                   f"On {fmt(gpus, 'count', 'GPUs')} the run takes {fmt(days, 'days')}, past the "
                   f"{fmt(deadline, 'days')} deadline:{meet} add GPUs or train on fewer tokens.",
                   ("arxiv-2001.08361", "eleuther-transformer-math-101"))


# --- the plan's own targets: latency and budget ------------------------------------------------------

#: the latency targets of a serving plan: finding id, words, planned 99th-percentile key, fastest key
LATENCY_TARGETS = {
    "ttft": ("ttft-target-missed", "time to first token", "inference.ttft_ms", "inference.ttft_ms_fastest",
             "inference.ttft_fastest_layout"),
    "tpot": ("tpot-target-missed", "time per output token", "inference.tpot_ms_p99", "inference.tpot_ms_fastest",
             "inference.tpot_fastest_layout"),
}


def _latency_target(metric: str):
    id_, words, planned_key, fastest_key, layout_key = LATENCY_TARGETS[metric]

    def check(plan, result):
        """The plan's 99th-percentile {words} is above its target: the planned and the fastest figure."""
        target = plan.workload.get(f"{metric}_ms_target")
        planned = get_path(result, planned_key)
        if plan.kind != "inference" or target is None or planned is None or planned <= target * (1 + 1e-9):
            return None
        fastest, layout = get_path(result, fastest_key), get_path(result, layout_key)
        precision = str(plan.workload.get("weight_precision") or "").upper()
        gpus = get_path(result, "inference.gpus")
        # the first sentence (the app's banner shows it) holds the target, the planned and the fastest figure
        text = (f"The {words} misses the plan's target of {fmt(target, 'ms')}: {fmt(planned, 'ms')} at the 99th "
                f"percentile on the planned {fmt(gpus, 'count', 'GPUs')}")
        if fastest is not None:
            reach = "out of reach" if fastest > target * (1 + 1e-9) else "within reach"
            text += (f", and the fastest the kit finds for {plan.model.name} on the {plan.gpu.name} is "
                     f"{fmt(fastest, 'ms')} (one request at a time, {precision} weights, on one replica laid out "
                     f"{layout_explained(layout)}), so "
                     f"the target is {reach} on this GPU at this precision.")
        else:
            text += "."
        text += (" A faster GPU, more GPUs per replica or lower-precision weights shorten it; or relax the target"
                 if metric == "tpot" else
                 " A faster GPU, more replicas, shorter prompts or lower-precision weights shorten it; or relax "
                 "the target")
        text += f" to {fmt(fastest, 'ms')} or more." if fastest is not None else "."
        return finding(id_, "critical", text, ("mlcommons-inference-rules-v5.1", "arxiv-2403.02310"))

    check.__name__ = f"{metric}_target_missed"
    check.__doc__ = check.__doc__.format(words=words)
    return check


ttft_target_missed, tpot_target_missed = _latency_target("ttft"), _latency_target("tpot")


def budget_figures(plan, result) -> tuple[str, float, float | None, float | None] | None:
    """What the plan's budget is compared with: (what, budget [USD], renting [USD], owning [USD]) for the run
    (training) or a month of serving; None without a budget."""
    budget = plan.cost.get("budget_usd")
    if budget is None:
        return None
    if _training(plan):
        return "the run", budget, get_path(result, "cost.cloud_run_usd"), get_path(result, "cost.onprem_run_usd")
    return "a month of serving", budget, get_path(result, "cost.cloud_usd_per_month"), get_path(
        result, "cost.onprem_usd_per_month")


def budget_exceeded(plan, result):
    """The cheaper of renting and owning is above the plan's budget (``cost.budget_usd``)."""
    figures = budget_figures(plan, result)
    if figures is None:
        return None
    what, budget, rent, own = figures
    known = [v for v in (rent, own) if v is not None]
    if not known or min(known) <= budget:
        return None
    pricing = PRICING_LABELS.get(plan.cost.get("pricing"), plan.cost.get("pricing") or "").lower()
    parts = ([f"{fmt(rent, 'usd')} renting ({pricing})"] if rent is not None else []) + (
        [f"{fmt(own, 'usd')} on owned hardware"] if own is not None else [])
    return finding("budget-exceeded", "critical",
                   f"{what[0].upper() + what[1:]} costs {' and '.join(parts)}, above the budget of "
                   f"{fmt(budget, 'usd')}: the cheaper of the two is {fmt(min(known), 'usd')}, "
                   f"{fmt(min(known) / budget - 1, 'pct')} over. Compare other GPUs and pricings (Options), or "
                   f"raise the budget.")


# --- storage and network ----------------------------------------------------------------------------


def storage_bandwidth_low(plan, result):
    if not _training(plan):
        return None
    read = get_path(result, "storage.read_gb_per_s")
    gpus = get_path(result, "cluster.gpus")
    if read is None or not gpus or read / gpus >= A.STORAGE_GB_PER_S_PER_GPU_RULE:
        return None
    return finding("storage-bandwidth-low", "warning",
                   f"Storage reads {fmt(read / gpus, 'gb_per_s')} per GPU ({fmt(read, 'gb_per_s')} for "
                   f"{fmt(gpus, 'count', 'GPUs')}), below the usual 1 GB/s per GPU: GPUs may wait for data, and "
                   f"checkpoint writes will stall training longer.", (QUICK_REFERENCE, "ddn-blog-dgx-b200"))


def allreduce_bandwidth_low(plan, result):
    ratio = get_path(result, "network.allreduce_to_compute_ratio")
    if ratio is None or not _training(plan) or ratio >= A.ALLREDUCE_TO_COMPUTE_MIN:
        return None
    below = (f"The network between servers carries {fmt(ratio, 'pct')} of the GPUs' internal bandwidth, below "
             f"the 10% rule of thumb")
    # the remedies the plan does not have yet (in-network reduction is no advice to a fabric that reduces)
    remedies = ("Faster NICs or more data parallelism inside a server would help" if
                get_path(result, "network.in_network_reduction") else
                "Faster NICs, in-network reduction or more data parallelism inside a server would help")
    exposed, step_s = get_path(result, "network.allreduce_exposed_s"), get_path(result, "cluster.step_time_s")
    if exposed is None or not step_s:
        return finding("allreduce-bandwidth-low", "warning",
                       f"{below}: gradient synchronisation is likely to slow every step. {remedies}.",
                       (QUICK_REFERENCE,))
    waits = (f"{fmt(exposed, 'seconds')} of each {fmt(step_s, 'seconds')} step ({fmt(exposed / step_s, 'pct')}) "
             f"waits for it")
    if exposed / step_s < A.EXPOSED_SYNC_MINOR:
        return finding("allreduce-bandwidth-low", "info",
                       f"{below}, but this layout hides most of the gradient synchronisation behind compute: "
                       f"{waits}. Check it on the fabric you buy before paying for faster NICs.", (QUICK_REFERENCE,))
    return finding("allreduce-bandwidth-low", "warning",
                   f"{below}: gradient synchronisation slows every step ({waits}). {remedies}.", (QUICK_REFERENCE,))


def scale_out_unknown(plan, result):
    s, g = plan.server, plan.gpu
    if (s.nics_per_node and s.nic_gbps) or g.network_gbps_per_gpu:
        return None
    return finding("scale-out-unknown", "info",
                   f"The catalog has no published network bandwidth for {s.name}: the kit assumed "
                   f"{A.UNKNOWN_SCALE_OUT_GBPS_PER_GPU:g} Gb/s per accelerator. Add the vendor's figure to your own "
                   f"catalog for a firmer network estimate.")


def switch_power_estimated(plan, result):
    f = result.get("facility") or {}
    if f.get("switch_power_basis") not in ("scaled", "judgement"):
        return None
    switches = plan.catalog.switches
    switch = switches.get(get_path(result, "network.fabric_switch") or "")
    name = switch.name if switch else "the fabric switch"
    each = (f"each of the fabric's {fmt(f['network_switches'], 'count', 'switches')} is taken at "
            f"{fmt(f['switch_kw'], 'power')} at most and {fmt(f['switch_typical_kw'], 'power')} in use")
    if f["switch_power_basis"] == "judgement":
        return finding("switch-power-estimated", "info",
                       f"No published power for {name}: {each}, the kit's judgement. Add the vendor's figure to "
                       f"your own catalog for a firmer network power.")
    ref = switches[f["switch_power_reference"]]
    ids = [i for i in ref.sources.split(";") if i]
    return finding("switch-power-estimated", "info",
                   f"No published power for {name}: {each}, scaled by switching capacity from the published "
                   f"figures of the {ref.name}. Add the vendor's figure to your own catalog for a firmer "
                   f"network power.", tuple([i for i in ids if i.endswith("-specs")] or ids))  # the power's page


def oversubscription(plan, result):
    o = plan.cluster.get("oversubscription")
    if o is None or not _training(plan) or o <= A.TRAINING_OVERSUBSCRIPTION_MAX:
        return None
    return finding("oversubscription-training", "warning",
                   f"The network is {o:g}:1 oversubscribed; training traffic needs a non-blocking (1:1) network, or "
                   f"at most about 2:1, as NVIDIA's reference designs build it.", ("nvidia-ra-11333-001",))


def checkpoint_interval(plan, result):
    if not _training(plan):
        return None
    t = get_path(result, "checkpoint.interval_min")
    opt = get_path(result, "checkpoint.daly_min") or get_path(result, "checkpoint.young_min")
    if t is None or not opt or not math.isfinite(t) or not math.isfinite(opt):  # no interruptions: no optimum
        return None
    if 1 / CHECKPOINT_FACTOR <= t / opt <= CHECKPOINT_FACTOR:
        return None
    why = "too rare: failures lose more work" if t > opt else "too frequent: the writes stall training"
    return finding("checkpoint-interval", "warning",
                   f"Checkpoints every {fmt(t, 'minutes')} are {t / opt:,.1f} times the optimum "
                   f"({fmt(opt, 'minutes')}): {why}.",
                   ("doi-10.1145-361147.361115", "doi-10.1016-j.future.2004.11.016"))


def run_never_finishes(plan, result):
    g = get_path(result, "reliability.goodput")
    if g is None or not _training(plan) or g >= A.GOODPUT_STALLED:
        return None
    return finding("run-never-finishes", "critical",
                   "Interruptions come faster than the run can write a checkpoint and restart: less than a millionth "
                   "of the time would advance training, so the run practically never finishes, and its duration, "
                   "energy and run cost are not computed. Checkpoint more often, write "
                   "checkpoints faster or use fewer GPUs.",
                   ("doi-10.1145-361147.361115", "arxiv-2407.21783"))


def goodput_low(plan, result):
    g = get_path(result, "reliability.goodput")
    if g is None or not _training(plan) or g >= A.GOODPUT_MIN or g < A.GOODPUT_STALLED:
        return None
    return finding("goodput-low", "warning",
                   f"Only {fmt(g, 'pct')} of the time advances training; more than 10% goes to checkpoint writes, "
                   f"lost work and restarts. Faster checkpoints (asynchronous, local NVMe) or fewer interruptions "
                   f"would recover it.", ("arxiv-2407.21783",))


def pipeline_bubble(plan, result):
    """The pipeline idles a large share of each step: the global batch leaves each data-parallel copy too few
    micro-batches for its stages (at this GPU count no layout the kit searched, or the plan's own, avoids it)."""
    idle, stages = get_path(result, "network.bubble_fraction"), get_path(result, "cluster.pipeline_parallel")
    micro, copies = get_path(result, "network.microbatches"), get_path(result, "cluster.data_parallel")
    if not _training(plan) or idle is None or idle < A.PIPELINE_BUBBLE_MAX or not (stages and micro and copies):
        return None
    batch = plan.workload.get("global_batch_tokens")
    return finding("pipeline-bubble", "warning",
                   f"The pipeline's {stages:,.0f} stages sit idle for {fmt(idle, 'pct')} of each training step: the "
                   f"global batch of {fmt(batch, 'big', 'tokens')} gives each of the {copies:,.0f} data-parallel "
                   f"copies only {fmt(micro, 'count', 'micro-batches')}, and a pipeline idles (stages - 1) / "
                   f"micro-batches of its compute time. A larger global batch (Llama 3 405B was trained at 16 "
                   f"million tokens a step by the end of its run), or fewer GPUs over a longer run, would recover it.",
                   ("arxiv-2104.04473", "arxiv-2407.21783"))


def storage_growth(plan, result):
    factor = plan.cluster.get("storage_growth_factor")
    if factor is None or factor >= A.SEED_STORAGE_GROWTH:
        return None
    return finding("storage-growth-headroom", "warning",
                   f"Storage is sized with {factor:g}x headroom; data sets tend to grow by an order of magnitude as "
                   f"projects mature, and it is cheaper to overbuild storage than to retrofit it.", (WHAT_IS,))


# --- facility --------------------------------------------------------------------------------------


def rack_density(plan, result):
    kw = get_path(result, "facility.rack_kw_actual")
    if kw is None:
        return None
    chosen = plan.facility.get("cooling", "auto")
    rec = get_path(result, "facility.cooling_recommended")
    order = {"air": 0, "rear-door": 1, "liquid": 2}
    if chosen != "auto" and rec in order and order.get(chosen, 0) < order[rec]:
        return finding("rack-density-cooling", "critical",
                       f"Racks draw {fmt(kw, 'power')} but the plan chose {chosen} cooling; at this density use {rec} "
                       f"(air cooling tops out near 30 kW per rack, about 41 kW with strict containment).",
                       ("nvidia-ra-11333-001",))
    if kw <= A.AIR_CONTAINMENT_MAX_KW_PER_RACK:
        return None
    beyond = f"Racks draw {fmt(kw, 'power')}, beyond what air cooling removes (about 41 kW with strict containment)"
    if chosen != "auto":  # the plan chose cooling that removes it: a requirement of the site, stated once
        return finding("rack-density-beyond-air", "info",
                       f"{beyond}: the site must supply the {chosen} cooling the plan chose.", ("nvidia-ra-11333-001",))
    return finding("rack-density-beyond-air", "warning",
                   f"{beyond}: the site must supply {rec} cooling, which the plan's power and cooling figures "
                   f"assume. Check that the data centre offers it before you commit.", ("nvidia-ra-11333-001",))


def rack_over_budget(plan, result):
    kw, budget = get_path(result, "facility.rack_kw_actual"), plan.facility.get("rack_kw")
    if kw is None or budget is None or kw <= budget:
        return None
    return finding("rack-over-budget", "critical",
                   f"One {short_name(plan.server)} draws {fmt(kw, 'power')}, more than the {fmt(budget, 'power')} "
                   f"rack power budget: raise the rack power budget or choose another server.",
                   tuple(i for i in plan.server.sources.split(";") if i))


def floor_loading(plan, result):
    kg, limit = get_path(result, "facility.rack_weight_kg"), plan.facility.get("floor_kg_per_rack")
    if kg is None or limit is None or kg <= limit:
        return None
    return finding("floor-loading", "warning",
                   f"The fullest compute rack weighs about {fmt(kg, 'count', 'kg')}, above the "
                   f"{fmt(limit, 'count', 'kg')} floor rating per rack position the plan assumes: check the slab or "
                   f"raised floor.")


def no_server_power(plan, result):
    if plan.server.max_power_kw is not None:
        return None
    return finding("no-server-power", "warning",
                   f"The catalog has no published power for {short_name(plan.server)}: facility power, cooling, racks, "
                   f"energy and owned cost are not computed. Add the vendor's figure to your own catalog.")


def single_point_of_failure(plan, result):
    if plan.facility.get("redundancy") != "N":
        return None
    days = get_path(result, "compute.wall_clock_days")
    if plan.kind == "inference":
        what = "an always-on inference service"
    elif days is not None and days > LONG_RUN_DAYS:
        what = f"a {fmt(days, 'days')} training run"
    else:
        return None
    return finding("single-point-of-failure", "warning",
                   f"Power redundancy N has no spare module: one failure stops {what}. Use N+1 or 2N.",
                   ("nvidia-superpod-gb200-ra-arch", "schneider-wp75"))


#: sequences per attention group below which a mixture of experts' serving speed is poorly calibrated (the
#: runs below were all at 4-256 sequences; data/calibration/serving.md, "What is still off") [judgement]
MOE_FEW_SEQUENCES = 512
#: published over predicted output tokens/s of the 2026 check runs at fixed concurrency, as `aiplan validate`
#: predicts them: DeepSeek-R1 on six GPU types (B200, B300, H200, MI300X, MI325X, MI355X; median, P10 and P90)
#: and gpt-oss-120b on H100 (median); on CDNA 3 (MI300X, MI325X) alone, DeepSeek-R1's median over all its runs
#: and over those at 8 requests or fewer, which ran slower than predicted. Quoted by the finding;
#: tests/test_serving.py recomputes them.
MOE_FEW_SEQUENCES_RATIO = {"median": 1.2, "low": 0.9, "high": 1.6, "gpt_oss_h100": 2.0,
                           "cdna3_median": 0.9, "cdna3_few": 0.6}
#: the GPU family whose 2026 runs at a few sequences were slower than predicted, and the concurrency they are
#: quoted at
SLOWER_FEW_SEQUENCES_FAMILY, FEW_SEQUENCES = "cdna3", 8


def moe_serving_few_sequences(plan, result):
    """A mixture of experts served at a few sequences per attention group: the kit's speed there is too low at
    the median of the published runs, and too high on CDNA 3 (MI300X, MI325X)."""
    if plan.kind != "inference" or (plan.model.experts or 0) <= 1:
        return None
    seqs = get_path(result, "inference.concurrent_sequences")
    per_group = None if seqs is None else seqs / (get_path(result, "inference.attention_data_parallel") or 1)
    if per_group is None or per_group >= MOE_FEW_SEQUENCES:
        return None
    where = "on each replica" if per_group == seqs else "on each attention group of a replica"
    r = MOE_FEW_SEQUENCES_RATIO
    basis = (f"The plan serves {plan.model.name}, a mixture-of-experts model, about {fmt(per_group, 'count')} "
             f"requests at a time {where}. At a few hundred requests or fewer the kit's speed for such models rests on "
             f"one benchmark series (DeepSeek-R1 on B200 and H200, late 2025).")
    if plan.gpu.family == SLOWER_FEW_SEQUENCES_FAMILY:
        return finding("moe-serving-few-sequences", "warning",
                       f"{basis} DeepSeek-R1 runs published in 2026 on the MI300X and MI325X were slower than "
                       f"it predicts: they reached {r['cdna3_median']:.1f} times its speed at the median (4 to 256 "
                       f"requests) and {r['cdna3_few']:.1f} times at {FEW_SEQUENCES} requests or fewer, and their "
                       f"time per output token was longer than predicted. Under a tight time-per-output-token target "
                       f"at a few requests, the GPU count is more likely too low than too high: check a measured run "
                       f"on this GPU before you commit.",
                       ("inferencex-app-benchmarks-fixture",))
    return finding("moe-serving-few-sequences", "warning",
                   f"{basis} Published runs of 2026 at 4 to 256 requests were {r['median']:.1f} times faster than "
                   f"it predicts at the median, and "
                   f"between {r['low']:.1f} and {r['high']:.1f} times for most (DeepSeek-R1 on six GPU types); "
                   f"gpt-oss on H100 was about {r['gpt_oss_h100']:.0f} times faster. Their time per output token "
                   f"differed by as much. Treat the GPU count, the cost and the time per output token as estimates "
                   f"within about a factor of {r['high']:.1f}; under a tight time-per-output-token target the GPU "
                   f"count is more likely too high than too low.",
                   ("trtllm-techblog1-b200-latency", "inferencex-issue-828", "inferencex-app-benchmarks-fixture"))


def _pool_layouts(result) -> str:
    """The layouts of a two-pool plan's replicas, in words for a client."""
    prefill, decode = (get_path(result, f"inference.{pool}_layout") for pool in ("prefill", "decode"))
    return (f"Each prefill replica is laid out {prefill} ({layout_words(prefill)}), each decode replica {decode} "
            f"({layout_words(decode)}).")


def serving_pools(plan, result):
    """Whether separate prefill and decode pools would serve the load on fewer GPUs than one pool."""
    if plan.kind != "inference":
        return None
    one, two = get_path(result, "inference.one_pool_gpus"), get_path(result, "inference.two_pool_gpus")
    if one is None or two is None:
        return None
    sources = ("arxiv-2401.09670", "arxiv-2311.18677")
    if get_path(result, "inference.one_pool_meets_latency") is False and get_path(result, "inference.disaggregated"):
        return finding("two-pools-needed", "info",
                       f"One pool of replicas that prefill and decode together cannot meet the latency targets; "
                       f"separate prefill and decode pools meet them on {fmt(two, 'count')} GPUs, which the plan "
                       f"uses. {_pool_layouts(result)}", sources)
    if two < one:
        served = "They are what the plan uses." if get_path(result, "inference.disaggregated") else \
            "The plan keeps one pool."
        return finding("two-pools-fewer-gpus", "info",
                       f"Separate prefill and decode pools serve this load within the targets on {fmt(two, 'count')} "
                       f"GPUs, against {fmt(one, 'count')} for one pool, each prompt's key/value cache moving from "
                       f"one pool to the other in {fmt(get_path(result, 'inference.kv_transfer_ms'), 'ms')}. "
                       f"{served} {_pool_layouts(result)}", sources)
    return finding("one-pool-enough", "info",
                   f"One pool of replicas that prefill and decode together needs {fmt(one, 'count', 'GPUs')}; separate "
                   f"prefill and decode pools would need {fmt(two, 'count')}: at this load and these targets "
                   f"disaggregation does not pay." + (" The plan asks for two pools and uses them."
                                                      if get_path(result, "inference.disaggregated") else ""), sources)


# --- cost -------------------------------------------------------------------------------------------


def utilisation_below_breakeven(plan, result):
    u = plan.cost.get("utilisation")
    be = get_path(result, "cost.breakeven_utilisation")
    if u is None or get_path(result, "cost.cloud_usd") is None or get_path(result, "cost.onprem_usd") is None:
        return None
    sources = (QUICK_REFERENCE, WHAT_IS, "epoch-hardware-prices", "cbre-na-data-center-trends-h2-2024")
    if be is None and get_path(result, "cost.pricing_used") in COMMITMENT_YEARS:
        return None  # a reservation is billed every hour: utilisation does not move the comparison
    if be is None:
        return finding("owning-never-cheaper", "warning",
                       f"At {fmt(get_path(result, 'cost.cloud_usd_per_gpu_hour'), 'usd_rate')} per GPU-hour, renting "
                       f"stays cheaper than owning even at full utilisation.", sources)
    if u >= be:
        return None
    return finding("utilisation-below-breakeven", "warning",
                   f"The cluster would be busy {fmt(u, 'pct')} of the time, below the {fmt(be, 'pct')} at which owning "
                   f"pays off: renting is cheaper at this cloud price.", sources)


def breakeven_after_ownership(plan, result):
    months, years = get_path(result, "cost.breakeven_months"), plan.cost.get("years")
    if months is None or years is None or months <= years * U.MONTHS_PER_YEAR:
        return None
    return finding("breakeven-after-ownership", "warning",
                   f"Owning pays back only after {fmt(months, 'months')}, later than the {years:g}-year ownership "
                   f"period.", (WHAT_IS,))


def servers_partly_used(plan, result):
    """Owning buys whole servers (a GB200 NVL72 is one unit of 72 GPUs): the GPUs beyond the plan's are paid for."""
    gpus, nodes = get_path(result, "cluster.gpus"), get_path(result, "cluster.nodes")
    per_node = get_path(result, "cluster.gpus_per_node")
    if not gpus or not nodes or not per_node or get_path(result, "cost.onprem_usd") is None:
        return None
    owned = nodes * per_node
    idle = owned - gpus
    if idle <= 0:
        return None
    rented = get_path(result, "cost.rented_gpus")
    renting = ""
    if rented and get_path(result, "cost.cloud_usd") is not None:
        renting = (f"; renting bills {fmt(rented, 'count')}" if rented < owned
                   else "; renting's whole instances bill them too")
    use = "a faster run" if _training(plan) else "more load, lower latency or a failed server's share"
    return finding("servers-partly-used", "warning" if idle / owned >= A.IDLE_OWNED_GPU_SHARE else "info",
                   f"The plan uses {fmt(gpus, 'count', 'GPUs')}, but owning buys whole servers: "
                   f"{fmt(nodes, 'count')} {short_name(plan.server)} with {fmt(owned, 'count', 'GPUs')}, so "
                   f"{fmt(idle, 'count')} ({fmt(idle / owned, 'pct')}) are paid for and idle{renting}. Give them "
                   f"work ({use}) or choose a server with fewer GPUs before comparing owning with renting.")


def instances_partly_used(plan, result):
    """Renting bills whole instances: a plan smaller than its offer's instance pays for idle GPUs (a one-GPU service
    on an 8-GPU instance). Silent where :func:`servers_partly_used` already says it of owning and renting."""
    gpus, rented = get_path(result, "cluster.gpus"), get_path(result, "cost.rented_gpus")
    cloud = plan.cloud
    if not gpus or not rented or rented <= gpus or cloud is None or get_path(result, "cost.cloud_usd") is None:
        return None
    owned = owned_gpus(result["cluster"])
    if get_path(result, "cost.onprem_usd") is not None and owned > gpus:
        return None
    idle = rented - gpus
    smaller = sorted({o.name for o in plan.catalog.clouds.values()
                      if o.gpu == cloud.gpu and o.gpus < cloud.gpus and o.on_demand_usd_per_hr})
    where = (f"Offers of the {plan.gpu.name} in smaller units: {', '.join(smaller[:3])}"
             f"{' and others' if len(smaller) > 3 else ''}; the options explorer ranks them" if smaller else
             "Give them work, or ask the provider for a smaller instance")
    return finding("instances-partly-used", "warning" if idle / rented >= A.IDLE_OWNED_GPU_SHARE else "info",
                   f"The plan uses {fmt(gpus, 'count', 'GPUs')}, but {cloud.name} rents {cloud.gpus} GPUs an "
                   f"instance: {fmt(rented, 'count')} are billed, so {fmt(idle, 'count')} "
                   f"({fmt(idle / rented, 'pct')}) are paid for and idle, and the renting cost counts them. {where}.")


def api_cheaper(plan, result):
    """Published API prices of the plan's model below what serving it costs the plan, per million tokens at the
    plan's mix of prompt and output tokens: a warning when the cheapest is below both renting and owning."""
    apis, own = api_against_own(result)
    if not apis or not own or not api_below(apis[0]["usd_per_mtok_at_plan_mix"], max(own.values())):
        return None
    best = apis[0]
    cheaper = sum(api_below(r["usd_per_mtok_at_plan_mix"], min(own.values())) for r in apis)
    terms = ", ".join(t for t in (best.get("precision") or "", f"as of {best['as_of']}",
                                  "second-hand" if best.get("status") == "secondary" else "") if t)
    ours = " and ".join(f"{fmt(v, 'usd_rate')} {side}" for side, v in own.items())
    month = served_tokens_per_month(plan) / 1e6 * best["usd_per_mtok_at_plan_mix"]
    rent = get_path(result, "cost.cloud_usd_per_month")
    against = f", against {fmt(rent, 'usd')} renting" if rent else ""
    n, both = len(apis), "both" if len(own) > 1 else "the plan's"
    if not cheaper:  # the cheapest is below the dearer side only
        count = f"it is below {max(own, key=own.get)} only"
    elif n == 1:
        count = f"the only published API price the kit has is below {both}"
    else:
        which = "all" if cheaper == n else f"{fmt(cheaper, 'count')} of the"
        verb = "is" if cheaper == 1 else "are"
        count = f"{which} {fmt(n, 'count')} published API prices the kit has {verb} below {both}"
    price = fmt(best["usd_per_mtok_at_plan_mix"], "usd_rate")
    return finding("api-cheaper", "warning" if cheaper else "info",
                   f"{best['provider']} sells {plan.model.name} for {price} per million tokens at this plan's mix "
                   f"({terms}), against {ours} for this plan; {count}. At this load that API would cost "
                   f"{fmt(month, 'usd')} a month{against}. Serving the model yourself pays for control of the data, "
                   f"the latency or a tuned model, not for the price; check the API's precision, rate limits and "
                   f"latency before comparing.",
                   tuple(i for i in best["sources"].split(";") if i))


def spot_never_finishes(plan, result):
    if plan.cloud is None or get_path(result, "cost.pricing_used") != "spot" or get_path(result, "cost.cloud_usd"):
        return None
    instances = -(-(get_path(result, "cluster.gpus") or 0) // plan.cloud.gpus)
    return finding("spot-never-finishes", "critical",
                   f"On {fmt(instances, 'count', 'spot instances')}, reclaims come faster than the job can checkpoint "
                   f"and restart ({plan.cost['spot_interruptions_per_instance_month']:g} per instance-month): rented "
                   f"spot capacity would make no progress, so the cloud cost is not computed. Choose on-demand or "
                   f"reserved pricing, or fewer instances.", ("aws-spot-instance-advisor",))


def _offers_priced(plan, pricing: str, label: str) -> str:
    """The catalog's offers of the plan's GPU that publish a price at ``pricing``, as a sentence."""
    column = PRICING_COLUMN[pricing]
    names = sorted({o.name for o in plan.catalog.clouds.values() if o.gpu == plan.gpu.id and getattr(o, column, None)})
    if not names:
        return (f"No offer of the {plan.gpu.name} in the catalog publishes one: add the provider's quote to your own "
                "catalog.")
    more = " and others" if len(names) > 3 else ""
    return (f"Offers of the {plan.gpu.name} with a {label} price: {', '.join(names[:3])}{more}; choose one as the "
            "cloud offer, or compare them in the options explorer.")


def no_cloud_offer(plan, result):
    if plan.cloud is not None:
        used, asked = get_path(result, "cost.pricing_used"), plan.cost.get("pricing")
        if used and asked and used != asked:
            label = PRICING_LABELS.get(asked, asked).lower()
            return finding("pricing-unavailable", "warning",
                           f"{plan.cloud.name} has no published {label} price; the cost uses its "
                           f"{PRICING_LABELS.get(used, used).lower()} price. {_offers_priced(plan, asked, label)}",
                           tuple(i for i in plan.cloud.sources.split(";") if i))
        return None
    return finding("no-cloud-offer", "info",
                   f"The catalog has no priced cloud offer for {plan.gpu.name}: renting costs and the breakeven are "
                   f"not computed. Choose an offer, or add the provider's quote to your own catalog.")


def no_server_price(plan, result):
    if plan.cost.get("server_price_usd") is not None:
        return None
    return finding("no-server-price", "info",
                   f"No published price for {short_name(plan.server)}: the cost of owning is not computed. Enter the "
                   f"price quoted for it.")


def _age_days(as_of: str | None, now: _dt.date) -> int | None:
    if not as_of:
        return None
    try:
        return (now - _dt.date.fromisoformat(as_of)).days
    except ValueError:
        return None


def _newer_offer(plan) -> Any:
    """The newest priced offer of the same GPU and provider, if newer than the plan's."""
    same = [c for c in plan.catalog.clouds.values() if c.gpu == plan.cloud.gpu and c.provider == plan.cloud.provider
            and c.as_of > plan.cloud.as_of]
    return max(same, key=lambda c: c.as_of) if same else None


def stale_price(plan, result):
    now, stale, sources = today(), [], []
    if plan.cloud is not None and (_age_days(plan.cloud.as_of, now) or 0) > STALE_AFTER_DAYS:
        newer = _newer_offer(plan)
        hint = f" (newer: {newer.name}, {newer.as_of})" if newer else ""
        stale.append(f"the {plan.cloud.name} price of {plan.cloud.as_of}{hint}")
        sources += plan.cloud.sources.split(";")
    server_price_date = get_path(result, "cost.server_price_as_of")
    if (_age_days(server_price_date, now) or 0) > STALE_AFTER_DAYS and not _valued_at_a_date(plan):
        stale.append(f"the {short_name(plan.server)} price of {server_price_date}")
        sources += (get_path(result, "cost.server_price_source") or "").split(";")
    if not stale:
        return None
    return finding("stale-price", "warning",
                   f"Prices more than a year old: {'; '.join(stale)}. Ask for a current quote before deciding.",
                   tuple(dict.fromkeys(i for i in sources if i)))


def _valued_at_a_date(plan) -> bool:
    """Whether the plan values its servers at a date of its own (then an old price is the point)."""
    return bool(plan.cost.get("purchase_date"))


def server_price_fallback(plan, result):
    """The server price is a list price or an analyst's estimate (no street or volume price is published), or a
    new price where the plan asks for used servers."""
    kind = get_path(result, "cost.server_price_kind") or ""
    if "no street or volume price" not in kind and "no used price" not in kind:
        return None
    buyer = {"enterprise": "an enterprise", "hyperscaler": "a hyperscaler", "large-neocloud": "a large neocloud"}.get(
        plan.cost["buyer_profile"], "a buyer")
    if "no used price" in kind:
        what = "a new server's price: no used price is published for it, so owning is likely costed too high"
    elif kind.startswith("list"):
        what = (f"a list price: no street or volume price is published for it, and {buyer} usually pays less, so "
                f"owning is likely costed too high")
    else:
        what = "an analyst's estimate: no list, street or volume price is published for it, so owning is uncertain"
    return finding("server-price-fallback", "warning",
                   f"The {short_name(plan.server)} price of {fmt(plan.cost['server_price_usd'], 'usd')} is {what}. "
                   f"Enter the price quoted to you.",
                   tuple(i for i in (get_path(result, "cost.server_price_source") or "").split(";") if i))


def stale_spec(plan, result):
    """Estimated figures (no source states them) older than a year: the ones to replace with quotes."""
    now = today()
    old = [(label, rec) for label, rec in (("GPU", plan.gpu), ("server", plan.server), ("grid", plan.region))
           if (_age_days(rec.as_of, now) or 0) > STALE_AFTER_DAYS and rec.status == "estimate"]
    if not old:
        return None
    items = "; ".join(f"the {label} figures for {getattr(rec, 'name', rec.id)} ({rec.as_of})" for label, rec in old)
    return finding("stale-spec", "info",
                   f"Estimates more than a year old, which no published source states: {items}. Replace them with "
                   f"the vendor's current specification.")


def capacity_risk_finding(plan, result):
    """An on-demand or spot fleet larger than one can count on without a reservation (issue 25)."""
    pricing, gpus = get_path(result, "cost.pricing_used"), get_path(result, "cost.rented_gpus")
    if pricing is None or not gpus or capacity_risk(pricing, gpus) != "high":
        return None
    aws = plan.cloud is not None and plan.cloud.provider == "aws"
    yardstick = "" if aws else ", the yardstick the kit uses for every provider"
    return finding("capacity-risk", "warning",
                   f"{fmt(gpus, 'count')} GPUs rented {PRICING_LABELS.get(pricing, pricing).lower()} may not be "
                   f"available when needed: AWS's guaranteed short-term GPU capacity comes in blocks of at most "
                   f"{fmt(A.CAPACITY_RISK_GPUS, 'count')} GPUs (64 instances){yardstick}. Reserve the capacity (a "
                   f"reservation or a capacity block) or confirm it with the provider before committing to the plan.",
                   ("aws-ec2-capacity-blocks-guide",))


# --- the plan's own offer -----------------------------------------------------------------------------


def pool_groups(text: str) -> tuple[int, int]:
    """(tensor-parallel group, GPUs of one replica) of one layout as :func:`layout_name` writes it."""
    tp, dp, _, pp = layout_degrees(text)
    return tp, tp * dp * pp


def layout_groups(plan, r) -> tuple[int, int]:
    """(largest tensor-parallel group, GPUs of the largest unit that must talk over a fabric: a serving
    replica, or a training run's whole cluster) of a result (a serving option row's own layout)."""
    if plan.kind != "inference":
        c = r["cluster"]
        return int(c.get("tensor_parallel") or 1), int(c.get("gpus") or 1)
    text = (r.get("_serving") or {}).get("layout") or r["inference"].get("layout") or ""
    groups = [pool_groups(part) for part in text.split(",")] or [(1, 1)]
    inf = r["inference"]
    if not text:
        return int(inf.get("tensor_parallel") or 1), int(inf.get("gpus_per_replica") or 1)
    return max(g[0] for g in groups), max(g[1] for g in groups)


def instance_problem(plan, r, cloud) -> str | None:
    """Why ``cloud``'s instances cannot hold the layout of result ``r``, in words; None when they can."""
    tp, unit = layout_groups(plan, r)
    per = cloud.scale_up  # a per-GPU price of a larger machine: that machine's scale-up domain
    if tp > per:
        return (f"a tensor-parallel group of {tp} GPUs must sit in one instance; this offer has {per} "
                f"GPU{'s' if per > 1 else ''} per instance")
    if unit > per and per < A.SCALE_OUT_MIN_GPUS_PER_INSTANCE:
        what = "the training run" if plan.kind != "inference" else "one serving replica"
        return (f"{what} spans {math.ceil(unit / per):,} instances and needs a scale-out fabric between them; "
                f"this offer's {per}-GPU instances have none the catalog knows of")
    return None


def spot_problem(plan, pricing: str | None) -> str | None:
    """Why spot does not suit the plan's workload, in words; None when it does or the pricing is not spot."""
    if pricing == "spot" and not plan.workload.get("interruptible"):
        return "spot capacity can be reclaimed at any time and this workload does not tolerate interruption"
    return None


def offer_unsuitable(plan, result):
    """The plan rents an offer it cannot use as planned: spot for a workload that does not tolerate
    interruption, or instances that cannot hold its layout (the options explorer excludes both)."""
    cloud, pricing = plan.cloud, get_path(result, "cost.pricing_used")
    if cloud is None or pricing is None or pricing == "buy" or not get_path(result, "cost.cloud_usd"):
        return None
    reasons = [why for why in (spot_problem(plan, pricing), instance_problem(plan, result, cloud)) if why]
    if not reasons:
        return None
    return finding("offer-unsuitable", "warning",
                   f"{cloud.name}, {PRICING_LABELS.get(pricing, pricing).lower()}: {'; '.join(reasons)}. Choose "
                   f"another offer or pricing: the options explorer ranks only those that can run the plan.",
                   ("aws-spot-instance-advisor",) if pricing == "spot" else ())


CHECKS: tuple[Callable, ...] = (
    model_does_not_fit, deadline_unreachable, run_never_finishes, duration_absurd, deadline_missed, no_server_power,
    ttft_target_missed, tpot_target_missed, budget_exceeded, pipeline_bubble,
    rack_over_budget, rack_density, mfu_outside_band, fp4_training_extrapolated, newer_than_calibration,
    blackwell_runs_slower, published_run,
    storage_bandwidth_low,
    allreduce_bandwidth_low, goodput_low, checkpoint_interval, oversubscription, storage_growth, floor_loading,
    single_point_of_failure, utilisation_below_breakeven, breakeven_after_ownership, servers_partly_used,
    instances_partly_used, api_cheaper,
    spot_never_finishes, stale_price,
    stale_spec, scale_out_unknown, switch_power_estimated, no_cloud_offer, no_server_price, server_price_fallback,
    serving_pools,
    capacity_risk_finding, offer_unsuitable, moe_serving_few_sequences,
)


def run_checks(plan, result: dict[str, Any]) -> list[dict[str, Any]]:
    """Findings ``{id, severity, message, source, sources}`` for ``plan`` and its ``result``.

    ``plan`` is a :class:`~aiplan.plan.Plan` (or anything :func:`~aiplan.plan.load_plan` accepts).
    ``source`` is the short footnote of the ``sources`` (author, year, title).
    """
    plan = load_plan(plan)
    out = []
    for check in CHECKS:
        f = check(plan, result)
        if f is not None:
            refs = [plan.catalog.sources[i] for i in f["sources"] if i in plan.catalog.sources]
            f["source"] = "; ".join(r.short() for r in refs)
            out.append(f)
    return out
