"""Cost and energy against independent figures: ``aiplan validate``'s cost and energy section.

The figures of ``data/calibration/cost_checks.csv`` (role ``check``) are never kit inputs and
nothing is fitted on them:

* owning cost per GPU-hour: SemiAnalysis's published TCO per GPU-hour of an owned GPU for a large
  neocloud and a hyperscaler (its InferenceX dashboard), an investor's breakeven rental price and a
  commentator's 3-year payback; the kit's figure is ``cost.owned_usd_per_gpu_hour_full`` of a
  plan with that GPU, the server a buyer of that kind buys, the buyer profile and the figure's date;
* the ratio of GB200 to H100 owning costs (SemiAnalysis);
* run costs on owned hardware (Epoch AI's hardware capex + energy of named runs): the run's
  published GPU-hours at the kit's owning cost, with servers valued at the run's start; shown
  whole and restricted to Epoch's scope (depreciation and electricity only);
* metered energy (:func:`aiplan.calibration.power.power_validation`).

Each row has the shape of :mod:`aiplan.calibration.validation`'s rows.
"""

from __future__ import annotations

from typing import Any

from ..core.catalog import load_catalog, parse_number
from ..pipeline import run
from ..plan import load_plan
from .power import _read, _row, check_rows, power_validation

SET_OWNING_TARGET = "Owning, large neocloud H100/B200"
SET_OWNING = "Owning, other published figures"
SET_RATIO = "Owning GB200 over H100"
SET_RUN = "Run cost on owned hardware"
#: GPUs of the cluster an owning check is priced on (about 1,000, in whole servers)
CHECK_CLUSTER_GPUS = 1024
#: the GPUs whose large-neocloud owning cost the kit is held to (the issue's target)
TARGET_GPUS = ("h100-sxm", "b200")
#: a small model for plans that only price hardware (the owning cost does not depend on it)
PRICING_MODEL = "llama-3.1-8b"


def owning_plan(gpu: str, server: str, profile: str, purchase_date: str, gpus: int | None = None,
                years: float | None = None, model: str = PRICING_MODEL, tokens: float = 1e9) -> dict[str, Any]:
    """A plan that prices owning ``gpus`` of ``gpu`` in ``server`` for a ``profile`` buyer on ``purchase_date``."""
    catalog = load_catalog()
    per_node = catalog.servers[server].gpus_per_node
    n = gpus or max(1, round(CHECK_CLUSTER_GPUS / per_node)) * per_node
    cost: dict[str, Any] = {"buyer_profile": profile, "purchase_date": purchase_date, "utilisation": 1.0}
    if years:
        cost["years"] = years
    return {"name": f"{gpu} owned by a {profile}", "model": model,
            "workload": {"kind": "pretrain", "tokens": tokens}, "cluster": {"gpu": gpu, "gpus": n},
            "facility": {"server": server}, "cost": cost}


def owned_cost(plan: dict) -> dict[str, Any]:
    """The owning cost per GPU-hour at full use and its parts for ``plan`` (the pipeline up to the cost step)."""
    cost = run(load_plan(plan), until="cost")["cost"]
    return {k: cost[k] for k in ("owned_usd_per_gpu_hour_full", "owned_per_gpu_hour")}


def _owning_rows(checks: list[dict]) -> list[dict]:
    rows = []
    for r in checks:
        if r["kind"] not in ("owning_usd_per_gpu_hour", "owning_ratio"):
            continue
        years = parse_number(r["years"])
        cost = owned_cost(owning_plan(r["gpu"], r["server"], r["buyer_profile"], r["purchase_date"], years=years))
        if r["kind"] == "owning_ratio":
            ref = next(c for c in checks if c["kind"] == "owning_usd_per_gpu_hour" and c["gpu"] == r["run"]
                       and c["buyer_profile"] == r["buyer_profile"])
            base = owned_cost(owning_plan(ref["gpu"], ref["server"], ref["buyer_profile"], r["purchase_date"]))
            ratio = cost["owned_usd_per_gpu_hour_full"] / base["owned_usd_per_gpu_hour_full"]
            rows.append(_row(SET_RATIO, r["id"], r["name"], "check", r["gpu"], None, "ratio",
                             parse_number(r["value"]), ratio, ratio, r["sources"]))
            continue
        target = r["buyer_profile"] == "large-neocloud" and r["gpu"] in TARGET_GPUS and r["sources"].startswith(
            "semianalysis-inferencex")
        pred = cost["owned_usd_per_gpu_hour_full"]
        rows.append(_row(SET_OWNING_TARGET if target else SET_OWNING, r["id"], r["name"], "check", r["gpu"], None,
                         "USD/GPU-h", parse_number(r["value"]), pred, pred, r["sources"]))
    return rows


def _run_rows(checks: list[dict]) -> list[dict]:
    runs = {r["id"]: r for r in _read("training_runs.csv")}
    rows = []
    for r in checks:
        if r["kind"] != "run_cost_usd":
            continue
        published_run = runs[r["run"]]
        gpu_hours = parse_number(published_run["gpu_hours"])
        cost = owned_cost(owning_plan(r["gpu"], r["server"], r["buyer_profile"], r["purchase_date"]))
        parts = cost["owned_per_gpu_hour"]
        whole = cost["owned_usd_per_gpu_hour_full"] * gpu_hours
        scope = (parts["depreciation_usd"] + parts["power_usd"]) * gpu_hours
        published = parse_number(r["value"])
        rows.append(_row(SET_RUN, r["id"], f"{r['name']}: every owning cost", "check", r["gpu"], None, "USD",
                         published, whole, whole, r["sources"]))
        rows.append(_row(SET_RUN, r["id"] + "s", f"{r['name']}: depreciation and electricity only", "check",
                         r["gpu"], None, "USD", published, scope, scope, r["sources"]))
    return rows


def cost_energy_rows() -> list[dict]:
    """Every cost and energy check (and the fitted power cases) as validation rows."""
    checks = [r for r in check_rows() if r["role"] == "check"]
    return _owning_rows(checks) + _run_rows(checks) + power_validation()
