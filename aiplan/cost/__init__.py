"""Step 4: what it costs, cloud vs on-prem; breakeven, hybrid and sensitivity.

The cost model (whole-instance rentals billed as the provider bills them, owning per buyer
profile, equal capacity, breakeven) is described once, in :mod:`aiplan.cost.formulas`; the step
that applies it to a plan is :mod:`aiplan.cost.step`. All prices come from the dated catalog;
``cost.price_source`` / ``price_as_of`` say which price was used.
"""

from .formulas import (
    CAPACITY_RISK_WORDS,
    COMMITMENT_YEARS,
    DRIVER_LABELS,
    DRIVERS,
    PRICING_LABELS,
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
    whole_server_share,
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
