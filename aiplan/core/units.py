"""Constants and conversions used across aiplan, each with its source.

Names carry their unit. Bytes are decimal unless the name says ``GIB``
(GB = 10^9 bytes, SI prefix; GiB = 2^30 bytes, IEC binary prefix).
"""

from .assumptions import MAX_GPUS

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




def max_gpus_in_servers(gpus_per_node) -> int:
    """The most GPUs the kit plans for, in whole servers of ``gpus_per_node`` [GPUs]."""
    return MAX_GPUS - MAX_GPUS % int(gpus_per_node)

