"""Calibrated training efficiency: steady-state MFU, the per-step fixed costs and the overhead.

The steady-state model FLOP utilisation, measured against the GPU's dense BF16 peak whatever the
training precision (so low-precision speed-ups are explicit), is log-linear in what is known to
matter::

    ln MFU_bf16 = intercept[GPU family]
                + size_small x min(ln(N / 1e10), 0) + size_large x max(ln(N / 1e10), 0)
                + scale x max(ln(GPUs / 256), 0)
                + (low_precision[generation] + precision_bandwidth x ln(memory bandwidth / BF16 peak))
                  x log2(peak at the precision / BF16 peak)
                + power x ln(board power / BF16 peak)
                + moe x [mixture of experts] + moe_scale_out x [MoE and a scale-up domain under 16 GPUs]
                + moe_expert_size x [MoE] x min(max(ln(E / 3e7), 0), ln(E_max / 3e7))
                + lora x [LoRA / QLoRA] + software_age x (years before the family's newest result)

(``N`` = active parameters; ``E`` = parameters of one routed expert's MLP, ``E_max`` the largest among
the fitted results, Grok-1's). A lower precision doubles the matmul rate per halving of the bits, and
the part of the step that is bound by memory traffic does not speed up: the gain per doubling grows
with the GPU's memory bandwidth against its compute (H200 ahead of H100 in the FP8 results; no
result before 2026 compares them in BF16). A GPU with less board power per unit of peak sustains
lower clocks on dense matmuls (MI325X ahead of MI300X, MI355X ahead of MI350X at the same or similar
peak). Experts exchanged outside an NVLink domain (8-GPU servers) cost more than inside a
rack-scale one (GB200/GB300 NVL72). Large experts run their matrix multiplications nearly as a
dense model does (Grok-1's eight experts of 604 million parameters), small ones pay the whole cost
of routing and of thin matrices (DeepSeek-V3's 44 million, Qwen3's 5-19 million). Software
improves: an older result of a GPU family is less efficient than a newer one, so a plan gets the
efficiency of the family's newest published figures (``software_age`` 0), never an extrapolation
beyond them.

A step of ``W`` model FLOPs on ``G`` GPUs then takes ``W / (G x peak_bf16 x MFU_bf16)`` plus a
per-step fixed time that does not shrink with more GPUs: the exposed share of the data-parallel
gradient all-reduce and a cost that grows with the model's depth (kernel launches, pipeline
flush, optimizer step), both fitted. Adding GPUs to a small model at a fixed global batch stops
paying where a doubling saves less than a quarter of the time (:func:`scaling_limit_gpus`). QLoRA adds the
dequantisation of its 4-bit base weights in every micro-batch (:func:`qlora_dequant_s`).

Two class terms are fitted alongside but never used for a plan: ``production`` (figures measured
in long production runs) and ``mlperf`` (MLPerf time-to-train, which includes the evaluations).
The constants live in ``data/calibration/training_constants.csv`` and are refitted by
``tools/calibrate.py`` from results published before :data:`FIT_PUBLISHED_BEFORE` (the data
vintage); GPUs without published training figures borrow a measured GPU's figure scaled by a
documented factor (``data/calibration/training_judgements.csv``).

A run's GPU-hours are the step-time GPU-hours times the fitted end-to-end ``overhead``
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

from ..core import units
from ..core.assumptions import MOE_PARAMS_RATIO, MOE_WIDE_DOMAIN_GPUS, UNKNOWN_SCALE_OUT_GBPS_PER_GPU
from ..core.catalog import calibration_file, load_catalog, read_constants
from . import collectives
from .compute import peak_flops_per_s
from .memory import finetune_split
from .params import (
    memo_by_server_block,
    model_attention_flops_fwd,
    plan_method,
    plan_param_counts,
    training_flops_per_token,
)

#: the calibration's data vintage: constants are fitted only on results published before this
#: date (MLPerf Training up to v5.1, tables and runs of 2025); later results only check them
FIT_PUBLISHED_BEFORE = "2026-01-01"
#: reference active parameters of the size hinge [parameters]
SIZE_REF_PARAMS = 1.0e10
#: experts of up to this many parameters pay the whole mixture-of-experts cost [parameters] (the hinge
#: chosen among 2e7-1e8 with every source left out in turn, data/calibration/README.md)
EXPERT_HINGE_PARAMS = 3.0e7
#: the largest routed expert among the fitted results: Grok-1's gated MLP, 3 x 6,144 x 32,768 (xAI's
#: released code: emb_size 6,144, widening_factor 8, ffn_size = 8 x 6,144 x 2/3) [parameters];
#: the efficiency is not extrapolated beyond it [xai-grok-1-code]
EXPERT_LARGEST_FITTED_PARAMS = 3 * 6144 * 32768
#: GPU count above which the scale-out loss applies [GPUs]
SCALE_REF_GPUS = 256
#: GPU family -> the generation whose low-precision speed-up it shares
LOW_PRECISION_GROUP = {"hopper": "hopper", "ada": "hopper", "blackwell": "blackwell", "blackwell-ultra": "blackwell",
                       "cdna3": "cdna", "cdna4": "cdna", "tpu-v4": "tpu", "tpu-v5e": "tpu", "tpu-v5p": "tpu"}
#: training number formats -> the precision whose peak their matmuls run at (block-scaled MX/NV
#: formats run at the FP8/FP4 tensor-core rate)
PRECISION_PEAK = {"mxfp8": "fp8", "mxfp4": "fp4", "nvfp4": "fp4"}
#: methods that skip the weight-gradient matmuls of the frozen weights
ADAPTER_METHODS = ("lora", "qlora")
#: bytes per parameter that must be spread over the model-parallel GPUs: mixed-precision Adam,
#: 2 (weights) + 2 (gradients) + 12 (fp32 master and moments) (Rajbhandari et al. 2019, ZeRO,
#: arXiv:1910.02054 §3.1, "16 Psi") [arxiv-1910.02054]; adapter fine-tuning keeps only the frozen
#: 16-bit weights
STATE_BYTES_PER_PARAM = 2.0 + 2.0 + units.OPTIMIZER_BYTES_PER_PARAM["adamw"]
FROZEN_BYTES_PER_PARAM = 2.0
#: bytes per gradient element the data-parallel all-reduce moves (bf16 reduction)
GRAD_REDUCE_BYTES = 2.0


def is_moe(total_params, active_params) -> bool:
    """A mixture of experts for the efficiency fit: more than 5% of the parameters idle per token.

    Examples
    --------
    Mixtral 8x7B, 46.7B parameters of which 12.9B active per token (the "47B" and "13B" of Jiang et
    al. 2024, abstract) [arxiv-2401.04088], against a dense model:

    >>> is_moe(46.7e9, 12.9e9), is_moe(70.6e9, 70.6e9)
    (True, False)
    """
    return bool(total_params and total_params > active_params * MOE_PARAMS_RATIO)


def _constants_path(name):
    return calibration_file(name)


def training_constants() -> dict[str, float]:
    """The fitted constants of ``data/calibration/training_constants.csv`` (name -> value).

    Examples
    --------
    The band brackets the median (P10 below, P90 above) and the end-to-end overhead adds time:

    >>> c = training_constants()
    >>> c["band.q10"] < 0 < c["band.q90"], c["overhead"] >= 1
    (True, True)
    """
    return read_constants(_constants_path("training_constants.csv"))


@lru_cache(maxsize=4)
def _read_judgements(stamp) -> dict[str, tuple[str, float]]:
    with open(_constants_path("training_judgements.csv"), newline="", encoding="utf-8") as fh:
        return {row["gpu"]: (row["like"], float(row["factor"])) for row in csv.DictReader(fh)}


def training_judgements() -> dict[str, tuple[str, float]]:
    """GPU id -> (measured GPU it borrows from, factor) for GPUs without published training figures.

    Examples
    --------
    Gaudi 3 borrows H100 SXM's figure times their measured matmul efficiencies, 74.1% / 80.3%
    [stas00-mlengineering-accelerator]:

    >>> like, factor = training_judgements()["gaudi3"]
    >>> like, factor, round(74.1 / 80.3, 3)
    ('h100-sxm', 0.923, 0.923)
    """
    return _read_judgements(os.stat(_constants_path("training_judgements.csv")).st_mtime_ns)


@lru_cache(maxsize=4)
def _measured(stamp) -> frozenset:
    catalog = load_catalog()
    out = set()
    for name, gpu_col in (("training_throughput.csv", "gpu"), ("mlperf_training.csv", "aiplan_gpu")):
        with open(_constants_path(name), newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                gpu = catalog.gpus.get(row[gpu_col])
                if row["role"] == "fit" and gpu is not None:
                    out.add((gpu.family, PRECISION_PEAK.get(row["precision"], row["precision"])))
    return frozenset(out)


def measured_in_fit(gpu, precision) -> tuple[bool, bool]:
    """(the GPU's family has fitted results, results in that precision among them) [-].

    From the fit rows of the throughput tables and MLPerf results: what the calibration has seen
    of a GPU family, published before :data:`FIT_PUBLISHED_BEFORE`.

    Examples
    --------
    H100 has published FP8 training results; Rubin, announced without measurements, has none:

    >>> from aiplan.core.catalog import load_catalog
    >>> gpus = load_catalog().gpus
    >>> measured_in_fit(gpus["h100-sxm"], "fp8"), measured_in_fit(gpus["rubin"], "bf16")
    ((True, True), (False, False))
    """
    stamp = tuple(os.stat(_constants_path(n)).st_mtime_ns for n in ("training_throughput.csv", "mlperf_training.csv"))
    seen = _measured(stamp)
    precision = PRECISION_PEAK.get(precision, precision)
    return any(f == gpu.family for f, _ in seen), (gpu.family, precision) in seen


@lru_cache(maxsize=4)
def _run_predictions(stamp) -> tuple[dict, ...]:
    with open(_constants_path("training_run_predictions.csv"), newline="", encoding="utf-8") as fh:
        return tuple(dict(r) for r in csv.DictReader(fh))


def published_runs(model_id: str) -> list[dict]:
    """Published pretraining runs of the catalog model ``model_id`` with the kit's GPU-hours for each run as published
    (its GPUs, tokens and precision), from ``training_run_predictions.csv`` (written by ``tools/calibrate.py``):
    ``{id, model, gpu, gpus, tokens, gpu_hours, predicted_gpu_hours, low_gpu_hours, high_gpu_hours, sources, basis}``
    [-, -, -, GPU or None, tokens, GPU-h, GPU-h, GPU-h, GPU-h, list of ids, -]; low-high is the kit's 10th-90th
    percentile band; ``basis`` is ``rate`` where the source derives its GPU-hours from a throughput rate (the kit's
    figure is then its step time, without the end-to-end overhead), else empty.

    Examples
    --------
    DeepSeek published 2.664 million H800 GPU-hours for DeepSeek-V3's pretraining, 180,000 per trillion tokens times
    14.8 trillion [arxiv-2412.19437]; at that basis (step time at its published batch of 15,360 sequences) the kit
    puts it about 40% higher, the MoE efficiency of DeepSeek's own training stack being above the fitted one:

    >>> run = published_runs("deepseek-v3")[0]
    >>> run["gpu_hours"], run["basis"], 1.2 < run["predicted_gpu_hours"] / run["gpu_hours"] < 1.6
    (2664000.0, 'rate', True)
    """
    stamp = os.stat(_constants_path("training_run_predictions.csv")).st_mtime_ns
    numbers = ("tokens", "gpu_hours", "predicted_gpu_hours", "low_gpu_hours", "high_gpu_hours")
    return [{**r, **{k: float(r[k]) for k in numbers}, "gpus": float(r["gpus"]) if r["gpus"] else None,
             "sources": r["sources"].split(";")} for r in _run_predictions(stamp) if r["model"] == model_id]


def low_precision_peak_tflops(gpu, precision) -> float:
    """Dense peak the matmuls run at for a training precision or number format [TFLOP/s].

    :func:`~aiplan.model.compute.peak_flops_per_s` (fp8 and MXFP8: the FP8 peak; fp4, NVFP4 and
    MXFP4: the FP4 peak; int8: the INT8 peak, as in MLPerf TPU submissions; fp32: half the BF16
    rate).

    Examples
    --------
    H100 SXM specifications [nvidia-h100-page] (dense, half the printed sparse figures): BF16 989.5,
    FP8 1,979; fp32 runs at the TF32 rate, half the BF16 one. A block-scaled format runs at its element's rate (NVFP4 on
    B200 at the FP4 peak).

    >>> from aiplan.core.catalog import load_catalog
    >>> gpus = load_catalog().gpus
    >>> [low_precision_peak_tflops(gpus["h100-sxm"], p) for p in ("bf16", "fp8", "fp32")]
    [989.5, 1979.0, 494.75]
    >>> low_precision_peak_tflops(gpus["b200"], "nvfp4") == low_precision_peak_tflops(gpus["b200"], "fp4")
    True
    """
    return float(peak_flops_per_s(gpu, PRECISION_PEAK.get(precision, precision))) / 1e12


#: an FP4 format counts at most this many times the FP8 peak in the training efficiency [ratio] (judgement:
#: Blackwell Ultra raised the dense FP4 rate to three times its FP8 rate, which it kept at Blackwell's; chosen on
#: MLPerf Training v5.1's NVFP4 results predicted with their round left out, data/calibration/README.md)
FP4_OVER_FP8_MAX = 2.0


def training_peak_tflops(gpu, precision) -> float:
    """The peak a training precision's efficiency is scaled from [TFLOP/s]: :func:`low_precision_peak_tflops`,
    an FP4 format counted at most :data:`FP4_OVER_FP8_MAX` times the FP8 peak.

    A training step is more than its FP4 matrix multiplications (NVIDIA's NVFP4 recipe keeps some layers
    and every non-matmul operation at higher precision, arXiv:2509.25149), so a faster FP4 unit alone
    buys less than the peak says. With MLPerf Training v5.1 (the only fitted FP4 results) left out, the
    kit extrapolated the NVFP4 runs on B300 and GB300 31% and 16% too fast with the full FP4 peak, and
    15% too fast and 6% too slow with this cap; B200 and GB200 (FP4 = twice FP8) are unchanged.
    [mlcommons-training-results-v5.1;arxiv-2509.25149]

    Examples
    --------
    B300: dense FP8 4,500 and FP4 13,500 TFLOP/s; B200: 4,500 and 9,000 [nvidia-dgx-b300-page]:

    >>> from aiplan.core.catalog import load_catalog
    >>> gpus = load_catalog().gpus
    >>> training_peak_tflops(gpus["b300"], "nvfp4"), training_peak_tflops(gpus["b200"], "nvfp4")
    (9000.0, 9000.0)
    >>> training_peak_tflops(gpus["b300"], "fp8") == low_precision_peak_tflops(gpus["b300"], "fp8")
    True
    """
    peak = low_precision_peak_tflops(gpu, precision)
    if PRECISION_PEAK.get(precision, precision) == "fp4" and gpu.fp8_tflops:
        peak = min(peak, FP4_OVER_FP8_MAX * float(gpu.fp8_tflops))
    return peak


def efficiency_features(gpu, precision, active_params, moe, gpus, method, production=False, mlperf=False,
                        age_years=0.0, expert_params=0.0) -> dict:
    """The regressors of the steady-state efficiency for one case (``gpus`` may be an array).

    ``age_years``: how long before the newest fitted result of the GPU's family the case was
    published (<= 0; a plan is 0: as efficient as the family's newest published figures).
    ``expert_params``: parameters of one routed expert's MLP [parameters] (0 when unknown: the
    whole MoE cost, as for experts up to :data:`EXPERT_HINGE_PARAMS`).

    Examples
    --------
    A 1B-parameter model in FP8 on 512 H100: ln(1e9 / 1e10) = -2.303 below the size hinge,
    ln(512 / 256) = 0.693 above the scale hinge, one doubling of the peak (1,979 / 989.5):

    >>> from aiplan.core.catalog import load_catalog
    >>> f = efficiency_features(load_catalog().gpus["h100-sxm"], "fp8", 1e9, False, 512, "full")
    >>> round(float(f["size_small"]), 3), round(float(f["scale"]), 3), f["low_precision"]
    (-2.303, 0.693, 1.0)
    """
    size = np.log(np.asarray(active_params, dtype=float) / SIZE_REF_PARAMS)
    doublings = math.log2(training_peak_tflops(gpu, precision) / gpu.bf16_tflops)
    moe = float(bool(moe))
    return {
        "size_small": np.minimum(size, 0.0), "size_large": np.maximum(size, 0.0),
        "scale": np.maximum(np.log(np.asarray(gpus, dtype=float) / SCALE_REF_GPUS), 0.0),
        "low_precision": doublings,
        "precision_bandwidth": doublings * math.log(gpu.memory_bw_gb_per_s / gpu.bf16_tflops),
        "power": math.log(gpu.tdp_w / gpu.bf16_tflops),
        "moe": moe, "moe_scale_out": moe * float(gpu.scale_up_domain < MOE_WIDE_DOMAIN_GPUS),
        "moe_expert_size": moe * moe_expert_size(expert_params),
        "lora": float(method in ADAPTER_METHODS), "software_age": float(age_years),
        "production": float(production), "mlperf": float(mlperf),
    }


def moe_expert_size(expert_params) -> float:
    """The expert-size regressor: ln(experts' size / hinge), 0 at or below the hinge and for an unknown
    size, at most that of the largest fitted expert [ln ratio].

    :data:`EXPERT_HINGE_PARAMS`, :data:`EXPERT_LARGEST_FITTED_PARAMS`.

    Examples
    --------
    DeepSeek-V3's experts, 3 x 7,168 x 2,048 = 44.0 million parameters (arXiv:2412.19437 §4.2)
    [arxiv-2412.19437], lie ln(44.04 / 30) = 0.384 above the hinge; smaller or unknown experts add
    nothing, and larger ones than Grok-1's count as Grok-1's, ln(604.0 / 30) = 3.002:

    >>> [round(moe_expert_size(e), 3) for e in (3 * 7168 * 2048, 5e6, 0.0, 1e10)]
    [0.384, 0.0, 0.0, 3.002]
    """
    return math.log(min(max(expert_params, EXPERT_HINGE_PARAMS), EXPERT_LARGEST_FITTED_PARAMS) / EXPERT_HINGE_PARAMS)


def _ln_mfu(gpu, features, constants):
    """ln MFU_bf16 of a measured-family GPU from its features."""
    group = LOW_PRECISION_GROUP.get(gpu.family)
    ln = constants[f"intercept.{gpu.family}"]
    for name, value in features.items():
        if type(value) is float and value == 0.0:  # adds exactly nothing: skip a pass over an array of counts
            continue
        if name == "low_precision":
            ln = ln + (constants[f"low_precision.{group}"] * value if group else 0.0)
        else:
            ln = ln + constants[name] * value
    return ln


def steady_mfu_bf16(gpu, precision, active_params, moe, gpus, method, catalog=None, constants=None,
                    production=False, mlperf=False, age_years=0.0, expert_params=0.0):
    """Steady-state model FLOP/s over the GPU's dense BF16 peak, before per-step fixed costs [fraction].

    Parameters
    ----------
    gpu : GPU
        catalog record.
    precision : str
        training compute precision or number format (bf16, fp8, mxfp8, fp4, int8, ...).
    active_params : float
        active parameters per token [parameters].
    moe : bool
        mixture of experts.
    gpus : float or ndarray
        GPUs in the job.
    method : str
        full | lora | qlora.
    expert_params : float
        parameters of one routed expert's MLP (0 when unknown).

    References
    ----------
    .. [1] Fitted on published throughput tables and MLPerf Training v4.0-v5.1 (see
       ``data/calibration/training_throughput.csv``, ``mlperf_training.csv``); GPUs without
       figures scaled by measured matmul efficiency. [arxiv-2104.04473;arxiv-2205.05198;
       arxiv-2402.15627;arxiv-2407.21783;mlcommons-training-results-v5.0;mlcommons-training-results-v5.1;
       nvidia-megatron-bridge-perf-summary-25.11;amd-aig-aima-pytorch-training-benchmark-2025-02;
       stas00-mlengineering-accelerator]

    Examples
    --------
    A GPU without published figures gets the figure of the GPU it borrows from, times the factor
    (Gaudi 3: H100 x 0.923, :func:`training_judgements`):

    >>> from aiplan.core.catalog import load_catalog
    >>> gpus, case = load_catalog().gpus, ("bf16", 8e9, False, 64, "full")
    >>> round(float(steady_mfu_bf16(gpus["gaudi3"], *case) / steady_mfu_bf16(gpus["h100-sxm"], *case)), 3)
    0.923
    """
    constants = constants or training_constants()
    factor = 1.0
    if f"intercept.{gpu.family}" not in constants:
        like, factor = training_judgements()[gpu.id]
        gpu = (catalog or load_catalog()).gpus[like]
    feats = efficiency_features(gpu, precision, active_params, moe, gpus, method, production, mlperf, age_years,
                                expert_params)
    mfu = np.exp(_ln_mfu(gpu, feats, constants))
    return mfu if factor == 1.0 else factor * mfu


# --- the per-step fixed costs -------------------------------------------------------------------


def model_parallel_gpus(gpus, batch_seqs, total_params, memory_gb, method="full"):
    """GPUs one model replica spans: as many as its states need, and no fewer than the global batch forces [GPUs].

    ``max(1, states / GPU memory, GPUs / global batch in sequences)``, at most ``gpus``: a replica
    needs room for its weights, gradients and optimizer states (:data:`STATE_BYTES_PER_PARAM`;
    adapter fine-tuning: the frozen weights), and every data-parallel replica needs at least one
    sequence per step.

    Examples
    --------
    Llama 3.1 8B on 512 GPUs at a global batch of 64 sequences (MLPerf Training v5.1): 8 GPUs per
    replica, 64 replicas.

    >>> float(model_parallel_gpus(512, 64, 8.03e9, 186.0))
    8.0
    """
    if isinstance(method, str):
        per_state = FROZEN_BYTES_PER_PARAM if method in ADAPTER_METHODS else STATE_BYTES_PER_PARAM
    else:
        per_state = np.where(np.isin(method, ADAPTER_METHODS), FROZEN_BYTES_PER_PARAM, STATE_BYTES_PER_PARAM)
    states = np.asarray(total_params, dtype=float) * per_state / (np.asarray(memory_gb) * units.BYTES_PER_GB)
    gpus = np.asarray(gpus, dtype=float)
    return np.minimum(gpus, np.maximum(1.0, np.maximum(states, gpus / np.asarray(batch_seqs, dtype=float))))


def data_parallel_gb_per_s(gpu, gpus):
    """Bandwidth per GPU of the data-parallel all-reduce: the scale-up link inside one domain, else scale-out [GB/s].

    Scale-out: the GPU row's network figure, else
    :data:`~aiplan.core.UNKNOWN_SCALE_OUT_GBPS_PER_GPU`.

    Examples
    --------
    H100: NVLink 900 GB/s both ways (450 each way) within an 8-GPU server [nvidia-h100-page]; beyond
    it its 400 Gb/s NIC, 50 GB/s [nvidia-dgx-h100-datasheet]:

    >>> from aiplan.core.catalog import load_catalog
    >>> data_parallel_gb_per_s(load_catalog().gpus["h100-sxm"], np.array([8, 16])).tolist()
    [450.0, 50.0]
    """
    out = (gpu.network_gbps_per_gpu or UNKNOWN_SCALE_OUT_GBPS_PER_GPU) / units.BITS_PER_BYTE
    inside = np.asarray(gpus) <= gpu.scale_up_domain
    return np.where(inside, collectives.scale_up_gb_per_s(gpu.scale_up_gb_per_s), out)


def step_fixed_s(gpu, gpus, batch_seqs, active_params, trainable_params, total_params, method="full", constants=None):
    """Per-step time that adding GPUs does not shrink [s].

    ``step_dp_exposed`` x the ring all-reduce of one replica's bf16 gradients over the
    data-parallel replicas (the part not hidden behind the backward pass) + ``step_depth_s`` (of
    the GPU's :func:`step_group`) x (active params / 1e10)^(1/3) (costs paid once per layer and
    step: kernel launches, pipeline fill and flush, optimizer; the depth of a transformer grows
    like the cube root of its size). Both constants are fitted on published throughput at small
    per-GPU batches (MLPerf Training, MegaScale and Megatron strong scaling).

    Parameters
    ----------
    gpu : GPU
        catalog record.
    gpus, batch_seqs : float or ndarray
        GPUs; global batch [sequences].
    active_params, trainable_params, total_params : float
        [parameters].

    Returns
    -------
    float or ndarray
        [s].

    References
    ----------
    .. [1] Narayanan et al. 2021, arXiv:2104.04473, §2.2.1 (pipeline flush), §3.3 (data-parallel
       all-reduce); nccl-tests bus bandwidth (ring all-reduce 2(n-1)/n). [arxiv-2104.04473;
       nvidia-nccl-tests-performance-md]

    Examples
    --------
    A 10B model on 64 H100 (80 GB) at 64 sequences a step: its 16 B/param of states fill 2 GPUs, so
    32 replicas all-reduce 10 GB of bf16 gradients at 50 GB/s, 2 x 31/32 x 10 / 50 = 0.3875 s were
    all of it exposed; the depth cost doubles for 8 times the parameters (cube root):

    >>> from aiplan.core.catalog import load_catalog
    >>> h100 = load_catalog().gpus["h100-sxm"]
    >>> exposed = {"step_dp_exposed": 1.0, "step_depth_s.hopper": 0.0}
    >>> depth = {"step_dp_exposed": 0.0, "step_depth_s.hopper": 0.1}
    >>> round(float(step_fixed_s(h100, 64, 64, 1e10, 1e10, 1e10, constants=exposed)), 4)
    0.3875
    >>> [round(float(step_fixed_s(h100, 64, 64, n, n, n, constants=depth)), 3) for n in (1e10, 8e10)]
    [0.1, 0.2]
    """
    c = constants or training_constants()
    replica = model_parallel_gpus(gpus, batch_seqs, total_params, gpu.memory_gb, method)
    replicas = np.asarray(gpus, dtype=float) / replica
    grads_gb = GRAD_REDUCE_BYTES * np.asarray(trainable_params, dtype=float) / replica / units.BYTES_PER_GB
    allreduce = collectives.allreduce_time_s(grads_gb, replicas, data_parallel_gb_per_s(gpu, gpus))
    depth = (np.asarray(active_params, dtype=float) / SIZE_REF_PARAMS) ** (1.0 / 3.0)
    return c["step_dp_exposed"] * allreduce + c[f"step_depth_s.{step_group(gpu)}"] * depth


def step_group(gpu) -> str:
    """'hopper' or 'other': the per-step depth cost is fitted apart for Hopper systems [-].

    Published Hopper results at small per-GPU batches (MLPerf LoRA on 512-1,024 H100/H200, GPT-3 on
    10,000 H100) show about 2.5 times the fixed time per step of Blackwell ones; one constant for
    both predicts either badly (leave-one-source-out, ``data/calibration/README.md``).

    Examples
    --------
    >>> from aiplan.core.catalog import load_catalog
    >>> gpus = load_catalog().gpus
    >>> [step_group(gpus[g]) for g in ("h100-sxm", "h200", "b200", "mi300x")]
    ['hopper', 'hopper', 'other', 'other']
    """
    return "hopper" if LOW_PRECISION_GROUP.get(gpu.family) == "hopper" else "other"


def qlora_dequant_s(gpu, gpus, batch_seqs, micro_batch, quantized_params, constants=None):
    """Time per step that QLoRA spends dequantising its 4-bit base weights [s].

    Every micro-batch dequantises each GPU's share of the base weights (forward and backward); the
    cost is fitted as ``qlora_dequant_bytes_per_param`` bytes of memory traffic per weight at the
    GPU's memory bandwidth, on published LoRA/QLoRA pairs measured on the same GPU:
    ``(global batch / micro-batch) x bytes x quantized params / (GPUs x bandwidth)``.

    Parameters
    ----------
    gpu : GPU
        catalog record.
    gpus, batch_seqs, micro_batch : float
        GPUs; global batch and micro-batch [sequences].
    quantized_params : float
        4-bit base weights [parameters].

    Returns
    -------
    float
        [s].

    References
    ----------
    .. [1] Dettmers et al. 2023, QLoRA, arXiv:2305.14314 §3 (NF4 weights dequantised to BF16 for
       every matmul); Lightning AI LitGPT resource tables (2023) and torchtune README (2024): LoRA
       against QLoRA throughput on A100. [arxiv-2305.14314;litgpt-resource-tables-2023-10;
       pytorch-torchtune-readme-2024-11]

    Examples
    --------
    LLaMA-7B's 6.7B weights (Touvron et al. 2023, Table 2) [arxiv-2302.13971] on 8 H100 (3,350 GB/s),
    64 micro-batches a step, at an illustrative 2 B/param of traffic:
    64 x 2 x 6.7e9 / (8 x 3.35e12) = 32 ms.

    >>> from aiplan.core.catalog import load_catalog
    >>> h100 = load_catalog().gpus["h100-sxm"]
    >>> c = {"qlora_dequant_bytes_per_param": 2.0}
    >>> round(float(qlora_dequant_s(h100, 8, 64, 1, 6.7e9, constants=c)) * 1e3, 1)
    32.0
    """
    c = constants or training_constants()
    bytes_moved = c["qlora_dequant_bytes_per_param"] * quantized_params / np.asarray(gpus, dtype=float)
    return np.asarray(batch_seqs) / micro_batch * bytes_moved / (gpu.memory_bw_gb_per_s * units.BYTES_PER_GB)


def effective_mfu(steady_mfu, step_flops_at_peak_s, extra_s):
    """MFU once a per-step extra time is added to the compute: ``steady / (1 + extra x steady / t_peak)`` [fraction].

    ``step_flops_at_peak_s`` = a step's model FLOPs / (GPUs x peak), the step time at MFU 1.

    Examples
    --------
    A step that takes 1 s of compute at 50% MFU (0.5 s at the peak) plus 1 s of fixed costs runs
    at 25%:

    >>> float(effective_mfu(0.5, 0.5, 1.0))
    0.25
    """
    return steady_mfu / (1.0 + np.asarray(extra_s) * steady_mfu / np.asarray(step_flops_at_peak_s))


def precision_mfu(gpu, precision, mfu_bf16):
    """An MFU against the BF16 peak as an MFU against the peak at ``precision`` [fraction].

    Examples
    --------
    40% of H100's BF16 peak is 20% of its FP8 peak, twice as high:

    >>> from aiplan.core.catalog import load_catalog
    >>> precision_mfu(load_catalog().gpus["h100-sxm"], "fp8", 0.4)
    0.2
    """
    ratio = float(peak_flops_per_s(gpu, "bf16") / peak_flops_per_s(gpu, precision))
    return mfu_bf16 if ratio == 1.0 else mfu_bf16 * ratio


def calibrated_mfu(gpu, precision, active_params, moe, gpus, method, catalog=None, constants=None, expert_params=0.0):
    """Calibrated steady-state MFU against the peak at ``precision`` [fraction].

    :func:`steady_mfu_bf16` converted from the BF16 peak to the peak of the precision; a
    precision slower than BF16 (fp32 on TF32) keeps the BF16 utilisation of its own peak.

    Examples
    --------
    fp32 (TF32, half the BF16 rate) keeps the BF16 utilisation of its own peak; FP8 is the FP8
    figure against twice the peak:

    >>> from aiplan.core.catalog import load_catalog
    >>> h100, case = load_catalog().gpus["h100-sxm"], (8e9, False, 64, "full")
    >>> bool(calibrated_mfu(h100, "fp32", *case) == calibrated_mfu(h100, "bf16", *case))
    True
    >>> bool(np.isclose(calibrated_mfu(h100, "fp8", *case), steady_mfu_bf16(h100, "fp8", *case) / 2))
    True
    """
    if peak_flops_per_s(gpu, precision) < peak_flops_per_s(gpu, "bf16"):
        precision = "bf16"
    mfu = steady_mfu_bf16(gpu, precision, active_params, moe, gpus, method, catalog, constants,
                          expert_params=expert_params)
    return mfu if precision == "bf16" else precision_mfu(gpu, precision, mfu)


def plan_flops_per_token(plan) -> float:
    """Training model FLOPs per token of a plan: 6N + attention, 4N + attention for adapters [FLOP]."""
    counts = plan_param_counts(plan)
    grads = 0.0 if plan_method(plan) in ADAPTER_METHODS else 1.0
    return float(training_flops_per_token(counts["active_params"],
                                          model_attention_flops_fwd(plan.model, plan.workload["seq_len"]), grads))


def plan_step(plan, gpus, constants=None) -> dict:
    """One optimizer step of a training plan at ``gpus`` GPUs, calibrated [s, fraction].

    ``mfu_steady`` (before the per-step fixed costs) and ``mfu`` (after them), both against the
    peak at the plan's precision; ``compute_s`` (the step's FLOPs at ``mfu_steady``),
    ``fixed_s`` (:func:`step_fixed_s`), ``dequant_s`` (:func:`qlora_dequant_s`, QLoRA only) and
    ``step_s``, their sum. ``gpus`` may be an array; for one count the step is computed once per
    plan and set of fitted constants (:func:`~aiplan.model.params.plan_memo`: the deadline sizing asks
    for the same counts again). A count of whole servers is computed with the other counts of its
    :func:`~aiplan.model.params.server_block` in one vectorised pass (the deadline sizing's fixed
    points visit counts near each other; each element equals the count computed alone).
    ``constants``: :func:`training_constants`, when the caller has read them.
    """
    if np.ndim(gpus):
        return _plan_step(plan, gpus)
    parts, at = _memo_step(plan, gpus, constants)
    return dict(parts) if at is None else {k: v[at] for k, v in parts.items()}


def _memo_step(plan, gpus, constants=None) -> tuple[dict, int | None]:
    """The memoised :func:`_plan_step` that holds one count: (its parts, None) for a count computed
    alone, (the parts of its server block, its index) for whole servers (:func:`memo_by_server_block`;
    computed again after a refit of the constants)."""
    constants = constants or training_constants()
    return memo_by_server_block(plan, "plan_step", gpus, lambda g: _plan_step(plan, g, constants), constants)


def _plan_step(plan, gpus, constants=None) -> dict:
    counts = plan_param_counts(plan)
    w, gpu, method = plan.workload, plan.gpu, plan_method(plan)
    precision = w.get("precision", "bf16")
    total, active = counts["params"], counts["active_params"]
    gpus = np.asarray(gpus, dtype=float)
    constants = constants or training_constants()  # read once for both parts
    steady = calibrated_mfu(gpu, precision, active, is_moe(total, active), gpus, method, constants=constants,
                            expert_params=counts["params_per_expert"])
    batch = w["global_batch_tokens"] / w["seq_len"]
    at_peak = plan_flops_per_token(plan) * w["global_batch_tokens"] / (gpus * peak_flops_per_s(gpu, precision))
    fixed = step_fixed_s(gpu, gpus, batch, active, finetune_split(plan, counts)[0], total, method, constants)
    compute = at_peak / steady
    if method != "qlora":  # no dequantisation: adding its zeros would change nothing
        return {"mfu_steady": steady, "mfu": effective_mfu(steady, at_peak, fixed), "compute_s": compute,
                "fixed_s": fixed, "dequant_s": np.zeros_like(gpus), "step_s": compute + fixed}
    dequant = qlora_dequant_s(gpu, gpus, batch, w.get("micro_batch", 1), counts["params_layer_linear"])
    return {"mfu_steady": steady, "mfu": effective_mfu(steady, at_peak, fixed + dequant), "compute_s": compute,
            "fixed_s": fixed, "dequant_s": dequant, "step_s": compute + fixed + dequant}


def plan_mfu(plan, gpus, calibrated=False, constants=None):
    """MFU of a plan at ``gpus`` GPUs, against the peak at its precision [fraction].

    The plan's ``cluster.mfu`` when given (unless ``calibrated``), else the calibrated MFU of
    :func:`plan_step`, per-step fixed costs included (``constants`` as there).
    """
    given = plan.cluster.get("mfu")
    if given is not None and not calibrated:
        return given
    if np.ndim(gpus):
        return _plan_step(plan, gpus)["mfu"]
    parts, at = _memo_step(plan, gpus, constants)
    return parts["mfu"] if at is None else parts["mfu"][at]


#: adding GPUs stops paying where doubling them saves less than this share of the run's time
STOPS_PAYING_SAVING = 0.25


def scaling_limit_gpus(plan) -> int | None:
    """GPUs beyond which adding more stops paying: doubling them saves less than a quarter of the time [GPUs].

    The fewest whole servers ``G`` at which :func:`plan_step` takes more than 3/4 of its time on
    ``2G`` as on ``G`` (the global batch, hence the number of steps, is the plan's): the per-step
    fixed costs, which more GPUs do not shrink, have caught up with the compute. Found on a
    doubling grid from one server, then server by server; None when no count up to the most the
    kit plans for gets there.
    """
    node = int(plan.cluster["gpus_per_node"])

    def first(grid):
        step_s = plan_step(plan, np.concatenate([grid, 2.0 * grid]))["step_s"]  # G and 2G in one pass
        slower = step_s[len(grid):] > (1.0 - STOPS_PAYING_SAVING) * step_s[:len(grid)]
        reached = np.nonzero(slower)[0]
        return int(grid[reached[0]]) if len(reached) else None

    coarse = first(node * 2.0 ** np.arange(int(math.log2(units.MAX_GPUS / node))))
    if coarse is None or coarse == node:
        return coarse
    return first(node * np.arange(coarse // (2 * node) + 1, coarse // node + 1, dtype=float))


def plan_overhead(plan, constants=None) -> float:
    """End-to-end overhead of a training plan: the plan's ``cluster.run_overhead``, else calibrated [ratio]."""
    given = plan.cluster.get("run_overhead")
    return overhead_factor(constants) if given is None else given


def overhead_factor(constants=None) -> float:
    """End-to-end GPU-hours over step-time GPU-hours, interruptions excluded [ratio].

    Examples
    --------
    >>> overhead_factor({"overhead": 1.1}), overhead_factor() >= 1.0
    (1.1, True)
    """
    return (constants or training_constants())["overhead"]


def band_factors(constants=None) -> tuple[float, float]:
    """(low, high) multipliers of the predicted GPU-hours: the P10-P90 prediction interval [ratio].

    Examples
    --------
    Log percentiles of ln 0.8 and ln 1.25 give multipliers 0.8 and 1.25:

    >>> low, high = band_factors({"band.q10": math.log(0.8), "band.q90": math.log(1.25)})
    >>> round(low, 6), round(high, 6)
    (0.8, 1.25)
    """
    c = constants or training_constants()
    return math.exp(c["band.q10"]), math.exp(c["band.q90"])


# --- the calibrated band as a distribution ----------------------------------------------------------

#: standard-normal 90th percentile
Z_P90 = 1.2815515655446004


def efficiency_log_errors(z, q10, q90):
    """Split-normal log multipliers of GPU-hours with P10 ``q10``, median 0 and P90 ``q90`` [ln ratio].

    Examples
    --------
    The standard-normal P10, median and P90 map to q10, 0 and q90:

    >>> efficiency_log_errors([-Z_P90, 0.0, Z_P90], -0.2, 0.3).round(6).tolist()
    [-0.2, 0.0, 0.3]
    """
    z = np.asarray(z, dtype=float)
    return np.where(z >= 0.0, z * (np.asarray(q90) / Z_P90), z * (-np.asarray(q10) / Z_P90))


def efficiency_quantile(probability, q10, q90) -> float:
    """The ``probability`` quantile of the split-normal log multiplier [ln ratio].

    Examples
    --------
    >>> [round(efficiency_quantile(p, -0.2, 0.3), 6) for p in (0.1, 0.5, 0.9)]
    [-0.2, 0.0, 0.3]
    """
    z = NormalDist().inv_cdf(probability)
    return float(efficiency_log_errors(z, q10, q90))
