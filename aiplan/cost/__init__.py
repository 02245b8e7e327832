"""Step 4: what it costs, cloud vs on-prem; breakeven, hybrid and sensitivity.

Cost model (all formulas vectorised, one function each):

* **Cloud**: the catalog offer's price per instance-hour for the plan's pricing
  (on-demand, reserved 1y/3y, spot), divided by GPUs per instance. Spot adds the
  work lost to reclaims (half a checkpoint interval plus the restart per reclaim).
  Over ``years`` the cloud bill is gpus x hours x utilisation x price: rented
  GPUs are paid only while used.
* **On-prem**: capex = servers + network (the interconnect share of cluster
  cost, Epoch AI's 19% [epoch-training-cost-trends], since the catalog has no switch prices) + storage
  (capacity x $/TB) + facility build ($/MW of IT load; colocation instead is
  opex per kW-month). Opex = power (IT x PUE x $/kWh, drawn while the cluster
  works) + colocation + staff + maintenance (share of hardware capex). All
  capex is written off over ``years`` (no residual value).
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
    COMMITMENT_YEARS,
    DRIVER_LABELS,
    DRIVERS,
    PRICING_LABELS,
    REF_EPOCH,
    SENSITIVITY_STEP,
    breakeven_months,
    breakeven_utilisation,
    build_capex_usd,
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
    served_tokens_per_month,
    spot_goodput,
    staff_usd_per_year,
    tco,
    usd_per_gpu_hour,
    usd_per_million_tokens,
)
from .step import (
    breakeven_table,
    growth_capex,
    inputs,
    offer_price,
    s_or_none,
    sensitivity,
    spot_terms,
    step,
    utilisation_curve,
)
