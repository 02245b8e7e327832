"""Constants and conversions used across aiplan, each with its source.

Names carry their unit. Bytes are decimal unless the name says ``GIB``
(``memory_and_compute.md`` conventions: GB = 10^9 bytes, GiB = 2^30 bytes).
"""

# --- data sizes -------------------------------------------------------------
#: bytes in a gigabyte [B] (SI; reference docs "Conventions")
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
#: heat: BTU/h per watt [BTU/h/W] (facility_network_cost.md §1.1; TechTarget
#: "Watts * 3.412 = Btu/hour"; some references round to 3.41 or 3.413)
BTU_PER_HR_PER_W = 3.412
#: refrigeration ton [BTU/h] (facility_network_cost.md §1.1; facilitiesnet)
BTU_PER_HR_PER_TON = 12000.0
#: refrigeration ton in kW [kW] (ASHRAE, via aiinframap; = 12,000 / 3,412)
KW_PER_TON = BTU_PER_HR_PER_TON / BTU_PER_HR_PER_W / W_PER_KW

# --- mass, area -------------------------------------------------------------
KG_PER_LB = 0.45359237  # exact, international avoirdupois pound
M2_PER_FT2 = 0.09290304  # exact, international foot
KG_PER_TONNE = 1e3

# --- numeric precision, bytes per element ----------------------------------
#: bytes per parameter or activation element by precision [B]
#: (Transformer Math 101 M05/M07; int4 = half a byte before scale overhead)
BYTES_PER_ELEMENT = {
    "fp32": 4.0,
    "fp16": 2.0,
    "bf16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
}

# --- facility and cost rules ------------------------------------------------
#: seed rule: "10.2 kW per H100 SXM5 server; add 30-40% for networking, storage,
#: and cooling overhead" (seed ai-training-infrastructure-quick-reference.txt)
SEED_POWER_OVERHEAD_LOW = 0.30
SEED_POWER_OVERHEAD_HIGH = 0.40
#: practical air-cooling ceiling per rack [kW] (facility_network_cost.md §1.4:
#: ~25-30 kW [S] flashgenius NCP-AII guide, ziash, factryze "air ceiling ~30 kW")
AIR_COOLING_MAX_KW_PER_RACK = 30.0
#: air with perfect containment [kW] (§1.4 [S] aidatacenterguide "~41 kW per rack")
AIR_CONTAINMENT_MAX_KW_PER_RACK = 41.0
#: active rear-door heat exchanger ceiling [kW] (§1.4 [S] yobitel "<= 60 kW";
#: aidatacenterguide 40-75 kW); above it: direct-to-chip liquid (50-120 kW)
REAR_DOOR_MAX_KW_PER_RACK = 60.0
#: usable rack units in a standard 42U rack [U] (EIA-310 42U rack: JUDGEMENT, PDUs are 0U)
RACK_USABLE_U = 42.0
#: empty rack + PDUs + cabling [kg] (JUDGEMENT: typical 42U enclosures weigh
#: 100-180 kg; facility_network_cost.md §1.5 gives servers only)
RACK_EMPTY_KG = 150.0
#: network/storage/management racks per compute rack (DERIVED: NVIDIA H100
#: SuperPOD 4 SU = 127 DGX at 4 per rack = 32 compute racks in 38 racks,
#: RA-11333-001 Table 7; facility_network_cost.md §1.6) -> 6/32
OTHER_RACKS_PER_COMPUTE_RACK = 6.0 / 32.0
#: power of one 64-port NDR switch incl. its 32 OSFP transceivers [kW]
#: (JUDGEMENT, UNCONFIRMED: NVIDIA QM97xx manual lists Class 8 17 W OSFP cages,
#: 32 x 17 W = 0.54 kW optics; switch ASIC/fans assumed ~1 kW)
SWITCH_KW = 1.5
#: storage appliance power per GB/s of read bandwidth [kW/(GB/s)] (JUDGEMENT,
#: UNCONFIRMED: an all-flash 2U appliance of ~2-3 kW serving ~90 GB/s)
STORAGE_KW_PER_GB_PER_S = 0.03
#: seed storage rule: 1 GB/s of storage throughput per GPU [GB/s] (seed quick
#: reference; DDN "usual minimum requirement of 1 GB/s/GPU", §7.2)
STORAGE_GB_PER_S_PER_GPU_RULE = 1.0
#: seed network rule: all-reduce bandwidth >= 10% of compute (seed quick reference)
ALLREDUCE_TO_COMPUTE_MIN = 0.10
#: seed MFU rules: target 80% (aspirational), below 50% of it "a bottleneck"
SEED_MFU_TARGET = 0.80
SEED_MFU_BOTTLENECK_SHARE = 0.50
#: seed storage growth rule: "plan for 10x growth" (what-is-ai-infrastructure.txt)
SEED_STORAGE_GROWTH = 10.0
#: goodput floor: Llama 3 405B "> 90% effective training time" (§4.2)
GOODPUT_MIN = 0.90
#: max leaf oversubscription for training (HPC 1:1; we flag above 2:1, JUDGEMENT on §3.2)
TRAINING_OVERSUBSCRIPTION_MAX = 2.0

# --- model step: training memory, FLOPs, inference (aiplan.model) -----------
#: bytes per parameter of the fp32 master copy kept by mixed-precision optimizers [B]
#: (S20 Transformer Math 101 M07/M08, CORROBORATED; S18 ZeRO §3.1 "K = 12" incl. the copy)
MASTER_WEIGHT_BYTES_PER_PARAM = 4.0
#: optimizer-state bytes per trainable parameter, incl. the fp32 master copy, mixed precision [B]
#: (S20 M08: AdamW 4+4+4 = 12, bitsandbytes 8-bit Adam 4+1+1 = 6, SGD+momentum 4+4 = 8;
#: Adafactor: master copy 4 + factored second moment (row/column statistics, see
#: aiplan.model.optimizer_bytes_per_param), no first moment: Shazeer & Stern 2018, arXiv:1804.04235 §3-4)
OPTIMIZER_BYTES_PER_PARAM = {"adamw": 12.0, "adamw-8bit": 6.0, "sgd": 8.0, "adafactor": 4.0}
#: QLoRA NF4 base weights: 4 bits per parameter plus 0.127 bit/param of quantisation
#: constants after double quantisation (Dettmers et al. 2023, arXiv:2305.14314 §3
#: "Double Quantization": 32/64 = 0.5 bit -> 8/64 + 32/(64*256) = 0.127 bit per parameter)
NF4_BITS_PER_PARAM = 4.0
NF4_DOUBLE_QUANT_OVERHEAD_BITS_PER_PARAM = 0.127
#: Chinchilla compute-optimal tokens per parameter (Hoffmann et al. 2022; S20 M03, CORROBORATED)
CHINCHILLA_TOKENS_PER_PARAM = 20.0
#: seed rule "params x 2 bytes (FP16) x 4 (weights + gradients + 2x optimizer states)"
#: (seeds/ai-training-infrastructure-quick-reference.txt, "GPU memory rule")
RULE_OF_THUMB_BYTES_PER_PARAM = 2.0 * 4.0
#: TF32 dense peak / BF16 dense peak on NVIDIA A100/H100 (A01: TF32 156 vs BF16 312 dense;
#: A02: 494.7 vs 989.5); used as the peak for pure fp32 training (TF32 is not in the catalog)
TF32_TO_BF16_PEAK_RATIO = 0.5
#: achievable share of datasheet memory bandwidth in LLM decode (JUDGEMENT, not calibrated on a
#: source in our references: streaming reads of weights and KV typically reach 70-90% of peak HBM
#: bandwidth; we take 0.80)
DECODE_MEMORY_BW_FRACTION = 0.80

#: scale-out bandwidth assumed when the catalog has none for a server or GPU [Gb/s per GPU]
#: (judgement: one 100 Gb/s NIC per accelerator, the least of any current training server; the
#: result carries a finding when it is used)
UNKNOWN_SCALE_OUT_GBPS_PER_GPU = 100.0

#: the most GPUs a plan may ask for, and the kit plans for (a deadline out of reach is a finding)
MAX_GPUS = 10_000_000

# --- power distribution -----------------------------------------------------
#: standard UPS/power-module sizes offered for the default module choice [kW]
#: (JUDGEMENT: common modular-UPS frame sizes; see facility.module_size_kw)
POWER_MODULE_SIZES_KW = (10, 20, 50, 100, 250, 500, 1000, 2000, 5000)
#: modules per load assumed by fixed redundancy factors (N+1 = 1.25 -> ~4 modules;
#: facility_network_cost.md §1.3, engineering-calculators [S])
MODULES_PER_LOAD = 4
