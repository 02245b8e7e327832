"""Serving calibration: published throughput, the fit of the serving constants, and its check.

Two sets of published results, kept apart:

* **fit** (``set='fit'``): MLPerf Inference v4.1 closed, 8-accelerator systems
  (``data/calibration/serving_fit_mlperf_v4.1.csv``) and results of the same vintage, before
  2025-07-01 (``serving_fit_extra.csv``: the TensorRT-LLM v0.19.0 performance tables and AMD's
  MI300X vLLM page). The constants of ``serving_constants.csv`` are fitted on these alone.
* **check** (``set='check'``): MLPerf Inference v5.0 and v5.1 closed, 8-GPU systems
  (``serving_check_mlperf_v5.csv``). Never fitted; they say how good the numbers are.

Every case is predicted with the serving engine of :mod:`aiplan.model.serving`: Offline rows at
the batch memory allows, Server and Interactive rows at the largest batch whose TTFT and TPOT
meet the benchmark's limits (``serving_benchmarks.csv``), on the tensor-parallel degree that
gives the most throughput on the system's GPUs (the degree published for the perf tables).
The fit minimises the weighted squared log error (Levenberg-Marquardt on the log constants, numpy
only); the leave-one-out errors refit without each group of identical runs.

Public functions: :func:`serving_cases`, :func:`predict_cases`, :func:`fit_serving`,
:func:`serving_validation` and :func:`write_constants`.
"""

from __future__ import annotations

import csv
import math
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..core.catalog import (
    data_dir,
    forget_constants,
    load_catalog,
    mlperf_benchmarks,
    mlperf_latency_limits_ms,
    parse_number,
)
from ..core.units import BYTES_PER_ELEMENT, BYTES_PER_GB
from ..model.params import model_param_counts
from ..model.serving import (
    at_slo,
    constants_for,
    constants_path,
    offline,
    serving_constants,
    serving_inputs,
    stack_inputs,
)
from ..plan import CLUSTER

#: fit and check files (``data/calibration/``) and the set each belongs to
FILES = {"serving_fit_mlperf_v4.1.csv": "fit", "serving_fit_extra.csv": "fit",
         "serving_check_mlperf_v5.csv": "check"}

#: catalog models a published model maps to because the architecture is identical
#: (Llama 3.3 70B = Llama 3.1 70B: same configuration, new post-training; Meta model card) [meta-llama3.3-model-card]
MODEL_ALIASES = {"llama-3.3-70b": "llama-3.1-70b"}

#: the constants fitted, with their search bounds (values outside are not tried)
PARAMETERS: dict[str, tuple[float, float]] = {
    "decode_bw_efficiency": (0.3, 1.0),
    "decode_compute_efficiency": (0.05, 1.0),
    "prefill_efficiency": (0.1, 1.0),
    "step_overhead_s_per_layer": (1e-6, 1e-3),
    "sequence_overhead_s_per_layer": (1e-10, 1e-5),
    "tp_scaling_efficiency": (0.5, 1.0),
    "server_load_factor": (0.5, 1.0),
    "engine_max_batch": (64.0, 16384.0),
    "engine_max_tokens_per_step": (1024.0, 131072.0),
    "family_efficiency.cdna3": (0.2, 2.0),
    "fp4_compute_efficiency": (0.2, 2.0),
    "input_tokens_mean.llama2-70b": (50.0, 1024.0),
    "input_tokens_mean.mixtral-8x7b": (50.0, 2048.0),
}

#: units and notes written beside each constant
UNITS = {"step_overhead_s_per_layer": "s", "sequence_overhead_s_per_layer": "s", "input_tokens_mean": "tokens",
         "engine_max_batch": "sequences", "engine_max_tokens_per_step": "tokens"}
NOTES = {
    "decode_bw_efficiency": "share of the datasheet memory bandwidth a step reaches reading weights and KV cache",
    "decode_compute_efficiency": "share of the dense peak (at the weight precision) decode tokens reach",
    "prefill_efficiency": "share of the dense peak (at the weight precision) prompt tokens reach (chunked prefill)",
    "step_overhead_s_per_layer": "fixed time of a continuous-batching step per layer (launches, synchronisation, "
                                 "scheduling)",
    "sequence_overhead_s_per_layer": "time of a step per layer for each running sequence (attention kernels, "
                                     "sampling, the engine's bookkeeping)",
    "tp_scaling_efficiency": "efficiency kept per doubling of the tensor-parallel degree",
    "family_efficiency": "factor on every efficiency for GPUs of this catalog family",
    "fp4_compute_efficiency": "factor on the compute efficiencies for FP4 (NVFP4/MXFP4) matmuls, at the FP4 peak",
    "server_load_factor": "share of the latency-constrained rate a Poisson load (MLPerf Server) sustains",
    "engine_max_batch": "most sequences a serving engine runs at once per replica (its batch limit)",
    "engine_max_tokens_per_step": "most tokens (decode + prompt chunk) a serving engine puts in one step",
    "input_tokens_mean": "mean prompt length of the MLPerf benchmark (not published in its rules)",
    "source_factor": "published / predicted for this source's tables (nuisance factor: reads the source, not used "
                     "for plans)",
}

#: a fit case is left out when its weights take more than this share of the usable memory: the
#: KV room left is within the uncertainty of what the engine reserves (judgement)
WEIGHTS_SHARE_MAX = 0.90



# --- cases -----------------------------------------------------------------------------------------


def _read(name: str) -> list[dict]:
    with open(data_dir() / "calibration" / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))




def _limits(bench: dict, scenario: str) -> tuple[float | None, float | None]:
    return mlperf_latency_limits_ms(scenario, bench["benchmark"], bench["round"])


def _mlperf_case(row: dict, set_: str) -> dict:
    bench = mlperf_benchmarks()[(row["benchmark"], row["round"])]
    ttft, tpot = _limits(bench, row["scenario"])
    kv = row["aiplan_kv_precision"]
    prompt = parse_number(bench["input_tokens_mean"])
    system = row["platform"] or row["system"]
    return {
        "id": row["id"], "set": set_, "round": row["round"], "source": "mlperf", "benchmark": row["benchmark"],
        "model": row["aiplan_model"], "gpu": row["aiplan_gpu"], "scenario": row["scenario"],
        "weight_precision": row["aiplan_weight_precision"], "kv_precision": kv or "bf16",
        "kv_note": "" if kv else "KV dtype not stated: the engine default (activation dtype, bf16) assumed",
        "gpus": int(row["accelerators"]), "tensor_parallel": None, "max_batch": None,
        "prompt_tokens": prompt, "prompt_param": None if prompt else f"input_tokens_mean.{row['benchmark']}",
        "ttft_prompt_tokens": parse_number(bench["input_tokens_max"]),
        "output_tokens": parse_number(row["out_tokens_per_sample_run"]) or parse_number(bench["output_tokens_mean"]),
        "ttft_ms": ttft, "tpot_ms": tpot, "published_tokens_per_s": float(row["tokens_per_s"]),
        "group": "|".join((row["round"], row["submitter"], system, row["benchmark"], row["scenario"])),
        "loo_group": "|".join((row["round"], row["submitter"], system, row["benchmark"])),
        "sources": row["sources"], "source_factor": None,
    }


def _extra_case(row: dict) -> dict:
    kv = row["kv_precision"]
    return {
        "id": row["id"], "set": "fit", "round": row["published_date"], "source": "table", "benchmark": "",
        "model": row["model"], "gpu": row["gpu"], "scenario": "Offline",
        "weight_precision": row["weight_precision"], "kv_precision": kv or "fp8",
        "kv_note": "" if kv else "KV dtype not stated: FP8 assumed (the quantised checkpoints' KV cache)",
        "gpus": int(row["gpus"]), "tensor_parallel": int(row["tensor_parallel"]),
        "max_batch": parse_number(row["concurrency_or_batch"]),
        "prompt_tokens": float(row["input_tokens"]), "prompt_param": None, "ttft_prompt_tokens": None,
        "output_tokens": float(row["output_tokens"]), "ttft_ms": None, "tpot_ms": None,
        "published_tokens_per_s": float(row["output_tokens_per_s"]), "group": row["id"], "sources": row["sources"],
        "loo_group": "|".join((row["source_table"][:24], row["model"], row["gpu"], row["tensor_parallel"])),
        "source_factor": None,
    }


def _skip_reason(case: dict, catalog) -> str | None:
    model = MODEL_ALIASES.get(case["model"], case["model"])
    if model not in catalog.models:
        return f"model {case['model']} is not in the catalog"
    if case["gpu"] not in catalog.gpus:
        return f"GPU {case['gpu']} is not in the catalog (no catalog row has an identical architecture)"
    if case["weight_precision"] == "fp4" and not catalog.gpus[case["gpu"]].fp4_tflops:
        return f"fp4 on {case['gpu']}, which has no FP4 rate in the catalog"
    return None


def serving_cases(catalog=None) -> list[dict]:
    """Every published serving result of the fit and check files as a case dict.

    Keys: ``id``, ``set`` (fit | check), ``round``, ``model`` (catalog id after
    :data:`MODEL_ALIASES`), ``gpu``, ``scenario`` (Offline | Server | Interactive),
    ``weight_precision``, ``kv_precision``, ``gpus``, ``tensor_parallel`` (None: the kit picks),
    ``prompt_tokens`` (None when fitted: ``prompt_param`` names the constant),
    ``output_tokens``, ``ttft_ms``/``tpot_ms`` limits, ``published_tokens_per_s`` (output tokens
    of the whole system), ``group`` (identical runs, left out together), ``skipped`` (the reason,
    or None), ``excluded`` (a fit case the fit leaves out, with the reason) and ``sources``.
    """
    catalog = catalog or load_catalog()
    cases = []
    for name, set_ in FILES.items():
        for row in _read(name):
            case = _extra_case(row) if "source_table" in row else _mlperf_case(row, set_)
            case["file"] = name
            case["skipped"] = _skip_reason(case, catalog)
            case["model"] = MODEL_ALIASES.get(case["model"], case["model"])
            case["excluded"] = None
            cases.append(case)
    for case in cases:
        if case["set"] == "fit" and not case["skipped"] and case["tensor_parallel"]:
            share = _weights_share(case, catalog)
            if share > WEIGHTS_SHARE_MAX:
                case["excluded"] = f"weights take {share:.0%} of the usable memory (> {WEIGHTS_SHARE_MAX:.0%})"
    return cases


def _weights_share(case, catalog) -> float:
    gpu = catalog.gpus[case["gpu"]]
    params = model_param_counts(catalog.models[case["model"]])["params"]
    usable = gpu.memory_gb * CLUSTER["usable_memory_fraction"].default
    return params * BYTES_PER_ELEMENT[case["weight_precision"]] / case["tensor_parallel"] / BYTES_PER_GB / usable


# --- prediction --------------------------------------------------------------------------------------


@lru_cache(maxsize=20_000)
def _inputs(model_id, gpu_id, wp, kvp, prompt, output, max_batch) -> dict:
    catalog = load_catalog()
    model = catalog.models[model_id]
    return serving_inputs(model, model_param_counts(model), catalog.gpus[gpu_id], wp, kvp, prompt, output,
                          CLUSTER["usable_memory_fraction"].default, max_batch)


def _tp_options(case, heads) -> list[int]:
    if case["tensor_parallel"]:
        return [case["tensor_parallel"]]
    return [t for t in (1, 2, 4, 8, 16, 32, 64) if t <= case["gpus"] and case["gpus"] % t == 0 and heads % t == 0]


_EXPANDED: dict = {}


def _expand(cases, constants):
    """Rows (case, tp) with their stacked engine inputs, TP and per-row latency limits (cached)."""
    params = sorted({c["prompt_param"] for c in cases if c["prompt_param"]})
    key = (tuple(c["id"] for c in cases), tuple(round(float(constants[p]), 3) for p in params))
    if key not in _EXPANDED:
        if len(_EXPANDED) > 256:
            _EXPANDED.clear()
        _EXPANDED[key] = _build_rows(cases, constants)
    return _EXPANDED[key]


def _build_rows(cases, constants):
    catalog = load_catalog()
    rows, owner, tps = [], [], []
    for i, c in enumerate(cases):
        prompt = c["prompt_tokens"] or constants[c["prompt_param"]]
        inp = _inputs(c["model"], c["gpu"], c["weight_precision"], c["kv_precision"], round(float(prompt), 3),
                      c["output_tokens"], c["max_batch"])
        for tp in _tp_options(c, catalog.models[c["model"]].heads):
            rows.append(inp)
            owner.append(i)
            tps.append(tp)
    s = stack_inputs(rows)
    owner, tps = np.array(owner), np.array(tps, dtype=float)
    lim = {key: np.array([cases[i][key] or np.nan for i in owner], dtype=float)
           for key in ("ttft_ms", "tpot_ms", "ttft_prompt_tokens")}
    return s, owner, tps, lim


def predict_cases(cases: list[dict], constants: dict | None = None) -> np.ndarray:
    """Predicted output tokens per second of each case's whole system (NaN for skipped cases).

    Offline: :func:`~aiplan.model.serving.offline`; Server/Interactive:
    :func:`~aiplan.model.serving.at_slo` at the case's TTFT/TPOT limits, the TTFT for a prompt of
    the benchmark's maximum input (a stand-in for the 99th percentile the rules constrain). The
    tensor-parallel degree is the one that gives the most throughput per GPU.
    """
    constants = constants or serving_constants()
    live = [i for i, c in enumerate(cases) if not c["skipped"]]
    out = np.full(len(cases), np.nan)
    if not live:
        return out
    sub = [cases[i] for i in live]
    s, owner, tp, lim = _expand(sub, constants)
    k = constants_for(constants, s["family"])
    rate = offline(s, k, tp)["tokens_per_s"]
    slo = np.isfinite(lim["tpot_ms"])
    if slo.any():
        idx = np.flatnonzero(slo)
        ss = {key: v[idx] for key, v in s.items()}
        kk = {key: v[idx] for key, v in k.items()}
        prompt = np.where(np.isfinite(lim["ttft_prompt_tokens"][idx]), lim["ttft_prompt_tokens"][idx],
                          ss["prompt_tokens"])
        slo_rate = at_slo(ss, kk, tp[idx], lim["ttft_ms"][idx] / 1e3, lim["tpot_ms"][idx] / 1e3, prompt)
        rate[idx] = slo_rate["tokens_per_s"]
    per_gpu = rate / tp
    best = np.zeros(len(sub))
    np.maximum.at(best, owner, per_gpu)
    gpus = np.array([c["gpus"] if not c["tensor_parallel"] else c["tensor_parallel"] for c in sub], dtype=float)
    factor = np.array([constants.get(c["source_factor"], 1.0) if c["source_factor"] else 1.0 for c in sub])
    out[live] = best * gpus * factor
    return out


# --- fit -------------------------------------------------------------------------------------------------


def _fit_cases(cases):
    return [c for c in cases if c["set"] == "fit" and not c["skipped"] and not c["excluded"]]


def _weights(cases) -> np.ndarray:
    """Case weights: identical runs share one unit; each fit file carries the same total weight (judgement)."""
    groups: dict[str, int] = {}
    for c in cases:
        groups[c["group"]] = groups.get(c["group"], 0) + 1
    w = np.array([1.0 / groups[c["group"]] for c in cases])
    files = sorted({c["file"] for c in cases})
    for f in files:
        mask = np.array([c["file"] == f for c in cases])
        w[mask] /= w[mask].sum()
    return w


def _residuals(cases, constants) -> np.ndarray:
    """log(predicted / published) of each case (a case predicted at 0 counts as 1/1000 of published)."""
    pred = predict_cases(cases, constants)
    pub = np.array([c["published_tokens_per_s"] for c in cases])
    return np.log(np.maximum(pred, 1e-3 * pub) / pub)


#: Levenberg-Marquardt iterations of each leave-one-out refit (from the full fit)
LOO_ITERATIONS = 3

#: scale of the soft-L1 loss on log errors: errors beyond ~10% count linearly, not squared, so a
#: few cases the model cannot describe do not pull every constant (judgement)
ROBUST_SCALE = 0.10


def _robust_loss(r: np.ndarray, weights: np.ndarray) -> float:
    """Weighted soft-L1 loss: sum w 2 c^2 (sqrt(1 + (r/c)^2) - 1), c = :data:`ROBUST_SCALE`."""
    c = ROBUST_SCALE
    return float(np.sum(weights * 2.0 * c * c * (np.sqrt(1.0 + (r / c) ** 2) - 1.0)))


def _clip_log(x: np.ndarray) -> np.ndarray:
    """Log constants clipped to the log of their :data:`PARAMETERS` bounds."""
    return np.clip(x, np.log([b[0] for b in PARAMETERS.values()]), np.log([b[1] for b in PARAMETERS.values()]))


def _to_x(constants: dict) -> np.ndarray:
    """Log constants, inside their bounds (a committed constant rounded to 3 digits may lie just beyond one)."""
    return _clip_log(np.log([constants[n] for n in PARAMETERS]))


def _from_x(x: np.ndarray, base: dict) -> dict:
    return {**base, **{n: float(np.exp(v)) for n, v in zip(PARAMETERS, _clip_log(x))}}


def _jacobian(cases, constants, r0, h=0.02) -> np.ndarray:
    """d residual / d log(constant), one-sided differences (a step of 2%)."""
    x0 = _to_x(constants)
    cols = []
    for i in range(len(x0)):
        x = x0.copy()
        x[i] += h
        trial = _from_x(x, constants)
        dx = np.log(trial[list(PARAMETERS)[i]]) - x0[i]
        if dx == 0:  # at the upper bound: step down
            x[i] -= 2 * h
            trial = _from_x(x, constants)
            dx = np.log(trial[list(PARAMETERS)[i]]) - x0[i]
        cols.append((_residuals(cases, trial) - r0) / dx)
    return np.array(cols).T


def _levenberg_marquardt(cases, weights, start: dict, iterations=40) -> tuple[dict, float]:
    """Weighted least squares on log errors over log constants (Levenberg-Marquardt, numpy only).

    Deterministic: fixed start, finite-difference Jacobian, damping halved on success and
    multiplied by 4 on failure; stops when the loss improves by less than 1e-7 (relative). The
    damping adds a floor of 1/1000 of the mean curvature to every constant, so a constant the data
    hardly move (an engine limit at its bound) takes no wild step that would stall the search.
    """
    best = dict(start)
    r = _residuals(cases, best)
    loss = _robust_loss(r, weights)
    damping = 1e-2
    for _ in range(iterations):
        jac = _jacobian(cases, best, r)
        jw = jac * (weights / np.sqrt(1.0 + (r / ROBUST_SCALE) ** 2))[:, None]  # IRLS weights of the soft-L1 loss
        a, g = jac.T @ jw, jw.T @ r
        improved = False
        for _ in range(8):
            step = np.linalg.solve(a + damping * np.diag(np.diag(a) + 1e-3 * np.mean(np.diag(a))), -g)
            trial = _from_x(_to_x(best) + step, best)
            r_t = _residuals(cases, trial)
            loss_t = _robust_loss(r_t, weights)
            if loss_t < loss:
                gain = (loss - loss_t) / max(loss, 1e-12)
                best, r, loss, improved = trial, r_t, loss_t, True
                damping = max(damping / 2, 1e-6)
                break
            damping *= 4
        if not improved or gain < 1e-7:
            break
    return best, loss


#: where the search starts (judgement: typical shares of peak for inference engines)
START = {"decode_bw_efficiency": 0.8, "decode_compute_efficiency": 0.5, "prefill_efficiency": 0.6,
         "step_overhead_s_per_layer": 5e-5, "sequence_overhead_s_per_layer": 1e-7, "tp_scaling_efficiency": 0.9,
         "server_load_factor": 0.9,
         "engine_max_batch": 2048.0, "engine_max_tokens_per_step": 8192.0, "family_efficiency.cdna3": 1.0,
         "fp4_compute_efficiency": 1.0, "input_tokens_mean.llama2-70b": 500.0,
         "input_tokens_mean.mixtral-8x7b": 500.0}


def fit_serving(cases: list[dict] | None = None) -> dict[str, float]:
    """Fit the serving constants on the fit set; returns ``{name: value}`` (3 significant digits)."""
    cases = _fit_cases(cases or serving_cases())
    best, _ = _levenberg_marquardt(cases, _weights(cases), START)
    return {k: float(_sig3(v)) for k, v in best.items()}


def _loo_errors(cases, constants) -> dict[str, float]:
    """Leave-one-group-out error [%] of each fit case: refit without its group, predict it.

    A group is one MLPerf system on one benchmark (its scenarios and accuracy variants), or one
    table's model x GPU x TP configuration (its input/output lengths). The refit starts from the
    full fit and runs :data:`LOO_ITERATIONS` Levenberg-Marquardt iterations.
    """
    fit = _fit_cases(cases)
    out = {}
    for group in sorted({c["loo_group"] for c in fit}):
        rest = [c for c in fit if c["loo_group"] != group]
        held = [c for c in fit if c["loo_group"] == group]
        refit, _ = _levenberg_marquardt(rest, _weights(rest), constants, iterations=LOO_ITERATIONS)
        pred = predict_cases(held, refit)
        for c, p in zip(held, pred):
            out[c["id"]] = 100.0 * (p / c["published_tokens_per_s"] - 1.0)
    return out


# --- validation ------------------------------------------------------------------------------------------


def _precision(c) -> str:
    return f"{c['weight_precision']}/{c['kv_precision']}"


def serving_validation(cases=None, constants=None, loo=True) -> dict:
    """Every case with published and predicted throughput, errors, and the summary.

    Returns ``{"rows": [...], "summary": {...}}``. Each row: ``id``, ``set``, ``round``,
    ``model``, ``gpu``, ``family``, ``scenario``, ``precision`` (weights/KV),
    ``published_tokens_per_s``, ``predicted_tokens_per_s``, ``error_pct`` (predicted /
    published - 1), ``loo_error_pct`` (fit rows), ``skipped`` / ``excluded`` (reasons) and
    ``sources``. The summary gives the median absolute error [%] and the count by set
    (``loo`` for the fit set's leave-one-out errors), and the same by set, GPU family and
    scenario (``by_family_scenario``).
    """
    catalog = load_catalog()
    cases = cases or serving_cases(catalog)
    constants = constants or serving_constants()
    pred = predict_cases(cases, constants)
    loo_err = _loo_errors(cases, constants) if loo else {}
    rows = []
    for c, p in zip(cases, pred):
        gpu = catalog.gpus.get(c["gpu"])
        ok = not c["skipped"] and np.isfinite(p)
        rows.append({
            "id": c["id"], "set": c["set"], "round": c["round"], "model": c["model"], "gpu": c["gpu"],
            "family": gpu.family if gpu else None, "scenario": c["scenario"], "precision": _precision(c),
            "tensor_parallel": c["tensor_parallel"], "published_tokens_per_s": c["published_tokens_per_s"],
            "predicted_tokens_per_s": float(p) if ok else None,
            "error_pct": 100.0 * (p / c["published_tokens_per_s"] - 1.0) if ok else None,
            "loo_error_pct": loo_err.get(c["id"]), "skipped": c["skipped"], "excluded": c["excluded"],
            "note": c["kv_note"], "sources": c["sources"],
        })
    return {"rows": rows, "summary": summarise(rows)}


def median_abs(values) -> float | None:
    """Median of the absolute finite values (None when there are none)."""
    vals = [abs(v) for v in values if v is not None and math.isfinite(v)]
    return float(np.median(vals)) if vals else None


def summarise(rows: list[dict]) -> dict:
    """Median absolute errors [%] and counts by set (check, fit in-sample, fit leave-one-out), family and scenario."""
    used = [r for r in rows if r["error_pct"] is not None and not r["excluded"]]
    check = [r for r in used if r["set"] == "check"]
    fit = [r for r in used if r["set"] == "fit"]
    out = {
        "check": {"median_abs_error_pct": median_abs(r["error_pct"] for r in check), "n": len(check),
                  "skipped": sum(1 for r in rows if r["set"] == "check" and r["skipped"])},
        "fit": {"median_abs_error_pct": median_abs(r["error_pct"] for r in fit), "n": len(fit)},
        "loo": {"median_abs_error_pct": median_abs(r["loo_error_pct"] for r in fit),
                "n": sum(1 for r in fit if r["loo_error_pct"] is not None)},
    }
    groups: dict[tuple, list] = {}
    for r in used:
        err = r["error_pct"] if r["set"] == "check" else r["loo_error_pct"]
        groups.setdefault(("check" if r["set"] == "check" else "loo", r["family"], r["scenario"]), []).append(err)
    out["by_family_scenario"] = [{"set": s, "family": f, "scenario": sc, "n": len(v),
                                  "median_abs_error_pct": median_abs(v),
                                  "median_error_pct": _median_signed(v)}
                                 for (s, f, sc), v in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0])))]
    return out


def _median_signed(values) -> float | None:
    vals = [v for v in values if v is not None and math.isfinite(v)]
    return float(np.median(vals)) if vals else None


# --- constants file --------------------------------------------------------------------------------------

#: relative difference allowed between the committed constants and a refit (3 significant digits)
REFIT_TOLERANCE = 0.01


def differences(committed: dict, refit: dict, tolerance: float = REFIT_TOLERANCE) -> list[str]:
    """Constants whose committed value differs from the refit by more than ``tolerance`` (relative)."""
    out = []
    for name in sorted(set(committed) | set(refit)):
        a, b = committed.get(name), refit.get(name)
        if a is None or b is None or abs(a - b) > tolerance * max(abs(a), abs(b)):
            out.append(f"{name}: committed {a}, refit {b}")
    return out



def write_constants(constants: dict[str, float], path: str | Path | None = None, cases=None) -> Path:
    """Write ``serving_constants.csv``: name, value, unit, fitted_on (the fit files), note."""
    path = Path(path or constants_path())
    cases = _fit_cases(cases or serving_cases())
    files = ";".join(sorted({c["file"] for c in cases}))
    n = len(cases)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["name", "value", "unit", "fitted_on", "note"])
        for name, value in constants.items():
            base = name.split(".")[0]
            unit = UNITS.get(base, "-")
            note = NOTES.get(base, "")
            if "." in name:
                note = f"{note} ({name.split('.', 1)[1]})"
            w.writerow([name, _sig3(value), unit, f"{files} ({n} cases)", note])
    _read_cache_clear()
    return path


def _sig3(value: float) -> str:
    """``value`` to 3 significant digits, without exponent (1310, 0.000263)."""
    return np.format_float_positional(value, precision=3, unique=False, fractional=False, trim="-")


def _read_cache_clear() -> None:
    forget_constants()
