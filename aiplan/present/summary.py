"""The client's question answered first: the run, then the fleet (plain data, no widgets, no HTML).

A client asking "can we train this model in 30 days, and what will it cost?" wants the run: how
many GPUs, how many days (with the band), what the run costs rented and on owned hardware. The
cost of keeping a cluster for years is a second question, shown second and titled in plain words
("If you keep the cluster for 3 years at 70% utilisation"). A serving plan is answered per month
and per million tokens, with the latencies against the plan's own targets (MLPerf's limits as context).

:func:`client_summary` returns that answer as plain data that the report's executive summary and
the app's cards both show::

    {"kind": "training" | "inference",
     "question": "Pretrain Llama 3.1 70B on 2 trillion tokens",   # what the plan asks
     "blocks": [{"id": "run" | "serving" | "fleet", "title": str, "caption": str,
                 "figures": [{"id": str, "key": str, "label": str, "value": number | bool | None,
                              "text": str, "detail": str, "state": "good" | "bad" | ""}]}],
     "recommendation": str,                                        # one sentence
     "risks": [{"id": str, "severity": str, "message": str, "source": str}]}

``key`` is the result key a figure comes from ("" for a figure derived here, such as the owned
cost per month); ``text`` is ``value`` formatted by :mod:`aiplan.core.fields`; ``id`` is stable
(``run-gpus``, ``fleet-breakeven-months``, ...). Every figure that does not apply is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.catalog import load_catalog, mlperf_latency_limits_ms
from ..core.fields import format_field, format_range, get_path
from ..core.fields import format_value as fmt
from ..cost import api_against_own, api_below

LATENCY_SOURCE = "mlcommons-submission-checker-v5.1"
#: findings shown as the top risks, most severe first
TOP_RISKS = 3
SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}
TRAINING = ("pretrain", "finetune")
#: pricings in words
PRICING_WORDS = {"on-demand": "on-demand", "reserved-1y": "1-year reserved", "reserved-3y": "3-year reserved",
                 "spot": "spot", "buy": "bought"}


def _num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _figure(id_: str, label: str, value: Any, key: str = "", detail: str = "", state: str = "",
            kind: str = "") -> dict[str, Any]:
    """One figure; ``text`` from the registry format of ``key``, or ``kind`` for a derived figure."""
    text = fmt(value, kind) if kind or not key else format_field(key, value)
    return {"id": id_, "key": key, "label": label, "value": value, "text": text, "detail": detail, "state": state}


def _years_text(years: Any) -> str:
    return "1 year" if years == 1 else f"{years:g} years" if _num(years) else "the ownership period"


def gpu_name(result: Mapping) -> str:
    """The GPU's catalog name ("NVIDIA H100 SXM5 80GB"), or its id when the catalog lacks it."""
    gpu_id = get_path(result, "plan.cluster.gpu") or ""
    try:
        return load_catalog().gpus[gpu_id].name
    except (KeyError, OSError, ValueError):
        return str(gpu_id)


def question(result: Mapping) -> str:
    """What the plan asks, in one line: "Pretrain Llama 3.1 70B on 2.00 trillion tokens in 30.0 days"."""
    kind = get_path(result, "plan.workload.kind")
    model = get_path(result, "model.name") or get_path(result, "plan.model") or "the model"
    if kind == "inference":
        rate = get_path(result, "plan.workload.requests_per_s")
        kind_ = "count" if _num(rate) and float(rate).is_integer() else "number"
        return f"Serve {model} at {fmt(rate, kind_, 'requests per second')}"
    verb = "Fine-tune" if kind == "finetune" else "Pretrain"
    text = f"{verb} {model} on {fmt(get_path(result, 'plan.workload.tokens'), 'big', 'tokens')}"
    deadline = get_path(result, "compute.deadline_days")
    return text + (f" within {fmt(deadline, 'days')}" if _num(deadline) else "")


def _days_detail(result: Mapping) -> tuple[str, str]:
    """(band, deadline) texts of the training time: the calibrated percentiles."""
    p10, p90 = get_path(result, "compute.wall_clock_days_p10"), get_path(result, "compute.wall_clock_days_p90")
    band = f"likely {format_range(p10, p90, 'days', sep=' to ')} (10th to 90th percentile)" \
        if _num(p10) and _num(p90) else ""
    deadline = get_path(result, "compute.deadline_days")
    if not _num(deadline):
        return band, ""
    chance = get_path(result, "compute.deadline_probability")
    if _num(chance):
        return band, f"{fmt(chance, 'odds')} chance of meeting the deadline of {fmt(deadline, 'days')}"
    meets = get_path(result, "compute.meets_deadline")
    if meets is None:
        return band, ""
    return band, f"{'meets' if meets else 'misses'} the deadline of {fmt(deadline, 'days')}"


def owned_basis(result: Mapping) -> str:
    """How the run's owned-hardware cost is obtained, in words."""
    hours = get_path(result, "compute.gpu_hours_with_failures") or get_path(result, "compute.gpu_hours")
    rate = get_path(result, "cost.onprem_usd_per_gpu_hour")
    years, util = get_path(result, "cost.years"), get_path(result, "cost.utilisation")
    if not (_num(hours) and _num(rate)):
        return ""
    return (f"the run's {format_field('compute.gpu_hours', hours)} at {fmt(rate, 'usd_rate')} per useful GPU-hour "
            f"of owning the cluster for {_years_text(years)} at {fmt(util, 'pct')} utilisation")


def _a(text: str) -> str:
    """``text`` with its article: "an 80%", "an 11%", "a 90%"."""
    return ("an " if text[:1] == "8" or text[:2] in ("11", "18") and not text[2:3].isdigit() else "a ") + text


def deadline_sizing(result: Mapping) -> str:
    """How a deadline plan's GPUs were sized, in words ("; 1,064 GPUs for an 80% chance of the deadline, 848 for
    even odds, 1,200 for a 90% chance"); "" without a deadline or when the plan fixes its GPUs."""
    gpus, confidence = get_path(result, "cluster.gpus"), get_path(result, "plan.cluster.deadline_confidence")
    if not (_num(get_path(result, "compute.deadline_days")) and _num(gpus)) or _num(
            get_path(result, "plan.cluster.gpus")):
        return ""
    median, sure = get_path(result, "compute.deadline_gpus_median"), get_path(result, "compute.deadline_gpus_p90")
    parts = [f"{fmt(gpus, 'count', 'GPUs')} for "
             + (f"{_a(fmt(confidence, 'pct'))} chance of the deadline" if _num(confidence) and confidence > 0.5
                else "even odds of the deadline")]
    if _num(median) and median != gpus:
        parts.append(f"{fmt(median, 'count')} for even odds")
    if _num(sure) and sure > gpus:
        parts.append(f"{fmt(sure, 'count')} for a 90% chance")
    return "; " + ", ".join(parts)


def run_block(result: Mapping) -> dict[str, Any]:
    """The training run: GPUs, days with the band, the run's cost rented and on owned hardware."""
    kind = get_path(result, "plan.workload.kind")
    gpus = get_path(result, "cluster.gpus")
    nodes = get_path(result, "cluster.nodes")
    band, deadline = _days_detail(result)
    days = get_path(result, "compute.wall_clock_days_p50")
    days = days if _num(days) else get_path(result, "compute.wall_clock_days")
    meets = get_path(result, "compute.meets_deadline")
    pricing = get_path(result, "cost.pricing_used") or get_path(result, "cost.pricing") or ""
    pricing = PRICING_WORDS.get(pricing, pricing)
    price = format_field("cost.cloud_usd_per_gpu_hour", get_path(result, "cost.cloud_usd_per_gpu_hour"))
    figures = [
        _figure("run-gpus", "GPUs", gpus, "cluster.gpus", detail=(
            f"{gpu_name(result)}, {fmt(nodes, 'count', 'servers')}" if _num(nodes) else gpu_name(result))
            + deadline_sizing(result)),
        _figure("run-days", "Training time" if kind == "pretrain" else "Fine-tuning time", days,
                "compute.wall_clock_days", detail="; ".join(t for t in (band, deadline) if t),
                state="" if meets is None else ("good" if meets else "bad")),
        _figure("run-cost-cloud", "Run cost, renting", get_path(result, "cost.cloud_run_usd"), "cost.cloud_run_usd",
                detail=f"{pricing} price of {price} per GPU-hour" if pricing else ""),
        _figure("run-cost-owned", "Run cost, owned hardware", get_path(result, "cost.onprem_run_usd"),
                "cost.onprem_run_usd", detail=owned_basis(result)),
    ]
    title = "The fine-tuning run" if kind == "finetune" else "The training run"
    caption = f"{question(result)}: {fmt(gpus, 'count', 'GPUs')} for {figures[1]['text']}."
    return {"id": "run", "title": title, "caption": caption,
            "figures": [f for f in figures if f["value"] is not None]}


def latency_state(value_ms: Any, metric: str) -> tuple[str, str]:
    """("good" | "" | "bad", words) of one serving latency (``metric`` "ttft" or "tpot") against
    MLPerf Inference's limits (:func:`~aiplan.core.catalog.mlperf_latency_limits_ms`): within the
    interactive limit, within the server limit only, or beyond."""
    if not _num(value_ms):
        return "", ""
    i = 0 if metric == "ttft" else 1
    interactive, server = mlperf_latency_limits_ms("Interactive")[i], mlperf_latency_limits_ms("Server")[i]
    if value_ms <= interactive:
        return "good", f"within the MLPerf interactive limit of {fmt(interactive, 'ms')}"
    if value_ms <= server:
        return "", (f"within the MLPerf server limit of {fmt(server, 'ms')}, "
                    f"above the interactive {fmt(interactive, 'ms')}")
    return "bad", f"above the MLPerf server limit of {fmt(server, 'ms')}"


def target_state(result: Mapping, metric: str) -> tuple[str, str]:
    """("good" | "bad", words) of one serving latency (``metric`` "ttft" or "tpot") against the plan's own target:
    its 99th percentile (as the target bounds it) against the target, met or missed, with the fastest figure the
    kit finds on the plan's GPU when missed. A target left at its default (MLPerf's server limit) is called so,
    with MLPerf's interactive limit as context; without a target, :func:`latency_state`."""
    planned = get_path(result, "inference.ttft_ms" if metric == "ttft" else "inference.tpot_ms_p99")
    target = get_path(result, f"inference.{metric}_ms_target")
    if not (_num(planned) and _num(target)):
        return latency_state(get_path(result, f"inference.{metric}_ms"), metric)
    i = 0 if metric == "ttft" else 1
    interactive, server = mlperf_latency_limits_ms("Interactive")[i], mlperf_latency_limits_ms("Server")[i]
    default = abs(target - server) <= 1e-9 * server
    whose = "the default target (MLPerf's server limit)" if default else "your target"
    met = planned <= target * (1 + 1e-9)
    words = (f"99th percentile, against {whose} of {fmt(target, 'ms')}" if metric == "ttft" else
             f"{fmt(planned, 'ms')} at the 99th percentile against {whose} of {fmt(target, 'ms')}")
    words += ": met" if met else ": missed"
    fastest = get_path(result, f"inference.{metric}_ms_fastest")
    if not met and _num(fastest):
        words += f"; the fastest on this GPU is {fmt(fastest, 'ms')}"
    if default:
        words += f"; MLPerf's interactive limit is {fmt(interactive, 'ms')}"
    return ("good" if met else "bad"), words


def serving_gpus_text(result: Mapping) -> str:
    """How the serving GPUs are used: "21 replicas of 8 GPUs, NVIDIA H200 SXM 141GB", or with separate prefill and
    decode pools "16 GPUs reading prompts and 136 writing output, in separate pools of NVIDIA H200 SXM 141GB"."""
    inf = get_path(result, "inference") or {}
    prefill, decode = inf.get("prefill_gpus"), inf.get("decode_gpus")
    if inf.get("disaggregated") and _num(prefill) and _num(decode):
        return (f"{fmt(prefill, 'count', 'GPUs')} reading prompts and {fmt(decode, 'count')} writing output, in "
                f"separate pools of {gpu_name(result)}")
    replicas, per_replica = inf.get("replicas"), inf.get("gpus_per_replica")
    if _num(replicas) and _num(per_replica):
        return f"{fmt(replicas, 'count', 'replicas')} of {fmt(per_replica, 'count', 'GPUs')}, {gpu_name(result)}"
    return gpu_name(result)


def serving_block(result: Mapping) -> dict[str, Any]:
    """Serving: cost per month and per million tokens, GPUs and replicas, latencies against targets."""
    years = get_path(result, "cost.years")
    gpus = get_path(result, "inference.gpus") or get_path(result, "cluster.gpus")
    ttft, tpot = get_path(result, "inference.ttft_ms"), get_path(result, "inference.tpot_ms")
    (ttft_state, ttft_words), (tpot_state, tpot_words) = target_state(result, "ttft"), target_state(result, "tpot")
    figures = [
        _figure("serving-gpus", "GPUs", gpus, "inference.gpus", detail=serving_gpus_text(result)),
        _figure("serving-cost-month-cloud", "Per month, renting", get_path(result, "cost.cloud_usd_per_month"),
                "cost.cloud_usd_per_month", detail=_basis(result, "cost.cloud_basis")),
        _figure("serving-cost-month-owned", "Per month, owning", get_path(result, "cost.onprem_usd_per_month"),
                "cost.onprem_usd_per_month",
                detail=_basis(result, "cost.onprem_basis", "; ")
                + f"owning cost spread evenly over {_years_text(years)}, purchase included"),
        _figure("serving-cost-mtok-cloud", "Per million tokens, renting",
                get_path(result, "cost.usd_per_million_tokens"), "cost.usd_per_million_tokens",
                detail=token_split_text(result, "")),
        _figure("serving-cost-mtok-owned", "Per million tokens, owning",
                get_path(result, "cost.usd_per_million_tokens_onprem"), "cost.usd_per_million_tokens_onprem",
                detail=token_split_text(result, "_onprem")),
        api_price_figure(result),
        _figure("serving-ttft", "Time to first token", ttft, "inference.ttft_ms", ttft_words, ttft_state),
        _figure("serving-tpot", "Time per output token", tpot, "inference.tpot_ms", tpot_words, tpot_state),
    ]
    meets = get_path(result, "inference.meets_latency")
    latency = "" if not isinstance(meets, bool) else (" It meets its latency targets." if meets
                                                       else " It misses its latency targets.")
    return {"id": "serving", "title": "The service",
            "caption": f"{question(result)}: {fmt(gpus, 'count', 'GPUs')}.{latency}",
            "figures": [f for f in figures if f["value"] is not None]}


#: the parts of the owning cost per GPU-hour (``cost.owned_per_gpu_hour``), as a client reads them
OWNED_PARTS = {"depreciation_usd": "depreciation", "capital_usd": "interest",
               "maintenance_usd": "maintenance and support", "facility_usd": "facility", "power_usd": "electricity",
               "staff_usd": "staff"}


def owned_breakdown(result: Mapping) -> str:
    """The owning cost per GPU-hour by part, in words ("depreciation $1.76, interest $0.33, ..."), and the buyer and
    price it rests on; "" without a server price."""
    parts = get_path(result, "cost.owned_per_gpu_hour")
    if not isinstance(parts, Mapping):
        return ""
    text = ", ".join(f"{words} {fmt(parts.get(key), 'usd_rate')}" for key, words in OWNED_PARTS.items()
                     if _num(parts.get(key)) and parts.get(key) > 0)
    buyer = str(get_path(result, "cost.buyer_profile") or "").replace("-", " ")
    kind, as_of = get_path(result, "cost.server_price_kind"), get_path(result, "cost.server_price_as_of")
    basis = f"{buyer} buyer" + (f", servers at the {kind} of {as_of}" if kind and as_of else "")
    return f"{text} ({basis}){idle_owned_text(result)}" if text else ""


def idle_owned_text(result: Mapping) -> str:
    """Where the plan uses fewer GPUs than the whole servers it owns, the cost per owned GPU-hour beside the cost per
    GPU it uses ("; this is per GPU the plan uses (2 of the 8 owned): $2.74 per owned GPU-hour"); "" otherwise."""
    used, owned = get_path(result, "cluster.gpus"), get_path(result, "cost.owned_gpus")
    full = get_path(result, "cost.owned_usd_per_gpu_hour_full")
    if not (_num(used) and _num(owned) and _num(full)) or owned <= used:
        return ""
    return (f"; this is per GPU the plan uses ({fmt(used, 'count')} of the {fmt(owned, 'count')} owned): "
            f"{fmt(full * used / owned, 'usd_rate')} per owned GPU-hour")


def fleet_title(result: Mapping) -> str:
    """ "If you keep the cluster for 3 years at 70% utilisation"."""
    years, util = get_path(result, "cost.years"), get_path(result, "cost.utilisation")
    return f"If you keep the cluster for {_years_text(years)} at {fmt(util, 'pct')} utilisation"


def breakeven_text(months: Any) -> str:
    """The breakeven as the card, the chart, the scenarios, the step figure and the findings all say it: in months
    up to three years, in years beyond.

    >>> breakeven_text(18.5), breakeven_text(261.0), breakeven_text(None)
    ('18.5 months', '21.8 years', 'unknown')
    """
    return fmt(months, "months") if _num(months) else "unknown"


def fleet_block(result: Mapping) -> dict[str, Any]:
    """Keeping the cluster: renting and owning totals over the ownership period, and the breakeven."""
    cloud, owned = get_path(result, "cost.cloud_usd"), get_path(result, "cost.onprem_usd")
    months = get_path(result, "cost.breakeven_months")
    util = get_path(result, "cost.breakeven_utilisation")
    years = get_path(result, "cost.years")
    cheaper = ""
    priced = _num(cloud) and _num(owned)
    if priced:
        cheaper = "owning" if owned < cloud else "renting"
    figures = [
        _figure("fleet-cloud", f"Renting for {_years_text(years)}", cloud, "cost.cloud_usd",
                detail=_basis(result, "cost.cloud_basis"), state="good" if cheaper == "renting" else ""),
        _figure("fleet-owned", f"Owning for {_years_text(years)}", owned, "cost.onprem_usd",
                detail=_basis(result, "cost.onprem_basis", "; ") + (
                    f"{format_field('cost.capex_usd', get_path(result, 'cost.capex_usd'))} to buy" if _num(
                        get_path(result, "cost.capex_usd")) else ""), state="good" if cheaper == "owning" else ""),
        _figure("fleet-owned-gpu-hour", "Owning per GPU-hour", get_path(result, "cost.owned_usd_per_gpu_hour_full"),
                "cost.owned_usd_per_gpu_hour_full", detail=owned_breakdown(result)),
        _figure("fleet-breakeven-months", "Owning breaks even after", months, "cost.breakeven_months",
                detail="" if _num(months) else "a price is missing" if not priced
                else "owning never catches up with renting"),
        _figure("fleet-breakeven-utilisation", "Owning pays above", util, "cost.breakeven_utilisation",
                detail="utilisation"),
    ]
    breakeven = next(f for f in figures if f["id"] == "fleet-breakeven-months")
    if not _num(months):
        breakeven["text"] = "never" if priced else "unknown"
    else:  # in months, as the cumulative cost chart draws it (one unit per figure)
        breakeven["text"] = breakeven_text(months)
    caption = (f"Over {_years_text(years)}, {cheaper} costs less." if cheaper else "")
    return {"id": "fleet", "title": fleet_title(result), "caption": caption,
            "figures": [f for f in figures if f["value"] is not None or f["id"] == "fleet-breakeven-months"]}


def top_risks(result: Mapping, n: int = TOP_RISKS) -> list[dict[str, str]]:
    """The ``n`` most severe findings (critical, then warning, then info), as the client reads them."""
    checks = sorted(result.get("checks") or [], key=lambda c: SEVERITY_ORDER.get(c.get("severity"), 3))
    return [{"id": str(c.get("id", "")), "severity": str(c.get("severity", "")), "message": str(c.get("message", "")),
             "source": str(c.get("source") or "")} for c in checks[:n]]


def recommendation(result: Mapping) -> str:
    """One sentence: what to do first, from whether the plan works and which way is cheaper; for a service whose
    model an API sells for less than both renting and owning, a second sentence that says so."""
    text = _recommendation(result)
    return f"{text} {api_text}" if (api_text := _api_beats_both(result)) else text


def _api_beats_both(result: Mapping) -> str:
    """ "On price alone an API beats both: DeepInfra sells gpt-oss-120b for $0.103 per million tokens at this plan's
    mix, against $0.885 owning." when the cheapest published API price is below renting and owning; "" otherwise."""
    apis, ours = api_against_own(result)
    if not apis or len(ours) < 2:
        return ""
    price, (own, side) = apis[0]["usd_per_mtok_at_plan_mix"], min((v, s) for s, v in ours.items())
    if not api_below(price, own):
        return ""
    return (f"On price alone an API beats both: {apis[0]['provider']} sells {get_path(result, 'model.name')} for "
            f"{fmt(price, 'usd_rate')} per million tokens at this plan's mix, against {fmt(own, 'usd_rate')} {side}.")


def _one_side_priced(result: Mapping, kind: str, cloud, owned, years) -> str:
    """The recommendation when renting or owning has no price: what the priced side costs, and what to enter to
    compare the other."""
    if _num(cloud):
        run, month = get_path(result, "cost.cloud_run_usd"), get_path(result, "cost.cloud_usd_per_month")
        cost = (f"renting costs {fmt(run, 'usd')} for this run" if kind in TRAINING and _num(run) else
                f"renting costs {fmt(month, 'usd')} a month" if _num(month) else "")
        if cost:
            return (f"The plan works as laid out; {cost}. Enter the price quoted for the servers to compare "
                    "owning.")
    if _num(owned):
        return (f"The plan works as laid out; owning costs {fmt(owned, 'usd')} over {_years_text(years)}. Choose a "
                "cloud offer to compare renting.")
    return "The plan works as laid out; price it with a cloud offer or a server price to compare renting and owning."


def _recommendation(result: Mapping) -> str:
    """The first sentence of :func:`recommendation`."""
    kind = get_path(result, "plan.workload.kind")
    if get_path(result, "memory.fits") is False:
        return ("Change the layout or the GPU first: the model does not fit in GPU memory as planned, "
                "and the findings say what would fit.")
    if kind in TRAINING and get_path(result, "compute.meets_deadline") is False:
        need = get_path(result, "compute.deadline_gpus_needed")
        return ("Move the deadline or add GPUs: the run misses its deadline"
                + (f"; it would take about {fmt(need, 'count', 'GPUs')}." if _num(need) else "."))
    if kind == "inference" and get_path(result, "inference.meets_demand") is False:
        return "Add GPUs: the planned GPUs do not carry the demanded request rate."
    cloud, owned = get_path(result, "cost.cloud_usd"), get_path(result, "cost.onprem_usd")
    util, years = get_path(result, "cost.breakeven_utilisation"), get_path(result, "cost.years")
    if not (_num(cloud) and _num(owned)):
        return _one_side_priced(result, kind, cloud, owned, years)
    keep = f"for {_years_text(years)}"
    if owned < cloud:
        above = f" at {fmt(util, 'pct')} utilisation or more" if _num(util) else ""
        run = get_path(result, "cost.cloud_run_usd")
        alone = f"; for this run alone, renting costs {fmt(run, 'usd')}" if kind in TRAINING and _num(run) else ""
        return f"Buy if you will keep the cluster busy {keep}{above}, otherwise rent{alone}."
    if get_path(result, "cost.pricing_used") in ("reserved-1y", "reserved-3y"):  # billed every hour: no threshold
        return f"Rent: owning costs more {keep} than the reservation, which is billed for every hour of its term."
    if not (_num(util) and util <= 1):  # one voice with the breakeven: owning never catches up
        return f"Rent: owning costs more {keep}, even with the cluster busy all the time."
    return f"Rent: owning costs more {keep} unless the cluster is busy more than {fmt(util, 'pct')} of the time."


def _basis(result: Mapping, key: str, sep: str = "") -> str:
    """A cost card's basis in words (``cost.cloud_basis``, ``cost.onprem_basis``) followed by ``sep``; "" without."""
    text = get_path(result, key)
    return f"{text}{sep}" if text else ""


def token_split_text(result: Mapping, suffix: str = "") -> str:
    """ "input $0.28, output $1.95 per million; prompt plus output tokens at the planned load" (renting, or
    owning with ``suffix="_onprem"``); "" without the split."""
    i = get_path(result, f"cost.usd_per_million_input_tokens{suffix}")
    o = get_path(result, f"cost.usd_per_million_output_tokens{suffix}")
    if not (_num(i) and _num(o)):
        return ""
    return (f"input {fmt(i, 'usd_rate')}, output {fmt(o, 'usd_rate')} per million; prompt plus output tokens "
            f"at the planned load, GPU time split between reading prompts and writing output")


def _api_price_terms(row: Mapping) -> str:
    """The qualifiers of one published API price: "fp8, as of 2026-12-03" or "as of 2026-11-20, second-hand"."""
    return ", ".join(x for x in (row.get("precision") or "", f"as of {row['as_of']}" if row.get("as_of") else "",
                                 "second-hand" if row.get("status") == "secondary" else "") if x)


def _api_price_in_out(row: Mapping) -> str:
    """One published API price's input and output price per million tokens: "$0.13 input, $0.40 output"."""
    return f"{fmt(row['input_usd_per_mtok'], 'usd_rate')} input, {fmt(row['output_usd_per_mtok'], 'usd_rate')} output"


def api_price_text(result: Mapping) -> str:
    """The published API prices of the plan's model in words ("DeepInfra $0.13 input, $0.40 output (fp8, as of
    2026-12-03); ..."), cheapest at the plan's mix first; "" when the catalog has none."""
    parts = []
    for r in get_path(result, "cost.api_prices") or []:
        terms = _api_price_terms(r)
        parts.append(f"{r['provider']} {_api_price_in_out(r)}" + (f" ({terms})" if terms else ""))
    return "; ".join(parts)


def api_price_lines(result: Mapping) -> list[str]:
    """One line per published API price of the plan's model, cheapest at the plan's mix first: "Baseten
    (openai/gpt-oss-120b): $0.10 input, $0.50 output, $0.18 at this plan's mix, per million tokens; as of
    2026-11-20, second-hand"; [] when the catalog has none."""
    lines = []
    for r in get_path(result, "cost.api_prices") or []:
        mix = r.get("usd_per_mtok_at_plan_mix")
        at_mix = f", {fmt(mix, 'usd_rate')} at this plan's mix" if _num(mix) else ""
        terms = _api_price_terms(r)
        lines.append(f"{r['provider']} ({r['offering']}): {_api_price_in_out(r)}{at_mix}, per million tokens"
                     + (f"; {terms}" if terms else ""))
    return lines


def api_price_figure(result: Mapping) -> dict[str, Any]:
    """The cheapest published API price of the plan's model at the plan's mix of prompt and output tokens, set
    beside the plan's cost per million tokens; value None when the catalog has no price for the model."""
    rows = get_path(result, "cost.api_prices") or []
    value = rows[0].get("usd_per_mtok_at_plan_mix") if rows else None
    return _figure("serving-api-prices", "Published API prices for this model", value,
                   "cost.api_prices[].usd_per_mtok_at_plan_mix",
                   detail=(f"per million tokens at this plan's mix, cheapest first: {api_price_text(result)}"
                           if rows else ""))
#: serving figures and the result keys of their P10-P90 (the calibrated serving band)
#: (low key, high key, number kind, unit after the range, what is paid for in whole units)
SERVING_RANGES = {"serving-gpus": ("inference.gpus_low", "inference.gpus_high", "count", " GPUs", "replicas"),
                  "serving-cost-month-cloud": ("cost.cloud_usd_per_month_low", "cost.cloud_usd_per_month_high", "usd",
                                               "", "instances"),
                  "serving-cost-mtok-cloud": ("cost.usd_per_million_tokens_low", "cost.usd_per_million_tokens_high",
                                              "usd_rate", "", "instances"),
                  "serving-cost-month-owned": ("cost.onprem_usd_per_month_low", "cost.onprem_usd_per_month_high", "usd",
                                               "", "servers"),
                  "serving-cost-mtok-owned": ("cost.usd_per_million_tokens_onprem_low",
                                              "cost.usd_per_million_tokens_onprem_high", "usd_rate", "", "servers")}


def with_serving_ranges(block: dict[str, Any], result: Mapping) -> dict[str, Any]:
    """``block`` with the P10–P90 of its serving figures from the calibrated serving errors ("P10–P90: 8–14
    GPUs")."""
    for f in block["figures"]:
        keys = SERVING_RANGES.get(f["id"])
        low, high = (get_path(result, keys[0]), get_path(result, keys[1])) if keys else (None, None)
        if _num(low) and _num(high):
            words = (f"P10–P90 {format_range(low, high, keys[2])}{keys[3]}" if fmt(low, keys[2]) != fmt(high, keys[2])
                     else f"the same at the P10 and the P90 of the GPUs needed (whole {keys[4]})")
            f["detail"] = "; ".join(t for t in (f["detail"], words) if t)
    return block


#: the figures the plan's budget (``cost.budget_usd``: the run, or a month of serving) is compared with
BUDGET_FIGURES = ("run-cost-cloud", "run-cost-owned", "serving-cost-month-cloud", "serving-cost-month-owned")


def with_budget(block: dict[str, Any], result: Mapping) -> dict[str, Any]:
    """``block`` with the plan's budget beside the figures it bounds ("against your budget of $3.00M: over")."""
    budget = get_path(result, "plan.cost.budget_usd")
    if not _num(budget):
        return block
    for f in block["figures"]:
        if f["id"] in BUDGET_FIGURES and _num(f["value"]):
            over = f["value"] > budget * (1 + 1e-9)
            words = f"against your budget of {fmt(budget, 'usd')}: {'over' if over else 'within'}"
            f["detail"] = "; ".join(t for t in (f["detail"], words) if t)
            f["state"] = "bad" if over else f["state"] or "good"
    return block


def client_summary(result: Mapping) -> dict[str, Any]:
    """The answer the report's executive summary and the app's cards show (see the module docstring)."""
    kind = "inference" if get_path(result, "plan.workload.kind") == "inference" else "training"
    first = with_budget(with_serving_ranges(serving_block(result), result) if kind == "inference"
                        else run_block(result), result)
    return {"kind": kind, "question": question(result), "blocks": [first, fleet_block(result)],
            "recommendation": recommendation(result), "risks": top_risks(result)}
