"""Step 4: what it costs, cloud vs on-prem; breakeven, hybrid and sensitivity.

Cost model (all formulas vectorised, one function each):

* **Cloud**: the catalog offer's price per instance-hour for the plan's pricing
  (on-demand, reserved 1y/3y, spot), divided by GPUs per instance. Spot adds the
  work lost to reclaims (half a checkpoint interval plus the restart per reclaim).
  Over ``years`` the cloud bill is gpus x hours x utilisation x price: rented
  GPUs are paid only while used.
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

from .formulas import (
    CAPACITY_RISK_WORDS,
    COMMITMENT_YEARS,
    DRIVER_LABELS,
    DRIVERS,
    PRICING_LABELS,
    REF_EPOCH,
    SENSITIVITY_STEP,
    billed_share,
    billed_years,
    breakeven_months,
    breakeven_utilisation,
    build_capex_usd,
    capacity_risk,
    capital_recovery_factor,
    capital_usd_per_year,
    cloud_total_usd,
    colocation_usd_per_year,
    commitment_basis,
    committed_gpu_hours,
    committed_run_usd,
    hybrid_usd,
    maintenance_usd_per_year,
    monthly_curves,
    network_capex_usd,
    node_capex_usd,
    owned_usd_per_gpu_hour,
    paid_in_full,
    power_usd_per_year,
    prefill_share,
    rented_gpus,
    served_tokens_per_month,
    split_usd_per_million_tokens,
    spot_goodput,
    staff_usd_per_year,
    support_usd_per_year,
    tco,
    usd_per_gpu_hour,
    usd_per_million_tokens,
    whole_instances,
)
from .step import (
    api_prices,
    breakeven_table,
    capacity_basis,
    growth_capex,
    inputs,
    offer_price,
    s_or_none,
    sensitivity,
    server_price_basis,
    server_price_used,
    spot_terms,
    step,
    utilisation_curve,
)
