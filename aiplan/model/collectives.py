"""Collective communication of one step: all-reduce times and the scale-up bandwidth.

The formulas the training layout search (:mod:`aiplan.cluster.parallel`) and the serving engine
(:mod:`aiplan.model.serving`) share, so each has one home. Every function takes numpy arrays or
scalars. Sizes are bytes in GB (10^9 B), bandwidths ``_gb_per_s`` (bytes).

Bandwidth conventions
---------------------
* Scale-up (NVLink-class) bandwidth per GPU *per direction* is half the
  catalog figure, because datasheets print the bidirectional total
  (H100 "NVLink 4: 900 GB/s" = 18 links x 50 GB/s both ways = 450 GB/s each
  way; NVIDIA H100 specifications [nvidia-h100-page]).
* Scale-out bandwidth per GPU is the node's compute NICs shared by its GPUs:
  ``nics_per_node x nic_gbps / gpus_per_node / 8`` (DGX H100: 8 x 400 Gb/s
  / 8 GPUs = 50 GB/s; NVIDIA RA-11333-001, pp. 5, 12 [nvidia-ra-11333-001]).
* Collective times use the nccl-tests bus-bandwidth model ``t = S / B x f``
  with ``f`` the correction factor of the collective (nccl-tests
  doc/PERFORMANCE.md, "Bus bandwidth" [nvidia-nccl-tests-performance-md]),
  latency ignored.
"""

from __future__ import annotations

import numpy as np

from ..core import units

#: tensor-parallel all-reduces per transformer layer per micro-batch: 2 in the
#: forward pass (attention + MLP) and 2 in the backward pass; full activation
#: recomputation repeats the forward pair. Shoeybi et al. 2019 (Megatron-LM,
#: arXiv:1909.08053 §3, Fig. 4) / Korthikanti et al. 2022 (arXiv:2205.05198 §4.2.2:
#: with sequence parallelism the all-reduce becomes all-gather + reduce-scatter of
#: the same total volume) [arxiv-1909.08053;arxiv-2205.05198].
TP_ALLREDUCES_PER_LAYER = 4
TP_ALLREDUCES_PER_LAYER_RECOMPUTE = 2


def allreduce_factor(n, in_network=False):
    r"""Bus-bandwidth correction factor of an all-reduce over ``n`` ranks.

    .. math:: f = 2(n-1)/n \quad\text{(ring/tree)}, \qquad f = (n-1)/(n+1)
              \quad\text{(in-network reduction, SHARP)}

    Parameters
    ----------
    n : array_like
        ranks in the collective [-]
    in_network : bool or array_like of bool
        reduction done in the switches (SHARP)

    Returns
    -------
    factor : ndarray
        ``t = S / B x factor`` [-]; 0 for ``n = 1``.

    References
    ----------
    .. [1] NVIDIA nccl-tests, ``doc/PERFORMANCE.md``, "AllReduce" and "Summary"
       (correction factor 2(n-1)/n). [nvidia-nccl-tests-performance-md]
    .. [2] The in-network factor (n-1)/(n+1) is only in nccl-tests pull request 239
       (commit 4ec7c79, "AllReduce (In-Network Reduction)"), which is not merged. [nvidia-nccl-tests-pr-239]

    Examples
    --------
    nccl-tests PERFORMANCE.md: a ring all-reduce over 8 ranks moves 2 x 7/8 = 1.75 times the buffer per
    rank; in-network reduction (SHARP) 7/9 = 0.78; one rank nothing.

    >>> float(allreduce_factor(8)), round(float(allreduce_factor(8, in_network=True)), 2), float(allreduce_factor(1))
    (1.75, 0.78, 0.0)
    """
    n = np.asarray(n, dtype=float)
    if in_network is False or in_network is True:  # one kind for every n: only its formula
        return (n - 1.0) / (n + 1.0) if in_network else 2.0 * (n - 1.0) / n
    ring = 2.0 * (n - 1.0) / n
    sharp = (n - 1.0) / (n + 1.0)
    return np.where(in_network, sharp, ring)


def allreduce_time_s(size_gb, n, bandwidth_gb_per_s, in_network=False):
    r"""Time of an all-reduce of ``size_gb`` per rank over ``n`` ranks.

    .. math:: t = \frac{S}{B}\, f(n)

    Parameters
    ----------
    size_gb : array_like
        bytes reduced per rank (the buffer size S) [GB]
    n : array_like
        ranks [-]
    bandwidth_gb_per_s : array_like
        per-rank link bandwidth, one direction [GB/s]
    in_network : bool or array_like of bool
        SHARP-style reduction in the switches

    Returns
    -------
    time_s : ndarray
        [s], latency ignored

    References
    ----------
    .. [1] NVIDIA nccl-tests, ``doc/PERFORMANCE.md``, "Algorithm bandwidth" and
       "AllReduce": ``busbw = algbw x 2(n-1)/n``, ``algbw = S/t``. Worked example
       (derived): 2 x 1023/1024 x 10 GB / 50 GB/s = 0.40 s for n = 1024. [nvidia-nccl-tests-performance-md]

    Examples
    --------
    10 GB over 1,024 ranks at 50 GB/s each way (one 400 Gb/s NIC per GPU), derived:
    10 / 50 x 2 x 1,023/1,024 = 0.40 s.

    >>> round(float(allreduce_time_s(10.0, 1024, 50.0)), 2)
    0.4
    """
    return np.asarray(size_gb, dtype=float) / bandwidth_gb_per_s * allreduce_factor(n, in_network)


def tp_allreduce_s(tokens, hidden, allreduces, tensor_parallel, bandwidth_gb_per_s, act_bytes=2.0, latency_s=0.0):
    r"""Time of ``allreduces`` tensor-parallel all-reduces of the activations of ``tokens`` tokens [s].

    .. math:: t = n_{ar}\,\bigl(\alpha + \frac{n\,h\,a}{B}\,\frac{2(t-1)}{t}\bigr)
              \quad (0 \text{ for } t = 1)

    The one tensor-parallel communication formula: the training layout
    (:func:`tensor_parallel_comm_s`) and the serving engine (:func:`aiplan.model.serving.prepare`)
    both call it, with the scale-up bandwidth per GPU in one direction (:func:`scale_up_gb_per_s`).

    Parameters
    ----------
    tokens : array_like
        n, tokens whose activations each all-reduce carries [tokens]
    hidden : array_like
        h, hidden size [-]
    allreduces : array_like
        n_ar, all-reduces [-]
    tensor_parallel : array_like
        t, ranks [-]
    bandwidth_gb_per_s : array_like
        B, scale-up bandwidth per GPU, one direction [GB/s]
    act_bytes : array_like
        a, bytes per activation element [B]
    latency_s : array_like
        alpha, fixed cost of one all-reduce [s]

    Returns
    -------
    time_s : ndarray [s]

    References
    ----------
    .. [1] Shoeybi et al. 2019, "Megatron-LM", arXiv:1909.08053, §3, Fig. 4. [arxiv-1909.08053]
    .. [2] NVIDIA nccl-tests, ``doc/PERFORMANCE.md``, "AllReduce" (bus bandwidth 2(n-1)/n).
       [nvidia-nccl-tests-performance-md]

    Examples
    --------
    One all-reduce of 1,000 tokens of a 8,192-wide model in BF16 (16.4 MB) over 8 H100 at 450 GB/s
    each way: 16.4 MB / 450 GB/s x 2 x 7/8 = 63.7 us.

    >>> round(float(tp_allreduce_s(1000, 8192, 1, 8, 450.0)) * 1e6, 1)
    63.7
    """
    msg_gb = np.asarray(tokens, dtype=float) * hidden * act_bytes / units.BYTES_PER_GB
    per = latency_s + allreduce_time_s(msg_gb, tensor_parallel, bandwidth_gb_per_s)
    return np.where(np.asarray(tensor_parallel) > 1, np.asarray(allreduces) * per, 0.0)


def tensor_parallel_comm_s(micro_batch, seq_len, hidden, layers_per_stage, microbatches, tensor_parallel,
                           bandwidth_gb_per_s, act_bytes=2.0, full_recompute=False):
    r"""Tensor-parallel all-reduce time per step per GPU (not overlapped).

    .. math:: t = m \cdot \frac{L}{p} \cdot n_{ar} \cdot \frac{b\,s\,h\,a}{B}\,\frac{2(t-1)}{t}

    with ``n_ar = 4`` (6 with full recomputation).

    Parameters
    ----------
    micro_batch : array_like
        sequences per micro-batch b [-]
    seq_len, hidden : int
        s [tokens], h [-]
    layers_per_stage : array_like
        L / pp [-]
    microbatches : array_like
        micro-batches per step per GPU m [-]
    tensor_parallel : array_like
        t [-]
    bandwidth_gb_per_s : float
        scale-up bandwidth per GPU, one direction [GB/s]
    act_bytes : float
        bytes per activation element [B]
    full_recompute : bool or array_like of bool
        the forward pass (and its all-reduces) is recomputed in backward

    Returns
    -------
    time_s : ndarray [s]

    References
    ----------
    .. [1] Shoeybi et al. 2019, "Megatron-LM", arXiv:1909.08053, §3, Fig. 4 (two
       all-reduces in forward, two in backward per layer). [arxiv-1909.08053]
    .. [2] Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
       Transformer Models", arXiv:2205.05198, §4.2.2 (sequence parallelism keeps the
       volume). [arxiv-2205.05198]

    Examples
    --------
    Derived: one 4,096-token sequence per micro-batch, h 8,192, 10 layers per stage, 8 micro-batches,
    TP 8 over H100 NVLink (450 GB/s each way): 4 x 10 x 8 = 320 all-reduces of 67.1 MB, each
    67.1 MB / 450 GB/s x 1.75 = 261 us, 83.5 ms per step.

    >>> round(float(tensor_parallel_comm_s(1, 4096, 8192, 10, 8, 8, 450.0)) * 1e3, 1)
    83.5
    """
    n_ar = TP_ALLREDUCES_PER_LAYER + np.where(full_recompute, TP_ALLREDUCES_PER_LAYER_RECOMPUTE, 0)
    return tp_allreduce_s(np.asarray(micro_batch, dtype=float) * seq_len, hidden,
                          n_ar * np.asarray(layers_per_stage) * microbatches, tensor_parallel, bandwidth_gb_per_s,
                          act_bytes)


def scale_up_gb_per_s(bidirectional_gb_per_s):
    """Scale-up bandwidth per GPU, one direction [GB/s] = datasheet bidirectional / 2.

    References
    ----------
    .. [1] NVIDIA H100 Tensor Core GPU, specifications table (NVLink 900 GB/s): the
       printed figure is the bidirectional total of 18 NVLink-4 links. [nvidia-h100-page]

    Examples
    --------
    H100 specifications: NVLink 900 GB/s (both directions) -> 450 GB/s each way.

    >>> float(scale_up_gb_per_s(900))
    450.0
    """
    return np.asarray(bidirectional_gb_per_s, dtype=float) / 2.0




def all_to_all_time_s(tokens, hidden, experts_per_token, ranks, bandwidth_gb_per_s, act_bytes=2.0, latency_s=0.0):
    r"""Time of one expert-parallel all-to-all (dispatch or combine) of ``tokens`` tokens per rank [s].

    .. math:: t = \alpha + \frac{n\,k\,h\,a}{B}\,\frac{e-1}{e} \quad (0 \text{ for } e = 1)

    Each token's hidden vector goes to the ranks of its ``k`` routed experts; with experts spread
    evenly over ``e`` ranks a share ``(e-1)/e`` of them are on other ranks.

    Parameters
    ----------
    tokens : array_like
        n, tokens a rank sends [tokens]
    hidden : array_like
        h [-]
    experts_per_token : array_like
        k, routed experts per token [-]
    ranks : array_like
        e, expert-parallel ranks [-]
    bandwidth_gb_per_s : array_like
        B, per rank, one direction [GB/s]
    act_bytes : array_like
        a, bytes per element sent [B]
    latency_s : array_like
        alpha, fixed cost of the collective [s]

    Returns
    -------
    time_s : ndarray [s]

    References
    ----------
    .. [1] Lepikhin et al. 2020, "GShard", arXiv:2006.16668 §3.2 (dispatch and combine all-to-alls of
       expert parallelism). [arxiv-2006.16668]
    .. [2] DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", arXiv:2412.19437 §3.2.2 and §3.4
       (dispatch and combine over NVLink and InfiniBand; expert parallelism in inference). [arxiv-2412.19437]

    Examples
    --------
    256 tokens of DeepSeek-V3 (h 7,168, 8 experts each) in FP8 over EP 8 at 450 GB/s: 28.5 us.

    >>> round(float(all_to_all_time_s(256, 7168, 8, 8, 450.0, 1.0)) * 1e6, 1)
    28.5
    """
    e = np.asarray(ranks, dtype=float)
    size = np.asarray(tokens, dtype=float) * hidden * experts_per_token * act_bytes / units.BYTES_PER_GB
    return np.where(e > 1, latency_s + size / bandwidth_gb_per_s * (e - 1.0) / e, 0.0)
