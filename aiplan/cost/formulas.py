"""Step 4: what it costs, cloud vs on-prem; breakeven, hybrid and sensitivity.

Cost model (all formulas vectorised, one function each):

* **Cloud**: the catalog offer's price per instance-hour for the plan's pricing
  (on-demand, reserved 1y/3y, spot), divided by GPUs per instance. Spot adds the
  work lost to reclaims (half a checkpoint interval plus the restart per reclaim).
  Rentals are billed in whole instances (:func:`rented_gpus`: 12 GPUs on 8-GPU instances bill
  16). Over ``years`` the cloud bill is rented GPUs x hours billed x price: on-demand and spot
  bill the hours used (the plan's utilisation), a reservation every hour of its whole terms
  (:func:`billed_share`, :func:`billed_years`), as the provider bills them.
* **Equal capacity**: renting and owning are compared on the same GPUs and hours: the rented
  fleet is whole instances, the owned one whole servers (both hold the plan's GPUs), and both
  are counted over the same ``years``.
* **On-prem**, for a buyer profile (``cost.buyer_profile``: hyperscaler, large neocloud or
  enterprise, ``data/buyer_profiles.csv``): capex = servers (the dated price the buyer pays,
  ``data/server_prices.csv``: volume or street, the list price as the flagged fallback; used
  prices for used servers) + network (the interconnect share of cluster cost, Epoch AI's 19%
  [epoch-training-cost-trends], since the catalog has no switch prices) + storage (capacity x
  $/TB) + facility build ($/MW of IT load; colocation instead is opex per kW of capacity).
  Opex = power (the IT power drawn x PUE x $/kWh: working hours at the metered working draw,
  the rest at rest) + colocation + staff + maintenance and support + interest (the
  capital-recovery payment at the buyer's cost of capital less straight-line depreciation). All
  capex is written off over ``years`` (the buyer's depreciation life; no residual value).
  ``owned_per_gpu_hour`` breaks the owning cost per GPU-hour at full use into these parts.
* ``onprem_usd_per_gpu_hour`` is per *useful* GPU-hour (at the plan's
  utilisation), so it falls as utilisation rises.
* **Breakeven**: u* = fixed cost per owned GPU-hour / (cloud price - energy
  per GPU-hour); months = capex / (cloud per month - opex per month).
  The reference calculation (:func:`breakeven_table`, tests/test_cost.py), derived from
  published prices and costs (sources in :func:`owned_usd_per_gpu_hour`), computes u*
  with *every* cost per owned hour (energy included); :func:`breakeven_utilisation`
  with ``energy=0`` reproduces it.

All prices come from the dated catalog; ``cost.price_source`` / ``price_as_of``
say which price was used.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..cluster.reliability import goodput
from ..core import units as U
from ..core.assumptions import CAPACITY_RISK_GPUS

#: each way of paying, as a client reads it
PRICING_LABELS = {"on-demand": "On-demand", "reserved-1y": "Reserved 1 year", "reserved-3y": "Reserved 3 years",
                  "spot": "Spot", "buy": "Buy"}

#: cost drivers varied by :func:`sensitivity` (name -> input key)
DRIVERS = {
    "gpu_price": "server_price_usd",
    "cloud_price": "cloud_usd_per_gpu_hour",
    "utilisation": "utilisation",
    "power_price": "usd_per_kwh",
    "pue": "pue",
    "years": "years",
    "mfu": "mfu_scale",
}
#: each driver in words
DRIVER_LABELS = {"gpu_price": "server price", "cloud_price": "cloud price", "utilisation": "utilisation",
                 "power_price": "electricity price", "pue": "PUE", "years": "ownership period", "mfu": "MFU"}
SENSITIVITY_STEP = 0.20


# --- cloud ------------------------------------------------------------------------


def usd_per_gpu_hour(instance_usd_per_hr, gpus_per_instance):
    """Price per GPU-hour of a cloud instance.

    Parameters
    ----------
    instance_usd_per_hr : array_like
        [USD/h]
    gpus_per_instance : array_like

    Returns
    -------
    array_like
        [USD/GPU-h]

    References
    ----------
    .. [1] Epoch AI, training-cost-trends "Hardware prices.csv", row Amazon Web Services
       p5.48xlarge (Wayback copy of the AWS on-demand price page, 2025-03-17): $98.32 per
       instance-hour -> $12.29/GPU-h. [epoch-hardware-prices]

    Examples
    --------
    >>> float(usd_per_gpu_hour(98.32, 8))
    12.29
    """
    return np.asarray(instance_usd_per_hr) / np.asarray(gpus_per_instance)


#: commitment term of each pricing [years] (pay-per-hour pricings have none)
COMMITMENT_YEARS = {"reserved-1y": 1.0, "reserved-3y": 3.0}


def whole_instances(gpus, gpus_per_instance):
    """Instances rented to hold ``gpus`` GPUs: a cloud rents whole instances, so round up [-].

    References
    ----------
    .. [1] AWS bills an EC2 instance per instance-hour whatever share of its GPUs a job uses; the
       p5.48xlarge is sold only as 8 H100 (the catalog's ``gpus`` column). [tsaol-aws-gpu]

    Examples
    --------
    >>> int(whole_instances(12, 8)), int(whole_instances(16, 8)), int(whole_instances(3, 1))
    (2, 2, 3)
    """
    return np.ceil(np.asarray(gpus, dtype=float) / np.asarray(gpus_per_instance) - 1e-9)


def rented_gpus(gpus, gpus_per_instance):
    """GPUs billed when renting ``gpus`` on instances of ``gpus_per_instance``: whole instances [GPU].

    Examples
    --------
    >>> float(rented_gpus(12, 8)), float(rented_gpus(10, 8)), float(rented_gpus(848, 8))
    (16.0, 16.0, 848.0)
    """
    return whole_instances(gpus, gpus_per_instance) * np.asarray(gpus_per_instance, dtype=float)


def billed_share(pricing, utilisation):
    """Share of the hours a rental is billed for [-]: a reservation every hour of its term (1), on-demand
    and spot the hours used (the plan's utilisation).

    Examples
    --------
    >>> float(billed_share("reserved-3y", 0.6)), float(billed_share("on-demand", 0.6))
    (1.0, 0.6)
    """
    u = np.asarray(utilisation, dtype=float)
    return np.ones_like(u) if pricing in COMMITMENT_YEARS else u


def billed_years(years, term_years):
    """Years a rental is billed over a horizon of ``years``: whole terms of a reservation (``term_years``
    > 0), else the horizon [years].

    Examples
    --------
    >>> float(billed_years(3.0, 1.0)), float(billed_years(1.0, 3.0)), float(billed_years(4.0, 3.0))
    (3.0, 3.0, 6.0)
    >>> float(billed_years(2.5, 0.0))
    2.5
    """
    y, t = np.asarray(years, dtype=float), np.asarray(term_years, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(t > 0, t * np.ceil(y / np.where(t > 0, t, 1.0) - 1e-9), y)


def committed_gpu_hours(used_gpu_hours, gpus, pricing, reused):
    """GPU-hours a run pays for under a pricing [GPU-h].

    On-demand and spot pay the hours used. A reservation used for one run pays its whole term
    (``gpus`` x term) unless the capacity is reused after the run, when the run pays the hours it
    uses (its share); a run longer than the term pays its hours either way.
    """
    years = COMMITMENT_YEARS.get(pricing)
    if years is None or reused:
        return used_gpu_hours
    return np.maximum(used_gpu_hours, np.asarray(gpus, dtype=float) * years * U.HOURS_PER_YEAR)


def paid_in_full(used_gpu_hours, gpus, pricing, reused):
    """Whether a run pays a reservation's whole term rather than the hours it uses [bool].

    Then the run's cloud cost does not depend on how long it takes (the Monte Carlo and the
    options explorer treat it as a fixed cost).

    Examples
    --------
    A 3-year reservation of 1,024 GPUs for a 500,000 GPU-hour run pays 26.9 million GPU-hours:

    >>> bool(paid_in_full(5e5, 1024, "reserved-3y", reused=False))
    True
    >>> bool(paid_in_full(5e5, 1024, "reserved-3y", reused=True)), bool(paid_in_full(5e5, 1024, "on-demand", False))
    (False, False)
    """
    return np.asarray(committed_gpu_hours(used_gpu_hours, gpus, pricing, reused)) > np.asarray(used_gpu_hours)


def committed_run_usd(plan, x, pricing_used):
    """Cloud cost of a training run at its pricing, the reservation's commitment included [USD].

    ``x`` are :func:`inputs` (scalars or arrays, as :func:`tco` takes them). The run rents whole
    instances (``x["rented_gpus"]``, default the plan's GPUs) for its wall-clock hours, so the
    GPU-hours billed are its GPU-hours x rented / used GPUs; a reservation for one run pays its term.
    """
    reused = bool(plan.cost.get("capacity_reused"))
    rented = x.get("rented_gpus", x["gpus"])
    work = np.asarray(x["work_gpu_hours"]) / np.asarray(x.get("mfu_scale", 1.0))  # the tornado's MFU moves the hours
    used = work * np.asarray(rented) / np.asarray(x["gpus"])
    return committed_gpu_hours(used, rented, pricing_used, reused) * x["cloud_usd_per_gpu_hour"]


#: capacity risk of each way of getting GPUs, in words: a fleet above :data:`CAPACITY_RISK_GPUS` rented on
#: demand or on spot is "high"; reservations and purchases are contracted
CAPACITY_RISK_WORDS = {"high": "high", "low": "low", "contracted": "none (contracted)"}


def capacity_risk(pricing, gpus) -> str:
    """Risk that the GPUs are not there when needed: ``high`` for an on-demand or spot fleet above
    :data:`~aiplan.core.assumptions.CAPACITY_RISK_GPUS` GPUs, ``low`` for a smaller one, ``contracted``
    for a reservation or a purchase.

    References
    ----------
    .. [1] Amazon EC2 User Guide, "Capacity Blocks for ML": guaranteed short-term GPU capacity comes in
       blocks of at most 64 instances (512 GPUs of 8-GPU instances). [aws-ec2-capacity-blocks-guide]

    Examples
    --------
    >>> capacity_risk("on-demand", 17280), capacity_risk("spot", 64), capacity_risk("reserved-1y", 17280)
    ('high', 'low', 'contracted')
    """
    if pricing in COMMITMENT_YEARS or pricing == "buy":
        return "contracted"
    return "high" if float(gpus) > CAPACITY_RISK_GPUS else "low"


def served_tokens_per_month(plan) -> float:
    """Tokens a serving plan handles per month (prompt and output) at its planned utilisation [tokens]."""
    w = plan.workload
    return (w["requests_per_s"] * (w["prompt_tokens"] + w["output_tokens"]) * U.S_PER_HOUR * U.HOURS_PER_MONTH
            * plan.cost["utilisation"])


def usd_per_million_tokens(plan, usd_per_month) -> float:
    """Cost per million tokens: the month's cost of the fleet divided by the tokens it serves in the month
    at the planned load, prompt (input) and output tokens counted alike [USD/million tokens].

    Tokens per month = requests per second x (prompt + output tokens) x seconds per month x the
    planned utilisation (the share of hours the service runs at that load). The cost is the whole
    fleet's (idle capacity included), so the figure falls as the fleet is used more. API providers
    price input and output separately; :func:`split_usd_per_million_tokens` gives the two.
    """
    return usd_per_month / served_tokens_per_month(plan) * 1e6


def prefill_share(prompt_tokens, output_tokens, prefill_tokens_per_s_per_gpu, decode_tokens_per_s_per_gpu):
    """Share of the serving fleet's GPU time that goes to prefill (reading the prompt) [-].

    A request costs prompt / prefill speed GPU-seconds of prefill and output / decode speed
    GPU-seconds of decode, both speeds per GPU at the operating point of the serving engine
    (:mod:`aiplan.model.serving`: prefill tokens per GPU-second, output tokens per GPU-second at the
    operating batch). The fleet's cost is split between input and output tokens in this ratio.

    Examples
    --------
    2,000 prompt tokens at 8,000 tokens/s per GPU and 500 output tokens at 1,000 tokens/s per GPU:
    0.25 s of prefill, 0.5 s of decode, so a third of the GPU time is prefill.

    >>> round(float(prefill_share(2000, 500, 8000.0, 1000.0)), 4)
    0.3333
    """
    p = np.asarray(prompt_tokens, dtype=float) / np.asarray(prefill_tokens_per_s_per_gpu, dtype=float)
    d = np.asarray(output_tokens, dtype=float) / np.asarray(decode_tokens_per_s_per_gpu, dtype=float)
    return p / (p + d)


def split_usd_per_million_tokens(plan, usd_per_month, share_prefill) -> tuple[float, float]:
    """(input, output) cost per million tokens [USD/million tokens]: the month's cost split by GPU time
    (``share_prefill`` to prefill, :func:`prefill_share`), each part divided by its tokens.

    At the planned mix (prompt and output tokens per request) input x prompt + output x output tokens
    equals :func:`usd_per_million_tokens` x (prompt + output tokens).
    """
    w = plan.workload
    requests = w["requests_per_s"] * U.S_PER_HOUR * U.HOURS_PER_MONTH * plan.cost["utilisation"]
    usd_in = usd_per_month * share_prefill / (requests * w["prompt_tokens"]) * 1e6
    usd_out = usd_per_month * (1.0 - share_prefill) / (requests * w["output_tokens"]) * 1e6
    return float(usd_in), float(usd_out)


def commitment_basis(pricing, reused, kind="pretrain") -> str:
    """The basis of a run's cost under a pricing, in words."""
    if kind == "inference":
        if pricing in COMMITMENT_YEARS:
            return f"whole instances reserved for every hour of a {COMMITMENT_YEARS[pricing]:.0f}-year term, per month"
        return {"buy": "owned servers: capex over the ownership period plus operating cost, per month"}.get(
            pricing, "whole instances rented for the hours used at the planned utilisation, per month")
    if pricing == "buy":
        return ("owned cluster, reused after the run: the run's share of capex and operating cost" if reused else
                "cluster bought for this run: the whole capex plus the run's operating cost")
    years = COMMITMENT_YEARS.get(pricing)
    if years is None:
        return "pay per hour used"
    term = f"{years:.0f}-year reservation"
    return (f"share of a {term} (capacity reused after the run)" if reused else
            f"the whole {term} (paid in full for one run)")


def spot_goodput(instances, reclaims_per_instance_month, checkpoint_interval_min, restart_min):
    """Share of rented spot time that makes progress, after reclaims.

    A synchronous job stops when any of its instances is reclaimed: reclaims are failures with
    a mean time between them of ``M = h_month / (n r)``, and the goodput is the hardware-failure
    model's (:func:`aiplan.cluster.reliability.goodput`, Daly) with no checkpoint-write term (the
    hardware goodput already pays the writes). To first order each reclaim loses half a checkpoint
    interval of work plus the restart time:

    .. math:: g \\approx 1 - (\\tau/2 + R)/M

    Parameters
    ----------
    instances : array_like
        instances in the job [-]
    reclaims_per_instance_month : array_like
        [1/month] (judgement default within the AWS Spot Instance Advisor's "Frequency of
        interruption" bands [aws-spot-instance-advisor])
    checkpoint_interval_min : array_like [min]
    restart_min : array_like [min]

    Returns
    -------
    array_like
        [-], in (0, 1]

    References
    ----------
    .. [1] Derived from the lost-work model of Young, "A first order approximation to the
       optimum checkpoint interval", CACM 1974, and Daly, "A higher order estimate of the
       optimum checkpoint interval for restart dumps", FGCS 2006 (first-order cost function):
       wasted fraction ~ tau/(2M) + R/M. [doi-10.1145-361147.361115;doi-10.1016-j.future.2004.11.016]
    """
    rate_per_s = np.asarray(instances) * np.asarray(reclaims_per_instance_month) / U.HOURS_PER_MONTH / U.S_PER_HOUR
    mtbf_s = np.where(rate_per_s > 0, 1.0 / np.where(rate_per_s > 0, rate_per_s, 1.0), np.inf)
    return goodput(np.asarray(checkpoint_interval_min, dtype=float) * U.S_PER_MIN, 0.0, mtbf_s,
                   np.asarray(restart_min, dtype=float) * U.S_PER_MIN)


def cloud_total_usd(usd_per_gpu_hour_, gpu_hours):
    """Cloud bill for GPU-hours used (linear in hours).

    Parameters
    ----------
    usd_per_gpu_hour_ : array_like
        [USD/GPU-h]
    gpu_hours : array_like
        [GPU-h]

    Returns
    -------
    array_like
        [USD]

    References
    ----------
    .. [1] Pay-per-use list pricing (price x hours); each price cites its own source in
       data/clouds.csv.
    """
    return np.asarray(usd_per_gpu_hour_) * np.asarray(gpu_hours)


# --- on-prem capex and opex ----------------------------------------------------------


def network_capex_usd(servers_usd, network_fraction):
    """Interconnect capex as a share f of total cluster cost: servers x f / (1 - f).

    Parameters
    ----------
    servers_usd : array_like
        [USD]
    network_fraction : array_like
        interconnect share of cluster cost [-]

    Returns
    -------
    array_like
        [USD]

    References
    ----------
    .. [1] Epoch AI, training-cost-trends ``parameters.py``:
       CLUSTER_INTERCONNECT_COST_FRACTION = 0.19. [epoch-training-cost-trends]
    .. [2] Derived: $270,000 / 8 / (1 - 0.19); DGX H100 "at around $270,000" (Epoch AI
       hardware prices, row 2023-05-29, quoting SemiAnalysis). [epoch-hardware-prices]

    Examples
    --------
    >>> round(float(network_capex_usd(270000 / 8, 0.19) + 270000 / 8))  # ~ $41.7k per GPU, see [2]
    41667
    """
    f = np.asarray(network_fraction)
    return np.asarray(servers_usd) * f / (1.0 - f)


def node_capex_usd(server_price_usd, network_fraction):
    """Capex of one server with its share of the interconnect [USD].

    References
    ----------
    .. [1] As :func:`network_capex_usd` (Epoch AI, parameters.py). [epoch-training-cost-trends]
    """
    return np.asarray(server_price_usd) / (1.0 - np.asarray(network_fraction))


def build_capex_usd(it_kw, usd_per_mw):
    """Facility build cost from IT capacity.

    Parameters
    ----------
    it_kw : array_like
        [kW]
    usd_per_mw : array_like
        [USD/MW] (judgement: secondary sources quote $8-15M/MW)

    Returns
    -------
    array_like
        [USD]

    References
    ----------
    .. [1] (judgement: the default 11.5 M$/MW is the midpoint of $8-15M per MW quoted by
       blogs and portfolio pages; no primary source.)
    """
    return np.asarray(it_kw) / U.KW_PER_MW * np.asarray(usd_per_mw)


def power_usd_per_year(it_kw, pue, usd_per_kwh, utilisation):
    """Electricity bill: IT power x PUE x price, drawn while the cluster works.

    Parameters
    ----------
    it_kw : array_like
        [kW]
    pue : array_like
        [-]
    usd_per_kwh : array_like
        [USD/kWh]
    utilisation : array_like
        share of hours at full power [-] (1 = the reference's "100% utilisation")

    Returns
    -------
    array_like
        [USD/yr]

    References
    ----------
    .. [1] Derived: 10.2 kW / 8 = 1.275 kW per H100 (NVIDIA RA-11333-001) x PUE 1.3
       (Epoch AI energy.py, quoting SemiAnalysis) x $0.0806/kWh -> $0.13/GPU-h.
       [nvidia-ra-11333-001;epoch-energy-py]
    .. [2] U.S. EIA, Electric Power Monthly, Table 5.6.A, industrial, 2023: $0.0806/kWh (as
       tabulated in Epoch AI energy.py). [eia-epm-table-5-6-a;epoch-energy-py]
    """
    return (np.asarray(it_kw) * np.asarray(pue) * np.asarray(usd_per_kwh) * U.HOURS_PER_YEAR
            * np.asarray(utilisation))


def colocation_usd_per_year(it_kw, usd_per_kw_month):
    """Colocation rent per kW of IT load.

    References
    ----------
    .. [1] CBRE, "North America Data Center Trends H2 2024", "State of the Market":
       $184.06/kW-month wholesale (250-500 kW, primary markets). [cbre-na-data-center-trends-h2-2024]
    """
    return np.asarray(it_kw) * np.asarray(usd_per_kw_month) * U.MONTHS_PER_YEAR


def staff_usd_per_year(servers, servers_per_engineer, usd_per_engineer_year):
    """Operations staff: servers / servers-per-engineer x cost of an engineer.

    References
    ----------
    .. [1] NAG, HPC Total Cost of Ownership (TCO) Calculator, parameter "Cost of a person
       per year", default $250,000. [nag-hpc-tco-calculator]
    .. [2] (judgement: the default 75 servers per engineer is the middle of "1 FTE per
       50-100 GPU servers" quoted by a blog; no primary source.)
    """
    return np.asarray(servers) / np.asarray(servers_per_engineer) * np.asarray(usd_per_engineer_year)


def maintenance_usd_per_year(hardware_capex_usd, fraction_per_year):
    """Maintenance/support as a yearly share of hardware capex.

    References
    ----------
    .. [1] Supercluster blog, "AI Supercluster: NVIDIA DGX Platform (DGX H100 hardware)",
       2024: DGX support ~20%/yr (a secondary source). [supercluster-dgx-h100]
    .. [2] (judgement: the reference calculation of :func:`breakeven_table` uses 10%/yr
       for ops and maintenance.)
    """
    return np.asarray(hardware_capex_usd) * np.asarray(fraction_per_year)


def support_usd_per_year(gpus, usd_per_gpu_year):
    """Support subscription: GPUs x price per GPU-year.

    Parameters
    ----------
    gpus : array_like
        [-]
    usd_per_gpu_year : array_like
        [USD/GPU-yr] (the buyer profile's: enterprise ~$4,500, NVIDIA AI Enterprise with support)

    Returns
    -------
    array_like
        [USD/yr]

    References
    ----------
    .. [1] Redress Compliance, "Negotiating with NVIDIA: A CIO Playbook": NVIDIA or its OEM partners
       "often try to add AI Enterprise at ~$4,500 per GPU per year" (a secondary source).
       [redresscompliance-nvidia]

    Examples
    --------
    >>> float(support_usd_per_year(1024, 4500))
    4608000.0
    """
    return np.asarray(gpus) * np.asarray(usd_per_gpu_year)


def capital_recovery_factor(rate, years):
    """Share of a purchase to pay each year to repay it, with interest, over its life.

    .. math:: CRF = \\frac{r}{1 - (1 + r)^{-n}} \\quad (1/n \\text{ at } r = 0)

    Parameters
    ----------
    rate : array_like
        cost of capital [1/yr]
    years : array_like
        depreciation life [yr]

    Returns
    -------
    array_like
        [1/yr]

    References
    ----------
    .. [1] The level annuity that repays a loan at rate r in n years (the capital recovery factor);
       the rates per buyer are in buyer_profiles.csv, e.g. CoreWeave's 11% GPU-backed delayed-draw
       term loan (10-Q, June 2025, Note 10). [coreweave-10q-2025q2-debt]

    Examples
    --------
    A server financed at 11% over 6 years costs 23.6% of its price a year (straight line: 16.7%):

    >>> round(float(capital_recovery_factor(0.11, 6)), 4), round(float(capital_recovery_factor(0.0, 6)), 4)
    (0.2364, 0.1667)
    """
    r = np.asarray(rate, dtype=float)
    n = np.asarray(years, dtype=float)
    charged = r > 1e-12  # below, interest is nil and the formula's 0/0 is straight line
    safe = np.where(charged, r, 1.0)
    return np.where(charged, safe / -np.expm1(-n * np.log1p(safe)), 1.0 / n)  # expm1/log1p: exact for small rates


def capital_usd_per_year(capex_usd, rate, years):
    """Interest on the purchase per year: the capital-recovery payment less straight-line depreciation.

    Parameters
    ----------
    capex_usd : array_like
        [USD]
    rate : array_like
        cost of capital [1/yr]
    years : array_like
        depreciation life [yr]

    Returns
    -------
    array_like
        [USD/yr]

    References
    ----------
    .. [1] As :func:`capital_recovery_factor`. [coreweave-10q-2025q2-debt]

    Examples
    --------
    >>> round(float(capital_usd_per_year(1e6, 0.11, 6)))
    69710
    """
    return np.asarray(capex_usd) * (capital_recovery_factor(rate, years) - 1.0 / np.asarray(years, dtype=float))


def owned_usd_per_gpu_hour(capex_usd_per_gpu, years, opex_usd_per_gpu_year):
    """Cost of owning one GPU per owned hour: straight-line capex + opex.

    Parameters
    ----------
    capex_usd_per_gpu : array_like
        [USD]
    years : array_like
        depreciation period [yr]
    opex_usd_per_gpu_year : array_like
        [USD/yr]

    Returns
    -------
    array_like
        [USD/GPU-h] per owned (not useful) hour

    References
    ----------
    .. [1] The reference calculation of :func:`breakeven_table` (~$2.1/GPU-h at 100%) is
       derived from DGX H100 $270k (Epoch AI hardware prices, quoting SemiAnalysis), 19%
       interconnect (Epoch AI parameters.py), 4 years, 10.2 kW / 8 per GPU (NVIDIA
       RA-11333-001), PUE 1.3 (Epoch AI energy.py), $0.0806/kWh (EIA EPM Table 5.6.A),
       $184.06/kW-month (CBRE H2 2024) and 10%/yr ops (judgement).
       [epoch-hardware-prices;epoch-training-cost-trends;nvidia-ra-11333-001;epoch-energy-py;eia-epm-table-5-6-a;cbre-na-data-center-trends-h2-2024]
    """
    return (np.asarray(capex_usd_per_gpu) / np.asarray(years) + np.asarray(opex_usd_per_gpu_year)) / U.HOURS_PER_YEAR


def breakeven_utilisation(fixed_usd_per_gpu_hour, cloud_usd_per_gpu_hour_, energy_usd_per_gpu_hour=0.0):
    """Utilisation above which owning is cheaper than renting.

    Owning costs F per owned hour plus E per used hour; renting costs c per used
    hour, so u* = F / (c - E). NaN when owning never wins (u* > 1 or c <= E).

    Parameters
    ----------
    fixed_usd_per_gpu_hour : array_like
        owned cost independent of use [USD/GPU-h]
    cloud_usd_per_gpu_hour_ : array_like
        [USD/GPU-h]
    energy_usd_per_gpu_hour : array_like
        cost per used GPU-hour at full power (0 = the reference's basis, which
        counts energy at 100% utilisation inside F) [USD/GPU-h]

    Returns
    -------
    array_like
        [-] or NaN

    References
    ----------
    .. [1] The reference calculation of :func:`breakeven_table` (derived, see
       :func:`owned_usd_per_gpu_hour`): u* = own cost / cloud price: ~17% vs $12.29, 31% vs
       $6.88, 44% vs $4.86, 71% vs $2.99, none vs ~$2. The prices: AWS p5 on-demand (Wayback
       2025-03-17 and the 2025 price files), GCP 3-year commitment, Lambda.
       [epoch-hardware-prices;tsaol-aws-gpu;epoch-training-cost-trends;eia-epm-table-5-6-a;cbre-na-data-center-trends-h2-2024]

    Examples
    --------
    >>> round(float(breakeven_utilisation(2.118, 12.29)), 2)
    0.17
    """
    margin = np.asarray(cloud_usd_per_gpu_hour_, dtype=float) - np.asarray(energy_usd_per_gpu_hour)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(margin > 0, np.asarray(fixed_usd_per_gpu_hour) / np.where(margin > 0, margin, 1.0), np.nan)
    return np.where(u <= 1.0, u, np.nan)


def breakeven_months(capex_usd, cloud_usd_per_month, opex_usd_per_month):
    """Months until cumulative on-prem cost (capex up front + opex) falls below cloud.

    .. math:: m^* = C / (c_{month} - o_{month})

    Parameters
    ----------
    capex_usd : array_like
        [USD]
    cloud_usd_per_month : array_like
        [USD/month]
    opex_usd_per_month : array_like
        [USD/month]

    Returns
    -------
    array_like
        [month] or NaN when cloud per month <= opex per month (never)

    References
    ----------
    .. [1] Briarwood, "What Is AI Infrastructure?", "AI Cloud Infrastructure vs.
       On-Premises Data Centers": "breakeven ... around 12-18 months of continuous usage"
       (a rule of thumb; tested by :func:`breakeven_table` and tests/test_cost.py).
       [seed-what-is-ai-infrastructure]
    """
    margin = np.asarray(cloud_usd_per_month, dtype=float) - np.asarray(opex_usd_per_month)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(margin > 0, np.asarray(capex_usd) / np.where(margin > 0, margin, 1.0), np.nan)


# --- the vectorised model ----------------------------------------------------------


def tco(x: dict[str, Any]) -> dict[str, Any]:
    """Cloud and on-prem totals from a dict of inputs (scalars or equal-shape arrays).

    Keys: gpus, servers, server_price_usd, network_fraction, storage_usd, it_kw
    (the whole cluster at full power: sizes colocation and a build), pue, usd_per_kwh,
    colo_usd_per_kw_month, build_usd_per_mw, build (bool), staff_usd_per_year,
    servers_per_engineer, maintenance_fraction, years, utilisation, cloud_usd_per_gpu_hour,
    work_gpu_hours (GPU-hours of the training run, or NaN), mfu_scale; optionally rented_gpus (GPUs
    billed renting: whole instances; default gpus) and term_years (the reservation's term, 0 = pay
    per hour used; default 0), busy_kw and
    idle_kw (IT power drawn while working and at rest; default it_kw and 0, the kit's earlier
    model), cost_of_capital (default 0), support_usd_per_gpu_year (default 0) and staff_servers
    (the servers the staffing rule counts, 8-GPU server equivalents; default servers).

    Returns totals over ``years`` [USD], per useful GPU-hour [USD/GPU-h], capex/opex parts, the
    owning cost per GPU-hour at full use and its parts (``owned_per_gpu_hour``), breakeven
    utilisation and months, and the run costs.

    References
    ----------
    .. [1] See the module docstring and :func:`owned_usd_per_gpu_hour` for the inputs' sources.
       [epoch-hardware-prices;epoch-training-cost-trends;eia-epm-table-5-6-a;cbre-na-data-center-trends-h2-2024;nag-hpc-tco-calculator]
    """
    a = {k: np.asarray(v, dtype=float) if not isinstance(v, (bool, np.bool_)) else v for k, v in x.items()}
    u, years, gpus = a["utilisation"], a["years"], a["gpus"]
    busy_kw = a.get("busy_kw", a["it_kw"])
    idle_kw = a.get("idle_kw", 0.0 * busy_kw)
    rate = a.get("cost_of_capital", 0.0 * u)
    servers_usd = a["servers"] * a["server_price_usd"]
    network_usd = network_capex_usd(servers_usd, a["network_fraction"])
    hardware = servers_usd + network_usd + a["storage_usd"]
    facility_usd = build_capex_usd(a["it_kw"], a["build_usd_per_mw"]) if x["build"] else 0.0 * hardware
    capex = hardware + facility_usd
    colo = 0.0 * hardware if x["build"] else colocation_usd_per_year(a["it_kw"], a["colo_usd_per_kw_month"])
    staff = staff_usd_per_year(a.get("staff_servers", a["servers"]), a["servers_per_engineer"], a["staff_usd_per_year"])
    maint = (maintenance_usd_per_year(hardware, a["maintenance_fraction"])
             + support_usd_per_year(gpus, a.get("support_usd_per_gpu_year", 0.0 * u)))
    capital = capital_usd_per_year(capex, rate, years)
    power_idle = power_usd_per_year(idle_kw, a["pue"], a["usd_per_kwh"], 1.0)
    power_work = power_usd_per_year(busy_kw - idle_kw, a["pue"], a["usd_per_kwh"], 1.0)
    power = power_idle + power_work * u
    fixed_year = colo + staff + maint + capital + power_idle
    opex = colo + staff + maint + capital + power
    onprem = capex + opex * years
    gpu_hours_year = gpus * U.HOURS_PER_YEAR
    owned_hours = gpu_hours_year * years
    onprem_gpu_h = onprem / (owned_hours * u)
    cloud_price = a["cloud_usd_per_gpu_hour"]
    # renting: whole instances (rented_gpus), billed for the hours used or, reserved, every hour of its terms
    rented = a.get("rented_gpus", gpus)
    term = a.get("term_years", 0.0 * u)
    share = np.where(term > 0, 1.0, u)
    cloud_month = cloud_total_usd(cloud_price, rented * U.HOURS_PER_MONTH * share)
    cloud = cloud_month * U.MONTHS_PER_YEAR * billed_years(years, term)
    fixed_per_gpu_h = (capex / years + fixed_year) / gpu_hours_year
    energy_per_gpu_h = power_work / gpu_hours_year
    opex_month = opex / U.MONTHS_PER_YEAR
    work = a["work_gpu_hours"] / a["mfu_scale"]
    # the rented price per GPU the plan uses (whole instances); a reservation has no breakeven utilisation
    cloud_per_plan_gpu = cloud_price * rented / gpus
    per_hour = {"depreciation_usd": hardware / years / gpu_hours_year, "capital_usd": capital / gpu_hours_year,
                "maintenance_usd": maint / gpu_hours_year,
                "facility_usd": (colo + facility_usd / years) / gpu_hours_year,
                "power_usd": (power_idle + power_work) / gpu_hours_year, "staff_usd": staff / gpu_hours_year}
    return {
        "capex_usd": capex,
        "capex": {"servers_usd": servers_usd, "network_usd": network_usd, "storage_usd": a["storage_usd"] + 0 * u,
                  "facility_usd": facility_usd},
        "opex_usd_per_year": opex,
        "opex": {"power_usd": power, "colocation_usd": colo, "staff_usd": staff, "maintenance_usd": maint,
                 "capital_usd": capital},
        "onprem_usd": onprem,
        "cloud_usd": cloud,
        "onprem_usd_per_gpu_hour": onprem_gpu_h,
        "owned_usd_per_gpu_hour_full": fixed_per_gpu_h + energy_per_gpu_h,
        "owned_per_gpu_hour": per_hour,
        "breakeven_utilisation": np.where(term > 0, np.nan,
                                          breakeven_utilisation(fixed_per_gpu_h, cloud_per_plan_gpu, energy_per_gpu_h)),
        "breakeven_months": breakeven_months(capex, cloud_month, opex_month),
        "cloud_usd_per_month": cloud_month,
        "onprem_opex_usd_per_month": opex_month,
        "cloud_run_usd": work * cloud_per_plan_gpu,
        "onprem_run_usd": work * onprem_gpu_h,
    }


def whole_server_share(owned_fraction, servers):
    """The owned share a buyer can have: ``owned_fraction`` of ``servers`` rounded to whole servers [-].

    A hybrid owns whole servers, so a one-server plan owns all of it or none (its hybrid is renting or
    owning), and a share between two server counts takes the nearer one (half rounds up).

    Examples
    --------
    >>> [float(s) for s in whole_server_share([0.0, 0.3, 0.5, 0.7, 1.0], 1)]
    [0.0, 0.0, 1.0, 1.0, 1.0]
    >>> float(whole_server_share(0.7, 132))  # 92 of 132 servers
    0.696969696969697
    """
    n = np.maximum(np.asarray(servers, dtype=float), 1.0)
    return np.floor(np.asarray(owned_fraction, dtype=float) * n + 0.5) / n


def hybrid_usd(x: dict[str, Any], owned_fraction):
    """Hybrid: own a share f of the GPUs for the steady load, rent the peaks.

    Owned GPUs are filled first (utilisation min(1, u/f)); the peaks, up to (1 - f) x GPUs, are
    rented as renting is billed (:func:`tco`): whole instances of ``instance_gpus`` (default 1),
    for the hours they work, (u - f) / (1 - f) of the time, or every hour of a reservation's
    terms. At f = 0 this is :func:`tco`'s ``cloud_usd``, at f = 1 its ``onprem_usd``. Idealised:
    it assumes the work can be queued onto owned GPUs first.

    Parameters
    ----------
    x : dict
        inputs of :func:`tco`
    owned_fraction : array_like
        share of GPUs owned [-]

    Returns
    -------
    array_like
        total over ``years`` [USD]

    References
    ----------
    .. [1] Briarwood, "What Is AI Infrastructure?", "AI Cloud Infrastructure vs.
       On-Premises Data Centers": "Keep steady-state workloads on-prem ... Burst to the
       cloud for peak demand" (no figures; the model is ours). [seed-what-is-ai-infrastructure]
    """
    f = np.asarray(owned_fraction, dtype=float)
    u = np.asarray(x["utilisation"], dtype=float)
    own = dict(x)
    scale = np.maximum(f, 1e-12)
    for key in ("gpus", "servers", "storage_usd", "it_kw", "busy_kw", "idle_kw", "staff_servers"):
        if key in x:
            own[key] = np.asarray(x[key], dtype=float) * scale
    own["utilisation"] = np.minimum(1.0, u / scale)
    owned = np.where(f > 0, tco(own)["onprem_usd"], 0.0)
    per_instance = np.asarray(x.get("instance_gpus", 1.0), dtype=float)
    term = np.asarray(x.get("term_years", 0.0), dtype=float)
    rented = rented_gpus(np.maximum(0.0, 1.0 - f) * np.asarray(x["gpus"], dtype=float), per_instance)
    with np.errstate(divide="ignore", invalid="ignore"):
        busy = np.where(f < 1.0, np.maximum(0.0, u - f) / (1.0 - f), 0.0)
    share = np.where(term > 0, 1.0, busy)
    month = cloud_total_usd(x["cloud_usd_per_gpu_hour"], rented * U.HOURS_PER_MONTH * share)
    return owned + month * U.MONTHS_PER_YEAR * billed_years(x["years"], term)


def monthly_curves(capex_usd, opex_usd_per_month, cloud_usd_per_month, years) -> list[dict]:
    """Cumulative cost by month 1..years*12: ``[{month, cloud_usd, onprem_usd}]``.

    References
    ----------
    .. [1] Cash-flow view of the breakeven (capex at month 0; see :func:`breakeven_months`).
    """
    months = np.arange(1, int(round(float(years) * U.MONTHS_PER_YEAR)) + 1)
    cloud = months * float(cloud_usd_per_month)
    onprem = float(capex_usd) + months * float(opex_usd_per_month)
    return [{"month": m, "cloud_usd": c, "onprem_usd": o}
            for m, c, o in zip(months.tolist(), cloud.tolist(), onprem.tolist())]


