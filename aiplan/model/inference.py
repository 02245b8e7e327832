"""Inference: weights, KV cache, concurrency, continuous batching (chunked prefill + decode), latency.

The serving model is continuous batching with chunked prefill: every engine step decodes one
token for each of the ``B`` running sequences and processes a chunk of waiting prompts. In
steady state each request needs ``p`` prompt tokens and ``o`` output tokens, so a step carries
``B p / o`` prompt tokens beside its ``B`` decode tokens. A step reads the weights once (shared
by every token of the step) and the KV cache of the running sequences; it is memory-bound at
small batch and compute-bound at large batch. The efficiencies, overheads and latencies are
calibrated constants (``data/calibration/serving_constants.csv``), passed in as arguments.
"""

from __future__ import annotations

import numpy as np

from ..core.units import BYTES_PER_GB
from .collectives import scale_up_gb_per_s, tp_allreduce_s
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


def prefill_time_s(prompt_tokens, flops_per_token, peak_flops_per_s, efficiency, tensor_parallel=1):
    """Compute-bound prefill time of one prompt on a replica of ``tensor_parallel`` GPUs [s].

    .. math:: t = p\\,f / (t_p\\,P\\,\\eta_{pre})

    Parameters
    ----------
    prompt_tokens : numeric
        p [tokens].
    flops_per_token : numeric
        f, forward FLOPs per prompt token incl. attention [FLOP/token].
    peak_flops_per_s : numeric
        P, dense peak per GPU at the compute precision [FLOP/s].
    efficiency : numeric
        eta_pre, the calibrated prefill efficiency (share of P reached) [-].
    tensor_parallel : numeric
        t_p [GPUs].

    Returns
    -------
    numeric
        [s].

    References
    ----------
    .. [1] Pope et al. 2022, "Efficiently Scaling Transformer Inference", arXiv:2211.05102 §2
       (prefill is compute-bound, decode memory-bound). [arxiv-2211.05102]
    .. [2] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Compute Requirements" (forward 2N FLOPs per token). [eleuther-transformer-math-101]
    """
    return prompt_tokens * flops_per_token / (tensor_parallel * peak_flops_per_s * efficiency)


def memory_time_s(bytes_read, memory_bw_gb_per_s, efficiency):
    """Time to stream ``bytes_read`` from GPU memory at a calibrated share of the datasheet bandwidth [s].

    .. math:: t = S / (B_{mem}\\,\\eta_{bw})

    Parameters
    ----------
    bytes_read : numeric
        bytes read per GPU [B].
    memory_bw_gb_per_s : numeric
        datasheet memory bandwidth [GB/s].
    efficiency : numeric
        eta_bw, calibrated share of the bandwidth reached by decode [-].

    Returns
    -------
    numeric
        [s].

    References
    ----------
    .. [1] Williams, Waterman, Patterson 2009, "Roofline: An Insightful Visual Performance Model
       for Multicore Architectures", CACM 52(4). [doi-10.1145-1498765.1498785]
    """
    return bytes_read / (memory_bw_gb_per_s * BYTES_PER_GB * efficiency)


def compute_time_s(flops, peak_flops_per_s, efficiency, tensor_parallel=1):
    """Time of ``flops`` spread over ``tensor_parallel`` GPUs at a calibrated efficiency [s].

    .. math:: t = F / (t_p\\,P\\,\\eta)

    Parameters
    ----------
    flops : numeric
        FLOPs of the replica [FLOP].
    peak_flops_per_s : numeric
        dense peak per GPU at the compute precision [FLOP/s].
    efficiency : numeric
        share of the peak reached (prefill or decode efficiency) [-].
    tensor_parallel : numeric
        [GPUs].

    Returns
    -------
    numeric
        [s].

    References
    ----------
    .. [1] Williams, Waterman, Patterson 2009, "Roofline", CACM 52(4). [doi-10.1145-1498765.1498785]
    """
    return flops / (tensor_parallel * peak_flops_per_s * efficiency)


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
    """
    return np.floor(kv_capacity_gb_per_gpu * BYTES_PER_GB / (kv_bytes_per_token_per_gpu * mean_tokens))


def chunked_prefill_tokens_per_step(batch, prompt_tokens, output_tokens):
    """Prompt tokens a continuous-batching step processes beside its decode tokens, in steady state.

    .. math:: b\\,p / o

    Every request needs ``p`` prompt tokens and ``o`` decode steps; with ``b`` sequences decoding,
    ``b/o`` requests finish per step and as many prompts must be prefilled, in chunks that ride
    along with the decode tokens (chunked prefill).

    Parameters
    ----------
    batch : numeric
        b, running sequences [sequences].
    prompt_tokens, output_tokens : numeric
        p and o per request [tokens].

    Returns
    -------
    numeric
        [tokens/step].

    References
    ----------
    .. [1] Agrawal et al. 2024, "Taming Throughput-Latency Tradeoff in LLM Inference with
       Sarathi-Serve", arXiv:2403.02310 §4 (chunked prefills, stall-free batching). [arxiv-2403.02310]
    .. [2] Yu et al. 2022, "Orca: A Distributed Serving System for Transformer-Based Generative
       Models", OSDI '22 §3 (iteration-level scheduling). [osdi22-orca]
    """
    return batch * prompt_tokens / output_tokens


def weight_bytes_read_per_step(dense_bytes, expert_bytes, experts, active_experts, tokens):
    """Weight bytes one step reads: all dense weights and the routed experts its tokens touch [B].

    .. math:: W_d + W_e\\,\\bigl(1 - (1 - k/E)^n\\bigr)

    Parameters
    ----------
    dense_bytes : numeric
        W_d, bytes of every weight that is not a routed expert (per GPU) [B].
    expert_bytes : numeric
        W_e, bytes of all routed experts (per GPU) [B].
    experts, active_experts : numeric
        E and k (E = 1: dense model) [-].
    tokens : numeric
        n, tokens in the step (decode and prompt) [tokens].

    Returns
    -------
    numeric
        [B].

    References
    ----------
    .. [1] Balls-into-bins expectation of :func:`experts_touched` (uniform routing, Fedus et al.
       2021, arXiv:2101.03961 §2.2). [arxiv-2101.03961]
    """
    routed = np.maximum(experts, 1)
    share = np.where(np.asarray(experts) > 1, experts_touched(routed, active_experts, tokens) / routed, 1.0)
    return dense_bytes + expert_bytes * share


def tp_allreduce_time_s(tokens, hidden, layers, tensor_parallel, scale_up_bidirectional_gb_per_s, latency_s,
                        bytes_per_element=2.0, allreduces_per_layer=2):
    """Tensor-parallel all-reduce time of one forward step of ``tokens`` tokens [s].

    .. math:: 2L\\,\\bigl(\\alpha + (n\\,h\\,b/B_{up})\\,2(t-1)/t\\bigr) \\quad (0 \\text{ for } t = 1)

    Two all-reduces per layer (after attention and after the MLP) of the step's activations,
    each paying a fixed latency alpha and the ring bus-bandwidth time on the scale-up link.

    Parameters
    ----------
    tokens : numeric
        n, tokens in the step [tokens].
    hidden, layers : numeric
        h and L [-].
    tensor_parallel : numeric
        t [GPUs].
    scale_up_bidirectional_gb_per_s : numeric
        datasheet (bidirectional) scale-up bandwidth per GPU; one direction is half [GB/s].
    latency_s : numeric
        alpha, calibrated fixed cost of one all-reduce [s].
    bytes_per_element : numeric
        activation bytes (bf16: 2) [B].
    allreduces_per_layer : numeric
        forward all-reduces per layer [-].

    Returns
    -------
    numeric
        [s].

    References
    ----------
    .. [1] Shoeybi et al. 2019, Megatron-LM, arXiv:1909.08053 §3, Fig. 4 (two all-reduces per
       layer in the forward pass). [arxiv-1909.08053]
    .. [2] NVIDIA nccl-tests, ``doc/PERFORMANCE.md``, "AllReduce" (bus bandwidth 2(n-1)/n).
       [nvidia-nccl-tests-performance-md]
    """
    return tp_allreduce_s(tokens, hidden, allreduces_per_layer * np.asarray(layers), tensor_parallel,
                          scale_up_gb_per_s(scale_up_bidirectional_gb_per_s), bytes_per_element, latency_s)


def step_overhead_s(layers, batch, fixed_s_per_layer, per_sequence_s_per_layer):
    """Cost of a continuous-batching step outside its roofline terms [s].

    .. math:: t_0 = L\\,(c_{step} + c_{seq} B)

    A fixed part per layer (kernel launches, synchronisation, scheduling) and a part per running
    sequence per layer (attention kernels, sampling and the engine's bookkeeping of each
    sequence), both calibrated (``step_overhead_s_per_layer``, ``sequence_overhead_s_per_layer``
    in ``data/calibration/serving_constants.csv``).

    Parameters
    ----------
    layers : numeric
        L, transformer layers [-].
    batch : numeric
        B, sequences in the step [-].
    fixed_s_per_layer, per_sequence_s_per_layer : numeric
        c_step [s], c_seq [s per sequence].

    Returns
    -------
    numeric
        [s].

    References
    ----------
    .. [1] (form: judgement; constants fitted on published small- and large-batch serving tables,
       e.g. AMD's MI300X/H100 latency tables of 2025 [rocm-blog-mi300x-inference-best-practices-2025-01;
       rocm-vllm-dev-docker-readme-2025-06-11])
    """
    return layers * (fixed_s_per_layer + per_sequence_s_per_layer * batch)


def serving_step_time_s(weights_s, compute_s, kv_read_s, comm_s, overhead_s):
    """Time of one continuous-batching step [s].

    .. math:: \\max(t_W, t_{comp}) + t_{KV} + t_{comm} + t_0

    The linear layers of a step run the decode tokens and the prompt chunk through the same
    matrix multiplications: they take the longer of reading the weights and computing. Decode
    attention then reads every running sequence's KV cache (memory-bound, in kernels of its
    own, so its time adds); tensor-parallel communication and the step's overhead
    (:func:`step_overhead_s`) add too.

    Parameters
    ----------
    weights_s : numeric
        time to read the weights the step touches [s].
    compute_s : numeric
        time to compute the step's decode and prompt tokens (linear layers and prompt attention) [s].
    kv_read_s : numeric
        time to read the KV cache of the running sequences [s].
    comm_s : numeric
        tensor-parallel communication, not overlapped [s].
    overhead_s : numeric
        t_0, calibrated cost of a step outside the roofline terms (:func:`step_overhead_s`) [s].

    Returns
    -------
    numeric
        [s].

    References
    ----------
    .. [1] Williams, Waterman, Patterson 2009, "Roofline", CACM 52(4) (per-operator roofline).
       [doi-10.1145-1498765.1498785]
    .. [2] Agrawal et al. 2024, Sarathi-Serve, arXiv:2403.02310 §3 (decodes piggyback on the
       prefill chunk's matrix multiplications; attention is computed per request). [arxiv-2403.02310]
    .. [3] Pope et al. 2022, "Efficiently Scaling Transformer Inference", arXiv:2211.05102 §2
       (decode attention is bound by the KV-cache reads). [arxiv-2211.05102]
    """
    return np.maximum(weights_s, compute_s) + kv_read_s + comm_s + overhead_s


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
    """
    rho = np.clip(np.asarray(utilisation, dtype=float), 1e-12, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.asarray(mean_wait_s, dtype=float) / rho * np.log(rho / (1.0 - quantile))
    return np.where(rho > 1.0 - quantile, t, 0.0)


def time_to_first_token_s(wait_s, prefill_s, step_s):
    """Time to the first output token of a request [s].

    .. math:: W + t_{prefill}(p) + t_{step}

    It waits for the prefills ahead of it (:func:`prefill_wait_s`), its prompt is prefilled at
    the replica's prefill rate, and the step that produces its first token completes.

    Parameters
    ----------
    wait_s : numeric
        queueing for the prefill (mean or a quantile) [s].
    prefill_s : numeric
        prefill time of the prompt (:func:`prefill_time_s`) [s].
    step_s : numeric
        step time at the running batch (:func:`serving_step_time_s`) [s].

    Returns
    -------
    numeric
        [s].

    References
    ----------
    .. [1] Agrawal et al. 2024, Sarathi-Serve, arXiv:2403.02310 §2.3 (TTFT is dominated by the
       prefill, queueing included; TPOT by the decode steps). [arxiv-2403.02310]
    """
    return wait_s + prefill_s + step_s


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
