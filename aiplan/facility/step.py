"""The facility step: the cluster -> IT and facility power, cooling, racks, floor, energy and growth."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core import assumptions as A
from ..core import units as U
from ..core.catalog import calibration_file, read_constants
from ..core.records import record_of
from .formulas import (
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


def _known(value) -> float:
    """A catalog figure as a float, NaN where the catalog has none (the results built on it are null)."""
    return math.nan if value is None else float(value)


#: the fitted draw fractions (``data/calibration/power_constants.csv``, written by ``tools/calibrate.py``)
POWER_CONSTANTS = "power_constants.csv"


def draw_fractions() -> dict[str, float]:
    """The servers' average draw as a share of their maximum: ``training``, ``serving`` (at full load) and
    ``idle``, fitted on metered MLPerf power logs (``aiplan.calibration.power``)."""
    c = read_constants(calibration_file(POWER_CONSTANTS))
    return {"training": c["training_draw_fraction"], "serving": c["serving_draw_fraction"],
            "idle": c["idle_draw_fraction"]}


def power_reference(switches: Mapping[str, Any], switch: Any) -> Any:
    """The catalog switch whose published power stands in for ``switch`` (which has none): the nearest
    port speed, then the nearest switching capacity, then a published row before a derived one; None when
    no switch of the catalog has a power figure."""
    known = [s for s in switches.values() if s.power_w and s.id != switch.id]
    if not known:
        return None

    def distance(s) -> tuple[float, float, bool]:
        return (abs(math.log(s.port_gbps / switch.port_gbps)),
                abs(math.log(s.ports * s.port_gbps / (switch.ports * switch.port_gbps))), s.status != "published")
    return min(known, key=distance)


def switch_kw(plan, result) -> tuple[float, float, str, str | None]:
    """(maximum [kW], typical [kW], basis, reference switch id) of one fabric switch: the catalog's figures for
    the switch model ("catalog"); else scaled by switching capacity from the published switch of the nearest
    port speed ("scaled", :func:`switch_power_by_capacity_w`); else the judgement
    ``aiplan.core.assumptions.SWITCH_KW`` for both ("judgement")."""
    net = result["network"]
    switches = plan.catalog.switches
    switch = switches.get(net.get("fabric_switch") or "")
    peak_w = (switch.power_w if switch else None) or net.get("switch_power_w")
    if peak_w:
        typical_w = switch.typical_power_w if switch and switch.typical_power_w else peak_w
        return peak_w / U.W_PER_KW, typical_w / U.W_PER_KW, "catalog", None
    ref = power_reference(switches, switch) if switch else None
    if ref is None:
        return A.SWITCH_KW, A.SWITCH_KW, "judgement", None
    peak_w, typical_w = (float(switch_power_by_capacity_w(switch.ports, switch.port_gbps, w, ref.ports, ref.port_gbps))
                         for w in (ref.power_w, ref.typical_power_w or ref.power_w))
    return peak_w / U.W_PER_KW, typical_w / U.W_PER_KW, "scaled", ref.id


def _switches(result) -> float:
    """Fabric switches of the cluster step (leaf + spine + core) [-]."""
    net = result["network"]
    return float(sum(net.get(k) or 0 for k in ("leaf_switches", "spine_switches", "core_switches")))


def step(plan, result: Mapping[str, Any]):
    """The ``facility`` record: power, cooling, racks, floor, energy and growth of the cluster."""
    fac = plan.facility
    srv = plan.server
    gpus, nodes = int(result["cluster"]["gpus"]), int(result["cluster"]["nodes"])
    gpn = plan.cluster["gpus_per_node"]

    server_kw = _known(srv.max_power_kw)  # NaN where the catalog has no published figure: results are null
    srv_kw = servers_kw(nodes, server_kw)
    switches = _switches(result)
    peak_switch_kw, typical_switch_kw, switch_basis, switch_reference = switch_kw(plan, result)
    net_kw = network_kw(switches, peak_switch_kw)
    sto_kw = storage_kw(result["storage"]["read_gb_per_s"])
    it = srv_kw + net_kw + sto_kw
    total = facility_kw(it, fac["pue"])
    # the power drawn: servers at the metered share of their maximum, switches at their typical power
    draw = draw_fractions()
    busy = draw["serving"] if plan.kind == "inference" else draw["training"]
    others_kw = network_kw(switches, typical_switch_kw) + sto_kw
    busy_it = float(srv_kw * busy + others_kw)
    idle_it = float(srv_kw * draw["idle"] + others_kw)
    year_it = float(srv_kw * average_draw_fraction(busy, draw["idle"], plan.cost["utilisation"]) + others_kw)
    per_rack = servers_per_rack(fac["rack_kw"], server_kw, _known(srv.rack_units))
    compute_racks, other_racks = rack_counts(nodes, per_rack)
    per_rack_used = float(np.fmin(per_rack, nodes))
    rack_kw_actual = per_rack_used * server_kw
    heat = heat_btu_per_hr(it)
    recommended = str(cooling_for_density(rack_kw_actual)) if math.isfinite(rack_kw_actual) else None
    racks = compute_racks + other_racks
    average_kw = facility_kw(busy_it, fac["pue"])
    year_average_kw = facility_kw(year_it, fac["pue"])
    year_mwh = energy_mwh(year_average_kw, U.HOURS_PER_YEAR)

    days = result["compute"].get("wall_clock_days")
    run_mwh = energy_mwh(average_kw, days * U.HOURS_PER_DAY) if days is not None else None
    energy = year_mwh if plan.kind == "inference" else run_mwh
    grid = fac["grid_kg_co2_per_kwh"]

    module_kw = fac["power_module_kw"] or (module_size_kw(it) if math.isfinite(it) else math.nan)
    return record_of("facility", {
        "it_kw": it,
        "total_kw": total,
        "provisioned_kw": provisioned_kw(it, module_kw, fac["redundancy"]),
        "heat_btu_per_hr": heat,
        "cooling_tons": cooling_tons(heat),
        "cooling": recommended if fac["cooling"] == "auto" else fac["cooling"],
        "racks": racks,
        "floor_m2": floor_m2(racks, fac["floor_m2_per_rack"]),
        "energy_mwh": energy,
        "co2_t": co2_t(energy, grid) if energy is not None else None,
        # extra keys
        "servers_kw": srv_kw,
        "draw_fraction": busy,
        "idle_draw_fraction": draw["idle"],
        "average_it_kw": busy_it,
        "idle_it_kw": idle_it,
        "average_kw": average_kw,
        "year_average_kw": year_average_kw,
        "switch_kw": peak_switch_kw,
        "switch_typical_kw": typical_switch_kw,
        "switch_power_basis": switch_basis if switches else None,
        "switch_power_reference": switch_reference if switches else None,
        "gpu_kw": gpus * _known(plan.gpu.tdp_w) / U.W_PER_KW,
        "network_kw": net_kw,
        "network_switches": switches,
        "storage_kw": sto_kw,
        "rule_of_thumb_kw_low": rule_of_thumb_kw(srv_kw, A.SEED_POWER_OVERHEAD_LOW),
        "rule_of_thumb_kw_high": rule_of_thumb_kw(srv_kw, A.SEED_POWER_OVERHEAD_HIGH),
        "overhead_vs_servers": total / srv_kw - 1.0,
        "redundancy": fac["redundancy"],
        "power_module_kw": module_kw,
        "power_modules": float(provisioned_kw(it, module_kw, fac["redundancy"])) / module_kw,
        "cooling_recommended": recommended,
        "servers_per_rack": per_rack,
        "compute_racks": compute_racks,
        "other_racks": other_racks,
        "rack_kw_actual": rack_kw_actual,
        "rack_kw_budget": fac["rack_kw"],
        "rack_weight_kg": rack_weight_kg(per_rack_used, _known(srv.weight_kg)),
        "floor_kg_per_rack": fac["floor_kg_per_rack"],
        "energy_mwh_run": run_mwh,
        "energy_mwh_per_year": year_mwh,
        "co2_t_per_year": co2_t(year_mwh, grid),
        "grid_kg_co2_per_kwh": grid,
        "region": plan.region.id,
        "grid_source": plan.region.sources,
        "grid_as_of": plan.region.as_of,
        "growth": _growth(plan, gpus, nodes, gpn, float(it)),
    })


def _growth(plan, gpus, nodes, gpn, it_kw) -> list[dict]:
    """Phases year 0..growth_years: GPUs, servers, power and racks (the cost step prices them)."""
    fac, srv = plan.facility, plan.server
    years = np.arange(fac["growth_years"] + 1)
    g = growth_gpus(gpus, fac["growth_per_year"], years, gpn)
    n = np.ceil(g / gpn) if gpus >= gpn else np.full(years.shape, float(nodes))
    it_y = it_kw * n / nodes
    per_rack = servers_per_rack(fac["rack_kw"], _known(srv.max_power_kw), _known(srv.rack_units))
    cr, orr = rack_counts(n, per_rack)
    return [{"year": int(y), "gpus": g[i] if gpus >= gpn else gpus, "servers": n[i], "it_kw": it_y[i],
             "total_kw": it_y[i] * fac["pue"], "racks": cr[i] + orr[i]} for i, y in enumerate(years)]
