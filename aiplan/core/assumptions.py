"""The assumptions registry: every value the kit assumes, with its unit and its source or "judgement".

Two kinds of assumption meet here:

* the kit's own constants (this module): thresholds, rules of thumb, fallbacks the formulas use
  where a plan or the catalog has no figure (a switch's power, an empty rack's weight, the
  practical air-cooling ceiling...). Each is defined once, by :func:`assume`, which records its
  label, unit, sources and whether it is a judgement; the code reads the constant, the report,
  the workbook and the app read :data:`REGISTRY`;
* the plan's defaults: the rows of the plan schema (:mod:`aiplan.plan.schema`), each with its
  default, unit, ``sources`` and ``judgement`` flag; :func:`aiplan.plan.assumptions.registry`
  joins both for the views.

A value with sources is a published figure or a rule of thumb a source states; a judgement says
so, and says what it rests on (``basis``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Assumption:
    """One assumed value: ``label`` = ``value`` [``unit``], from ``sources`` (ids of
    ``data/sources.csv``) or the kit's ``judgement``; ``basis`` says how it was reached and
    ``used_for`` where the kit uses it."""

    name: str
    label: str
    value: Any
    unit: str
    sources: tuple[str, ...] = ()
    judgement: bool = False
    basis: str = ""
    used_for: str = ""
    #: display format (:func:`aiplan.core.fields.format_value` kind; "pct": a share shown in percent)
    fmt: str = ""
    #: the plans it applies to: "training", "serving", or "" for both
    workload: str = ""


#: every constant of the kit by name (plan defaults come from the plan schema)
REGISTRY: dict[str, Assumption] = {}


def assume(name: str, value: Any, unit: str, label: str, *, sources: tuple[str, ...] = (),
           judgement: bool = False, basis: str = "", used_for: str = "", fmt: str = "", workload: str = "") -> Any:
    """Register a constant and return its value (``SWITCH_KW = assume("SWITCH_KW", 1.5, ...)``)."""
    if name in REGISTRY:
        raise ValueError(f"assumption {name} is defined twice")
    if not sources and not judgement:
        raise ValueError(f"assumption {name} needs sources or judgement=True")
    if workload not in ("", "training", "serving"):
        raise ValueError(f"assumption {name}: workload {workload!r} is not training, serving or empty")
    REGISTRY[name] = Assumption(name, label, value, unit, tuple(sources), judgement, basis, used_for, fmt, workload)
    return value


# --- rules of thumb of the source articles --------------------------------------------------------

SEED_POWER_OVERHEAD_LOW = assume(
    "SEED_POWER_OVERHEAD_LOW", 0.30, "of server power", "Power overhead rule of thumb, low end",
    sources=("seed-ai-training-quick-reference",),
    basis="'10.2 kW per H100 SXM5 server; add 30-40% for networking, storage, and cooling overhead'",
    used_for="the facility power rule of thumb shown beside the detailed model", fmt="pct")
SEED_POWER_OVERHEAD_HIGH = assume(
    "SEED_POWER_OVERHEAD_HIGH", 0.40, "of server power", "Power overhead rule of thumb, high end",
    sources=("seed-ai-training-quick-reference",), basis="as the low end",
    used_for="the facility power rule of thumb shown beside the detailed model", fmt="pct")
STORAGE_GB_PER_S_PER_GPU_RULE = assume(
    "STORAGE_GB_PER_S_PER_GPU_RULE", 1.0, "GB/s per GPU", "Storage read bandwidth rule of thumb",
    sources=("seed-ai-training-quick-reference", "ddn-blog-dgx-b200"),
    basis="'1 GB/s of storage throughput per GPU'; DDN: 'usual minimum requirement of 1 GB/s/GPU'",
    used_for="the default storage read bandwidth (a training rule, kept for a service's weight loads) and the "
             "storage finding")
ALLREDUCE_TO_COMPUTE_MIN = assume(
    "ALLREDUCE_TO_COMPUTE_MIN", 0.10, "of the scale-up bandwidth", "All-reduce bandwidth rule of thumb",
    sources=("seed-ai-training-quick-reference",), basis="'all-reduce bandwidth >= 10% of compute'",
    used_for="the all-reduce bandwidth finding", fmt="pct", workload="training")
EXPOSED_SYNC_MINOR = assume(
    "EXPOSED_SYNC_MINOR", 0.05, "of the step time", "Exposed gradient synchronisation too small to act on",
    judgement=True, basis="a twentieth of a step: well inside the training time's 10th-90th percentile range",
    used_for="the all-reduce bandwidth finding: below it the finding informs instead of warning", fmt="pct",
    workload="training")
IDLE_OWNED_GPU_SHARE = assume(
    "IDLE_OWNED_GPU_SHARE", 0.5, "of the GPUs owned or rented", "Idle share of owned or rented GPUs that warns",
    judgement=True, basis="half the GPUs idle doubles the cost per GPU used", fmt="pct",
    used_for="the partly used servers and instances findings: below it the finding informs instead of warning")
SEED_MFU_TARGET = assume(
    "SEED_MFU_TARGET", 0.80, "of peak", "Utilisation target rule of thumb",
    sources=("seed-ai-training-quick-reference",), basis="aspirational 80% utilisation target",
    used_for="context beside the calibrated MFU", fmt="pct", workload="training")
SEED_MFU_BOTTLENECK_SHARE = assume(
    "SEED_MFU_BOTTLENECK_SHARE", 0.50, "of the target", "Utilisation bottleneck rule of thumb",
    sources=("seed-ai-training-quick-reference",), basis="below half the target points to a bottleneck",
    used_for="context beside the calibrated MFU", fmt="pct", workload="training")
SEED_STORAGE_GROWTH = assume(
    "SEED_STORAGE_GROWTH", 10.0, "times", "Storage growth rule of thumb",
    sources=("seed-what-is-ai-infrastructure",),
    basis="'Plan for 10x growth in storage capacity and throughput'", used_for="the storage growth finding")
GOODPUT_MIN = assume(
    "GOODPUT_MIN", 0.90, "of wall-clock time", "Goodput a large run reaches",
    sources=("arxiv-2407.21783",), basis="Llama 3 405B: '> 90% effective training time' (§3.3.4)",
    used_for="the low-goodput finding", fmt="pct", workload="training")

PIPELINE_BUBBLE_MAX = assume(
    "PIPELINE_BUBBLE_MAX", 0.20, "of a step", "Pipeline idle share of a step that warns", judgement=True,
    basis="the 1F1B schedule idles (stages - 1) / micro-batches of its compute time (Narayanan et al. 2021, "
          "arXiv:2104.04473 §2.2.1), small only when the micro-batches far outnumber the stages; a fifth of every "
          "step idle is worth a planner's attention",
    used_for="the pipeline-bubble finding", fmt="pct", workload="training")

# --- facility -------------------------------------------------------------------------------------

AIR_COOLING_MAX_KW_PER_RACK = assume(
    "AIR_COOLING_MAX_KW_PER_RACK", 30.0, "kW per rack", "Practical air-cooling ceiling", judgement=True,
    basis="the ~25-30 kW air ceiling vendor guides and blogs quote; no primary source",
    used_for="the cooling recommended for a rack density")
AIR_CONTAINMENT_MAX_KW_PER_RACK = assume(
    "AIR_CONTAINMENT_MAX_KW_PER_RACK", 41.0, "kW per rack", "Air cooling with full containment, ceiling",
    judgement=True, basis="~41 kW per rack quoted by blogs; no primary source",
    used_for="the rack density finding")
REAR_DOOR_MAX_KW_PER_RACK = assume(
    "REAR_DOOR_MAX_KW_PER_RACK", 60.0, "kW per rack", "Rear-door heat exchanger ceiling", judgement=True,
    basis="blogs quote up to 60 kW or 40-75 kW; no primary source; above it, direct-to-chip liquid",
    used_for="the cooling recommended for a rack density")
RACK_USABLE_U = assume(
    "RACK_USABLE_U", 42.0, "U", "Usable rack units per rack", judgement=True,
    basis="an EIA-310 42U rack with 0U power distribution", used_for="servers per rack")
RACK_EMPTY_KG = assume(
    "RACK_EMPTY_KG", 150.0, "kg", "Weight of an empty rack with power distribution and cabling",
    judgement=True, basis="typical 42U enclosures weigh 100-180 kg; the sources give server weights only",
    used_for="rack weight and the floor-loading finding")
OTHER_RACKS_PER_COMPUTE_RACK = assume(
    "OTHER_RACKS_PER_COMPUTE_RACK", 6.0 / 32.0, "racks per compute rack",
    "Network, storage and management racks per compute rack", sources=("nvidia-ra-11333-001",),
    basis="DGX SuperPOD H100, 4 scalable units: 32 compute racks in 38 (App. A, Table 7); none where the "
          "cluster fits one compute rack with room for another server, which then holds that gear (judgement)",
    used_for="rack count and floor area")
SWITCH_KW = assume(
    "SWITCH_KW", 1.5, "kW", "Power of one fabric switch the catalog does not know", judgement=True,
    sources=("nvidia-qm97xx-manual",),
    basis="64-port NDR switch: 32 OSFP cages x 17 W (the manual's Class 8 optics) plus about 1 kW of ASIC "
          "and fans (the ASIC share is a judgement)",
    used_for="network power of a switch the catalog does not know (a catalog switch without a published figure "
             "is scaled from the published switch of the nearest port speed)")
STORAGE_KW_PER_GB_PER_S = assume(
    "STORAGE_KW_PER_GB_PER_S", 0.03, "kW per GB/s", "Storage power per GB/s of read bandwidth", judgement=True,
    basis="an all-flash 2U appliance of about 2-3 kW serving about 90 GB/s; no source",
    used_for="storage power")
POWER_MODULE_SIZES_KW = assume(
    "POWER_MODULE_SIZES_KW", (10, 20, 50, 100, 250, 500, 1000, 2000, 5000), "kW",
    "Power module sizes offered", judgement=True, basis="common modular-UPS frame sizes",
    used_for="the power modules of a redundancy scheme")
MODULES_PER_LOAD = assume(
    "MODULES_PER_LOAD", 4, "modules", "Power modules per load in fixed redundancy factors",
    sources=("engineering-calculators-dc-sizing",),
    basis="derived from the fixed factors of an online sizing calculator (N+1 = 1.25), a secondary source",
    used_for="the default power module size")

# --- cluster and training -------------------------------------------------------------------------

GOODPUT_STALLED = assume(
    "GOODPUT_STALLED", 1e-6, "share of wall-clock time", "Goodput below which a run never finishes",
    judgement=True, basis="a million times its failure-free duration: no duration, energy or run cost is "
                          "reported and a finding says why", used_for="runs that practically never finish",
    workload="training")
TRAINING_OVERSUBSCRIPTION_MAX = assume(
    "TRAINING_OVERSUBSCRIPTION_MAX", 2.0, "ratio", "Largest leaf oversubscription for training", judgement=True,
    sources=("nvidia-ra-11333-001",), basis="training fabrics are 1:1 full fat trees; the kit flags above 2:1",
    used_for="the oversubscription finding", workload="training")
UNKNOWN_SCALE_OUT_GBPS_PER_GPU = assume(
    "UNKNOWN_SCALE_OUT_GBPS_PER_GPU", 100.0, "Gb/s per GPU", "Scale-out bandwidth where the catalog has none",
    judgement=True, basis="one 100 Gb/s NIC per accelerator, the least of any current training server",
    used_for="network time when a server or GPU row lacks its NICs (a finding says so)")
MAX_GPUS = assume(
    "MAX_GPUS", 10_000_000, "GPUs", "Most GPUs a plan may ask for", judgement=True,
    basis="far beyond any published cluster; a deadline out of reach is a finding",
    used_for="plan validation and deadline sizing")
DEADLINE_CONFIDENCE_SHOWN = assume(
    "DEADLINE_CONFIDENCE_SHOWN", 0.9, "chance", "Chance of meeting the deadline also sized for",
    judgement=True, basis="nine runs in ten, beside the plan's own sizing", used_for="the GPUs for 90% odds", fmt="pct",
    workload="training")
RELAX_TARGET_MULTIPLE = assume(
    "RELAX_TARGET_MULTIPLE", 1.5, "x the fastest", "Relaxed latency target tried when the fastest figure itself "
    "does not hold at the plan's load", judgement=True,
    basis="the fastest figure is one request at a time; at the plan's load half as slow again leaves room to batch",
    used_for="the fix that relaxes a missed latency target", workload="serving")
MOE_PARAMS_RATIO = assume(
    "MOE_PARAMS_RATIO", 1.05, "ratio", "Total over active parameters above which a model counts as "
    "mixture of experts", judgement=True, basis="more than 5% of the parameters idle per token",
    used_for="the efficiency fit's mixture-of-experts term", workload="training")
MOE_WIDE_DOMAIN_GPUS = assume(
    "MOE_WIDE_DOMAIN_GPUS", 16, "GPUs", "Scale-up domain below which a mixture of experts exchanges its tokens "
    "over the network", judgement=True,
    basis="an 8-GPU server sends expert traffic over the scale-out network; GB200/GB300 NVL72 hold 72 GPUs",
    used_for="the efficiency fit's wide-expert-parallelism penalty", workload="training")

# --- findings and fixes ---------------------------------------------------------------------------

LONG_RUN_DAYS = assume(
    "LONG_RUN_DAYS", 7.0, "days", "A training run longer than this is long", judgement=True,
    sources=("arxiv-2407.21783",), basis="Llama 3 saw about 8 interruptions a day on 16k GPUs",
    used_for="the single-point-of-failure finding", workload="training")
CHECKPOINT_FACTOR = assume(
    "CHECKPOINT_FACTOR", 2.0, "times", "Checkpoint interval this far from the optimum is flagged",
    judgement=True, sources=("doi-10.1145-361147.361115",),
    basis="the time lost rises about 25% at twice or half the Young/Daly optimum",
    used_for="the checkpoint interval finding", workload="training")
STALE_AFTER_DAYS = assume(
    "STALE_AFTER_DAYS", 365, "days", "A price or specification older than this is flagged", judgement=True,
    basis="a year: GPU prices move within months", used_for="the stale price and specification findings")
ABSURD_DAYS = assume(
    "ABSURD_DAYS", 3652.5, "days", "A training run longer than this is not a plan", judgement=True,
    basis="ten years", used_for="the duration finding", workload="training")
TARGET_DAYS = assume(
    "TARGET_DAYS", 90.0, "days", "Time a run given as a GPU count is re-sized to when it would take years",
    judgement=True, sources=("arxiv-2407.21783",),
    basis="a quarter; the longest published pretraining snapshot, Llama 3 405B, ran 54 days",
    used_for="the one-click fix", workload="training")
FIX_MEMORY_HEADROOM = assume(
    "FIX_MEMORY_HEADROOM", 0.90, "of usable GPU memory", "Most of the usable GPU memory a suggested fix may fill",
    judgement=True, sources=("arxiv-1910.02054",),
    basis="a fix that lands at 99% of usable memory fails on the first longer sequence or a fragmented allocator; "
          "ZeRO saw runs out of memory with over 30% still free from fragmentation in extreme cases (§3.2); "
          "the usable share covers the usual case, this keeps a tenth of it spare",
    used_for="the one-click fixes: a fix that would fill more of the usable memory is not offered", fmt="pct")
LARGEST_PUBLISHED_GPUS = assume(
    "LARGEST_PUBLISHED_GPUS", 16_384, "GPUs", "Largest published training cluster",
    sources=("arxiv-2407.21783",), basis="Llama 3 405B on 16,384 H100 GPUs",
    used_for="the fix of an out-of-reach deadline", workload="training")

# --- cost -----------------------------------------------------------------------------------------

NETWORK_COST_FRACTION = assume(
    "NETWORK_COST_FRACTION", 0.19, "of the cluster's cost", "Interconnect share of a cluster's cost",
    sources=("epoch-training-cost-trends",),
    basis="Epoch AI's model of the cost of training frontier models puts the interconnect between servers at 19% of "
          "the cluster's hardware cost",
    used_for="the network's capex of a plan whose servers a fabric joins and that gives no share of its own "
             "(one server or rack with no fabric switches: none)", fmt="pct")
SPOT_CHECKPOINT_MIN_DEFAULT = assume(
    "SPOT_CHECKPOINT_MIN_DEFAULT", 30.0, "min", "Checkpoint interval of a spot job without one", judgement=True,
    basis="the order of the Young/Daly optimum of the example plans", used_for="work lost to spot reclaims",
    workload="training")
STAFF_GPUS_PER_SERVER = assume(
    "STAFF_GPUS_PER_SERVER", 8, "GPUs", "GPUs of a server in the staffing rule", judgement=True,
    basis="the rule '1 engineer per 50-100 GPU servers' counts the common 8-GPU machines, so a 72-GPU rack "
          "counts as nine", used_for="staff cost of owning")

CAPACITY_RISK_GPUS = assume(
    "CAPACITY_RISK_GPUS", 512, "GPUs", "Largest on-demand or spot fleet taken to be obtainable without a reservation",
    sources=("aws-ec2-capacity-blocks-guide",),
    basis="AWS sells guaranteed short-term GPU capacity as Capacity Blocks of at most 64 instances (512 GPUs of "
          "8-GPU instances) and recommends them because on-demand GPU capacity is scarce; a larger fleet rented "
          "on demand or on spot may not be there when it is needed, so it needs a reservation or a capacity block",
    used_for="the options explorer's capacity-risk column and the capacity-risk finding")
SCALE_OUT_MIN_GPUS_PER_INSTANCE = assume(
    "SCALE_OUT_MIN_GPUS_PER_INSTANCE", 4, "GPUs per instance",
    "Smallest cloud instance taken to have a scale-out fabric",
    judgement=True,
    basis="clouds attach their GPU fabric (AWS EFA, Azure and Oracle InfiniBand, GCP GPUDirect) to the 4- and 8-GPU "
          "sizes; a 1-GPU VM such as Azure NC H100 v5, or an offer the catalog lists per GPU, is not known to have "
          "one, so a multi-instance training run is not offered on it",
    used_for="the options explorer: multi-instance training on instances without a scale-out fabric is excluded")


def constants(kind: str | None = None) -> list[Assumption]:
    """The constants of the registry, sourced figures first, then the judgements: every one, or (``kind``, a
    plan's workload kind) those that apply to its plans (serving for "inference", training for the others)."""
    workload = None if kind is None else "serving" if kind == "inference" else "training"
    return sorted((a for a in REGISTRY.values() if workload is None or a.workload in ("", workload)),
                  key=lambda a: (a.judgement, a.label))
