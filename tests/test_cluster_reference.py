"""Cluster step against published tables and worked examples.

Every golden value below is copied from the source named in the comment (NVIDIA's
DGX SuperPOD reference architectures, nccl-tests, Young, Daly, the Llama 3 paper, DDN;
bibliography ids in brackets); derived values are recomputed from their published inputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from numpy.testing import assert_allclose

from aiplan.cluster import network, reliability, storage
from aiplan.core import units
from aiplan.model import collectives, resumable_checkpoint_bytes_per_param
from aiplan.plan import LLAMA3_INTERRUPTIONS_PER_GPU_YEAR

K = 64  # QM9700: 64 x NDR 400 Gb/s (NVIDIA QM97XX user manual, "Interfaces") [nvidia-qm97xx-manual]
RAILS = 8  # DGX H100: 8 NDR400 NICs, one per GPU / rail (NVIDIA RA-11333-001, pp. 5, 12) [nvidia-ra-11333-001]
UFM_PORTS = 4  # node+UFM->leaf cables = GPUs + 4 in every row (RA-11333-001, Table 4) [nvidia-ra-11333-001]


# --- H100 compute fabric, RA-11333-001 Table 4 (UFM quirk: one DGX removed) [nvidia-ra-11333-001] ---
@pytest.mark.parametrize(
    "su, nodes, gpus, leaf, spine, node_leaf, leaf_spine",
    [
        (1, 31, 248, 8, 4, 252, 256),
        (2, 63, 504, 16, 8, 508, 512),
        (3, 95, 760, 24, 16, 764, 768),  # Table 4 has 16 spines; our rounding rule (derived): 12 -> 16
        (4, 127, 1016, 32, 16, 1020, 1024),
    ],
)
def test_superpod_h100_table4(su, nodes, gpus, leaf, spine, node_leaf, leaf_spine):
    assert nodes * 8 == gpus
    f = network.fabric(gpus, K, 1.0, RAILS, UFM_PORTS, nodes, 8)
    assert (f["leaf_switches"], f["spine_switches"], f["core_switches"]) == (leaf, spine, 0)
    assert (f["cables_node_leaf"], f["cables_leaf_spine"]) == (node_leaf, leaf_spine)
    assert f["tiers"] == 2


# --- larger SuperPODs, H100 RA Table 3 = B200 RA "DGX SuperPOD Architecture" table (32 nodes/SU, no UFM)
# [nvidia-ra-11333-001;nvidia-superpod-b200-ra]
@pytest.mark.parametrize(
    "su, nodes, gpus, leaf, spine, core, node_leaf, leaf_spine, spine_core",
    [
        (2, 64, 512, 16, 8, 0, 512, 512, 0),
        (4, 128, 1024, 32, 16, 0, 1024, 1024, 0),
        (8, 256, 2048, 64, 32, 0, 2048, 2048, 0),
        (16, 512, 4096, 128, 128, 64, 4096, 4096, 4096),
        (32, 1024, 8192, 256, 256, 128, 8192, 8192, 8192),
        (64, 2048, 16384, 512, 512, 256, 16384, 16384, 16384),
    ],
)
def test_superpod_table3(su, nodes, gpus, leaf, spine, core, node_leaf, leaf_spine, spine_core):
    f = network.fabric(gpus, K, 1.0, RAILS, 0, nodes, 8)
    assert (f["leaf_switches"], f["spine_switches"], f["core_switches"]) == (leaf, spine, core)
    assert (f["cables_node_leaf"], f["cables_leaf_spine"], f["cables_spine_core"]) == (
        node_leaf, leaf_spine, spine_core)
    assert f["tiers"] == (3 if core else 2)


# --- B300 SuperPODs (published tables), read from tests/data/superpod_fabrics.csv: Quantum-X800 XDR
# (144 x 800G, 72 DGX B300 per SU, 8 rails) and Spectrum-X twin-plane Ethernet (SN5600 as 128 x 400G,
# 64 DGX B300 per SU, each 800G NIC split into 2 x 400G planes)
# [nvidia-superpod-b300-xdr-ra;nvidia-superpod-b300-eth-ra-fabrics]

def _superpod_rows():
    import csv

    with open(Path(__file__).resolve().parent / "data" / "superpod_fabrics.csv", newline="") as fh:
        return [r for r in csv.DictReader(fh) if "B300" in r["system"]]


@pytest.mark.parametrize("row", _superpod_rows(), ids=lambda r: r["system"])
def test_superpod_b300_xdr_and_spectrum_x(row, catalog):
    switch = catalog.switches[row["switch"]]
    server = catalog.servers["dgx-b300"]
    nodes = int(row["nodes"])
    planes = network.fabric_planes(server.nic_gbps, switch.port_gbps)
    f = network.fabric(nodes * server.nics_per_node, switch.ports, 1.0, server.nics_per_node, 0, nodes,
                       server.nics_per_node)
    assert (f["leaf_switches"] * planes, f["spine_switches"] * planes) == \
        (int(row["leaf_switches"]), int(row["spine_switches"]))
    if "XDR" in row["system"] and row["nodes"] != "1296":  # NVIDIA's 18-SU row prints 9,216 GPUs for 1,296 nodes
        assert f["cables"] == int(row["cables"]) and int(row["gpus"]) == nodes * 8


def test_superpod_4su_bill_of_materials():
    # RA-11333-001 Appendix A, Tables 7-8 [nvidia-ra-11333-001]: 48 QM9700 (32 leaf + 16 spine), 2,040 NDR cables,
    # 1,536 switch OSFP transceivers (48 x 32), 508 system OSFP (127 x 4), 4 UFM transceivers
    f = network.fabric(1016, K, 1.0, RAILS, UFM_PORTS, 127, 8)
    assert f["switches"] == 48
    assert f["cables"] == 2040
    assert f["transceivers_switch"] == 1536
    assert f["transceivers_node"] == 508
    assert f["transceivers"] == 1536 + 508 + 4


def test_fat_tree_limits():
    # k = 64 two tiers up to k^2/2 = 2,048 endpoints with k leaves + k/2 spines (derived; matches the 8-SU
    # row of the SuperPOD table: 64 leaf, 32 spine) [nvidia-ra-11333-001;nvidia-superpod-b200-ra]
    f = network.fabric(K * K // 2, K)
    assert (f["tiers"], f["leaf_switches"], f["spine_switches"]) == (2, 64, 32)
    # k-ary fat tree, k^3/4 = 65,536 hosts, 5k^2/4 = 5,120 switches, (k/2)^2 core (Al-Fares et al. 2008)
    # [doi-10.1145-1402958.1402967]
    f = network.fabric(K**3 // 4, K)
    assert f["tiers"] == 3 and f["switches"] == 5 * K * K // 4 and f["core_switches"] == (K // 2) ** 2
    assert f["max_endpoints"] == K**3 // 4


def test_oversubscription_leaf_ports():
    # derived: d = k o/(1+o), u = k/(1+o); o = 3, k = 64 -> 48 down, 16 up
    assert network.leaf_ports(64, 3.0) == (48, 16)
    assert network.leaf_ports(64, 1.0) == (32, 32)


# --- NCCL bus bandwidth (nccl-tests doc/PERFORMANCE.md) [nvidia-nccl-tests-performance-md] -----
def test_allreduce_factors():
    # 2(n-1)/n ring (nccl-tests PERFORMANCE.md, "Summary") [nvidia-nccl-tests-performance-md]; (n-1)/(n+1)
    # SHARP (only in the unmerged nccl-tests pull request 239) [nvidia-nccl-tests-pr-239]
    assert_allclose(collectives.allreduce_factor(1024), 2 * 1023 / 1024)
    assert_allclose(collectives.allreduce_factor(1024, in_network=True), 1023 / 1025)
    assert_allclose(collectives.allreduce_factor(1), 0.0)


def test_allreduce_worked_example():
    # worked example (derived from the AllReduce formula): 10 GB over n = 1024 at 50 GB/s (400 Gb/s NIC)
    # ~ 0.40 s [nvidia-nccl-tests-performance-md]
    nic_gb_per_s = network.scale_out_gb_per_s(1, 400, 1)
    assert nic_gb_per_s == 50.0
    assert round(float(collectives.allreduce_time_s(10.0, 1024, nic_gb_per_s)), 2) == 0.40


def test_dgx_h100_bandwidths():
    # 8 x 400 Gb/s per DGX H100 for 8 GPUs (RA-11333-001, pp. 5, 12) [nvidia-ra-11333-001];
    # NVLink 4 900 GB/s (H100 specifications) [nvidia-h100-page]
    assert network.scale_out_gb_per_s(8, 400, 8) == 50.0
    assert collectives.scale_up_gb_per_s(900) == 450.0


# --- Young/Daly worked example (Llama 3: 419 interruptions in 54 days), derived
# [doi-10.1145-361147.361115;doi-10.1016-j.future.2004.11.016;arxiv-2407.21783]
MTBF_S = 54 * 24 / 419 * 3600


def test_llama3_job_mtbf():
    # M ~ 3.09 h from 419 unexpected interruptions / 54 days on 16,384 GPUs (Llama Team 2024, §3.3.4)
    # [arxiv-2407.21783]
    rate = reliability.interruptions_per_day(16384, LLAMA3_INTERRUPTIONS_PER_GPU_YEAR)
    assert_allclose(rate, 419 / 54)
    assert round(float(reliability.mtbf_h(rate)), 2) == 3.09


@pytest.mark.parametrize("delta_s, young_min, daly_min, overhead_pct", [
    (60, 19, 18, 10),  # derived: delta = 1 min -> tau ~ 19 min (Daly 18), ~10%
    (30, 14, None, 7),  # delta = 30 s -> ~14 min, ~7%
    (300, 43, None, 23),  # delta = 5 min -> ~43 min, ~23%
])
def test_young_daly_worked_example(delta_s, young_min, daly_min, overhead_pct):
    tau = reliability.young_interval_s(delta_s, MTBF_S)
    assert round(float(tau) / 60) == young_min
    if daly_min is not None:
        assert round(float(reliability.daly_interval_s(delta_s, MTBF_S)) / 60) == daly_min
    overhead = reliability.overhead_fraction(tau, delta_s, MTBF_S, 0.0)
    assert round(100 * float(overhead)) == overhead_pct


@pytest.mark.parametrize("mtbf_min, tau_min, decimals", [(24 * 60, 117, 0), (6 * 60, 57, 0), (15, 9.1, 1)])
def test_daly_higher_order_figures(mtbf_min, tau_min, decimals):
    # Daly 2006 FGCS 22, Figs. 3-5 captions: R = 10 min, delta = 5 min; M = 24 h / 6 h / 15 min
    # -> tau_opt = 117 / 57 / 9.1 min [doi-10.1016-j.future.2004.11.016]
    tau = reliability.daly_higher_order_interval_s(5 * 60, mtbf_min * 60) / 60
    assert round(float(tau), decimals) == tau_min


@pytest.mark.parametrize("mtbf_min, tau_min", [(24 * 60, 117), (6 * 60, 57)])
def test_goodput_model_optimum_matches_daly(mtbf_min, tau_min):
    # The exponential model behind goodput() is Daly's complete cost function: its maximum over
    # tau must sit at the published optimum (Figs. 3-4 captions, R = 10 min, delta = 5 min)
    # [doi-10.1016-j.future.2004.11.016].
    import numpy as np

    taus = np.linspace(1, 600, 599 * 60 + 1) * 60
    g = reliability.goodput(taus, 300.0, mtbf_min * 60.0, 600.0)
    assert round(float(taus[np.argmax(g)]) / 60) == tau_min


# --- NVIDIA storage guidance, H100 RA Tables 5-6 [nvidia-ra-11333-001] ----------------------
@pytest.mark.parametrize("level, nodes, read, write", [
    ("good", 1, 4, 2), ("good", 32, 15, 7), ("good", 128, 60, 30),
    ("better", 1, 8, 4), ("better", 32, 40, 20), ("better", 128, 160, 80),
    ("best", 1, 40, 20), ("best", 32, 125, 62), ("best", 128, 500, 250),
])
def test_nvidia_storage_levels(level, nodes, read, write):
    r, w = storage.nvidia_level_gb_per_s(level, nodes)
    assert (float(r), float(w)) == (read, write)


def test_nvidia_storage_per_gpu():
    # derived: per GPU good 0.5, better 1, best 5 GB/s read (single-node 4 / 8 / 40 GB/s of RA-11333-001
    # Table 6, 8 GPUs) [nvidia-ra-11333-001]
    per_gpu = [float(storage.nvidia_level_gb_per_s(lv, 1)[0]) / 8 for lv in ("good", "better", "best")]
    assert per_gpu == [0.5, 1.0, 5.0]


def test_seed_and_ddn_read_rule():
    # rule of thumb: 1 GB/s per GPU (DCS Global quick reference, storage rule); DDN blog: "usual minimum
    # requirement of 1 GB/s/GPU" [seed-ai-training-quick-reference;ddn-blog-dgx-b200]
    assert float(storage.read_gb_per_s_rule(256)) == 256.0


# --- checkpoint size and write time ----------------------------------------------------------
def test_checkpoint_405b():
    # derived: 405B (Llama Team 2024, Table 3) x 16 B (ZeRO §3.1) = 6.48 TB -> 3.2 s at 2 TB/s aggregate
    # (Tectonic storage: "2 TB/s sustained, 7 TB/s peak", Llama Team 2024, §3.3.1) [arxiv-2407.21783;arxiv-1910.02054]
    size_gb = storage.checkpoint_gb(405e9, 16)
    assert_allclose(size_gb * units.BYTES_PER_GB / units.BYTES_PER_TB, 6.48)
    assert round(float(storage.write_time_s(size_gb, 2000.0)), 1) == 3.2


def test_checkpoint_1t_params():
    # derived: 1T params x 18 B/param (judgement: upper end of 16-18 B/param) ~ 18 TB; at 100 GB/s -> 180 s
    assert_allclose(storage.write_time_s(18000.0, 100.0), 180.0)


def test_resumable_bytes_per_param():
    # restart checkpoints omit gradients, ~12-14 B/param (judgement: gradients are recomputed after a
    # restart); with 2-byte gradients the mixed-precision Adam state is 16 B/param (derived: 2 + 12 + 2,
    # Transformer Math 101; ZeRO §3.1) [eleuther-transformer-math-101;arxiv-1910.02054]
    b = resumable_checkpoint_bytes_per_param("bf16", "adamw")
    assert 12 <= b <= 14
    assert b + 2 == 16
    # rule of thumb: x2 (BF16) / x4 (FP32) bytes per parameter (DCS Global quick reference, checkpoint
    # storage rule) [seed-ai-training-quick-reference]
    assert float(storage.seed_checkpoint_gb(1e9, "bf16")) == 2.0
    assert float(storage.seed_checkpoint_gb(1e9, "fp32")) == 4.0
