"""Training time and GPU counts from FLOPs, peak and MFU."""

from __future__ import annotations

import numpy as np

from ..core.units import FLOPS_PER_TFLOPS, HOURS_PER_DAY, S_PER_DAY, S_PER_HOUR, TF32_TO_BF16_PEAK_RATIO

# =============================================================================
# Time and GPUs
# =============================================================================


def peak_flops_per_s(gpu, precision="bf16"):
    """Dense peak FLOP/s of a catalog GPU for a compute precision [FLOP/s].

    bf16/fp16 (incl. fp32-master mixed precision): ``bf16_tflops``; fp8: ``fp8_tflops`` (bf16 if
    the GPU has none); fp4: ``fp4_tflops`` (NVFP4/MXFP4 matmuls; else fp8, else bf16); int8:
    ``int8_tops`` (else bf16); int4 weights: bf16 (weight-only
    quantisation dequantises to 16-bit for the matmul); fp32: bf16 x 0.5, the TF32 dense rate of
    A100/H100 (TF32 is not in the catalog).

    Parameters
    ----------
    gpu : GPU
        catalog record.
    precision : str
        fp32 | fp16 | bf16 | fp8 | fp4 | int8 | int4.

    Returns
    -------
    float
        [FLOP/s].

    References
    ----------
    .. [1] NVIDIA A100 Tensor Core GPU datasheet, specification table (TF32 156 vs BF16 312 dense);
       NVIDIA H100 Tensor Core GPU, specifications table. [nvidia-a100-datasheet;nvidia-h100-page]
    .. [2] NVIDIA 2025, "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference"
       (FP4 matmuls on Blackwell tensor cores). [nvidia-nvfp4-blog]

    Examples
    --------
    NVIDIA A100 datasheet: 312 TFLOP/s dense BF16, 156 TF32 (the rate pure fp32 training uses).

    >>> from aiplan.core.catalog import load_catalog
    >>> a100 = load_catalog().gpus["a100-80gb"]
    >>> peak_flops_per_s(a100) / 1e12, peak_flops_per_s(a100, "fp32") / 1e12
    (312.0, 156.0)
    """
    bf16 = gpu.bf16_tflops
    tflops = {"fp32": bf16 * TF32_TO_BF16_PEAK_RATIO, "fp8": gpu.fp8_tflops or bf16,
              "fp4": gpu.fp4_tflops or gpu.fp8_tflops or bf16, "int8": gpu.int8_tops or bf16}.get(precision, bf16)
    return tflops * FLOPS_PER_TFLOPS


def gpu_hours(total_flops, peak_flops_per_s, mfu):
    """GPU-hours to run ``total_flops`` model FLOPs at a model FLOP utilisation.

    Parameters
    ----------
    total_flops : numeric
        model FLOPs [FLOP].
    peak_flops_per_s : numeric
        dense peak per GPU [FLOP/s].
    mfu : numeric
        model FLOP utilisation [-].

    Returns
    -------
    numeric
        [GPU-h].

    References
    ----------
    .. [1] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Compute Requirements": ``C = tau T``,
       tau = GPUs x achieved FLOP/s. [eleuther-transformer-math-101]
    .. [2] MFU as defined by Chowdhery et al. 2022, "PaLM: Scaling Language Modeling with
       Pathways", arXiv:2204.02311, App. B, and Korthikanti et al. 2022, arXiv:2205.05198,
       Table 5. [arxiv-2204.02311;arxiv-2205.05198]

    Examples
    --------
    Narayanan et al. 2021, §5.1: GPT-3 175B on 300e9 tokens costs 8TP = 4.2e23 FLOPs (8, not 6: the
    recomputed forward pass is counted, so 140/312 is here a hardware FLOP utilisation) at 140 TFLOP/s
    per A100 (312 peak): 4.2e23 / 140e12 / 3,600 = 833,333 GPU-hours.

    >>> round(float(gpu_hours(8 * 175e9 * 300e9, 312e12, 140 / 312)))
    833333
    """
    return total_flops / (peak_flops_per_s * mfu) / S_PER_HOUR


def wall_clock_days(gpu_hours_, gpus, goodput=1.0):
    """Wall-clock days for ``gpu_hours_`` spread over ``gpus`` at a goodput fraction.

    Parameters
    ----------
    gpu_hours_ : numeric
        [GPU-h].
    gpus : numeric
        [GPUs].
    goodput : numeric
        productive share of wall-clock time [-].

    Returns
    -------
    numeric
        [days].

    References
    ----------
    .. [1] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Compute Requirements" (C = tau x T). [eleuther-transformer-math-101]
    .. [2] Goodput: Llama Team 2024, "The Llama 3 Herd of Models", arXiv:2407.21783, §3.3.4.
       [arxiv-2407.21783]

    Examples
    --------
    Narayanan et al. 2021, §5.1: those 833,333 GPU-hours on 1,024 A100 take the paper's 34 days.

    >>> round(float(wall_clock_days(833333, 1024)), 1)
    33.9
    """
    return gpu_hours_ / (gpus * goodput) / HOURS_PER_DAY


def gpus_for_deadline(total_flops, peak_flops_per_s, mfu, deadline_days, gpus_per_node, goodput=1.0):
    """GPUs that finish ``total_flops`` within ``deadline_days``, rounded up to whole nodes.

    .. math:: \\lceil C / (\\text{peak} \\cdot \\text{MFU} \\cdot \\text{goodput} \\cdot T
              \\cdot n_{node}) \\rceil n_{node}

    Parameters
    ----------
    total_flops : numeric
        model FLOPs [FLOP].
    peak_flops_per_s : numeric
        dense peak per GPU [FLOP/s].
    mfu, goodput : numeric
        model FLOP utilisation and productive time share [-].
    deadline_days : numeric
        [days].
    gpus_per_node : numeric
        [GPUs].

    Returns
    -------
    numeric
        [GPUs] (a multiple of ``gpus_per_node``, at least one node).

    References
    ----------
    .. [1] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Compute Requirements": ``C = tau T``. [eleuther-transformer-math-101]

    Examples
    --------
    The inverse of Narayanan et al. 2021, §5.1: 4.2e23 FLOPs at 140 TFLOP/s per A100 within 34 days
    need 1,021.2 GPUs, rounded up to 128 eight-GPU nodes, the paper's 1,024 GPUs.

    >>> int(gpus_for_deadline(8 * 175e9 * 300e9, 312e12, 140 / 312, 34, 8))
    1024
    """
    per_gpu_flops = peak_flops_per_s * mfu * goodput * deadline_days * S_PER_DAY
    nodes = np.ceil(total_flops / per_gpu_flops / gpus_per_node)
    return np.maximum(nodes, 1) * gpus_per_node
