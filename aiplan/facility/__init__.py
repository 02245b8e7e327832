"""Step 3: where the cluster lives (power, redundancy, cooling, racks, energy, carbon, growth).

Every formula is one vectorised function (numpy arrays or scalars). :func:`step`
reads the GPU and node counts (``cluster``), the fabric's switches (``network``) and the
storage bandwidth (``storage``) of the cluster step and fills ``result['facility']``.

IT power is the server catalog's *maximum* system power (NVIDIA's DGX SuperPOD data
center design guide, Table 4, plans on average = peak for AI clusters, as quoted in Epoch
AI's energy.py [nvidia-dgx-superpod-dc-design-h100;epoch-energy-py]) plus network and
storage equipment: it sizes the facility. Energy, emissions and the electricity bill use the
power actually drawn (the servers at the share of their maximum metered in published MLPerf power
logs, ``data/calibration/power_constants.csv``; the switches at their typical power). The rule of
thumb "+30-40% for networking, storage and cooling" (DCS Global quick reference, power rule
[seed-ai-training-quick-reference]) is shown beside it as ``rule_of_thumb_kw_low/high``; it is
compared with ``total_kw`` (which also contains cooling, via PUE).
"""

from .formulas import (
    REDUNDANCY_MODULES,
    average_draw_fraction,
    co2_t,
    cooling_for_density,
    cooling_tons,
    energy_mwh,
    facility_kw,
    floor_m2,
    growth_gpus,
    heat_btu_per_hr,
    module_size_kw,
    network_kw,
    provisioned_kw,
    rack_counts,
    rack_weight_kg,
    rule_of_thumb_kw,
    servers_kw,
    servers_per_rack,
    storage_kw,
    switch_power_by_capacity_w,
)
from .step import (
    draw_fractions,
    power_reference,
    step,
    switch_kw,
)
