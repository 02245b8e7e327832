"""Training calibration: the published cases, the fit of the efficiency model and its validation.

Three kinds of published case, each in ``data/calibration/`` with its sources and a ``role``
(``fit`` or ``check``; check cases are never used to fit):

* steady-state throughput tables (``training_throughput.csv``): MFU measured over a stretch of
  training, against the BF16 peak;
* MLPerf Training time-to-train (``mlperf_training.csv``): v4.0-v4.1 fit, v5.0-v5.1 check;
* end-to-end runs with published GPU-hours (``training_runs.csv``): runs published before
  mid-2025 fit the end-to-end overhead; later runs check it.

:func:`fit_training` fits :mod:`aiplan.model.efficiency`'s constants (weighted ridge on ln MFU,
each source table weighted 1/sqrt(rows) so that no single table dominates; then the overhead as
the weighted mean log-ratio of published to steady-state GPU-hours; then the band from the
leave-one-source-out errors). :func:`training_validation` lists every case with predicted,
published, error, inside-the-band and the leave-one-source-out figures.
"""

from __future__ import annotations

import csv
import dataclasses
import math

import numpy as np

from ..cluster import reliability, storage
from ..core.catalog import data_dir, load_catalog, parse_number
from ..core.units import S_PER_HOUR
from ..model.efficiency import (
    ADAPTER_METHODS,
    LOW_PRECISION_GROUP,
    efficiency_features,
    is_moe,
    steady_mfu_bf16,
    training_constants,
    training_judgements,
)
from ..model.memory import resumable_checkpoint_bytes_per_param
from ..model.params import (
    attention_flops_per_token_fwd,
    model_attention_flops_fwd,
    model_param_counts,
    training_flops_per_token,
)
from ..plan import LLAMA3_INTERRUPTIONS_PER_GPU_YEAR

#: GPUs assumed for a published run that does not state its GPU count (enters only the scale term)
UNKNOWN_RUN_GPUS = 1024
#: restart time after an interruption used for the published runs [min] (the plan default)
RUN_RESTART_MIN = 10.0
#: ridge penalty on the non-intercept coefficients (in units of the summed weights)
RIDGE = 0.002
#: prediction-interval percentiles of the leave-one-source-out log errors
BAND_PERCENTILES = (10, 90)
#: regressors fitted alongside the family intercepts
SHARED_TERMS = ("size_small", "size_large", "scale", "lora_bandwidth", "moe", "lora", "production", "mlperf")
LOW_PRECISION_TERMS = tuple(f"low_precision.{g}" for g in sorted(set(LOW_PRECISION_GROUP.values())))


def _data(name):
    return data_dir() / "calibration" / name


def _read(name) -> list[dict]:
    with open(_data(name), newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))




# --- FLOPs of a case -------------------------------------------------------------------------


def _flops_per_token(catalog, model_id, method="full", seq_len=None, vocab=None, row=None):
    """(model FLOPs per token, active params, total params, MoE) of a catalog model or a row's dims."""
    if model_id:
        model = catalog.models[model_id]
        if vocab:
            model = dataclasses.replace(model, vocab=int(vocab))
        counts = model_param_counts(model)
        active, total = float(counts["active_params"]), float(counts["params"])
        attn = float(model_attention_flops_fwd(model, seq_len))
    else:
        active = parse_number(row["active_params"]) or parse_number(row["params"])
        total = parse_number(row["params"]) or active
        layers, hidden, heads = (parse_number(row.get(k)) for k in ("layers", "hidden", "heads"))
        if layers and hidden and heads:
            qk = parse_number(row.get("qk_head_dim")) or hidden / heads
            v = parse_number(row.get("v_head_dim")) or hidden / heads
            attn = float(attention_flops_per_token_fwd(layers, seq_len, heads, qk, v))
        else:
            attn = 0.0
    grads = 0.0 if method in ADAPTER_METHODS else 1.0
    return float(training_flops_per_token(active, attn, grads)), active, total, is_moe(total, active)


def _interruption_goodput(gpus, params, hidden, precision="bf16"):
    """Goodput of the kit's interruption model for a run of ``params`` on ``gpus`` GPUs [fraction]."""
    size_gb = storage.checkpoint_gb(params, resumable_checkpoint_bytes_per_param(precision, "adamw", hidden or 8192))
    write_s = float(storage.write_time_s(size_gb, float(storage.read_gb_per_s_rule(gpus))))
    mtbf_s = float(reliability.mtbf_h(reliability.interruptions_per_day(gpus, LLAMA3_INTERRUPTIONS_PER_GPU_YEAR)))
    mtbf_s *= S_PER_HOUR
    interval = float(reliability.daly_interval_s(write_s, mtbf_s))
    return float(reliability.goodput(interval, write_s, mtbf_s, RUN_RESTART_MIN * 60.0))


# --- the cases --------------------------------------------------------------------------------


def _case(kind, row_id, name, role, gpu, precision, method, active, moe, gpus, group, sources, **extra):
    return {"kind": kind, "id": row_id, "name": name, "role": role, "gpu": gpu, "precision": precision,
            "method": method, "active": active, "moe": moe, "gpus": gpus, "group": group,
            "sources": frozenset(s for s in sources.split(";") if s), **extra}


def throughput_cases(catalog) -> list[dict]:
    """Steady-state MFU cases (``training_throughput.csv``), MFU against the BF16 peak."""
    out = []
    for r in _read("training_throughput.csv"):
        if r["gpu"] not in catalog.gpus:
            continue
        gpu = catalog.gpus[r["gpu"]]
        mfu = parse_number(r["mfu_bf16"])
        active, total = parse_number(r["active_params"]), parse_number(r["params"])
        if mfu is None and r["catalog_model"] and parse_number(r["tokens_per_s_per_gpu"]):
            fpt, active, total, _ = _flops_per_token(catalog, r["catalog_model"], r["method"],
                                                     parse_number(r["seq_len"]))
            mfu = parse_number(r["tokens_per_s_per_gpu"]) * fpt / (gpu.bf16_tflops * 1e12)
        if mfu is None or not active:
            continue
        out.append(_case("steady", r["id"], r["model"], r["role"], gpu, r["precision"], r["method"], active,
                         is_moe(total, active), parse_number(r["gpus"]) or 8, r["source"], r["sources"],
                         production=r["class"] == "production", mlperf=False, published=mfu))
    return out


def mlperf_cases(catalog) -> list[dict]:
    """MLPerf Training time-to-train cases (``mlperf_training.csv``) [minutes]."""
    out = []
    for r in _read("mlperf_training.csv"):
        gid, prec = r["aiplan_gpu"], r["precision"]
        if gid not in catalog.gpus or prec not in ("bf16", "fp8", "fp4", "int8") or "DUPLICATE" in r["score_basis"]:
            continue
        vocab = 32000 if r["benchmark"] == "llama31_405b" else None  # the benchmark swaps in the Mixtral tokenizer
        method = "lora" if r["benchmark"] == "llama2_70b_lora" else "full"
        fpt, active, _, moe = _flops_per_token(catalog, r["aiplan_model"], method, parse_number(r["seq_len"]), vocab)
        out.append(_case("mlperf", r["id"], f"{r['submitter']} {r['system']}", r["role"], catalog.gpus[gid], prec,
                         method, active, moe, parse_number(r["accelerators"]), f"{r['round']} {r['benchmark']}",
                         r["sources"], production=False, mlperf=True, benchmark=r["benchmark"],
                         round=r["round"], flops=parse_number(r["tokens_to_target_mean"]) * fpt,
                         published=parse_number(r["time_to_train_min"])))
    return out


def run_cases(catalog) -> list[dict]:
    """End-to-end runs with published GPU-hours (``training_runs.csv``) that the kit can compute."""
    out = []
    for r in _read("training_runs.csv"):
        tokens, hours, seq = parse_number(r["tokens"]), parse_number(r["gpu_hours"]), parse_number(r["seq_len"])
        if not (tokens and hours and seq) or r["gpu"] not in catalog.gpus:
            continue
        if not r["model"] and not (parse_number(r["params"]) or parse_number(r["active_params"])):
            continue
        fpt, active, total, moe = _flops_per_token(catalog, r["model"], "full", seq, row=r)
        gpus = parse_number(r["gpus"]) or UNKNOWN_RUN_GPUS
        hidden = catalog.models[r["model"]].hidden if r["model"] else parse_number(r["hidden"])
        out.append(_case("run", r["id"], r["name"], r["role"], catalog.gpus[r["gpu"]], r["precision"] or "bf16",
                         "full", active, moe, gpus, r["sources"].split(";")[0], r["sources"],
                         production=False, mlperf=False, flops=tokens * fpt, published=hours,
                         goodput=_interruption_goodput(gpus, total, hidden, r["precision"] or "bf16"),
                         gpus_stated=bool(parse_number(r["gpus"]))))
    return out


def training_cases(catalog=None) -> list[dict]:
    """Every training calibration case (steady, mlperf, run) with its role."""
    catalog = catalog or load_catalog()
    return throughput_cases(catalog) + mlperf_cases(catalog) + run_cases(catalog)


# --- the fit ----------------------------------------------------------------------------------


def _target(case) -> float:
    """ln MFU_bf16 implied by a steady or MLPerf case."""
    if case["kind"] == "steady":
        return math.log(case["published"])
    seconds = case["published"] * 60.0
    return math.log(case["flops"] / (seconds * case["gpus"] * case["gpu"].bf16_tflops * 1e12))


def _design(cases, families):
    """Design matrix: one intercept per family, then the shared and low-precision terms."""
    names = [f"intercept.{f}" for f in families] + list(SHARED_TERMS) + list(LOW_PRECISION_TERMS)
    x = np.zeros((len(cases), len(names)))
    col = {n: i for i, n in enumerate(names)}
    for i, c in enumerate(cases):
        feats = efficiency_features(c["gpu"], c["precision"], c["active"], c["moe"], c["gpus"], c["method"],
                                    c["production"], c["mlperf"])
        x[i, col[f"intercept.{c['gpu'].family}"]] = 1.0
        for name in SHARED_TERMS:
            x[i, col[name]] = feats[name]
        group = LOW_PRECISION_GROUP.get(c["gpu"].family)
        if group:
            x[i, col[f"low_precision.{group}"]] = feats["low_precision"]
    return x, names


def _weights(cases) -> np.ndarray:
    """1/sqrt(rows of the case's source table) [weight]."""
    groups = {}
    for c in cases:
        groups[c["group"]] = groups.get(c["group"], 0) + 1
    return np.array([1.0 / math.sqrt(groups[c["group"]]) for c in cases])


def _fit_steady(cases) -> dict[str, float]:
    families = sorted({c["gpu"].family for c in cases})
    x, names = _design(cases, families)
    y = np.array([_target(c) for c in cases])
    w = _weights(cases)
    penalty = np.array([0.0 if n.startswith("intercept.") else RIDGE * w.sum() for n in names])
    beta = np.linalg.solve(x.T @ (w[:, None] * x) + np.diag(penalty), x.T @ (w * y))
    return dict(zip(names, beta.tolist()))


def _steady_hours(case, constants, catalog) -> float:
    """Steady-state GPU-hours of a run at the fitted efficiency [GPU-h]."""
    mfu = float(steady_mfu_bf16(case["gpu"], case["precision"], case["active"], case["moe"], case["gpus"],
                                case["method"], catalog, constants))
    return case["flops"] / (case["gpu"].bf16_tflops * 1e12 * mfu) / S_PER_HOUR


def _fit_overhead(runs, constants, catalog) -> float:
    """ln(end-to-end / steady-state GPU-hours), interruptions removed: weighted mean over the runs."""
    r = np.array([math.log(c["published"] * c["goodput"] / _steady_hours(c, constants, catalog)) for c in runs])
    w = _weights(runs)
    return float((w * r).sum() / w.sum())


def _fit(cases, catalog) -> dict[str, float]:
    fit = [c for c in cases if c["role"] == "fit"]
    constants = _fit_steady([c for c in fit if c["kind"] in ("steady", "mlperf")])
    constants["overhead"] = math.exp(_fit_overhead([c for c in fit if c["kind"] == "run"], constants, catalog))
    return constants


def predict(case, constants, catalog) -> float:
    """A case's prediction: MFU (steady), minutes (mlperf) or end-to-end GPU-hours (run).

    NaN when the constants lack the case's GPU family (a leave-one-out fit without it).
    """
    family = case["gpu"].family
    if f"intercept.{family}" not in constants and case["gpu"].id not in training_judgements():
        return math.nan
    if case["kind"] == "run":
        return _steady_hours(case, constants, catalog) * constants["overhead"] / case["goodput"]
    mfu = float(steady_mfu_bf16(case["gpu"], case["precision"], case["active"], case["moe"], case["gpus"],
                                case["method"], catalog, constants, case["production"], case["mlperf"]))
    if case["kind"] == "steady":
        return mfu
    return case["flops"] / (case["gpus"] * case["gpu"].bf16_tflops * 1e12 * mfu) / 60.0


def _loo_predictions(cases, catalog) -> list[float]:
    """Leave-one-source-out prediction of every fit case (refit without the cases sharing a source)."""
    fits = {}
    out = []
    for c in cases:
        if c["role"] != "fit":
            out.append(None)
            continue
        key = c["sources"]
        if key not in fits:
            kept = [d for d in cases if d["role"] == "fit" and not (d["sources"] & key)]
            fits[key] = _fit(kept, catalog)
        out.append(predict(c, fits[key], catalog))
    return out


def fit_training(catalog=None) -> list[dict]:
    """Refit the training constants: rows ``name, value, kind, unit, description, fitted_on``."""
    catalog = catalog or load_catalog()
    cases = training_cases(catalog)
    constants = _fit(cases, catalog)
    loo = _loo_predictions(cases, catalog)
    runs = [(c, p) for c, p in zip(cases, loo) if c["kind"] == "run" and p]
    errors = np.log([c["published"] / p for c, p in runs])
    q10, q90 = np.percentile(errors, BAND_PERCENTILES)
    n = {k: sum(1 for c in cases if c["role"] == "fit" and c["kind"] == k) for k in ("steady", "mlperf", "run")}
    steady_on = f"{n['steady']} throughput-table rows and {n['mlperf']} MLPerf Training v4.0-v4.1 results"
    rows = []
    for name, value in constants.items():
        if name == "overhead":
            continue
        rows.append({"name": name, "value": value, "kind": "fitted", "unit": "ln MFU" if name.startswith("intercept")
                     else "ln MFU per unit", "description": _DESCRIPTIONS.get(name.split(".")[0], name),
                     "fitted_on": steady_on})
    rows.append({"name": "overhead", "value": constants["overhead"], "kind": "fitted", "unit": "ratio",
                 "description": _DESCRIPTIONS["overhead"], "fitted_on": f"{n['run']} published runs"})
    for name, value in (("band.q10", q10), ("band.q90", q90)):
        rows.append({"name": name, "value": float(value), "kind": "derived", "unit": "ln ratio",
                     "description": _DESCRIPTIONS["band"],
                     "fitted_on": f"{len(runs)} published runs, leave-one-source-out"})
    return rows


_DESCRIPTIONS = {
    "intercept": "ln MFU (BF16 peak) of a 10B-parameter dense model on up to 256 GPUs in BF16 for this GPU family",
    "size_small": "change of ln MFU per unit ln(active params / 10B), below 10B",
    "size_large": "change of ln MFU per unit ln(active params / 10B), above 10B",
    "scale": "change of ln MFU per unit ln(GPUs / 256), above 256 GPUs",
    "moe": "change of ln MFU for a mixture of experts",
    "lora": "change of ln MFU for LoRA/QLoRA (FLOPs counted as 4N + attention)",
    "lora_bandwidth": "change of ln MFU per unit ln(memory bandwidth / BF16 peak) for LoRA/QLoRA",
    "production": "change of ln MFU in figures from long production runs (fit only; not applied to plans)",
    "mlperf": "change of ln MFU in MLPerf time-to-train, evaluations included (fit only; not applied to plans)",
    "low_precision": "change of ln MFU (BF16 peak) per doubling of the peak at the training precision",
    "overhead": "end-to-end GPU-hours over steady-state GPU-hours, interruptions excluded",
    "band": "percentile of ln(published / predicted) GPU-hours, leave-one-source-out",
}


# --- validation -------------------------------------------------------------------------------

SET_LABELS = {"run": "Training GPU-hours", "mlperf": "MLPerf Training time-to-train",
              "steady": "Steady-state MFU"}
UNITS = {"run": "GPU-h", "mlperf": "min", "steady": "MFU"}


def training_validation(catalog=None, constants=None) -> list[dict]:
    """Every training case: predicted, published, error, inside the band; leave-one-source-out too.

    The band applies to GPU-hours (the prediction interval of :func:`fit_training`); MLPerf and
    steady-state rows have none. Check cases are predicted by the full fit (they were never
    fitted), so their leave-one-out figures equal the plain ones. A fitted case whose GPU family
    has no other source (AMD CDNA 3: one published table) has no leave-one-out figure (None).
    """
    catalog = catalog or load_catalog()
    constants = constants or training_constants()
    cases = training_cases(catalog)
    loo = _loo_predictions(cases, catalog)
    low_f, high_f = math.exp(constants["band.q10"]), math.exp(constants["band.q90"])
    rows = []
    for c, p_loo in zip(cases, loo):
        pred = predict(c, constants, catalog)
        p_loo = pred if p_loo is None else p_loo
        p_loo = p_loo if math.isfinite(p_loo) else None  # the case's family has no other source
        band = c["kind"] == "run"
        row = {"set": SET_LABELS[c["kind"]], "kind": c["kind"], "id": c["id"], "name": c["name"], "role": c["role"],
               "gpu": c["gpu"].id, "gpus": c["gpus"], "precision": c["precision"], "unit": UNITS[c["kind"]],
               "published": c["published"], "predicted": pred, "error_pct": 100.0 * (pred / c["published"] - 1.0),
               "low": pred * low_f if band else None, "high": pred * high_f if band else None,
               "inside_band": (pred * low_f <= c["published"] <= pred * high_f) if band else None,
               "predicted_loo": p_loo,
               "error_loo_pct": None if p_loo is None else 100.0 * (p_loo / c["published"] - 1.0),
               "inside_band_loo": (p_loo * low_f <= c["published"] <= p_loo * high_f) if band and p_loo else None,
               "sources": ";".join(sorted(c["sources"]))}
        rows.append(row)
    return rows


def judgement_rows() -> list[dict]:
    """GPUs without published training figures and how their efficiency is set."""
    return [{"gpu": g, "like": like, "factor": f} for g, (like, f) in training_judgements().items()]
