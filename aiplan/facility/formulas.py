"""Step 3: where the cluster lives (power, redundancy, cooling, racks, energy, carbon, growth).

Every formula is one vectorised function (numpy arrays or scalars). :func:`step`
reads the GPU and node counts (``cluster``), the fabric's switches (``network``) and the
storage bandwidth (``storage``) of the cluster step and fills ``result['facility']``.

IT power is the server catalog's *maximum* system power (NVIDIA's DGX SuperPOD data
center design guide, Table 4, plans on average = peak for AI clusters, as quoted in Epoch
AI's energy.py [nvidia-dgx-superpod-dc-design-h100;epoch-energy-py]) plus network and
storage equipment: it sizes the facility. Energy, emissions and the electricity bill use the
power actually drawn: the servers at a share of their maximum metered in published MLPerf
power logs (fitted in ``data/calibration/power_constants.csv``; :func:`average_draw_fraction`),
the switches at their typical power. The rule of thumb "+30-40% for networking, storage and cooling"
(DCS Global quick reference, power rule [seed-ai-training-quick-reference]) is shown
beside it as ``rule_of_thumb_kw_low/high``; it is compared with ``total_kw`` (which also
contains cooling, via PUE).
"""

from __future__ import annotations

import numpy as np

from ..core import assumptions as A
from ..core import units as U

REDUNDANCY_MODULES = {
    "N": (1, 0),
    "N+1": (1, 1),
    "2N": (2, 0),
    "2N+1": (2, 1),
}


# --- power ------------------------------------------------------------------------


def servers_kw(nodes, max_power_kw):
    """Power of the compute servers at their maximum system power.

    Parameters
    ----------
    nodes : array_like
        servers [-]
    max_power_kw : array_like
        maximum system power of one server [kW]

    Returns
    -------
    array_like
        [kW]

    References
    ----------
    .. [1] NVIDIA, "NVIDIA DGX SuperPOD: Next Generation Scalable Infrastructure for AI
       Leadership", RA-11333-001 V11, 2023, p. 7: DGX H100 10.2 kW max; NVIDIA DGX H100
       datasheet, "System power usage". Servers per the catalog rows.
       [nvidia-ra-11333-001;nvidia-dgx-h100-datasheet]
    .. [2] Latif et al., "Single-node power demand during AI training: measurements on an 8-GPU
       NVIDIA H100 system" (abstract): the highest draw observed was about 8.4 kW, 18% below the
       rated 10.2 kW: sizing at the maximum is safe. [arxiv-2412.08602]

    Examples
    --------
    >>> float(servers_kw(4, 10.2))
    40.8
    """
    return np.asarray(nodes) * np.asarray(max_power_kw)


def switch_power_by_capacity_w(ports, port_gbps, ref_power_w, ref_ports, ref_port_gbps):
    """Power of a switch with no published figure, scaled from a published switch by switching capacity [W].

    Power per Gb/s of switching capacity (ports x port speed) is taken to be the reference
    switch's: ``ref_power_w x (ports x port_gbps) / (ref_ports x ref_port_gbps)``. A switch's
    power grows with its SerDes lanes and optics, which grow with its capacity; a switch of an
    older generation than its reference draws more per Gb/s, so the estimate is a lower bound
    for it. The kit's own derivation; the reference figure carries the vendor's source.

    Examples
    --------
    A 40 x 200 Gb/s HDR switch from the QM9700's 1.72 kW maximum at 64 x 400 Gb/s
    [nvidia-qm97x0-specs]:

    >>> round(float(switch_power_by_capacity_w(40, 200, 1720, 64, 400)), 1)
    537.5
    """
    return np.asarray(ref_power_w) * np.asarray(ports) * np.asarray(port_gbps) / (
        np.asarray(ref_ports) * np.asarray(ref_port_gbps))


def network_kw(switches, switch_kw=A.SWITCH_KW):
    """Power of the fabric switches (with their optics).

    Parameters
    ----------
    switches : array_like
        switches [-]
    switch_kw : array_like
        power per switch [kW]: the catalog's figure for the switch model (``switches.csv``
        ``power_w`` for the maximum, ``typical_power_w`` for the draw in use), else scaled from
        a published switch (:func:`switch_power_by_capacity_w`), else
        ``aiplan.core.assumptions.SWITCH_KW`` (a judgement, for a switch the catalog does not know)

    Returns
    -------
    array_like
        [kW]

    References
    ----------
    .. [1] NVIDIA, QM97x0 hardware user manual, Specifications: QM9700 1.72 kW maximum with
       active cables, 0.747 kW typical with passive cables (read second-hand).
       [nvidia-qm97x0-specs]

    Examples
    --------
    The 16 leaf and spine switches of a 256-GPU NDR scalable unit at their maximum:

    >>> round(float(network_kw(16, 1.72)), 2)
    27.52
    """
    return np.asarray(switches) * np.asarray(switch_kw)


def storage_kw(read_gb_per_s, kw_per_gb_per_s=A.STORAGE_KW_PER_GB_PER_S):
    """Power of the storage appliances, scaled by read bandwidth.

    Parameters
    ----------
    read_gb_per_s : array_like
        aggregate storage read bandwidth [GB/s]
    kw_per_gb_per_s : array_like
        [kW/(GB/s)] (judgement, no published figure; ``A.STORAGE_KW_PER_GB_PER_S``)

    Returns
    -------
    array_like
        [kW]

    References
    ----------
    .. [1] (judgement: no source publishes storage appliance power per GB/s.)
    """
    return np.asarray(read_gb_per_s) * kw_per_gb_per_s


def rule_of_thumb_kw(servers_power_kw, overhead):
    """The rule of thumb: server power plus 30-40% for networking, storage and cooling.

    Parameters
    ----------
    servers_power_kw : array_like
        [kW]
    overhead : array_like
        0.30 or 0.40 [-]

    Returns
    -------
    array_like
        [kW]

    References
    ----------
    .. [1] DCS Global, "AI Training Infrastructure - Quick Reference", "AI Training
       Infrastructure Sizing Rules of Thumb": "Power rule: 10.2 kW per H100 SXM5 server;
       add 30-40% for networking, storage, and cooling overhead" (a rule of thumb, not a
       measurement). [seed-ai-training-quick-reference]

    Examples
    --------
    >>> round(float(rule_of_thumb_kw(10.2, 0.30)), 2), round(float(rule_of_thumb_kw(10.2, 0.40)), 2)
    (13.26, 14.28)
    """
    return np.asarray(servers_power_kw) * (1.0 + np.asarray(overhead))


def facility_kw(it_kw, pue):
    """Total facility power from IT power and PUE.

    .. math:: P_{total} = PUE \\cdot P_{IT}

    Parameters
    ----------
    it_kw : array_like
        [kW]
    pue : array_like
        power usage effectiveness, >= 1 [-]

    Returns
    -------
    array_like
        [kW]

    References
    ----------
    .. [1] ISO/IEC 30134-2:2016, "Data centres - Key performance indicators - Part 2:
       Power usage effectiveness (PUE)", definitions: PUE = total facility energy /
       IT equipment energy. [iso-iec-30134-2]
    """
    return np.asarray(it_kw) * np.asarray(pue)


def provisioned_kw(load_kw, module_kw, redundancy):
    """Installed power capacity for a load under N, N+1, 2N or 2N+1 redundancy.

    With n = ceil(L / m) modules of size m carrying load L: N -> n*m,
    N+1 -> (n+1)*m, 2N -> 2n*m, 2N+1 -> (2n+1)*m.

    Parameters
    ----------
    load_kw : array_like
        critical load [kW]
    module_kw : array_like
        size of one UPS/power module [kW]
    redundancy : str
        ``N``, ``N+1``, ``2N`` or ``2N+1``

    Returns
    -------
    array_like
        installed capacity [kW]

    References
    ----------
    .. [1] McCarthy & Avelar, "Comparing UPS System Design Configurations", Schneider
       Electric White Paper 75, Rev 4: capacity (N), parallel redundant (N+1), system plus
       system (2N, 2N+1) configurations. [schneider-wp75]
    .. [2] The installed capacities above are derived from [1]: n = ceil(L/m) modules,
       N+1 = n+1, 2N = 2n, 2N+1 = 2n+1. The fixed factors of an online sizing calculator
       (N+1 1.25, 2N 2.0, 2N+1 2.1; a secondary source) assume ~4 modules. [engineering-calculators-dc-sizing]

    Examples
    --------
    >>> [float(provisioned_kw(400, 100, r)) for r in ("N", "N+1", "2N", "2N+1")]
    [400.0, 500.0, 800.0, 900.0]
    """
    sets, spare = REDUNDANCY_MODULES[redundancy]
    n = np.ceil(np.asarray(load_kw, dtype=float) / np.asarray(module_kw))
    return (sets * n + spare) * np.asarray(module_kw)


def module_size_kw(load_kw):
    """Default power-module size: the smallest standard size with at most ~4 modules for the load.

    Parameters
    ----------
    load_kw : float
        critical load [kW]

    Returns
    -------
    float
        module size [kW] from ``A.POWER_MODULE_SIZES_KW``

    Notes
    -----
    A judgement: the fixed redundancy multipliers of common calculators (N+1 = 1.25)
    assume about four modules [engineering-calculators-dc-sizing], so sizing modules at
    a quarter of the load keeps N+1 near that figure for any cluster size.

    Examples
    --------
    >>> module_size_kw(400.0), module_size_kw(20000.0)
    (100.0, 5000.0)
    """
    need = float(load_kw) / A.MODULES_PER_LOAD
    for size in A.POWER_MODULE_SIZES_KW:
        if size >= need:
            return float(size)
    return float(A.POWER_MODULE_SIZES_KW[-1])


def average_draw_fraction(busy_fraction, idle_fraction, utilisation):
    """Share of the servers' maximum power drawn on average: busy hours at the busy draw, the rest idle.

    .. math:: f = f_{idle} + (f_{busy} - f_{idle}) u

    Parameters
    ----------
    busy_fraction : array_like
        draw while training or serving at full load, share of the maximum [-] (fitted on
        metered MLPerf power logs: ``data/calibration/power_constants.csv``)
    idle_fraction : array_like
        draw at rest, share of the maximum [-] (same file)
    utilisation : array_like
        share of hours the cluster works [-] (1 during a training run)

    Returns
    -------
    array_like
        [-]

    References
    ----------
    .. [1] MLCommons, MLPerf Training v4.0 (Sustainable Metal Cloud) and v5.0 (Lenovo) power
       logs: 8 x H100 nodes draw 5.1-7.2 kW of the DGX H100's 10.2 kW while training, 8 x
       B200 nodes 9.6-10.0 of 14.3 kW; MLPerf Inference v5.1 (Lenovo) 9.0-9.9 kW serving at
       full load and about 2.5 kW at rest.
       [mlcommons-training-results-v4.0;mlcommons-training-results-v5.0;mlcommons-inference-results-v5.1]
    .. [2] NVIDIA DGX H100 User Guide: 10.2 kW maximum. [nvidia-dgx-h100-ug]

    Examples
    --------
    A GPT-3 175B MLPerf run: 6,849 W per 8 x H100 node (metered) is 0.67 of 10.2 kW:

    >>> round(float(average_draw_fraction(6.849 / 10.2, 0.2, 1.0)), 3)
    0.671
    >>> round(float(average_draw_fraction(0.66, 0.2, 0.5)), 2)  # serving half the hours
    0.43
    """
    f_idle = np.asarray(idle_fraction, dtype=float)
    return f_idle + (np.asarray(busy_fraction, dtype=float) - f_idle) * np.asarray(utilisation, dtype=float)


# --- heat and cooling --------------------------------------------------------------


def heat_btu_per_hr(power_kw):
    """Heat load: all IT power becomes heat; 1 W = 3.412 BTU/h.

    Parameters
    ----------
    power_kw : array_like
        [kW]

    Returns
    -------
    array_like
        [BTU/h]

    References
    ----------
    .. [1] Thompson & Taylor, NIST SP 811 (2008), Appendix B: 1 Btu_IT/h = 0.2930711 W,
       i.e. 1 W = 3.412 Btu/h. That ~100% of IT power becomes heat is physics. [nist-sp-811]
    .. [2] Briarwood, "What Is AI Infrastructure?", "How to Plan AI Data Center
       Requirements": "A rack pulling 40 kW dumps 136,000 BTU/hour". [seed-what-is-ai-infrastructure]

    Examples
    --------
    >>> float(heat_btu_per_hr(40.0))
    136480.0
    """
    return np.asarray(power_kw) * U.W_PER_KW * U.BTU_PER_HR_PER_W


def cooling_tons(heat_btu_hr):
    """Refrigeration tons for a heat load (1 ton = 12,000 BTU/h = 3.517 kW).

    Parameters
    ----------
    heat_btu_hr : array_like
        [BTU/h]

    Returns
    -------
    array_like [ton]

    References
    ----------
    .. [1] Thompson & Taylor, NIST SP 811 (2008), Appendix B: ton of refrigeration
       = 12,000 Btu_IT/h = 3.516853 kW. [nist-sp-811]
    """
    return np.asarray(heat_btu_hr) / U.BTU_PER_HR_PER_TON


def cooling_for_density(rack_kw):
    """Cooling recommended for a rack power density.

    ``air`` up to 30 kW (practical ceiling; up to ~41 kW needs perfect
    containment), ``rear-door`` (active rear-door heat exchanger) up to 60 kW,
    ``liquid`` (direct-to-chip) above.

    Parameters
    ----------
    rack_kw : array_like
        power of the densest rack [kW]

    Returns
    -------
    numpy.ndarray of str

    References
    ----------
    .. [1] (judgement: the thresholds, air ceiling ~25-30 kW, ~41 kW with perfect
       containment, active rear door <= 60 kW, direct-to-chip 50-120 kW, are figures
       quoted by vendor guides and blogs; no primary source publishes them.)
    .. [2] NVIDIA, RA-11333-001 V11, 2023, p. 7: NVIDIA's 4 x DGX H100 (> 40 kW) rack is
       an air design; we recommend a rear door there. [nvidia-ra-11333-001]

    Examples
    --------
    >>> cooling_for_density([20, 40.8, 120]).tolist()
    ['air', 'rear-door', 'liquid']
    """
    kw = np.asarray(rack_kw, dtype=float)
    if not kw.ndim:  # one density
        return np.asarray("air" if kw <= A.AIR_COOLING_MAX_KW_PER_RACK else
                          "rear-door" if kw <= A.REAR_DOOR_MAX_KW_PER_RACK else "liquid")
    return np.select([kw <= A.AIR_COOLING_MAX_KW_PER_RACK, kw <= A.REAR_DOOR_MAX_KW_PER_RACK],
                     ["air", "rear-door"], "liquid")


# --- racks, floor, weight -------------------------------------------------------


def servers_per_rack(rack_budget_kw, server_kw, server_u, usable_u=A.RACK_USABLE_U):
    """Servers that fit one rack by power budget and by rack units (at least 1).

    Parameters
    ----------
    rack_budget_kw : array_like
        power budget per rack [kW]
    server_kw : array_like
        maximum power of one server [kW]
    server_u : array_like
        height of one server [U]
    usable_u : array_like
        usable rack units [U] (42U rack, judgement)

    Returns
    -------
    array_like
        servers per rack [-]; 1 when a single server exceeds the budget (a
        rack-scale system), which the checks report.

    References
    ----------
    .. [1] NVIDIA, "NVIDIA DGX SuperPOD: Next Generation Scalable Infrastructure for AI
       Leadership", RA-11333-001 V11, 2023, p. 7: 4 DGX H100 per rack > 40 kW. [nvidia-ra-11333-001]

    Examples
    --------
    >>> int(servers_per_rack(41, 10.2, 8))
    4
    """
    by_power = np.floor(np.asarray(rack_budget_kw) / np.asarray(server_kw) + 1e-9)
    by_space = np.floor(np.asarray(usable_u) / np.asarray(server_u))
    return np.maximum(1.0, np.fmin(by_power, by_space))  # fmin: a figure the catalog lacks (NaN) is ignored


def rack_counts(nodes, per_rack, other_per_compute=A.OTHER_RACKS_PER_COMPUTE_RACK):
    """Compute racks and network/storage/management racks.

    A cluster in one compute rack with room for another server (its space and power budget) keeps its
    switches, storage and management gear in that rack: no other rack (judgement; a few rack units of
    switches and a storage server, where a DGX-class server takes 6-10).

    Parameters
    ----------
    nodes : array_like
        servers [-]
    per_rack : array_like
        servers per rack [-]
    other_per_compute : array_like
        other racks per compute rack [-] (derived 6/32 from NVIDIA's 4-SU
        SuperPOD: 127 DGX H100 in 38 racks)

    Returns
    -------
    (compute_racks, other_racks) : tuple of array_like

    References
    ----------
    .. [1] NVIDIA, RA-11333-001 V11, 2023, Appendix A, Table 7 (38 racks for 127 DGX
       H100). [nvidia-ra-11333-001]
    """
    nodes = np.asarray(nodes, dtype=float)
    compute = np.ceil(nodes / np.asarray(per_rack))
    other = np.ceil(compute * other_per_compute - 1e-9)
    shared = (compute == 1) & (nodes < np.asarray(per_rack))  # one rack with a server's room to spare
    return compute, np.where((compute > 0) & ~shared, np.maximum(other, 1.0), 0.0)


def floor_m2(racks, m2_per_rack):
    """White-space floor area including aisles.

    Parameters
    ----------
    racks : array_like
    m2_per_rack : array_like
        [m2] (default 2.8 m2 = 30 ft2: enterprise 25-30 ft2, AI halls 30-50 ft2)

    Returns
    -------
    array_like [m2]

    References
    ----------
    .. [1] (judgement: the kit's default floor area per rack; blogs quote 25-30 ft2 per
       rack for enterprise halls, 30-50 ft2 for AI halls and 4.5 m2 gross; no primary source.)
    """
    return np.asarray(racks) * np.asarray(m2_per_rack)


def rack_weight_kg(per_rack, server_kg, empty_rack_kg=A.RACK_EMPTY_KG):
    """Weight of one full compute rack.

    Parameters
    ----------
    per_rack : array_like
        servers per rack [-]
    server_kg : array_like [kg]
    empty_rack_kg : array_like
        rack, PDUs and cabling [kg] (judgement)

    Returns
    -------
    array_like [kg]

    References
    ----------
    .. [1] Supercluster blog, "AI Supercluster: NVIDIA DGX Platform (DGX H100 hardware)",
       2024: DGX H100 123.2 kg (a secondary source; the DGX H100 user guide's mechanical
       specifications were not read). Four DGX H100 per rack is about 0.5 t of servers
       plus the rack (derived). [supercluster-dgx-h100]
    .. [2] (judgement: raised floors are commonly rated 700-1,000 kg per rack; no primary
       source.)
    """
    return np.asarray(per_rack) * np.asarray(server_kg) + empty_rack_kg


# --- energy and carbon ----------------------------------------------------------


def energy_mwh(power_kw, hours):
    """Energy drawn at constant power.

    Parameters
    ----------
    power_kw : array_like
        facility power (IT x PUE) [kW]
    hours : array_like [h]

    Returns
    -------
    array_like
        [MWh]

    References
    ----------
    .. [1] Definition; CodeCarbon applies ``energy *= self._pue``
       (codecarbon/emissions_tracker.py, L1178). [codecarbon-emissions-tracker]
    """
    return np.asarray(power_kw) * np.asarray(hours) / U.KWH_PER_MWH


def co2_t(energy_mwh_, grid_kg_co2_per_kwh):
    """Operational emissions: energy (at PUE) x grid carbon intensity.

    .. math:: CO_2 = E \\cdot CI

    Parameters
    ----------
    energy_mwh_ : array_like
        facility energy [MWh]
    grid_kg_co2_per_kwh : array_like
        [kgCO2e/kWh]

    Returns
    -------
    array_like
        [tCO2e]

    References
    ----------
    .. [1] CodeCarbon, docs/explanation/methodology.md, opening section: CO2eq = C x E
       (C = carbon intensity, g/kWh). Regional intensities in data/regions.csv (dated).
       [codecarbon-methodology]
    .. [2] The example is derived: 16,384 H100 (Llama Team 2024, "The Llama 3 Herd of
       Models", §3.3.4) x 10.2/8 kW (NVIDIA RA-11333-001) x PUE 1.1 (Epoch AI energy.py)
       x 54 days ~ 29,800 MWh, at the US grid average of 0.367 t/MWh (EIA FAQ 74:
       0.81 lb/kWh, 2023), gives ~10.9 kt. [arxiv-2407.21783;nvidia-ra-11333-001;epoch-energy-py;eia-faq-74]

    Examples
    --------
    >>> round(float(co2_t(29800.0, 0.367)))  # Llama-3-scale run, derived ~10.9 kt, see [2]
    10937
    """
    return np.asarray(energy_mwh_) * U.KWH_PER_MWH * np.asarray(grid_kg_co2_per_kwh) / U.KG_PER_TONNE


def growth_gpus(gpus, growth_per_year, year, gpus_per_node):
    """GPUs after ``year`` years of compound growth, rounded up to whole servers.

    Parameters
    ----------
    gpus : array_like
    growth_per_year : array_like
        0.5 = +50% per year [-]
    year : array_like [yr]
    gpus_per_node : array_like

    Returns
    -------
    array_like
        [-]

    References
    ----------
    .. [1] Briarwood, "What Is AI Infrastructure?", "How to Plan AI Data Center
       Requirements": "Plan for 2-3 years of growth ... Modular designs let you add
       capacity incrementally" (phases). [seed-what-is-ai-infrastructure]
    """
    raw = np.asarray(gpus) * (1.0 + np.asarray(growth_per_year)) ** np.asarray(year)
    return np.ceil(raw / gpus_per_node - 1e-9) * gpus_per_node


# --- the step ------------------------------------------------------------------


