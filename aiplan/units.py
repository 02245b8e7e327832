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

# --- facility and cost rules (facility/cost helper) --------------------------
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
