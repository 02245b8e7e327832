"""Parameter counts and FLOPs per token (steps of the model step)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ..core.units import CHINCHILLA_TOKENS_PER_PARAM

#: activation recomputation codes used by the vectorised functions (and their names back)
RECOMPUTE_CODES = {"none": 0, "selective": 1, "full": 2}
RECOMPUTE_NAMES = {code: name for name, code in RECOMPUTE_CODES.items()}


def recompute_code(recompute):
    """``none``/``selective``/``full`` (or codes 0/1/2, scalar or array) -> int array of codes.

    Examples
    --------
    The codes the vectorised functions use (definition):

    >>> int(recompute_code("selective")), recompute_code(["none", "full"]).tolist()
    (1, [0, 2])
    """
    if isinstance(recompute, str):
        return np.asarray(RECOMPUTE_CODES[recompute])
    arr = np.asarray(recompute)
    if arr.dtype.kind in "OUS":
        import pandas as pd

        return pd.Series(arr.ravel()).map(RECOMPUTE_CODES).to_numpy(dtype=int).reshape(arr.shape)
    return arr.astype(int)


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
    .. [1] Counts derived from the Hugging Face config.json of each model (hidden_size,
       num_attention_heads, num_key_value_heads, intermediate_size, vocab_size): Llama 2 7B/13B/70B,
       Meta-Llama-3 8B/70B, Llama 3.1 8B, Qwen2.5 7B/72B; Mistral 7B from Jiang et al. 2023,
       Table 1: q/k/v/o projections.
       [hf-llama-2-7b-hf-config;hf-llama-2-13b-hf-config;hf-llama-2-70b-hf-config]
       [hf-meta-llama-3-8b-config;hf-meta-llama-3-70b-config;hf-llama-3.1-8b-config]
       [hf-qwen2.5-7b-config;hf-qwen2.5-7b-instruct-config;hf-qwen2.5-72b-instruct-config]
       [arxiv-2310.06825]
    .. [2] GQA shares K/V across a/k query heads: Ainslie et al. 2023, "GQA: Training Generalized
       Multi-Query Transformer Models from Multi-Head Checkpoints", arXiv:2305.13245, §2. [arxiv-2305.13245]

    Examples
    --------
    Llama 2 7B (h 4,096, 32 heads of 128, multi-head) has 4h^2 = 67,108,864 attention weights per
    layer; Llama 3 8B's 8 key/value heads (grouped-query) shrink K and V to a quarter:
    2 x 4,096^2 + 2 x 4,096 x 1,024 = 41,943,040 (derived from the config.json files).

    >>> int(attention_params(4096, 32, 32, 128)), int(attention_params(4096, 32, 8, 128))
    (67108864, 41943040)
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
       kv_norm, wkv_b, wo) and configs/config_671B.json.
       [arxiv-2412.19437;deepseek-v3-inference-model;deepseek-v3-config-671b]

    Examples
    --------
    DeepSeek-V3 (config_671B.json: h 7,168, 128 heads, r_q 1,536, r_kv 512, d_n 128, d_r 64, d_v 128),
    derived: 7,168 x 1,536 + 1,536 + 1,536 x 128 x 192 + 7,168 x 576 + 512 + 512 x 128 x 256
    + 128 x 128 x 7,168 = 187,107,328 per layer.

    >>> int(mla_attention_params(7168, 128, 1536, 512, 128, 64, 128))
    187107328
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
    .. [1] Shazeer 2020, "GLU Variants Improve Transformer", arXiv:2002.05202, §2 (SwiGLU);
       counts derived from the Llama config.json files (see :func:`attention_params`). [arxiv-2002.05202]
    .. [2] GPT-3 MLP 4h with biases: Brown et al. 2020, "Language Models are Few-Shot Learners",
       arXiv:2005.14165, §2.1 (d_ff = 4 d_model); the ``12Lh^2 + 13Lh`` count is derived from it.
       [arxiv-2005.14165]

    Examples
    --------
    Llama 2 7B's SwiGLU MLP, 3 x 4,096 x 11,008 = 135,266,304 (config.json); GPT-3 175B's plain MLP
    with biases (Brown et al. 2020, Table 2.1: h 12,288, f = 4h): 2hf + f + h = 1,208,020,992 (derived).

    >>> int(mlp_params(4096, 11008)), int(mlp_params(12288, 49152, gated=False, bias=True))
    (135266304, 1208020992)
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
    .. [1] Zhang & Sennrich 2019, "Root Mean Square Layer Normalization", arXiv:1910.07467
       (RMSNorm: a gain per element); Ba et al. 2016, "Layer Normalization", arXiv:1607.06450
       (gain and bias). The counts are derived. [arxiv-1910.07467;arxiv-1607.06450]

    Examples
    --------
    An RMSNorm of Llama 2 7B holds h = 4,096 gains; GPT-3's final LayerNorm 2h = 24,576 parameters,
    the ones the ``12Lh^2 + 13Lh`` count leaves out (derived).

    >>> int(norm_params(4096)), int(norm_params(12288, layernorm=True))
    (4096, 24576)
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
    .. [1] Counts derived from the config.json files ("tie_word_embeddings": untied LM head unless
       the config says otherwise). [hf-llama-2-7b-hf-config;hf-meta-llama-3-8b-config]
    .. [2] GPT-3 ``(50257 + 2048) h``: Brown et al. 2020, arXiv:2005.14165, §2.1, Table 2.1
       (n_ctx 2048); the vocabulary 50,257 is GPT-2's (not stated numerically in the GPT-3
       paper). [arxiv-2005.14165]

    Examples
    --------
    GPT-3 175B (Brown et al. 2020, Table 2.1; tied head, 2,048 learned positions):
    (50,257 + 2,048) x 12,288 = 642,723,840; Llama 2 7B (untied head): 2 x 32,000 x 4,096 = 262,144,000.

    >>> int(embedding_params(50257, 12288, True, 2048)), int(embedding_params(32000, 4096))
    (642723840, 262144000)
    """
    return vocab * hidden * np.where(tied_embeddings, 1, 2) + max_position * hidden


def value_or(value, default=0):
    """``value``, or ``default`` when it is None (optional catalog fields such as MLA ranks).

    Examples
    --------
    >>> value_or(None), value_or(None, 4096), value_or(1536)
    (0, 4096, 1536)
    """
    return default if value is None else value


def head_dims(model) -> tuple[int, int]:
    """(query/key, value) width of one attention head of a catalog model [-].

    MLA heads have a query/key part of ``qk_nope_head_dim + qk_rope_head_dim`` and their own
    value width (DeepSeek-V3 config: 128 + 64 and 128); other attention uses ``head_dim``
    (default ``hidden / heads``) for both.

    Examples
    --------
    DeepSeek-V3 (config_671B.json): 128 + 64 query/key and 128 value; Llama 2 7B: 4,096 / 32 = 128.

    >>> from aiplan.core.catalog import load_catalog
    >>> models = load_catalog().models
    >>> head_dims(models["deepseek-v3"]), head_dims(models["llama-2-7b"])
    ((192, 128), (128, 128))
    """
    m = model
    hd = m.head_dim or m.hidden // m.heads
    if m.attention == "mla":
        rope = value_or(m.qk_rope_head_dim)
        return value_or(m.qk_nope_head_dim, hd - rope) + rope, value_or(m.v_head_dim, hd)
    return hd, hd


def local_layer_fraction(model) -> float:
    """Share of a model's layers that attend to a sliding window (or chunk) only [-].

    0 without a window; with one, the layers other than ``global_layers`` (Gemma 3 27B: 52 of
    62; gpt-oss: half; a missing ``global_layers`` means every layer is local, as Mistral 7B).

    Examples
    --------
    Gemma 3 27B (config.json): 52 of its 62 layers attend to a 1,024-token window.

    >>> from aiplan.core.catalog import load_catalog
    >>> round(local_layer_fraction(load_catalog().models["gemma-3-27b"]), 2)
    0.84
    """
    if model.sliding_window is None:
        return 0.0
    return (model.layers - value_or(model.global_layers)) / model.layers


def model_attention_flops_fwd(model, seq_len):
    """:func:`attention_flops_per_token_fwd` of a catalog model at ``seq_len`` [FLOP/token].

    Examples
    --------
    Llama 2 7B at 4,096 tokens, derived: 2 x 32 layers x 4,096 x 32 heads x (128 + 128) = 4Lsh
    = 2.15e9 FLOP per token, beside the 2N = 13.5e9 of the weights.

    >>> from aiplan.core.catalog import load_catalog
    >>> round(float(model_attention_flops_fwd(load_catalog().models["llama-2-7b"], 4096)) / 1e9, 2)
    2.15
    """
    qk, v = head_dims(model)
    return attention_flops_per_token_fwd(model.layers, seq_len, model.heads, qk, v, model.sliding_window,
                                         local_layer_fraction(model))


def moe_layer_count(layers, dense_layers=0, moe_layer_step=1):
    """Mixture-of-experts layers: layers ``i >= dense_layers`` with ``(i + 1) % moe_layer_step == 0``.

    .. math:: \\lfloor L / k \\rfloor - \\lfloor d / k \\rfloor

    Parameters
    ----------
    layers, dense_layers : numeric
        L and the leading dense layers d [-].
    moe_layer_step : numeric
        k: every k-th layer is MoE (Llama 4 Maverick ``interleave_moe_layer_step`` 2) [-].

    Returns
    -------
    numeric
        MoE layers [-].

    References
    ----------
    .. [1] Meta Llama 4 configuration (``interleave_moe_layer_step``); DeepSeek-V3 configuration
       (``first_k_dense_replace`` 3).

    Examples
    --------
    DeepSeek-V3: 61 layers, the first 3 dense -> 58 MoE layers; Llama 4 Maverick: 48 layers, every
    second one MoE -> 24 (their configuration files).

    >>> int(moe_layer_count(61, 3)), int(moe_layer_count(48, 0, 2))
    (58, 24)
    """
    step = np.maximum(moe_layer_step, 1)
    return np.floor_divide(layers, step) - np.floor_divide(dense_layers, step)


def model_param_counts(model, final_norm: bool = True) -> dict[str, int]:
    """Parameter counts of a catalog model (a fresh dict; see :func:`_model_param_counts`).

    Examples
    --------
    Llama 2 7B from its config.json: 6,738,415,616 parameters; GPT-3 without the final norm, as the
    ``12Lh^2 + 13Lh + (50257 + 2048)h`` formula counts it: 174.6e9, the 175.0B of Brown et al. 2020,
    Table 2.1.

    >>> from aiplan.core.catalog import load_catalog
    >>> models = load_catalog().models
    >>> model_param_counts(models["llama-2-7b"])["params"]
    6738415616
    >>> round(model_param_counts(models["gpt-3-175b"], final_norm=False)["params"] / 1e9, 1)
    174.6
    """
    return dict(_model_param_counts(model, final_norm))


@lru_cache(maxsize=512)  # Model records are frozen and hashable; evaluate asks several times per plan
def _model_param_counts(model, final_norm: bool = True) -> dict[str, int]:
    """Parameter counts of a catalog :class:`~aiplan.core.catalog.Model` from its architecture.

    Embeddings + ``dense_layers`` x (attention + MLP + 2 norms) + MoE layers x (attention + routed
    and shared experts + router + 2 norms) + final norm. MoE "active" counts the shared experts and
    ``active_experts`` routed experts per token (router and embeddings included).

    Parameters
    ----------
    model : Model
        architecture record.
    final_norm : bool
        count the final norm (every catalog model has one; the GPT-3 formula
        ``12Lh^2 + 13Lh + (50257 + 2048)h`` omits its 2h = 24,576 parameters).

    Returns
    -------
    dict
        ``params``, ``active_params``, ``params_embedding``, ``params_experts`` (routed expert
        weights, the part expert parallelism shards), ``params_per_expert`` (one routed expert's MLP
        in one layer; 0 for a dense model), ``params_layer_linear`` (weights of the
        per-layer linear projections, what QLoRA quantises), ``params_attention`` (every layer's
        attention with its norms), ``params_head`` (the output projection; with tied embeddings the
        embedding table itself) [-].

    References
    ----------
    .. [1] Derived from the Hugging Face config.json files: Llama 2 7B 6,738,415,616; Llama 3.1 8B
       8,030,261,248. [hf-llama-2-7b-hf-config;hf-llama-3.1-8b-config]
    .. [2] Mixtral 8x7B 46,702,792,704 total / 12,879,925,248 active (derived; Jiang et al. 2024,
       "Mixtral of Experts", Table 1, top-2 of 8 experts). [arxiv-2401.04088]
    .. [3] DeepSeek-V3 671B total / 37B active (DeepSeek-AI 2024, arXiv:2412.19437, abstract;
       README). [arxiv-2412.19437;deepseek-v3-readme]
    .. [4] GPT-3 12Lh^2 + 13Lh + (50257 + 2048)h = 174,604,234,752 (derived; Brown et al. 2020,
       Table 2.1: 175.0B). [arxiv-2005.14165]
    """
    m = model
    # h as a float: every term is a multiple of it, so the sums are floats (exact below 2^53, as any
    # real model) and a huge architecture cannot overflow 64-bit integers
    h, L = float(m.hidden), m.layers
    layernorm = m.norm == "layernorm"
    head_dim = m.head_dim or m.hidden // m.heads
    if m.attention == "mla":
        attn = mla_attention_params(h, m.heads, value_or(m.q_lora_rank), m.kv_lora_rank,
                                    value_or(m.qk_nope_head_dim, head_dim - value_or(m.qk_rope_head_dim)),
                                    m.qk_rope_head_dim, value_or(m.v_head_dim, head_dim))
        attn_linear = attn - value_or(m.q_lora_rank) - m.kv_lora_rank
    else:
        attn = attention_params(h, m.heads, m.kv_heads, head_dim, m.qkv_bias, m.mlp_bias)
        attn_linear = attention_params(h, m.heads, m.kv_heads, head_dim)
    norms = 2 * norm_params(h, layernorm)
    dense_mlp = mlp_params(h, m.ffn_hidden, m.gated_mlp, m.mlp_bias)
    moe = m.experts > 1
    n_moe = int(moe_layer_count(L, value_or(m.dense_layers), value_or(m.moe_layer_step, 1))) if moe else 0
    n_dense = L - n_moe
    expert_mlp = mlp_params(h, m.moe_ffn_hidden or m.ffn_hidden, m.gated_mlp, m.mlp_bias)
    router = m.experts * h if moe else 0
    dense_layer = attn + dense_mlp + norms
    moe_layer = attn + (m.experts + m.shared_experts) * expert_mlp + router + norms
    moe_active = attn + (m.active_experts + m.shared_experts) * expert_mlp + router + norms
    emb = embedding_params(m.vocab, h, m.tied_embeddings, value_or(m.max_position) if m.position == "learned" else 0)
    tail = emb + (norm_params(h, layernorm) if final_norm else 0)
    linear = (n_dense * (attn_linear + mlp_params(h, m.ffn_hidden, m.gated_mlp))
              + n_moe * (attn_linear + (m.experts + m.shared_experts) * mlp_params(h, m.moe_ffn_hidden or m.ffn_hidden,
                                                                                   m.gated_mlp)))
    return {
        "params": int(tail + n_dense * dense_layer + n_moe * moe_layer),
        "active_params": int(tail + n_dense * dense_layer + n_moe * moe_active),
        "params_embedding": int(emb),
        "params_experts": int(n_moe * m.experts * expert_mlp),
        "params_per_expert": int(expert_mlp) if moe else 0,
        "params_layer_linear": int(linear),
        "params_attention": int(L * (attn + norms / 2)),
        "params_head": int(m.vocab * h),
    }


def plan_method(plan) -> str:
    """The plan's training method: full | lora | qlora (pretraining is full)."""
    return plan.workload.get("method", "full") if plan.kind == "finetune" else "full"


def plan_memo(plan) -> dict:
    """Values computed once per plan, kept on the plan object (a loaded plan is never changed) [-].

    Keys are the memoising function's name (and its other arguments); an object without a
    ``__dict__`` gets a fresh memo each time (no memoising).
    """
    try:
        return plan.__dict__.setdefault("_memo", {})
    except AttributeError:
        return {}


#: server counts a per-plan memo of a function of the GPU count computes in one vectorised pass [servers]
SERVER_BLOCK = 256


def server_block(gpus, gpus_per_node) -> tuple[int, int] | None:
    """(block, index in it) of a count of whole servers, block ``b`` holding the GPUs of servers
    ``b x SERVER_BLOCK + 1`` to ``(b + 1) x SERVER_BLOCK`` (:func:`block_gpus`); None for a count
    that is not whole servers [-].

    Examples
    --------
    >>> server_block(1064, 8), server_block(2056, 8), server_block(1060, 8)
    ((0, 132), (1, 0), None)
    """
    servers, extra = divmod(float(gpus), gpus_per_node)
    if extra or servers < 1:
        return None
    return divmod(int(servers) - 1, SERVER_BLOCK)


def memo_by_server_block(plan, name: str, gpus, compute, stamp=None) -> tuple[Any, int | None]:
    """A per-plan memo (:func:`plan_memo`) of ``compute`` at a GPU count: a count of whole servers is
    computed with its :func:`server_block` (``compute`` of the block's counts, an array: one vectorised
    pass for the counts near it the callers visit next), any other count alone (``compute`` of the
    count). Returns (the memoised value, the count's index in the block or None). ``stamp`` (an object,
    compared by identity) recomputes the memo when it changes, e.g. the fitted constants after a refit.

    Examples
    --------
    >>> class P:  # a plan: its servers' GPUs and somewhere to keep the memo
    ...     cluster = {"gpus_per_node": 8}
    >>> p, calls = P(), []
    >>> memo_by_server_block(p, "twice", 16, lambda g: calls.append(g) or 2 * g)[1]
    1
    >>> value, at = memo_by_server_block(p, "twice", 24, lambda g: calls.append(g) or 2 * g)
    >>> float(value[at]), len(calls)   # the same block: not computed again
    (48.0, 1)
    >>> memo_by_server_block(p, "twice", 20, lambda g: 2 * g)
    (40, None)
    """
    memo, gpn = plan_memo(plan), plan.cluster["gpus_per_node"]
    where = server_block(gpus, gpn)
    if where is None:
        key, arg, at = (name, float(gpus)), gpus, None
    else:
        key, arg, at = (f"{name}_block", where[0]), block_gpus(where[0], gpn), where[1]
    if key not in memo or memo[key][0] is not stamp:
        memo[key] = stamp, compute(arg)
    return memo[key][1], at


def block_gpus(block, gpus_per_node) -> np.ndarray:
    """The GPU counts of a :func:`server_block` block, in order [GPUs].

    Examples
    --------
    Block 0 of 8-GPU servers holds 8 to 2,048 GPUs; 1,064 GPUs are its entry 132:

    >>> g = block_gpus(0, 8)
    >>> float(g[0]), float(g[-1]), float(g[132])
    (8.0, 2048.0, 1064.0)
    """
    first = block * SERVER_BLOCK + 1
    return gpus_per_node * np.arange(first, first + SERVER_BLOCK, dtype=float)


def plan_param_counts(plan) -> dict[str, float]:
    """:func:`model_param_counts` for a plan; a model mapping's ``params`` overrides the total.

    When the plan gives ``model: {params: ...}`` (docs/contract.md), that count is the total and the
    other counts are scaled by ``params / derived total``; the source is reported in
    ``params_source`` ("plan" or "architecture"). Computed once per plan (:func:`plan_memo`); a fresh
    dict each call.
    """
    memo = plan_memo(plan)
    if "plan_param_counts" not in memo:
        memo["plan_param_counts"] = _plan_param_counts(plan)
    return dict(memo["plan_param_counts"])


def _plan_param_counts(plan) -> dict[str, float]:
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
       arXiv:2106.09685 §4.1 (W + BA with B in R^{d x r}, A in R^{r x k}: r(d + k) parameters).
       [arxiv-2106.09685]

    Examples
    --------
    Hu et al. 2021, §7.1: a budget of "18M" trainable parameters on GPT-3 175B (96 layers,
    h 12,288) is r = 4 on two attention matrices or r = 8 on one: 96 x 4 x 2 x (12,288 + 12,288)
    = 18,874,368.

    >>> int(lora_params(96, 12288, 4, 12288, 12288, 12288, 49152, ["q", "v"]))
    18874368
    >>> int(lora_params(96, 12288, 8, 12288, 12288, 12288, 49152, ["q"]))
    18874368
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


def attended_tokens(seq_len, sliding_window=None, local_fraction=1.0):
    """Tokens a layer attends to, averaged over the layers: global layers see the whole sequence,
    local ones at most the window.

    .. math:: (1 - f)\\,s + f \\min(s, W)

    Parameters
    ----------
    seq_len : numeric
        s [tokens].
    sliding_window : numeric or None
        W, the window (or chunk) of the local layers [tokens].
    local_fraction : numeric
        f, share of layers that are local (:func:`local_layer_fraction`) [-].

    Returns
    -------
    numeric
        [tokens].

    References
    ----------
    .. [1] Jiang et al. 2023, "Mistral 7B", arXiv:2310.06825 §2 (sliding window, rolling buffer);
       Gemma Team 2025, "Gemma 3 Technical Report" (5 local layers per global one, window 1,024).

    Examples
    --------
    Mistral 7B (every layer local, window 4,096; Jiang et al. 2023, Table 1) at 8,192 tokens attends
    to 4,096; Gemma 3 27B at 131,072 tokens (52 of 62 layers local, window 1,024), derived:
    10/62 x 131,072 + 52/62 x 1,024 = 21,999.

    >>> float(attended_tokens(8192, 4096)), round(float(attended_tokens(131072, 1024, 52 / 62)))
    (4096.0, 21999)
    """
    if sliding_window is None:
        return seq_len
    return (1.0 - local_fraction) * seq_len + local_fraction * np.minimum(seq_len, sliding_window)


def attention_flops_per_token_fwd(layers, seq_len, heads, qk_head_dim, v_head_dim, sliding_window=None,
                                  local_fraction=1.0):
    """Forward FLOPs per token of the attention score and value matmuls (QK^T and AV).

    .. math:: 2\\,L\\,s\\,a\\,(d_{qk} + d_v)  \\quad (= 4 L s h \\text{ for } a d = h)

    Counted over the full (not causal-halved) sequence, as Korthikanti et al. and PaLM do;
    with a ``sliding_window`` the local layers attend to at most the window
    (:func:`attended_tokens`).

    Parameters
    ----------
    layers, seq_len, heads : numeric
        L, sequence length s [tokens], query heads a.
    qk_head_dim, v_head_dim : numeric
        per-head query/key and value widths [-].
    sliding_window : numeric or None
        attention window of the local layers [tokens].
    local_fraction : numeric
        share of layers that are local [-].

    Returns
    -------
    numeric
        [FLOP/token].

    References
    ----------
    .. [1] Korthikanti et al. 2022, arXiv:2205.05198 App. A, Eq. 7: the ``s/(6h)`` term,
       ``72 B L s h^2 x s/(6h) = 12 B L s^2 h`` = 3 x (this) per training token. [arxiv-2205.05198]
    .. [2] Chowdhery et al. 2022, "PaLM: Scaling Language Modeling with Pathways",
       arXiv:2204.02311, App. B: ``6N + 12 L H Q T``. [arxiv-2204.02311]

    Examples
    --------
    GPT-3 175B with the configuration of Korthikanti et al. 2022, Table 3 (L 96, s 2,048, 96 heads of
    128): 4Lsh = 9.66e9 FLOP per token; three times it over Eq. 7's 72Lh^2 is the paper's
    ``s/(6h)`` = 0.0278.

    >>> attn = attention_flops_per_token_fwd(96, 2048, 96, 128, 128)
    >>> round(float(attn) / 1e9, 2), round(float(3 * attn / (72 * 96 * 12288**2)), 4)
    (9.66, 0.0278)
    """
    s = attended_tokens(seq_len, sliding_window, local_fraction)
    return 2.0 * layers * s * heads * (qk_head_dim + v_head_dim)


def training_flops_per_token(active_params, attention_flops_fwd, weight_grad_fraction=1.0):
    """Model FLOPs per training token: ``6N`` (forward 2N + backward 4N) + 3 x attention forward.

    The backward pass is 2N for the activation gradients and 2N for the weight gradients; frozen
    weights (LoRA/QLoRA: ``weight_grad_fraction`` 0, the adapters are negligible) skip the latter,
    so adapter fine-tuning costs ``4N`` + 3 x attention.

    Parameters
    ----------
    active_params : numeric
        parameters a token passes through, N [-].
    attention_flops_fwd : numeric
        :func:`attention_flops_per_token_fwd` [FLOP/token].
    weight_grad_fraction : numeric
        share of N whose weight gradients are computed [-] (1 full training, 0 adapters).

    Returns
    -------
    numeric
        [FLOP/token].

    References
    ----------
    .. [1] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Compute Requirements": ``C = 6PD``. [eleuther-transformer-math-101]
    .. [2] Korthikanti et al. 2022, arXiv:2205.05198, App. A, Eq. 7:
       ``72BLsh^2 (1 + s/(6h) + v/(12hL))``. [arxiv-2205.05198]
    .. [3] Hu et al. 2021, LoRA, §4: no gradients for most parameters. [arxiv-2106.09685]

    Examples
    --------
    Korthikanti et al. 2022, App. A, Eq. 7, for GPT-3 175B (Table 3: L 96, h 12,288, s 2,048,
    v 51,200): ``72 L s h^2 (1 + s/(6h) + v/(12hL))`` per sequence = 1.0764e12 FLOP per token, with
    N = 12Lh^2 + vh.

    >>> L, h, s, v = 96, 12288, 2048, 51200
    >>> flops = training_flops_per_token(12 * L * h**2 + v * h, attention_flops_per_token_fwd(L, s, 96, 128, 128))
    >>> round(float(flops) / 1e12, 4), round(72 * L * h**2 * (1 + s / (6 * h) + v / (12 * h * L)) / 1e12, 4)
    (1.0764, 1.0764)
    """
    return (4.0 + 2.0 * weight_grad_fraction) * active_params + 3.0 * attention_flops_fwd


def hardware_flops_per_token(active_params, attention_flops_fwd, recompute, weight_grad_fraction=1.0):
    """Hardware FLOPs per training token, counting recomputation.

    none: the model FLOPs; selective: + the attention term again (Eq. 8, ``s/(3h)`` instead of
    ``s/(6h)``); full: + one more forward pass (2N + attention forward), i.e. 4/3 x model FLOPs
    (8N + 16Lsh).

    Parameters
    ----------
    active_params, attention_flops_fwd, weight_grad_fraction : numeric
        as :func:`training_flops_per_token`.
    recompute : str or int array
        ``none``/``selective``/``full`` or codes 0/1/2.

    Returns
    -------
    numeric
        [FLOP/token].

    References
    ----------
    .. [1] Korthikanti et al. 2022, arXiv:2205.05198, App. A, Eq. 8 (selective) and §5, Table 4
       (full recompute repeats the forward pass). [arxiv-2205.05198]
    .. [2] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Compute Requirements": ``2PD <= C_forward <= 4PD``. [eleuther-transformer-math-101]

    Examples
    --------
    Korthikanti et al. 2022, Table 5: GPT-3 175B with selective recomputation runs at 52.8% hardware
    and 51.4% model FLOP utilisation, a ratio of 1.027; full recomputation costs 4/3.

    >>> n, attn = 12 * 96 * 12288**2 + 51200 * 12288, attention_flops_per_token_fwd(96, 2048, 96, 128, 128)
    >>> model = training_flops_per_token(n, attn)
    >>> round(float(hardware_flops_per_token(n, attn, "selective") / model), 3), round(52.8 / 51.4, 3)
    (1.027, 1.027)
    """
    code = recompute_code(recompute)
    model = training_flops_per_token(active_params, attention_flops_fwd, weight_grad_fraction)
    # what each recompute code adds: nothing, the attention forward three times, the whole forward pass again
    extra = (0.0, 3.0 * attention_flops_fwd, 2.0 * active_params + attention_flops_fwd)
    if not (np.ndim(code) or np.ndim(active_params) or np.ndim(attention_flops_fwd)):  # one layout: no select
        return model + extra[int(code)]
    return model + np.select([code == 1, code == 2], extra[1:], 0.0)


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
    .. [1] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Compute Requirements": ``C_forward ~ 2PD``. [eleuther-transformer-math-101]

    Examples
    --------
    A 7e9-parameter model: 2 x 7e9 = 1.4e10 FLOP per token (Transformer Math 101, ``C_forward ~ 2PD``).

    >>> float(inference_flops_per_token(7e9))
    14000000000.0
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
       arXiv:2203.15556, §3, Table 3 (about 20 tokens per parameter). [arxiv-2203.15556]
    .. [2] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Parameter vs Dataset Tradeoffs": ``D = 20P``. [eleuther-transformer-math-101]

    Examples
    --------
    Chinchilla itself: 70B parameters trained on 1.4 trillion tokens (Hoffmann et al. 2022, Table 1).

    >>> float(chinchilla_tokens(70e9))
    1400000000000.0
    """
    return CHINCHILLA_TOKENS_PER_PARAM * params
