"""Constants and conversions used across aiplan, each with its source.

Names carry their unit. Bytes are decimal unless the name says ``GIB``
(GB = 10^9 bytes, SI prefix; GiB = 2^30 bytes, IEC binary prefix).
"""

# --- data sizes -------------------------------------------------------------
#: bytes in a gigabyte [B] (SI)
BYTES_PER_GB = 1e9
#: bytes in a gibibyte [B] (IEC 80000-13)
BYTES_PER_GIB = 2**30
#: bytes in a terabyte [B] (SI)
BYTES_PER_TB = 1e12
#: bits in a byte [bit]
BITS_PER_BYTE = 8
#: bits per second in one Gb/s [bit/s] (SI; link speeds are quoted in Gb/s)
BITS_PER_S_PER_GBPS = 1e9

# --- compute ----------------------------------------------------------------
#: FLOP/s in one TFLOP/s [FLOP/s] (SI)
FLOPS_PER_TFLOPS = 1e12

# --- time -------------------------------------------------------------------
S_PER_MIN = 60.0
S_PER_HOUR = 3600.0
HOURS_PER_DAY = 24.0
S_PER_DAY = 86400.0
#: days in a year [d] (Julian year, IAU; used for annual rates and energy per year)
DAYS_PER_YEAR = 365.25
HOURS_PER_YEAR = HOURS_PER_DAY * DAYS_PER_YEAR
#: months in a year, for $/month figures
MONTHS_PER_YEAR = 12.0
HOURS_PER_MONTH = HOURS_PER_YEAR / MONTHS_PER_YEAR

# --- power and heat ---------------------------------------------------------
W_PER_KW = 1e3
KW_PER_MW = 1e3
KWH_PER_MWH = 1e3
#: heat: BTU/h per watt [BTU/h/W] (NIST SP 811 App. B: 1 Btu_IT/h = 0.2930711 W, so
#: 1 W = 3.412 Btu/h; some references round to 3.41 or 3.413) [nist-sp-811]
BTU_PER_HR_PER_W = 3.412
#: refrigeration ton [BTU/h] (NIST SP 811 App. B: ton of refrigeration = 12,000 Btu_IT/h) [nist-sp-811]
BTU_PER_HR_PER_TON = 12000.0
#: refrigeration ton in kW [kW] (= 12,000 / 3,412; NIST SP 811 App. B: 3.516853 kW) [nist-sp-811]
KW_PER_TON = BTU_PER_HR_PER_TON / BTU_PER_HR_PER_W / W_PER_KW

# --- mass, area -------------------------------------------------------------
KG_PER_LB = 0.45359237  # exact, international avoirdupois pound
M2_PER_FT2 = 0.09290304  # exact, international foot
KG_PER_TONNE = 1e3

# --- numeric precision, bytes per element ----------------------------------
#: bytes per parameter or activation element by precision [B]
#: (Transformer Math 101, "Inference" and "Model Parameters"; int4 = half a byte before scale
#: overhead) [eleuther-transformer-math-101]. fp4: NVFP4, 4-bit E2M1 values with one FP8 E4M3
#: scale per 16 values = 4.5 bits [nvidia-nvfp4-blog]; MXFP4 (one E8M0 scale per 32 values,
#: 4.25 bits [ocp-mx-spec-v1.0]) is within 6% of it
BYTES_PER_ELEMENT = {
    "fp32": 4.0,
    "fp16": 2.0,
    "bf16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "fp4": 4.5 / 8,
    "int4": 0.5,
}

# --- facility and cost rules ------------------------------------------------
#: rule of thumb: "10.2 kW per H100 SXM5 server; add 30-40% for networking, storage,
#: and cooling overhead" (DCS Global quick reference, power rule) [seed-ai-training-quick-reference]
SEED_POWER_OVERHEAD_LOW = 0.30
SEED_POWER_OVERHEAD_HIGH = 0.40
#: practical air-cooling ceiling per rack [kW] (judgement: the ~25-30 kW air ceiling quoted
#: by vendor guides and blogs; no primary source)
AIR_COOLING_MAX_KW_PER_RACK = 30.0
#: air with perfect containment [kW] (judgement: ~41 kW per rack quoted by blogs; no primary source)
AIR_CONTAINMENT_MAX_KW_PER_RACK = 41.0
#: active rear-door heat exchanger ceiling [kW] (judgement: blogs quote <= 60 kW or 40-75 kW;
#: no primary source); above it: direct-to-chip liquid (50-120 kW)
REAR_DOOR_MAX_KW_PER_RACK = 60.0
#: usable rack units in a standard 42U rack [U] (judgement: EIA-310 42U rack, PDUs are 0U)
RACK_USABLE_U = 42.0
#: empty rack + PDUs + cabling [kg] (judgement: typical 42U enclosures weigh
#: 100-180 kg; our sources give server weights only)
RACK_EMPTY_KG = 150.0
#: network/storage/management racks per compute rack, derived from the NVIDIA H100
#: SuperPOD: 4 SU = 127 DGX at 4 per rack = 32 compute racks in 38 racks -> 6/32
#: (NVIDIA RA-11333-001 App. A, Table 7) [nvidia-ra-11333-001]
OTHER_RACKS_PER_COMPUTE_RACK = 6.0 / 32.0
#: power of one 64-port NDR switch incl. its 32 OSFP transceivers [kW]
#: (judgement: the NVIDIA QM97xx manual, "Interfaces", lists Class 8 17 W OSFP cages,
#: 32 x 17 W = 0.54 kW optics; switch ASIC/fans assumed ~1 kW) [nvidia-qm97xx-manual]
SWITCH_KW = 1.5
#: storage appliance power per GB/s of read bandwidth [kW/(GB/s)] (judgement, no source:
#: an all-flash 2U appliance of ~2-3 kW serving ~90 GB/s)
STORAGE_KW_PER_GB_PER_S = 0.03
#: rule of thumb: 1 GB/s of storage throughput per GPU [GB/s] (DCS Global quick reference,
#: storage rule; DDN blog: "usual minimum requirement of 1 GB/s/GPU")
#: [seed-ai-training-quick-reference;ddn-blog-dgx-b200]
STORAGE_GB_PER_S_PER_GPU_RULE = 1.0
#: rule of thumb: all-reduce bandwidth >= 10% of compute (DCS Global quick reference,
#: network rule) [seed-ai-training-quick-reference]
ALLREDUCE_TO_COMPUTE_MIN = 0.10
#: rules of thumb for MFU: target 80% (aspirational), below 50% of it "a bottleneck"
#: (DCS Global quick reference, utilisation target) [seed-ai-training-quick-reference]
SEED_MFU_TARGET = 0.80
SEED_MFU_BOTTLENECK_SHARE = 0.50
#: storage growth rule of thumb: "Plan for 10x growth in storage capacity and throughput"
#: (Briarwood, "Common AI Deployment Infrastructure Mistakes to Avoid") [seed-what-is-ai-infrastructure]
SEED_STORAGE_GROWTH = 10.0
#: goodput floor: Llama 3 405B "> 90% effective training time" (Llama Team 2024, §3.3.4) [arxiv-2407.21783]
GOODPUT_MIN = 0.90
#: below this goodput a training run practically never finishes (a million times its failure-free
#: duration): the kit reports no duration, energy or run cost and says why (judgement)
GOODPUT_STALLED = 1e-6
#: max leaf oversubscription for training (HPC fabrics are 1:1, full fat tree: NVIDIA RA-11333-001,
#: "Network Fabrics" [nvidia-ra-11333-001]; judgement: we flag above 2:1)
TRAINING_OVERSUBSCRIPTION_MAX = 2.0

# --- model step: training memory, FLOPs, inference (aiplan.model) -----------
#: bytes per parameter of the fp32 master copy kept by mixed-precision optimizers [B]
#: (Transformer Math 101, "Model Parameters", "Optimizer States"; ZeRO §3.1 "K = 12" incl. the copy)
#: [eleuther-transformer-math-101;arxiv-1910.02054]
MASTER_WEIGHT_BYTES_PER_PARAM = 4.0
#: optimizer-state bytes per trainable parameter, incl. the fp32 master copy, mixed precision [B]
#: (Transformer Math 101, "Optimizer States": AdamW 4+4+4 = 12, bitsandbytes 8-bit Adam 4+1+1 = 6,
#: SGD+momentum 4+4 = 8 [eleuther-transformer-math-101]; Adafactor: master copy 4 + factored second
#: moment (row/column statistics, see aiplan.model.optimizer_bytes_per_param), no first moment:
#: Shazeer & Stern 2018, arXiv:1804.04235 §3-4 [arxiv-1804.04235])
OPTIMIZER_BYTES_PER_PARAM = {"adamw": 12.0, "adamw-8bit": 6.0, "sgd": 8.0, "adafactor": 4.0}
#: QLoRA NF4 base weights: 4 bits per parameter plus 0.127 bit/param of quantisation
#: constants after double quantisation (Dettmers et al. 2023, arXiv:2305.14314 §3
#: "Double Quantization": 32/64 = 0.5 bit -> 8/64 + 32/(64*256) = 0.127 bit per parameter) [arxiv-2305.14314]
NF4_BITS_PER_PARAM = 4.0
NF4_DOUBLE_QUANT_OVERHEAD_BITS_PER_PARAM = 0.127
#: Chinchilla compute-optimal tokens per parameter (Hoffmann et al. 2022, §3; Transformer Math 101,
#: "Parameter vs Dataset Tradeoffs") [arxiv-2203.15556;eleuther-transformer-math-101]
CHINCHILLA_TOKENS_PER_PARAM = 20.0
#: rule of thumb "params x 2 bytes (FP16) x 4 (weights + gradients + 2x optimizer states)"
#: (DCS Global quick reference, GPU memory rule) [seed-ai-training-quick-reference]
RULE_OF_THUMB_BYTES_PER_PARAM = 2.0 * 4.0
#: TF32 dense peak / BF16 dense peak on NVIDIA A100/H100 (A100 datasheet: TF32 156 vs BF16 312
#: dense; H100 specifications: 494.7 vs 989.5 dense, half the sparse figures)
#: [nvidia-a100-datasheet;nvidia-h100-page]; used as the peak for pure fp32 training (TF32 is not
#: in the catalog)
TF32_TO_BF16_PEAK_RATIO = 0.5

#: GPU-to-GPU bandwidth outside a scale-up domain (PCIe 5.0 x16: 32 GT/s x 16 lanes, 128b/130b
#: encoding, about 63 GB/s each way) [GB/s, both directions] (PCI-SIG, PCI Express Base
#: Specification 5.0) [pci-sig-pcie-base-5.0]
PCIE5_X16_GB_PER_S = 126.0

#: scale-out bandwidth assumed when the catalog has none for a server or GPU [Gb/s per GPU]
#: (judgement: one 100 Gb/s NIC per accelerator, the least of any current training server; the
#: result carries a finding when it is used)
UNKNOWN_SCALE_OUT_GBPS_PER_GPU = 100.0

#: the most GPUs a plan may ask for, and the kit plans for (a deadline out of reach is a finding)
MAX_GPUS = 10_000_000


def max_gpus_in_servers(gpus_per_node) -> int:
    """The most GPUs the kit plans for, in whole servers of ``gpus_per_node`` [GPUs]."""
    return MAX_GPUS - MAX_GPUS % int(gpus_per_node)

# --- power distribution -----------------------------------------------------
#: standard UPS/power-module sizes offered for the default module choice [kW]
#: (judgement: common modular-UPS frame sizes; see facility.module_size_kw)
POWER_MODULE_SIZES_KW = (10, 20, 50, 100, 250, 500, 1000, 2000, 5000)
#: modules per load assumed by fixed redundancy factors (derived: N+1 = 1.25 -> ~4 modules,
#: from the fixed factors of an online sizing calculator, a secondary source)
#: [engineering-calculators-dc-sizing]
MODULES_PER_LOAD = 4
