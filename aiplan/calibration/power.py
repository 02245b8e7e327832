"""Power calibration: the servers' average draw as a share of their maximum, from metered power logs.

``data/calibration/power_draw.csv`` holds metered mean node power from published MLPerf power
results (Training v4.0 and v5.0, Inference v4.1 and v5.1), each row a ``state``: ``training``
(between run_start and run_stop), ``serving`` at full load (between loadgen's power_begin and
power_end) or ``idle`` (the node at rest before a benchmark starts). A row's draw fraction is its
metered power over the maximum power of the catalog server it stands for (DGX H100 10.2 kW, DGX
B200 14.3 kW). :func:`fit_power` fits one fraction per state: the weighted geometric mean
(``scipy.optimize.least_squares`` on the log ratios), each source weighted 1/sqrt(its rows) so that
no single submitter dominates. The facility step (:func:`aiplan.facility.step.draw_fractions`)
reads the result from ``power_constants.csv``.

The metered runs that check the model (a 512-GPU GPT-3 run, Dell's air-cooled H100 cluster,
Lenovo's B200 LoRA runs and Llama 2 70B served at full load) are in ``cost_checks.csv`` and are
never fitted; :func:`energy_validation` predicts them.
"""

from __future__ import annotations

import csv
import math

import numpy as np
from scipy.optimize import least_squares

from ..core.catalog import data_dir, load_catalog, parse_number, read_constants
from ..core.units import S_PER_HOUR, W_PER_KW
from ..facility.step import POWER_CONSTANTS

STATES = ("training", "serving", "idle")
_DESCRIPTIONS = {
    "training": "servers' average draw while training, share of their maximum power",
    "serving": "servers' average draw while serving at full load, share of their maximum power",
    "idle": "servers' draw at rest, share of their maximum power",
}


def _read(name: str) -> list[dict]:
    with open(data_dir() / "calibration" / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def power_cases(catalog=None) -> list[dict]:
    """The metered rows of ``power_draw.csv`` with the catalog server's maximum and the draw fraction."""
    catalog = catalog or load_catalog()
    out = []
    for r in _read("power_draw.csv"):
        max_kw = catalog.servers[r["server"]].max_power_kw
        watts = parse_number(r["metered_w"])
        out.append({**r, "max_kw": max_kw, "fraction": watts / W_PER_KW / max_kw})
    return out


def _fit_fraction(cases: list[dict]) -> float:
    """One draw fraction for ``cases``: least squares on ln(metered fraction), each source weighted
    1/sqrt(rows of that source)."""
    counts: dict[str, int] = {}
    for c in cases:
        counts[c["sources"]] = counts.get(c["sources"], 0) + 1
    logs = np.log([c["fraction"] for c in cases])
    weights = np.sqrt([1.0 / math.sqrt(counts[c["sources"]]) for c in cases])
    fit = least_squares(lambda x: weights * (logs - x[0]), x0=[float(np.mean(logs))])
    return float(math.exp(fit.x[0]))


def fit_power(catalog=None) -> list[dict]:
    """Refit the draw fractions: rows ``name, value, kind, unit, description, fitted_on``."""
    cases = [c for c in power_cases(catalog) if c["role"] == "fit"]
    rows = []
    for state in STATES:
        sel = [c for c in cases if c["state"] == state]
        sources = sorted({c["sources"] for c in sel})
        rows.append({"name": f"{state}_draw_fraction", "value": _fit_fraction(sel), "kind": "fitted",
                     "unit": "share of maximum power", "description": _DESCRIPTIONS[state],
                     "fitted_on": f"{len(sel)} metered MLPerf results ({'; '.join(sources)})"})
    return rows


def constants_path():
    """Where the fitted draw fractions live (the file the facility step reads)."""
    return data_dir() / "calibration" / POWER_CONSTANTS


# --- validation -------------------------------------------------------------------------------

SET_TRAINING = "Run energy, training"
SET_SERVING = "Energy, serving at full load"
SET_FIT = "Server draw, metered"


def power_validation(catalog=None) -> list[dict]:
    """Every fitted power case (predicted by the fit, and with its source left out of the fit) and every
    metered energy check of ``cost_checks.csv`` (predicted by the fit; never fitted), as
    :mod:`aiplan.calibration.validation` rows.

    A check's energy is the kit's draw fraction x the catalog server's maximum x nodes x the metered
    window, against the metered energy of the nodes (the switches are not metered).
    """
    catalog = catalog or load_catalog()
    constants = read_constants(constants_path())
    cases = power_cases(catalog)
    rows = []
    for c in cases:
        state = c["state"]
        pred = constants[f"{state}_draw_fraction"]
        others = [o for o in cases if o["state"] == state and o["role"] == "fit" and o["sources"] != c["sources"]]
        loo = _fit_fraction(others) if others else None
        rows.append(_row(SET_FIT, c["id"], f"{c['system']}, {c['benchmark']} ({state})", "fit", c["gpu"],
                         int(c["nodes"]) * catalog.servers[c["server"]].gpus_per_node, "share of maximum",
                         c["fraction"], pred, loo, c["sources"]))
    for r in check_rows():
        if r["kind"] != "run_energy_kwh":
            continue
        server = catalog.servers[r["server"]]
        nodes, hours = parse_number(r["nodes"]), parse_number(r["window_s"]) / S_PER_HOUR
        pred = constants[f"{r['state']}_draw_fraction"] * server.max_power_kw * nodes * hours
        rows.append(_row(SET_TRAINING if r["state"] == "training" else SET_SERVING, r["id"], r["name"], "check",
                         r["gpu"], int(nodes) * server.gpus_per_node, "kWh", parse_number(r["value"]), pred, pred,
                         r["sources"]))
    return rows


def check_rows() -> list[dict]:
    """The independent checks of ``cost_checks.csv`` (owning costs, run costs, metered energy)."""
    return _read("cost_checks.csv")


def _row(set_, id_, name, role, gpu, gpus, unit, published, predicted, predicted_loo, sources) -> dict:
    error = 100.0 * (predicted / published - 1.0)
    loo = None if predicted_loo is None else 100.0 * (predicted_loo / published - 1.0)
    return {"set": set_, "kind": "power", "id": id_, "name": name, "role": role, "gpu": gpu, "gpus": gpus,
            "precision": None, "unit": unit, "published": published, "predicted": predicted, "error_pct": error,
            "low": None, "high": None, "inside_band": None, "predicted_loo": predicted_loo, "error_loo_pct": loo,
            "inside_band_loo": None, "sources": sources}
