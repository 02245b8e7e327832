"""Cluster step against published tables and worked examples (facility_network_cost.md).

Every golden value below is copied from the reference document named in the
comment; DERIVED values are recomputed from their published inputs.
"""

from __future__ import annotations

import pytest
from numpy.testing import assert_allclose

from aiplan import units
from aiplan.cluster import network, reliability, storage
from aiplan.model import resumable_checkpoint_bytes_per_param
from aiplan.plan import LLAMA3_INTERRUPTIONS_PER_GPU_YEAR

K = 64  # QM9700: 64 x NDR 400 Gb/s (facility_network_cost.md §2.5)
RAILS = 8  # DGX H100: 8 NDR400 NICs, one per GPU / rail (§2.1, §2.5)
UFM_PORTS = 4  # §2.2: node+UFM->leaf cables = GPUs + 4 in every row


# --- §2.2 H100 compute fabric, RA-11333-001 Table 4 (UFM quirk: one DGX removed) ------------
@pytest.mark.parametrize(
    "su, nodes, gpus, leaf, spine, node_leaf, leaf_spine",
    [
        (1, 31, 248, 8, 4, 252, 256),
        (2, 63, 504, 16, 8, 508, 512),
        (3, 95, 760, 24, 16, 764, 768),  # spine rounding rule §3.3: 12 -> 16
        (4, 127, 1016, 32, 16, 1020, 1024),
    ],
)
def test_superpod_h100_table4(su, nodes, gpus, leaf, spine, node_leaf, leaf_spine):
    assert nodes * 8 == gpus
    f = network.fabric(gpus, K, 1.0, RAILS, UFM_PORTS, nodes, 8)
    assert (f["leaf_switches"], f["spine_switches"], f["core_switches"]) == (leaf, spine, 0)
    assert (f["cables_node_leaf"], f["cables_leaf_spine"]) == (node_leaf, leaf_spine)
    assert f["tiers"] == 2


# --- §2.3 larger SuperPODs, H100 Table 3 = B200 table (32 nodes/SU, no UFM) -------------------
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


def test_superpod_4su_bill_of_materials():
    # §2.4 (RA Appendix A, Tables 7-8): 48 QM9700 (32 leaf + 16 spine), 2,040 NDR cables,
    # 1,536 switch OSFP transceivers (48 x 32), 508 system OSFP (127 x 4), 4 UFM transceivers
    f = network.fabric(1016, K, 1.0, RAILS, UFM_PORTS, 127, 8)
    assert f["switches"] == 48
    assert f["cables"] == 2040
    assert f["transceivers_switch"] == 1536
    assert f["transceivers_node"] == 508
    assert f["transceivers"] == 1536 + 508 + 4


def test_fat_tree_limits():
    # §3.2: k = 64 two tiers up to k^2/2 = 2,048 endpoints with k leaves + k/2 spines
    f = network.fabric(K * K // 2, K)
    assert (f["tiers"], f["leaf_switches"], f["spine_switches"]) == (2, 64, 32)
    # §3.2: k-ary fat tree, k^3/4 = 65,536 hosts, 5k^2/4 = 5,120 switches, (k/2)^2 core
    f = network.fabric(K**3 // 4, K)
    assert f["tiers"] == 3 and f["switches"] == 5 * K * K // 4 and f["core_switches"] == (K // 2) ** 2
    assert f["max_endpoints"] == K**3 // 4


def test_oversubscription_leaf_ports():
    # §3.2 (DERIVED): d = k o/(1+o), u = k/(1+o); o = 3, k = 64 -> 48 down, 16 up
    assert network.leaf_ports(64, 3.0) == (48, 16)
    assert network.leaf_ports(64, 1.0) == (32, 32)


# --- §3.1 NCCL bus bandwidth ---------------------------------------------------------------
def test_allreduce_factors():
    # nccl-tests PERFORMANCE.md (§3.1, §8 row 8): 2(n-1)/n ring, (n-1)/(n+1) SHARP
    assert_allclose(network.allreduce_factor(1024), 2 * 1023 / 1024)
    assert_allclose(network.allreduce_factor(1024, in_network=True), 1023 / 1025)
    assert_allclose(network.allreduce_factor(1), 0.0)


def test_allreduce_worked_example():
    # §3.1 worked example (DERIVED): 10 GB over n = 1024 at 50 GB/s (400 Gb/s NIC) ~ 0.40 s
    nic_gb_per_s = network.scale_out_gb_per_s(1, 400, 1)
    assert nic_gb_per_s == 50.0
    assert round(float(network.allreduce_time_s(10.0, 1024, nic_gb_per_s)), 2) == 0.40


def test_dgx_h100_bandwidths():
    # §2.5: 8 x 400 Gb/s per DGX H100 for 8 GPUs; models_and_hardware.md §2: NVLink 4 900 GB/s
    assert network.scale_out_gb_per_s(8, 400, 8) == 50.0
    assert network.scale_up_gb_per_s(900) == 450.0


# --- §4.1 Young/Daly worked example (Llama 3: 419 interruptions in 54 days) --------------------
MTBF_S = 54 * 24 / 419 * 3600


def test_llama3_job_mtbf():
    # §4.1: M ~ 3.09 h from 419 unexpected interruptions / 54 days on 16,384 GPUs (S07 §3.3.4)
    rate = reliability.interruptions_per_day(16384, LLAMA3_INTERRUPTIONS_PER_GPU_YEAR)
    assert_allclose(rate, 419 / 54)
    assert round(float(reliability.mtbf_h(rate)), 2) == 3.09


@pytest.mark.parametrize("delta_s, young_min, daly_min, overhead_pct", [
    (60, 19, 18, 10),  # §4.1: delta = 1 min -> tau ~ 19 min (Daly 18), ~10%
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
    # Daly 2006 FGCS 22 (doi:10.1016/j.future.2004.11.016) Fig. 3-5 captions: R = 10 min,
    # delta = 5 min; M = 24 h / 6 h / 15 min -> tau_opt = 117 / 57 / 9.1 min
    tau = reliability.daly_higher_order_interval_s(5 * 60, mtbf_min * 60) / 60
    assert round(float(tau), decimals) == tau_min


@pytest.mark.parametrize("mtbf_min, tau_min", [(24 * 60, 117), (6 * 60, 57)])
def test_goodput_model_optimum_matches_daly(mtbf_min, tau_min):
    # The exponential model behind goodput() is Daly's complete cost function: its maximum over
    # tau must sit at the published optimum (Fig. 3-4 captions, R = 10 min, delta = 5 min).
    import numpy as np

    taus = np.linspace(1, 600, 599 * 60 + 1) * 60
    g = reliability.goodput(taus, 300.0, mtbf_min * 60.0, 600.0)
    assert round(float(taus[np.argmax(g)]) / 60) == tau_min


# --- §7.1 NVIDIA storage guidance, H100 RA Tables 5-6 -------------------------------------
@pytest.mark.parametrize("level, nodes, read, write", [
    ("good", 1, 4, 2), ("good", 32, 15, 7), ("good", 128, 60, 30),
    ("better", 1, 8, 4), ("better", 32, 40, 20), ("better", 128, 160, 80),
    ("best", 1, 40, 20), ("best", 32, 125, 62), ("best", 128, 500, 250),
])
def test_nvidia_storage_levels(level, nodes, read, write):
    r, w = storage.nvidia_level_gb_per_s(level, nodes)
    assert (float(r), float(w)) == (read, write)


def test_nvidia_storage_per_gpu():
    # §7.1 (DERIVED): per GPU good 0.5, better 1, best 5 GB/s read (single DGX, 8 GPUs)
    per_gpu = [float(storage.nvidia_level_gb_per_s(lv, 1)[0]) / 8 for lv in ("good", "better", "best")]
    assert per_gpu == [0.5, 1.0, 5.0]


def test_seed_and_ddn_read_rule():
    # seed: 1 GB/s per GPU; DDN (§7.2): "usual minimum requirement of 1 GB/s/GPU"
    assert float(storage.read_gb_per_s_rule(256)) == 256.0


# --- §4.3 checkpoint size and write time ----------------------------------------------------
def test_checkpoint_405b():
    # §4.3: 405B x 16 B = 6.48 TB (Llama 3 summary) -> 3.2 s at 2 TB/s aggregate (DERIVED)
    size_gb = storage.checkpoint_gb(405e9, 16)
    assert_allclose(size_gb * units.BYTES_PER_GB / units.BYTES_PER_TB, 6.48)
    assert round(float(storage.write_time_s(size_gb, 2000.0)), 1) == 3.2


def test_checkpoint_1t_params():
    # §4.3 [S]: 1T params ~ 18 TB; at 100 GB/s -> 180 s
    assert_allclose(storage.write_time_s(18000.0, 100.0), 180.0)


def test_resumable_bytes_per_param():
    # §4.3: restart checkpoints omit gradients, ~12-14 B/param; with 2-byte gradients the
    # mixed-precision Adam state is 16 B/param (M18, DERIVED from M07-M09)
    b = resumable_checkpoint_bytes_per_param("bf16", "adamw")
    assert 12 <= b <= 14
    assert b + 2 == 16
    # seed rule: x2 (BF16) / x4 (FP32) bytes per parameter
    assert float(storage.seed_checkpoint_gb(1e9, "bf16")) == 2.0
    assert float(storage.seed_checkpoint_gb(1e9, "fp32")) == 4.0
