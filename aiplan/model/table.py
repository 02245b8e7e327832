"""The vectorised table of training plans (memory, GPU-hours and days for a DataFrame of plans)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.catalog import load_catalog
from .compute import gpu_hours, peak_flops_per_s, wall_clock_days
from .efficiency import calibrated_mfu, effective_mfu, overhead_factor, step_fixed_s
from .memory import (
    activation_bytes_per_element,
    gradient_bytes_per_param,
    layout_memory_gb,
    optimizer_bytes_per_param,
    usable_memory_gb,
    weight_bytes_per_param,
)
from .params import attention_flops_per_token_fwd, recompute_code, training_flops_per_token

if TYPE_CHECKING:  # imported where a table is built: evaluate() needs no pandas
    import pandas as pd


# =============================================================================
# Vectorised table of training plans
# =============================================================================


def _factorize(values) -> tuple[np.ndarray, np.ndarray]:
    """(code of each row, the distinct values) of one column [-]."""
    import pandas as pd

    return pd.factorize(values)


def _groups(*columns) -> tuple[np.ndarray, list[tuple]]:
    """(group number of each row, the distinct rows in group order) of factorized columns [-].

    Each column is a ``(codes, distinct values)`` pair (:func:`_factorize`).
    """
    if len(columns) == 1:
        return columns[0][0], [(value,) for value in columns[0][1]]
    combined = np.zeros(len(columns[0][0]), dtype=np.int64)
    for codes, values in columns:
        combined = combined * len(values) + codes
    group, keys = _factorize(combined)
    distinct = []
    for key in keys:
        parts = []
        for _, values in reversed(columns):
            key, i = divmod(int(key), len(values))
            parts.append(values[i])
        distinct.append(tuple(reversed(parts)))
    return group, distinct


def _per_unique(fn, *columns) -> np.ndarray:
    """``fn`` applied once per distinct row of factorized ``columns``, broadcast back [float]."""
    group, distinct = _groups(*columns)
    return np.array([fn(*key) for key in distinct], dtype=float)[group]


def _rows_by_group(group, groups) -> list[np.ndarray]:
    """The row numbers of each group, in row order [-] (one sort instead of a mask per group)."""
    order = np.argsort(group.astype(np.int16) if groups < 2**15 else group, kind="stable")  # int16: a radix sort
    return np.split(order, np.cumsum(np.bincount(group, minlength=groups))[:-1])


def training_table(df: pd.DataFrame, catalog=None) -> pd.DataFrame:
    """Training memory per GPU, GPU-hours and days for a DataFrame of plans, fully vectorised.

    Dense decoder-only models with full training. Required columns: ``params``, ``layers``,
    ``hidden``, ``heads``, ``seq_len``, ``gpus``, ``zero_stage``, ``precision``, ``tokens`` and
    ``gpu`` (catalog id). Optional (default): ``vocab`` (32000), ``tensor_parallel`` (1),
    ``pipeline_parallel`` (1), ``micro_batch`` (1), ``recompute`` ("selective"), ``optimizer``
    ("adamw"), ``global_batch_tokens`` (4e6), ``mfu`` (catalog default), ``sequence_parallel``
    (True), ``flash_attention`` (True), ``usable_memory_fraction`` (0.90).

    The memory is the one layout-memory formula of a plan's evaluation
    (:func:`~aiplan.model.memory.layout_memory_gb`), and the per-parameter bytes, the peak FLOP/s,
    the calibrated MFU and the usable memory come from the same functions
    (:func:`weight_bytes_per_param`, :func:`peak_flops_per_s`, :func:`calibrated_mfu`,
    :func:`step_fixed_s`, ...), applied once per distinct value.

    Returns
    -------
    DataFrame
        ``weights_gb``, ``gradients_gb``, ``optimizer_gb``, ``activations_gb``, ``per_gpu_gb``,
        ``fits``, ``flops_per_token``, ``total_flops``, ``gpu_hours``, ``wall_clock_days``
        (same index as ``df``).

    References
    ----------
    .. [1] The formula functions of this module (ZeRO, Korthikanti et al., Transformer Math 101).
       [arxiv-1910.02054;arxiv-2205.05198;eleuther-transformer-math-101]

    Examples
    --------
    Rajbhandari et al. 2019 (ZeRO), Fig. 1: Psi = 7.5B on N_d = 64 GPUs, mixed-precision Adam, 120 /
    31.4 / 16.6 / 1.9 GB of model states per GPU for the baseline and stages 1-3:

    >>> import pandas as pd
    >>> plans = pd.DataFrame({"params": 7.5e9, "layers": 32, "hidden": 4096, "heads": 32, "seq_len": 2048,
    ...                       "gpus": 64, "zero_stage": [0, 1, 2, 3], "precision": "bf16", "tokens": 1e11,
    ...                       "gpu": "a100-80gb", "mfu": 0.5})
    >>> t = training_table(plans)
    >>> (t["weights_gb"] + t["gradients_gb"] + t["optimizer_gb"]).round(1).tolist()
    [120.0, 31.4, 16.6, 1.9]
    """
    import pandas as pd


    catalog = catalog or load_catalog()
    n = len(df)

    def col(name, default):
        return df[name].to_numpy() if name in df else np.full(n, default)

    def codes(name, default=None):  # a column of few distinct values, factorized once
        if name in df:
            return _factorize(df[name].to_numpy())  # a numpy array factorizes faster than a str Series
        return np.zeros(n, dtype=np.int64), np.array([default], dtype=object)

    params, layers, hidden, heads = (df[c].to_numpy(dtype=float) for c in ("params", "layers", "hidden", "heads"))
    seq_len, gpus, tokens = (df[c].to_numpy(dtype=float) for c in ("seq_len", "gpus", "tokens"))
    zero = df["zero_stage"].to_numpy()
    prec, gpu_ids = codes("precision"), codes("gpu")
    tp, pp = col("tensor_parallel", 1).astype(float), col("pipeline_parallel", 1).astype(float)
    mb = col("micro_batch", 1).astype(float)
    dp = np.maximum(np.floor(gpus / (tp * pp)), 1)
    opt = codes("optimizer", "adamw")
    batch_tokens = col("global_batch_tokens", 4.0e6).astype(float)
    usable = usable_memory_gb(_per_unique(lambda g: catalog.gpus[g].capacity_gb, gpu_ids),
                              col("usable_memory_fraction", 0.90).astype(float))
    mem = layout_memory_gb(
        params, 0.0, 0.0, _per_unique(weight_bytes_per_param, prec), _per_unique(gradient_bytes_per_param, prec),
        _per_unique(optimizer_bytes_per_param, opt, prec, _factorize(hidden)), tp, pp, dp, zero, 1,
        seq_len, mb, batch_tokens, hidden, heads, layers,
        col("vocab", 32000).astype(float), col("sequence_parallel", True).astype(bool),
        _per_unique(recompute_code, codes("recompute", "selective")).astype(int),
        col("flash_attention", True).astype(bool),
        _per_unique(activation_bytes_per_element, prec), usable)
    group, distinct = _groups(gpu_ids, prec)
    peak = np.array([peak_flops_per_s(catalog.gpus[g], p) for g, p in distinct], dtype=float)[group]
    head_dim = hidden / heads
    fpt = training_flops_per_token(params, attention_flops_per_token_fwd(layers, seq_len, heads, head_dim, head_dim))
    total = tokens * fpt
    mfu = col("mfu", np.nan).astype(float)
    missing = np.isnan(mfu)
    if missing.any():  # the calibrated MFU (dense, full training, per-step fixed costs) at each precision
        calibrated = np.empty(n)
        for key, rows in zip(distinct, _rows_by_group(group, len(distinct))):
            gpu, g = catalog.gpus[key[0]], gpus[rows]
            steady = calibrated_mfu(gpu, key[1], params[rows], False, g, "full", catalog)
            fixed = step_fixed_s(gpu, g, batch_tokens[rows] / seq_len[rows], params[rows], params[rows], params[rows])
            calibrated[rows] = effective_mfu(steady, fpt[rows] * batch_tokens[rows] / (g * peak[rows]), fixed)
        mfu = np.where(missing, calibrated, mfu)
    hours = gpu_hours(total, peak, mfu) * overhead_factor()
    return pd.DataFrame({**{k: mem[k] for k in ("weights_gb", "gradients_gb", "optimizer_gb", "activations_gb",
                                                 "per_gpu_gb", "fits")}, "flops_per_token": fpt,
                         "total_flops": total, "gpu_hours": hours, "wall_clock_days": wall_clock_days(hours, gpus)},
                        index=df.index)
