"""The bill of materials of a plan: what to buy, how many, at what price (plain data, from the result).

Quantities come from the result (cluster, network, storage, facility), prices from the result's
cost section; a line whose price the catalog lacks says so instead of guessing one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.catalog import load_catalog, short_name
from ..core.fields import format_field
from ..core.fields import format_value as fmt
from .figures import get_path, one_shared_rack


def plan_catalog(plan: Any = None) -> Any:
    """The catalog of an evaluated :class:`aiplan.plan.Plan` (its own rows included), else the shipped one."""
    catalog = getattr(plan, "catalog", None)
    if catalog is None:
        catalog = load_catalog()
    return catalog


def catalog_records(result: Mapping, plan: Any = None) -> dict[str, Any]:
    """The catalog records a result names (gpu, server, switch, cloud, region); None where unknown.

    ``plan``: the :class:`aiplan.plan.Plan` evaluated (its catalog holds the plan's own rows);
    without it the shipped catalog is read.
    """
    catalog = plan_catalog(plan)
    ids = {"gpu": ("gpus", "plan.cluster.gpu"), "server": ("servers", "plan.facility.server"),
           "switch": ("switches", "plan.cluster.fabric_switch"), "cloud": ("clouds", "plan.cost.cloud"),
           "region": ("regions", "plan.facility.region")}
    return {name: catalog.table(table).get(get_path(result, key)) for name, (table, key) in ids.items()}


def _line(item: str, detail: str, quantity: Any, quantity_text: str, unit_price: Any = None, total: Any = None,
          note: str = "", sources: str = "", unit: str = "") -> dict[str, Any]:
    return {"item": item, "detail": detail, "quantity": quantity, "quantity_text": quantity_text, "unit": unit,
            "unit_price": unit_price, "unit_price_text": fmt(unit_price, "usd") if unit_price is not None else "",
            "total": total, "total_text": fmt(total, "usd") if total is not None else "", "note": note,
            "sources": sources}


def _switch_lines(result: Mapping, switch: Any) -> list[dict[str, Any]]:
    name = short_name(switch, str(get_path(result, "network.fabric_switch") or "fabric switch"))
    ports = get_path(result, "network.fabric_radix")
    speed = f" of {fmt(switch.port_gbps, 'count')} Gb/s" if switch is not None else ""
    detail = f"{name}, {fmt(ports, 'count', 'ports')}{speed}" if ports else name
    price = getattr(switch, "price_usd", None)
    out = []
    for tier in ("leaf", "spine", "core"):
        n = get_path(result, f"network.{tier}_switches")
        if n:
            out.append(_line(f"{tier.capitalize()} switches", detail, n, f"{fmt(n, 'count')} switch" + "es" * (n != 1),
                             price,
                             n * price if price else None, "" if price else "price not in the catalog",
                             getattr(switch, "sources", "") or "", "switches"))
    return out


def _network_lines(result: Mapping) -> list[dict[str, Any]]:
    cables = get_path(result, "network.cables")
    parts = [(get_path(result, f"network.cables_{k}"), words) for k, words in
             (("node_leaf", "server to leaf"), ("leaf_spine", "leaf to spine"), ("spine_core", "spine to core"))]
    out = []
    if cables:
        out.append(_line("Fabric cables", ", ".join(f"{fmt(n, 'count')} {w}" for n, w in parts if n), cables,
                         fmt(cables, "count", "cables"), note="price not in the catalog", unit="cables"))
    optics = get_path(result, "network.transceivers")
    if optics:
        out.append(_line("Transceivers", "optical, twin-port cages", optics, fmt(optics, "count", "transceivers"),
                         note="price not in the catalog", unit="transceivers"))
    network = get_path(result, "cost.capex.network_usd")
    if network is None:
        return out
    basis = f"estimated as {get_path(result, 'cost.network_cost_basis')}"
    if get_path(result, "network.switches"):
        out.append(_line("Network, all of the above", "", None, "", None, network, basis, "epoch-training-cost-trends"))
    elif network:  # one server with the plan's own share: the storage and front-end network it stands for
        out.append(_line("Network, storage and front end", "", None, "", None, network, basis,
                         "epoch-training-cost-trends"))
    return out


def _facility_lines(result: Mapping) -> list[dict[str, Any]]:
    racks = get_path(result, "facility.racks")
    other = get_path(result, "facility.other_racks")
    out = [_line("Racks", f"{fmt(get_path(result, 'facility.compute_racks'), 'count')} compute, "
                          + ("network, storage and management in it" if one_shared_rack(result) else
                             f"{fmt(other, 'count')} network, storage and management"),
                 racks, fmt(racks, "count", "racks"),
                 note=f"{format_field('facility.rack_kw_budget', get_path(result, 'facility.rack_kw_budget'))} "
                      "power budget each", unit="racks")]
    kw = get_path(result, "facility.provisioned_kw")
    modules, size = get_path(result, "facility.power_modules"), get_path(result, "facility.power_module_kw")
    out.append(_line("Provisioned power", f"{fmt(modules, 'count', 'power modules')} of {fmt(size, 'power')}, "
                                          f"{get_path(result, 'facility.redundancy')}", kw, fmt(kw, "power"),
                     unit="kW"))
    tons, heat = get_path(result, "facility.cooling_tons"), get_path(result, "facility.heat_btu_per_hr")
    out.append(_line("Cooling", f"{get_path(result, 'facility.cooling')} cooling for "
                                f"{format_field('facility.heat_btu_per_hr', heat)}",
                     tons, format_field("facility.cooling_tons", tons), unit="tons"))
    model = get_path(result, "cost.facility_model")
    build = get_path(result, "cost.capex.facility_usd")
    if model == "build" and build is not None:
        out.append(_line("Facility build", f"{format_field('facility.total_kw', get_path(result, 'facility.it_kw'))} "
                         "of IT load", None, "", get_path(result, "plan.cost.build_usd_per_mw"), build,
                         "build cost per MW of IT load"))
    elif model == "colocation":
        colo = get_path(result, "cost.opex.colocation_usd")
        out.append(_line("Colocation space", "rented per kW of IT load", None, "",
                         get_path(result, "plan.cost.colocation_usd_per_kw_month"), None,
                         f"{fmt(colo, 'usd')} a year, an operating cost" if colo is not None else "",
                         "cbre-na-data-center-trends-h2-2024"))
        out[-1]["unit_price_text"] += " per kW-month" if out[-1]["unit_price_text"] else ""
    return out


def _storage_lines(result: Mapping) -> list[dict[str, Any]]:
    tb = get_path(result, "storage.capacity_tb")
    price = get_path(result, "plan.cost.storage_usd_per_tb")
    parts = ", ".join(f"{format_field(f'storage.{t}_tb', get_path(result, f'storage.{t}_tb'))} {w}"
                      for t, w in (("hot", "hot"), ("warm", "warm"), ("cold", "archive"))
                      if get_path(result, f"storage.{t}_tb") is not None)
    out = [_line("Storage capacity", parts, tb, format_field("storage.capacity_tb", tb), price,
                 get_path(result, "cost.capex.storage_usd"), "installed price per TB (judgement)", unit="TB")]
    if out[0]["unit_price_text"]:
        out[0]["unit_price_text"] += " per TB"
    read, write = get_path(result, "storage.read_gb_per_s"), get_path(result, "storage.write_gb_per_s")
    if read is not None:
        both = f"read {format_field('storage.read_gb_per_s', read)}" + (
            f", write {format_field('storage.write_gb_per_s', write)}" if write is not None else "")
        out.append(_line("Storage throughput", both, read,
                         format_field("storage.read_gb_per_s", read), note="included in the storage system",
                         unit="GB/s read"))
    return out


def bill_of_materials(result: Mapping, plan: Any = None) -> list[dict[str, Any]]:
    """Lines ``{item, detail, quantity, quantity_text, unit_price, unit_price_text, total, total_text, note,
    sources}``; the last line is the total capex."""
    rec = catalog_records(result, plan)
    nodes, gpus = get_path(result, "cluster.nodes"), get_path(result, "cluster.gpus")
    price = get_path(result, "cost.server_price_usd")
    as_of = get_path(result, "cost.server_price_as_of")
    lines = [
        _line("GPU servers", short_name(rec["server"], str(get_path(result, "plan.facility.server"))), nodes,
              fmt(nodes, "count", "servers"), price, get_path(result, "cost.capex.servers_usd"),
              f"price of {as_of}" if as_of else "", get_path(result, "cost.server_price_source") or "", "servers"),
        _line("GPUs", short_name(rec["gpu"], str(get_path(result, "plan.cluster.gpu"))), gpus,
              fmt(gpus, "count", "GPUs"), note="in the servers", sources=getattr(rec["gpu"], "sources", "") or "",
              unit="GPUs"),
    ]
    lines += _switch_lines(result, rec["switch"]) + _network_lines(result)
    lines += _storage_lines(result) + _facility_lines(result)
    capex = get_path(result, "cost.capex_usd")
    lines.append(_line("Total to buy", "", None, "", None, capex, "capex"))
    return [line for line in lines if line["quantity"] is not None or line["total"] is not None
            or line["unit_price"] is not None]
