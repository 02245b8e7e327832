"""Step 1: what the model needs (parameters, memory, FLOPs, time, inference).

Modules: :mod:`.params` (parameter counts and FLOPs), :mod:`.memory` (training memory per GPU),
:mod:`.compute` (time and GPU counts), :mod:`.inference` (KV cache, continuous batching, latency),
:mod:`.serving` (the serving engine and one plan's load), :mod:`.calibration` (published runs and the
vectorised plan table) and :mod:`.step` (the pipeline step). The formula functions are
vectorised: every numeric argument may be a scalar or a numpy array (they broadcast), so the
same code serves one plan and a sweep of a million layouts. Units are in the names (``_gb`` =
10^9 bytes, ``_s``, ``_h``, ``_days``; ``_bytes`` = bytes).

Pipeline entry points: :func:`describe` (``result['model']`` and, for training,
``compute.total_flops`` and a first ``cluster.gpus``) and :func:`step` (``memory``,
``compute``, ``inference``). :func:`training_memory` is the vectorised memory model the cluster
step's layout search calls; :func:`training_table` evaluates a DataFrame of plans at once;
:func:`plan_mfu` is the calibrated MFU, per-step fixed costs included (:mod:`.efficiency`).
"""

from .compute import gpu_hours, gpus_for_deadline, peak_flops_per_s, wall_clock_days
from .efficiency import (
    FIT_PUBLISHED_BEFORE,
    band_factors,
    measured_in_fit,
    overhead_factor,
    plan_mfu,
    plan_overhead,
    plan_step,
    published_runs,
    scaling_limit_gpus,
    steady_mfu_bf16,
)
from .inference import (
    experts_touched,
    kv_batch_limit,
    kv_cache_bytes_per_token,
    kv_cache_gb,
    kv_capacity_gb,
    kv_shard_fraction,
    mean_sequence_tokens,
    prefill_wait_s,
    requests_in_flight,
    wait_quantile_s,
)
from .memory import (
    activation_bytes_per_element,
    activation_bytes_per_layer,
    activation_extra_bytes,
    activation_gb,
    checkpoint_weight_bytes_per_param,
    finetune_split,
    gradient_bytes_per_param,
    microbatches_in_flight,
    model_state_gb,
    optimizer_bytes_per_param,
    pipeline_divisor,
    qlora_base_bytes_per_param,
    resumable_checkpoint_bytes_per_param,
    rule_of_thumb_gb,
    stage_layers,
    training_memory,
    usable_memory_gb,
    weight_bytes_per_param,
    zero_model_state_gb,
)
from .params import (
    RECOMPUTE_CODES,
    RECOMPUTE_NAMES,
    attended_tokens,
    attention_flops_per_token_fwd,
    attention_params,
    block_gpus,
    chinchilla_tokens,
    embedding_params,
    hardware_flops_per_token,
    head_dims,
    inference_flops_per_token,
    local_layer_fraction,
    lora_params,
    memo_by_server_block,
    mla_attention_params,
    mlp_params,
    model_attention_flops_fwd,
    model_param_counts,
    moe_layer_count,
    norm_params,
    plan_memo,
    plan_param_counts,
    recompute_code,
    server_block,
    training_flops_per_token,
    value_or,
)
from .serving import layout_degrees, layout_explained, layout_legend, layout_words, serve_plan, serving_capacity
from .step import deadline_gpus_at_goodput, describe, first_gpus, mfu_band, step, weight_grad_fraction
from .table import training_table

__all__ = sorted(name for name in dir() if not name.startswith("_"))
