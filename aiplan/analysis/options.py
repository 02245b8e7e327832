"""Options explorer: every catalog GPU and every priced way of getting it, ranked for the plan's workload.

For each catalog GPU that can run the workload the plan is evaluated once with that GPU (its
reference server, the GPU count that meets the deadline or the plan's count); then every way of
paying for it becomes a row: each cloud offer of the GPU at each pricing it publishes
(on-demand, reserved 1 or 3 years, spot) and buying the reference server (``buy``) with the
plan's facility and ownership period. Training rows get P10/P50/P90 days and run cost and the
probability of meeting the deadline from one vectorised Monte Carlo over all rows
(:mod:`aiplan.uncertainty`); serving rows the cost per month at the demanded load and latency.

The commitment basis is stated on every row (``basis``): a reservation or a bought cluster used
for one run pays the whole commitment unless the plan says the capacity is reused
(``cost.capacity_reused``), in which case the run pays its share. Rentals are priced in whole
instances (``instances``), a serving reservation for every hour of its term.

Only options one can buy are ranked: an offer is excluded, with the reason in words, when its
instance cannot hold the layout's tensor-parallel group (tensor parallelism stays inside one
instance's NVLink domain), when a multi-instance training run or serving replica would span instances
without a scale-out fabric (:data:`~aiplan.core.assumptions.SCALE_OUT_MIN_GPUS_PER_INSTANCE`), and
spot when the workload does not tolerate interruption (``workload.interruptible``; serving by default).
``capacity_risk`` says whether an on-demand or spot fleet is larger than the capacity one can count on
without a reservation (:func:`~aiplan.cost.capacity_risk`).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

from ..core import units as U
from ..core.assumptions import CAPACITY_RISK_GPUS
from ..core.catalog import PRICING_COLUMN
from ..core.errors import PlanError, Problem, unknown
from ..core.fields import format_range, format_value
from ..cost import (
    CAPACITY_RISK_WORDS,
    PRICING_LABELS,
    billed_share,
    capacity_risk,
    commitment_basis,
    committed_gpu_hours,
    owned_gpus,
    paid_in_full,
    rented_gpus,
    spot_terms,
    usd_per_gpu_hour,
    usd_per_million_tokens,
)
from ..findings import instance_problem, spot_problem
from ..model.efficiency import training_constants
from ..model.serving import layout_legend, plan_precisions, precision_options, serving_table
from ..model.step import precision_text
from ..pipeline import evaluate_plan, to_plain
from ..plan import PRICINGS, Plan, load_plan
from ..uncertainty import SEED, price_range_ratios, simulate, summarise

#: pricings a cloud offer can be rented at, and buying
ALL_PRICINGS = PRICINGS + ("buy",)
#: samples per option
SAMPLES = 2000
#: sort keys of ``--by``
SORT_KEYS = {"cost": "run_cost_usd_p50", "days": "days_p50", "co2": "co2_t"}
#: what a serving plan's options rank by (a service has no run time)
SERVING_SORT_KEYS = ("cost", "co2")
#: columns of a row, in order (the CSV and table order)
COLUMNS = ("rank", "gpu", "gpu_name", "offer", "offer_name", "pricing", "basis", "gpus", "fits", "days_p10",
           "days_p50", "days_p90", "run_cost_usd_p10", "run_cost_usd_p50", "run_cost_usd_p90",
           "deadline_probability", "usd_per_month", "usd_per_million_tokens", "mw", "co2_t", "excluded",
           "layout", "precision", "pools", "ttft_ms", "tpot_ms", "plans_own", "instances", "capacity_risk")


def _variant(plan, gpu) -> dict[str, Any]:
    """The plan's data with ``gpu`` and its reference server and offer (layout fields cleared)."""
    data = copy.deepcopy(plan.data)
    data.pop("catalog", None)  # already loaded (relative folders resolved against the plan file): plan.catalog
    c = data.setdefault("cluster", {})
    c["gpu"] = gpu.id
    for key in ("gpus_per_node", "tensor_parallel", "pipeline_parallel", "data_parallel", "expert_parallel",
                "fabric_switch", "fabric_radix"):
        c.pop(key, None)
    if plan.data.get("cluster", {}).get("deadline_days") is not None and plan.kind != "inference":
        c.pop("gpus", None)  # each GPU at the count that meets the deadline
    data.setdefault("facility", {})["server"] = gpu.default_server
    cost = data.setdefault("cost", {})
    cost["cloud"] = gpu.default_cloud
    for key in ("server_price_usd", "cloud_usd_per_hr"):
        cost.pop(key, None)
    return data


def _evaluate_gpu(plan, gpu, catalog):
    """(result, why excluded or None) of the plan on ``gpu``."""
    if not gpu.default_server:
        return None, "no reference server in the catalog"
    try:
        variant = load_plan(_variant(plan, gpu), catalog)
    except PlanError as exc:
        return None, exc.problems[0].allowed
    return to_plain(evaluate_plan(variant)), None


def _fits(plan, r) -> tuple[bool, str | None]:
    if not r["memory"]["fits"]:
        return False, "does not fit in GPU memory"
    if plan.kind != "inference" and r["compute"].get("wall_clock_days") is None:
        return False, "the run never finishes (interruptions stall it)"
    if plan.kind == "inference":
        if not r["inference"].get("meets_demand"):
            return False, "cannot serve the demand"
        if r["inference"].get("meets_latency") is False:
            return False, "misses the latency targets"
        return True, None
    if r["compute"].get("deadline_gpus_needed"):
        return False, "deadline out of reach"
    return True, None


def _offers(catalog, gpu_id, pricings):
    """(offer id, offer name, pricing, price per GPU-hour or None) of the clouds renting ``gpu_id``."""
    for cloud in catalog.clouds.values():
        if cloud.gpu != gpu_id:
            continue
        for pricing in pricings:
            if pricing == "buy":
                continue
            price = getattr(cloud, PRICING_COLUMN[pricing])
            per_gpu = float(usd_per_gpu_hour(price, cloud.gpus)) if price else None
            yield cloud, pricing, per_gpu


def plans_own_option(plan) -> tuple[str, str | None, str]:
    """(GPU, cloud offer, pricing) a loaded plan itself uses, defaults resolved: its row among the options
    (of a serving plan's variants, the one :func:`is_plans_own` marks)."""
    return plan.gpu.id, plan.cloud.id if plan.cloud else None, plan.cost.get("pricing")


def is_plans_own(row, chosen) -> bool:
    """Whether an option row is the plan's own choice (``chosen`` from :func:`plans_own_option`)."""
    return (row["gpu"], row["offer"], row["pricing"]) == chosen and row.get("plans_own") is not False


def explore(plan, catalog=None, gpus=None, pricings=None, by="cost", top=None, samples=SAMPLES,
            seed=SEED) -> list[dict[str, Any]]:
    """Rows of every option, ranked by ``by`` (excluded options last, with ``excluded`` saying why).

    Parameters
    ----------
    plan : Plan, dict, str or path
        the workload (and facility, years, deadline, pricing preferences) to plan for.
    gpus : list of str, optional
        catalog GPU ids to consider (default: every catalog GPU).
    pricings : list of str, optional
        of ``on-demand``, ``reserved-1y``, ``reserved-3y``, ``spot``, ``buy`` (default: all).
    by : str
        ``cost`` (P50 run cost; serving: cost per million tokens), ``days`` (P50; not for serving) or ``co2``.
    top : int, optional
        keep the best ``top`` included rows (excluded rows are always listed after them).
    """
    plan = plan if isinstance(plan, Plan) else load_plan(plan, catalog)
    catalog = catalog or plan.catalog
    _check_args(catalog, gpus, pricings, by, plan.kind == "inference")
    pricings = tuple(pricings or ALL_PRICINGS)
    rows: list[dict[str, Any]] = []
    chosen = [g for g in catalog.gpus.values() if not gpus or g.id in gpus]
    table = _serving_table(plan, [g for g in chosen if g.default_server]) if plan.kind == "inference" else {}
    for gpu in chosen:
        r, why = _evaluate_gpu(plan, gpu, catalog)
        if r is None:
            rows.append(_row(gpu, None, "", None, why))
            continue
        fits, why = _fits(plan, r)
        for variant, v_fits, v_why in _serving_variants(plan, r, table.get(gpu.id), fits, why):
            for cloud, pricing, price in _offers(catalog, gpu.id, pricings):
                rows.append(_priced(plan, variant, gpu, cloud, pricing, price, v_fits, v_why))
            if "buy" in pricings:
                rows.append(_bought(plan, variant, gpu, catalog, v_fits, v_why))
    if plan.kind != "inference":
        _simulate(plan, rows, training_constants(), samples, seed)
    return rank(rows, by, top)


def _serving_table(plan, gpus) -> dict[str, list[dict]]:
    """Each GPU's serving options (:func:`~aiplan.model.serving.serving_table`) at every precision worth
    trying, by GPU id."""
    combos = [(g, p) for g in gpus for p in precision_options(plan, g)]
    out: dict[str, list[dict]] = {}
    for entry in serving_table(plan, combos) if combos else []:
        out.setdefault(entry["gpu"], []).append(entry)
    return out


def _serving_variants(plan, r, entries, fits, why):
    """(result, fits, why excluded) of each serving option of a GPU: every precision with one pool and with
    two; a training plan's one result. The plan's own choice (its precision, the pools it is served on)
    is its evaluated result; another variant's server-count figures (facility power, CO2, the owned cost
    per month) are the evaluated plan's scaled by the whole servers its GPUs take."""
    if plan.kind != "inference" or not entries:
        yield r, fits, why
        return
    inf = r["inference"]
    own_pools = "two" if inf.get("disaggregated") else "one"
    gpus_per_server = r["cluster"].get("gpus_per_node") or 1
    base_servers = r["cluster"].get("nodes") or 1
    for entry in entries:
        own_precision = entry["precisions"] == plan_precisions(plan)
        for pools, option in (("one", entry["one"]), ("two", entry["two"])):
            if option is None:
                continue
            if own_precision and pools == own_pools:
                variant = dict(r, _serving={"layout": inf["layout"] if pools == "one" else option["layout"],
                                            "precision": inf["precision"], "pools": pools, "ttft_ms": inf["ttft_ms"],
                                            "tpot_ms": inf["tpot_ms"], "plans_own": True})
                yield variant, fits, why
                continue
            servers = math.ceil(option["gpus"] / gpus_per_server)
            ratio = servers / base_servers
            variant = copy.deepcopy(r)
            variant["cluster"].update(gpus=option["gpus"], nodes=servers)
            fac, cost = variant.get("facility") or {}, variant.get("cost") or {}
            for section, key in ((fac, "total_kw"), (fac, "co2_t"), (cost, "onprem_usd_per_month")):
                if section.get(key) is not None:
                    section[key] *= ratio
            variant["_serving"] = {"layout": option["layout"],
                                   "precision": precision_text(entry["precisions"], plan.model.experts > 1),
                                   "pools": pools, "ttft_ms": option["ttft_ms"], "tpot_ms": option["tpot_ms"],
                                   "plans_own": False}
            v_why = None
            if not option["fits"]:
                v_why = "does not fit in GPU memory"
            elif not option["meets_latency"]:
                v_why = "misses the latency targets"
            yield variant, v_why is None, v_why


def _check_args(catalog, gpus, pricings, by, serving=False) -> None:
    problems = [unknown("--gpus", g, "GPU id", catalog.gpus) for g in (gpus or ()) if g not in catalog.gpus]
    problems += [Problem("--pricing", f"must be one of {', '.join(ALL_PRICINGS)}", p)
                 for p in (pricings or ()) if p not in ALL_PRICINGS]
    if by not in SORT_KEYS:
        problems.append(Problem("--by", f"must be one of {', '.join(SORT_KEYS)}", by))
    elif serving and by not in SERVING_SORT_KEYS:
        problems.append(Problem("--by", f"a serving plan has no run time to rank by: must be one of "
                                        f"{', '.join(SERVING_SORT_KEYS)}", by))
    if problems:
        raise PlanError(problems)


def _row(gpu, r, pricing, offer, excluded, **extra) -> dict[str, Any]:
    facility = (r or {}).get("facility") or {}
    row = dict.fromkeys(COLUMNS)
    row.update({"gpu": gpu.id, "gpu_name": gpu.name, "pricing": pricing, "fits": False if r is None else None,
                "gpus": (r or {}).get("cluster", {}).get("gpus"),
                "mw": None if facility.get("total_kw") is None else facility["total_kw"] / 1000.0,
                "co2_t": facility.get("co2_t"), "excluded": excluded})
    if offer is not None:
        row.update({"offer": offer[0], "offer_name": offer[1]})
    row.update((r or {}).get("_serving") or {})
    row.update(extra)
    return row


def _training_work(r) -> tuple[float, float]:
    """(GPU-hours including interruptions, wall-clock days without them) of a training result."""
    c = r["compute"]
    return c["gpu_hours"] / (r["reliability"]["goodput"] or 1.0), c["wall_clock_days_no_failures"]


def _priced(plan, r, gpu, cloud, pricing, price, fits, why) -> dict[str, Any]:
    """A cloud offer at one pricing."""
    excluded = why or (None if price else "no published price for this pricing")
    if not excluded and spot_problem(plan, pricing):
        excluded = f"{spot_problem(plan, pricing)} (see the plan's 'Tolerates interruption')"
    if not excluded:
        excluded = instance_problem(plan, r, cloud)
    offer = (cloud.id, cloud.name)
    reused = bool(plan.cost.get("capacity_reused"))
    row = _row(gpu, r, pricing, offer, excluded, fits=fits, basis=commitment_basis(pricing, reused, plan.kind))
    gpus = r["cluster"]["gpus"]
    if gpus:
        rented = float(rented_gpus(gpus, cloud.gpus))
        row.update(instances=rented / cloud.gpus, capacity_risk=capacity_risk(pricing, rented))
        _rented_share(row, r["cluster"], rented)
    if excluded:
        return row
    spot_rate, spot_lost, spot_g = spot_terms(plan, r, cloud, pricing)
    if pricing == "spot":
        row["_spot"] = (spot_rate, spot_lost)
    row["_price_ratio"] = price_range_ratios(cloud)
    if plan.kind == "inference":
        # whole instances; a reservation billed for every hour of its term, on-demand for the hours used
        row["usd_per_month"] = (rented * U.HOURS_PER_MONTH * float(billed_share(pricing, plan.cost["utilisation"]))
                                * price)
        row["usd_per_million_tokens"] = usd_per_million_tokens(plan, row["usd_per_month"])
        return row
    work, _ = _training_work(r)
    used = work / spot_g * rented / gpus  # whole instances for the run's wall-clock hours
    committed = float(committed_gpu_hours(used, rented, pricing, reused))
    row.update(_mc_inputs(r), _point_cost=committed * price)
    if paid_in_full(used, rented, pricing, reused):  # the whole reservation term is paid whatever the run takes
        row["_fixed_cost"] = committed * price
    return row


def _rented_share(row, cluster, rented) -> None:
    """Facility power and CO2 of the GPUs rented, not of the whole servers owning would take: three GPUs rented
    on a 72-GPU rack draw 3/72 of the rack's power."""
    owned = owned_gpus(cluster)
    if owned:
        for key in ("mw", "co2_t"):
            if row.get(key) is not None:
                row[key] *= rented / owned


def _mc_inputs(r) -> dict[str, float]:
    """Monte Carlo inputs of a training result: days without interruptions, their rate and cost."""
    rel = r["reliability"]
    return {"_days": r["compute"]["wall_clock_days_no_failures"], "_rate": rel.get("interruptions_per_day") or 0.0,
            "_lost": 1.0 / (rel.get("goodput") or 1.0) - 1.0}


def _bought(plan, r, gpu, catalog, fits, why) -> dict[str, Any]:
    """Buying the GPU's reference server, with the plan's facility and years."""
    server = catalog.servers[gpu.default_server]
    cost = r["cost"]
    reused = bool(plan.cost.get("capacity_reused"))
    excluded = why or (None if cost.get("capex_usd") else "no server price in the catalog")
    row = _row(gpu, r, "buy", (server.id, server.name), excluded, fits=fits,
               basis=commitment_basis("buy", reused, plan.kind), capacity_risk=capacity_risk("buy", 0))
    if excluded:
        return row
    if plan.kind == "inference":
        row["usd_per_month"] = cost["onprem_usd_per_month"]
        row["usd_per_million_tokens"] = usd_per_million_tokens(plan, row["usd_per_month"])
        return row
    work, days = _training_work(r)
    row.update(_mc_inputs(r))
    if reused:
        row["_point_cost"] = work * cost["onprem_usd_per_gpu_hour"]
    else:  # bought for this run: the hardware plus the run's operating cost
        row["_point_cost"] = cost["capex_usd"] + cost["opex_usd_per_year"] * days / U.DAYS_PER_YEAR
    row["_fixed_cost"] = 0.0 if reused else cost["capex_usd"]
    return row


def _simulate(plan, rows, k, samples, seed) -> None:
    """Fill the P10/P50/P90 columns and the deadline probability of every priced training row."""
    live = [row for row in rows if row.get("_point_cost") is not None]
    if not live:
        return
    base, rate, lost, srate, slost, lo, hi, point, fixed = ([] for _ in range(9))
    for row in live:
        base.append(row["_days"])
        rate.append(row["_rate"])
        lost.append(row["_lost"])
        s = row.get("_spot", (0.0, 0.0))
        srate.append(s[0])
        slost.append(s[1])
        pr = row.get("_price_ratio", (1.0, 1.0))
        lo.append(pr[0])
        hi.append(pr[1])
        point.append(row["_point_cost"] - row.get("_fixed_cost", 0.0))
        fixed.append(row.get("_fixed_cost", 0.0))
    days, ratio = simulate(np.array(base), np.array(rate), np.array(lost), np.array(srate), np.array(slost),
                           np.array(lo), np.array(hi), k["band.q10"], k["band.q90"], samples, seed)
    deadline = plan.cluster.get("deadline_days")
    s = summarise(days, ratio, np.array(point), None if deadline is None else np.full(len(live), deadline))
    for i, row in enumerate(live):
        for p in (10, 50, 90):
            row[f"days_p{p}"] = float(s[f"days_p{p}"][i])
            row[f"run_cost_usd_p{p}"] = float(s[f"run_cost_usd_p{p}"][i]) + fixed[i]
        if deadline is not None:
            row["deadline_probability"] = float(s["deadline_probability"][i])


def rank(rows, by="cost", top=None) -> list[dict[str, Any]]:
    """Sort included rows by ``by`` (serving: cost per month), excluded rows last; number them."""
    key = SORT_KEYS[by]
    serving = are_serving(rows)
    if by == "cost" and serving:
        key = "usd_per_million_tokens"
    included = [r for r in rows if not r["excluded"] and r.get(key) is not None]
    excluded = [r for r in rows if r not in included]
    for r in excluded:
        r["excluded"] = r["excluded"] or "no figure to rank by"
    included.sort(key=lambda r: (r[key], r.get("days_p50") or 0.0))
    if top:
        included = included[:top]
    out = []
    for i, r in enumerate(included + excluded, 1):
        clean = {c: r.get(c) for c in COLUMNS}
        clean["rank"] = i if not r["excluded"] else None
        out.append(clean)
    return out


def are_serving(rows) -> bool:
    """Options of a serving plan (priced per month), not of a training run."""
    return any(r.get("usd_per_month") is not None for r in rows)


def have_odds(rows) -> bool:
    """Options of a plan with a deadline: they carry the chance of meeting it (every table shows that column only
    then)."""
    return any(r.get("deadline_probability") is not None for r in rows)


#: reasons that say only that the catalog lacks a figure (listed after the reasons about the workload)
MISSING_FIGURE = ("no published price for this pricing", "no server price in the catalog", "no figure to rank by")


def capacity_risk_text(r: dict[str, Any]) -> str:
    """An option's capacity risk as the tables show it ("high", "low", "none (contracted)"); "" without."""
    return CAPACITY_RISK_WORDS.get(r.get("capacity_risk") or "", "")


def excluded_summary(rows, limit: int = 8, examples: int = 3) -> list[dict[str, Any]]:
    """Why options were not ranked: ``{reason, count, offers}`` per reason (``offers``: up to ``examples``
    option names, "GPU, offer, pricing"), reasons about the workload first, then by how many options
    they exclude; at most ``limit`` reasons."""
    groups: dict[str, list[dict]] = {}
    for r in rows:
        if r["excluded"]:
            groups.setdefault(r["excluded"], []).append(r)
    out = []
    for reason, group in groups.items():
        names = []
        for r in group:
            name = ", ".join(x for x in (r["gpu_name"], r.get("offer_name") or "",
                                         PRICING_LABELS.get(r["pricing"], r["pricing"]) if r["pricing"] else "") if x)
            if name not in names:
                names.append(name)
        out.append({"reason": reason, "count": len(group), "offers": names[:examples]})
    out.sort(key=lambda g: (g["reason"] in MISSING_FIGURE, -g["count"], g["reason"]))
    return out[:limit]


def serving_option_text(r: dict[str, Any]) -> str:
    """A serving option's layout, pools and precision in words ("TP2, one pool; attention fp8, ...")."""
    if not r.get("layout"):
        return ""
    pools = "one pool" if r.get("pools") == "one" else "two pools"
    return f"{r['layout']}, {pools}; {r.get('precision') or ''}".rstrip("; ")


def figure_cells(r: dict[str, Any], serving: bool, odds: bool = True) -> list[str]:
    """An option's figures as the app's and the report's tables show them: GPUs, then the layout, per
    month and per million tokens (serving) or days P10–P90, run cost P10–P90 and (``odds``: the plan has a
    deadline) the chance of the deadline (training)."""
    cells = [format_value(r["gpus"], "count")]
    if serving:
        return cells + [serving_option_text(r), format_value(r["usd_per_month"], "usd"),
                        format_value(r["usd_per_million_tokens"], "usd_rate")]
    chance = "" if r.get("deadline_probability") is None else format_value(r["deadline_probability"], "odds")
    return cells + [time_range_text(r["days_p10"], r["days_p90"]),
                    format_range(r["run_cost_usd_p10"], r["run_cost_usd_p90"], "usd")] + ([chance] if odds else [])


def time_range_text(low_days: float, high_days: float) -> str:
    """A run's P10–P90 time as people say it: "18–34 days", or "15–28 hours" for a run of under two days."""
    unit, scale = ("hours", 24.0) if high_days < 2 else ("days", 1.0)
    low, high = f"{low_days * scale:,.0f}", f"{high_days * scale:,.0f}"
    return f"{low} {unit}" if low == high else f"{low}–{high} {unit}"


#: table columns: (header, key, format kind)
TABLE = (("#", "rank", "count"), ("GPU", "gpu_name", "text"), ("Offer", "offer_name", "text"),
         ("Pricing", "pricing", "text"), ("GPUs", "gpus", "count"), ("Layout", "layout_text", "text"),
         ("Time P10–P90", "days", "days"), ("Run cost P10–P90", "run_cost", "usd"),
         ("Deadline odds", "deadline_probability", "odds"), ("Per month", "usd_per_month", "usd"),
         ("Per million tokens", "usd_per_million_tokens", "usd_rate"), ("Facility power", "kw", "power"),
         ("CO₂", "co2_t", "co2"), ("Capacity risk", "capacity_risk_text", "text"))


def offer_text(name) -> str:
    """An offer's name as a client reads it: the instance's underscores as spaces ("Azure Standard ND96isr MI300X
    v5")."""
    return str(name or "").replace("_", " ")


def _text_cell(r, key, kind) -> str:
    """One cell of :func:`format_options`."""
    if key == "days":
        lo, hi = r.get("days_p10"), r.get("days_p90")
        return "" if lo is None else time_range_text(lo, hi)
    if key == "run_cost":
        lo, hi = r.get("run_cost_usd_p10"), r.get("run_cost_usd_p90")
        return "" if lo is None else f"{format_value(lo, kind)}–{format_value(hi, kind)}"
    if key == "kw":
        return "" if r.get("mw") is None else format_value(r["mw"] * 1000.0, "power")
    if key == "co2_t":
        return "" if r.get("co2_t") is None else format_value(r["co2_t"], "co2")
    if key == "layout_text":
        return serving_option_text(r)
    if key == "capacity_risk_text":
        return capacity_risk_text(r)
    if key == "offer_name":
        return offer_text(r.get("offer_name"))
    if key == "pricing":
        return PRICING_LABELS.get(r["pricing"], r["pricing"])
    value = r.get(key)
    return "" if value is None else format_value(value, kind)


def format_options(rows, by="cost") -> str:
    """The ranked options as a readable text table (excluded options last, with the reason)."""
    serving = are_serving(rows)
    cols = [c for c in TABLE if (c[1] in ("usd_per_month", "usd_per_million_tokens", "layout_text")) == serving
            or c[1] in ("rank", "gpu_name", "offer_name", "pricing", "gpus", "kw", "co2_t", "capacity_risk_text")]
    if not have_odds(rows):  # no deadline: no odds of meeting one
        cols = [c for c in cols if c[1] != "deadline_probability"]

    headers = [("CO₂ per year" if serving else "CO₂ of the run") if k == "co2_t" else h for h, k, _ in cols]
    table = [headers] + [[_text_cell(r, k, kind) for _, k, kind in cols] for r in rows if not r["excluded"]]
    widths = [max(len(row[i]) for row in table) for i in range(len(cols))]
    lines = [f"Options ranked by {'cost per million tokens' if serving and by == 'cost' else by}", ""]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in table]
    excluded: dict[tuple[str, str], int] = {}
    for r in rows:
        if r["excluded"]:
            key = (r["gpu_name"], r["excluded"])
            excluded[key] = excluded.get(key, 0) + 1
    if excluded:
        lines += ["", f"Not ranked ({format_value(sum(excluded.values()), 'count', 'options')}; every one is in the "
                  "JSON and CSV output)"]
        lines += [f"  {gpu}: {why}" + (f" ({n} options)" if n > 1 else "") for (gpu, why), n in excluded.items()]
    bases = sorted({r["basis"] for r in rows if r.get("basis") and not r["excluded"]})
    if bases:
        lines += ["", "Cost basis: " + "; ".join(bases)]
    legend = layout_legend(r.get("layout") for r in rows if not r["excluded"]) if serving else ""
    if legend:
        lines += ["", legend]
    lines += ["", "Facility power and CO₂: of the GPUs rented (their share of the servers), or of the whole servers "
              "bought."]
    if any(r.get("capacity_risk") == "high" for r in rows if not r["excluded"]):
        lines += ["", f"Capacity risk high: an on-demand or spot fleet above {CAPACITY_RISK_GPUS:,} GPUs, the largest "
                  "block AWS guarantees without a reservation (a Capacity Block of 64 instances)."]
    return "\n".join(lines)


def pareto_front(rows) -> list[dict[str, Any]]:
    """The ranked rows no other row beats on both median days and median run cost (training)."""
    live = [r for r in rows if not r["excluded"] and r.get("days_p50") is not None
            and r.get("run_cost_usd_p50") is not None]
    live.sort(key=lambda r: (r["days_p50"], r["run_cost_usd_p50"]))
    front, best = [], math.inf
    for r in live:
        if r["run_cost_usd_p50"] < best:
            front.append(r)
            best = r["run_cost_usd_p50"]
    return front
