"""The cost step: a plan and the earlier steps' results -> the cost section (cloud, owned, breakeven,
sensitivity, growth)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core import assumptions as A
from ..core import units as U
from ..core.assumptions import SPOT_CHECKPOINT_MIN_DEFAULT, STAFF_GPUS_PER_SERVER
from ..core.catalog import PRICING_COLUMN, ServerPrice, load_catalog, pick_server_price
from ..core.fields import format_value, get_path
from ..core.records import record_of
from .formulas import (
    COMMITMENT_YEARS,
    DRIVERS,
    PRICING_LABELS,
    SENSITIVITY_STEP,
    breakeven_months,
    breakeven_utilisation,
    colocation_usd_per_year,
    commitment_basis,
    committed_run_usd,
    hybrid_usd,
    maintenance_usd_per_year,
    monthly_curves,
    node_capex_usd,
    owned_usd_per_gpu_hour,
    paid_in_full,
    power_usd_per_year,
    prefill_share,
    rented_gpus,
    split_usd_per_million_tokens,
    spot_goodput,
    tco,
    usd_per_gpu_hour,
    usd_per_million_tokens,
    whole_server_share,
)

# --- plan -> inputs ---------------------------------------------------------------------

def offer_price(offer, pricing: str) -> tuple[float | None, str]:
    """Instance price for ``pricing``; falls back to on-demand when the offer lacks it."""
    if offer is None:
        return None, pricing
    price = getattr(offer, PRICING_COLUMN[pricing])
    if price is None:
        return offer.on_demand_usd_per_hr, "on-demand"
    return price, pricing


def _nz(v, default=0.0):
    return default if v is None else v


def inputs(plan, result) -> dict[str, Any]:
    """The :func:`tco` inputs for a plan and the result of the earlier steps."""
    fac, cst = plan.facility, plan.cost
    gpus, nodes = result["cluster"]["gpus"], result["cluster"]["nodes"]
    fac_r = result["facility"]
    it_kw = fac_r["it_kw"]
    storage_tb = result["storage"]["capacity_tb"]
    cloud_price = _cloud_usd_per_gpu_hour(plan, result)
    pricing_used = offer_price(plan.cloud, cst["pricing"])[1]
    # the training run's GPU-hours including the time lost to failures (NaN for serving, or a run that
    # practically never finishes)
    goodput = result["reliability"]["goodput"]
    work = (np.nan if plan.kind == "inference" or goodput < A.GOODPUT_STALLED
            else result["compute"]["gpu_hours"] / goodput)
    return {
        "gpus": float(gpus), "servers": float(nodes), "staff_servers": gpus / STAFF_GPUS_PER_SERVER,
        "server_price_usd": _nz(cst.get("server_price_usd"), np.nan),
        "network_fraction": network_fraction(plan, result),
        "storage_usd": storage_tb * cst["storage_usd_per_tb"],
        "it_kw": float(it_kw), "busy_kw": float(fac_r["average_it_kw"]), "idle_kw": float(fac_r["idle_it_kw"]),
        "pue": fac["pue"], "usd_per_kwh": fac["electricity_usd_per_kwh"],
        "colo_usd_per_kw_month": cst["colocation_usd_per_kw_month"], "build_usd_per_mw": cst["build_usd_per_mw"],
        "build": cst["facility_model"] == "build",
        "staff_usd_per_year": cst["staff_usd_per_year"], "servers_per_engineer": cst["servers_per_engineer"],
        "maintenance_fraction": cst["maintenance_fraction_per_year"],
        "support_usd_per_gpu_year": cst["support_usd_per_gpu_year"], "cost_of_capital": cst["cost_of_capital"],
        "years": cst["years"], "utilisation": cst["utilisation"],
        "cloud_usd_per_gpu_hour": np.nan if cloud_price is None else cloud_price,
        "work_gpu_hours": work, "mfu_scale": 1.0,
        # renting: whole instances, billed for the hours used or (reserved) every hour of the term
        "rented_gpus": float(rented_gpus(gpus, plan.cloud.gpus)) if plan.cloud else float(gpus),
        "instance_gpus": float(plan.cloud.gpus) if plan.cloud else 1.0,
        "term_years": COMMITMENT_YEARS.get(pricing_used, 0.0),
    }




def spot_terms(plan, result, cloud=None, pricing=None) -> tuple[float, float, float]:
    """(reclaims per day of the job, expected lost share, spot goodput) renting ``cloud`` (default
    the plan's offer) at ``pricing`` (default the pricing the plan's offer is priced at); (0, 0, 1)
    unless spot.

    The one spot model: the cost step's price per useful GPU-hour, the Monte Carlo's reclaims and
    the options explorer all read it. Reclaims hit a synchronous job on any of its instances, at
    the checkpoint interval of the cluster step (else the plan's, else
    :data:`SPOT_CHECKPOINT_MIN_DEFAULT`); :func:`~aiplan.cost.formulas.spot_goodput` turns them into
    goodput with the hardware-failure model.
    """
    cloud = cloud or plan.cloud
    if not cloud or (pricing or offer_price(cloud, plan.cost["pricing"])[1]) != "spot":
        return 0.0, 0.0, 1.0
    instances = math.ceil((result["cluster"].get("gpus") or 1) / cloud.gpus)
    per_month = plan.cost["spot_interruptions_per_instance_month"]
    interval = (result["checkpoint"].get("interval_min") or plan.cluster.get("checkpoint_interval_min")
                or SPOT_CHECKPOINT_MIN_DEFAULT)
    g = float(spot_goodput(instances, per_month, interval, plan.cluster.get("restart_min") or 0.0))
    rate = instances * per_month * U.MONTHS_PER_YEAR / U.DAYS_PER_YEAR
    return rate, (1.0 / g - 1.0) if g > 0 else math.inf, g


def _cloud_usd_per_gpu_hour(plan, result) -> float | None:
    price, _ = offer_price(plan.cloud, plan.cost["pricing"])
    if price is None:
        return None
    g = spot_terms(plan, result)[2]
    return float(usd_per_gpu_hour(price, plan.cloud.gpus)) / g if g > 0 else math.inf


def _scalar(v):
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def utilisation_curve(plan, result, utilisations) -> dict[str, Any]:
    """Cloud and on-prem totals over ``years`` at several utilisations (one vectorised :func:`tco` call).

    The arithmetic of :func:`step` with only ``cost.utilisation`` changed, so each point equals
    ``evaluate`` of the plan at that utilisation, at a fraction of the cost (the utilisation
    crossover chart calls this on every redraw).

    Parameters
    ----------
    plan : Plan
    result : dict
        the plan's result (the earlier steps' sections are read)
    utilisations : array_like
        share of hours the cluster does useful work [-], in (0, 1]

    Returns
    -------
    dict
        ``utilisation`` [-], ``cloud_usd`` and ``onprem_usd`` [USD] arrays; a total is None
        where the plan has no cloud price or no server price.

    References
    ----------
    .. [1] As :func:`tco`.
       [epoch-hardware-prices;epoch-training-cost-trends;eia-epm-table-5-6-a;cbre-na-data-center-trends-h2-2024]
    """
    u = np.asarray(utilisations, dtype=float)
    x = inputs(plan, result)
    batch = {k: (v if isinstance(v, bool) else np.full(u.shape, v, dtype=float)) for k, v in x.items()}
    batch["utilisation"] = u
    out = tco(batch)
    has_cloud = offer_price(plan.cloud, plan.cost["pricing"])[0] is not None
    has_server_price = plan.cost.get("server_price_usd") is not None
    return {"utilisation": u,
            "cloud_usd": out["cloud_usd"] if has_cloud else None,
            "onprem_usd": out["onprem_usd"] if has_server_price else None}


def repeated(x: dict[str, Any], n: int) -> dict[str, Any]:
    """:func:`tco` inputs ``x`` with every number repeated ``n`` times (flags kept): the rows of one
    vectorised call [units of ``x``].

    Examples
    --------
    >>> b = repeated({"gpus": 8.0, "build": False, "years": 3}, 2)
    >>> b["gpus"].tolist(), b["build"], b["years"].tolist()
    ([8.0, 8.0], False, [3.0, 3.0])
    """
    keys = [k for k, v in x.items() if not isinstance(v, bool)]
    rows = np.repeat(np.array([x[k] for k in keys], dtype=float)[:, None], n, axis=1)  # one array, a row a key
    return {**x, **dict(zip(keys, rows))}


def sensitivity_tco(x: dict[str, Any], step: float = SENSITIVITY_STEP) -> tuple[dict[str, Any], dict[str, Any]]:
    """The tornado's :func:`tco` inputs and totals: row 0 the plan's own ``x``, then each driver at
    -step and +step (utilisation capped at 1, PUE floored at 1), in one vectorised call [USD]."""
    names = list(DRIVERS)
    n = 2 * len(names) + 1
    factors = np.ones((n, len(names)))
    for i in range(len(names)):
        factors[1 + 2 * i, i] = 1 - step
        factors[2 + 2 * i, i] = 1 + step
    batch = repeated(x, n)
    for i, name in enumerate(names):
        batch[DRIVERS[name]] = batch[DRIVERS[name]] * factors[:, i]
    batch["utilisation"] = np.minimum(batch["utilisation"], 1.0)
    batch["pue"] = np.maximum(batch["pue"], 1.0)
    return batch, tco(batch)


def sensitivity(plan, result, step: float = SENSITIVITY_STEP, x: dict[str, Any] | None = None,
                tornado: tuple[dict[str, Any], dict[str, Any]] | None = None) -> list[dict]:
    """Tornado data: each driver at -step and +step, for cloud and on-prem.

    The quantity is the cost of the plan's work: the training run for
    pretrain/finetune plans with known GPU-hours, else the total over ``years``.
    All 7 drivers x 2 directions (+ base) are one vectorised :func:`tco` call
    (:func:`sensitivity_tco`; ``x`` and ``tornado``: the plan's :func:`inputs` and that call, when
    already made). Utilisation is capped at 1 and PUE floored at 1.

    Returns
    -------
    list of dict
        ``{driver, option, low_usd, high_usd, base_usd}``

    References
    ----------
    .. [1] One-at-a-time (tornado) sensitivity; drivers from the issue brief.
    """
    x = x or inputs(plan, result)
    names = list(DRIVERS)
    batch, out = tornado or sensitivity_tco(x, step)
    run = np.isfinite(x["work_gpu_hours"])
    cloud = committed_run_usd(plan, batch, offer_price(plan.cloud, plan.cost["pricing"])[1]) if run \
        else out["cloud_usd"]
    onprem = out["onprem_run_usd"] if run else out["onprem_usd"]
    rows = []
    for i, name in enumerate(names):
        for option, arr in (("cloud", cloud), ("onprem", onprem)):
            rows.append({"driver": name, "option": option, "low_usd": _scalar(arr[1 + 2 * i]),
                         "high_usd": _scalar(arr[2 + 2 * i]), "base_usd": _scalar(arr[0])})
    return rows


def breakeven_table(prices: dict[str, float] | None = None, catalog=None, gpu: str = "h100-sxm",
                    server_price_usd: float = 270000.0, gpus_per_server: int = 8,
                    server_kw: float = 10.2, network_fraction: float = 0.19, years: float = 4.0,
                    pue: float = 1.3, usd_per_kwh: float = 0.0806, colo_usd_per_kw_month: float = 184.06,
                    ops_fraction_per_year: float = 0.10, claim_utilisation: float = 0.40,
                    claim_months: float = 18.0) -> list[dict]:
    """When does the rule of thumb hold? "Owning wins at 40%+ utilisation, 12-18 month breakeven."

    For each cloud price (given, or every priced offer for ``gpu`` in the
    catalog), the owned cost per GPU-hour from the reference's inputs, the
    breakeven utilisation on the reference's basis (every cost per owned hour)
    and on the kit's (energy only while used), breakeven months at continuous
    use and at ``claim_utilisation``, and whether the claim holds (u* <= 40%
    and months at continuous use <= 18).

    Parameters default to the reference calculation (derived, sources in
    :func:`owned_usd_per_gpu_hour`): DGX H100 $270k / 8,
    19% interconnect, 4 years, 10.2 kW / 8 per GPU, PUE 1.3, $0.0806/kWh,
    colocation $184.06/kW-month, ops/maintenance 10%/yr of capex.

    Returns
    -------
    list of dict
        ``{label, usd_per_gpu_hour, owned_usd_per_gpu_hour, breakeven_utilisation,
        breakeven_utilisation_reference, months_continuous, months_at_claim, claim_holds}``

    References
    ----------
    .. [1] DCS Global, "AI Training Infrastructure - Quick Reference", table "Training
       Infrastructure: On-Premises vs. Cloud", rows "Cost at 40%+ utilisation" and "Cost at
       <40% utilisation"; Briarwood, "What Is AI Infrastructure?", "AI Cloud Infrastructure
       vs. On-Premises Data Centers" (breakeven around 12-18 months of continuous usage).
       [seed-ai-training-quick-reference;seed-what-is-ai-infrastructure]
    .. [2] The reference inputs as :func:`owned_usd_per_gpu_hour`; prices: AWS p5 $12.29
       (Epoch AI hardware prices, Wayback 2025-03-17) and $6.88 (aws-gpu p5_instances.js,
       55.04 / 8), GCP 3-year commitment $4.86 and Lambda $2.99 (Epoch AI hardware prices).
       [epoch-hardware-prices;tsaol-aws-gpu]
    """
    if prices is None:
        catalog = catalog or load_catalog()
        prices = {}
        for o in catalog.clouds.values():
            if o.gpu != gpu:
                continue
            for pricing, column in PRICING_COLUMN.items():
                p = getattr(o, column)
                if p is not None:
                    prices[f"{o.id} {pricing} ({o.as_of})"] = float(usd_per_gpu_hour(p, o.gpus))
    labels = list(prices)
    c = np.array([prices[k] for k in labels], dtype=float)
    capex = float(node_capex_usd(server_price_usd / gpus_per_server, network_fraction))
    kw = server_kw / gpus_per_server
    fixed_year = float(colocation_usd_per_year(kw, colo_usd_per_kw_month)
                       + maintenance_usd_per_year(capex, ops_fraction_per_year))
    energy_year = float(power_usd_per_year(kw, pue, usd_per_kwh, 1.0))
    fixed_h = float(owned_usd_per_gpu_hour(capex, years, fixed_year))
    energy_h = energy_year / U.HOURS_PER_YEAR
    owned_full = fixed_h + energy_h
    u_kit = breakeven_utilisation(fixed_h, c, energy_h)
    u_ref = breakeven_utilisation(owned_full, c)
    hm = U.HOURS_PER_MONTH
    m_cont = breakeven_months(capex, c * hm, (fixed_year + energy_year) / U.MONTHS_PER_YEAR)
    m_claim = breakeven_months(capex, c * hm * claim_utilisation,
                               (fixed_year + energy_year * claim_utilisation) / U.MONTHS_PER_YEAR)
    rows = []
    for i, label in enumerate(labels):
        holds = bool(np.isfinite(u_ref[i]) and u_ref[i] <= claim_utilisation
                     and np.isfinite(m_cont[i]) and m_cont[i] <= claim_months)
        rows.append({"label": label, "usd_per_gpu_hour": float(c[i]), "owned_usd_per_gpu_hour": owned_full,
                     "breakeven_utilisation": _scalar(u_kit[i]), "breakeven_utilisation_reference": _scalar(u_ref[i]),
                     "months_continuous": _scalar(m_cont[i]), "months_at_claim": _scalar(m_claim[i]),
                     "claim_holds": holds})
    return rows


def growth_capex(plan, result) -> list[dict]:
    """Capex of each growth phase of ``facility.growth``: servers added x server capex + their storage.

    Returns
    -------
    list of dict
        ``{year, servers_added, capex_usd}`` [-, -, USD].

    References
    ----------
    .. [1] As :func:`node_capex_usd` (Epoch AI's interconnect share) and ``cost.storage_usd_per_tb``.
       [epoch-training-cost-trends]
    """
    cst = plan.cost
    per_node = float(node_capex_usd(cst["server_price_usd"], network_fraction(plan, result)))
    nodes = result["cluster"]["nodes"]
    storage_usd_per_node = result["storage"]["capacity_tb"] * cst["storage_usd_per_tb"] / nodes
    out, before = [], 0.0
    for phase in result["facility"]["growth"]:
        added = float(phase["servers"]) - before
        before = float(phase["servers"])
        out.append({"year": phase["year"], "servers_added": added,
                    "capex_usd": added * (per_node + storage_usd_per_node)})
    return out


# --- the server price --------------------------------------------------------------------

#: what each kind of server price is, in words
PRICE_KIND_WORDS = {"list": "list price", "street": "street price", "volume": "volume price",
                    "estimate": "analyst's estimate"}


def server_price_used(plan) -> ServerPrice | None:
    """The dated catalog price (``server_prices.csv``) the plan's server price is, or None when the plan
    gives its own price (or the catalog has none)."""
    cst = plan.cost
    price = pick_server_price(plan.catalog, plan.server.id, cst["buyer_profile"], cst.get("purchase_date"),
                              cst["hardware_condition"])
    return price if price is not None and cst.get("server_price_usd") == price.price_usd else None


def server_price_basis(plan) -> tuple[str | None, str | None, str | None]:
    """(kind in words, date, source ids) of the plan's server price; the kind says when a list price or an
    estimate stands in for a street or volume price, and when a new price stands in for a used one."""
    cst = plan.cost
    if cst.get("server_price_usd") is None:
        return None, None, None
    used = server_price_used(plan)
    if used is None:
        if cst["server_price_usd"] == plan.server.price_usd:
            return "catalog price", plan.server.price_as_of, plan.server.sources
        return "given in the plan", None, None
    words = PRICE_KIND_WORDS[used.kind]
    if used.condition == "used":
        words = f"used, {words}"
    elif cst["hardware_condition"] == "used":
        words += " of a new server (no used price published)"
    if used.kind in ("list", "estimate"):
        words += " (no street or volume price published)"
    return words, used.as_of, used.sources


# --- the step --------------------------------------------------------------------------


def step(plan, result: Mapping[str, Any]):
    """The ``cost`` record: renting and owning, breakeven, hybrid, sensitivity and growth."""
    cst = plan.cost
    x = inputs(plan, result)
    price, pricing_used = offer_price(plan.cloud, cst["pricing"])
    has_cloud = price is not None
    has_server_price = cst.get("server_price_usd") is not None
    tornado = sensitivity_tco(x) if has_cloud and has_server_price else None
    # the tornado's row 0 is the plan's own inputs (utilisation <= 1 and PUE >= 1 by the plan's rules): the
    # same numbers as tco(x), without a call of its own
    out = _first_row(tornado[1]) if tornado else tco(x)
    if has_cloud and plan.kind != "inference":
        out["cloud_run_usd"] = committed_run_usd(plan, x, pricing_used)
    s = {k: _scalar(v) for k, v in out.items() if not isinstance(v, dict)}
    price_kind, price_as_of, price_source = server_price_basis(plan)
    c = {
        "cloud_usd": s["cloud_usd"] if has_cloud else None,
        "onprem_usd": s["onprem_usd"] if has_server_price else None,
        "cloud_usd_per_gpu_hour": s_or_none(x["cloud_usd_per_gpu_hour"]) if has_cloud else None,
        "onprem_usd_per_gpu_hour": s["onprem_usd_per_gpu_hour"] if has_server_price else None,
        "breakeven_months": s["breakeven_months"] if has_cloud and has_server_price else None,
        "breakeven_utilisation": s["breakeven_utilisation"] if has_cloud and has_server_price else None,
        # extra keys
        "cloud": plan.cloud.id if plan.cloud else None,
        "pricing": cst["pricing"],
        "pricing_used": pricing_used if has_cloud else None,
        "run_basis": (commitment_basis(pricing_used, bool(cst.get("capacity_reused")), plan.kind)
                      if has_cloud and plan.kind != "inference" else None),
        "cloud_usd_per_hr": price,
        "price_source": plan.cloud.sources if plan.cloud else None,
        "price_as_of": plan.cloud.as_of if plan.cloud else None,
        "server_price_usd": cst.get("server_price_usd"),
        "server_price_as_of": price_as_of,
        "server_price_source": price_source,
        "server_price_kind": price_kind,
        "buyer_profile": cst["buyer_profile"],
        "hardware_condition": cst["hardware_condition"],
        "cost_of_capital": cst["cost_of_capital"],
        "owned_per_gpu_hour": ({k: _scalar(v) for k, v in out["owned_per_gpu_hour"].items()}
                               if has_server_price else None),
        "network_cost_fraction": x["network_fraction"],
        "network_cost_basis": (network_cost_basis(x["network_fraction"], cst.get("network_cost_fraction") is not None)
                               if has_server_price else None),
        "facility_model": cst["facility_model"],
        "capex_usd": s["capex_usd"] if has_server_price else None,
        "capex": {k: _scalar(v) for k, v in out["capex"].items()} if has_server_price else None,
        "opex_usd_per_year": s["opex_usd_per_year"] if has_server_price else None,
        "opex": {k: _scalar(v) for k, v in out["opex"].items()},
        "owned_usd_per_gpu_hour_full": s["owned_usd_per_gpu_hour_full"] if has_server_price else None,
        "cloud_usd_per_month": s["cloud_usd_per_month"] if has_cloud else None,
        "onprem_opex_usd_per_month": s["onprem_opex_usd_per_month"],
        "onprem_usd_per_month": (s["onprem_usd"] / (cst["years"] * U.MONTHS_PER_YEAR)
                                 if has_server_price and s["onprem_usd"] is not None and cst["years"] else None),
        "cloud_run_usd": s["cloud_run_usd"] if has_cloud else None,
        "run_paid_in_full": (bool(paid_in_full(x["work_gpu_hours"] * x["rented_gpus"] / x["gpus"], x["rented_gpus"],
                                               pricing_used, bool(cst.get("capacity_reused"))))
                             if has_cloud and plan.kind != "inference" and math.isfinite(x["work_gpu_hours"])
                             else None),
        "onprem_run_usd": s["onprem_run_usd"] if has_server_price else None,
        "years": cst["years"],
        "utilisation": cst["utilisation"],
        "monthly": None, "hybrid_usd": None, "hybrid_owned_fraction": None,
        "hybrid_best_owned_fraction": None, "hybrid_best_usd": None,
        "sensitivity": None, "usd_per_million_tokens": None, "usd_per_million_tokens_onprem": None,
        "growth_capex": growth_capex(plan, result) if has_server_price else None,
    }
    if has_cloud and has_server_price:
        c["monthly"] = monthly_curves(out["capex_usd"], out["onprem_opex_usd_per_month"],
                                      out["cloud_usd_per_month"], cst["years"])
        # the plan's owned share and a grid of shares in one vectorised call (the plan's is the last), each
        # rounded to whole servers
        shares = whole_server_share(np.append(np.linspace(0.0, 1.0, 21), cst["hybrid_owned_fraction"]),
                                    x["servers"])
        h = hybrid_usd(repeated(x, len(shares)), shares)
        c["hybrid_owned_fraction"], c["hybrid_usd"] = float(shares[-1]), _scalar(h[-1])
        best = int(np.nanargmin(h[:-1]))
        c["hybrid_best_owned_fraction"], c["hybrid_best_usd"] = float(shares[best]), float(h[best])
        c["sensitivity"] = sensitivity(plan, result, x=x, tornado=tornado)
    c.update(capacity_basis(plan, result, x, pricing_used if has_cloud else None, has_server_price))
    c.update({"prefill_share": None, "usd_per_million_input_tokens": None, "usd_per_million_output_tokens": None,
              "usd_per_million_input_tokens_onprem": None, "usd_per_million_output_tokens_onprem": None,
              "api_prices": None})
    if plan.kind == "inference":
        months = cst["years"] * U.MONTHS_PER_YEAR
        inf = result["inference"]
        share = _scalar(prefill_share(plan.workload["prompt_tokens"], plan.workload["output_tokens"],
                                      inf.get("prefill_tokens_per_s_per_gpu") or np.nan,
                                      inf.get("decode_tokens_per_s_per_gpu") or np.nan))
        c["prefill_share"] = share
        if has_cloud and s["cloud_usd"] is not None:
            # the month's bill: the rate per month (a reservation's whole terms are billed in cloud_usd)
            month = s["cloud_usd_per_month"]
            c["usd_per_million_tokens"] = usd_per_million_tokens(plan, month)
            if share is not None:
                c["usd_per_million_input_tokens"], c["usd_per_million_output_tokens"] = \
                    split_usd_per_million_tokens(plan, month, share)
        if has_server_price and s["onprem_usd"] is not None:
            c["usd_per_million_tokens_onprem"] = usd_per_million_tokens(plan, s["onprem_usd"] / months)
            if share is not None:
                c["usd_per_million_input_tokens_onprem"], c["usd_per_million_output_tokens_onprem"] = \
                    split_usd_per_million_tokens(plan, s["onprem_usd"] / months, share)
        c["api_prices"] = api_prices(plan) or None
    return record_of("cost", c)


def api_prices(plan) -> list[dict]:
    """Published API prices of the plan's model (``api_prices.csv``), cheapest first: ``{provider,
    offering, input_usd_per_mtok, output_usd_per_mtok, usd_per_mtok_at_plan_mix, precision, as_of,
    status, sources}``; ``usd_per_mtok_at_plan_mix`` is the price of a million tokens at the plan's prompt and
    output tokens per request [USD/million tokens], the figure to set beside ``usd_per_million_tokens``;
    ``status`` says whether the price was read on the provider's page (published) or second-hand (secondary)."""
    w = plan.workload
    p, o = w.get("prompt_tokens") or 0, w.get("output_tokens") or 0
    rows = []
    for a in plan.catalog.api_prices.values():
        if a.model != plan.model.id:
            continue
        mix = (a.input_usd_per_mtok * p + a.output_usd_per_mtok * o) / (p + o) if p + o else None
        rows.append({"provider": a.provider, "offering": a.offering, "input_usd_per_mtok": a.input_usd_per_mtok,
                     "output_usd_per_mtok": a.output_usd_per_mtok, "usd_per_mtok_at_plan_mix": mix,
                     "precision": a.precision, "as_of": a.as_of, "status": a.status, "sources": a.sources})
    return sorted(rows, key=lambda r: (r["usd_per_mtok_at_plan_mix"] or 0.0, r["provider"]))


def api_against_own(result: Mapping[str, Any]) -> tuple[list[dict], dict[str, float]]:
    """A serving result's published API prices that have a price at the plan's mix, cheapest first
    (``cost.api_prices``), and the plan's own cost per million tokens by side, ``{"renting": ..., "owning": ...}``
    (the sides priced) [USD/million tokens]: what the ``api-cheaper`` finding and the recommendation weigh."""
    apis = [r for r in get_path(result, "cost.api_prices") or [] if r.get("usd_per_mtok_at_plan_mix")]
    own = {side: float(v) for side, key in (("renting", "cost.usd_per_million_tokens"),
                                            ("owning", "cost.usd_per_million_tokens_onprem"))
           if isinstance(v := get_path(result, key), (int, float)) and math.isfinite(v) and v > 0}
    return apis, own


def api_below(api_usd: float, own_usd: float) -> bool:
    """Whether an API price per million tokens is below the plan's own by more than the figures' rounding: $1.05
    against $1.05 (a 0.5% gap) is not below.

    >>> api_below(1.046, 1.054), api_below(0.95, 1.054)
    (False, True)
    """
    return api_usd < own_usd and format_value(api_usd, "usd_rate") != format_value(own_usd, "usd_rate")


#: a scale-up domain this large is a rack of NVLink-joined trays (GB200/GB300 NVL72, NVL36), not one server [GPU]
RACK_SCALE_GPUS = 36


def network_fraction(plan, result) -> float:
    """The interconnect's share of the cluster's cost [-]: the plan's, else Epoch AI's 19% where a fabric joins the
    servers, and none for one server (or rack) with no fabric switches, whose network is inside its price.
    [epoch-training-cost-trends]"""
    given = plan.cost.get("network_cost_fraction")
    if given is not None:
        return float(given)
    return A.NETWORK_COST_FRACTION if (result.get("network") or {}).get("switches") else 0.0


def network_cost_basis(fraction: float, given: bool) -> str:
    """How the network's capex is estimated, in words: its share of the cluster's cost, the plan's own figure or
    Epoch AI's estimate, or none for one server without a fabric. [epoch-training-cost-trends]

    >>> network_cost_basis(0.19, False), network_cost_basis(0.25, True)
    ("19% of the cluster's cost (Epoch AI's estimate)", "25% of the cluster's cost (the plan's figure)")
    >>> network_cost_basis(0.0, False)
    'none: no fabric switches join servers (the front-end and storage network is not counted)'
    """
    if given:
        return f"{fraction:.0%} of the cluster's cost (the plan's figure)"
    if not fraction:
        return "none: no fabric switches join servers (the front-end and storage network is not counted)"
    return f"{fraction:.0%} of the cluster's cost (Epoch AI's estimate)"


def per_gpu_unit(form_factor: str, scale_up: int) -> str:
    """How an offer priced per GPU of a larger machine is sold, in words: per chip of a TPU slice, per GPU of a
    rack-scale NVLink domain or of a server.

    >>> per_gpu_unit("sxm", 8), per_gpu_unit("superchip", 72)
    ('priced per GPU (on 8-GPU machines)', 'priced per GPU (on 72-GPU racks)')
    >>> per_gpu_unit("tpu", 8960)
    'priced per chip (in slices of up to 8,960 chips)'
    """
    if form_factor == "tpu":
        return f"priced per chip (in slices of up to {scale_up:,} chips)"
    return f"priced per GPU (on {scale_up}-GPU {'racks' if scale_up >= RACK_SCALE_GPUS else 'machines'})"


def owned_gpus(cluster: Mapping) -> int:
    """GPUs owning buys for a cluster: its whole servers (or racks) [GPU]."""
    return int((cluster.get("nodes") or 0) * (cluster.get("gpus_per_node") or 0))


def capacity_basis(plan, result, x, pricing_used, has_server_price) -> dict[str, Any]:
    """The equal-capacity basis of renting and owning: instances and GPUs rented, GPUs owned, hours billed
    a month, and each side's basis in words ("2 instances of 8 H100 SXM (16 GPUs), 730 h a month,
    reserved 1 year, billed for the term"; an offer priced per GPU of a larger machine: "12 H100 SXM priced per
    GPU (on 8-GPU machines), ...")."""
    cl = result["cluster"]
    gpu = plan.gpu.name
    owned = owned_gpus(cl)
    out = {"cloud_instances": None, "rented_gpus": None, "owned_gpus": float(owned) if owned else None,
           "billed_hours_per_month": None, "cloud_basis": None, "onprem_basis": None}
    u = plan.cost["utilisation"]
    if pricing_used is not None and plan.cloud is not None:
        per = plan.cloud.gpus
        rented = x["rented_gpus"]
        instances = rented / per
        term = COMMITMENT_YEARS.get(pricing_used)
        hours = U.HOURS_PER_MONTH * (1.0 if term else u)
        noun = "instance" if instances == 1 else "instances"
        what = (f"{rented:,.0f} {gpu} {per_gpu_unit(plan.gpu.form_factor, plan.cloud.scale_up)}"
                if per == 1 and plan.cloud.scale_up > 1 else
                f"{instances:,.0f} {noun} of {per} {gpu} ({rented:,.0f} GPUs)")
        how = (f"{PRICING_LABELS[pricing_used].lower()}, billed for the term" if term else
               f"{PRICING_LABELS[pricing_used].lower()}, billed for the hours used ({u:.0%} of hours)")
        if pricing_used == "spot":
            how += ", work lost to reclaims included"
        out.update({"cloud_instances": float(instances), "rented_gpus": float(rented),
                    "billed_hours_per_month": float(hours),
                    "cloud_basis": f"{what}, {hours:,.0f} h a month, {how}"})
    if has_server_price and owned:
        nodes = cl["nodes"]
        out["onprem_basis"] = (f"{nodes:,.0f} {'server' if nodes == 1 else 'servers'} of {cl['gpus_per_node']} {gpu} "
                               f"({owned:,.0f} GPUs), owned {plan.cost['years']:g} years, every hour "
                               f"({U.HOURS_PER_MONTH:,.0f} h a month), in use {u:.0%} of hours")
    return out


def _first_row(out: dict[str, Any]) -> dict[str, Any]:
    """Row 0 of a vectorised :func:`tco` result (nested parts too)."""
    return {k: _first_row(v) if isinstance(v, dict) else v[0] for k, v in out.items()}


def s_or_none(v):
    return _scalar(v)
