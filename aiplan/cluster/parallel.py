"""Parallel layout search: every valid (TP, PP, DP, ZeRO, micro-batch, recompute) as one table.

A layout is valid when TP divides the attention heads and is at most the GPUs
per node, PP is at most the layers, DP = GPUs / (TP x PP) is whole, and every
data-parallel rank gets at least one micro-batch of the global batch. The search
tries the pipeline degrees of :func:`pipeline_degrees` (the divisors of the layers
and the powers of two); stages that do not divide the layers are uneven, and the
busiest one (``ceil(layers / PP)`` layers) sets the step time and the memory. The
search evaluates all of them at once with numpy: memory per GPU from
``aiplan.model.training_memory`` and step time from :func:`step_time_table`
(compute at the plan's MFU + exposed TP, PP and DP communication + pipeline
bubble, see ``network.OVERLAP_NOTE``), keeps those that fit in
``gpu.capacity_gb x usable_memory_fraction`` and proposes the fastest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core import assumptions as A
from ..core import units
from ..model import (
    RECOMPUTE_NAMES,
    activation_bytes_per_element,
    collectives,
    finetune_split,
    gradient_bytes_per_param,
    hardware_flops_per_token,
    peak_flops_per_s,
    plan_memo,
    plan_mfu,
    plan_param_counts,
    stage_layers,
    training_flops_per_token,
    training_memory,
    usable_memory_gb,
    weight_grad_fraction,
)
from . import network

#: micro-batch sizes the search tries [sequences]
MICRO_BATCHES = (1, 2, 4, 8, 16)
ZERO_STAGES = (0, 1, 2, 3)
#: candidates reported in result["cluster"]["candidates"]
N_CANDIDATES = 20
#: GPU-count multiples tried when nothing fits (x2 each)
MAX_DOUBLINGS = 16


def divisors(n: int) -> list[int]:
    """Positive divisors of ``n`` in increasing order.

    Examples
    --------
    The tensor-parallel degrees GPT-3 175B's 96 attention heads allow (Brown et al. 2020, Table 2.1)
    [arxiv-2005.14165]:

    >>> divisors(96)
    [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 96]
    """
    small = [d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def pipeline_degrees(layers: int) -> list[int]:
    """Pipeline-parallel degrees the search tries: the divisors of ``layers`` and the powers of two up
    to ``layers``, in increasing order [stages].

    A degree that does not divide the layers gives uneven stages (:func:`~aiplan.model.stage_layers`):
    Llama 3 405B's 126 layers were trained on 16 stages (Llama Team 2024, §3.3.2 and Table 4)
    [arxiv-2407.21783], DeepSeek-V3's 61 layers on 16 (DeepSeek-AI 2024, §3.2: "16-way Pipeline
    Parallelism (PP)") [arxiv-2412.19437]. Other degrees up to ``layers`` are valid in a plan but not
    searched (judgement: to keep the search as fast as before).

    Examples
    --------
    Llama 3 405B's 126 layers (Llama Team 2024, Table 3): the divisors, and 4, 8, 16, 32 and 64.

    >>> pipeline_degrees(126)
    [1, 2, 3, 4, 6, 7, 8, 9, 14, 16, 18, 21, 32, 42, 63, 64, 126]
    """
    powers = [2**k for k in range(int(layers).bit_length()) if 2**k <= layers]
    return sorted(set(divisors(layers)) | set(powers))


def recompute_flops_factors(plan, result) -> np.ndarray:
    """Hardware / model FLOPs for recompute codes 0, 1, 2 (from the model step's formulas).

    References
    ----------
    .. [1] ``aiplan.model.hardware_flops_per_token``: Korthikanti et al. 2022,
       arXiv:2205.05198, App. A, Eqs. 7-8; Transformer Math 101, "Compute Requirements"
       (2PD <= C_forward <= 4PD with recomputation). [arxiv-2205.05198;eleuther-transformer-math-101]
    """
    m = result.get("model") or {}
    active = float(m.get("active_params") or m.get("params") or 0.0)
    attn_fwd = float(m.get("attention_flops_per_token") or 0.0) / 3.0  # training figure = 3 x forward
    grads = weight_grad_fraction(plan)
    base = float(training_flops_per_token(active, attn_fwd, grads))
    if base <= 0:
        return np.ones(3)
    return np.array([float(hardware_flops_per_token(active, attn_fwd, code, grads)) for code in (0, 1, 2)]) / base


@dataclass(frozen=True)
class Inputs:
    """Plan constants the layout table needs (one plan, any number of layouts)."""

    heads: int
    layers: int
    hidden: int
    vocab: int
    seq_len: int
    batch_seqs: int  # sequences per optimizer step
    tokens_per_step: float
    train_flops_per_token: float  # model FLOPs (no recompute)
    grad_params: float  # parameters whose gradients are all-reduced
    peak_flops: float  # [FLOP/s] per GPU
    mfu: float
    gpus_per_node: int
    comm_domain: int  # GPUs that talk over the scale-up link: max(GPUs per server, scale-up domain)
    scale_up_gb_per_s: float
    scale_out_gb_per_s: float
    in_network: bool
    usable_gb: float
    grad_bytes: float
    act_bytes: float
    expert_parallel: int
    flops_factors: tuple = (1.0, 1.0, 1.0)  # hardware/model FLOPs for recompute 0, 1, 2
    counts: dict | None = None  # aiplan.model.plan_param_counts(plan), computed once


def inputs(plan, result, gpus=None) -> Inputs:
    """Collect the :class:`Inputs` of a training plan from the plan and the model record.

    ``gpus`` (default the ``cluster`` record's) sets the calibrated MFU the step times use. What it
    reads of ``result`` (the ``model`` record) follows from the plan, so it is made once per plan and
    GPU count (:func:`~aiplan.model.plan_memo`: the layout and cluster steps both ask).
    """
    gpus = gpus or result["cluster"]["gpus"]
    memo = plan_memo(plan)
    key = ("parallel_inputs", gpus)
    if key not in memo:
        memo[key] = _inputs(plan, result, gpus)
    return memo[key]


def _inputs(plan, result, gpus) -> Inputs:
    m, w, c = plan.model, plan.workload, plan.cluster
    seq = int(w["seq_len"])
    tokens_per_step = float(w["global_batch_tokens"])
    precision = w.get("precision", "bf16")
    counts = plan_param_counts(plan)
    return Inputs(
        heads=m.heads, layers=m.layers, hidden=m.hidden, vocab=m.vocab, seq_len=seq,
        batch_seqs=max(1, round(tokens_per_step / seq)), tokens_per_step=tokens_per_step,
        train_flops_per_token=float(result["model"]["flops_per_token"]),
        grad_params=float(finetune_split(plan, counts)[0]),
        flops_factors=tuple(recompute_flops_factors(plan, result)), counts=counts,
        peak_flops=peak_flops_per_s(plan.gpu, precision),
        mfu=float(plan_mfu(plan, gpus)),
        gpus_per_node=int(c["gpus_per_node"]),
        comm_domain=max(int(c["gpus_per_node"]), int(plan.gpu.scale_up_domain)),
        scale_up_gb_per_s=float(collectives.scale_up_gb_per_s(plan.gpu.scale_up_gb_per_s)),
        scale_out_gb_per_s=scale_out_per_gpu(plan),
        in_network=bool(c.get("in_network_reduction", True)),
        usable_gb=usable_memory_gb(plan.gpu.capacity_gb, c["usable_memory_fraction"]),
        grad_bytes=gradient_bytes_per_param(precision), act_bytes=float(activation_bytes_per_element(precision)),
        expert_parallel=int(c.get("expert_parallel") or 1),
    )


def scale_out_per_gpu(plan) -> float:
    """Scale-out bandwidth per GPU from the server's NICs, else the GPU row, else
    ``A.UNKNOWN_SCALE_OUT_GBPS_PER_GPU`` (judgement; a finding says so) [GB/s]."""
    s = plan.server
    if s.nics_per_node and s.nic_gbps:
        return float(network.scale_out_gb_per_s(s.nics_per_node, s.nic_gbps, plan.cluster["gpus_per_node"]))
    gbps = plan.gpu.network_gbps_per_gpu or A.UNKNOWN_SCALE_OUT_GBPS_PER_GPU
    return gbps / units.BITS_PER_BYTE


# --- enumeration ---------------------------------------------------------------


def enumerate_layouts(gpus, inp: Inputs, tensor_parallel=None, pipeline_parallel=None, data_parallel=None,
                      zero_stage=None, micro_batch=None, recompute=None) -> dict[str, np.ndarray]:
    """Every valid layout on ``gpus`` GPUs as int arrays tp, pp, dp, zero, mb, rc.

    A ``None`` argument is searched; a value fixes that field (``recompute``
    as a code 0/1/2).
    """
    gpus = int(gpus)
    tps = [t for t in divisors(inp.heads) if t <= inp.gpus_per_node and gpus % t == 0]
    pps = pipeline_degrees(inp.layers)
    tps = [t for t in tps if tensor_parallel is None or t == tensor_parallel]
    pps = [p for p in pps if pipeline_parallel is None or p == pipeline_parallel]
    zs = ZERO_STAGES if zero_stage is None else (int(zero_stage),)
    mbs = MICRO_BATCHES if micro_batch is None else (int(micro_batch),)
    rcs = (0, 1, 2) if recompute is None else (int(recompute),)
    pairs = np.array([(t, p) for t in tps for p in pps if gpus % (t * p) == 0], dtype=np.int64).reshape(-1, 2)
    axes = (zs, mbs, rcs)  # with each (TP, PP) that divides the GPUs: every combination, the last varying fastest
    index = np.indices((len(pairs), *(len(a) for a in axes))).reshape(4, -1)
    tp, pp = pairs[index[0]].T
    zero, mb, rc = (np.asarray(a, dtype=np.int64)[i] for a, i in zip(axes, index[1:]))
    dp = gpus // (tp * pp)
    ok = (dp >= 1) & (dp * mb <= inp.batch_seqs)
    if data_parallel is not None:
        ok &= dp == data_parallel
    return {"tp": tp[ok], "pp": pp[ok], "dp": dp[ok], "zero": zero[ok], "mb": mb[ok], "rc": rc[ok]}


def step_time_table(inp: Inputs, tp, pp, dp, zero, mb, rc) -> dict[str, np.ndarray]:
    """Step time and its parts for arrays of layouts [s] (see ``network.OVERLAP_NOTE``).

    Returns compute_s, bubble_s, tp_comm_s, pp_comm_s, allreduce_s,
    dp_exposed_s, step_time_s, microbatches, bubble_fraction, comm_fraction.
    """
    tp, pp, dp, mb = (np.asarray(x) for x in (tp, pp, dp, mb))
    gpus = tp * pp * dp
    micro = np.ceil(inp.batch_seqs / (dp * mb))
    lps = stage_layers(inp.layers, pp)  # the busiest stage's layers
    split = inp.layers / lps  # the busiest stage's share (model.pipeline_divisor): pp when pp divides the layers
    factor = np.asarray(inp.flops_factors)[np.asarray(rc)]
    compute_s = inp.train_flops_per_token * inp.tokens_per_step * factor / (gpus * inp.peak_flops * inp.mfu)
    compute_s = compute_s * (pp / split)  # the busiest stage's work over the mean stage's (1 when even)
    bubble_s = network.bubble_time_s(compute_s, pp, micro)
    tp_s = collectives.tensor_parallel_comm_s(mb, inp.seq_len, inp.hidden, lps, micro, tp, inp.scale_up_gb_per_s,
                                          inp.act_bytes, np.asarray(rc) == 2)
    pp_bw = np.where(gpus <= inp.comm_domain, inp.scale_up_gb_per_s, inp.scale_out_gb_per_s)
    pp_s = network.pipeline_comm_s(mb, inp.seq_len, inp.hidden, micro, tp, pp, pp_bw, inp.act_bytes)
    dp_intra = tp * dp <= inp.comm_domain
    dp_bw = np.where(dp_intra, inp.scale_up_gb_per_s, inp.scale_out_gb_per_s)
    size_gb = network.gradient_allreduce_gb(inp.grad_params, tp, split, inp.grad_bytes, zero)  # busiest stage
    ar_s = collectives.allreduce_time_s(size_gb, dp, dp_bw, inp.in_network & ~dp_intra)
    dp_exp = network.exposed_dp_s(ar_s, compute_s, micro, lps)
    step = compute_s + bubble_s + tp_s + pp_s + dp_exp
    return {"compute_s": compute_s, "bubble_s": bubble_s, "tp_comm_s": tp_s, "pp_comm_s": pp_s,
            "allreduce_gb": size_gb, "allreduce_s": ar_s, "dp_exposed_s": dp_exp, "step_time_s": step,
            "microbatches": micro, "bubble_fraction": bubble_s / step,
            "comm_fraction": (tp_s + pp_s + dp_exp) / step, "dp_bandwidth_gb_per_s": dp_bw}


def memory_table(plan, tp, pp, dp, zero, mb, rc, expert_parallel=1, counts=None) -> dict[str, np.ndarray]:
    """Per-GPU memory [GB] of arrays of layouts, from ``aiplan.model.training_memory``."""
    return training_memory(plan, tensor_parallel=tp, pipeline_parallel=pp, data_parallel=dp,
                                 zero_stage=zero, micro_batch=mb, recompute=rc, expert_parallel=expert_parallel,
                                 counts=counts)


def evaluate_layouts(plan, inp: Inputs, tp, pp, dp, zero, mb, rc) -> dict[str, np.ndarray]:
    """Memory, fit and step time for arrays of layouts (the vectorised core of the search)."""
    mem = memory_table(plan, tp, pp, dp, zero, mb, rc, inp.expert_parallel, inp.counts)
    out = step_time_table(inp, tp, pp, dp, zero, mb, rc)
    out["per_gpu_gb"] = np.broadcast_to(np.asarray(mem["per_gpu_gb"], dtype=float), np.shape(tp))
    out["fits"] = out["per_gpu_gb"] <= inp.usable_gb
    out.update(tp=np.asarray(tp), pp=np.asarray(pp), dp=np.asarray(dp), zero=np.asarray(zero), mb=np.asarray(mb),
               rc=np.asarray(rc))
    return out


def rank(table: dict[str, np.ndarray]) -> np.ndarray:
    """Order of layouts: fitting ones by step time, then the others by memory per GPU.

    Ties go to the simpler layout (fewer pipeline stages, lower ZeRO stage,
    less recompute, smaller TP).

    Examples
    --------
    Two layouts fit (step 2.0 s and 1.5 s) and one does not (90 GB): the faster fitting one first, the
    one that does not fit last.

    >>> table = {"tp": np.array([8, 8, 4]), "pp": np.array([1, 2, 1]), "zero": np.array([1, 1, 0]),
    ...          "rc": np.array([1, 1, 0]), "fits": np.array([True, True, False]),
    ...          "step_time_s": np.array([2.0, 1.5, 1.0]), "per_gpu_gb": np.array([60.0, 40.0, 90.0])}
    >>> rank(table).tolist()
    [1, 0, 2]
    """
    if not len(table["tp"]):
        return np.zeros(0, dtype=int)
    score = np.where(table["fits"], table["step_time_s"], table["per_gpu_gb"])
    keys = (table["tp"], table["rc"], table["zero"], table["pp"], np.round(score, 9), ~table["fits"])
    return np.lexsort(keys)


def search(plan, inp: Inputs, gpus, fixed: dict | None = None) -> dict[str, np.ndarray]:
    """Enumerate, evaluate and rank the layouts of ``gpus`` GPUs; ``fixed`` pins fields."""
    grid = enumerate_layouts(gpus, inp, **(fixed or {}))
    table = evaluate_layouts(plan, inp, grid["tp"], grid["pp"], grid["dp"], grid["zero"], grid["mb"], grid["rc"])
    order = rank(table)
    return {k: np.asarray(v)[order] for k, v in table.items()}


def row(table: dict[str, np.ndarray], i: int = 0) -> dict:
    """One layout of a ranked table as a plain dict (the ``candidates`` format).

    Examples
    --------
    A one-row table (memory and step time illustrative) with Llama 3 405B's 8 x 16 x 64 layout:

    >>> table = {"tp": np.array([8]), "pp": np.array([16]), "dp": np.array([64]), "zero": np.array([1]),
    ...          "mb": np.array([1]), "rc": np.array([1]), "per_gpu_gb": np.array([61.5]),
    ...          "step_time_s": np.array([7.25]), "fits": np.array([True])}
    >>> r = row(table)
    >>> r["tensor_parallel"] * r["pipeline_parallel"] * r["data_parallel"], r["recompute"]
    (8192, 'selective')
    """
    return {
        "tensor_parallel": int(table["tp"][i]), "pipeline_parallel": int(table["pp"][i]),
        "data_parallel": int(table["dp"][i]), "zero_stage": int(table["zero"][i]),
        "micro_batch": int(table["mb"][i]), "recompute": RECOMPUTE_NAMES[int(table["rc"][i])],
        "per_gpu_gb": float(table["per_gpu_gb"][i]), "step_time_s": float(table["step_time_s"][i]),
        "fits": bool(table["fits"][i]),
    }


def rows(table: dict[str, np.ndarray], n: int) -> list[dict]:
    """The first ``n`` layouts of a ranked table as :func:`row` dicts, each column converted once.

    Examples
    --------
    >>> table = {"tp": np.array([8, 4]), "pp": np.array([1, 2]), "dp": np.array([2, 2]), "zero": np.array([1, 1]),
    ...          "mb": np.array([1, 1]), "rc": np.array([1, 0]), "per_gpu_gb": np.array([61.5, 70.0]),
    ...          "step_time_s": np.array([7.25, 8.0]), "fits": np.array([True, True])}
    >>> rows(table, 5) == [row(table, 0), row(table, 1)]
    True
    """
    c = {k: table[k][:n].tolist() for k in ("tp", "pp", "dp", "zero", "mb", "rc", "per_gpu_gb", "step_time_s", "fits")}
    return [{"tensor_parallel": int(tp), "pipeline_parallel": int(pp), "data_parallel": int(dp), "zero_stage": int(z),
             "micro_batch": int(mb), "recompute": RECOMPUTE_NAMES[int(rc)], "per_gpu_gb": float(gb),
             "step_time_s": float(s), "fits": bool(f)}
            for tp, pp, dp, z, mb, rc, gb, s, f in zip(*c.values())]


#: a layout setting in words, in the order a layout is described
LAYOUT_WORDS = {"tensor_parallel": "tensor parallel {}", "pipeline_parallel": "pipeline parallel {}",
                "data_parallel": "data parallel {}", "zero_stage": "ZeRO-{}", "micro_batch": "micro-batch {}",
                "recompute": "{} recompute"}


def layout_word(key: str, value) -> str:
    """One layout setting in words: ("zero_stage", 3) -> "ZeRO-3", ("recompute", "none") -> "no recompute".

    Examples
    --------
    >>> layout_word("zero_stage", 3), layout_word("recompute", "none"), layout_word("tensor_parallel", 8)
    ('ZeRO-3', 'no recompute', 'tensor parallel 8')
    """
    return "no recompute" if (key, value) == ("recompute", "none") else LAYOUT_WORDS[key].format(value)


def describe_layout(r: dict) -> str:
    """'tensor parallel 8, pipeline parallel 4, data parallel 2, ZeRO-1, micro-batch 1, selective recompute'.

    Examples
    --------
    Llama 3 405B on 8,192 H100 (Llama Team 2024, Table 4) [arxiv-2407.21783]: TP 8 x PP 16 x DP 64;
    the ZeRO stage, micro-batch and recompute here are illustrative.

    >>> describe_layout({"tensor_parallel": 8, "pipeline_parallel": 16, "data_parallel": 64, "zero_stage": 1,
    ...                  "micro_batch": 1, "recompute": "selective"})
    'tensor parallel 8, pipeline parallel 16, data parallel 64, ZeRO-1, micro-batch 1, selective recompute'
    """
    return ", ".join(layout_word(k, r[k]) for k in LAYOUT_WORDS)


def layout_frame(plan, result):
    """All candidate layouts of a training plan, ranked, as a pandas DataFrame (for notebooks)."""
    import pandas as pd

    inp = inputs(plan, result)
    gpus = int(result["cluster"].get("gpus") or result["compute"]["gpus"])
    table = search(plan, inp, gpus)
    cols = {"tp": "tensor_parallel", "pp": "pipeline_parallel", "dp": "data_parallel", "zero": "zero_stage",
            "mb": "micro_batch", "rc": "recompute"}
    frame = pd.DataFrame({cols.get(k, k): np.asarray(v) for k, v in table.items() if np.ndim(v) == 1})
    frame["recompute"] = frame["recompute"].map(RECOMPUTE_NAMES)
    return frame


def fewest_gpus(fits, start: int, node: int) -> int | None:
    """Smallest GPU count from ``start`` up (doubling, then bisection on whole servers) for which ``fits``.

    ``fits(n)`` is None when ``n`` GPUs have no valid layout at all (the global batch is too small
    for so many data-parallel ranks): more GPUs cannot help then.

    Examples
    --------
    A model that needs at least 100 GPUs, searched from one 8-GPU server: 8, 16, 32 and 64 fail, 128
    fits, and bisection on whole servers finds 13 servers (104 GPUs).

    >>> fewest_gpus(lambda n: n >= 100, 8, 8)
    104
    """
    if fits(start):
        return start
    lo, hi = start, None
    for k in range(1, MAX_DOUBLINGS + 1):
        found = fits(start * 2**k)
        if found:
            hi = start * 2**k
            break
        if found is None:
            return None
        lo = start * 2**k
    if hi is None:
        return None
    lo_n, hi_n = lo // node, math.ceil(hi / node)
    while hi_n - lo_n > 1:
        mid = (lo_n + hi_n) // 2
        if fits(mid * node):
            hi_n = mid
        else:
            lo_n = mid
    return hi_n * node if fits(hi_n * node) else hi


def _fewest_gpus_that_fit(plan, inp: Inputs, gpus: int) -> int | None:
    """Smallest GPU count (whole nodes) on which a searched layout fits."""
    def fits(n: int) -> bool | None:
        t = search(plan, inp, n)
        return bool(t["fits"][0]) if len(t["tp"]) else None

    return fewest_gpus(fits, gpus, inp.gpus_per_node)


def count_with_a_layout(plan, inp: Inputs, gpus: int, slack: float = 0.25) -> int:
    """The smallest GPU count from ``gpus`` up, within ``slack`` more, on which a searched layout fits
    (``gpus`` itself when none does) [GPUs].

    A count sized for a deadline may have no layout: it must divide into tensor x pipeline
    parallel groups (the pipeline degrees of :func:`pipeline_degrees`) and its data-parallel ranks must not
    outnumber the global batch's sequences. The candidates are ``gpus`` rounded up to a multiple
    of each tensor x pipeline group (and of whole servers).
    """
    tps = [t for t in divisors(inp.heads) if t <= inp.gpus_per_node]
    groups = sorted({math.lcm(t * p, inp.gpus_per_node) for t in tps for p in pipeline_degrees(inp.layers)})
    counts = sorted({math.ceil(gpus / g) * g for g in groups} - {gpus})
    for n in (c for c in counts if c <= gpus * (1 + slack)):
        t = search(plan, inp, n)
        if len(t["tp"]) and t["fits"][0]:
            return int(n)
    return int(gpus)


def fit_hint(plan, inp: Inputs, gpus: int, table: dict, fixed: dict) -> str:
    """A finding-ready sentence saying what would fit when no searched layout does."""
    cap = f"{inp.usable_gb:.1f} GB usable per GPU ({plan.gpu.capacity_gb:.1f} GB x " \
          f"{plan.cluster['usable_memory_fraction']:g})"
    if not len(table["tp"]):
        return (f"No valid parallel layout for {gpus} GPUs: the global batch ({inp.batch_seqs} sequences) "
                f"is smaller than the data-parallel degree; use fewer GPUs or a larger global batch.")
    best = row(table, int(np.argmin(table["per_gpu_gb"])))
    text = [f"No parallel layout fits in {cap} on {gpus} GPUs; the smallest needs {best['per_gpu_gb']:.1f} GB "
            f"({describe_layout(best)})."]
    if any(v is not None for v in fixed.values()):
        levers = []
        for name, change in (("ZeRO-3", {"zero_stage": 3}), ("full recompute", {"recompute": 2}),
                             ("micro-batch 1", {"micro_batch": 1})):
            key, value = next(iter(change.items()))
            if fixed.get(key) == value:
                continue
            t = search(plan, inp, gpus, {**fixed, **change})
            if len(t["tp"]):
                r = row(t)
                if round(r["per_gpu_gb"], 1) < round(best["per_gpu_gb"], 1):  # a lever that saves nothing goes unsaid
                    levers.append(f"{name} {'fits' if r['fits'] else 'gives'} {r['per_gpu_gb']:.1f} GB")
        if levers:
            text.append("With the given layout: " + "; ".join(levers) + ".")
        free = search(plan, inp, gpus)
        if len(free["tp"]) and free["fits"][0]:
            r = row(free)
            text.append(f"A different layout fits on the same {gpus} GPUs: {describe_layout(r)} "
                        f"({r['per_gpu_gb']:.1f} GB).")
            return " ".join(text)
    more = _fewest_gpus_that_fit(plan, inp, gpus)
    if more:
        r = row(search(plan, inp, more))
        text.append(f"It would fit on {more} GPUs (more GPUs, higher ZeRO stage, recompute and smaller "
                    f"micro-batches searched): {describe_layout(r)} ({r['per_gpu_gb']:.1f} GB).")
        return " ".join(text)
    text.append(f"Nothing fits up to {gpus * 2**MAX_DOUBLINGS} GPUs; use GPUs with more memory or a smaller model.")
    return " ".join(text)
