"""Step 1: what the model needs (parameters, memory, FLOPs, time, inference).

The formula functions below are vectorised: every numeric argument may be a
scalar or a numpy array (they broadcast), so the same code serves one plan and
a sweep of a million layouts. Units are in the names (``_gb`` = 10^9 bytes,
``_s``, ``_h``, ``_days``; ``_bytes`` = bytes). Sources are named by their IDs
in ``shared/reference`` (S.., A.., M.., K.., Z..) with their status.

Pipeline entry points: :func:`describe` (``result['model']`` and, for training,
``compute.total_flops``/``compute.gpus``) and :func:`step` (``memory``,
``compute``, ``inference``). :func:`training_memory` is the vectorised memory
model the cluster step's layout search calls; :func:`training_table` evaluates
a DataFrame of plans at once; :func:`calibration_table` compares predicted with
published GPU-hours.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .units import (BITS_PER_BYTE, BYTES_PER_ELEMENT, BYTES_PER_GB, CHINCHILLA_TOKENS_PER_PARAM,
                    DECODE_MEMORY_BW_FRACTION, FLOPS_PER_TFLOPS, HOURS_PER_DAY,
                    MASTER_WEIGHT_BYTES_PER_PARAM, NF4_BITS_PER_PARAM,
                    NF4_DOUBLE_QUANT_OVERHEAD_BITS_PER_PARAM, OPTIMIZER_BYTES_PER_PARAM,
                    RULE_OF_THUMB_BYTES_PER_PARAM, S_PER_DAY, S_PER_HOUR, TF32_TO_BF16_PEAK_RATIO)

#: activation recomputation codes used by the vectorised functions
RECOMPUTE_CODES = {"none": 0, "selective": 1, "full": 2}
#: plan precision -> code (vectorised tables)
PRECISION_CODES = {"fp32": 0, "fp16": 1, "bf16": 2, "fp8": 3}

RULE_OF_THUMB_NOTE = ("The seed rule counts 8 bytes/param (2-byte weights x 4); mixed-precision Adam "
                      "holds 16 bytes/param (2 weights + 2 gradients + 12 fp32 master/momentum/variance, "
                      "ZeRO S18 §3.1) or 18 with fp32 gradients, before activations, and sharding "
                      "(ZeRO/TP/PP) then divides it across GPUs.")


# =============================================================================
# Parameters
# =============================================================================


def attention_params(hidden, heads, kv_heads, head_dim, qkv_bias=False, out_bias=False):
    """Parameters of one multi-head / grouped-query / multi-query attention block.

    .. math:: h\\,a d + 2 h\\,k d + a d\\,h \\; (+\\,a d + 2 k d \\text{ QKV bias}) (+\\,h \\text{ out bias})

    Parameters
    ----------
    hidden : numeric
        model width h [-].
    heads, kv_heads : numeric
        query heads a and key/value heads k (k = a: MHA, 1: MQA) [-].
    head_dim : numeric
        per-head width d [-].
    qkv_bias, out_bias : bool or array of bool
        whether the QKV / output projections carry biases.

    Returns
    -------
    numeric
        parameters [-].

    References
    ----------
    .. [1] HF config.json of each model (Llama 2/3, Mistral, Qwen2.5) as transcribed in
       models_and_hardware.md §1 (params_derived_from_config, DERIVED): q/k/v/o projections,
       GQA shares K/V across a/k query heads (Ainslie et al. 2023, arXiv:2305.13245).
    """
    q, kv = heads * head_dim, kv_heads * head_dim
    return (hidden * (q + 2 * kv) + q * hidden + np.where(qkv_bias, q + 2 * kv, 0)
            + np.where(out_bias, hidden, 0))


def mla_attention_params(hidden, heads, q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
                         v_head_dim):
    """Parameters of one multi-head latent attention (MLA) block, incl. its two RMSNorms.

    .. math:: h r_q + r_q + r_q a (d_n + d_r) + h (r_{kv} + d_r) + r_{kv}
              + r_{kv} a (d_n + d_v) + a d_v h

    (``q_lora_rank`` 0 means a plain query projection ``h a (d_n + d_r)``.)

    Parameters
    ----------
    hidden, heads : numeric
        model width h and heads a [-].
    q_lora_rank, kv_lora_rank : numeric
        query and key/value down-projection ranks r_q, r_kv [-].
    qk_nope_head_dim, qk_rope_head_dim, v_head_dim : numeric
        per-head widths d_n, d_r, d_v [-].

    Returns
    -------
    numeric
        parameters [-].

    References
    ----------
    .. [1] DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", arXiv:2412.19437 §2.1.1; code
       deepseek-ai/DeepSeek-V3@9b4e978 inference/model.py class MLA (wq_a, q_norm, wq_b, wkv_a,
       kv_norm, wkv_b, wo) and configs/config_671B.json. Source S10, CONFIRMED
       (models_and_hardware.md §1 row DeepSeek-V3).
    """
    qk = qk_nope_head_dim + qk_rope_head_dim
    q = np.where(q_lora_rank > 0, hidden * q_lora_rank + q_lora_rank + q_lora_rank * heads * qk,
                 hidden * heads * qk)
    kv = hidden * (kv_lora_rank + qk_rope_head_dim) + kv_lora_rank + kv_lora_rank * heads * (
        qk_nope_head_dim + v_head_dim)
    return q + kv + heads * v_head_dim * hidden


def mlp_params(hidden, ffn_hidden, gated=True, bias=False):
    """Parameters of one MLP: gated (SwiGLU: gate, up, down) or plain (up, down).

    Parameters
    ----------
    hidden, ffn_hidden : numeric
        model width h and MLP inner width f [-].
    gated, bias : bool or array of bool

    Returns
    -------
    numeric
        ``3hf`` (gated) or ``2hf`` (plain), plus ``2f+h`` / ``f+h`` biases [-].

    References
    ----------
    .. [1] Shazeer 2020, "GLU Variants Improve Transformer", arXiv:2002.05202; Llama configs in
       models_and_hardware.md §1 (DERIVED counts). GPT-3 MLP 4h with biases: S01 §2.1 and the
       ``12Lh^2 + 13Lh`` count of memory_and_compute.md §4 (DERIVED).
    """
    mats = np.where(gated, 3, 2)
    return mats * hidden * ffn_hidden + np.where(bias, np.where(gated, 2, 1) * ffn_hidden + hidden, 0)


def norm_params(hidden, layernorm=False):
    """Parameters of one normalisation layer: RMSNorm h (scale), LayerNorm 2h (scale + bias).

    Parameters
    ----------
    hidden : numeric
        width h [-].
    layernorm : bool or array of bool
        LayerNorm (True) or RMSNorm (False).

    Returns
    -------
    numeric
        parameters [-].

    References
    ----------
    .. [1] Zhang & Sennrich 2019, RMSNorm, arXiv:1910.07467; Ba et al. 2016, LayerNorm,
       arXiv:1607.06450; counts as in models_and_hardware.md §1 (DERIVED).
    """
    return np.where(layernorm, 2, 1) * hidden


def embedding_params(vocab, hidden, tied_embeddings=False, max_position=0):
    """Token embedding (+ untied LM head) + learned position table.

    Parameters
    ----------
    vocab, hidden : numeric
        vocabulary v and width h [-].
    tied_embeddings : bool
        LM head shares the embedding matrix.
    max_position : numeric
        learned position rows (0 for RoPE/ALiBi) [-].

    Returns
    -------
    numeric
        ``v h (1 or 2) + max_position h`` [-].

    References
    ----------
    .. [1] models_and_hardware.md §1 (DERIVED counts, "untied LM head unless noted"); GPT-3
       ``(50257 + 2048) h`` in memory_and_compute.md §4 (S01, DERIVED).
    """
    return vocab * hidden * np.where(tied_embeddings, 1, 2) + max_position * hidden


def _opt(value, default=0):
    return default if value is None else value


def model_param_counts(model, final_norm: bool = True) -> dict[str, int]:
    """Parameter counts of a catalog :class:`~aiplan.catalog.Model` from its architecture.

    Embeddings + ``dense_layers`` x (attention + MLP + 2 norms) + MoE layers x (attention + routed
    and shared experts + router + 2 norms) + final norm. MoE "active" counts the shared experts and
    ``active_experts`` routed experts per token (router and embeddings included).

    Parameters
    ----------
    model : Model
        architecture record.
    final_norm : bool
        count the final norm (every catalog model has one; the GPT-3 formula of
        memory_and_compute.md §4 omits its 2h = 24,576 parameters).

    Returns
    -------
    dict
        ``params``, ``active_params``, ``params_embedding``, ``params_experts`` (routed expert
        weights, the part expert parallelism shards), ``params_layer_linear`` (weights of the
        per-layer linear projections, what QLoRA quantises) [-].

    References
    ----------
    .. [1] models_and_hardware.md §1 params_derived_from_config (DERIVED from HF config.json):
       Llama 2 7B 6,738,415,616; Llama 3.1 8B 8,030,261,248; Mixtral 8x7B 46,702,792,704 total /
       12,879,925,248 active (S22). DeepSeek-V3 671B total / 37B active (S10 Table 1, CONFIRMED).
       GPT-3 12Lh^2 + 13Lh + (50257 + 2048)h = 174,604,234,752 (S01, memory_and_compute.md §4).
    """
    m = model
    h, L = m.hidden, m.layers
    layernorm = m.norm == "layernorm"
    head_dim = m.head_dim or h // m.heads
    if m.attention == "mla":
        attn = mla_attention_params(h, m.heads, _opt(m.q_lora_rank), m.kv_lora_rank,
                                    _opt(m.qk_nope_head_dim, head_dim - _opt(m.qk_rope_head_dim)),
                                    m.qk_rope_head_dim, _opt(m.v_head_dim, head_dim))
        attn_linear = attn - _opt(m.q_lora_rank) - m.kv_lora_rank
    else:
        attn = attention_params(h, m.heads, m.kv_heads, head_dim, m.qkv_bias, m.mlp_bias)
        attn_linear = attention_params(h, m.heads, m.kv_heads, head_dim)
    norms = 2 * norm_params(h, layernorm)
    dense_mlp = mlp_params(h, m.ffn_hidden, m.gated_mlp, m.mlp_bias)
    moe = m.experts > 1
    n_dense = _opt(m.dense_layers) if moe else L
    n_moe = L - n_dense
    expert_mlp = mlp_params(h, m.moe_ffn_hidden or m.ffn_hidden, m.gated_mlp, m.mlp_bias)
    router = m.experts * h if moe else 0
    dense_layer = attn + dense_mlp + norms
    moe_layer = attn + (m.experts + m.shared_experts) * expert_mlp + router + norms
    moe_active = attn + (m.active_experts + m.shared_experts) * expert_mlp + router + norms
    emb = embedding_params(m.vocab, h, m.tied_embeddings, _opt(m.max_position) if m.position == "learned" else 0)
    tail = emb + (norm_params(h, layernorm) if final_norm else 0)
    linear = (n_dense * (attn_linear + mlp_params(h, m.ffn_hidden, m.gated_mlp))
              + n_moe * (attn_linear + (m.experts + m.shared_experts) * mlp_params(h, m.moe_ffn_hidden or m.ffn_hidden,
                                                                                   m.gated_mlp)))
    return {
        "params": int(tail + n_dense * dense_layer + n_moe * moe_layer),
        "active_params": int(tail + n_dense * dense_layer + n_moe * moe_active),
        "params_embedding": int(emb),
        "params_experts": int(n_moe * m.experts * expert_mlp),
        "params_layer_linear": int(linear),
    }


def plan_param_counts(plan) -> dict[str, float]:
    """:func:`model_param_counts` for a plan; a model mapping's ``params`` overrides the total.

    When the plan gives ``model: {params: ...}`` (plan-contract.md), that count is the total and the
    other counts are scaled by ``params / derived total``; the source is reported in
    ``params_source`` ("plan" or "architecture").
    """
    counts = dict(model_param_counts(plan.model))
    given = plan.data["model"].get("params") if isinstance(plan.data["model"], dict) else None
    counts["params_source"] = "architecture"
    if given:
        scale = given / counts["params"]
        counts = {k: v * scale for k, v in counts.items() if k != "params_source"}
        counts["params"] = float(given)
        counts["params_source"] = "plan"
    return counts


def lora_params(layers, hidden, rank, q_out, kv_out, attn_out_in, ffn_hidden, targets, experts=1):
    """Trainable LoRA adapter parameters: ``r (d_in + d_out)`` per adapted matrix per layer.

    Parameters
    ----------
    layers, hidden, rank : numeric
        L, h and the LoRA rank r [-].
    q_out, kv_out : numeric
        output widths of the query and of each key/value projection [-].
    attn_out_in : numeric
        input width of the attention output projection (heads x v head dim) [-].
    ffn_hidden : numeric
        MLP inner width (per expert for MoE) [-].
    targets : sequence of str
        adapted matrices among q, k, v, o, gate, up, down.
    experts : numeric
        MLP copies per layer that get adapters (routed + shared experts for MoE) [-].

    Returns
    -------
    numeric
        adapter parameters [-].

    References
    ----------
    .. [1] Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models",
       arXiv:2106.09685 §4 (W + BA with B in R^{d x r}, A in R^{r x k}: r(d + k) parameters).
    """
    dims = {"q": (hidden, q_out), "k": (hidden, kv_out), "v": (hidden, kv_out), "o": (attn_out_in, hidden),
            "gate": (hidden, ffn_hidden), "up": (hidden, ffn_hidden), "down": (ffn_hidden, hidden)}
    total = 0
    for t in targets:
        d_in, d_out = dims[t]
        total = total + rank * (d_in + d_out) * (experts if t in ("gate", "up", "down") else 1)
    return layers * total


# =============================================================================
# FLOPs
# =============================================================================


def attention_flops_per_token_fwd(layers, seq_len, heads, qk_head_dim, v_head_dim, sliding_window=None):
    """Forward FLOPs per token of the attention score and value matmuls (QK^T and AV).

    .. math:: 2\\,L\\,s\\,a\\,(d_{qk} + d_v)  \\quad (= 4 L s h \\text{ for } a d = h)

    Counted over the full (not causal-halved) sequence, as Korthikanti et al. and PaLM do;
    ``sliding_window`` caps the attended length.

    Parameters
    ----------
    layers, seq_len, heads : numeric
        L, sequence length s [tokens], query heads a.
    qk_head_dim, v_head_dim : numeric
        per-head query/key and value widths [-].
    sliding_window : numeric or None
        attention window [tokens].

    Returns
    -------
    numeric
        [FLOP/token].

    References
    ----------
    .. [1] Korthikanti et al. 2022, arXiv:2205.05198 App. A, Eq. 7: the ``s/(6h)`` term,
       ``72 B L s h^2 x s/(6h) = 12 B L s^2 h`` = 3 x (this) per training token. Source S19,
       CONFIRMED (memory_and_compute.md §2 row K10). Chowdhery et al. 2022 (PaLM, S14) App. B:
       ``6N + 12 L H Q T``.
    """
    s = seq_len if sliding_window is None else np.minimum(seq_len, sliding_window)
    return 2.0 * layers * s * heads * (qk_head_dim + v_head_dim)


def training_flops_per_token(active_params, attention_flops_fwd):
    """Model FLOPs per training token: ``6N`` (forward 2N + backward 4N) + 3 x attention forward.

    Parameters
    ----------
    active_params : numeric
        parameters a token passes through, N [-].
    attention_flops_fwd : numeric
        :func:`attention_flops_per_token_fwd` [FLOP/token].

    Returns
    -------
    numeric
        [FLOP/token].

    References
    ----------
    .. [1] Transformer Math 101 (S20) M01 ``C = 6PD``, CORROBORATED; Korthikanti et al. 2022 (S19)
       App. A Eq. 7 ``72BLsh^2 (1 + s/(6h) + v/(12hL))``, CONFIRMED (memory_and_compute.md §4).
    """
    return 6.0 * active_params + 3.0 * attention_flops_fwd


def hardware_flops_per_token(active_params, attention_flops_fwd, recompute):
    """Hardware FLOPs per training token, counting recomputation.

    none: the model FLOPs; selective: + the attention term again (Eq. 8, ``s/(3h)`` instead of
    ``s/(6h)``); full: + one more forward pass (2N + attention forward), i.e. 4/3 x model FLOPs
    (8N + 16Lsh).

    Parameters
    ----------
    active_params, attention_flops_fwd : numeric
        as :func:`training_flops_per_token`.
    recompute : str or int array
        ``none``/``selective``/``full`` or codes 0/1/2.

    Returns
    -------
    numeric
        [FLOP/token].

    References
    ----------
    .. [1] Korthikanti et al. 2022 (S19) App. A Eq. 8 (selective) and §5/Table 4 (full
       recompute repeats the forward pass), CONFIRMED (memory_and_compute.md §2 rows K10, K11);
       Transformer Math 101 (S20) M02 ``2PD <= C_forward <= 4PD``.
    """
    code = recompute_code(recompute)
    model = training_flops_per_token(active_params, attention_flops_fwd)
    extra = np.select([code == 1, code == 2], [3.0 * attention_flops_fwd, 2.0 * active_params + attention_flops_fwd], 0.0)
    return model + extra


def inference_flops_per_token(active_params):
    """Forward FLOPs per generated or prefilled token, ``2N`` (attention excluded).

    Parameters
    ----------
    active_params : numeric
        parameters a token passes through, N [-].

    Returns
    -------
    numeric
        [FLOP/token].

    References
    ----------
    .. [1] Transformer Math 101 (S20) M01 ``C_forward ~ 2PD``, CORROBORATED.
    """
    return 2.0 * active_params


def chinchilla_tokens(params):
    """Compute-optimal training tokens, 20 per parameter.

    Parameters
    ----------
    params : numeric
        parameters P [-].

    Returns
    -------
    numeric
        D = 20 P [tokens].

    References
    ----------
    .. [1] Hoffmann et al. 2022, "Training Compute-Optimal Large Language Models",
       arXiv:2203.15556; Transformer Math 101 (S20) M03 ``D = 20P``, CORROBORATED.
    """
    return CHINCHILLA_TOKENS_PER_PARAM * params


# =============================================================================
# Training memory: model states (ZeRO), activations (Korthikanti)
# =============================================================================


def recompute_code(recompute):
    """``none``/``selective``/``full`` (or codes 0/1/2, scalar or array) -> int array of codes."""
    if isinstance(recompute, str):
        return np.asarray(RECOMPUTE_CODES[recompute])
    arr = np.asarray(recompute)
    if arr.dtype.kind in "OUS":
        return pd.Series(arr.ravel()).map(RECOMPUTE_CODES).to_numpy(dtype=int).reshape(arr.shape)
    return arr.astype(int)


def weight_bytes_per_param(precision):
    """Bytes per parameter of the training weights: fp32 4, fp16/bf16 2, fp8 1.

    fp8 assumes FP8 weights for the GEMMs (e.g. Transformer Engine ``fp8_model_init``), with the
    fp32 master copy in the optimizer state (JUDGEMENT; recipes that keep bf16 weights need 2).

    Parameters
    ----------
    precision : str
        fp32 | fp16 | bf16 | fp8.

    Returns
    -------
    float
        [B/param].

    References
    ----------
    .. [1] Transformer Math 101 (S20) M07: pure fp32 4 B/param, fp16 2, mixed precision 2 B/param
       (the fp32 copy is counted in the optimizer), CORROBORATED.
    """
    return BYTES_PER_ELEMENT[precision]


def gradient_bytes_per_param(precision):
    """Bytes per parameter of the gradients: fp32 4, fp16/bf16 2, fp8 2 (bf16 gradients).

    Parameters
    ----------
    precision : str
        fp32 | fp16 | bf16 | fp8.

    Returns
    -------
    float
        [B/param].

    References
    ----------
    .. [1] Transformer Math 101 (S20) M09: fp32 4 B/param, fp16 2 B/param ("usually matches the
       model dtype"), CORROBORATED; ZeRO (S18) §3.1 fp16 gradients 2 Psi, CONFIRMED.
    """
    return max(BYTES_PER_ELEMENT[precision], 2.0)


def optimizer_bytes_per_param(optimizer, precision="bf16", hidden=4096):
    """Optimizer-state bytes per trainable parameter, incl. the fp32 master copy.

    adamw 12 (master 4 + momentum 4 + variance 4), adamw-8bit 6 (4 + 1 + 1), sgd 8 (4 + 4),
    adafactor 4 + factored second moment ``4 (m + n) / (m n) ~ 8 / h`` (row and column statistics of
    an m x n matrix, no first moment). Pure fp32 training needs no separate master copy (-4).

    Parameters
    ----------
    optimizer : str
        adamw | adamw-8bit | sgd | adafactor.
    precision : str
        training precision (fp32 drops the master copy).
    hidden : numeric
        model width, for Adafactor's factored statistics [-].

    Returns
    -------
    numeric
        [B/param].

    References
    ----------
    .. [1] Transformer Math 101 (S20) M08, CORROBORATED; ZeRO (S18) §3.1 K = 12, CONFIRMED.
    .. [2] Shazeer & Stern 2018, "Adafactor: Adaptive Learning Rates with Sublinear Memory Cost",
       arXiv:1804.04235 §3 (factored second moment) and §4 (beta1 = 0: no momentum).
    """
    state = OPTIMIZER_BYTES_PER_PARAM[optimizer]
    if optimizer == "adafactor":
        state = state + 8.0 / hidden
    return state - (MASTER_WEIGHT_BYTES_PER_PARAM if precision == "fp32" else 0.0)


def model_state_gb(trainable_params, frozen_weight_bytes, weight_bytes_per_param, gradient_bytes_per_param,
                   optimizer_bytes_per_param, model_parallel, data_parallel, zero_stage):
    """Per-GPU weights, gradients and optimizer state under model parallelism and ZeRO.

    The model is first split over ``model_parallel`` = TP x PP (x EP for routed experts) GPUs;
    ZeRO then partitions over the data-parallel degree N_d: stage 1 the optimizer state, stage 2
    also the gradients, stage 3 (FSDP full shard) also the weights (frozen weights included).

    Parameters
    ----------
    trainable_params : numeric
        parameters with gradients and optimizer state [-].
    frozen_weight_bytes : numeric
        bytes of frozen weights (LoRA/QLoRA base) [B].
    weight_bytes_per_param, gradient_bytes_per_param, optimizer_bytes_per_param : numeric
        [B/param].
    model_parallel, data_parallel, zero_stage : numeric
        TP x PP (x EP), N_d, ZeRO stage 0-3.

    Returns
    -------
    tuple of numeric
        weights, gradients, optimizer state per GPU [GB].

    References
    ----------
    .. [1] Rajbhandari et al. 2019, "ZeRO: Memory Optimizations Toward Training Trillion
       Parameter Models", arXiv:1910.02054 §5.1-5.3, Fig. 1: (2 + 2 + K) Psi, 4 Psi + K Psi/N_d,
       2 Psi + 14 Psi/N_d, 16 Psi/N_d. Source S18, CONFIRMED (memory_and_compute.md §1 Z01-Z04).
    .. [2] Transformer Math 101 (S20) M12-M17 (TP/PP divide the model), CORROBORATED.
    """
    zero_stage = np.asarray(zero_stage)
    dp = np.maximum(data_parallel, 1)
    n = trainable_params / model_parallel
    weights = (n * weight_bytes_per_param + frozen_weight_bytes / model_parallel) / np.where(zero_stage >= 3, dp, 1)
    grads = n * gradient_bytes_per_param / np.where(zero_stage >= 2, dp, 1)
    opt = n * optimizer_bytes_per_param / np.where(zero_stage >= 1, dp, 1)
    return weights / BYTES_PER_GB, grads / BYTES_PER_GB, opt / BYTES_PER_GB


def zero_model_state_gb(n_params, data_parallel, zero_stage, k=12.0):
    """ZeRO per-device model-state memory, mixed-precision Adam (fp16 weights and gradients).

    .. math:: (2 + 2 + K)\\Psi,\\; 4\\Psi + K\\Psi/N_d,\\; 2\\Psi + (2+K)\\Psi/N_d,\\; (2+2+K)\\Psi/N_d

    Parameters
    ----------
    n_params : numeric
        Psi [-].
    data_parallel : numeric
        N_d [-].
    zero_stage : numeric
        0 (baseline DP), 1 (P_os), 2 (P_os+g), 3 (P_os+g+p).
    k : numeric
        optimizer bytes per parameter K [B/param].

    Returns
    -------
    numeric
        [GB per device].

    References
    ----------
    .. [1] Rajbhandari et al. 2019, arXiv:1910.02054 §5.1-5.3, Fig. 1 (Psi = 7.5B, K = 12,
       N_d = 64: 120 / 31.4 / 16.6 / 1.9 GB). Source S18, CONFIRMED (memory_and_compute.md §1).
    """
    w, g, o = model_state_gb(n_params, 0.0, 2.0, 2.0, k, 1, data_parallel, zero_stage)
    return w + g + o


def activation_bytes_per_layer(seq_len, micro_batch, hidden, heads, tensor_parallel=1, sequence_parallel=False,
                               recompute=0, flash_attention=False):
    """Activation memory of one transformer layer for one micro-batch (16-bit activations).

    ========================  =====================================  ==========================
    recompute                 tensor parallel (no SP)                TP + sequence parallel
    ========================  =====================================  ==========================
    none (Eq. 1, 2, 4)        ``sbh(10 + 24/t + 5as/(ht))``          ``sbh/t (34 + 5as/h)``
    selective (Table 2)       ``sbh(10 + 24/t)``                     ``34 sbh/t``
    full (Table 2)            ``2 sbh``                              ``2 sbh``
    ========================  =====================================  ==========================

    Flash attention stores no ``s x s`` score matrix, so it removes the ``5as/h`` term (the same
    saving as selective recompute). Full recompute keeps only the layer input, ``2sbh`` as in
    Table 2 (the paper notes ``2sbh/t`` is possible if that input is also SP-sharded).

    Parameters
    ----------
    seq_len, micro_batch, hidden, heads : numeric
        s [tokens], b [sequences], h, a.
    tensor_parallel : numeric
        t.
    sequence_parallel, flash_attention : bool or array
    recompute : str or int array
        none/selective/full or 0/1/2.

    Returns
    -------
    numeric
        [B].

    References
    ----------
    .. [1] Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
       Models", arXiv:2205.05198 §4.1-4.2 Eqs. 1, 2, 4 and Table 2. Source S19, CONFIRMED
       (memory_and_compute.md §2 rows K01-K07; worked GPT-3 175B examples).
    .. [2] Dao et al. 2022, "FlashAttention", arXiv:2205.14135 (no materialised attention matrix).
    """
    code = recompute_code(recompute)
    t = tensor_parallel
    sbh = 1.0 * seq_len * micro_batch * hidden
    score = np.where(flash_attention, 0.0, 5.0 * heads * seq_len / hidden)
    sp = np.asarray(sequence_parallel) & (np.asarray(t) > 1)
    none = np.where(sp, (34.0 + score) / t, 10.0 + 24.0 / t + score / t)
    selective = np.where(sp, 34.0 / t, 10.0 + 24.0 / t)
    coeff = np.select([code == 0, code == 1], [none, selective], 2.0)
    return sbh * coeff


def activation_extra_bytes(seq_len, micro_batch, hidden, vocab, tensor_parallel=1, pipeline_parallel=1):
    """Embedding, dropout and output-layer activations outside the layers, first stage.

    .. math:: \\frac{sbh}{t}\\,\\bigl(p + \\delta_{p=1}\\,4\\,(1 + v/h)\\bigr)

    Parameters
    ----------
    seq_len, micro_batch, hidden, vocab : numeric
        s [tokens], b [sequences], h, v.
    tensor_parallel, pipeline_parallel : numeric
        t, p.

    Returns
    -------
    numeric
        [B].

    References
    ----------
    .. [1] Korthikanti et al. 2022 (S19) §4.3 (memory_and_compute.md §2 row K04b), CONFIRMED.
    """
    sbh = 1.0 * seq_len * micro_batch * hidden
    p = pipeline_parallel
    return sbh / tensor_parallel * (p + np.where(np.asarray(p) == 1, 4.0 * (1.0 + vocab / hidden), 0.0))


def microbatches_in_flight(pipeline_parallel, global_batch_tokens, seq_len, micro_batch, data_parallel):
    """Micro-batches whose activations the first pipeline stage holds under 1F1B: min(p, m).

    m = global batch / (micro-batch x data parallel) micro-batches per step.

    Parameters
    ----------
    pipeline_parallel : numeric
        p [stages].
    global_batch_tokens : numeric
        tokens per optimizer step [tokens].
    seq_len, micro_batch, data_parallel : numeric
        [tokens], [sequences], N_d.

    Returns
    -------
    numeric
        micro-batches in flight on the first stage [-].

    References
    ----------
    .. [1] Korthikanti et al. 2022 (S19) §4.2.3, Eq. 5: "p micro-batches in flight", CONFIRMED
       (memory_and_compute.md §2 row K04); Narayanan et al. 2021 (PipeDream-Flush / 1F1B).
    """
    m = np.ceil(global_batch_tokens / (seq_len * micro_batch * np.maximum(data_parallel, 1)))
    return np.maximum(np.minimum(pipeline_parallel, m), 1)


def activation_gb(seq_len, micro_batch, hidden, heads, layers, vocab, tensor_parallel=1, pipeline_parallel=1,
                  sequence_parallel=False, recompute=0, flash_attention=False, in_flight=None,
                  bytes_per_element=2.0):
    """Activation memory per GPU of the first pipeline stage [GB].

    ``per layer x (L/p layers) x in-flight micro-batches + extra``; with ``p`` micro-batches in
    flight this is the paper's ``L`` layers' worth (Eq. 5). Scaled by ``bytes_per_element / 2``
    (fp32 activations double it).

    Parameters
    ----------
    seq_len, micro_batch, hidden, heads, layers, vocab : numeric
        s [tokens], b [sequences], h, a, L, v.
    tensor_parallel, pipeline_parallel : numeric
        t, p.
    sequence_parallel, flash_attention : bool or array
    recompute : str or int array
        none/selective/full or 0/1/2.
    in_flight : numeric or None
        micro-batches in flight (default p, Eq. 5).
    bytes_per_element : numeric
        activation bytes per element [B].

    Returns
    -------
    numeric
        [GB].

    References
    ----------
    .. [1] Korthikanti et al. 2022 (S19) Eqs. 1-6, §4.3, CONFIRMED (memory_and_compute.md §2
       K01-K07, K04b; worked example: GPT-3 TP=8 + SP first stage 32.06 GiB).
    """
    if in_flight is None:
        in_flight = pipeline_parallel
    per_layer = activation_bytes_per_layer(seq_len, micro_batch, hidden, heads, tensor_parallel,
                                           sequence_parallel, recompute, flash_attention)
    total = per_layer * layers / pipeline_parallel * in_flight
    total = total + activation_extra_bytes(seq_len, micro_batch, hidden, vocab, tensor_parallel, pipeline_parallel)
    return total * (bytes_per_element / 2.0) / BYTES_PER_GB


def usable_memory_gb(memory_gb, usable_memory_fraction):
    """GPU memory a job can use [GB].

    The rest goes to the CUDA context and library workspaces (cuBLAS, NCCL buffers, ~1-3 GB),
    allocator fragmentation and temporary buffers (ZeRO S18 §3.2 row Z10: a 6 GB fp32 fused
    gradient buffer for a 1.5B model); ``cluster.usable_memory_fraction`` defaults to 0.90
    (JUDGEMENT, plan.py).

    Parameters
    ----------
    memory_gb : numeric
        GPU memory [GB].
    usable_memory_fraction : numeric
        [-].

    Returns
    -------
    numeric
        [GB].

    References
    ----------
    .. [1] ZeRO (S18) §3.2 "residual memory" (temporary buffers, fragmentation), CONFIRMED.
    """
    return memory_gb * usable_memory_fraction


def qlora_base_bytes_per_param():
    """NF4 + double quantisation: ``(4 + 0.127) / 8`` bytes per quantised parameter.

    Returns
    -------
    float
        [B/param].

    References
    ----------
    .. [1] Dettmers et al. 2023, "QLoRA: Efficient Finetuning of Quantized LLMs", arXiv:2305.14314
       §3 (4-bit NormalFloat; Double Quantization cuts the constants from 0.5 to 0.127 bit/param).
    """
    return (NF4_BITS_PER_PARAM + NF4_DOUBLE_QUANT_OVERHEAD_BITS_PER_PARAM) / BITS_PER_BYTE


def _finetune_split(plan, counts):
    """(trainable params, frozen weight bytes [B]) for the plan's fine-tuning method.

    LoRA: adapters train, the base is frozen at the training precision; QLoRA: the per-layer linear
    weights are frozen in NF4 + double quantisation, embeddings/norms stay 16-bit (as bitsandbytes
    quantises only ``nn.Linear`` layers of the blocks).
    """
    w = plan.workload
    method = w.get("method", "full") if plan.kind == "finetune" else "full"
    if method == "full":
        return counts["params"], 0.0
    m = plan.model
    head_dim = m.head_dim or m.hidden // m.heads
    if m.attention == "mla":
        q_out = m.heads * (_opt(m.qk_nope_head_dim, head_dim) + _opt(m.qk_rope_head_dim))
        kv_out = m.kv_lora_rank + _opt(m.qk_rope_head_dim)
        o_in = m.heads * _opt(m.v_head_dim, head_dim)
    else:
        q_out, kv_out, o_in = m.heads * head_dim, m.kv_heads * head_dim, m.heads * head_dim
    targets = [t for t in w["lora_targets"] if m.gated_mlp or t != "gate"]
    ffn = (m.moe_ffn_hidden or m.ffn_hidden) if m.experts > 1 else m.ffn_hidden
    n_lora = lora_params(m.layers, m.hidden, w["lora_rank"], q_out, kv_out, o_in, ffn, targets,
                         (m.experts + m.shared_experts) if m.experts > 1 else 1)
    base_bytes = weight_bytes_per_param(w["precision"])
    if method == "qlora":
        linear = counts["params_layer_linear"]
        frozen = linear * qlora_base_bytes_per_param() + (counts["params"] - linear) * base_bytes
    else:
        frozen = counts["params"] * base_bytes
    return float(n_lora), float(frozen)


def training_memory(plan, tensor_parallel=1, pipeline_parallel=1, data_parallel=1, zero_stage=1, micro_batch=None,
                    recompute=None, expert_parallel=1, counts=None):
    """Per-GPU training / fine-tuning memory of a plan for (arrays of) parallel layouts.

    Pure numpy: every layout argument broadcasts (the cluster step's layout search passes ~1e6
    candidates at once).

    Parameters
    ----------
    plan : Plan
        validated plan (model, precision, optimizer, method, seq_len, global batch, flags).
    tensor_parallel, pipeline_parallel, data_parallel, zero_stage : numeric
        t, p, N_d, ZeRO stage 0-3.
    micro_batch : numeric or None
        sequences per micro-batch (default: the plan's).
    recompute : str, int array or None
        none/selective/full or codes 0/1/2 (default: the plan's).
    expert_parallel : numeric
        EP degree for routed experts (taken from the data-parallel GPUs).
    counts : dict or None
        :func:`plan_param_counts` result, if already computed.

    Returns
    -------
    dict of numpy arrays
        ``weights_gb``, ``gradients_gb``, ``optimizer_gb``, ``activations_gb``, ``per_gpu_gb``,
        ``usable_gb`` and ``fits`` (per_gpu_gb <= usable_gb) per GPU [GB].

    References
    ----------
    .. [1] ZeRO (S18) §5, Fig. 1; Korthikanti et al. 2022 (S19) Eqs. 1-6; Transformer Math 101
       (S20) M07-M17; QLoRA (Dettmers et al. 2023, arXiv:2305.14314). See the formula functions.
    """
    w = plan.workload
    m = plan.model
    counts = counts or plan_param_counts(plan)
    precision = w["precision"]
    mb = w["micro_batch"] if micro_batch is None else micro_batch
    rc = w["recompute"] if recompute is None else recompute
    tp, pp, dp = (np.asarray(x) for x in (tensor_parallel, pipeline_parallel, data_parallel))
    ep = np.asarray(expert_parallel)
    wb, gb = weight_bytes_per_param(precision), gradient_bytes_per_param(precision)
    ob = optimizer_bytes_per_param(w["optimizer"], precision, m.hidden)
    trainable, frozen = _finetune_split(plan, counts)
    if trainable == counts["params"]:  # full training: routed experts are split by EP
        n_exp = counts["params_experts"]
        dense = model_state_gb(trainable - n_exp, 0.0, wb, gb, ob, tp * pp, dp, zero_stage)
        exp = model_state_gb(n_exp, 0.0, wb, gb, ob, tp * pp * ep, np.maximum(dp // np.maximum(ep, 1), 1), zero_stage)
        weights, grads, opt = (a + b for a, b in zip(dense, exp))
    else:
        weights, grads, opt = model_state_gb(trainable, frozen, wb, gb, ob, tp * pp, dp, zero_stage)
    in_flight = microbatches_in_flight(pp, w["global_batch_tokens"], w["seq_len"], mb, dp)
    act = activation_gb(w["seq_len"], mb, m.hidden, m.heads, m.layers, m.vocab, tp, pp,
                        plan.cluster.get("sequence_parallel", True), rc, w.get("flash_attention", False),
                        in_flight, 4.0 if precision == "fp32" else 2.0)
    per_gpu = weights + grads + opt + act
    usable = usable_memory_gb(plan.gpu.memory_gb, plan.cluster["usable_memory_fraction"])
    return {"weights_gb": weights, "gradients_gb": grads, "optimizer_gb": opt, "activations_gb": act,
            "per_gpu_gb": per_gpu, "usable_gb": usable, "fits": per_gpu <= usable}


def rule_of_thumb_gb(params):
    """Seed rule: params x 2 bytes (FP16) x 4 (weights + gradients + 2x optimizer states) [GB].

    Whole model, not per GPU. It undercounts mixed-precision Adam (16-18 B/param, S18 §3.1; S20
    M18) and ignores activations.

    Parameters
    ----------
    params : numeric
        [-].

    Returns
    -------
    numeric
        [GB].

    References
    ----------
    .. [1] seeds/ai-training-infrastructure-quick-reference.txt, "GPU memory rule" (secondary).
    """
    return params * RULE_OF_THUMB_BYTES_PER_PARAM / BYTES_PER_GB


# =============================================================================
# Time and GPUs
# =============================================================================


def peak_flops_per_s(gpu, precision="bf16"):
    """Dense peak FLOP/s of a catalog GPU for a compute precision [FLOP/s].

    bf16/fp16 (incl. fp32-master mixed precision): ``bf16_tflops``; fp8: ``fp8_tflops`` (bf16 if
    the GPU has none); int8: ``int8_tops`` (else bf16); int4 weights: bf16 (weight-only
    quantisation dequantises to 16-bit for the matmul); fp32: bf16 x 0.5, the TF32 dense rate of
    A100/H100 (TF32 is not in the catalog).

    Parameters
    ----------
    gpu : GPU
        catalog record.
    precision : str
        fp32 | fp16 | bf16 | fp8 | int8 | int4.

    Returns
    -------
    float
        [FLOP/s].

    References
    ----------
    .. [1] models_and_hardware.md §2 (A01 A100 TF32 156 vs BF16 312 dense; A02 H100), CORROBORATED.
    """
    bf16 = gpu.bf16_tflops
    tflops = {"fp32": bf16 * TF32_TO_BF16_PEAK_RATIO, "fp8": gpu.fp8_tflops or bf16,
              "int8": gpu.int8_tops or bf16}.get(precision, bf16)
    return tflops * FLOPS_PER_TFLOPS


def gpu_hours(total_flops, peak_flops_per_s, mfu):
    """GPU-hours to run ``total_flops`` model FLOPs at a model FLOP utilisation.

    Parameters
    ----------
    total_flops : numeric
        model FLOPs [FLOP].
    peak_flops_per_s : numeric
        dense peak per GPU [FLOP/s].
    mfu : numeric
        model FLOP utilisation [-].

    Returns
    -------
    numeric
        [GPU-h].

    References
    ----------
    .. [1] Transformer Math 101 (S20) M01 ``C = tau T``, tau = GPUs x achieved FLOP/s;
       MFU as defined by Chowdhery et al. 2022 (PaLM, S14) App. B and Korthikanti et al. 2022 (S19)
       Table 5.
    """
    return total_flops / (peak_flops_per_s * mfu) / S_PER_HOUR


def wall_clock_days(gpu_hours_, gpus, goodput=1.0):
    """Wall-clock days for ``gpu_hours_`` spread over ``gpus`` at a goodput fraction.

    Parameters
    ----------
    gpu_hours_ : numeric
        [GPU-h].
    gpus : numeric
        [GPUs].
    goodput : numeric
        productive share of wall-clock time [-].

    Returns
    -------
    numeric
        [days].

    References
    ----------
    .. [1] Transformer Math 101 (S20) M01 (C = tau x T); goodput: facility_network_cost.md §4.2.
    """
    return gpu_hours_ / (gpus * goodput) / HOURS_PER_DAY


def gpus_for_deadline(total_flops, peak_flops_per_s, mfu, deadline_days, gpus_per_node, goodput=1.0):
    """GPUs that finish ``total_flops`` within ``deadline_days``, rounded up to whole nodes.

    .. math:: \\lceil C / (\\text{peak} \\cdot \\text{MFU} \\cdot \\text{goodput} \\cdot T \\cdot n_{node}) \\rceil n_{node}

    Parameters
    ----------
    total_flops : numeric
        model FLOPs [FLOP].
    peak_flops_per_s : numeric
        dense peak per GPU [FLOP/s].
    mfu, goodput : numeric
        model FLOP utilisation and productive time share [-].
    deadline_days : numeric
        [days].
    gpus_per_node : numeric
        [GPUs].

    Returns
    -------
    numeric
        [GPUs] (a multiple of ``gpus_per_node``, at least one node).

    References
    ----------
    .. [1] Transformer Math 101 (S20) M01 ``C = tau T``, CORROBORATED.
    """
    per_gpu_flops = peak_flops_per_s * mfu * goodput * deadline_days * S_PER_DAY
    nodes = np.ceil(total_flops / per_gpu_flops / gpus_per_node)
    return np.maximum(nodes, 1) * gpus_per_node


# =============================================================================
# Inference
# =============================================================================


def kv_cache_bytes_per_token(layers, kv_heads, head_dim, bytes_per_element=2.0, mla=False, kv_lora_rank=0,
                             qk_rope_head_dim=0):
    """KV-cache bytes per token for the whole model (all layers, K and V; MLA: its latent).

    .. math:: 2\\,L\\,k\\,d\\,b \\quad\\text{or, MLA (absorb mode):}\\quad L\\,(r_{kv} + d_r)\\,b

    Parameters
    ----------
    layers, kv_heads, head_dim : numeric
        L, KV heads k, head width d [-].
    bytes_per_element : numeric
        b (bf16 2, fp8/int8 1, int4 0.5) [B].
    mla : bool or array
    kv_lora_rank, qk_rope_head_dim : numeric
        MLA latent rank r_kv and decoupled RoPE key width d_r [-].

    Returns
    -------
    numeric
        [B/token].

    References
    ----------
    .. [1] models_and_hardware.md §4 (formula and table, DERIVED from CONFIRMED configs): Llama 2
       7B 524,288; Llama 3.1 70B 327,680; GPT-3 4,718,592; DeepSeek-V3 MLA 576 x 61 x 2 = 70,272
       (S10 inference/model.py kv_cache + pe_cache).
    """
    return np.where(mla, layers * (kv_lora_rank + qk_rope_head_dim), 2.0 * layers * kv_heads * head_dim) * bytes_per_element


def kv_cache_gb(kv_bytes_per_token, sequences, context_tokens, sliding_window=None):
    """KV cache for ``sequences`` sequences of ``context_tokens`` (rolling buffer caps at the window).

    Parameters
    ----------
    kv_bytes_per_token : numeric
        [B/token].
    sequences : numeric
        [sequences].
    context_tokens : numeric
        [tokens].
    sliding_window : numeric or None
        [tokens].

    Returns
    -------
    numeric
        [GB].

    References
    ----------
    .. [1] models_and_hardware.md §4 ("multiply by batch x context"; Mistral rolling buffer, S21).
    """
    ctx = context_tokens if sliding_window is None else np.minimum(context_tokens, sliding_window)
    return kv_bytes_per_token * sequences * ctx / BYTES_PER_GB


def kv_shard_fraction(tensor_parallel, kv_heads, mla=False):
    """Share of the KV cache one tensor-parallel GPU holds: ceil(k/t)/k (KV heads replicate when
    t > k); MLA's latent is replicated on every rank (1).

    Parameters
    ----------
    tensor_parallel, kv_heads : numeric
        t, k [-].
    mla : bool or array

    Returns
    -------
    numeric
        [-].

    References
    ----------
    .. [1] Shoeybi et al. 2019, Megatron-LM, arXiv:1909.08053 §3 (heads split over TP ranks);
       S10 inference/model.py (MLA kv_cache is not split by heads).
    """
    return np.where(mla, 1.0, np.ceil(kv_heads / tensor_parallel) / kv_heads)


def inference_tensor_parallel(weights_gb, kv_seq_gb, usable_gb, gpus_per_node, heads, kv_heads, mla=False):
    """Smallest power-of-two TP (<= gpus_per_node, dividing heads) whose GPUs hold the weights and
    one sequence's KV cache; ``gpus_per_node``'s largest candidate if nothing fits.

    Parameters
    ----------
    weights_gb : numeric
        weights of the whole model [GB].
    kv_seq_gb : numeric
        KV cache of one sequence at full context, whole model [GB].
    usable_gb : numeric
        usable memory per GPU [GB].
    gpus_per_node, heads, kv_heads : numeric

    Returns
    -------
    numeric
        TP degree [GPUs].

    References
    ----------
    .. [1] Shoeybi et al. 2019, Megatron-LM (TP within a node over NVLink); weights per GPU
       ``W/t`` (M15, S20).
    """
    cands = 2.0 ** np.arange(0, 10)
    shape = np.broadcast(weights_gb, kv_seq_gb, usable_gb, gpus_per_node, heads, kv_heads).shape
    c = cands.reshape((-1,) + (1,) * len(shape))
    ok_shape = (c <= gpus_per_node) & (np.mod(heads, c) == 0)
    need = weights_gb / c + kv_seq_gb * kv_shard_fraction(c, kv_heads, mla)
    fits = ok_shape & (need <= usable_gb)
    best_fit = np.where(fits, c, np.inf).min(axis=0)
    largest = np.where(ok_shape, c, 0).max(axis=0)
    return np.where(np.isfinite(best_fit), best_fit, largest)


def max_concurrent_sequences(usable_gb, weights_gb_per_gpu, kv_seq_gb_per_gpu):
    """Sequences whose KV cache fits beside the weights on each GPU of a replica.

    Parameters
    ----------
    usable_gb, weights_gb_per_gpu, kv_seq_gb_per_gpu : numeric
        usable memory, weights and one sequence's KV cache per GPU [GB].

    Returns
    -------
    numeric
        [sequences].

    References
    ----------
    .. [1] Kwon et al. 2023, "Efficient Memory Management for LLM Serving with PagedAttention",
       arXiv:2309.06180 §2-3 (KV cache bounds the batch); Transformer Math 101 (S20) M06.
    """
    return np.maximum(np.floor((usable_gb - weights_gb_per_gpu) / kv_seq_gb_per_gpu), 0)


def prefill_time_s(prompt_tokens, flops_per_token, peak_flops_per_s, mfu, tensor_parallel=1):
    """Compute-bound prefill time of one prompt on a replica of ``tensor_parallel`` GPUs [s].

    Prefill runs the same large GEMMs as a training forward pass, so the plan's (training) MFU
    is used (``cluster.mfu``, default the catalog's calibrated value).

    Parameters
    ----------
    prompt_tokens : numeric
        [tokens].
    flops_per_token : numeric
        [FLOP/token].
    peak_flops_per_s, mfu, tensor_parallel : numeric
        [FLOP/s], [-], [GPUs].

    Returns
    -------
    numeric
        [s].

    References
    ----------
    .. [1] Pope et al. 2022, "Efficiently Scaling Transformer Inference", arXiv:2211.05102 §2
       (prefill is compute-bound, decode memory-bound); Transformer Math 101 (S20) M01 2N/token.
    """
    return prompt_tokens * flops_per_token / (tensor_parallel * peak_flops_per_s * mfu)


def decode_step_time_s(weight_bytes_per_gpu, kv_bytes_per_gpu, memory_bw_gb_per_s, batch, flops_per_token,
                       peak_flops_per_s, mfu, tensor_parallel=1, bw_fraction=DECODE_MEMORY_BW_FRACTION):
    """Roofline time of one decode step (one token for each of ``batch`` sequences) [s].

    ``max(bytes read / (bandwidth x fraction), batch x FLOPs/token / (t x peak x MFU))``: each
    step reads the GPU's weights once and the KV cache of every sequence in the batch.

    Parameters
    ----------
    weight_bytes_per_gpu, kv_bytes_per_gpu : numeric
        bytes read per step per GPU [B].
    memory_bw_gb_per_s : numeric
        datasheet memory bandwidth [GB/s].
    batch : numeric
        sequences decoded together [sequences].
    flops_per_token, peak_flops_per_s, mfu, tensor_parallel : numeric
    bw_fraction : numeric
        achievable share of the bandwidth (``units.DECODE_MEMORY_BW_FRACTION``, JUDGEMENT 0.80).

    References
    ----------
    .. [1] Williams, Waterman, Patterson 2009, "Roofline", CACM 52(4); Pope et al. 2022,
       arXiv:2211.05102 §2 and §3.
    """
    mem = (weight_bytes_per_gpu + kv_bytes_per_gpu) / (memory_bw_gb_per_s * BYTES_PER_GB * bw_fraction)
    comp = batch * flops_per_token / (tensor_parallel * peak_flops_per_s * mfu)
    return np.maximum(mem, comp)


def experts_touched(experts, active_experts, batch):
    """Expected distinct routed experts a batch of tokens reads per layer (uniform routing).

    .. math:: E\\,\\bigl(1 - (1 - k/E)^B\\bigr)

    Parameters
    ----------
    experts, active_experts, batch : numeric
        E, k, B (tokens decoded together) [-].

    Returns
    -------
    numeric
        [experts].

    References
    ----------
    .. [1] Balls-into-bins expectation; routing assumed uniform (load-balanced), as targeted by
       the auxiliary losses of Fedus et al. 2021 (Switch Transformer, arXiv:2101.03961).
    """
    return experts * (1.0 - (1.0 - active_experts / experts) ** batch)


def requests_in_flight(requests_per_s, latency_s):
    """Little's law: requests in the system = arrival rate x time in system.

    Parameters
    ----------
    requests_per_s : numeric
        [1/s].
    latency_s : numeric
        [s].

    Returns
    -------
    numeric
        [requests].

    References
    ----------
    .. [1] Little 1961, "A Proof for the Queuing Formula L = lambda W", Operations Research 9(3).
    """
    return requests_per_s * latency_s


# =============================================================================
# Calibration on published training runs
# =============================================================================

#: Published runs (memory_and_compute.md §5 / calibration_runs.csv): id, name, catalog model id or
#: architecture (params, layers, hidden, heads), training seq_len, catalog GPU, tokens, GPU-hours.
#: Architectures not in the catalog: LLaMA S04 Table 2 (dims/heads/layers, CONFIRMED); Llama 2 34B
#: 48 x 8192 (Code Llama 34B config, UNCONFIRMED); Pythia S12 Table 1 (UNCONFIRMED here, not
#: transcribed in our reference). seq_len: LLaMA 2048 (S04), Llama 2 4096 (S05), Llama 3 405B
#: 8192 (S07 Table 4), Pythia 2048 (S12).
CALIBRATION_RUNS = (
    ("T04", "LLaMA-7B", (6.7e9, 32, 4096, 32), 2048, "a100-80gb", 1.0e12, 82_432),
    ("T05", "LLaMA-13B", (13.0e9, 40, 5120, 40), 2048, "a100-80gb", 1.0e12, 135_168),
    ("T06", "LLaMA-33B", (32.5e9, 60, 6656, 52), 2048, "a100-80gb", 1.4e12, 530_432),
    ("T07", "LLaMA-65B", (65.2e9, 80, 8192, 64), 2048, "a100-80gb", 1.4e12, 1_022_362),
    ("T08", "Llama 2 7B", "llama-2-7b", 4096, "a100-80gb", 2.0e12, 184_320),
    ("T09", "Llama 2 13B", "llama-2-13b", 4096, "a100-80gb", 2.0e12, 368_640),
    ("T10", "Llama 2 34B", (34e9, 48, 8192, 64), 4096, "a100-80gb", 2.0e12, 1_038_336),
    ("T11", "Llama 2 70B", "llama-2-70b", 4096, "a100-80gb", 2.0e12, 1_720_320),
    ("T16", "Llama 3.1 405B", "llama-3.1-405b", 8192, "h100-sxm", 15.6e12, 30.84e6),
    ("T22", "Pythia-70M", (70e6, 6, 512, 8), 2048, "a100-40gb", 299_892_736_000, 510),
    ("T23", "Pythia-160M", (160e6, 12, 768, 12), 2048, "a100-40gb", 299_892_736_000, 1_030),
    ("T24", "Pythia-410M", (410e6, 24, 1024, 16), 2048, "a100-40gb", 299_892_736_000, 2_540),
    ("T25", "Pythia-1B", (1e9, 16, 2048, 8), 2048, "a100-40gb", 299_892_736_000, 4_830),
    ("T26", "Pythia-1.4B", (1.4e9, 24, 2048, 16), 2048, "a100-40gb", 299_892_736_000, 7_120),
    ("T27", "Pythia-2.8B", (2.8e9, 32, 2560, 32), 2048, "a100-40gb", 299_892_736_000, 14_240),
    ("T28", "Pythia-6.9B", (6.9e9, 32, 4096, 32), 2048, "a100-40gb", 299_892_736_000, 33_500),
    ("T29", "Pythia-12B", (12e9, 36, 5120, 40), 2048, "a100-40gb", 299_892_736_000, 72_300),
)


def calibration_table(catalog=None) -> pd.DataFrame:
    """Predicted vs published GPU-hours for the calibration runs.

    Prediction: tokens x training FLOPs/token (6N + attention, :func:`training_flops_per_token`)
    / (BF16 peak x MFU), at the catalog's ``mfu_default`` and the band ``[mfu_high, mfu_low]``.
    Published GPU-hours include restarts and other overheads (goodput < 1), so a prediction at
    goodput 1 is expected to sit a little below them.

    Returns
    -------
    DataFrame
        one row per run: ``id``, ``model``, ``gpu``, ``params``, ``tokens``,
        ``published_gpu_hours``, ``predicted_gpu_hours``, ``gpu_hours_low``, ``gpu_hours_high``,
        ``error_pct`` (predicted vs published), ``inside_band``, ``implied_mfu``.

    References
    ----------
    .. [1] memory_and_compute.md §5 (calibration_runs.csv): S04 Table 15, S05 Table 2, S07 (Llama
       3.1 card, 30.84M H100-hours) CONFIRMED; S12 Table 5 (Pythia) CORROBORATED.
    """
    from .catalog import load_catalog

    catalog = catalog or load_catalog()
    rows = []
    for run_id, name, spec, seq_len, gpu_id, tokens, published in CALIBRATION_RUNS:
        if isinstance(spec, str):
            m = catalog.models[spec]
            params = model_param_counts(m)["active_params"]
            layers, hidden, heads, hd = m.layers, m.hidden, m.heads, m.head_dim or m.hidden // m.heads
        else:
            params, layers, hidden, heads = spec
            hd = hidden // heads
        gpu = catalog.gpus[gpu_id]
        fpt = training_flops_per_token(params, attention_flops_per_token_fwd(layers, seq_len, heads, hd, hd))
        flops = tokens * fpt
        peak = peak_flops_per_s(gpu, "bf16")
        pred = gpu_hours(flops, peak, gpu.mfu_default)
        low, high = gpu_hours(flops, peak, gpu.mfu_high), gpu_hours(flops, peak, gpu.mfu_low)
        rows.append({"id": run_id, "model": name, "gpu": gpu_id, "params": params, "tokens": tokens,
                     "published_gpu_hours": published, "predicted_gpu_hours": pred, "gpu_hours_low": low,
                     "gpu_hours_high": high, "error_pct": 100.0 * (pred / published - 1.0),
                     "inside_band": bool(low <= published <= high),
                     "implied_mfu": flops / (published * S_PER_HOUR * peak)})
    return pd.DataFrame(rows)


# =============================================================================
# Vectorised table of training plans
# =============================================================================


def training_table(df: pd.DataFrame, catalog=None) -> pd.DataFrame:
    """Training memory per GPU, GPU-hours and days for a DataFrame of plans, fully vectorised.

    Dense decoder-only models with full training. Required columns: ``params``, ``layers``,
    ``hidden``, ``heads``, ``seq_len``, ``gpus``, ``zero_stage``, ``precision``, ``tokens`` and
    ``gpu`` (catalog id). Optional (default): ``vocab`` (32000), ``tensor_parallel`` (1),
    ``pipeline_parallel`` (1), ``micro_batch`` (1), ``recompute`` ("selective"), ``optimizer``
    ("adamw"), ``global_batch_tokens`` (4e6), ``mfu`` (catalog default), ``sequence_parallel``
    (True), ``flash_attention`` (True), ``usable_memory_fraction`` (0.90).

    Returns
    -------
    DataFrame
        ``weights_gb``, ``gradients_gb``, ``optimizer_gb``, ``activations_gb``, ``per_gpu_gb``,
        ``fits``, ``flops_per_token``, ``total_flops``, ``gpu_hours``, ``wall_clock_days``
        (same index as ``df``).

    References
    ----------
    .. [1] The formula functions of this module (ZeRO S18, Korthikanti S19, Transformer Math S20).
    """
    from .catalog import load_catalog

    catalog = catalog or load_catalog()

    def col(name, default):
        return df[name].to_numpy() if name in df else np.full(len(df), default)

    params, layers, hidden, heads = (df[c].to_numpy(dtype=float) for c in ("params", "layers", "hidden", "heads"))
    seq_len, gpus, tokens = (df[c].to_numpy(dtype=float) for c in ("seq_len", "gpus", "tokens"))
    zero = df["zero_stage"].to_numpy()
    prec = df["precision"]
    tp, pp = col("tensor_parallel", 1).astype(float), col("pipeline_parallel", 1).astype(float)
    mb = col("micro_batch", 1).astype(float)
    dp = np.maximum(np.floor(gpus / (tp * pp)), 1)
    opt_name = df["optimizer"] if "optimizer" in df else pd.Series("adamw", index=df.index)
    wb = prec.map(BYTES_PER_ELEMENT).to_numpy(dtype=float)
    gb = np.maximum(wb, 2.0)
    ob = (opt_name.map(OPTIMIZER_BYTES_PER_PARAM).to_numpy(dtype=float)
          + np.where(opt_name.to_numpy() == "adafactor", 8.0 / hidden, 0.0)
          - np.where(prec.to_numpy() == "fp32", MASTER_WEIGHT_BYTES_PER_PARAM, 0.0))
    weights, grads, opt = model_state_gb(params, 0.0, wb, gb, ob, tp * pp, dp, zero)
    rc = recompute_code(col("recompute", "selective"))
    in_flight = microbatches_in_flight(pp, col("global_batch_tokens", 4.0e6).astype(float), seq_len, mb, dp)
    act = activation_gb(seq_len, mb, hidden, heads, layers, col("vocab", 32000).astype(float), tp, pp,
                        col("sequence_parallel", True).astype(bool), rc, col("flash_attention", True).astype(bool),
                        in_flight, np.where(wb == 4.0, 4.0, 2.0))
    per_gpu = weights + grads + opt + act
    gpu_ids = df["gpu"]
    table = pd.DataFrame([{"gpu": g.id, "memory_gb": g.memory_gb, "bf16": g.bf16_tflops,
                           "fp8": g.fp8_tflops or g.bf16_tflops, "mfu": g.mfu_default}
                          for g in catalog.gpus.values()]).set_index("gpu")
    per = table.reindex(gpu_ids.to_numpy())
    peak = np.select([prec.to_numpy() == "fp8", prec.to_numpy() == "fp32"],
                     [per["fp8"].to_numpy(), per["bf16"].to_numpy() * TF32_TO_BF16_PEAK_RATIO],
                     per["bf16"].to_numpy()) * FLOPS_PER_TFLOPS
    mfu = col("mfu", np.nan).astype(float)
    mfu = np.where(np.isnan(mfu), per["mfu"].to_numpy(), mfu)
    head_dim = hidden / heads
    fpt = training_flops_per_token(params, attention_flops_per_token_fwd(layers, seq_len, heads, head_dim, head_dim))
    total = tokens * fpt
    hours = gpu_hours(total, peak, mfu)
    usable = per["memory_gb"].to_numpy() * col("usable_memory_fraction", 0.90).astype(float)
    return pd.DataFrame({"weights_gb": weights, "gradients_gb": grads, "optimizer_gb": opt, "activations_gb": act,
                         "per_gpu_gb": per_gpu, "fits": per_gpu <= usable, "flops_per_token": fpt,
                         "total_flops": total, "gpu_hours": hours, "wall_clock_days": wall_clock_days(hours, gpus)},
                        index=df.index)


# =============================================================================
# Pipeline steps
# =============================================================================


def _head_dims(m):
    hd = m.head_dim or m.hidden // m.heads
    if m.attention == "mla":
        qk = _opt(m.qk_nope_head_dim, hd - _opt(m.qk_rope_head_dim)) + _opt(m.qk_rope_head_dim)
        return qk, _opt(m.v_head_dim, hd)
    return hd, hd


def _attention_fwd(plan, seq_len):
    m = plan.model
    qk, v = _head_dims(m)
    return attention_flops_per_token_fwd(m.layers, seq_len, m.heads, qk, v, m.sliding_window)


def describe(plan, result):
    """Fill ``result['model']`` and, for training, ``compute.total_flops`` and ``compute.gpus``.

    ``model.flops_per_token`` is the training model FLOPs per token (6N + attention) for
    pretrain/finetune and the inference forward 2 x active params for inference
    (``model.flops_per_token_basis`` says which). ``compute.gpus`` is the plan's ``cluster.gpus``
    or, without it, the count that meets ``cluster.deadline_days`` at the plan MFU (goodput 1;
    the cluster step may refine it with :func:`gpus_for_deadline` and a goodput).
    """
    counts = plan_param_counts(plan)
    out = result["model"]
    out.update({"name": plan.model.name, "params": counts["params"], "active_params": counts["active_params"],
                "params_embedding": counts["params_embedding"], "params_experts": counts["params_experts"],
                "params_source": counts["params_source"],
                "chinchilla_tokens": chinchilla_tokens(counts["params"])})
    w, c = plan.workload, plan.cluster
    if plan.kind == "inference":
        out["flops_per_token"] = inference_flops_per_token(counts["active_params"])
        out["flops_per_token_basis"] = "inference forward: 2 x active params (attention excluded)"
        out["attention_flops_per_token"] = _attention_fwd(plan, w["prompt_tokens"] + w["output_tokens"])
        return
    attn = _attention_fwd(plan, w["seq_len"])
    fpt = training_flops_per_token(counts["active_params"], attn)
    out["flops_per_token"] = fpt
    out["flops_per_token_basis"] = "training model FLOPs: 6 x active params + attention (Korthikanti Eq. 7)"
    out["attention_flops_per_token"] = 3.0 * attn
    out["hardware_flops_per_token"] = hardware_flops_per_token(counts["active_params"], attn, w["recompute"])
    total = w["tokens"] * fpt
    comp = result["compute"]
    comp["total_flops"] = total
    comp["deadline_days"] = c.get("deadline_days")
    if c.get("gpus"):
        comp["gpus"] = c["gpus"]
    else:
        comp["gpus"] = int(gpus_for_deadline(total, peak_flops_per_s(plan.gpu, w["precision"]), c["mfu"],
                                             c["deadline_days"], c["gpus_per_node"]))


def _layout(plan, result):
    """(gpus, tp, pp, dp, zero, micro_batch, recompute, ep) from result['cluster'], else the plan."""
    rc, c, w = result.get("cluster") or {}, plan.cluster, plan.workload

    def pick(key, default):
        for v in (rc.get(key), c.get(key)):
            if v is not None:
                return v
        return default

    gpus = rc.get("gpus") or result["compute"].get("gpus") or c.get("gpus") or 1
    tp, pp = int(pick("tensor_parallel", 1)), int(pick("pipeline_parallel", 1))
    dp = int(pick("data_parallel", max(gpus // (tp * pp), 1)))
    zero = int(pick("zero_stage", 1))
    mb = rc.get("micro_batch") or w.get("micro_batch", 1)
    recompute = rc.get("recompute") or w.get("recompute", "selective")
    ep = int(pick("expert_parallel", 1))
    return gpus, tp, pp, dp, zero, mb, recompute, ep


def step(plan, result):
    """Fill ``result['memory']``, ``result['compute']`` and ``result['inference']``.

    Training reads the layout from ``result['cluster']`` (falling back to the plan, then tp = pp =
    1, ZeRO 1, dp = gpus / (tp pp)); ``compute.wall_clock_days`` is at goodput 1 (the cluster step
    rescales it). Inference sizes a tensor-parallel replica, its batch, latency and the replicas
    that serve ``requests_per_s``.
    """
    if "params" not in result["model"] or result["model"]["params"] is None:
        describe(plan, result)
    counts = plan_param_counts(plan)
    mem = result["memory"]
    mem["gpu_capacity_gb"] = plan.gpu.memory_gb
    mem["usable_gb"] = usable_memory_gb(plan.gpu.memory_gb, plan.cluster["usable_memory_fraction"])
    mem["usable_memory_fraction"] = plan.cluster["usable_memory_fraction"]
    mem["rule_of_thumb_gb"] = rule_of_thumb_gb(counts["params"])
    mem["rule_of_thumb_note"] = RULE_OF_THUMB_NOTE
    if plan.kind == "inference":
        _inference(plan, result, counts)
    else:
        _training(plan, result, counts)


def _mfu_band(plan):
    mfu = plan.cluster["mfu"]
    return mfu, min(plan.gpu.mfu_low, mfu), max(plan.gpu.mfu_high, mfu)


def _training(plan, result, counts):
    w, c = plan.workload, plan.cluster
    gpus, tp, pp, dp, zero, mb, recompute, ep = _layout(plan, result)
    memo = training_memory(plan, tp, pp, dp, zero, mb, recompute, ep, counts=counts)
    mem = result["memory"]
    for key in ("weights_gb", "gradients_gb", "optimizer_gb", "activations_gb", "per_gpu_gb"):
        mem[key] = float(memo[key])
    mem["kv_cache_gb"] = None
    mem["fits"] = bool(memo["fits"])
    mem["trainable_params"] = _finetune_split(plan, counts)[0]
    mem["method"] = w.get("method", "full")
    mem["layout"] = {"tensor_parallel": tp, "pipeline_parallel": pp, "data_parallel": dp, "zero_stage": zero,
                     "micro_batch": mb, "recompute": recompute, "expert_parallel": ep}
    comp = result["compute"]
    total = comp.get("total_flops") or w["tokens"] * result["model"]["flops_per_token"]
    peak = peak_flops_per_s(plan.gpu, w["precision"])
    mfu, lo, hi = _mfu_band(plan)
    hours = gpu_hours(total, peak, mfu)
    attn = _attention_fwd(plan, w["seq_len"])
    hw = hardware_flops_per_token(counts["active_params"], attn, recompute)
    result["model"]["hardware_flops_per_token"] = hw  # at the layout's recompute (describe used the plan's)
    comp.update({
        "total_flops": total, "gpus": gpus, "mfu": mfu, "mfu_low": lo, "mfu_high": hi,
        "peak_flops_per_s_per_gpu": peak,
        "hardware_flops": w["tokens"] * hw,
        "gpu_hours": hours, "gpu_hours_low": gpu_hours(total, peak, hi), "gpu_hours_high": gpu_hours(total, peak, lo),
        "wall_clock_days": wall_clock_days(hours, gpus),
        "days_low": wall_clock_days(gpu_hours(total, peak, hi), gpus),
        "days_high": wall_clock_days(gpu_hours(total, peak, lo), gpus),
        "tokens_per_s": gpus * peak * mfu / result["model"]["flops_per_token"],
        "deadline_days": c.get("deadline_days"),
    })
    comp["meets_deadline"] = (None if c.get("deadline_days") is None
                              else bool(comp["wall_clock_days"] <= c["deadline_days"] * (1 + 1e-9)))


def inference_tensor_parallel_for(plan, counts=None):
    """TP degree of one inference replica (for the cluster step's layout).

    The plan's ``cluster.tensor_parallel`` if given; else, among the powers of two from the
    smallest that holds the weights and one full-length sequence's KV cache
    (:func:`inference_tensor_parallel`) up to ``gpus_per_node`` (dividing the heads), the one that
    serves ``requests_per_s`` with the fewest GPUs (ties: the smaller TP). The smallest TP alone
    can leave room for only a few sequences (e.g. Llama 3.1 70B in FP8 on one 80 GB GPU).
    """
    return int(_serve_plan(plan, counts or plan_param_counts(plan))["tensor_parallel"])


def _inference_sizes(plan, counts):
    w, m = plan.workload, plan.model
    wbytes = BYTES_PER_ELEMENT[w["weight_precision"]]
    mla = m.attention == "mla"
    kvb = float(kv_cache_bytes_per_token(m.layers, m.kv_heads, m.head_dim or m.hidden // m.heads,
                                         BYTES_PER_ELEMENT[w["kv_precision"]], mla, _opt(m.kv_lora_rank),
                                         _opt(m.qk_rope_head_dim)))
    ctx = w["prompt_tokens"] + w["output_tokens"]
    return {"weights_gb": counts["params"] * wbytes / BYTES_PER_GB, "kv_bytes_per_token": kvb, "mla": mla,
            "kv_seq_gb": float(kv_cache_gb(kvb, 1, ctx, m.sliding_window)), "context": ctx,
            "usable_gb": usable_memory_gb(plan.gpu.memory_gb, plan.cluster["usable_memory_fraction"]),
            "weight_bytes_per_param": wbytes}


def _serve(plan, counts, s, tp):
    """Serving metrics of replicas of ``tp`` GPUs for the plan's load (scalars)."""
    w, m, gpu = plan.workload, plan.model, plan.gpu
    frac = float(kv_shard_fraction(tp, m.kv_heads, s["mla"]))
    w_gpu = s["weights_gb"] / tp
    kv_seq_gpu = s["kv_seq_gb"] * frac
    b_max = float(max_concurrent_sequences(s["usable_gb"], w_gpu, kv_seq_gpu))
    if w.get("max_batch"):
        b_max = min(b_max, w["max_batch"])
    b_cap = max(b_max, 1.0)
    mfu = plan.cluster["mfu"]
    peak = peak_flops_per_s(gpu, w["weight_precision"])
    active = counts["active_params"]
    prompt, out_tok = w["prompt_tokens"], w["output_tokens"]
    f_prefill = inference_flops_per_token(active) + _attention_fwd(plan, prompt)
    f_decode = inference_flops_per_token(active) + _attention_fwd(plan, prompt + out_tok / 2)
    t_prefill = float(np.maximum(prefill_time_s(prompt, f_prefill, peak, mfu, tp),
                                 w_gpu / (gpu.memory_bw_gb_per_s * DECODE_MEMORY_BW_FRACTION)))
    kv_avg_gpu = s["kv_bytes_per_token"] * frac * min(prompt + out_tok / 2, m.sliding_window or math.inf)
    n_exp = counts["params_experts"]

    def step_time(batch):
        touched = experts_touched(m.experts, m.active_experts, batch) / m.experts if m.experts > 1 else 1.0
        read = (counts["params"] - n_exp + n_exp * touched) * s["weight_bytes_per_param"] / tp
        return float(decode_step_time_s(read, batch * kv_avg_gpu, gpu.memory_bw_gb_per_s, batch, f_decode, peak,
                                        mfu, tp))

    # capacity of one replica at its full batch: each request costs its prefill plus its share of
    # the decode steps (continuous batching)
    rps_rep = 1.0 / (t_prefill + out_tok * step_time(b_cap) / b_cap)
    lam = w["requests_per_s"]
    replicas = max(math.ceil(lam / rps_rep - 1e-9), 1)
    # operating point: the batch each replica runs at this load (Little's law, fixed point)
    batch = b_cap
    for _ in range(20):
        latency = t_prefill + out_tok * step_time(batch)
        batch = float(min(max(math.ceil(requests_in_flight(lam / replicas, latency) - 1e-9), 1), b_cap))
    tpot = step_time(batch)
    latency = t_prefill + out_tok * tpot
    return {"tensor_parallel": tp, "fits": bool(w_gpu + kv_seq_gpu <= s["usable_gb"]), "weights_gb_per_gpu": w_gpu,
            "kv_seq_gb_per_gpu": kv_seq_gpu, "max_concurrent_sequences": b_max, "concurrent_sequences": batch,
            "peak": peak, "prefill_tokens_per_s_per_gpu": peak * mfu / f_prefill,
            "decode_tokens_per_s_per_gpu": batch / tpot / tp, "ttft_s": t_prefill, "tpot_s": tpot,
            "latency_s": latency, "requests_in_flight": requests_in_flight(lam, latency),
            "requests_per_s_per_replica": rps_rep, "replicas": replicas, "gpus": replicas * tp}


def _serve_plan(plan, counts):
    """:func:`_serve` at the plan's TP, or at the TP that needs the fewest GPUs."""
    s = _inference_sizes(plan, counts)
    if plan.cluster.get("tensor_parallel"):
        return {**_serve(plan, counts, s, int(plan.cluster["tensor_parallel"])), "sizes": s}
    m, gpn = plan.model, plan.cluster["gpus_per_node"]
    tp_min = int(inference_tensor_parallel(s["weights_gb"], s["kv_seq_gb"], s["usable_gb"], gpn, m.heads, m.kv_heads,
                                           s["mla"]))
    options = [_serve(plan, counts, s, tp) for tp in (2 ** k for k in range(10))
               if tp_min <= tp <= max(gpn, tp_min) and m.heads % tp == 0]
    best = min(options, key=lambda o: (not o["fits"], o["gpus"], o["tensor_parallel"]))
    return {**best, "tensor_parallel_min": tp_min, "sizes": s}


def _inference(plan, result, counts):
    w, c = plan.workload, plan.cluster
    o = _serve_plan(plan, counts)
    s, tp, batch = o["sizes"], o["tensor_parallel"], o["concurrent_sequences"]
    mem = result["memory"]
    mem.update({"weights_gb": o["weights_gb_per_gpu"], "kv_cache_gb": batch * o["kv_seq_gb_per_gpu"],
                "per_gpu_gb": o["weights_gb_per_gpu"] + batch * o["kv_seq_gb_per_gpu"],
                "gradients_gb": None, "optimizer_gb": None, "activations_gb": None, "fits": o["fits"]})
    inf = result["inference"]
    inf.update({key: o[key] for key in ("tensor_parallel", "prefill_tokens_per_s_per_gpu",
                                        "decode_tokens_per_s_per_gpu", "max_concurrent_sequences",
                                        "concurrent_sequences", "requests_in_flight", "latency_s",
                                        "requests_per_s_per_replica", "replicas", "gpus")})
    inf.update({"tensor_parallel_min": o.get("tensor_parallel_min", tp), "kv_bytes_per_token": s["kv_bytes_per_token"],
                "kv_cache_gb_per_sequence": s["kv_seq_gb"], "weights_gb": s["weights_gb"],
                "ttft_ms": o["ttft_s"] * 1e3, "tpot_ms": o["tpot_s"] * 1e3,
                "tokens_per_s_per_replica": o["requests_per_s_per_replica"] * w["output_tokens"],
                "memory_bw_fraction": DECODE_MEMORY_BW_FRACTION})
    mfu, lo, hi = _mfu_band(plan)
    gpus = c.get("gpus") or o["gpus"]
    result["compute"].update({"gpus": gpus, "mfu": mfu, "mfu_low": lo, "mfu_high": hi,
                              "peak_flops_per_s_per_gpu": o["peak"],
                              "tokens_per_s": w["requests_per_s"] * w["output_tokens"]})
    inf["meets_demand"] = bool(o["fits"] and gpus // tp >= o["replicas"])
