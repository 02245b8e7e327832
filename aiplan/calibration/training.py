"""Training calibration: the published cases, the fit of the efficiency model and its validation.

Four kinds of published case, each in ``data/calibration/`` with its sources and a ``role``
(``fit``: published before :data:`~aiplan.model.efficiency.FIT_PUBLISHED_BEFORE`; ``check``:
published later, never used to fit):

* steady-state throughput tables (``training_throughput.csv``): MFU measured over a stretch of
  training, against the BF16 peak, with the global batch where published;
* MLPerf Training time-to-train (``mlperf_training.csv``): v4.0-v5.1 fit, v6.0 check;
* end-to-end runs with published GPU-hours (``training_runs.csv``);
* LoRA against QLoRA throughput measured on the same GPU (``training_qlora.csv``).

:func:`fit_training` fits :mod:`aiplan.model.efficiency`'s constants with
``scipy.optimize.least_squares``: the steady-state terms and the per-step fixed costs together on
ln MFU (each source table weighted 1/sqrt(rows), a soft-L1 loss so that a few odd rows do not
steer the fit, a small ridge on the slopes); then the end-to-end overhead on the runs; the QLoRA
dequantisation cost on the pairs; the band from the leave-one-source-out errors of the runs.
:func:`training_validation` lists every case with predicted, published, error, inside-the-band,
its segment and the leave-one-source-out figures.
"""

from __future__ import annotations

import csv
import dataclasses
import math

import numpy as np
from scipy.optimize import least_squares

from ..cluster import reliability, storage
from ..core.catalog import data_dir, load_catalog, parse_date, parse_number
from ..core.units import BYTES_PER_GB, S_PER_HOUR
from ..model.efficiency import (
    ADAPTER_METHODS,
    LOW_PRECISION_GROUP,
    PRECISION_PEAK,
    effective_mfu,
    efficiency_features,
    is_moe,
    steady_mfu_bf16,
    step_fixed_s,
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

#: GPUs assumed for a published run that does not state its GPU count (enters only the scale term;
#: such a run gets no per-step fixed cost, which needs the GPUs)
UNKNOWN_RUN_GPUS = 1024
#: global batch assumed for a run that states its GPUs but not its batch [tokens] (the plan default); a run
#: whose source publishes its batch gives it in ``global_batch_tokens``
UNKNOWN_RUN_BATCH_TOKENS = 4.0e6
#: ``basis`` of a run whose GPU-hours are a throughput rate its source states (GPU-hours per trillion tokens, or
#: tokens/s per GPU, times the tokens where the source multiplies it out): step time, without the end-to-end
#: overhead and interruptions (DeepSeek's H800 figures [arxiv-2405.04434;arxiv-2412.19437], LLaMA's Table 15
#: [arxiv-2302.13971]); an empty basis is GPU-hours as consumed
RATE_BASIS = "rate"
#: restart time after an interruption used for the published runs [min] (the plan default)
RUN_RESTART_MIN = 10.0
#: ridge penalty on the non-intercept coefficients (in units of the summed weights)
RIDGE = 0.002
#: scale of the soft-L1 loss [ln ratio]: errors beyond about 20% weigh linearly, not quadratically
#: (judgement: a quarter of the rows are off by more than that out of source)
LOSS_SCALE = 0.2
#: prediction-interval percentiles of the leave-one-source-out log errors
BAND_PERCENTILES = (10, 90)
#: regressors fitted alongside the family intercepts
SHARED_TERMS = ("size_small", "size_large", "scale", "precision_bandwidth", "power", "moe", "moe_scale_out",
                "moe_expert_size", "lora", "software_age", "production", "mlperf")
LOW_PRECISION_TERMS = tuple(f"low_precision.{g}" for g in sorted(set(LOW_PRECISION_GROUP.values())))
#: the per-step fixed costs (:func:`aiplan.model.efficiency.step_fixed_s`), fitted >= 0
STEP_TERMS = ("step_dp_exposed", "step_depth_s.hopper", "step_depth_s.other")
#: training number formats a case may name
PRECISIONS = ("bf16", "fp8", "fp4", "int8", *PRECISION_PEAK)


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


def _expert_params(catalog, model_id, row=None) -> float:
    """Parameters of one routed expert's MLP: the catalog model's, else the row's ``expert_params``
    (0: dense, or not published) [parameters]."""
    if model_id:
        return float(model_param_counts(catalog.models[model_id])["params_per_expert"])
    return parse_number((row or {}).get("expert_params")) or 0.0


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
    sources = tuple(s for s in sources.split(";") if s)
    out = {"kind": kind, "id": row_id, "name": name, "role": role, "gpu": gpu, "precision": precision,
           "method": method, "active": active, "moe": moe, "gpus": gpus, "group": group,
           "sources": frozenset(sources), "primary": sources[0] if sources else row_id,
           "batch": None, "seq": None, "fpt": None, "total": active, "trainable": None, "expert": 0.0,
           "rate": False}
    out.update(extra)
    if out["trainable"] is None:
        out["trainable"] = 0.0 if method in ADAPTER_METHODS else out["total"]
    return out


def _years(text) -> float:
    """A (partial) ISO date as a decimal year (a month or year alone: its middle) [years]."""
    day = parse_date(text)
    text = str(text or "")
    middle = 182 if len(text) == 4 else (15 if len(text) == 7 else 0)
    return day.year + (day.timetuple().tm_yday - 1 + middle) / 365.25


def _date_ages(cases, catalog) -> None:
    """Set each case's ``date`` (its primary source's, or its own publication) and ``age``.

    ``age`` = years before the newest fitted result of the case's GPU family (0 at or after it):
    the ``software_age`` regressor of :func:`~aiplan.model.efficiency.efficiency_features`.
    """
    for c in cases:
        if c.get("date") is None:
            c["date"] = _years(catalog.sources[c["primary"]].date)
    newest = {}
    for c in cases:
        if c["role"] == "fit" and c["kind"] != "qlora":
            newest[c["gpu"].family] = max(newest.get(c["gpu"].family, -math.inf), c["date"])
    for c in cases:
        c["age"] = min(0.0, c["date"] - newest.get(c["gpu"].family, c["date"]))


def throughput_cases(catalog) -> list[dict]:
    """Steady-state MFU cases (``training_throughput.csv``), MFU against the BF16 peak."""
    out = []
    for r in _read("training_throughput.csv"):
        if r["gpu"] not in catalog.gpus:
            continue
        gpu = catalog.gpus[r["gpu"]]
        mfu = parse_number(r["mfu_bf16"])
        active, total = parse_number(r["active_params"]), parse_number(r["params"])
        seq = parse_number(r["seq_len"])
        fpt = None
        if r["catalog_model"]:
            fpt, active, total, _ = _flops_per_token(catalog, r["catalog_model"], r["method"], seq)
            if mfu is None and parse_number(r["tokens_per_s_per_gpu"]):
                mfu = parse_number(r["tokens_per_s_per_gpu"]) * fpt / (gpu.bf16_tflops * 1e12)
        if mfu is None or not active:
            continue
        total = total or active
        fpt = fpt or float(training_flops_per_token(active, 0.0, 0.0 if r["method"] in ADAPTER_METHODS else 1.0))
        out.append(_case("steady", r["id"], r["model"], r["role"], gpu, r["precision"], r["method"], active,
                         is_moe(total, active), parse_number(r["gpus"]) or 8, r["source"], r["sources"],
                         production=r["class"] == "production", mlperf=False, published=mfu, total=total,
                         batch=parse_number(r.get("global_batch")), seq=seq, fpt=fpt,
                         expert=_expert_params(catalog, r["catalog_model"], r)))
    return out


def mlperf_cases(catalog) -> list[dict]:
    """MLPerf Training time-to-train cases (``mlperf_training.csv``) [minutes]."""
    out = []
    for r in _read("mlperf_training.csv"):
        gid, prec = r["aiplan_gpu"], r["precision"]
        if gid not in catalog.gpus or prec not in PRECISIONS or "DUPLICATE" in r["score_basis"]:
            continue
        vocab = 32000 if r["benchmark"] == "llama31_405b" else None  # the benchmark swaps in the Mixtral tokenizer
        method = "lora" if r["benchmark"] == "llama2_70b_lora" else "full"
        seq = parse_number(r["seq_len"])
        fpt, active, total, moe = _flops_per_token(catalog, r["aiplan_model"], method, seq, vocab)
        results = next((s for s in r["sources"].split(";") if "training-results" in s), r["sources"])
        out.append(_case("mlperf", r["id"], f"{r['submitter']} {r['system']}", r["role"], catalog.gpus[gid], prec,
                         method, active, moe, parse_number(r["accelerators"]), f"{r['round']} {r['benchmark']}",
                         r["sources"], production=False, mlperf=True, benchmark=r["benchmark"],
                         round=r["round"], flops=parse_number(r["tokens_to_target_mean"]) * fpt,
                         published=parse_number(r["time_to_train_min"]), total=total, primary=results,
                         batch=parse_number(r["global_batch_size"]), seq=seq, fpt=fpt,
                         expert=_expert_params(catalog, r["aiplan_model"])))
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
        stated = bool(parse_number(r["gpus"]))
        gpus = parse_number(r["gpus"]) or UNKNOWN_RUN_GPUS
        hidden = catalog.models[r["model"]].hidden if r["model"] else parse_number(r["hidden"])
        batch_tokens = parse_number(r.get("global_batch_tokens")) or UNKNOWN_RUN_BATCH_TOKENS
        out.append(_case("run", r["id"], r["name"], r["role"], catalog.gpus[r["gpu"]], r["precision"] or "bf16",
                         "full", active, moe, gpus, r["sources"].split(";")[0], r["sources"],
                         production=False, mlperf=False, flops=tokens * fpt, published=hours, total=total,
                         goodput=_interruption_goodput(gpus, total, hidden, r["precision"] or "bf16"),
                         gpus_stated=stated, batch=batch_tokens / seq if stated else None, seq=seq,
                         fpt=fpt, date=_years(r["published"]), expert=_expert_params(catalog, r["model"], r),
                         rate=(r.get("basis") or "").strip() == RATE_BASIS))
    return out


def qlora_cases(catalog) -> list[dict]:
    """QLoRA rows paired with the LoRA row measured beside them (``training_qlora.csv``), catalog GPUs only.

    Each case holds the seconds per micro-batch of both (``lora_s``, ``published``) and the GPU's
    memory bandwidth, so that the dequantisation cost per micro-batch is their difference.
    """
    rows = {r["id"]: r for r in _read("training_qlora.csv")}
    out = []
    for r in rows.values():
        base = rows.get(r["pair"])
        if r["method"] != "qlora" or base is None or r["gpu"] not in catalog.gpus:
            continue
        out.append(_case("qlora", r["id"], f"{r['model']} {r['quantization']} vs LoRA", r["role"],
                         catalog.gpus[r["gpu"]], "bf16", "qlora", parse_number(r["params"]), False,
                         parse_number(r["gpus"]), r["sources"], r["sources"], published=_micro_batch_s(r),
                         lora_s=_micro_batch_s(base), quantized=parse_number(r["params"]), production=False,
                         mlperf=False))
    return out


def _micro_batch_s(row) -> float:
    """Seconds per micro-batch of a LoRA/QLoRA row: its tokens at tokens/s, else its samples at samples/s [s]."""
    rate = parse_number(row["tokens_per_s_per_gpu"])
    if rate:
        return parse_number(row["micro_batch"]) * parse_number(row["seq_len"]) / rate
    return parse_number(row["micro_batch"]) / parse_number(row["samples_per_s"])


def training_cases(catalog=None) -> list[dict]:
    """Every training calibration case (steady, mlperf, run, qlora) with its role."""
    catalog = catalog or load_catalog()
    cases = throughput_cases(catalog) + mlperf_cases(catalog) + run_cases(catalog) + qlora_cases(catalog)
    _date_ages(cases, catalog)
    return cases


# --- the fit ----------------------------------------------------------------------------------


def _target(case) -> float:
    """ln MFU_bf16 implied by a steady or MLPerf case (per-step fixed costs and evaluations included)."""
    if case["kind"] == "steady":
        return math.log(case["published"])
    seconds = case["published"] * 60.0
    return math.log(case["flops"] / (seconds * case["gpus"] * case["gpu"].bf16_tflops * 1e12))


def _step_flops_at_peak_s(case) -> float:
    """A step's model FLOPs / (GPUs x BF16 peak) [s]; infinite when the case's global batch is unknown."""
    if not case["batch"]:
        return math.inf
    return case["fpt"] * case["batch"] * case["seq"] / (case["gpus"] * case["gpu"].bf16_tflops * 1e12)


def _step_features(case) -> np.ndarray:
    """The per-step fixed-cost regressors of a case: each :data:`STEP_TERMS` constant set to 1 in turn [s]."""
    if not case["batch"]:
        return np.zeros(len(STEP_TERMS))
    return np.array([float(step_fixed_s(case["gpu"], case["gpus"], case["batch"], case["active"], case["trainable"],
                                        case["total"], case["method"], {t: float(t == name) for t in STEP_TERMS}))
                     for name in STEP_TERMS])


@dataclasses.dataclass
class _Design:
    """The fit's arrays for a list of cases (built once; fits use row subsets)."""

    names: list
    x: np.ndarray  # linear regressors of ln MFU
    at_peak: np.ndarray  # step time at the BF16 peak [s]
    steps: np.ndarray  # per-step fixed-cost regressors [s]
    y: np.ndarray  # ln MFU implied by the case (NaN for runs)


def _design(cases) -> _Design:
    families = sorted({c["gpu"].family for c in cases})
    names = [f"intercept.{f}" for f in families] + list(SHARED_TERMS) + list(LOW_PRECISION_TERMS)
    col = {n: i for i, n in enumerate(names)}
    x = np.zeros((len(cases), len(names)))
    for i, c in enumerate(cases):
        feats = efficiency_features(c["gpu"], c["precision"], c["active"], c["moe"], c["gpus"], c["method"],
                                    c["production"], c["mlperf"], c["age"], c["expert"])
        x[i, col[f"intercept.{c['gpu'].family}"]] = 1.0
        for name in SHARED_TERMS:
            x[i, col[name]] = feats[name]
        group = LOW_PRECISION_GROUP.get(c["gpu"].family)
        if group:
            x[i, col[f"low_precision.{group}"]] = feats["low_precision"]
    return _Design(names, x, np.array([_step_flops_at_peak_s(c) for c in cases]),
                   np.array([_step_features(c) for c in cases]).reshape(len(cases), len(STEP_TERMS)),
                   np.array([_target(c) if c["kind"] in ("steady", "mlperf") else math.nan for c in cases]))


def _weights(cases) -> np.ndarray:
    """1/sqrt(rows of the case's source table) [weight]."""
    groups = {}
    for c in cases:
        groups[c["group"]] = groups.get(c["group"], 0) + 1
    return np.array([1.0 / math.sqrt(groups[c["group"]]) for c in cases])


def _weighted_soft_l1(weights, data_rows):
    """A ``least_squares`` loss: weighted soft-L1 (scale :data:`LOSS_SCALE`) on the data rows, plain squares after."""
    s2 = LOSS_SCALE ** 2

    def loss(z):
        out = np.empty((3, z.size))
        d = z[:data_rows] / s2
        root = np.sqrt(1.0 + d)
        out[0, :data_rows] = weights * s2 * 2.0 * (root - 1.0)
        out[1, :data_rows] = weights / root
        out[2, :data_rows] = -0.5 * weights / s2 / root ** 3
        out[0, data_rows:], out[1, data_rows:], out[2, data_rows:] = z[data_rows:], 1.0, 0.0
        return out

    return loss


def _fit_steady(cases, design, rows) -> dict[str, float]:
    """Intercepts, slopes and per-step fixed costs on the steady and MLPerf cases ``rows``."""
    x, at_peak, steps, y = design.x[rows], design.at_peak[rows], design.steps[rows], design.y[rows]
    used = np.abs(x).sum(axis=0) > 0
    x, names = x[:, used], [n for n, u in zip(design.names, used) if u]
    w = _weights([cases[i] for i in rows])
    nb, nt = len(names), len(STEP_TERMS)
    ridge = np.array([0.0 if n.startswith("intercept.") else math.sqrt(RIDGE * w.sum()) for n in names])

    def residuals(p):
        ln = x @ p[:nb]
        return np.concatenate([ln - np.log1p(steps @ p[nb:] * np.exp(ln) / at_peak) - y, ridge * p[:nb]])

    start = np.linalg.lstsq(x * np.sqrt(w)[:, None], y * np.sqrt(w), rcond=None)[0]
    fit = least_squares(residuals, np.concatenate([start, np.full(nt, 0.01)]), loss=_weighted_soft_l1(w, len(rows)),
                        bounds=(np.r_[np.full(nb, -np.inf), np.zeros(nt)], np.full(nb + nt, np.inf)), x_scale="jac")
    return dict(zip(names + list(STEP_TERMS), fit.x.tolist()))


def _robust_mean(values, weights) -> float:
    """The value minimising the weighted soft-L1 loss of ``values - value`` (a robust weighted mean)."""
    values, weights = np.asarray(values, dtype=float), np.asarray(weights, dtype=float)
    fit = least_squares(lambda p: values - p[0], [float(np.average(values, weights=weights))],
                        loss=_weighted_soft_l1(weights, len(values)))
    return float(fit.x[0])


def _mfu(case, constants, catalog) -> float:
    """Predicted MFU_bf16 of a case, per-step fixed costs included [fraction]."""
    steady = float(steady_mfu_bf16(case["gpu"], case["precision"], case["active"], case["moe"], case["gpus"],
                                   case["method"], catalog, constants, case["production"], case["mlperf"], case["age"],
                                   case["expert"]))
    if not case["batch"]:
        return steady
    fixed = float(step_fixed_s(case["gpu"], case["gpus"], case["batch"], case["active"], case["trainable"],
                               case["total"], case["method"], constants))
    return float(effective_mfu(steady, _step_flops_at_peak_s(case), fixed))


def _steady_hours(case, constants, catalog) -> float:
    """GPU-hours of a run at the fitted efficiency, before the end-to-end overhead [GPU-h]."""
    return case["flops"] / (case["gpu"].bf16_tflops * 1e12 * _mfu(case, constants, catalog)) / S_PER_HOUR


def _dequant_bytes(case) -> float:
    """Dequantisation traffic per quantised weight implied by a QLoRA case [B/param]."""
    return (case["published"] - case["lora_s"]) * case["gpu"].memory_bw_gb_per_s * BYTES_PER_GB / case["quantized"]


def _fit(cases, catalog, design=None, rows=None) -> dict[str, float]:
    """All constants from the fit cases among ``rows`` (default: every case)."""
    design = design or _design(cases)
    rows = range(len(cases)) if rows is None else rows
    fit = [i for i in rows if cases[i]["role"] == "fit"]
    constants = _fit_steady(cases, design, [i for i in fit if cases[i]["kind"] in ("steady", "mlperf")])
    runs = [cases[i] for i in fit if cases[i]["kind"] == "run" and not cases[i]["rate"]]  # rates hold no overhead
    ratios = [math.log(c["published"] * c["goodput"] / _steady_hours(c, constants, catalog)) for c in runs]
    constants["overhead"] = math.exp(_robust_mean(ratios, _weights(runs)))
    pairs = [cases[i] for i in fit if cases[i]["kind"] == "qlora"]
    constants["qlora_dequant_bytes_per_param"] = math.exp(_robust_mean([math.log(_dequant_bytes(c)) for c in pairs],
                                                                       _weights(pairs)))
    return constants


def predict(case, constants, catalog) -> float:
    """A case's prediction: MFU (steady), minutes (mlperf), end-to-end GPU-hours (run) or QLoRA s per micro-batch.

    NaN when the constants lack the case's GPU family (a leave-one-out fit without it).
    """
    family = case["gpu"].family
    if case["kind"] == "qlora":
        return case["lora_s"] + constants["qlora_dequant_bytes_per_param"] * case["quantized"] / (
            case["gpu"].memory_bw_gb_per_s * BYTES_PER_GB)
    if f"intercept.{family}" not in constants and case["gpu"].id not in training_judgements():
        return math.nan
    if case["kind"] == "run":
        if case["rate"]:  # a throughput rate: step time only
            return _steady_hours(case, constants, catalog)
        return _steady_hours(case, constants, catalog) * constants["overhead"] / case["goodput"]
    mfu = _mfu(case, constants, catalog)
    if case["kind"] == "steady":
        return mfu
    return case["flops"] / (case["gpus"] * case["gpu"].bf16_tflops * 1e12 * mfu) / 60.0


def _loo_predictions(cases, catalog) -> list[float | None]:
    """Leave-one-source-out prediction of every fit case (refit without the cases of its primary source).

    A case's primary source is the first it names (MLPerf: the round's results repository).
    """
    design = _design(cases)
    fits = {}
    out = []
    for c in cases:
        if c["role"] != "fit":
            out.append(None)
            continue
        key = c["primary"]
        if key not in fits:
            fits[key] = _fit(cases, catalog, design, [i for i, d in enumerate(cases) if d["primary"] != key])
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
    n = {k: sum(1 for c in cases if c["role"] == "fit" and c["kind"] == k)
         for k in ("steady", "mlperf", "run", "qlora")}
    rates = sum(1 for c in cases if c["role"] == "fit" and c["kind"] == "run" and c["rate"])
    steady_on = f"{n['steady']} throughput-table rows and {n['mlperf']} MLPerf Training v4.0-v5.1 results"
    rows = []
    for name, value in constants.items():
        if name in ("overhead", "qlora_dequant_bytes_per_param"):
            continue
        unit = {"intercept": "ln MFU", "step_depth_s": "s", "step_dp_exposed": "share",
                "software_age": "ln MFU per year"}.get(name.split(".")[0], "ln MFU per unit")
        rows.append({"name": name, "value": value, "kind": "fitted", "unit": unit,
                     "description": _DESCRIPTIONS.get(name.split(".")[0], name), "fitted_on": steady_on})
    rows.append({"name": "overhead", "value": constants["overhead"], "kind": "fitted", "unit": "ratio",
                 "description": _DESCRIPTIONS["overhead"],
                 "fitted_on": f"{n['run'] - rates} published runs ({rates} more are training rates: step time only)"})
    rows.append({"name": "qlora_dequant_bytes_per_param", "value": constants["qlora_dequant_bytes_per_param"],
                 "kind": "fitted", "unit": "B/param", "description": _DESCRIPTIONS["qlora_dequant_bytes_per_param"],
                 "fitted_on": f"{n['qlora']} QLoRA rows paired with LoRA on the same GPU"})
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
    "precision_bandwidth": "change of the low-precision gain per doubling of the peak, per unit ln(memory bandwidth "
                           "/ BF16 peak)",
    "power": "change of ln MFU per unit ln(board power / BF16 peak)",
    "moe": "change of ln MFU for a mixture of experts",
    "moe_expert_size": "change of ln MFU for a mixture of experts per unit ln(parameters of one expert / 30 million), "
                       "from 30 million up to Grok-1's 604 million",
    "moe_scale_out": "further change of ln MFU for a mixture of experts on GPUs whose scale-up domain holds fewer "
                     "than 16 GPUs",
    "lora": "change of ln MFU for LoRA/QLoRA (FLOPs counted as 4N + attention)",
    "production": "change of ln MFU in figures from long production runs (fit only; not applied to plans)",
    "mlperf": "change of ln MFU in MLPerf time-to-train, evaluations included (fit only; not applied to plans)",
    "low_precision": "change of ln MFU (BF16 peak) per doubling of the peak at the training precision",
    "step_dp_exposed": "share of the data-parallel gradient all-reduce left exposed in each step",
    "step_depth_s": "per-step fixed time of a 10B-parameter model, growing with the cube root of the size "
                    "(Hopper systems, the other GPUs)",
    "software_age": "change of ln MFU per year before the newest fitted result of the GPU family (software "
                    "improves; plans are at 0)",
    "overhead": "end-to-end GPU-hours over step-time GPU-hours, interruptions excluded",
    "qlora_dequant_bytes_per_param": "memory traffic per 4-bit base weight that QLoRA's dequantisation costs in "
                                     "each micro-batch",
    "band": "percentile of ln(published / predicted) GPU-hours, leave-one-source-out",
}


# --- validation -------------------------------------------------------------------------------

SET_LABELS = {"run": "Training GPU-hours", "mlperf": "MLPerf Training time-to-train",
              "steady": "Steady-state MFU", "qlora": "QLoRA step time"}
UNITS = {"run": "GPU-h", "mlperf": "min", "steady": "MFU", "qlora": "s"}
#: segment boundaries: active parameters [parameters] and GPUs
SIZE_BOUNDS = ((1.5e10, "under 15B"), (1.0e11, "15-100B"), (math.inf, "100B and more"))
SCALE_BOUNDS = ((64, "up to 64 GPUs"), (512, "65-512 GPUs"), (math.inf, "over 512 GPUs"))


def segment(case) -> str:
    """'GPU family, precision, model size, scale' of a case (the rows ``aiplan validate`` groups)."""
    size = next(label for bound, label in SIZE_BOUNDS if case["active"] < bound)
    scale = next(label for bound, label in SCALE_BOUNDS if case["gpus"] <= bound)
    precision = PRECISION_PEAK.get(case["precision"], case["precision"])
    return f"{case['gpu'].family}, {precision}, {size}, {scale}"


def training_validation(catalog=None, constants=None) -> list[dict]:
    """Every training case: predicted, published, error, inside the band, segment; leave-one-source-out too.

    The band applies to GPU-hours (the prediction interval of :func:`fit_training`); other rows
    have none. Check cases are predicted by the full fit (they were never fitted), so their
    leave-one-out figures equal the plain ones. A fitted case whose GPU family has no other
    source has no leave-one-out figure (None).
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
               "segment": segment(c), "published": c["published"], "predicted": pred,
               "error_pct": 100.0 * (pred / c["published"] - 1.0),
               "low": pred * low_f if band else None, "high": pred * high_f if band else None,
               "inside_band": (pred * low_f <= c["published"] <= pred * high_f) if band else None,
               "predicted_loo": p_loo,
               "error_loo_pct": None if p_loo is None else 100.0 * (p_loo / c["published"] - 1.0),
               "inside_band_loo": (p_loo * low_f <= c["published"] <= p_loo * high_f) if band and p_loo else None,
               "sources": ";".join(sorted(c["sources"]))}
        rows.append(row)
    return rows


def run_predictions(catalog=None, constants=None) -> list[dict]:
    """Every run of ``training_runs.csv`` the kit can predict, with its GPU-hours as predicted by the constants
    (default: the committed ones) and the band around them; ``tools/calibrate.py`` writes them to
    ``training_run_predictions.csv`` (:func:`aiplan.model.efficiency.published_runs` reads that file).

    Rows ``{id, model, gpu, gpus, tokens, gpu_hours, predicted_gpu_hours, low_gpu_hours, high_gpu_hours,
    sources, basis}`` [-, -, -, GPU, tokens, GPU-h, GPU-h, GPU-h, GPU-h, ids, -]; ``gpus`` is empty where the run
    does not state it; ``basis`` is ``rate`` where the source gives its GPU-hours as a throughput rate (predicted as
    step time, without the end-to-end overhead), else empty.
    """
    catalog = catalog or load_catalog()
    constants = constants or training_constants()
    low, high = math.exp(constants["band.q10"]), math.exp(constants["band.q90"])
    rows = {r["id"]: r for r in _read("training_runs.csv")}
    out = []
    for c in training_cases(catalog):
        if c["kind"] != "run":
            continue
        row, pred = rows[c["id"]], predict(c, constants, catalog)
        out.append({"id": c["id"], "model": row["model"], "gpu": c["gpu"].id,
                    "gpus": c["gpus"] if c["gpus_stated"] else "", "tokens": parse_number(row["tokens"]),
                    "gpu_hours": c["published"], "predicted_gpu_hours": pred, "low_gpu_hours": pred * low,
                    "high_gpu_hours": pred * high, "sources": row["sources"], "basis": row.get("basis") or ""})
    return out


def judgement_rows() -> list[dict]:
    """GPUs without published training figures and how their efficiency is set."""
    return [{"gpu": g, "like": like, "factor": f} for g, (like, f) in training_judgements().items()]
