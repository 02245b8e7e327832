"""Network: data-parallel and pipeline communication, link bandwidths and fat-tree fabric sizing.

Every function takes numpy arrays or scalars (the layout search calls them on
millions of candidates at once). Sizes are bytes in GB (10^9 B), bandwidths
``_gb_per_s`` (bytes) or ``_gbps`` (bits). The collective primitives (all-reduce, tensor-parallel
all-reduce, the scale-up bandwidth) are :mod:`aiplan.model.collectives`, shared with the serving
engine.

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

#: transceiver ports: NVIDIA counts twin-port OSFP cages, 2 switch ports per
#: transceiver (NVIDIA RA-11333-001 App. A, Table 8: 1,536 switch OSFP = 48 switches x 32 cages)
#: [nvidia-ra-11333-001]
PORTS_PER_TRANSCEIVER = 2
#: ZeRO-3 moves 1.5x the data of ZeRO-0..2 per step (3 Psi vs 2 Psi: parameter
#: all-gather in forward and backward + gradient reduce-scatter), Rajbhandari
#: et al. 2019, arXiv:1910.02054 §7.2.2 [arxiv-1910.02054]
ZERO3_COMM_MULTIPLIER = 1.5
OVERLAP_NOTE = (
    "Data-parallel gradient all-reduce (or ZeRO reduce-scatter/all-gather) overlaps the backward pass "
    "of the last micro-batch of each step, except the bucket of the last layer computed (1/(layers per "
    "stage) of the volume), which is always exposed. Tensor-parallel all-reduces (on the scale-up link) "
    "and pipeline sends/receives (scale-out unless the whole job sits in one node) are not overlapped. "
    "Pipeline bubble: 1F1B, (pp-1)/m of the compute time, m = micro-batches per step. Latency and "
    "congestion are ignored; compute runs at the plan's MFU, which for published runs already absorbs "
    "some communication, so step_time_s is a conservative figure for ranking layouts."
)

ALLREDUCE_TO_COMPUTE_NOTE = (
    "Rule of thumb 'all-reduce bandwidth >= 10% of GPU compute bandwidth' (DCS Global quick reference "
    "[seed-ai-training-quick-reference]), read as: per-GPU bandwidth (one "
    "direction) of the link the data-parallel all-reduce runs on (scale-out NIC share when the "
    "data-parallel group spans nodes, else the scale-up link) divided by the per-GPU scale-up "
    "(NVLink-class) bandwidth, one direction, which is the bandwidth GPUs use to exchange data while "
    "computing (tensor parallelism). DGX H100: 50 / 450 GB/s = 0.11. The comm_fraction is the "
    "detailed answer."
)


def gradient_allreduce_gb(params, tensor_parallel, pipeline_parallel, grad_bytes=2.0, zero_stage=0):
    r"""Gradient bytes one GPU synchronises per step over its data-parallel group.

    .. math:: S = \frac{P}{t\,p}\, b_g \times (1.5 \text{ if ZeRO-3})

    ZeRO-1/2 replace the all-reduce by reduce-scatter + all-gather of the same
    volume; ZeRO-3 adds a parameter all-gather (1.5x).

    Parameters
    ----------
    params : array_like
        parameters whose gradients are synchronised (trainable) [-]
    tensor_parallel, pipeline_parallel : array_like
        degrees [-]
    grad_bytes : float
        bytes per gradient element [B] (2 for bf16/fp16 gradients; Transformer Math 101,
        "Gradients" [eleuther-transformer-math-101])
    zero_stage : array_like
        0..3

    Returns
    -------
    size_gb : ndarray
        [GB]

    References
    ----------
    .. [1] Rajbhandari et al. 2019, "ZeRO: Memory Optimizations Toward Training Trillion
       Parameter Models", arXiv:1910.02054, §7.2.2 (2 Psi vs 3 Psi data movement). [arxiv-1910.02054]
    .. [2] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101", "Gradients" and
       "3D Parallelism" (gradients/PP; shards by TP x PP). [eleuther-transformer-math-101]

    Examples
    --------
    Llama 2 7B (6.74e9 parameters), bf16 gradients, no model parallelism: 13.48 GB per step; ZeRO-3
    moves 1.5 times that (3 Psi instead of 2 Psi, ZeRO §7.2.2): 20.22 GB.

    >>> [round(float(gradient_allreduce_gb(6.74e9, 1, 1, zero_stage=z)), 2) for z in (1, 3)]
    [13.48, 20.22]
    """
    size = np.asarray(params, dtype=float) * grad_bytes / (np.asarray(tensor_parallel) * pipeline_parallel)
    return size / units.BYTES_PER_GB * np.where(np.asarray(zero_stage) >= 3, ZERO3_COMM_MULTIPLIER, 1.0)


def pipeline_comm_s(micro_batch, seq_len, hidden, microbatches, tensor_parallel, pipeline_parallel,
                    bandwidth_gb_per_s, act_bytes=2.0):
    r"""Pipeline send/receive time per step per GPU (not overlapped).

    Each micro-batch crosses a stage boundary twice (activations forward,
    gradients backward); with the scatter/gather optimisation each of the
    ``t`` tensor-parallel ranks sends ``1/t`` of the ``b s h`` tensor.

    .. math:: t = 2\,m\,\frac{b\,s\,h\,a}{t\,B} \quad (p > 1), \qquad 0 \quad (p = 1)

    Parameters
    ----------
    micro_batch, seq_len, hidden, microbatches, tensor_parallel, pipeline_parallel : array_like
        b, s, h, m, t, p [-]
    bandwidth_gb_per_s : array_like
        per-GPU bandwidth of the stage-to-stage link, one direction [GB/s]
    act_bytes : float
        bytes per activation element [B]

    Returns
    -------
    time_s : ndarray [s]

    References
    ----------
    .. [1] Narayanan et al. 2021, "Efficient Large-Scale Language Model
       Training on GPU Clusters Using Megatron-LM", arXiv:2104.04473, §4.1
       (scatter/gather: b s h / t per rank). [arxiv-2104.04473]

    Examples
    --------
    Derived: GPT-3 175B micro-batches of one 2,048-token sequence (2,048 x 12,288 x 2 B = 50.3 MB),
    split over 8 tensor-parallel ranks, sent forward and back for 64 micro-batches at 50 GB/s:
    2 x 64 x 6.29 MB / 50 GB/s = 16.1 ms.

    >>> round(float(pipeline_comm_s(1, 2048, 12288, 64, 8, 8, 50.0)) * 1e3, 1)
    16.1
    """
    msg_gb = np.asarray(micro_batch, dtype=float) * seq_len * hidden * act_bytes / units.BYTES_PER_GB
    time_s = 2.0 * np.asarray(microbatches) * msg_gb / tensor_parallel / bandwidth_gb_per_s
    return np.where(np.asarray(pipeline_parallel) > 1, time_s, 0.0)


def bubble_time_s(compute_s, pipeline_parallel, microbatches):
    r"""Idle time of the 1F1B pipeline schedule per step.

    .. math:: t_{bubble} = t_{compute}\,\frac{p-1}{m}

    Parameters
    ----------
    compute_s : array_like
        ideal compute time per step [s]
    pipeline_parallel, microbatches : array_like
        p, m [-]

    Returns
    -------
    time_s : ndarray [s]

    References
    ----------
    .. [1] Narayanan et al. 2021, arXiv:2104.04473, §2.2.1 (bubble time
       fraction (p-1)/m). [arxiv-2104.04473]
    .. [2] Korthikanti et al. 2022, arXiv:2205.05198, §4.2.3 uses the same schedule. [arxiv-2205.05198]

    Examples
    --------
    Narayanan et al. 2021, §2.2.1: 8 stages and 64 micro-batches idle (8 - 1)/64 = 10.9% of the
    compute time, 1.09 s of a 10 s step.

    >>> round(float(bubble_time_s(10.0, 8, 64)), 2)
    1.09
    """
    return np.asarray(compute_s) * (np.asarray(pipeline_parallel) - 1.0) / microbatches


def exposed_dp_s(allreduce_s, compute_s, microbatches, layers_per_stage):
    r"""Exposed part of the data-parallel all-reduce under the stated overlap.

    The all-reduce overlaps the backward pass of the last micro-batch
    (2/3 of its compute, [1]), except the bucket of the last layer, which is
    always exposed:

    .. math:: t_{exp} = \max\!\left(t_{dp} - \tfrac{2}{3}\tfrac{t_c}{m},\;
              \frac{t_{dp}}{L/p}\right)

    Parameters
    ----------
    allreduce_s, compute_s : array_like
        full all-reduce and compute time per step [s]
    microbatches, layers_per_stage : array_like
        m, L/p [-]

    Returns
    -------
    time_s : ndarray [s]

    References
    ----------
    .. [1] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101", "Compute
       Requirements" (backward = 4PD of 6PD). [eleuther-transformer-math-101]
       The overlap rule itself is a modelling assumption
       (PyTorch DDP / Megatron overlap gradient reduction with backward; with
       gradient accumulation only the last micro-batch's backward).

    Examples
    --------
    Derived: 30 s of compute in 10 micro-batches leaves a 2/3 x 3 s = 2 s backward pass to hide in.
    A 1 s all-reduce shows only its last-layer bucket (1 s / 40 layers = 0.025 s); a 3 s one shows 1 s.

    >>> float(exposed_dp_s(1.0, 30.0, 10, 40)), float(exposed_dp_s(3.0, 30.0, 10, 40))
    (0.025, 1.0)
    """
    window = (2.0 / 3.0) * np.asarray(compute_s) / microbatches
    return np.maximum(np.asarray(allreduce_s) - window, np.asarray(allreduce_s) / layers_per_stage)


# --- bandwidths ------------------------------------------------------------------


def scale_out_gb_per_s(nics_per_node, nic_gbps, gpus_per_node):
    """Scale-out bandwidth per GPU, one direction [GB/s].

    Parameters
    ----------
    nics_per_node : array_like
        compute-fabric NICs per node [-]
    nic_gbps : array_like
        speed of one NIC [Gb/s]
    gpus_per_node : array_like
        [-]

    References
    ----------
    .. [1] NVIDIA, "NVIDIA DGX SuperPOD: Next Generation Scalable Infrastructure for AI
       Leadership", RA-11333-001 V11, 2023, pp. 5, 12: 8 x single-port ConnectX-7 NDR400
       per DGX H100, one per GPU. [nvidia-ra-11333-001]

    Examples
    --------
    DGX H100 (RA-11333-001, pp. 5, 12): 8 x 400 Gb/s NICs for 8 GPUs = 50 GB/s per GPU.

    >>> float(scale_out_gb_per_s(8, 400, 8))
    50.0
    """
    return np.asarray(nics_per_node, dtype=float) * nic_gbps / gpus_per_node / units.BITS_PER_BYTE


def allreduce_to_compute_ratio(allreduce_gb_per_s, scale_up_gb_per_s_):
    """Rule-of-thumb ratio: all-reduce link bandwidth / scale-up ("compute") bandwidth [-].

    See ``ALLREDUCE_TO_COMPUTE_NOTE`` for the interpretation; the rule asks
    for at least 0.10 (``A.ALLREDUCE_TO_COMPUTE_MIN``).

    References
    ----------
    .. [1] DCS Global, "AI Training Infrastructure - Quick Reference", "AI Training
       Infrastructure Sizing Rules of Thumb": "all-reduce bandwidth should be at least
       10% of GPU compute bandwidth". A rule of thumb, no primary source. [seed-ai-training-quick-reference]

    Examples
    --------
    DGX H100: 50 GB/s of NIC per GPU over 450 GB/s of NVLink each way = 0.11, just above the 0.10 the
    rule asks for.

    >>> round(float(allreduce_to_compute_ratio(50.0, 450.0)), 2)
    0.11
    """
    return np.asarray(allreduce_gb_per_s, dtype=float) / scale_up_gb_per_s_


# --- fabric ----------------------------------------------------------------------


def _round_up_to_divisor(x: int, n: int) -> int:
    """Smallest divisor of ``n`` that is >= ``x`` (``n`` if none)."""
    return next((d for d in range(max(int(x), 1), n + 1) if n % d == 0), n)


def fabric_planes(nic_gbps, port_gbps) -> int:
    """Planes of a fabric: how many switch ports one NIC feeds (an 800G NIC on 400G ports: 2).

    Parameters
    ----------
    nic_gbps, port_gbps : float or None
        speed of one NIC and of one switch port [Gb/s]; 1 plane when either is unknown.

    Returns
    -------
    int
        [-]

    References
    ----------
    .. [1] NVIDIA DGX SuperPOD B300 reference architecture, Spectrum-X Ethernet fabric: each GPU has
       2 x 400GbE, one per plane, on SN5600 switches [nvidia-superpod-b300-eth-ra-fabrics]

    Examples
    --------
    DGX SuperPOD B300 on Spectrum-X: an 800G NIC on 400G switch ports feeds two planes.

    >>> fabric_planes(800, 400), fabric_planes(400, 400)
    (2, 1)
    """
    if not nic_gbps or not port_gbps or nic_gbps <= port_gbps:
        return 1
    return max(1, round(nic_gbps / port_gbps))


def leaf_ports(radix, oversubscription=1.0):
    r"""Down- and uplinks of one leaf switch for a given oversubscription.

    .. math:: u = \lceil k/(1+o) \rceil, \qquad d = k - u

    Parameters
    ----------
    radix : int
        switch ports k [-]
    oversubscription : float
        downlink : uplink bandwidth o (1 = non-blocking) [-]

    Returns
    -------
    (down, up) : tuple of int

    References
    ----------
    .. [1] Derived (definition of oversubscription): a leaf uses d = k o/(1+o)
       downlinks and k/(1+o) uplinks. Rounded so that the real ratio never exceeds o.

    Examples
    --------
    A 64-port leaf, non-blocking: 32 down, 32 up; at 3:1 oversubscription: 48 down, 16 up (derived).

    >>> leaf_ports(64, 1.0), leaf_ports(64, 3.0)
    ((32, 32), (48, 16))
    """
    up = int(np.ceil(radix / (1.0 + oversubscription) - 1e-9))
    return radix - up, up


def _cages(ports, switches, fixed=0):
    """Twin-port transceiver cages of ``switches`` switches whose ``ports`` are spread evenly, plus ``fixed`` ports
    spread the same way (a half-used cage counts whole) [-]."""
    if switches <= 0:
        return 0
    each, more = divmod(int(ports), int(switches))
    extra = int(fixed) // int(switches)
    cage = lambda n: -(-(n + extra) // PORTS_PER_TRANSCEIVER)  # noqa: E731
    return more * cage(each + 1) + (int(switches) - more) * cage(each)


def fabric(endpoints, radix=64, oversubscription=1.0, rails=1, extra_ports=0, nodes=None,
           nics_per_node=None):
    r"""Switch, cable and transceiver counts of a rail-optimised fat tree.

    Rules (derived from the k-ary fat tree [2] and tested against the NVIDIA
    SuperPOD tables [1]):

    1. Leaves come in scalable units of ``rails`` leaves, one per rail, each
       with ``d`` downlinks; a partial unit is built in full
       (``leaves = ceil((N + extra) / (rails d)) x rails``). One switch
       (no spine) if everything fits in ``radix`` ports.
    2. Two tiers while ``leaves <= radix``: spines = ``ceil(leaves u / k)``
       rounded up to a divisor of ``u`` (the uplinks of one leaf).
    3. Beyond: three tiers, spines = ``ceil(leaves u / (k/2))``,
       core = ``ceil(spines (k/2) / k)`` (k-ary fat tree, k^3/4 endpoints).
    4. Transceivers: twin-port cages for the switch ports in use (each
       switch's ports spread evenly, a half-used cage counted whole; a full
       fabric fills every switch: ``k/2`` per switch), ``ceil(nics/2)`` per
       node, one per extra port (UFM).
    5. ``cables`` counts the fabric's NDR cables: GPU NIC -> leaf plus
       switch-to-switch; ``cables_node_leaf`` includes the extra (UFM) ports
       as the RA's Table 4 does, but the RA's BOM cables those separately
       (2 NDR200 splitter cables for the 4 UFM ports), so they are not in
       ``cables`` (4-SU BOM: 1,016 + 1,024 = 2,040).

    Parameters
    ----------
    endpoints : int
        GPU NIC ports N [-]
    radix : int
        switch ports k [-] (64 = NDR QM9700)
    oversubscription : float
        leaf downlink : uplink o [-]
    rails : int
        NICs per node grouped into rails (1 = no rail grouping) [-]
    extra_ports : int
        other leaf ports, e.g. the 4 UFM ports of an NVIDIA SuperPOD [-]
    nodes, nics_per_node : int, optional
        for the node-side transceiver count

    Returns
    -------
    dict
        tiers, leaf_switches, spine_switches, core_switches, switches,
        cables_node_leaf, cables_leaf_spine, cables_spine_core, cables,
        transceivers_switch, transceivers_node, transceivers, max_endpoints

    References
    ----------
    .. [1] NVIDIA, RA-11333-001 V11, 2023, Tables 3-4 and App. A Tables 7-8; NVIDIA DGX
       SuperPOD Reference Architecture DGX B200, "DGX SuperPOD Architecture" (SU table,
       2-64 SU). [nvidia-ra-11333-001;nvidia-superpod-b200-ra]
    .. [2] Al-Fares, Loukissas, Vahdat 2008, "A Scalable, Commodity Data Center Network
       Architecture", SIGCOMM (k-ary fat tree: k^3/4 hosts, (k/2)^2 core switches).
       [doi-10.1145-1402958.1402967]

    Examples
    --------
    NVIDIA RA-11333-001, App. A, Tables 7-8: the 4-SU DGX H100 SuperPOD (127 nodes, 8 rails, 4 UFM
    ports, QM9700 64 ports) has 32 leaf and 16 spine switches and 2,040 NDR cables; Table 3's 16-SU
    row (512 nodes) needs three tiers: 128 leaf, 128 spine, 64 core.

    >>> f = fabric(1016, 64, 1.0, 8, 4, 127, 8)
    >>> f["leaf_switches"], f["spine_switches"], f["cables"]
    (32, 16, 2040)
    >>> f = fabric(4096, 64, 1.0, 8)
    >>> f["tiers"], f["leaf_switches"], f["spine_switches"], f["core_switches"]
    (3, 128, 128, 64)
    """
    k = int(radix)
    down, up = leaf_ports(k, oversubscription)
    ports = int(endpoints) + int(extra_ports)
    out = dict.fromkeys(("tiers", "leaf_switches", "spine_switches", "core_switches", "switches",
                         "cables_node_leaf", "cables_leaf_spine", "cables_spine_core", "cables",
                         "transceivers_switch", "transceivers_node", "transceivers"), 0)
    out["max_endpoints"] = k * k * down // 2  # 3 tiers: k pods x k/2 leaves x d (k^3/4 non-blocking)
    if ports <= 0:
        return out
    leaves = spines = core = 0
    c_ls = c_sc = 0
    if ports <= k:
        tiers, leaves = 1, 1
    else:
        group = max(int(rails), 1)
        leaves = -(-ports // (group * down)) * group
        if leaves <= k:
            tiers = 2
            spines = _round_up_to_divisor(-(-leaves * up // k), up)
            c_ls = leaves * up
        else:
            tiers = 3
            half = k // 2
            spines = -(-leaves * up // half)
            core = -(-spines * half // k)
            c_ls, c_sc = leaves * up, spines * half
    switches = leaves + spines + core
    out.update(tiers=tiers, leaf_switches=leaves, spine_switches=spines, core_switches=core, switches=switches,
               cables_node_leaf=ports, cables_leaf_spine=c_ls, cables_spine_core=c_sc,
               cables=int(endpoints) + c_ls + c_sc)
    if tiers == 1:
        t_switch = _cages(ports, 1)
    else:  # leaves: their share of the endpoints plus u uplinks each; spines: leaf links (and core links)
        t_switch = _cages(ports, leaves, leaves * up) + _cages(c_ls + c_sc, spines) + _cages(c_sc, core)
    if nodes is not None and nics_per_node is not None:
        t_node = int(nodes) * (-(-int(nics_per_node) // PORTS_PER_TRANSCEIVER))
    else:
        t_node = -(-int(endpoints) // PORTS_PER_TRANSCEIVER)
    out.update(transceivers_switch=t_switch, transceivers_node=t_node,
               transceivers=t_switch + t_node + int(extra_ports))
    return out
