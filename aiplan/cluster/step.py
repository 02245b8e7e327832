"""The cluster step of the pipeline: ``layout`` (GPUs and parallel layout) and ``step``.

``layout(plan, result)`` runs after ``model.describe`` and before ``model.step``: it fixes
``cluster.gpus`` (for a deadline plan, including the goodput lost to failures) and the
parallel layout, searching every valid layout when the plan leaves it open.
``step(plan, result)`` runs after ``model.step`` and fills ``network``, ``storage``,
``checkpoint`` and ``reliability``, and rescales the training wall-clock time by the goodput.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..core import assumptions as A
from ..core import units
from ..core.assumptions import DEADLINE_CONFIDENCE_SHOWN
from ..core.records import record, record_of
from ..model import (
    RECOMPUTE_CODES,
    checkpoint_weight_bytes_per_param,
    collectives,
    deadline_gpus_at_goodput,
    finetune_split,
    first_gpus,
    memo_by_server_block,
    plan_memo,
    plan_param_counts,
    resumable_checkpoint_bytes_per_param,
)
from ..model.efficiency import training_constants
from . import network, parallel, reliability, storage

#: deadline re-sizing: fixed-point iterations of gpus <-> goodput
_DEADLINE_ITERATIONS = 10


def _is_training(plan) -> bool:
    return plan.kind in ("pretrain", "finetune")


def _nodes(gpus, gpus_per_node):
    return int(math.ceil(gpus / gpus_per_node))


# --- checkpoint and reliability for a GPU count (used by layout and step) ---------------


def _checkpoint(plan, gpus) -> dict:
    """Checkpoint sizes and write time for ``gpus`` GPUs [GB, s]."""
    w, c = plan.workload, plan.cluster
    counts = plan_param_counts(plan)
    trainable = finetune_split(plan, counts)[0]
    params = float(counts["params"])
    # LoRA/QLoRA: the frozen base is not re-saved; the checkpoint holds the adapters
    saved = params if trainable >= params else float(trainable)
    size_w = float(storage.checkpoint_gb(saved, checkpoint_weight_bytes_per_param(w["precision"])))
    size_r = float(storage.checkpoint_gb(saved, resumable_checkpoint_bytes_per_param(w["precision"], w["optimizer"],
                                                                                     plan.model.hidden)))
    write_bw = c.get("storage_write_gb_per_s") or float(storage.read_gb_per_s_rule(gpus))
    return {"saved_params": saved, "size_weights_gb": size_w, "size_resumable_gb": size_r,
            "size_rule_gb": float(storage.seed_checkpoint_gb(params, w["precision"])),
            "write_gb_per_s": write_bw, "write_s": float(storage.write_time_s(size_r, write_bw))}


def _reliability(plan, gpus, write_s) -> dict:
    """Interruptions, MTBF, checkpoint interval and goodput for ``gpus`` GPUs."""
    c = plan.cluster
    rate = float(reliability.interruptions_per_day(gpus, c["interruptions_per_gpu_year"]))
    mtbf_h = float(reliability.mtbf_h(rate))
    mtbf_s = mtbf_h * units.S_PER_HOUR
    restart_s = c["restart_min"] * units.S_PER_MIN
    out = {"interruptions_per_day": rate, "mtbf_h": mtbf_h, "restart_min": c["restart_min"],
           "interruptions_per_gpu_year": c["interruptions_per_gpu_year"]}
    if write_s is None:
        return out
    young = float(reliability.young_interval_s(write_s, mtbf_s))
    daly = float(reliability.daly_interval_s(write_s, mtbf_s))
    given = c.get("checkpoint_interval_min")
    interval_s = given * units.S_PER_MIN if given else daly
    out.update({
        "young_s": young, "daly_s": daly, "interval_s": interval_s,
        "interval_source": "plan" if given else "Daly first-order optimum",
        "overhead_fraction": float(reliability.overhead_fraction(interval_s, write_s, mtbf_s, restart_s)),
        "goodput": float(reliability.goodput(interval_s, write_s, mtbf_s, restart_s)),
    })
    return out


def _goodput(plan, gpus) -> float:
    """Goodput on ``gpus`` GPUs (:func:`_reliability`'s), once per plan and count [-].

    A count of whole servers is computed with the other counts of its
    :func:`~aiplan.model.server_block` in one vectorised pass (:func:`_goodputs`: the deadline fixed
    points visit counts near each other; each element equals the count computed alone).
    """
    def compute(g):
        return _goodputs(plan, g) if np.ndim(g) else _reliability(plan, g, _checkpoint(plan, g)["write_s"])["goodput"]

    value, at = memo_by_server_block(plan, "goodput", gpus, compute)
    return value if at is None else float(value[at])


def _goodputs(plan, gpus):
    """The goodput of :func:`_reliability` (with :func:`_checkpoint`'s write time) for an array of GPU
    counts: the same formulas, elementwise [-]."""
    c = plan.cluster
    size_gb = _checkpoint(plan, gpus[0])["size_resumable_gb"]  # the same for any count
    write_s = storage.write_time_s(size_gb, c.get("storage_write_gb_per_s") or storage.read_gb_per_s_rule(gpus))
    mtbf_s = reliability.mtbf_h(reliability.interruptions_per_day(gpus, c["interruptions_per_gpu_year"])) \
        * units.S_PER_HOUR
    given = c.get("checkpoint_interval_min")
    interval_s = given * units.S_PER_MIN if given else reliability.daly_interval_s(write_s, mtbf_s)
    return reliability.goodput(interval_s, write_s, mtbf_s, c["restart_min"] * units.S_PER_MIN)


def _deadline_gpus(plan, total_flops, gpus) -> tuple[int, int | None]:
    """(GPUs that meet the deadline including goodput, GPUs needed when out of reach).

    A fixed point: goodput falls as GPUs are added. When the count needed is beyond what the kit
    plans for, the most it plans for and the count needed.
    """
    seen = set()
    most = units.max_gpus_in_servers(plan.cluster["gpus_per_node"])
    constants = training_constants()  # read once for every sizing below
    for _ in range(_DEADLINE_ITERATIONS):
        g = _goodput(plan, gpus)
        if g < A.GOODPUT_STALLED:
            return most, None
        new = deadline_gpus_at_goodput(plan, total_flops, g, gpus, constants)
        if new > A.MAX_GPUS:  # out of reach: plan the most the kit plans for, and say so
            return most, new
        if new == gpus or new in seen:
            return max(new, gpus), None
        seen.add(gpus)
        gpus = new
    return gpus, None




def gpus_for_deadline_confidence(plan, total_flops, gpus, confidence=DEADLINE_CONFIDENCE_SHOWN) -> int | None:
    """GPUs that meet the deadline with the chance ``confidence`` [GPUs]; None when out of reach.

    The plan sized as if it asked for ``cluster.deadline_confidence = confidence`` (the calibrated
    band of :func:`aiplan.model.step.confidence_factor`).
    """
    variant = dataclasses.replace(plan, data={**plan.data, "cluster": {**plan.cluster,
                                                                       "deadline_confidence": confidence}})
    variant.__dict__["_memo"] = plan_memo(plan)  # the same plan but for the confidence, which no memo reads
    need, needed = _deadline_gpus(variant, total_flops, gpus)
    most = units.max_gpus_in_servers(plan.cluster["gpus_per_node"])
    return None if needed or need >= most else int(need)


# --- step 2a: layout --------------------------------------------------------------------


def layout(plan, result):
    """The ``cluster`` record: GPUs, nodes and the parallel layout.

    Training (runs after ``model.describe``): the plan's GPUs, or the count that meets
    ``deadline_days`` including the goodput lost to failures; a layout field the plan fixes is
    kept, the others are searched (see :mod:`aiplan.cluster.parallel`). ``proposed`` is true
    when the kit chose any of TP, PP, DP or ZeRO (it then also chooses micro-batch and
    recompute); ``candidates`` lists the best 20 layouts of the free search. When nothing fits,
    the layout needing the least memory is kept, ``fits`` is false and ``fit_hint`` says what
    would fit. Serving (runs after ``model.step``): the replicas the model step sized, each of
    tensor x attention-data x pipeline parallel GPUs (data parallel = GPUs / (tensor x pipeline)).
    """
    pc = plan.cluster
    gpn = int(pc["gpus_per_node"])
    c = {"gpus_per_node": gpn, "expert_parallel": pc.get("expert_parallel"), "proposed": False, "candidates": [],
         "fit_hint": None, "fits": None}
    if not _is_training(plan):
        gpus = int(result["compute"]["gpus"])
        inf = result["inference"]
        tp = int(inf.get("tensor_parallel") or pc.get("tensor_parallel") or 1)
        pp = int(inf.get("pipeline_parallel") or 1)
        replica = int(inf.get("gpus_per_replica") or tp * pp)   # tensor x attention-data x pipeline parallel
        fixed = ("tensor_parallel", "attention_data_parallel", "expert_parallel", "pipeline_parallel")
        replicas = (inf["prefill_replicas"] + inf["decode_replicas"] if inf.get("prefill_replicas")
                    else max(gpus // replica, 1))   # two pools: the replicas of both
        c.update({"gpus": gpus, "nodes": _nodes(gpus, gpn), "tensor_parallel": tp, "pipeline_parallel": pp,
                  "data_parallel": replicas, "expert_parallel": inf.get("expert_parallel"),
                  "proposed": all(pc.get(k) is None for k in fixed)})
        return record_of("cluster", c)
    total = result["compute"]["total_flops"]
    gpus, needed = first_gpus(plan, total)
    if pc.get("gpus") is None and pc.get("deadline_days") and not needed:
        gpus, needed = _deadline_gpus(plan, total, gpus)
    c["deadline_gpus_needed"] = needed
    if pc.get("deadline_days"):
        c["deadline_gpus_p90"] = gpus_for_deadline_confidence(plan, total, gpus)
        if plan.cluster.get("deadline_confidence", 0.5) > 0.5:
            c["deadline_gpus_median"] = gpus_for_deadline_confidence(plan, total, gpus, 0.5)
    inp = parallel.inputs(plan, result, gpus)
    fixed = {"tensor_parallel": pc.get("tensor_parallel"), "pipeline_parallel": pc.get("pipeline_parallel"),
             "data_parallel": pc.get("data_parallel"), "zero_stage": pc.get("zero_stage")}
    user_layout = all(fixed[k] is not None for k in ("tensor_parallel", "pipeline_parallel", "zero_stage"))
    search_fixed = dict(fixed)
    if user_layout:
        search_fixed.update(micro_batch=plan.workload["micro_batch"],
                            recompute=RECOMPUTE_CODES[plan.workload["recompute"]])
    table = parallel.search(plan, inp, gpus, search_fixed)
    if pc.get("gpus") is None and not (len(table["tp"]) and table["fits"][0]):  # a sized count without a layout
        sized = parallel.count_with_a_layout(plan, inp, gpus)
        if sized != gpus:
            gpus = sized
            inp = parallel.inputs(plan, result, gpus)
            table = parallel.search(plan, inp, gpus, search_fixed)
    free = table if not any(v is not None for v in fixed.values()) else parallel.search(plan, inp, gpus)
    c["layouts_evaluated"] = int(len(free["tp"]))
    c["candidates"] = parallel.rows(free, parallel.N_CANDIDATES)
    if len(table["tp"]) and table["fits"][0]:
        chosen = parallel.row(table, 0)
    else:
        c["fit_hint"] = parallel.fit_hint(plan, inp, gpus, table, search_fixed)
        if len(table["tp"]):
            chosen = parallel.row(table, int(np.argmin(table["per_gpu_gb"])))
        else:
            tp = fixed["tensor_parallel"] or 1
            pp = fixed["pipeline_parallel"] or 1
            chosen = {"tensor_parallel": tp, "pipeline_parallel": pp,
                      "data_parallel": fixed["data_parallel"] or max(gpus // (tp * pp), 1),
                      "zero_stage": fixed["zero_stage"] if fixed["zero_stage"] is not None else 1,
                      "micro_batch": plan.workload["micro_batch"], "recompute": plan.workload["recompute"],
                      "per_gpu_gb": None, "step_time_s": None, "fits": False}
    c.update({k: chosen[k] for k in ("tensor_parallel", "pipeline_parallel", "data_parallel", "zero_stage",
                                     "micro_batch", "recompute")})
    c.update({"gpus": gpus, "nodes": _nodes(gpus, gpn), "proposed": not user_layout, "fits": chosen["fits"],
              "per_gpu_gb": chosen["per_gpu_gb"], "step_time_s": chosen["step_time_s"],
              "expert_parallel": pc.get("expert_parallel") or 1})
    return record_of("cluster", c)


# --- step 2b: network, storage, checkpoints, reliability --------------------------------


def _fabric(plan, gpus) -> dict:
    """Compute fabric for ``gpus`` GPUs (no fabric inside one node).

    A NIC faster than a switch port is split into planes, one port per plane, each plane its own fat
    tree (NVIDIA's Spectrum-X design: each 800G NIC as 2 x 400GbE on SN5600 switches).
    """
    pc, s = plan.cluster, plan.server
    switch = plan.catalog.switches[pc["fabric_switch"]]
    gpn = int(pc["gpus_per_node"])
    nodes = _nodes(gpus, gpn)
    nics = int(s.nics_per_node) if s.nics_per_node else gpn
    planes = network.fabric_planes(s.nic_gbps, switch.port_gbps)
    radix = int(pc["fabric_radix"])
    rails = nics if nics <= radix // 2 else 1
    endpoints = nodes * nics if nodes > 1 else 0
    fab = network.fabric(endpoints, radix, pc["oversubscription"], rails, 0, nodes if nodes > 1 else 0, nics)
    fab = {k: v * planes if k != "tiers" and k != "max_endpoints" else v for k, v in fab.items()}
    fab.update(endpoints=endpoints * planes, rails=rails, planes=planes, fabric_radix=radix,
               oversubscription=pc["oversubscription"], switch=switch.id, switch_power_w=switch.power_w)
    return fab


def _network(plan, result, gpus, training: bool) -> dict:
    c, pc = result["cluster"], plan.cluster
    fab = _fabric(plan, gpus)
    net = {
        "leaf_switches": fab["leaf_switches"], "spine_switches": fab["spine_switches"],
        "core_switches": fab["core_switches"], "cables": fab["cables"], "switches": fab["switches"],
        "fabric_tiers": fab["tiers"], "transceivers": fab["transceivers"], "endpoints": fab["endpoints"],
        "cables_node_leaf": fab["cables_node_leaf"], "cables_leaf_spine": fab["cables_leaf_spine"],
        "cables_spine_core": fab["cables_spine_core"], "fabric_max_endpoints": fab["max_endpoints"],
        "rails": fab["rails"], "fabric_radix": fab["fabric_radix"], "oversubscription": fab["oversubscription"],
        "fabric_planes": fab["planes"], "fabric_switch": fab["switch"], "switch_power_w": fab["switch_power_w"],
        "in_network_reduction": bool(pc.get("in_network_reduction", True)),
        "scale_up_gb_per_s": float(collectives.scale_up_gb_per_s(plan.gpu.scale_up_gb_per_s)),
        "scale_out_gb_per_s": parallel.scale_out_per_gpu(plan),
    }
    if not training:
        return net
    inp = parallel.inputs(plan, result)
    rc = c["recompute"]
    code = RECOMPUTE_CODES[rc] if isinstance(rc, str) else int(rc)
    t = parallel.step_time_table(inp, c["tensor_parallel"], c["pipeline_parallel"], c["data_parallel"],
                                c["zero_stage"], c["micro_batch"], code)
    n_dp = c["data_parallel"]
    dp_bw = float(t["dp_bandwidth_gb_per_s"])
    net.update({
        "allreduce_gb": float(t["allreduce_gb"]), "allreduce_s": float(t["allreduce_s"]),
        "allreduce_exposed_s": float(t["dp_exposed_s"]),
        "allreduce_factor": float(collectives.allreduce_factor(
            n_dp, net["in_network_reduction"] and c["tensor_parallel"] * n_dp > inp.comm_domain)),
        "allreduce_bandwidth_gb_per_s": dp_bw,
        "tp_comm_s": float(t["tp_comm_s"]), "pp_comm_s": float(t["pp_comm_s"]),
        "bubble_fraction": float(t["bubble_fraction"]), "comm_fraction": float(t["comm_fraction"]),
        "compute_s": float(t["compute_s"]), "microbatches": int(t["microbatches"]),
        "allreduce_to_compute_ratio": float(network.allreduce_to_compute_ratio(dp_bw, net["scale_up_gb_per_s"])),
    })
    return net


def _storage(plan, result, gpus, ckpt) -> dict:
    pc, w = plan.cluster, plan.workload
    nodes_equiv = gpus / storage.NVIDIA_STORAGE_GPUS_PER_NODE
    levels = {}
    for level in storage.NVIDIA_STORAGE_LEVELS:
        r, wr = storage.nvidia_level_gb_per_s(level, nodes_equiv)
        levels[level] = {"read_gb_per_s": float(r), "write_gb_per_s": float(wr),
                         "use": storage.NVIDIA_STORAGE_LEVEL_USE[level]}
    rule = float(storage.read_gb_per_s_rule(gpus))
    bpt = float(storage.token_bytes(plan.model.vocab))
    st = {"read_gb_per_s_rule": rule, "nvidia_levels": levels, "read_gb_per_s": pc.get("storage_read_gb_per_s") or rule,
          "bytes_per_token": bpt}
    if _is_training(plan):
        tps = result["compute"].get("tokens_per_s")
        st["read_gb_per_s_tokens"] = float(storage.read_gb_per_s_tokens(tps, bpt)) if tps else None
        dataset_tb = pc.get("dataset_tb") or float(w["tokens"]) * bpt / units.BYTES_PER_TB
        checkpoint_tb = ckpt["size_resumable_gb"] * pc["checkpoints_kept"] * units.BYTES_PER_GB / units.BYTES_PER_TB
        st["write_gb_per_s"] = ckpt["write_gb_per_s"]
    else:
        # serving: the model repository (weights at serving precision) instead of a dataset
        weights_gb = result["inference"].get("weights_gb") or 0.0
        dataset_tb = pc.get("dataset_tb") or weights_gb * units.BYTES_PER_GB / units.BYTES_PER_TB
        checkpoint_tb = 0.0
        st["write_gb_per_s"] = pc.get("storage_write_gb_per_s")
    hot, warm, cold = storage.capacity_tiers_tb(dataset_tb, checkpoint_tb, pc["storage_growth_factor"])
    st.update({"dataset_tb": dataset_tb, "checkpoint_tb": checkpoint_tb, "growth_factor": pc["storage_growth_factor"],
               "hot_tb": float(hot), "warm_tb": float(warm), "cold_tb": float(cold),
               "capacity_tb": float(hot + warm + cold)})
    return st


_RELIABILITY_KEYS = ("interruptions_per_day", "mtbf_h", "restart_min", "interruptions_per_gpu_year")


def step(plan, result):
    """The ``network``, ``storage``, ``checkpoint``, ``reliability`` and ``schedule`` records.

    Training: network timings for the chosen layout, fabric for the GPU count, checkpoint sizes
    (weights-only, resumable, rule of thumb [seed-ai-training-quick-reference]) and the
    Young/Daly interval, interruptions and goodput; the ``schedule`` is the model step's
    wall-clock time divided by the goodput (``compute.wall_clock_days``, ``meets_deadline``,
    ``gpu_hours_with_failures``; its spread is the Monte Carlo's). Serving: fabric, storage and the
    interruption rate; checkpoints, goodput and the schedule do not apply.
    """
    gpus = int(result["cluster"]["gpus"])
    if not _is_training(plan):
        rel = _reliability(plan, gpus, None)
        return (record_of("network", _network(plan, result, gpus, training=False)),
                record_of("storage", _storage(plan, result, gpus, None)), record("checkpoint"),
                record_of("reliability", {k: rel[k] for k in _RELIABILITY_KEYS}), record("schedule"))
    net = _network(plan, result, gpus, training=True)
    ckpt = _checkpoint(plan, gpus)
    rel = _reliability(plan, gpus, ckpt["write_s"])
    st = _storage(plan, result, gpus, ckpt)
    mtbf_s = rel["mtbf_h"] * units.S_PER_HOUR
    st["write_gb_per_s_needed"] = (float(storage.write_gb_per_s_needed(ckpt["size_resumable_gb"], mtbf_s))
                                   if math.isfinite(mtbf_s) else None)
    st["write_waste_target"] = storage.CHECKPOINT_WASTE_TARGET

    comp = result["compute"]
    steps_total = float(plan.workload["tokens"]) / float(plan.workload["global_batch_tokens"])
    wall_s = (comp.get("wall_clock_days_no_failures") or 0.0) * units.S_PER_DAY
    step_s = wall_s / steps_total if wall_s and steps_total else result["cluster"].get("step_time_s")
    interval_steps = rel["interval_s"] / step_s if step_s and math.isfinite(rel["interval_s"]) else None
    lo, hi = storage.SEED_CHECKPOINT_STEPS
    ck = {
        "size_gb": ckpt["size_resumable_gb"], "size_weights_gb": ckpt["size_weights_gb"],
        "size_rule_gb": ckpt["size_rule_gb"],
        "saved_params": ckpt["saved_params"], "write_gb_per_s": ckpt["write_gb_per_s"], "write_s": ckpt["write_s"],
        "interval_min": rel["interval_s"] / units.S_PER_MIN, "interval_source": rel["interval_source"],
        "young_min": rel["young_s"] / units.S_PER_MIN, "daly_min": rel["daly_s"] / units.S_PER_MIN,
        "step_s": step_s, "interval_steps": interval_steps,
        "seed_interval_steps": [lo, hi],
        "seed_interval_min": [lo * step_s / units.S_PER_MIN, hi * step_s / units.S_PER_MIN] if step_s else None,
        "kept": plan.cluster["checkpoints_kept"],
    }
    re_ = {k: rel[k] for k in (*_RELIABILITY_KEYS, "overhead_fraction", "goodput")}
    re_["goodput_first_order"] = 1.0 - rel["overhead_fraction"]
    return (record_of("network", net), record_of("storage", st), record_of("checkpoint", ck),
            record_of("reliability", re_), record_of("schedule", schedule(plan, comp, rel["goodput"])))


def schedule(plan, comp, goodput) -> dict:
    """The run's wall-clock time with failures: the model step's times divided by the goodput.

    ``gpu_hours*`` stay the productive compute hours at the MFU (the cost step divides them by
    ``reliability.goodput`` itself); ``gpu_hours_with_failures`` = GPUs x wall-clock hours. Below
    :data:`~aiplan.core.A.GOODPUT_STALLED` the run practically never finishes: these figures
    are None (a finding says why).
    """
    stalled = goodput < A.GOODPUT_STALLED
    base = comp.get("wall_clock_days_no_failures")
    out = {"wall_clock_days": None if stalled or base is None else base / goodput}
    out["gpu_hours_with_failures"] = None if stalled or comp.get("gpu_hours") is None else comp["gpu_hours"] / goodput
    deadline = plan.cluster.get("deadline_days")
    if deadline is not None:
        out["meets_deadline"] = (not stalled and out["wall_clock_days"] is not None
                                 and bool(out["wall_clock_days"] <= deadline * (1 + 1e-9)))
    return out
