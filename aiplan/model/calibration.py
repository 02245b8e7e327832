"""Calibration on published training runs, and the vectorised table of training plans."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..units import (
    BYTES_PER_ELEMENT, FLOPS_PER_TFLOPS, MASTER_WEIGHT_BYTES_PER_PARAM, OPTIMIZER_BYTES_PER_PARAM,
    S_PER_HOUR, TF32_TO_BF16_PEAK_RATIO,
)
from .params import (
    recompute_code, model_param_counts, attention_flops_per_token_fwd, training_flops_per_token,
)
from .memory import (model_state_gb, microbatches_in_flight, activation_gb)
from .compute import (peak_flops_per_s, gpu_hours, wall_clock_days)

if TYPE_CHECKING:  # imported where a table is built: evaluate() needs no pandas
    import pandas as pd


# =============================================================================
# Calibration on published training runs
# =============================================================================

#: Published runs (memory_and_compute.md §5 / calibration_runs.csv): id, name, catalog model id or
#: architecture (params, layers, hidden, heads), training seq_len, catalog GPU, tokens, GPU-hours.
#: Architectures not in the catalog: LLaMA S04 Table 2 (dims/heads/layers, CONFIRMED); Llama 2 34B
#: 48 x 8192 (Code Llama 34B config, UNCONFIRMED); Pythia S12 Table 1 (UNCONFIRMED here, not
#: transcribed in our reference). seq_len: LLaMA 2048 (S04), Llama 2 4096 (S05), Llama 3 405B
#: 8192 (S07 Table 4), Pythia 2048 (S12).
CALIBRATION_RUNS = (
    ("T04", "LLaMA-7B", (6.7e9, 32, 4096, 32), 2048, "a100-80gb", 1.0e12, 82_432),
    ("T05", "LLaMA-13B", (13.0e9, 40, 5120, 40), 2048, "a100-80gb", 1.0e12, 135_168),
    ("T06", "LLaMA-33B", (32.5e9, 60, 6656, 52), 2048, "a100-80gb", 1.4e12, 530_432),
    ("T07", "LLaMA-65B", (65.2e9, 80, 8192, 64), 2048, "a100-80gb", 1.4e12, 1_022_362),
    ("T08", "Llama 2 7B", "llama-2-7b", 4096, "a100-80gb", 2.0e12, 184_320),
    ("T09", "Llama 2 13B", "llama-2-13b", 4096, "a100-80gb", 2.0e12, 368_640),
    ("T10", "Llama 2 34B", (34e9, 48, 8192, 64), 4096, "a100-80gb", 2.0e12, 1_038_336),
    ("T11", "Llama 2 70B", "llama-2-70b", 4096, "a100-80gb", 2.0e12, 1_720_320),
    ("T16", "Llama 3.1 405B", "llama-3.1-405b", 8192, "h100-sxm", 15.6e12, 30.84e6),
    ("T22", "Pythia-70M", (70e6, 6, 512, 8), 2048, "a100-40gb", 299_892_736_000, 510),
    ("T23", "Pythia-160M", (160e6, 12, 768, 12), 2048, "a100-40gb", 299_892_736_000, 1_030),
    ("T24", "Pythia-410M", (410e6, 24, 1024, 16), 2048, "a100-40gb", 299_892_736_000, 2_540),
    ("T25", "Pythia-1B", (1e9, 16, 2048, 8), 2048, "a100-40gb", 299_892_736_000, 4_830),
    ("T26", "Pythia-1.4B", (1.4e9, 24, 2048, 16), 2048, "a100-40gb", 299_892_736_000, 7_120),
    ("T27", "Pythia-2.8B", (2.8e9, 32, 2560, 32), 2048, "a100-40gb", 299_892_736_000, 14_240),
    ("T28", "Pythia-6.9B", (6.9e9, 32, 4096, 32), 2048, "a100-40gb", 299_892_736_000, 33_500),
    ("T29", "Pythia-12B", (12e9, 36, 5120, 40), 2048, "a100-40gb", 299_892_736_000, 72_300),
)


def calibration_table(catalog=None) -> pd.DataFrame:
    """Predicted vs published GPU-hours for the calibration runs.

    Prediction: tokens x training FLOPs/token (6N + attention, :func:`training_flops_per_token`)
    / (BF16 peak x MFU), at the catalog's ``mfu_default`` and the band ``[mfu_high, mfu_low]``.
    Published GPU-hours include restarts and other overheads (goodput < 1), so a prediction at
    goodput 1 is expected to sit a little below them.

    Returns
    -------
    DataFrame
        one row per run: ``id``, ``model``, ``gpu``, ``params``, ``tokens``,
        ``published_gpu_hours``, ``predicted_gpu_hours``, ``gpu_hours_low``, ``gpu_hours_high``,
        ``error_pct`` (predicted vs published), ``inside_band``, ``implied_mfu``.

    References
    ----------
    .. [1] memory_and_compute.md §5 (calibration_runs.csv): S04 Table 15, S05 Table 2, S07 (Llama
       3.1 card, 30.84M H100-hours) CONFIRMED; S12 Table 5 (Pythia) CORROBORATED.
    """
    import pandas as pd

    from ..catalog import load_catalog

    catalog = catalog or load_catalog()
    rows = []
    for run_id, name, spec, seq_len, gpu_id, tokens, published in CALIBRATION_RUNS:
        if isinstance(spec, str):
            m = catalog.models[spec]
            params = model_param_counts(m)["active_params"]
            layers, hidden, heads, hd = m.layers, m.hidden, m.heads, m.head_dim or m.hidden // m.heads
        else:
            params, layers, hidden, heads = spec
            hd = hidden // heads
        gpu = catalog.gpus[gpu_id]
        fpt = training_flops_per_token(params, attention_flops_per_token_fwd(layers, seq_len, heads, hd, hd))
        flops = tokens * fpt
        peak = peak_flops_per_s(gpu, "bf16")
        pred = gpu_hours(flops, peak, gpu.mfu_default)
        low, high = gpu_hours(flops, peak, gpu.mfu_high), gpu_hours(flops, peak, gpu.mfu_low)
        rows.append({"id": run_id, "model": name, "gpu": gpu_id, "params": params, "tokens": tokens,
                     "published_gpu_hours": published, "predicted_gpu_hours": pred, "gpu_hours_low": low,
                     "gpu_hours_high": high, "error_pct": 100.0 * (pred / published - 1.0),
                     "inside_band": bool(low <= published <= high),
                     "implied_mfu": flops / (published * S_PER_HOUR * peak)})
    return pd.DataFrame(rows)


# =============================================================================
# Vectorised table of training plans
# =============================================================================


def training_table(df: pd.DataFrame, catalog=None) -> pd.DataFrame:
    """Training memory per GPU, GPU-hours and days for a DataFrame of plans, fully vectorised.

    Dense decoder-only models with full training. Required columns: ``params``, ``layers``,
    ``hidden``, ``heads``, ``seq_len``, ``gpus``, ``zero_stage``, ``precision``, ``tokens`` and
    ``gpu`` (catalog id). Optional (default): ``vocab`` (32000), ``tensor_parallel`` (1),
    ``pipeline_parallel`` (1), ``micro_batch`` (1), ``recompute`` ("selective"), ``optimizer``
    ("adamw"), ``global_batch_tokens`` (4e6), ``mfu`` (catalog default), ``sequence_parallel``
    (True), ``flash_attention`` (True), ``usable_memory_fraction`` (0.90).

    Returns
    -------
    DataFrame
        ``weights_gb``, ``gradients_gb``, ``optimizer_gb``, ``activations_gb``, ``per_gpu_gb``,
        ``fits``, ``flops_per_token``, ``total_flops``, ``gpu_hours``, ``wall_clock_days``
        (same index as ``df``).

    References
    ----------
    .. [1] The formula functions of this module (ZeRO S18, Korthikanti S19, Transformer Math S20).
    """
    import pandas as pd

    from ..catalog import load_catalog

    catalog = catalog or load_catalog()

    def col(name, default):
        return df[name].to_numpy() if name in df else np.full(len(df), default)

    params, layers, hidden, heads = (df[c].to_numpy(dtype=float) for c in ("params", "layers", "hidden", "heads"))
    seq_len, gpus, tokens = (df[c].to_numpy(dtype=float) for c in ("seq_len", "gpus", "tokens"))
    zero = df["zero_stage"].to_numpy()
    prec = df["precision"]
    tp, pp = col("tensor_parallel", 1).astype(float), col("pipeline_parallel", 1).astype(float)
    mb = col("micro_batch", 1).astype(float)
    dp = np.maximum(np.floor(gpus / (tp * pp)), 1)
    opt_name = df["optimizer"] if "optimizer" in df else pd.Series("adamw", index=df.index)
    wb = prec.map(BYTES_PER_ELEMENT).to_numpy(dtype=float)
    gb = np.maximum(wb, 2.0)
    ob = (opt_name.map(OPTIMIZER_BYTES_PER_PARAM).to_numpy(dtype=float)
          + np.where(opt_name.to_numpy() == "adafactor", 8.0 / hidden, 0.0)
          - np.where(prec.to_numpy() == "fp32", MASTER_WEIGHT_BYTES_PER_PARAM, 0.0))
    weights, grads, opt = model_state_gb(params, 0.0, wb, gb, ob, tp * pp, dp, zero)
    rc = recompute_code(col("recompute", "selective"))
    in_flight = microbatches_in_flight(pp, col("global_batch_tokens", 4.0e6).astype(float), seq_len, mb, dp)
    act = activation_gb(seq_len, mb, hidden, heads, layers, col("vocab", 32000).astype(float), tp, pp,
                        col("sequence_parallel", True).astype(bool), rc, col("flash_attention", True).astype(bool),
                        in_flight, np.where(wb == 4.0, 4.0, 2.0))
    per_gpu = weights + grads + opt + act
    gpu_ids = df["gpu"]
    table = pd.DataFrame([{"gpu": g.id, "memory_gb": g.memory_gb, "bf16": g.bf16_tflops,
                           "fp8": g.fp8_tflops or g.bf16_tflops, "mfu": g.mfu_default}
                          for g in catalog.gpus.values()]).set_index("gpu")
    per = table.reindex(gpu_ids.to_numpy())
    peak = np.select([prec.to_numpy() == "fp8", prec.to_numpy() == "fp32"],
                     [per["fp8"].to_numpy(), per["bf16"].to_numpy() * TF32_TO_BF16_PEAK_RATIO],
                     per["bf16"].to_numpy()) * FLOPS_PER_TFLOPS
    mfu = col("mfu", np.nan).astype(float)
    mfu = np.where(np.isnan(mfu), per["mfu"].to_numpy(), mfu)
    head_dim = hidden / heads
    fpt = training_flops_per_token(params, attention_flops_per_token_fwd(layers, seq_len, heads, head_dim, head_dim))
    total = tokens * fpt
    hours = gpu_hours(total, peak, mfu)
    usable = per["memory_gb"].to_numpy() * col("usable_memory_fraction", 0.90).astype(float)
    return pd.DataFrame({"weights_gb": weights, "gradients_gb": grads, "optimizer_gb": opt, "activations_gb": act,
                         "per_gpu_gb": per_gpu, "fits": per_gpu <= usable, "flops_per_token": fpt,
                         "total_flops": total, "gpu_hours": hours, "wall_clock_days": wall_clock_days(hours, gpus)},
                        index=df.index)
