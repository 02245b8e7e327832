"""Calibrated training efficiency: steady-state MFU and the end-to-end overhead.

The steady-state model FLOP utilisation, measured against the GPU's dense BF16 peak whatever the
training precision (so fp8 speed-ups are explicit), is log-linear in what is known to matter::

    ln MFU_bf16 = intercept[GPU family]
                + size_small x min(ln(N / 1e10), 0) + size_large x max(ln(N / 1e10), 0)
                + scale x max(ln(GPUs / 256), 0)
                + low_precision[generation] x log2(peak at the precision / BF16 peak)
                + moe x [mixture of experts] + lora x [LoRA / QLoRA]
                + lora_bandwidth x [LoRA / QLoRA] x ln(memory bandwidth / BF16 peak)

(fine-tuning with frozen weights does less arithmetic per byte moved, so memory bandwidth shows:
MLPerf LoRA on H200 against H100; full training on the same two is equal at equal peak)

(``N`` = active parameters). Two class terms are fitted alongside but never used for a plan:
``production`` (figures measured in long production runs) and ``mlperf`` (MLPerf time-to-train,
which includes the evaluations). The constants live in ``data/calibration/training_constants.csv``
and are refitted by ``tools/calibrate.py`` from the published cases beside them; GPUs without
published training figures borrow a measured GPU's figure scaled by a documented factor
(``data/calibration/training_judgements.csv``).

A run's GPU-hours are the steady-state GPU-hours times the fitted end-to-end ``overhead``
(evaluation, warm-up, stragglers, checkpoint stalls, slow-downs) and divided by the goodput of
the interruption model (:mod:`aiplan.cluster.reliability`). The band is a prediction interval:
the 10th and 90th percentiles of the leave-one-source-out errors on the published runs.
"""

from __future__ import annotations

import csv
import math
import os
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from ..core.assumptions import MOE_PARAMS_RATIO
from ..core.catalog import calibration_file, load_catalog, read_constants
from .compute import peak_flops_per_s
from .params import plan_param_counts

#: reference active parameters of the size hinge [parameters]
SIZE_REF_PARAMS = 1.0e10
#: GPU count above which the scale-out loss applies [GPUs]
SCALE_REF_GPUS = 256
#: GPU family -> the generation whose low-precision speed-up it shares
LOW_PRECISION_GROUP = {"hopper": "hopper", "ada": "hopper", "blackwell": "blackwell", "cdna3": "cdna3",
                       "tpu-v4": "tpu", "tpu-v5e": "tpu", "tpu-v5p": "tpu"}
#: methods that skip the weight-gradient matmuls of the frozen weights
ADAPTER_METHODS = ("lora", "qlora")


def is_moe(total_params, active_params) -> bool:
    """A mixture of experts for the efficiency fit: more than 5% of the parameters idle per token."""
    return bool(total_params and total_params > active_params * MOE_PARAMS_RATIO)


def _constants_path(name):
    return calibration_file(name)


def training_constants() -> dict[str, float]:
    """The fitted constants of ``data/calibration/training_constants.csv`` (name -> value)."""
    return read_constants(_constants_path("training_constants.csv"))


@lru_cache(maxsize=4)
def _read_judgements(stamp) -> dict[str, tuple[str, float]]:
    with open(_constants_path("training_judgements.csv"), newline="", encoding="utf-8") as fh:
        return {row["gpu"]: (row["like"], float(row["factor"])) for row in csv.DictReader(fh)}


def training_judgements() -> dict[str, tuple[str, float]]:
    """GPU id -> (measured GPU it borrows from, factor) for GPUs without published training figures."""
    return _read_judgements(os.stat(_constants_path("training_judgements.csv")).st_mtime_ns)


def low_precision_peak_tflops(gpu, precision) -> float:
    """Dense peak the matmuls run at for a training precision [TFLOP/s].

    :func:`~aiplan.model.compute.peak_flops_per_s` (fp8: the FP8 peak, int8: the INT8 peak, as in
    MLPerf TPU submissions; fp32: half the BF16 rate), and fp4 the FP4 peak. No published training
    result before mid-2025 measures an FP4 speed-up, so fp4 extrapolates the fitted gain per
    doubling of the peak.
    """
    return float(peak_flops_per_s(gpu, precision)) / 1e12


def efficiency_features(gpu, precision, active_params, moe, gpus, method, production=False, mlperf=False) -> dict:
    """The regressors of the efficiency model for one case (``gpus`` may be an array)."""
    bandwidth = math.log(gpu.memory_bw_gb_per_s / gpu.bf16_tflops)
    lora = float(method in ADAPTER_METHODS)
    size = np.log(np.asarray(active_params, dtype=float) / SIZE_REF_PARAMS)
    scale = np.maximum(np.log(np.asarray(gpus, dtype=float) / SCALE_REF_GPUS), 0.0)
    return {
        "size_small": np.minimum(size, 0.0), "size_large": np.maximum(size, 0.0), "scale": scale,
        "lora_bandwidth": lora * bandwidth,
        "low_precision": math.log2(low_precision_peak_tflops(gpu, precision) / gpu.bf16_tflops),
        "moe": float(bool(moe)), "lora": lora,
        "production": float(production), "mlperf": float(mlperf),
    }


def _ln_mfu(gpu, features, constants):
    """ln MFU_bf16 of a measured-family GPU from its features."""
    group = LOW_PRECISION_GROUP.get(gpu.family)
    ln = constants[f"intercept.{gpu.family}"]
    for name, value in features.items():
        if name == "low_precision":
            ln = ln + (constants[f"low_precision.{group}"] * value if group else 0.0)
        else:
            ln = ln + constants[name] * value
    return ln


def steady_mfu_bf16(gpu, precision, active_params, moe, gpus, method, catalog=None, constants=None,
                    production=False, mlperf=False):
    """Steady-state model FLOP/s over the GPU's dense BF16 peak [fraction].

    Parameters
    ----------
    gpu : GPU
        catalog record.
    precision : str
        training compute precision (bf16, fp8, int8, fp4, ...).
    active_params : float
        active parameters per token [parameters].
    moe : bool
        mixture of experts.
    gpus : float or ndarray
        GPUs in the job.
    method : str
        full | lora | qlora.

    References
    ----------
    .. [1] Fitted on published throughput tables and MLPerf Training v4.0-v4.1 (see
       ``data/calibration/training_throughput.csv``, ``mlperf_training.csv``); GPUs without
       figures scaled by measured matmul efficiency. [arxiv-2104.04473;arxiv-2205.05198;
       arxiv-2402.15627;arxiv-2407.21783;mlcommons-training-results-v4.0;mlcommons-training-results-v4.1;
       amd-aig-aima-pytorch-training-benchmark-2025-02;stas00-mlengineering-accelerator]
    """
    constants = constants or training_constants()
    factor = 1.0
    if f"intercept.{gpu.family}" not in constants:
        like, factor = training_judgements()[gpu.id]
        gpu = (catalog or load_catalog()).gpus[like]
    feats = efficiency_features(gpu, precision, active_params, moe, gpus, method, production, mlperf)
    return factor * np.exp(_ln_mfu(gpu, feats, constants))


def overhead_factor(constants=None) -> float:
    """End-to-end GPU-hours over steady-state GPU-hours, interruptions excluded [ratio]."""
    return (constants or training_constants())["overhead"]


def band_factors(constants=None) -> tuple[float, float]:
    """(low, high) multipliers of the predicted GPU-hours: the P10-P90 prediction interval [ratio]."""
    c = constants or training_constants()
    return math.exp(c["band.q10"]), math.exp(c["band.q90"])


def calibrated_mfu(gpu, precision, active_params, moe, gpus, method, catalog=None):
    """Calibrated steady-state MFU against the peak at ``precision`` [fraction].

    :func:`steady_mfu_bf16` converted from the BF16 peak to the peak of the precision; a
    precision slower than BF16 (fp32 on TF32) keeps the BF16 utilisation of its own peak.
    """
    peak, bf16 = peak_flops_per_s(gpu, precision), peak_flops_per_s(gpu, "bf16")
    if peak < bf16:
        return steady_mfu_bf16(gpu, "bf16", active_params, moe, gpus, method, catalog)
    return steady_mfu_bf16(gpu, precision, active_params, moe, gpus, method, catalog) * bf16 / peak


def plan_mfu(plan, gpus, calibrated=False):
    """Steady-state MFU of a plan at ``gpus`` GPUs, against the peak at its precision [fraction].

    The plan's ``cluster.mfu`` when given (unless ``calibrated``), else the calibrated
    :func:`steady_mfu_bf16` converted from the BF16 peak to the peak of the plan's precision
    (:func:`calibrated_mfu`).
    """
    given = plan.cluster.get("mfu")
    if given is not None and not calibrated:
        return given
    counts = plan_param_counts(plan)
    precision = plan.workload.get("precision", "bf16")
    method = plan.workload.get("method", "full") if plan.kind == "finetune" else "full"
    moe = is_moe(counts["params"], counts["active_params"])
    return calibrated_mfu(plan.gpu, precision, counts["active_params"], moe, gpus, method)


def plan_overhead(plan) -> float:
    """End-to-end overhead of a training plan: the plan's ``cluster.run_overhead``, else calibrated [ratio]."""
    given = plan.cluster.get("run_overhead")
    return overhead_factor() if given is None else given


# --- the calibrated band as a distribution ----------------------------------------------------------

#: standard-normal 90th percentile
Z_P90 = 1.2815515655446004


def efficiency_log_errors(z, q10, q90):
    """Split-normal log multipliers of GPU-hours with P10 ``q10``, median 0 and P90 ``q90`` [ln ratio]."""
    z = np.asarray(z, dtype=float)
    return np.where(z >= 0.0, z * (np.asarray(q90) / Z_P90), z * (-np.asarray(q10) / Z_P90))


def efficiency_quantile(probability, q10, q90) -> float:
    """The ``probability`` quantile of the split-normal log multiplier [ln ratio]."""
    z = NormalDist().inv_cdf(probability)
    return float(efficiency_log_errors(z, q10, q90))
