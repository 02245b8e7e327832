"""Inference formulas: KV cache, batching, queueing, speculative decoding, attention and matmul efficiency.

One function per formula, numpy in and out; :mod:`.serving` puts them together into the engine
(continuous batching with chunked prefill, layouts, one pool or two). The efficiencies and
overheads are calibrated constants (``data/calibration/serving_constants.csv``), passed in as
arguments.
"""

from __future__ import annotations

import numpy as np

from ..core.units import BYTES_PER_GB
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

    Examples
    --------
    Reference [1] in bf16: Llama 2 7B (32 layers, 32 KV heads of 128), Llama 3.1 70B (80, 8 of 128),
    GPT-3 (96, 96 of 128); reference [2], DeepSeek-V3's latent (61 layers, 512 + 64):

    >>> [int(kv_cache_bytes_per_token(n, k, 128)) for n, k in ((32, 32), (80, 8), (96, 96))]
    [524288, 327680, 4718592]
    >>> int(kv_cache_bytes_per_token(61, 128, 128, 2.0, True, 512, 64))
    70272
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

    Examples
    --------
    Mistral 7B (131,072 B/token, window 4,096 on every layer) at 32k tokens: the rolling buffer keeps
    4,096 of 32,768 tokens, the 8x saving of Jiang et al. 2023, §2.

    >>> full = kv_cache_gb(131072, 1, 32768)
    >>> rolling = kv_cache_gb(131072, 1, 32768, sliding_window=4096)
    >>> round(float(full), 3), round(float(rolling), 3), float(full / rolling)
    (4.295, 0.537, 8.0)
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

    Examples
    --------
    Llama 3.1 70B's 8 KV heads: TP 4 holds 2 heads a GPU (1/4); TP 8 and TP 16 hold one (1/8, the
    heads replicated twice at TP 16); an MLA latent is whole on every rank.

    >>> kv_shard_fraction(np.array([4, 8, 16]), 8).tolist(), float(kv_shard_fraction(8, 128, mla=True))
    ([0.25, 0.125, 0.125], 1.0)
    """
    return np.where(mla, 1.0, np.ceil(kv_heads / tensor_parallel) / kv_heads)








def kv_capacity_gb(usable_gb, weights_gb_per_gpu):
    """Memory left for the KV cache on each GPU of a replica [GB].

    .. math:: \\max(M_{usable} - W, 0)

    Parameters
    ----------
    usable_gb, weights_gb_per_gpu : numeric
        usable memory and weights per GPU [GB].

    Returns
    -------
    numeric
        [GB].

    References
    ----------
    .. [1] Kwon et al. 2023, "Efficient Memory Management for LLM Serving with PagedAttention",
       arXiv:2309.06180 §2.3, §3 (the memory beside the weights holds the KV cache). [arxiv-2309.06180]

    Examples
    --------
    A 13B model's fp16 weights (13e9 x 2 B = 26 GB) on a 40 GB A100, the case of Kwon et al. 2023,
    Fig. 1: 14 GB are left for the KV cache; weights larger than the memory leave none.

    >>> float(kv_capacity_gb(40.0, 26.0)), float(kv_capacity_gb(40.0, 45.0))
    (14.0, 0.0)
    """
    return np.maximum(usable_gb - weights_gb_per_gpu, 0.0)


def mean_sequence_tokens(prompt_tokens, output_tokens):
    """Tokens a running sequence holds in its KV cache on average over its life [tokens].

    .. math:: p + o/2

    With paged KV memory a sequence holds only the blocks it has filled: its prompt and, on
    average over the decode, half its output.

    Parameters
    ----------
    prompt_tokens, output_tokens : numeric
        p and o [tokens].

    Returns
    -------
    numeric
        [tokens].

    References
    ----------
    .. [1] Kwon et al. 2023, "Efficient Memory Management for LLM Serving with PagedAttention",
       arXiv:2309.06180 §4.1-4.2 (blocks allocated on demand as tokens are generated). [arxiv-2309.06180]

    Examples
    --------
    A 1,000-token prompt with 200 tokens of output holds 1,000 + 200 / 2 tokens on average:

    >>> float(mean_sequence_tokens(1000, 200))
    1100.0
    """
    return prompt_tokens + output_tokens / 2.0


def kv_batch_limit(kv_capacity_gb_per_gpu, kv_bytes_per_token_per_gpu, mean_tokens):
    """Running sequences whose paged KV cache fits on each GPU of a replica [sequences].

    .. math:: \\lfloor C / (k\\,n) \\rfloor

    Parameters
    ----------
    kv_capacity_gb_per_gpu : numeric
        C, memory for the KV cache per GPU [GB].
    kv_bytes_per_token_per_gpu : numeric
        k, KV bytes per token one GPU holds [B/token].
    mean_tokens : numeric
        n, tokens a running sequence holds on average (:func:`mean_sequence_tokens`) [tokens].

    Returns
    -------
    numeric
        [sequences].

    References
    ----------
    .. [1] Kwon et al. 2023, "Efficient Memory Management for LLM Serving with PagedAttention",
       arXiv:2309.06180 §3-4 (KV cache bounds the batch; paging removes reservation for the
       maximum length). [arxiv-2309.06180]

    Examples
    --------
    Llama 3.1 70B in bf16 on TP 8 (327,680 / 8 = 40,960 B/token a GPU), 40 GB for the cache and
    2,048 tokens a sequence: 40e9 / (40,960 x 2,048) = 476.8, so 476 sequences.

    >>> float(kv_batch_limit(40.0, 40960, 2048))
    476.0
    """
    return np.floor(kv_capacity_gb_per_gpu * BYTES_PER_GB / (kv_bytes_per_token_per_gpu * mean_tokens))












def prefill_wait_s(arrival_rate, service_s):
    """Mean time a request waits for its prefill: M/D/1 queue (Poisson arrivals, prefill of a fixed time) [s].

    .. math:: W = \\frac{\\rho\\,S}{2(1 - \\rho)}, \\qquad \\rho = \\lambda S

    (Pollaczek-Khinchine with a deterministic service time); infinite when rho >= 1.

    Parameters
    ----------
    arrival_rate : numeric
        lambda, requests per second reaching the replica [1/s].
    service_s : numeric
        S, prefill time of one prompt on the replica [s].

    Returns
    -------
    numeric
        [s].

    References
    ----------
    .. [1] Kleinrock 1975, "Queueing Systems, Volume 1: Theory", Wiley, §5.6 (Pollaczek-Khinchine
       mean-value formula, M/G/1 and M/D/1). [kleinrock-1975-queueing-systems]

    Examples
    --------
    Prefills of 0.2 s at 2.5 requests/s (rho = 0.5): 0.5 x 0.2 / (2 x 0.5) = 0.1 s, half the M/M/1 wait
    rho S / (1 - rho); at 5 requests/s the prefill server is saturated.

    >>> [round(float(prefill_wait_s(rate, 0.2)), 3) for rate in (2.5, 5.0)]
    [0.1, inf]
    """
    rho = np.asarray(arrival_rate, dtype=float) * service_s
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rho < 1.0, rho * service_s / (2.0 * (1.0 - rho)), np.inf)


def wait_quantile_s(mean_wait_s, utilisation, quantile=0.99):
    """A quantile of the waiting time from its mean, with an exponential tail [s].

    .. math:: P(W > t) \\approx \\rho\\, e^{-\\rho t / \\bar W}
              \\;\\Rightarrow\\; t_q = \\frac{\\bar W}{\\rho} \\ln\\frac{\\rho}{1 - q}
              \\quad (0 \\text{ if } \\rho \\le 1 - q)

    Exact for M/M/1; for M/G/1 the tail is exponential in heavy traffic (Kingman).

    Parameters
    ----------
    mean_wait_s : numeric
        mean wait W [s].
    utilisation : numeric
        rho, share of time the prefill server is busy [-].
    quantile : numeric
        q, e.g. 0.99 for the 99th percentile MLPerf constrains [-].

    Returns
    -------
    numeric
        [s].

    References
    ----------
    .. [1] Kleinrock 1975, "Queueing Systems, Volume 1: Theory", Wiley, §3.2 (M/M/1 waiting-time
       distribution). [kleinrock-1975-queueing-systems]
    .. [2] Kingman 1961, "The single server queue in heavy traffic", Proc. Cambridge Phil. Soc.
       57(4) (exponential waiting time in heavy traffic). [doi-10.1017-s0305004100036094]

    Examples
    --------
    M/M/1 with a 1 s service at rho = 0.5: mean wait rho S / (1 - rho) = 1 s and P(W > t) = 0.5 exp(-t/2),
    so the 99th percentile is 2 ln 50 = 7.824 s; at rho <= 1% the 99th percentile does not wait.

    >>> round(float(wait_quantile_s(1.0, 0.5)), 3), float(wait_quantile_s(0.01, 0.005))
    (7.824, 0.0)
    """
    rho = np.clip(np.asarray(utilisation, dtype=float), 1e-12, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.asarray(mean_wait_s, dtype=float) / rho * np.log(rho / (1.0 - quantile))
    return np.where(rho > 1.0 - quantile, t, 0.0)




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

    Examples
    --------
    Mixtral 8x7B (top-2 of 8 experts): one token reads 2 experts; 8 tokens 8 (1 - 0.75^8) = 7.2 of them.

    >>> [round(float(experts_touched(8, 2, batch)), 2) for batch in (1, 8)]
    [2.0, 7.2]
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

    Examples
    --------
    10 requests/s that spend 2.5 s each in the system: 25 in flight.

    >>> requests_in_flight(10.0, 2.5)
    25.0
    """
    return requests_per_s * latency_s


# =============================================================================
# Serving as engines run it (layouts, chunked prefill, speculative decoding, two pools)
# =============================================================================


def matmul_efficiency(tokens, peak_share, tokens_half):
    """Share of a GPU's dense peak a matrix multiplication of ``tokens`` rows reaches [-].

    .. math:: \\eta(n) = \\eta_{max}\\, n / (n + n_{1/2})

    A step of few tokens multiplies thin matrices that cannot fill the tensor cores (and an
    expert's grouped GEMM sees only the tokens routed to it); the share rises towards
    ``peak_share`` as the rows grow. ``peak_share`` and ``tokens_half`` are calibrated
    (``compute_efficiency``, ``compute_tokens_half``).

    Parameters
    ----------
    tokens : numeric
        n, rows of the multiplication (tokens of the step on one GPU, or routed to one expert) [tokens].
    peak_share : numeric
        eta_max, share reached by large multiplications [-].
    tokens_half : numeric
        n_1/2, rows at which half of it is reached [tokens].

    Returns
    -------
    numeric
        [-].

    References
    ----------
    .. [1] Hockney and Jesshope 1988, "Parallel Computers 2", §1.3.3 (the half-performance length
       n_1/2 of a pipelined operation). [hockney-jesshope-1988-parallel-computers-2]

    Examples
    --------
    >>> float(matmul_efficiency(64, 0.6, 64))
    0.3
    """
    n = np.maximum(np.asarray(tokens, dtype=float), 0.0)
    return peak_share * n / (n + tokens_half)


def attention_core_flops_per_token(layers, heads, qk_head_dim, v_head_dim, context_tokens, mla_absorbed=False,
                                   kv_lora_rank=0, qk_rope_head_dim=0):
    """FLOPs of the attention scores and values of one query token against its context [FLOP].

    .. math:: 2\\,L\\,a\\,(d_{qk} + d_v)\\,c \\quad\\text{or, MLA absorbed:}\\quad 2\\,L\\,a\\,(2 r + d_r)\\,c

    Decode with DeepSeek's multi-head latent attention multiplies each head's query against the
    shared latent (rank r plus the RoPE part d_r) instead of per-head keys and values: far fewer
    bytes per token, but every head does work over the latent, so decode attention becomes
    compute-bound and grows with the context.

    Parameters
    ----------
    layers, heads : numeric
        L and query heads a [-].
    qk_head_dim, v_head_dim : numeric
        per-head query/key and value widths [-].
    context_tokens : numeric
        c, tokens attended (after any sliding window) [tokens].
    mla_absorbed : bool or array
        MLA with the up-projections absorbed into the query and output (decode).
    kv_lora_rank, qk_rope_head_dim : numeric
        r and d_r [-].

    Returns
    -------
    numeric
        [FLOP].

    References
    ----------
    .. [1] DeepSeek-AI 2024, "DeepSeek-V2", arXiv:2405.04434 §2.1.2-2.1.3 (low-rank KV joint
       compression; W_UK absorbed into W_Q and W_UV into W_O for inference). [arxiv-2405.04434]
    .. [2] DeepSeek-V3 inference/model.py, class MLA, ``attn_impl == "absorb"`` (scores against
       ``kv_cache`` of width kv_lora_rank and ``pe_cache`` of width qk_rope_head_dim).
       [deepseek-v3-inference-model]

    Examples
    --------
    DeepSeek-V3 decode at 4,096 tokens of context: 2 x 61 x 128 x (1024 + 64) x 4096 = 69.6 GFLOP per
    token, about as much as its 37.6B active weights (75 GFLOP) (derived).

    >>> round(float(attention_core_flops_per_token(61, 128, 192, 128, 4096, True, 512, 64)) / 1e9, 1)
    69.6
    """
    per_head = np.where(mla_absorbed, 2.0 * np.asarray(kv_lora_rank, dtype=float) + qk_rope_head_dim,
                        np.asarray(qk_head_dim, dtype=float) + v_head_dim)
    return 2.0 * layers * heads * per_head * context_tokens


def accepted_tokens_per_step(draft_tokens, acceptance):
    """Tokens a sequence advances per verification step of speculative decoding [tokens].

    .. math:: \\tau = \\frac{1 - \\alpha^{\\gamma + 1}}{1 - \\alpha} \\quad (\\gamma + 1 \\text{ for } \\alpha = 1)

    Each of the ``gamma`` draft tokens is accepted with probability alpha while all before it
    were; the target model adds one token of its own at the first rejection (or after the last
    draft). ``gamma = 0``: 1 (no speculation).

    Parameters
    ----------
    draft_tokens : numeric
        gamma, draft tokens per step [tokens].
    acceptance : numeric
        alpha, probability a draft token is accepted [-].

    Returns
    -------
    numeric
        [tokens/step].

    References
    ----------
    .. [1] Leviathan, Kalman, Matias 2023, "Fast Inference from Transformers via Speculative
       Decoding", ICML, arXiv:2211.17192, §3.1, Eq. (1). [arxiv-2211.17192]

    Examples
    --------
    DeepSeek-V3 reports 85-90% acceptance of its one MTP token (§5.4.3): 1.85-1.9 tokens per step,
    "1.8 times TPS".

    >>> round(float(accepted_tokens_per_step(1, 0.85)), 2)
    1.85
    """
    a = np.clip(np.asarray(acceptance, dtype=float), 0.0, 1.0)
    g = np.asarray(draft_tokens, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = (1.0 - a ** (g + 1.0)) / (1.0 - a)
    return np.where(a >= 1.0, g + 1.0, np.where(g > 0, tau, 1.0))


def prefill_step_share(batch, prompt_tokens, output_tokens, chunk_tokens, tokens_per_step=1.0):
    """Share of a replica's engine steps that carry a prefill chunk, in steady state [-].

    .. math:: f = \\min\\bigl(1,\\; B\\,\\tau\\,p / (o\\,C)\\bigr)

    ``B`` sequences each advance ``tau`` tokens a step, so ``B tau / o`` requests finish and as many
    prompts of ``p`` tokens must be prefilled per step; the engine takes at most ``C`` prompt
    tokens a step (its chunk), so that share of steps carries a chunk and the others decode only.

    Parameters
    ----------
    batch : numeric
        B, sequences decoding [sequences].
    prompt_tokens, output_tokens : numeric
        p and o per request [tokens].
    chunk_tokens : numeric
        C, prompt tokens one step takes at most [tokens].
    tokens_per_step : numeric
        tau, tokens a sequence advances per step (:func:`accepted_tokens_per_step`) [tokens].

    Returns
    -------
    numeric
        [-].

    References
    ----------
    .. [1] Agrawal et al. 2024, Sarathi-Serve, arXiv:2403.02310 §4.2-4.3 (chunked prefills within a
       token budget per iteration). [arxiv-2403.02310]

    Examples
    --------
    16 sequences of 8,192-in/1,024-out with a chunk of 8,192: one step in 64 carries a prompt.

    >>> float(prefill_step_share(16, 8192, 1024, 8192))
    0.015625
    """
    return np.minimum(1.0, np.asarray(batch, dtype=float) * tokens_per_step * prompt_tokens
                      / (output_tokens * chunk_tokens))


def kv_transfer_time_s(prompt_tokens, kv_bytes_per_token, link_gb_per_s):
    """Time to move a prompt's KV cache from a prefill replica to a decode replica [s].

    .. math:: t = p\\,k / B

    Parameters
    ----------
    prompt_tokens : numeric
        p [tokens].
    kv_bytes_per_token : numeric
        k, whole model [B/token].
    link_gb_per_s : numeric
        B, bandwidth between the two replicas, one direction [GB/s].

    Returns
    -------
    numeric
        [s].

    References
    ----------
    .. [1] Zhong et al. 2024, "DistServe: Disaggregating Prefill and Decoding for Goodput-optimized
       Large Language Model Serving", OSDI '24, arXiv:2401.09670 §3.3 (KV transmission between the
       phases). [arxiv-2401.09670]

    Examples
    --------
    An 8,192-token prompt of Llama 3.1 70B in FP8 (163,840 B/token, 1.34 GB) over 8 x 400 Gb/s
    (400 GB/s): 3.4 ms.

    >>> round(float(kv_transfer_time_s(8192, 163840, 400.0)) * 1e3, 1)
    3.4
    """
    return np.asarray(prompt_tokens, dtype=float) * kv_bytes_per_token / (np.asarray(link_gb_per_s) * BYTES_PER_GB)
