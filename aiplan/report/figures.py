"""The figures of each step as people read them: label, value with its unit, one sentence, the rule of thumb.

Plain data (no HTML): the report's step sections, the workbook's step sheets and the slide
bullets all read :func:`step_figures`. Sentences are templates whose ``{section.key}`` fields
are filled with :func:`aiplan.core.fields.format_field` (``{key:fmt}`` picks a format of
:data:`FORMATS`); a sentence whose figures do not all apply falls back to the registry's
description of the figure, so no "n/a" reaches a client.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.catalog import mlperf_latency_limits_ms
from ..core.fields import RESULT_FIELDS, SECTION_TITLES, describe, format_field, format_range, get_path
from ..core.fields import format_value as fmt
from ..cost import DRIVER_LABELS, PRICING_LABELS
from ..model import layout_explained
from ..plan import MODEL, TOP
from ..plan import SECTIONS as PLAN_SECTIONS
from ..present.summary import idle_owned_text

#: the four steps of a plan, each with its result sections, in report order
STEPS: dict[str, tuple[str, ...]] = {
    "Model": ("model", "memory", "compute", "inference"),
    "Cluster": ("cluster", "network", "storage", "checkpoint", "reliability"),
    "Facility": ("facility",),
    "Cost": ("cost",),
}
SECTIONS = tuple(s for group in STEPS.values() for s in group)
#: the question each step answers (section introductions, slide subtitles): a training plan's
STEP_QUESTIONS = {
    "Model": "What the workload needs: parameters, memory per GPU, compute and time.",
    "Cluster": "The machines that train it: parallel layout, network fabric, storage, checkpoints and reliability.",
    "Facility": "Where they live: power, cooling, racks, floor space, energy and carbon.",
    "Cost": "Renting against owning: the run, the cluster over its life, and where they break even.",
}
#: ... and a serving plan's, where they differ
SERVING_STEP_QUESTIONS = {
    "Model": "What the service needs: parameters, memory per GPU, latency and GPUs for the load.",
    "Cluster": "The machines that serve it: servers, network fabric and storage.",
    "Cost": "Renting against owning: a month of service, a million tokens, and where owning breaks even.",
}


def step_question(result: Mapping, name: str) -> str:
    """The question a step answers for this plan (a serving plan has no run, checkpoints or training time)."""
    serving = get_path(result, "plan.workload.kind") == "inference"
    return (SERVING_STEP_QUESTIONS.get(name) if serving else None) or STEP_QUESTIONS[name]


#: chart builders of :mod:`aiplan.present.charts` by step, the headline chart first
STEP_CHARTS: dict[str, tuple[str, ...]] = {
    "Model": ("memory", "training_sweep", "inference_sweep"),
    "Cluster": ("layout",),
    "Facility": ("facility", "growth"),
    "Cost": ("cumulative_cost", "utilisation", "sensitivity"),
}
#: extra formats of a template field (``{cost.years:years}``)
FORMATS: dict[str, Callable[[Any], str]] = {
    "years": lambda v: "1 year" if v == 1 else f"{v:g} years",
    "count": lambda v: fmt(v, "count"),
    "pct": lambda v: fmt(v, "pct"),
    "odds": lambda v: fmt(v, "odds"),
    "text": lambda v: str(v),
    "layout": lambda v: layout_explained(str(v)),
    "stages": lambda v: "in one pipeline stage" if v == 1 else f"over {fmt(v, 'count')} pipeline stages",
    "days": lambda v: fmt(v, "days"),
    "buyer": lambda v: {"enterprise": "an enterprise", "hyperscaler": "a hyperscaler",
                        "large-neocloud": "a large neocloud"}.get(v, str(v)),
}
_FIELD = re.compile(r"\{([a-z0-9_.\[\]]+)(?::([a-z]+)(?:=([^}]+))?)?\}")


def plan_spec(path: str) -> Any:
    """The schema entry (:class:`aiplan.plan.F`) of a plan field ("workload.tokens"), or None."""
    section, _, name = path.partition(".")
    if not name:
        return TOP.get(section)
    return (MODEL if section == "model" else PLAN_SECTIONS.get(section, {})).get(name)


#: how a choice that is not a plain word is named for people (else: the value with a capital, hyphens as spaces;
#: precisions in capitals)
CHOICE_WORDS = {"lora": "LoRA", "qlora": "QLoRA", "adamw": "AdamW", "adamw-8bit": "AdamW 8-bit", "sgd": "SGD",
                "mtp": "Multi-token prediction", "draft": "Draft model", "auto": "Automatic", "rear-door": "Rear-door",
                **PRICING_LABELS}


def choice_label(path: str, value: str) -> str:
    """A choice of plan field ``path`` as the app's dropdowns and the report show it.

    >>> [choice_label(p, v) for p, v in (("workload.kv_precision", "fp8"), ("cost.pricing", "reserved-1y"),
    ...                                  ("cost.buyer_profile", "large-neocloud"), ("workload.method", "qlora"))]
    ['FP8', 'Reserved 1 year', 'Large neocloud', 'QLoRA']
    """
    if path.endswith("precision"):
        return value.upper()
    text = CHOICE_WORDS.get(value) or value.replace("-", " ")
    return text[:1].upper() + text[1:]


#: the words of a plan field's per-unit ("USD/GPU-yr" reads "per GPU-year")
PER_WORDS = {"yr": "year", "GPU-yr": "GPU-year"}


def format_plan_value(path: str, value: Any) -> str:
    """A plan field's value for people, in the field's own format and unit (a choice in words)."""
    spec = plan_spec(path)
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if spec is not None and spec.kind == "choice" and isinstance(value, str) and value in spec.choices:
        return choice_label(path, value)
    if spec is None or isinstance(value, str):
        return fmt(value)
    kind = spec.fmt or ("count" if spec.kind == "int" else "bool" if spec.kind == "bool" else "number")
    per = PER_WORDS.get(spec.unit.partition("/")[2], spec.unit.partition("/")[2]) if spec.unit else ""
    if spec.unit.startswith("USD/") and kind in ("usd", "usd_rate"):
        return f"{fmt(value, kind)} per {per}"  # "$150.00 per TB", not a bare "$150.00"
    if spec.unit.startswith("1/"):
        return f"{fmt(value, kind)} a {per}"  # "0.100 a month", not "0.100 1/month"
    unit = spec.unit if kind in ("count", "number", "big") else ""
    return fmt(value, kind, unit)


def format_any(key: str, value: Any) -> str:
    """A result key's or a plan field's (``plan.…``) value, formatted."""
    if key in RESULT_FIELDS:
        return format_field(key, value)
    if key.startswith("plan."):
        return format_plan_value(key[len("plan."):], value)
    return fmt(value)


def fill(template: str, result: Mapping) -> str | None:
    """``template`` with every ``{key}`` formatted; None when a field is missing (does not apply).

    ``{key:fmt}`` formats with :data:`FORMATS`; ``{key:n=unit}`` as a count of ``unit``
    ("1 compute rack", "42 compute racks"); ``{key:to=other}`` the range from ``key`` to the key ``other``
    ("2.30 to 4.29 months"). The first letter is capitalised.
    """
    missing = False

    def one(m: re.Match) -> str:
        nonlocal missing
        value = get_path(result, m.group(1))
        if value is None:
            missing = True
            return ""
        if m.group(2) == "n":
            return fmt(value, "count", m.group(3))
        if m.group(2) == "to":  # a range to another key, in this key's kind
            high = get_path(result, m.group(3))
            missing = missing or high is None
            return "" if high is None else format_range(value, high, RESULT_FIELDS[m.group(1)].kind, sep=" to ")
        if m.group(2):
            return FORMATS[m.group(2)](value)
        return format_any(m.group(1), value)

    text = _FIELD.sub(one, template)
    return None if missing else text[:1].upper() + text[1:]


def _mlperf_rule(i: int) -> str:
    """The MLPerf Inference limits of TTFT (``i = 0``) or TPOT (1) in words: the cards' context."""
    interactive, server = mlperf_latency_limits_ms("Interactive")[i], mlperf_latency_limits_ms("Server")[i]
    return f"MLPerf limits: {fmt(interactive, 'ms')} interactive, {fmt(server, 'ms')} server"


@dataclass(frozen=True)
class Figure:
    """One figure of a step: the result ``key``, a sentence template and, optionally, a rule of thumb.

    ``kinds`` limits it to training or inference plans (empty: both); ``label`` overrides the
    registry's label; ``text`` formats the value itself (a template) when it needs several keys or
    the key is not in the registry yet; ``unless`` names a key whose figure replaces this one when
    the result has it; ``tiers`` limits it to fabrics of those tiers (each reads its own sentence: no "0 core
    switches"; 0 tiers is one server, with no fabric at all); ``when`` is a test of the result the figure
    needs besides its value, and ``tail`` adds a sentence that depends on the result ("" for none).
    """

    key: str
    sentence: str
    rule: str = ""
    kinds: tuple[str, ...] = ()
    label: str = ""
    text: str = ""
    unless: str = ""
    tiers: tuple[int, ...] = ()
    when: Callable[[Mapping], bool] | None = None
    tail: Callable[[Mapping], str] | None = None


def _spread(low: str, high: str) -> Callable[[Mapping], bool]:
    """A test: whether the result's ``low`` and ``high`` keys read differently (a range worth saying)."""
    return lambda result: format_field(low, get_path(result, low)) != format_field(high, get_path(result, high))


def _same(low: str, high: str) -> Callable[[Mapping], bool]:
    """A test: whether the result's ``low`` and ``high`` keys read the same."""
    return lambda result: not _spread(low, high)(result)


def one_shared_rack(result: Mapping) -> bool:
    """Whether the cluster is one compute rack that also holds its network, storage and management gear."""
    return get_path(result, "facility.compute_racks") == 1 and get_path(result, "facility.other_racks") == 0


def _weights_load(result: Mapping) -> str:
    """" Starting all 9 replicas at once reads 1.27 TB (2.35 min); one more replica loads its 141 GB of weights
    in 15.7 s." for a service: what the storage read bandwidth means when replicas start (each holds a copy of the
    weights)."""
    read, weights = get_path(result, "storage.read_gb_per_s"), get_path(result, "inference.weights_gb")
    if not read or not weights:
        return ""
    copies = ((get_path(result, "inference.prefill_replicas") or 0) + (get_path(result, "inference.decode_replicas")
                                                                       or 0)
              if get_path(result, "inference.disaggregated") else get_path(result, "inference.replicas")) or 1
    one = f"loads its {fmt(weights, 'gb')} of weights in {fmt(weights / read, 'seconds')}"
    if copies <= 1:
        return f" The replica {one}."
    return (f" Starting all {fmt(copies, 'count')} replicas at once reads {fmt(weights * copies, 'gb')} "
            f"({fmt(weights * copies / read, 'seconds')}); one more replica {one}.")


def _per_owned_gpu(result: Mapping) -> str:
    """" This is per GPU the plan uses (1 of the 8 owned): $2.81 per owned GPU-hour." where owning buys idle GPUs."""
    text = idle_owned_text(result).removeprefix("; ")
    return f" {text[:1].upper()}{text[1:]}." if text else ""


def _mixed(result: Mapping) -> bool:
    """Whether the cheapest hybrid owns some servers and rents the rest (not all or none)."""
    return 0.0 < (get_path(result, "cost.hybrid_best_owned_fraction") or 0.0) < 1.0


def _month_range(side: str, words: str, mtok: str, opening: str, units: str) -> tuple[Figure, Figure]:
    """A serving cost's P10–P90 a month (``cost.{side}_usd_per_month_low/high``) as two figures: the range where its
    ends read differently, one value "at the GPUs' P10 and P90 alike" where whole ``units`` make them one."""
    low, high = f"cost.{side}_usd_per_month_low", f"cost.{side}_usd_per_month_high"
    label = f"Per month, {words}, P10–P90"
    return (Figure(low, f"{opening} {{{low}}} to {{{high}}} a month, {{cost.usd_per_million_tokens{mtok}_low}} to "
                        f"{{cost.usd_per_million_tokens{mtok}_high}} per million tokens.", kinds=INFERENCE, label=label,
                   text=f"{{{low}}}–{{{high}}}", when=_spread(low, high)),
            Figure(low, f"{words.capitalize()} costs {{{low}}} a month at the GPUs' P10 and P90 alike: the same whole "
                        f"{units} cover both.", kinds=INFERENCE, label=label, text=f"{{{low}}}",
                   when=_same(low, high)))


TRAINING, INFERENCE = ("training",), ("inference",)
#: the figures of each step, in reading order (6-12 apply to any one plan)
STEP_FIGURES: dict[str, tuple[Figure, ...]] = {
    "Model": (
        Figure("model.params", "{model.name} has {model.params} parameters, {model.active_params} of them "
               "active per token."),
        Figure("compute.total_flops", "Training on {plan.workload.tokens} takes {compute.total_flops} "
               "of model compute.", rule="{model.chinchilla_tokens} tokens would be compute-optimal "
               "(20 per parameter)", kinds=TRAINING),
        Figure("inference.weights_gb", "The served weights take {inference.weights_gb} at "
               "{plan.workload.weight_precision}.", kinds=INFERENCE),
        Figure("inference.kv_cache_gb_per_sequence", "One request of {plan.workload.prompt_tokens:count} prompt "
               "and {plan.workload.output_tokens:count} output tokens keeps {inference.kv_cache_gb_per_sequence} "
               "of key/value cache.", kinds=INFERENCE),
        Figure("memory.per_gpu_gb", "Each GPU holds {memory.per_gpu_gb} of its {memory.usable_gb} usable memory.",
               rule="{memory.rule_of_thumb_gb} for the whole model (parameters x 2 bytes x 4)", kinds=TRAINING),
        # the quick rule sizes training state (weights, gradients, two optimizer states): not a served model's
        Figure("memory.per_gpu_gb", "Each GPU holds {memory.per_gpu_gb} of its {memory.usable_gb} usable memory.",
               kinds=INFERENCE),
        Figure("memory.fits", "Whether the model, its training state and activations fit with the chosen layout.",
               kinds=TRAINING),
        Figure("compute.mfu", "The GPUs spend {compute.mfu} of their peak on model work; {compute.mfu_low} to "
               "{compute.mfu_high} is plausible at this scale.", kinds=TRAINING),
        Figure("compute.gpu_hours", "The run needs {compute.gpu_hours} of productive GPU time "
               "({compute.gpu_hours_low} to {compute.gpu_hours_high}).", kinds=TRAINING),
        Figure("compute.wall_clock_days", "On {cluster.gpus:count} GPUs the run takes {compute.wall_clock_days} "
               "with failures and restarts ({compute.days_low:to=compute.days_high}).", kinds=TRAINING,
               unless="compute.wall_clock_days_p50"),
        Figure("compute.wall_clock_days_p50", "On {cluster.gpus:count} GPUs half of such runs take less than "
               "{compute.wall_clock_days_p50:days}, and 8 in 10 take "
               "{compute.wall_clock_days_p10:to=compute.wall_clock_days_p90}.", kinds=TRAINING,
               label="Training time, median", text="{compute.wall_clock_days_p50:days}"),
        Figure("compute.deadline_probability", "The chance that the run finishes within the deadline of "
               "{compute.deadline_days}.", kinds=TRAINING, label="Chance of meeting the deadline",
               text="{compute.deadline_probability:odds}"),
        Figure("compute.deadline_gpus_p90", "For nine runs in ten to finish within the deadline of "
               "{compute.deadline_days}, plan {compute.deadline_gpus_p90:count} GPUs.", kinds=TRAINING),
        Figure("compute.deadline_gpus_median", "The plan is sized for {plan.cluster.deadline_confidence:pct} odds "
               "of meeting the deadline; {compute.deadline_gpus_median:count} GPUs would give even odds.",
               kinds=TRAINING),
        Figure("compute.tokens_per_s", "The whole cluster trains on {compute.tokens_per_s}.", kinds=TRAINING),
        Figure("inference.gpus_per_replica", "One serving replica spans {inference.gpus_per_replica:count} GPUs "
               "({inference.layout:layout}) and holds up to {inference.max_concurrent_sequences} at once.",
               kinds=INFERENCE, unless="inference.prefill_gpus"),
        Figure("inference.prefill_gpus", "{inference.prefill_gpus:count} GPUs read the prompts and "
               "{inference.decode_gpus:count} write the output, in separate pools: the prompts' pool has "
               "{inference.prefill_replicas:n=replicas} ({inference.prefill_layout:layout}), the output's "
               "{inference.decode_replicas:n=replicas} ({inference.decode_layout:layout}). Each prompt's key/value "
               "cache moves between them in {inference.kv_transfer_ms}.",
               kinds=INFERENCE, label="GPUs per pool",
               text="{inference.prefill_gpus:count} prefill, {inference.decode_gpus:count} decode"),
        Figure("inference.ttft_ms", "A request waits {inference.ttft_ms} for its first token (99th percentile; the "
               "plan's target is {inference.ttft_ms_target}).", rule=_mlperf_rule(0), kinds=INFERENCE),
        Figure("inference.tpot_ms", "Each further token takes {inference.tpot_ms} ({inference.tpot_ms_p99} at the "
               "99th percentile; the plan's target is {inference.tpot_ms_target}).", rule=_mlperf_rule(1),
               kinds=INFERENCE),
        Figure("inference.latency_s", "A full answer of {plan.workload.output_tokens:count} tokens takes "
               "{inference.latency_s}.", kinds=INFERENCE),
        Figure("inference.replicas", "{inference.replicas:count} replicas carry the {plan.workload.requests_per_s}, "
               "{inference.requests_per_s_per_replica} each at full batch.", kinds=INFERENCE,
               unless="inference.prefill_gpus"),
        Figure("inference.decode_tokens_per_s_per_gpu", "Each GPU generates {inference.decode_tokens_per_s_per_gpu} "
               "at the operating batch.", kinds=INFERENCE),
        Figure("inference.gpus_low", "Published serving results land around the kit's throughput within a band: "
               "the load needs {inference.gpus_low:count} to {inference.gpus_high:count} GPUs (P10–P90 of the "
               "calibrated serving errors).", kinds=INFERENCE, label="GPUs needed, P10–P90",
               text="{inference.gpus_low:count}–{inference.gpus_high:count}"),
    ),
    "Cluster": (
        Figure("cluster.nodes", "{cluster.gpus:n=GPUs} in {cluster.nodes:n=servers} of "
               "{cluster.gpus_per_node:n=GPUs}."),
        Figure("cluster.data_parallel", "Each layer is split over {cluster.tensor_parallel:n=GPUs}, the layers "
               "{cluster.pipeline_parallel:stages}, and {cluster.data_parallel:count} copies train on "
               "different data.", label="Parallel layout", kinds=TRAINING,
               text="tensor {cluster.tensor_parallel:count} x pipeline {cluster.pipeline_parallel:count} x data "
                    "{cluster.data_parallel:count}, ZeRO stage {cluster.zero_stage:count}"),
        Figure("network.switches", "One server needs no switch fabric: its GPUs talk over the server's own links.",
               tiers=(0,)),
        Figure("network.switches", "A 1-tier fabric of {network.leaf_switches:n=leaf switches} connects "
               "{network.endpoints:count} server ports.", tiers=(1,)),
        Figure("network.switches", "A 2-tier fabric of {network.leaf_switches:count} leaf and "
               "{network.spine_switches:count} spine switches connects {network.endpoints:count} server ports.",
               tiers=(2,)),
        Figure("network.switches", "A 3-tier fabric of {network.leaf_switches:count} leaf, "
               "{network.spine_switches:count} spine and {network.core_switches:count} core switches connects "
               "{network.endpoints:count} server ports.", tiers=(3,)),
        Figure("network.comm_fraction", "Communication the GPUs wait for takes {network.comm_fraction} of "
               "each training step.", kinds=TRAINING),
        Figure("network.allreduce_to_compute_ratio", "The gradient all-reduce runs on links with "
               "{network.allreduce_to_compute_ratio} of the GPU's scale-up bandwidth.",
               rule="at least 10% of the compute bandwidth", kinds=TRAINING),
        Figure("network.scale_out_gb_per_s", "Each GPU reaches the others at {network.scale_up_gb_per_s} inside its "
               "server and {network.scale_out_gb_per_s} across servers.", kinds=INFERENCE, tiers=(1, 2, 3)),
        Figure("network.scale_out_gb_per_s", "Each GPU reaches the others at {network.scale_up_gb_per_s} inside the "
               "server; its {network.scale_out_gb_per_s} network links would join further servers.", kinds=INFERENCE,
               tiers=(0,)),
        Figure("storage.read_gb_per_s", "Storage reads at {storage.read_gb_per_s}; streaming the data set needs "
               "{storage.read_gb_per_s_tokens}.", rule="{storage.read_gb_per_s_rule} (1 GB/s per GPU)", kinds=TRAINING),
        Figure("storage.read_gb_per_s", "All servers together read from storage at {storage.read_gb_per_s}.",
               rule="{storage.read_gb_per_s_rule} (the training rule of 1 GB/s per GPU)", kinds=INFERENCE,
               tail=_weights_load),
        Figure("storage.capacity_tb", "{storage.hot_tb} hot, {storage.warm_tb} warm and {storage.cold_tb} "
               "archive storage.", rule="plan for 10 times the data set"),
        Figure("storage.dataset_tb", "The tokenised data set takes {storage.dataset_tb}, "
               "{storage.bytes_per_token:n=bytes} per token.", kinds=TRAINING),
        Figure("storage.dataset_tb", "The model repository takes {storage.dataset_tb}.", kinds=INFERENCE),
        Figure("checkpoint.size_gb", "A checkpoint holds {checkpoint.size_gb} and takes {checkpoint.write_s} "
               "to write.", rule="{checkpoint.size_rule_gb} (parameters x 2 bytes)", kinds=TRAINING),
        Figure("checkpoint.interval_min", "Saving every {checkpoint.interval_min} balances write time against "
               "work lost to failures.", rule="every 500-1,000 steps: {checkpoint.seed_interval_min}", kinds=TRAINING),
        Figure("reliability.interruptions_per_day", "At this scale expect one interruption every "
               "{reliability.mtbf_h}.", kinds=TRAINING),
        Figure("reliability.goodput", "{reliability.goodput} of the wall-clock time advances training.",
               kinds=TRAINING),
    ),
    "Facility": (
        Figure("facility.it_kw", "Servers, network and storage draw at most {facility.it_kw}, "
               "{facility.servers_kw} of it the servers; the facility is sized for it."),
        Figure("facility.average_it_kw", "While working they draw {facility.average_it_kw}: the servers at "
               "{facility.draw_fraction} of their maximum, as metered in published power logs, the switches at their "
               "typical power."),
        Figure("facility.total_kw", "With cooling and losses (PUE {plan.facility.pue}) the site draws "
               "{facility.total_kw}.", rule="{facility.rule_of_thumb_kw_low} to {facility.rule_of_thumb_kw_high} "
               "(server power + 30-40%)"),
        Figure("facility.provisioned_kw", "{facility.power_modules:count} power modules of "
               "{facility.power_module_kw} ({facility.redundancy:text}) give {facility.provisioned_kw}."),
        Figure("facility.cooling_tons", "{facility.cooling:text} cooling removes {facility.heat_btu_per_hr} of heat.",
               label="Cooling"),
        Figure("facility.racks", "{cluster.nodes:n=servers} in {facility.compute_racks:n=compute racks} (up to "
               "{facility.servers_per_rack:count} a rack), and {facility.other_racks:count} for network, storage and "
               "management.", when=lambda r: not one_shared_rack(r)),
        Figure("facility.racks", "{cluster.nodes:n=servers} in one rack, with room for the network, storage and "
               "management gear (up to {facility.servers_per_rack:count} servers a rack).", when=one_shared_rack),
        Figure("facility.rack_kw_actual", "The fullest compute rack draws {facility.rack_kw_actual} of its "
               "{facility.rack_kw_budget} budget and weighs {facility.rack_weight_kg}."),
        Figure("facility.floor_m2", "The racks need {facility.floor_m2} of white space, aisles included."),
        Figure("facility.energy_mwh_run", "The run uses {facility.energy_mwh_run} at the {facility.average_kw} the "
               "site draws while training.", kinds=TRAINING),
        Figure("facility.energy_mwh_per_year", "A year at the planned utilisation uses "
               "{facility.energy_mwh_per_year}.", kinds=INFERENCE),
        Figure("facility.co2_t", "At {facility.grid_kg_co2_per_kwh} the run's energy emits {facility.co2_t}.",
               kinds=TRAINING),
        Figure("facility.co2_t_per_year", "At {facility.grid_kg_co2_per_kwh} a year of service emits "
               "{facility.co2_t_per_year}.", kinds=INFERENCE),
    ),
    "Cost": (
        Figure("cost.cloud_run_usd", "Renting at the {cost.pricing_used:text} price of {cost.cloud_usd_per_gpu_hour} "
               "per GPU-hour, the run costs {cost.cloud_run_usd}.", kinds=TRAINING),
        Figure("cost.onprem_run_usd", "On owned hardware, the run's GPU-hours at {cost.onprem_usd_per_gpu_hour} per "
               "useful GPU-hour cost {cost.onprem_run_usd}.", kinds=TRAINING),
        Figure("cost.cloud_usd_per_month", "Renting the serving GPUs costs {cost.cloud_usd_per_month} a month at "
               "the {cost.pricing_used:text} price.", kinds=INFERENCE),
        Figure("cost.usd_per_million_tokens", "Each million tokens served costs {cost.usd_per_million_tokens} "
               "renting and {cost.usd_per_million_tokens_onprem} owning.", kinds=INFERENCE),
        *_month_range("cloud", "renting", "", "With the GPUs' P10–P90, renting costs", "instances"),
        *_month_range("onprem", "owning", "_onprem", "Owning, in whole servers for the same P10–P90 of GPUs, costs",
                      "servers"),
        Figure("cost.capex_usd", "Buying costs {cost.capex_usd}: {cost.capex.servers_usd} servers, "
               "{cost.capex.network_usd} network and {cost.capex.storage_usd} storage.",
               when=lambda r: bool(get_path(r, "cost.capex.network_usd"))),
        Figure("cost.capex_usd", "Buying costs {cost.capex_usd}: {cost.capex.servers_usd} servers and "
               "{cost.capex.storage_usd} storage; no fabric joins servers, so no network is bought.",
               when=lambda r: not get_path(r, "cost.capex.network_usd")),
        Figure("cost.owned_usd_per_gpu_hour_full", "For {cost.buyer_profile:buyer} buyer paying the "
               "{cost.server_price_kind:text} of {cost.server_price_as_of}, owning costs "
               "{cost.owned_usd_per_gpu_hour_full} per GPU-hour at full use: depreciation "
               "{cost.owned_per_gpu_hour.depreciation_usd}, interest {cost.owned_per_gpu_hour.capital_usd}, "
               "maintenance and support {cost.owned_per_gpu_hour.maintenance_usd}, facility "
               "{cost.owned_per_gpu_hour.facility_usd}, electricity {cost.owned_per_gpu_hour.power_usd} and staff "
               "{cost.owned_per_gpu_hour.staff_usd}.", tail=_per_owned_gpu),
        Figure("cost.opex_usd_per_year", "Running it costs {cost.opex_usd_per_year} a year: power "
               "{cost.opex.power_usd}, colocation {cost.opex.colocation_usd}, staff {cost.opex.staff_usd}, "
               "maintenance and support {cost.opex.maintenance_usd} and interest {cost.opex.capital_usd}."),
        Figure("cost.cloud_usd", "Renting the cluster for {cost.years:years} at {cost.utilisation} utilisation "
               "costs {cost.cloud_usd}."),
        Figure("cost.onprem_usd", "Owning it for {cost.years:years} costs {cost.onprem_usd}, purchase included."),
        Figure("cost.breakeven_months", "After {cost.breakeven_months} of use, owning has cost less than renting."),
        Figure("cost.breakeven_utilisation", "Owning is cheaper when the cluster is busy more than "
               "{cost.breakeven_utilisation} of the time."),
        Figure("cost.hybrid_best_usd", "Owning {cost.hybrid_best_owned_fraction} of the GPUs and renting the peaks "
               "would cost {cost.hybrid_best_usd}.", when=_mixed),
    ),
}


def workload(result: Mapping) -> str:
    """"training" or "inference"."""
    return "inference" if get_path(result, "plan.workload.kind") == "inference" else "training"


def step_figures(result: Mapping, step: str) -> list[dict[str, Any]]:
    """The figures of ``step`` that apply: ``{key, label, unit, value, text, meaning, rule}``."""
    kind = workload(result)
    out = []
    for f in STEP_FIGURES[step]:
        value = get_path(result, f.key)
        if (f.kinds and kind not in f.kinds) or value is None or (f.unless and get_path(result, f.unless) is not None):
            continue
        if (f.tiers and get_path(result, "network.fabric_tiers") not in f.tiers) or (f.when and not f.when(result)):
            continue
        spec = RESULT_FIELDS.get(f.key)
        text = fill(f.text, result) if f.text else format_field(f.key, value)
        out.append({"key": f.key, "label": f.label or spec.label, "unit": spec.unit if spec else "", "value": value,
                    "text": text or format_field(f.key, value),
                    "meaning": (fill(f.sentence, result) or (describe(f.key) if spec else ""))
                               + (f.tail(result) if f.tail else ""),
                    "rule": (fill(f.rule, result) or "") if f.rule else ""})
    return out


def scalar_keys(result: Mapping, sections: tuple[str, ...] = SECTIONS) -> list[str]:
    """Every plain (not list) result key of ``sections`` that has a value, in the registry's order."""
    out = []
    for key in RESULT_FIELDS:
        if "[]" in key or key.split(".", 1)[0] not in sections:
            continue
        value = get_path(result, key)
        if value is not None and not isinstance(value, (list, Mapping)):
            out.append(key)
    return out


def appendix(result: Mapping) -> list[tuple[str, list[tuple[str, str, Any, str]]]]:
    """Every figure of the result, by section: (title, [(label [unit], formatted, exact value, key)])."""
    out = []
    for section in SECTIONS:
        rows = [(RESULT_FIELDS[k].label_with_unit, format_field(k, get_path(result, k)), get_path(result, k), k)
                for k in scalar_keys(result, (section,))]
        if rows:
            out.append((SECTION_TITLES[section], rows))
    return out


#: what the cost drivers of ``cost.sensitivity`` and its options are called in a report
DRIVER_WORDS = {**{k: v[:1].upper() + v[1:] for k, v in DRIVER_LABELS.items()}, "onprem": "owning", "cloud": "renting"}


def readable_sensitivity(result: Mapping) -> Mapping:
    """``result`` with the drivers and options of ``cost.sensitivity`` in words (a shallow copy; charts and
    tables show them as they are)."""
    rows = get_path(result, "cost.sensitivity")
    if not isinstance(rows, list):
        return result
    words = [{**r, "driver": DRIVER_WORDS.get(r.get("driver"), r.get("driver"))} for r in rows]
    return {**result, "cost": {**result["cost"], "sensitivity": words}}


def records(result: Mapping, key: str) -> tuple[list[str], list[list[Any]], list[str]]:
    """A list of records (``cost.monthly``) as (labels, rows of values, item keys), labels from the registry."""
    rows = get_path(result, key)
    if key == "cost.sensitivity" and isinstance(rows, list):
        rows = [{k: DRIVER_WORDS.get(v, v) if k in ("driver", "option") else v for k, v in r.items()} for r in rows]
    if not isinstance(rows, list) or not rows or not isinstance(rows[0], Mapping):
        return [], [], []
    order = {k: i for i, k in enumerate(RESULT_FIELDS)}  # the registry's order: a JSON round trip sorts keys
    items = sorted(dict.fromkeys(k for r in rows for k in r), key=lambda i: order.get(f"{key}[].{i}", len(order)))
    labels = [RESULT_FIELDS[f"{key}[].{i}"].label_with_unit if f"{key}[].{i}" in RESULT_FIELDS else i for i in items]
    return labels, [[r.get(i) for i in items] for r in rows], items
