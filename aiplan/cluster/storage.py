"""Storage and checkpoints: bandwidth, capacity tiers, checkpoint size and write time.

Sizes in GB / TB (10^9 / 10^12 B), bandwidths in GB/s (bytes). Vectorised.
"""

from __future__ import annotations

import numpy as np

from ..core import assumptions as A
from ..core import units

#: NVIDIA DGX SuperPOD H100 storage guidance [GB/s]: level -> {nodes: (read, write)}
#: for one DGX node, one SU (32 nodes) and four SUs (128 nodes) (NVIDIA RA-11333-001 V11,
#: Tables 5-6, pp. 15-17) [nvidia-ra-11333-001]
NVIDIA_STORAGE_LEVELS: dict[str, dict[int, tuple[float, float]]] = {
    "good": {1: (4.0, 2.0), 32: (15.0, 7.0), 128: (60.0, 30.0)},
    "better": {1: (8.0, 4.0), 32: (40.0, 20.0), 128: (160.0, 80.0)},
    "best": {1: (40.0, 20.0), 32: (125.0, 62.0), 128: (500.0, 250.0)},
}
#: what each level is for (same source)
NVIDIA_STORAGE_LEVEL_USE = {
    "good": "NLP; datasets fit in local cache",
    "better": "compressed images (ImageNet); most datasets cached",
    "best": "1080p/4K/uncompressed video, offline inference, ETL; datasets exceed cache",
}
#: GPUs per node behind the NVIDIA table (DGX H100)
NVIDIA_STORAGE_GPUS_PER_NODE = 8
#: checkpoint rule of thumb: "each checkpoint = model size x 4 (FP32) or x 2 (BF16)"
#: [B/param] (DCS Global quick reference, checkpoint storage rule) [seed-ai-training-quick-reference]
SEED_CHECKPOINT_BYTES_PER_PARAM = {"fp32": 4.0, "bf16": 2.0}
#: checkpoint cadence rule of thumb: "save checkpoints every 500-1,000 steps" (DCS Global quick
#: reference, checkpoint storage rule) [seed-ai-training-quick-reference]
SEED_CHECKPOINT_STEPS = (500, 1000)
#: checkpoint-related waste the write bandwidth is sized for, sqrt(2 delta / M)
#: at Young's interval (judgement: 5%, half the ~10% Llama 3 405B lost; Llama Team 2024,
#: §3.3.4, "higher than 90% effective training time") [arxiv-2407.21783]
CHECKPOINT_WASTE_TARGET = 0.05


def read_gb_per_s_rule(gpus, gb_per_s_per_gpu=A.STORAGE_GB_PER_S_PER_GPU_RULE):
    """Rule of thumb: storage read bandwidth = 1 GB/s per GPU [GB/s].

    References
    ----------
    .. [1] DCS Global, "AI Training Infrastructure - Quick Reference", "AI Training
       Infrastructure Sizing Rules of Thumb": "target 1 GB/s of storage throughput per
       GPU". [seed-ai-training-quick-reference]
    .. [2] DDN, "DDN's AI Storage Optimized for NVIDIA DGX B200 Platform", first bullet
       of the benchmark summary: "usual minimum requirement of 1 GB/s/GPU for read and
       write". [ddn-blog-dgx-b200]

    Examples
    --------
    256 GPUs x 1 GB/s (the DDN and DCS Global rule) = 256 GB/s.

    >>> float(read_gb_per_s_rule(256))
    256.0
    """
    return np.asarray(gpus, dtype=float) * gb_per_s_per_gpu


def token_bytes(vocab):
    """Bytes per stored token id: 2 if the vocabulary fits uint16, else 4 [B].

    References
    ----------
    .. [1] NVIDIA Megatron-LM, megatron/core/datasets/indexed_dataset.py,
       ``DType.optimal_dtype``: token ids stored as uint16 when the vocabulary is below
       65,500, else int32 (an implementation convention; this function uses the full
       uint16 range, vocab <= 2**16). [nvidia-megatron-lm-indexed-dataset]

    Examples
    --------
    Llama 2's 32,000-token vocabulary fits uint16 (2 B); Llama 3's 128,256 needs 4 B.

    >>> token_bytes([32000, 128256]).tolist()
    [2.0, 4.0]
    """
    return np.where(np.asarray(vocab) <= 2**16, 2.0, 4.0)


def read_gb_per_s_tokens(tokens_per_s, bytes_per_token):
    """Read bandwidth the training actually consumes: tokens/s x bytes per token [GB/s].

    References
    ----------
    .. [1] Derived (tokenised dataset streamed once per epoch). Compare the NVIDIA
       "good" level for NLP (RA-11333-001 V11, Table 5): datasets fit in local cache. [nvidia-ra-11333-001]

    Examples
    --------
    Derived: 1e6 tokens/s of 4-byte token ids = 0.004 GB/s, far below NVIDIA's "good" level.

    >>> float(read_gb_per_s_tokens(1e6, 4))
    0.004
    """
    return np.asarray(tokens_per_s, dtype=float) * bytes_per_token / units.BYTES_PER_GB


def nvidia_level_gb_per_s(level, nodes):
    """NVIDIA SuperPOD storage guidance for ``nodes`` DGX-class nodes [GB/s].

    Exact at the published points (1 node, 1 SU = 32 nodes, 4 SU = 128
    nodes), linear in between, and above 4 SU extended at the 4-SU rate per
    node; below one node scaled by the node share.

    Parameters
    ----------
    level : {"good", "better", "best"}
    nodes : array_like
        8-GPU nodes [-]

    Returns
    -------
    (read, write) : tuple of ndarray
        [GB/s]

    References
    ----------
    .. [1] NVIDIA, "NVIDIA DGX SuperPOD: Next Generation Scalable Infrastructure for AI
       Leadership", RA-11333-001 V11, 2023, Tables 5-6, pp. 15-17. [nvidia-ra-11333-001]

    Examples
    --------
    RA-11333-001, Tables 5-6: "better" for one SU (32 nodes) reads 40 and writes 20 GB/s; two SUs of
    "good" are interpolated between 15/7 (32 nodes) and 60/30 (128 nodes).

    >>> [float(x) for x in nvidia_level_gb_per_s("better", 32)]
    [40.0, 20.0]
    >>> [round(float(x), 2) for x in nvidia_level_gb_per_s("good", 64)]
    [30.0, 14.67]
    """
    table = NVIDIA_STORAGE_LEVELS[level]
    xs = np.array(sorted(table), dtype=float)
    nodes = np.asarray(nodes, dtype=float)
    out = []
    for i in (0, 1):
        ys = np.array([table[int(x)][i] for x in xs])
        mid = np.interp(nodes, xs, ys)
        out.append(np.where(nodes < xs[0], ys[0] * nodes / xs[0],
                            np.where(nodes > xs[-1], ys[-1] * nodes / xs[-1], mid)))
    return out[0], out[1]


def checkpoint_gb(params, bytes_per_param):
    """Checkpoint size = parameters x bytes per parameter [GB].

    References
    ----------
    .. [1] Rajbhandari et al. 2019, "ZeRO: Memory Optimizations Toward Training Trillion
       Parameter Models", arXiv:1910.02054, §3.1: 16 B/param mixed-precision Adam state,
       (2 + 2 + K) Psi with K = 12. [arxiv-1910.02054]
    .. [2] Derived example: 405e9 parameters (Llama Team 2024, Table 3) x 16 B = 6.48 TB. [arxiv-2407.21783]

    Examples
    --------
    Llama 3 405B (Llama Team 2024, Table 3) at ZeRO's 16 B/param: 6,480 GB.

    >>> float(checkpoint_gb(405e9, 16))
    6480.0
    """
    return np.asarray(params, dtype=float) * bytes_per_param / units.BYTES_PER_GB


def seed_checkpoint_gb(params, precision):
    """Rule of thumb: checkpoint = parameters x 4 B (FP32) or x 2 B (BF16) [GB].

    References
    ----------
    .. [1] DCS Global, "AI Training Infrastructure - Quick Reference", "AI Training
       Infrastructure Sizing Rules of Thumb": "each checkpoint = model size x 4 (FP32) or
       x 2 (BF16)". A rule of thumb; it counts weights only. [seed-ai-training-quick-reference]

    Examples
    --------
    405e9 parameters x 2 B (BF16) = 810 GB by the rule of thumb.

    >>> float(seed_checkpoint_gb(405e9, "bf16"))
    810.0
    """
    return checkpoint_gb(params, SEED_CHECKPOINT_BYTES_PER_PARAM["fp32" if precision == "fp32" else "bf16"])


def write_time_s(size_gb, write_gb_per_s):
    """Checkpoint write time = size / write bandwidth [s] (synchronous write).

    References
    ----------
    .. [1] NVIDIA, "NVIDIA DGX SuperPOD: Next Generation Scalable Infrastructure for AI
       Leadership", RA-11333-001 V11, 2023, storage architecture section: checkpoints are
       "typically written synchronously ... training stops". [nvidia-ra-11333-001]

    Examples
    --------
    6,480 GB at the 2 TB/s sustained throughput of Llama 3's storage (Llama Team 2024, §3.3.1): 3.2 s.

    >>> round(float(write_time_s(6480, 2000)), 1)
    3.2
    """
    return np.asarray(size_gb, dtype=float) / write_gb_per_s


def write_gb_per_s_needed(size_gb, mtbf_s, waste=CHECKPOINT_WASTE_TARGET):
    r"""Write bandwidth that keeps checkpoint waste at ``waste`` [GB/s].

    At Young's interval the checkpoint-related waste is
    ``delta/tau + tau/(2M) = sqrt(2 delta / M)``, so
    ``delta <= waste^2 M / 2`` and

    .. math:: W = \frac{2\,S}{w^2 M}

    References
    ----------
    .. [1] Derived from Young 1974, "A first order approximation to the optimum
       checkpoint interval", CACM 17(9) (write bandwidth needed = checkpoint bytes /
       allowed stall time). [doi-10.1145-361147.361115]

    Examples
    --------
    Derived: a 6,480 GB checkpoint with Llama 3's M = 3.09 h (11,135 s) at 5% waste:
    2 x 6,480 / (0.05^2 x 11,135) = 466 GB/s.

    >>> round(float(write_gb_per_s_needed(6480, 54 * 24 / 419 * 3600)))
    466
    """
    return 2.0 * np.asarray(size_gb, dtype=float) / (waste**2 * np.asarray(mtbf_s, dtype=float))


def capacity_tiers_tb(dataset_tb, checkpoint_tb, growth_factor):
    """Storage tiers [TB].

    * hot (NVMe / parallel filesystem): the dataset in training plus the
      checkpoints kept;
    * warm (capacity disk or object storage): the data lake, dataset x growth
      factor (rule of thumb: "plan for 10x growth in storage capacity", [1]);
    * cold (archive object storage): a backup of the warm tier and of the
      checkpoints kept.

    Returns
    -------
    (hot_tb, warm_tb, cold_tb) : tuple of ndarray

    References
    ----------
    .. [1] Briarwood, "What Is AI Infrastructure?", "Machine Learning Infrastructure
       Design Principles" (hot NVMe / warm HDD or object / cold archive tiers) and
       "Common AI Deployment Infrastructure Mistakes to Avoid" ("Plan for 10x growth in
       storage capacity and throughput"). Rules of thumb. [seed-what-is-ai-infrastructure]
    .. [2] NVIDIA DGX GB200 User Guide, "Storage", "Internal Storage": local NVMe for
       datasets and fast checkpoints. [nvidia-dgx-gb200-ug-storage]

    Examples
    --------
    Derived: a 100 TB dataset, 20 TB of checkpoints kept, 10x growth: hot 120, warm 1,000, cold 1,020 TB.

    >>> [float(x) for x in capacity_tiers_tb(100, 20, 10)]
    [120.0, 1000.0, 1020.0]
    """
    dataset_tb = np.asarray(dataset_tb, dtype=float)
    warm = dataset_tb * growth_factor
    return dataset_tb + checkpoint_tb, warm, warm + checkpoint_tb
