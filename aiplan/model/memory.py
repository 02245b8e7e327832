"""Training and fine-tuning memory per GPU: model states (ZeRO), activations (Korthikanti)."""

from __future__ import annotations

import numpy as np

from ..core.units import (
    BITS_PER_BYTE,
    BYTES_PER_ELEMENT,
    BYTES_PER_GB,
    MASTER_WEIGHT_BYTES_PER_PARAM,
    NF4_BITS_PER_PARAM,
    NF4_DOUBLE_QUANT_OVERHEAD_BITS_PER_PARAM,
    OPTIMIZER_BYTES_PER_PARAM,
    RULE_OF_THUMB_BYTES_PER_PARAM,
)
from .params import lora_params, plan_method, plan_param_counts, recompute_code, value_or

# =============================================================================
# Training memory: model states (ZeRO), activations (Korthikanti)
# =============================================================================


def weight_bytes_per_param(precision):
    """Bytes per parameter of the training weights: fp32 4, fp16/bf16 2, fp8 1.

    fp8 assumes FP8 weights for the GEMMs (e.g. Transformer Engine ``fp8_model_init``), with the
    fp32 master copy in the optimizer state (judgement: recipes that keep bf16 weights need 2).

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
    .. [1] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Model Parameters": pure fp32 4 B/param, fp16 2,
       mixed precision 2 B/param (the fp32 copy is counted in the optimizer). [eleuther-transformer-math-101]

    Examples
    --------
    Transformer Math 101, "Model Parameters": 2 bytes in mixed (bf16) precision, 4 in pure fp32.

    >>> weight_bytes_per_param("bf16"), weight_bytes_per_param("fp32")
    (2.0, 4.0)
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
    .. [1] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Gradients": fp32 4 B/param, fp16 2 B/param
       ("usually matches the model dtype"). [eleuther-transformer-math-101]
    .. [2] Rajbhandari et al. 2019, "ZeRO", arXiv:1910.02054, §3.1: fp16 gradients 2 Psi. [arxiv-1910.02054]

    Examples
    --------
    fp32 gradients 4 bytes (Transformer Math 101, "Gradients"); FP8 recipes keep bf16 gradients, 2.

    >>> gradient_bytes_per_param("fp32"), gradient_bytes_per_param("fp8")
    (4.0, 2.0)
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
    .. [1] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Optimizer States"; Rajbhandari et al. 2019, "ZeRO",
       arXiv:1910.02054, §3.1 (K = 12). [eleuther-transformer-math-101;arxiv-1910.02054]
    .. [2] Shazeer & Stern 2018, "Adafactor: Adaptive Learning Rates with Sublinear Memory Cost",
       arXiv:1804.04235 §3 (factored second moment) and §4 (beta1 = 0: no momentum). [arxiv-1804.04235]

    Examples
    --------
    ZeRO §3.1: K = 12 for mixed-precision Adam (fp32 master, momentum and variance); 8-bit Adam
    4 + 1 + 1 = 6; pure fp32 Adam keeps no separate master copy, 8.

    >>> [optimizer_bytes_per_param(o, p) for o, p in (("adamw", "bf16"), ("adamw-8bit", "bf16"), ("adamw", "fp32"))]
    [12.0, 6.0, 8.0]
    """
    state = OPTIMIZER_BYTES_PER_PARAM[optimizer]
    if optimizer == "adafactor":
        state = state + 8.0 / hidden
    return state - (MASTER_WEIGHT_BYTES_PER_PARAM if precision == "fp32" else 0.0)


def checkpoint_weight_bytes_per_param(precision):
    """Bytes per parameter of the weights a checkpoint saves: fp32 4, otherwise 2 [B/param].

    Mixed-precision training (fp16/bf16, and fp8, whose GEMM weights are cast from the master copy)
    saves 16-bit weights; the fp32 master copy is part of the optimizer state
    (:func:`optimizer_bytes_per_param`).

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
    .. [1] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Model Parameters": mixed precision stores
       2 B/param of weights plus the fp32 copy in the optimizer state. [eleuther-transformer-math-101]

    Examples
    --------
    Mixed-precision training (fp8 included) saves 16-bit weights, pure fp32 training 4-byte ones.

    >>> checkpoint_weight_bytes_per_param("fp8"), checkpoint_weight_bytes_per_param("fp32")
    (2.0, 4.0)
    """
    return BYTES_PER_ELEMENT["fp32" if precision == "fp32" else "bf16"]


def resumable_checkpoint_bytes_per_param(precision, optimizer, hidden=4096):
    """Bytes per parameter of a checkpoint training can resume from: weights + optimizer state [B/param].

    Gradients are not saved. Mixed-precision AdamW: 2 + 12 = 14 B/param; pure fp32 AdamW: 4 + 8.

    Parameters
    ----------
    precision : str
        fp32 | fp16 | bf16 | fp8.
    optimizer : str
        adamw | adamw-8bit | sgd | adafactor.
    hidden : numeric
        model width, for Adafactor's factored statistics [-].

    Returns
    -------
    numeric
        [B/param].

    References
    ----------
    .. [1] (judgement: a restart checkpoint holds the weights and the optimizer state but not the
       gradients, which are recomputed in the first step after a restart.)
    .. [2] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Model Parameters" and "Optimizer States". [eleuther-transformer-math-101]

    Examples
    --------
    Mixed-precision AdamW: 2 (weights) + 12 (optimizer state, ZeRO's K) = 14 B/param, two bytes short
    of the 16 B/param of training memory (no gradients); pure fp32 AdamW: 4 + 8 = 12.

    >>> resumable_checkpoint_bytes_per_param("bf16", "adamw"), resumable_checkpoint_bytes_per_param("fp32", "adamw")
    (14.0, 12.0)
    """
    return checkpoint_weight_bytes_per_param(precision) + optimizer_bytes_per_param(optimizer, precision, hidden)


def activation_bytes_per_element(precision):
    """Bytes per stored activation element: 4 for pure fp32 training, else 2 (16-bit activations) [B].

    FP8 recipes (Transformer Engine) keep activations that are saved for the backward pass in
    16 bits, so fp8 training stores 2 bytes per element like bf16.

    Parameters
    ----------
    precision : str or array of str
        fp32 | fp16 | bf16 | fp8.

    Returns
    -------
    numeric
        [B].

    References
    ----------
    .. [1] Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
       Models", arXiv:2205.05198, §4.1: the activation formulas count 2-byte (16-bit) elements;
       fp32 doubles them. [arxiv-2205.05198]

    Examples
    --------
    Korthikanti's 2-byte elements for bf16 and fp8 training, twice that in pure fp32:

    >>> activation_bytes_per_element(["bf16", "fp8", "fp32"]).tolist()
    [2.0, 2.0, 4.0]
    """
    return np.where(np.asarray(precision) == "fp32", 4.0, 2.0)


def stage_layers(layers, pipeline_parallel):
    """Transformer layers of the busiest pipeline stage: ``ceil(L / p)`` [layers].

    ``p`` stages need not divide the ``L`` layers: the stages then hold ``ceil(L/p)`` or one layer
    fewer, and the busiest stage sets the step time and the memory per GPU. When ``p`` divides
    ``L`` every stage holds ``L/p``.

    Parameters
    ----------
    layers, pipeline_parallel : numeric
        L [layers], p [stages], 1 <= p <= L.

    Returns
    -------
    numeric
        [layers].

    References
    ----------
    .. [1] Llama Team, AI @ Meta 2024, "The Llama 3 Herd of Models", arXiv:2407.21783, §3.3.2 and
       Table 4: Llama 3 405B (126 layers, Table 3) was pre-trained with PP 16; "To balance the
       pipeline, we reduce one Transformer layer each from the first and the last stages,
       respectively." [arxiv-2407.21783]

    Examples
    --------
    Llama 3 405B, 126 layers on 16 pipeline stages (Llama Team 2024, Table 4): the busiest stage holds
    8 layers; with one layer fewer on the first and the last stage (§3.3.2), 2 x 7 + 14 x 8 = 126.
    GPT-3 175B's 96 layers on 8 stages (Korthikanti et al. 2022, Table 3 [arxiv-2205.05198]): 12 each.

    >>> int(stage_layers(126, 16)), 2 * 7 + 14 * 8, int(stage_layers(96, 8))
    (8, 126, 12)
    """
    return (np.asarray(layers) - 1) // pipeline_parallel + 1  # ceil(L / p) in whole layers


def pipeline_divisor(layers, pipeline_parallel):
    """What a GPU's share of the model is divided by along the pipeline: ``L / ceil(L/p)`` [-].

    The busiest stage holds :func:`stage_layers` of the ``L`` layers, so its weights, gradients,
    optimizer state and layer activations are those of ``1 / (L / ceil(L/p))`` of the model: ``p``
    when ``p`` divides ``L`` (the even split, exactly), less otherwise. The parameters outside the
    layers (embeddings, output layer, norms) are shared out with the layers, as in the even split.

    Parameters
    ----------
    layers, pipeline_parallel : numeric
        L [layers], p [stages].

    Returns
    -------
    numeric
        [-].

    References
    ----------
    .. [1] Llama Team 2024, arXiv:2407.21783, §3.3.2, Table 4 (PP 16 on 126 layers; the stages do
       not hold equal layers). [arxiv-2407.21783]

    Examples
    --------
    Llama 3 405B's 126 layers on 16 stages (Table 4): the busiest stage holds 8 layers, 1/15.75 of
    the model rather than 1/16; 96 layers on 8 stages divide evenly.

    >>> float(pipeline_divisor(126, 16)), float(pipeline_divisor(96, 8))
    (15.75, 8.0)
    """
    return np.asarray(layers) / stage_layers(layers, pipeline_parallel)


def model_state_gb(trainable_params, frozen_weight_bytes, weight_bytes_per_param, gradient_bytes_per_param,
                   optimizer_bytes_per_param, model_parallel, data_parallel, zero_stage):
    """Per-GPU weights, gradients and optimizer state under model parallelism and ZeRO.

    The model is first split over ``model_parallel`` = TP x PP (x EP for routed experts) GPUs (PP as
    the busiest stage's share, :func:`pipeline_divisor`, when the stages do not divide the layers);
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
       2 Psi + 14 Psi/N_d, 16 Psi/N_d. [arxiv-1910.02054]
    .. [2] Anthony, Biderman, Schoelkopf 2023, "Transformer Math 101",
       "Sharded Optimizers" and "3D Parallelism" (TP/PP
       divide the model). [eleuther-transformer-math-101]

    Examples
    --------
    ZeRO Fig. 1, stage 1 (P_os) for Psi = 7.5B on N_d = 64 GPUs: 2 Psi weights (15 GB) + 2 Psi
    gradients (15 GB) + 12 Psi / 64 optimizer state (1.41 GB) = the figure's 31.4 GB.

    >>> [round(float(x), 2) for x in model_state_gb(7.5e9, 0.0, 2, 2, 12, 1, 64, 1)]
    [15.0, 15.0, 1.41]
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
       N_d = 64: 120 / 31.4 / 16.6 / 1.9 GB). [arxiv-1910.02054]

    Examples
    --------
    Rajbhandari et al. 2019, Fig. 1: Psi = 7.5B, K = 12, N_d = 64 -> 120 / 31.4 / 16.6 / 1.9 GB per
    device for the baseline and ZeRO stages 1-3.

    >>> [round(float(zero_model_state_gb(7.5e9, 64, stage)), 1) for stage in range(4)]
    [120.0, 31.4, 16.6, 1.9]
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
       Models", arXiv:2205.05198 §4.1-4.2 Eqs. 1, 2, 4 and Table 2; the GPT-3 175B worked
       examples are derived with the paper's Table 3 configuration (s 2048, h 12288, a 96, t 8).
       [arxiv-2205.05198]
    .. [2] Dao et al. 2022, "FlashAttention", arXiv:2205.14135, §3 (no materialised attention
       matrix). [arxiv-2205.14135]

    Examples
    --------
    Korthikanti et al. 2022, Table 2 with the GPT-3 175B configuration of Table 3 (s 2,048, b 1,
    h 12,288, a 96, t 8) and sequence parallelism: ``sbh/t (34 + 5as/h)`` with 5as/h = 80 is
    358,612,992 B per layer; selective recomputation drops the 80 (``34 sbh/t`` = 106,954,752 B),
    the 70% saving of §5.

    >>> none = activation_bytes_per_layer(2048, 1, 12288, 96, 8, True, "none")
    >>> selective = activation_bytes_per_layer(2048, 1, 12288, 96, 8, True, "selective")
    >>> int(none), int(selective), round(float(1 - selective / none), 2)
    (358612992, 106954752, 0.7)
    """
    code = recompute_code(recompute)
    t = tensor_parallel
    sbh = 1.0 * seq_len * micro_batch * hidden
    score = np.where(flash_attention, 0.0, 5.0 * heads * seq_len / hidden)
    sp = np.asarray(sequence_parallel) & (np.asarray(t) > 1)
    none = np.where(sp, (34.0 + score) / t, 10.0 + 24.0 / t + score / t)
    selective = np.where(sp, 34.0 / t, 10.0 + 24.0 / t)
    coeff = np.where(code == 0, none, np.where(code == 1, selective, 2.0))
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
    .. [1] Korthikanti et al. 2022, arXiv:2205.05198, §4.3 (embeddings, dropout, output-layer
       activations). [arxiv-2205.05198]

    Examples
    --------
    GPT-3 175B (s 2,048, h 12,288, v 51,200, t 8), derived: the first of 8 pipeline stages holds the
    embedding dropout of 8 micro-batches, sbh/t x 8 = 25,165,824 B; without a pipeline the output
    layer adds 4 (1 + v/h): sbh/t x (1 + 4 x (1 + 51,200/12,288)) = 68,157,440 B.

    >>> [int(activation_extra_bytes(2048, 1, 12288, 51200, 8, p)) for p in (8, 1)]
    [25165824, 68157440]
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
    .. [1] Korthikanti et al. 2022, arXiv:2205.05198, §4.2.3, Eq. 5: "p micro-batches in
       flight". [arxiv-2205.05198]
    .. [2] Narayanan et al. 2021, arXiv:2104.04473, §2.2.1 (PipeDream-Flush / 1F1B). [arxiv-2104.04473]

    Examples
    --------
    Eight pipeline stages and 64 sequences of 2,048 tokens per step (64 micro-batches of one): 8 in
    flight (Eq. 5); a step of only 4 micro-batches keeps 4.

    >>> int(microbatches_in_flight(8, 64 * 2048, 2048, 1, 1)), int(microbatches_in_flight(8, 4 * 2048, 2048, 1, 1))
    (8, 4)
    """
    m = np.ceil(global_batch_tokens / (seq_len * micro_batch * np.maximum(data_parallel, 1)))
    return np.maximum(np.minimum(pipeline_parallel, m), 1)


def activation_gb(seq_len, micro_batch, hidden, heads, layers, vocab, tensor_parallel=1, pipeline_parallel=1,
                  sequence_parallel=False, recompute=0, flash_attention=False, in_flight=None,
                  bytes_per_element=2.0):
    """Activation memory per GPU of the first pipeline stage [GB].

    ``per layer x ceil(L/p) layers x in-flight micro-batches + extra``: the first stage, counted
    with the busiest stage's layers (:func:`stage_layers`; ``L/p`` when ``p`` divides ``L``); with ``p``
    micro-batches in flight and ``p`` dividing ``L`` this is the paper's ``L`` layers' worth (Eq. 5).
    Scaled by ``bytes_per_element / 2`` (fp32 activations double it).

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
    .. [1] Korthikanti et al. 2022, arXiv:2205.05198, Eqs. 1-6, §4.3. Worked example (derived,
       Eq. 4 x L with the Table 3 GPT-3 configuration): TP=8 + SP first stage 32.06 GiB. [arxiv-2205.05198]

    Examples
    --------
    GPT-3 175B (Korthikanti et al. 2022, Table 3: 96 layers, t 8, p 8) with sequence parallelism and
    selective recomputation, derived: 8 micro-batches in flight x 12 layers x 106,954,752 B
    (:func:`activation_bytes_per_layer`) + 25,165,824 B of embedding dropout = 10.29 GB (9.59 GiB).

    >>> round(float(activation_gb(2048, 1, 12288, 96, 96, 51200, 8, 8, True, "selective")), 2)
    10.29
    """
    if in_flight is None:
        in_flight = pipeline_parallel
    per_layer = activation_bytes_per_layer(seq_len, micro_batch, hidden, heads, tensor_parallel,
                                           sequence_parallel, recompute, flash_attention)
    total = per_layer * layers / pipeline_divisor(layers, pipeline_parallel) * in_flight
    total = total + activation_extra_bytes(seq_len, micro_batch, hidden, vocab, tensor_parallel, pipeline_parallel)
    return total * (bytes_per_element / 2.0) / BYTES_PER_GB


def usable_memory_gb(memory_gb, usable_memory_fraction):
    """GPU memory a job can use [GB].

    The rest goes to the CUDA context and library workspaces (cuBLAS, NCCL buffers, ~1-3 GB),
    allocator fragmentation and temporary buffers (ZeRO, arXiv:1910.02054, §3.2: a 6 GB fp32
    fused gradient buffer for a 1.5B model [arxiv-1910.02054]); ``cluster.usable_memory_fraction``
    defaults to 0.90 (judgement, plan.py).

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
    .. [1] Rajbhandari et al. 2019, "ZeRO", arXiv:1910.02054, §3.2 "residual memory" (temporary
       buffers, fragmentation). [arxiv-1910.02054]

    Examples
    --------
    An 80 GB GPU at the default 0.90 (judgement): 72 GB.

    >>> round(float(usable_memory_gb(80, 0.9)), 2)
    72.0
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
       [arxiv-2305.14314]

    Examples
    --------
    Dettmers et al. 2023: 4 + 0.127 bits = 0.516 B per parameter, so the base weights of the 65B
    model the paper fine-tunes on a single 48 GB GPU take 33.5 GB.

    >>> round(qlora_base_bytes_per_param(), 3), round(65e9 * qlora_base_bytes_per_param() / 1e9, 1)
    (0.516, 33.5)
    """
    return (NF4_BITS_PER_PARAM + NF4_DOUBLE_QUANT_OVERHEAD_BITS_PER_PARAM) / BITS_PER_BYTE


def finetune_split(plan, counts):
    """(trainable params, frozen weight bytes [B]) for the plan's fine-tuning method.

    LoRA: adapters train, the base is frozen at the training precision; QLoRA: the per-layer linear
    weights are frozen in NF4 + double quantisation, embeddings/norms stay 16-bit (as bitsandbytes
    quantises only ``nn.Linear`` layers of the blocks).
    """
    w = plan.workload
    method = plan_method(plan)
    if method == "full":
        return counts["params"], 0.0
    m = plan.model
    head_dim = m.head_dim or m.hidden // m.heads
    if m.attention == "mla":
        q_out = m.heads * (value_or(m.qk_nope_head_dim, head_dim) + value_or(m.qk_rope_head_dim))
        kv_out = m.kv_lora_rank + value_or(m.qk_rope_head_dim)
        o_in = m.heads * value_or(m.v_head_dim, head_dim)
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
    .. [1] ZeRO (Rajbhandari et al. 2019) §5, Fig. 1; Korthikanti et al. 2022, Eqs. 1-6;
       Transformer Math 101, "Memory Requirements", "Training"; QLoRA (Dettmers et al. 2023) §3.
       See the formula functions.
       [arxiv-1910.02054;arxiv-2205.05198;eleuther-transformer-math-101;arxiv-2305.14314]
    """
    w = plan.workload
    m = plan.model
    counts = counts or plan_param_counts(plan)
    precision = w["precision"]
    trainable, frozen = finetune_split(plan, counts)
    # full training: routed experts are split by EP
    experts = counts["params_experts"] if trainable == counts["params"] else 0.0
    return layout_memory_gb(
        trainable, frozen, experts, weight_bytes_per_param(precision), gradient_bytes_per_param(precision),
        optimizer_bytes_per_param(w["optimizer"], precision, m.hidden), tensor_parallel, pipeline_parallel,
        data_parallel, zero_stage, expert_parallel, w["seq_len"],
        w["micro_batch"] if micro_batch is None else micro_batch, w["global_batch_tokens"], m.hidden, m.heads,
        m.layers, m.vocab, plan.cluster.get("sequence_parallel", True),
        w["recompute"] if recompute is None else recompute, w.get("flash_attention", False),
        float(activation_bytes_per_element(precision)),
        usable_memory_gb(plan.gpu.capacity_gb, plan.cluster["usable_memory_fraction"]))


def layout_memory_gb(trainable, frozen, experts, weight_bytes, grad_bytes, optimizer_bytes, tensor_parallel,
                     pipeline_parallel, data_parallel, zero_stage, expert_parallel, seq_len, micro_batch,
                     global_batch_tokens, hidden, heads, layers, vocab, sequence_parallel, recompute,
                     flash_attention, act_bytes, usable_gb):
    """Per-GPU training memory of (arrays of) models and layouts: model states plus activations [GB].

    The one home of the sum that :func:`training_memory` (one plan, many layouts) and
    :func:`~aiplan.model.table.training_table` (many plans) both compute. Every argument
    broadcasts. The pipeline stages need not divide the layers: the GPU holds the busiest stage,
    ``ceil(layers / pipeline_parallel)`` layers (:func:`stage_layers`, :func:`pipeline_divisor`).

    Parameters
    ----------
    trainable, frozen, experts : numeric
        trainable parameters, frozen bytes (adapter fine-tuning), routed-expert parameters among
        the trainable ones (split by expert parallelism) [-, B, -].
    weight_bytes, grad_bytes, optimizer_bytes : numeric
        bytes per parameter [B].
    tensor_parallel, pipeline_parallel, data_parallel, zero_stage, expert_parallel : numeric
        the layout [-].
    seq_len, micro_batch, global_batch_tokens : numeric
        [tokens], [sequences], [tokens].
    hidden, heads, layers, vocab : numeric
        the architecture [-].
    sequence_parallel, flash_attention : bool
    recompute : str or int
        none/selective/full or 0/1/2.
    act_bytes : numeric
        bytes per activation element [B].
    usable_gb : numeric
        usable memory per GPU [GB].

    Returns
    -------
    dict of numpy arrays
        ``weights_gb``, ``gradients_gb``, ``optimizer_gb``, ``activations_gb``, ``per_gpu_gb``,
        ``usable_gb`` [GB] and ``fits``.

    References
    ----------
    .. [1] ZeRO (Rajbhandari et al. 2019) §5, Fig. 1; Korthikanti et al. 2022, Eqs. 1-6.
       [arxiv-1910.02054;arxiv-2205.05198]

    Examples
    --------
    Llama-2-7B-like (6.74e9 parameters, 32 layers, hidden 4,096) trained in BF16 with AdamW on 8
    GPUs, ZeRO-1, one 4,096-token sequence per micro-batch, selective recomputation: 13.5 GB of
    weights, 13.5 GB of gradients and 12 x 6.74e9 / 8 = 10.1 GB of optimizer states per GPU.

    >>> m = layout_memory_gb(6.74e9, 0.0, 0.0, 2, 2, 12, 1, 1, 8, 1, 1, 4096, 1, 4096 * 8, 4096, 32, 32,
    ...                      32000, True, "selective", False, 2.0, 72.0)
    >>> [round(float(m[k]), 1) for k in ("weights_gb", "gradients_gb", "optimizer_gb")]
    [13.5, 13.5, 10.1]
    """
    tp, pp, dp = (np.asarray(x) for x in (tensor_parallel, pipeline_parallel, data_parallel))
    ep = np.asarray(expert_parallel)
    stages = pipeline_divisor(layers, pp)  # the busiest stage's share of the model: pp when pp divides the layers
    dense = model_state_gb(np.asarray(trainable) - experts, frozen, weight_bytes, grad_bytes, optimizer_bytes,
                           tp * stages, dp, zero_stage)
    if not np.ndim(experts) and experts == 0:  # a dense model: no expert states to add
        weights, grads, opt = dense
    else:
        exp = model_state_gb(experts, 0.0, weight_bytes, grad_bytes, optimizer_bytes, tp * stages * ep,
                             np.maximum(dp // np.maximum(ep, 1), 1), zero_stage)
        weights, grads, opt = (a + b for a, b in zip(dense, exp))
    in_flight = microbatches_in_flight(pp, global_batch_tokens, seq_len, micro_batch, dp)
    act = activation_gb(seq_len, micro_batch, hidden, heads, layers, vocab, tp, pp, sequence_parallel, recompute,
                        flash_attention, in_flight, act_bytes)
    per_gpu = weights + grads + opt + act
    return {"weights_gb": weights, "gradients_gb": grads, "optimizer_gb": opt, "activations_gb": act,
            "per_gpu_gb": per_gpu, "usable_gb": usable_gb, "fits": per_gpu <= usable_gb}


def rule_of_thumb_gb(params):
    """Rule of thumb: params x 2 bytes (FP16) x 4 (weights + gradients + 2x optimizer states) [GB].

    Whole model, not per GPU. It undercounts mixed-precision Adam (16-18 B/param: ZeRO §3.1,
    2 + 2 + 12 = 16 [arxiv-1910.02054]; Transformer Math 101, "Total Training Memory", weights 2 +
    optimizer 12 + gradients 2 = 16 [eleuther-transformer-math-101]) and ignores activations.

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
    .. [1] DCS Global, "AI Training Infrastructure - Quick Reference", "AI Training Infrastructure
       Sizing Rules of Thumb", GPU memory rule (a rule of thumb). [seed-ai-training-quick-reference]

    Examples
    --------
    A 7e9-parameter model: 7e9 x 2 B x 4 = 56 GB (ZeRO's 16 B/param would give 112 GB).

    >>> round(float(rule_of_thumb_gb(7e9)), 2)
    56.0
    """
    return params * RULE_OF_THUMB_BYTES_PER_PARAM / BYTES_PER_GB
