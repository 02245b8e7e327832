"""Inference: weights, KV cache, concurrency, prefill/decode roofline, replicas."""

from __future__ import annotations

import numpy as np

from ..units import BYTES_PER_GB, DECODE_MEMORY_BW_FRACTION
from .params import attended_tokens

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
    .. [1] Derived, 2 x layers x KV heads x head width x bytes, from the published configurations:
       Llama 2 7B 524,288 (Hugging Face config.json); Llama 3.1 70B 327,680 (Llama Team 2024,
       Table 3); GPT-3 4,718,592 (Brown et al. 2020, Table 2.1).
       [hf-llama-2-7b-hf-config;arxiv-2407.21783;arxiv-2005.14165]
    .. [2] DeepSeek-V3 MLA 576 x 61 x 2 = 70,272: inference/model.py (``kv_cache`` of width
       kv_lora_rank + ``pe_cache`` of width qk_rope_head_dim) and configs/config_671B.json.
       [deepseek-v3-inference-model;deepseek-v3-config-671b]
    """
    per_element = np.where(mla, layers * (kv_lora_rank + qk_rope_head_dim), 2.0 * layers * kv_heads * head_dim)
    return per_element * bytes_per_element


def kv_cache_gb(kv_bytes_per_token, sequences, context_tokens, sliding_window=None, local_fraction=1.0):
    """KV cache for ``sequences`` sequences of ``context_tokens``; the local layers of a sliding-window
    model keep at most the window (rolling buffer).

    .. math:: b \\cdot n \\cdot \\bigl((1 - f)\\,c + f \\min(c, W)\\bigr)

    Parameters
    ----------
    kv_bytes_per_token : numeric
        b, whole model, all layers [B/token].
    sequences : numeric
        n [sequences].
    context_tokens : numeric
        c [tokens].
    sliding_window : numeric or None
        W [tokens].
    local_fraction : numeric
        f, share of layers with a window (1: every layer, as Mistral 7B) [-].

    Returns
    -------
    numeric
        [GB].

    References
    ----------
    .. [1] Derived: per-token bytes x sequences x context. Rolling buffer: Jiang et al. 2023,
       "Mistral 7B", arXiv:2310.06825, §2 "Rolling Buffer Cache", Table 1 (window 4096). [arxiv-2310.06825]
    """
    return kv_bytes_per_token * sequences * attended_tokens(context_tokens, sliding_window, local_fraction) \
        / BYTES_PER_GB


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
    .. [1] Shoeybi et al. 2019, Megatron-LM, arXiv:1909.08053 §3 (heads split over TP ranks).
       [arxiv-1909.08053]
    .. [2] DeepSeek-V3 inference/model.py, class MLA (the ``kv_cache`` / ``pe_cache`` buffers
       are not split by heads). [deepseek-v3-inference-model]
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
    .. [1] Shoeybi et al. 2019, Megatron-LM, arXiv:1909.08053, §3, §5 (TP within a node over
       NVLink). [arxiv-1909.08053]
    .. [2] Weights per GPU ``W/t``: Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101", "3D Parallelism".
       [eleuther-transformer-math-101]
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
       arXiv:2309.06180 §2-3 (KV cache bounds the batch). [arxiv-2309.06180]
    .. [2] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Memory Requirements", "Inference". [eleuther-transformer-math-101]
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
       (prefill is compute-bound, decode memory-bound). [arxiv-2211.05102]
    .. [2] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Compute Requirements" (forward 2N FLOPs
       per token). [eleuther-transformer-math-101]
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
        achievable share of the bandwidth (``units.DECODE_MEMORY_BW_FRACTION``, judgement 0.80).

    References
    ----------
    .. [1] Williams, Waterman, Patterson 2009, "Roofline: An Insightful Visual Performance Model
       for Multicore Architectures", CACM 52(4). [doi-10.1145-1498765.1498785]
    .. [2] Pope et al. 2022, "Efficiently Scaling Transformer Inference", arXiv:2211.05102, §2
       and §3. [arxiv-2211.05102]
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
       the auxiliary losses of Fedus et al. 2021 (Switch Transformer, arXiv:2101.03961, §2.2).
       [arxiv-2101.03961]
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
       [doi-10.1287-opre.9.3.383]
    """
    return requests_per_s * latency_s
