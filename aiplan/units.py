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
