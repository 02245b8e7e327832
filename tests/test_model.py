"""Model step: reproductions of published / reference figures, contract keys, errors.

Every golden value names its source (bibliography id of data/sources.csv in brackets, and the location).
Derived reference values are recomputed from their published inputs, not by this package.
"""

from __future__ import annotations

import copy
import math

import pandas as pd
import pytest
from conftest import FINETUNE, INFERENCE, PLANS, PRETRAIN, make_plan, model_only
from numpy.testing import assert_allclose

from aiplan import PlanError, evaluate, load_plan
from aiplan import model as M
from aiplan.core.units import BYTES_PER_GIB
from aiplan.pipeline import RESULT_KEYS


def run_model(plan_dict):
    """The model step alone (describe + step): the layout comes from the plan."""
    return model_only(load_plan(copy.deepcopy(plan_dict)))


# --- parameters -------------------------------------------------------------------

# parameter counts derived from each model's Hugging Face config.json (paper tables where no config was read)
# [hf-llama-2-7b-hf-config;hf-llama-2-13b-hf-config;hf-llama-2-70b-hf-config;hf-meta-llama-3-8b-config]
# [hf-meta-llama-3-70b-config;hf-llama-3.1-8b-config;hf-qwen2.5-7b-config;hf-qwen2.5-72b-instruct-config]
# [arxiv-2310.06825;arxiv-2401.04088;arxiv-2407.21783]
DERIVED_PARAMS = {
    "llama-2-7b": 6_738_415_616,
    "llama-2-13b": 13_015_864_320,
    "llama-2-70b": 68_976_648_192,
    "llama-3-8b": 8_030_261_248,
    "llama-3-70b": 70_553_706_496,
    "llama-3.1-8b": 8_030_261_248,
    "llama-3.1-70b": 70_553_706_496,
    "llama-3.1-405b": 405_853_388_800,
    "mistral-7b": 7_241_732_096,
    "mixtral-8x7b": 46_702_792_704,
    "qwen2.5-7b": 7_615_616_512,
    "qwen2.5-72b": 72_706_203_648,
}


@pytest.mark.parametrize("model_id, expected", DERIVED_PARAMS.items())
def test_params_reproduce_reference_derived_counts(catalog, model_id, expected):
    assert M.model_param_counts(catalog.models[model_id])["params"] == expected


def test_mixtral_active_params(catalog):
    # Mixtral 8x7B: 12,879,925,248 active, derived (Jiang et al. 2024, Table 1: top-2 of 8) [arxiv-2401.04088]
    assert M.model_param_counts(catalog.models["mixtral-8x7b"])["active_params"] == 12_879_925_248


def test_gpt3_params_formula(catalog):
    # 12*L*h^2 + 13*L*h + (50257+2048)*h = 174,604,234,752, derived (Brown et al. 2020, §2.1, Table 2.1)
    # [arxiv-2005.14165]
    # That formula leaves out the final LayerNorm (2h); the architecture count includes it.
    gpt3 = catalog.models["gpt-3-175b"]
    assert M.model_param_counts(gpt3, final_norm=False)["params"] == 174_604_234_752
    assert M.model_param_counts(gpt3)["params"] == 174_604_234_752 + 2 * 12288


#: models whose published total is rounded coarsely: Kimi K2's "1T" (the architecture gives 1.026T;
#: a 1.04T figure is only reported second-hand) [moonshotai-kimi-k2-readme]
ROUNDED_TOTALS = {"kimi-k2": 0.03}


def test_every_catalog_model_within_2pct_of_published(catalog):
    # models.csv params_published: the total the publisher states (paper, model card, announcement);
    # Llama 4 and Gemma 3 totals include a vision encoder the catalog does not model (< 1%)
    checked = 0
    for m in catalog.models.values():
        if m.params_published is None:  # no published total (DeepSeek-V3.1 reuses V3's architecture)
            continue
        derived = M.model_param_counts(m)["params"]
        assert abs(derived / m.params_published - 1) < ROUNDED_TOTALS.get(m.id, 0.02), m.id
        checked += 1
    assert checked >= 25


@pytest.mark.parametrize("model_id,total,active", [
    ("llama-4-maverick", 400e9, 17e9),  # Meta Llama 4 model card: 400B total, 17B active (128 experts)
    ("llama-4-scout", 109e9, 17e9),  # 109B total, 17B active (16 experts); totals include vision
    ("qwen3-235b-a22b", 235e9, 22e9),  # Qwen3 model card: 235B total, 22B activated
    ("deepseek-r1", 671e9, 37e9),  # DeepSeek-R1 README: 671B total, 37B activated
    ("gpt-oss-120b", 117e9, 5.1e9),  # OpenAI gpt-oss model card: 117B total, 5.1B active (excl. embeddings)
])
def test_moe_totals_and_active_counts(catalog, model_id, total, active):
    counts = M.model_param_counts(catalog.models[model_id])
    assert abs(counts["params"] / total - 1) < 0.02
    m = catalog.models[model_id]
    # gpt-oss counts active parameters without the input embedding; the kit's active count includes it
    active_kit = counts["active_params"] - (m.vocab * m.hidden if model_id.startswith("gpt-oss") else 0)
    assert abs(active_kit / active - 1) < 0.02


def test_interleaved_moe_halves_the_expert_layers(catalog):
    """Llama 4 Maverick: only every second layer is MoE (interleave_moe_layer_step 2) [meta-llama4-model-card]."""
    maverick = catalog.models["llama-4-maverick"]
    assert M.moe_layer_count(maverick.layers, 0, maverick.moe_layer_step) == 24
    assert M.moe_layer_count(61, 3, 1) == 58  # DeepSeek-V3: 3 leading dense layers


def test_local_layers_keep_only_their_window_of_kv_cache(catalog):
    """Gemma 3 27B: 10 of 62 layers global, the rest keep a 1,024-token window [google-gemma-gemma3-config]."""
    gemma = catalog.models["gemma-3-27b"]
    per_token = M.kv_cache_bytes_per_token(gemma.layers, gemma.kv_heads, gemma.head_dim, 2.0)
    f = M.local_layer_fraction(gemma)
    assert f == pytest.approx(52 / 62)
    kv_128k = M.kv_cache_gb(per_token, 1, 131072, gemma.sliding_window, f)
    expected = per_token / 62 * (10 * 131072 + 52 * 1024) / 1e9  # global layers: all tokens; local: the window
    assert kv_128k == pytest.approx(expected)
    assert kv_128k < M.kv_cache_gb(per_token, 1, 131072) / 5


def test_deepseek_v3_total_and_active(catalog):
    # 671B total, 37B activated per token (DeepSeek-AI 2024, Table 1; README) [arxiv-2412.19437;deepseek-v3-readme]
    counts = M.model_param_counts(catalog.models["deepseek-v3"])
    assert abs(counts["params"] / 671e9 - 1) < 0.02
    assert abs(counts["active_params"] / 37e9 - 1) < 0.02


def test_plan_given_params_override_architecture_count():
    # docs/contract.md: "When a model mapping gives params, that count is used"
    arch = {"params": 7.0e9, "layers": 32, "hidden": 4096, "heads": 32, "vocab": 32000, "ffn_hidden": 11008}
    r = evaluate(make_plan(PRETRAIN, model=arch))
    assert r["model"]["params"] == 7.0e9 and r["model"]["params_source"] == "plan"


# --- FLOPs ------------------------------------------------------------------------------


def test_training_flops_match_korthikanti_eq7():
    # model FLOPs per iteration 72 B L s h^2 (1 + s/(6h) + v/(12hL)) (Korthikanti et al. 2022, App. A, Eq. 7),
    # with the GPT-3 175B config of Table 3 (s 2048, v 51200) [arxiv-2205.05198];
    # Eq. 7 counts the 12Lh^2 layer weights + vh logits.
    L, h, a, s, v, B = 96, 12288, 96, 2048, 51200, 1
    eq7 = 72 * B * L * s * h**2 * (1 + s / (6 * h) + v / (12 * h * L))
    n = 12 * L * h**2 + v * h
    ours = B * s * M.training_flops_per_token(n, M.attention_flops_per_token_fwd(L, s, a, h // a, h // a))
    assert_allclose(ours, eq7, rtol=1e-12)


def test_hardware_over_model_flops_matches_korthikanti_table5():
    # 175B: MFU 51.4%, HFU 52.8% with selective recompute (Korthikanti et al. 2022, Table 5; ratio from
    # App. A Eq. 8 / Eq. 7) [arxiv-2205.05198]
    L, h, a, s, v = 96, 12288, 96, 2048, 51200
    n = 12 * L * h**2 + v * h
    attn = M.attention_flops_per_token_fwd(L, s, a, h // a, h // a)
    ratio = M.hardware_flops_per_token(n, attn, "selective") / M.training_flops_per_token(n, attn)
    assert 52.75 / 51.45 <= ratio <= 52.85 / 51.35  # the printed percentages are rounded to 0.1
    # full recompute repeats the forward pass: 8N instead of 6N (+ attention), i.e. 4/3
    # (Transformer Math 101, "Compute Requirements") [eleuther-transformer-math-101]
    assert_allclose(M.hardware_flops_per_token(n, attn, "full") / M.training_flops_per_token(n, attn), 4 / 3)


def test_chinchilla_tokens():
    # D = 20 P (Transformer Math 101, "Parameter vs Dataset Tradeoffs"; Hoffmann et al. 2022, §3)
    # [eleuther-transformer-math-101;arxiv-2203.15556]
    r = evaluate(copy.deepcopy(PRETRAIN))
    assert r["model"]["chinchilla_tokens"] == 20 * 6_738_415_616


# --- ZeRO -------------------------------------------------------------------------------


def test_zero_paper_figure_1():
    # Psi = 7.5B, K = 12, N_d = 64 -> 120 / 31.4 / 16.6 / 1.9 GB (Rajbhandari et al. 2019, §5, Fig. 1)
    # [arxiv-1910.02054]
    got = [float(M.zero_model_state_gb(7.5e9, 64, z)) for z in range(4)]
    assert [round(g, 1) for g in got] == [120.0, 31.4, 16.6, 1.9]


ZERO_GRID = """Psi,Nd,baseline_GB,P_os_GB,P_os+g_GB,P_os+g+p_GB
7.5B,1,120,120,120,120
7.5B,4,120,52.5,41.25,30
7.5B,16,120,35.62,21.56,7.5
7.5B,64,120,31.41,16.64,1.875
7.5B,256,120,30.35,15.41,0.469
7.5B,1024,120,30.09,15.10,0.117
128B,1,2048,2048,2048,2048
128B,64,2048,536,284,32
128B,1024,2048,513.5,257.75,2.0
1T,64,16000,4187.5,2218.75,250
1T,1024,16000,4011.72,2013.67,15.625"""


@pytest.mark.parametrize("row", ZERO_GRID.splitlines()[1:])
def test_zero_table1_grid(row):
    # a grid in the layout of ZeRO Table 1, derived from the §5.1-5.3 formulas with K = 12 (not copied from
    # the printed table) [arxiv-1910.02054]; each cell is compared at the precision it is printed with.
    psi_text, nd, *cells = row.split(",")
    psi = float(psi_text[:-1]) * {"B": 1e9, "T": 1e12}[psi_text[-1]]
    for stage, cell in enumerate(cells):
        decimals = len(cell.split(".")[1]) if "." in cell else 0
        got = float(M.zero_model_state_gb(psi, int(nd), stage))
        assert abs(got - float(cell)) <= 0.5 * 10**-decimals + 1e-9, (row, stage, got)


def test_model_state_bytes_per_param_by_optimizer():
    # mixed-precision AdamW 2 + 2 + 12 = 16 B/param; 8-bit Adam 2 + 2 + 6; SGD 2 + 2 + 8 (sums derived from
    # Transformer Math 101, "Model Parameters", "Optimizer States", "Gradients") [eleuther-transformer-math-101]
    for opt, total in (("adamw", 16), ("adamw-8bit", 10), ("sgd", 12)):
        per = (M.weight_bytes_per_param("bf16") + M.gradient_bytes_per_param("bf16")
               + M.optimizer_bytes_per_param(opt, "bf16"))
        assert per == total
    # pure fp32 AdamW: 4 weights + 4 grads + 8 moments (no separate master copy)
    assert M.weight_bytes_per_param("fp32") + M.gradient_bytes_per_param("fp32") + M.optimizer_bytes_per_param(
        "adamw", "fp32") == 16
    # Adafactor: factored second moment is O(1/h) per parameter (Shazeer & Stern 2018, §3) [arxiv-1804.04235]
    assert 4 < M.optimizer_bytes_per_param("adafactor", "bf16", 4096) < 4.01


# --- activations (Korthikanti) ------------------------------------------------------------------

S, B, H, A, T, L = 2048, 1, 12288, 96, 8, 96  # GPT-3 175B config (Korthikanti et al. 2022, Table 3) [arxiv-2205.05198]


@pytest.mark.parametrize("case, kwargs, per_layer, first_stage_gib", [
    # worked examples derived from Korthikanti et al. 2022, Eqs. 1-6 / Table 2, with the Table 3 GPT-3 config
    # [arxiv-2205.05198]
    ("no parallelism (Eq. 1)", dict(tensor_parallel=1, recompute="none"), 2_868_903_936, None),
    ("TP=8 (Eq. 2)", dict(tensor_parallel=T, recompute="none"), 578_813_952, None),
    ("TP=8 + SP (Eq. 4)", dict(tensor_parallel=T, sequence_parallel=True, recompute="none"), 358_612_992, 32.06),
    ("TP=8 + SP + selective (Table 2)", dict(tensor_parallel=T, sequence_parallel=True, recompute="selective"),
     106_954_752, 9.56),
    ("full recompute (Table 2)", dict(tensor_parallel=T, recompute="full"), 50_331_648, 4.50),
])
def test_korthikanti_worked_examples(case, kwargs, per_layer, first_stage_gib):
    assert M.activation_bytes_per_layer(S, B, H, A, **kwargs) == per_layer
    if first_stage_gib is not None:
        # first stage, 1F1B with p = 8 micro-batches in flight x L/p layers = L layers (Korthikanti et al.
        # 2022, §4.2.3, Eq. 5); global batch 64 sequences (Table 3) [arxiv-2205.05198]
        in_flight = M.microbatches_in_flight(8, 64 * S, S, B, 1)
        assert in_flight == 8
        total_gb = M.activation_gb(S, B, H, A, L, 51200, pipeline_parallel=8, in_flight=in_flight, **kwargs)
        layers_bytes = total_gb * 1e9 - M.activation_extra_bytes(S, B, H, 51200, T, 8)
        assert f"{layers_bytes / BYTES_PER_GIB:.3g}" == f"{first_stage_gib:.3g}"


def test_flash_attention_removes_score_term():
    # attention block 11sbh + 5as^2b (Korthikanti et al. 2022, §4.1, Eq. 1) [arxiv-2205.05198]: without the
    # stored s x s scores the layer is 34 sbh
    got = M.activation_bytes_per_layer(S, B, H, A, 1, recompute="none", flash_attention=True)
    assert got == 34 * S * B * H


def test_korthikanti_selective_saving():
    # selective recompute saves ~70% of GPT-3 activation memory with TP + SP (Korthikanti et al. 2022, §5)
    # [arxiv-2205.05198]
    none = M.activation_bytes_per_layer(S, B, H, A, T, True, "none")
    sel = M.activation_bytes_per_layer(S, B, H, A, T, True, "selective")
    assert round(1 - sel / none, 2) == 0.70


# --- pipeline stages that do not divide the layers ------------------------------------------------


def test_stage_layers_llama3_405b():
    # Llama 3 405B: 126 layers on PP 16 (Llama Team 2024, §3.3.2, Table 4) [arxiv-2407.21783]: the busiest stage
    # holds ceil(126/16) = 8 layers; the paper balances by "one Transformer layer" fewer on the first and last
    # stage: 2 x 7 + 14 x 8 = 126
    assert M.stage_layers(126, 16) == 8 and 2 * 7 + 14 * 8 == 126
    assert M.pipeline_divisor(126, 16) == 126 / 8


def test_stage_layers_hold_every_layer_and_no_more():
    # invariant: p stages of at most ceil(L/p) layers hold all L layers, and one layer fewer each would not
    for layers in range(1, 130):
        for pp in range(1, layers + 1):
            q = int(M.stage_layers(layers, pp))
            assert q * pp >= layers > (q - 1) * pp, (layers, pp, q)
            assert (M.pipeline_divisor(layers, pp) == pp) == (layers % pp == 0)


def _llama3_405b(tp=8, pp=16, dp=128):
    return load_plan(make_plan(PRETRAIN, model="llama-3.1-405b", workload={"seq_len": 8192,
                                                                        "global_batch_tokens": 16.0e6},
                               cluster={"gpu": "h100-sxm", "gpus": tp * pp * dp}))


def test_memory_of_uneven_stages_is_the_busiest_stage():
    # Llama 3 405B with TP 8, PP 16, DP 128 (Llama Team 2024, Table 4) [arxiv-2407.21783]: a GPU holds the
    # weights of the 8-layer stage, 8/126 of the model, not 1/16; bf16 weights 2 B/param (Transformer Math 101,
    # "Model Parameters") [eleuther-transformer-math-101]
    plan = _llama3_405b()
    params = M.plan_param_counts(plan)["params"]
    mem = M.training_memory(plan, 8, 16, 128, 0, 1, "selective")
    assert math.isclose(float(mem["weights_gb"]), params * 8 / 126 * 2 / 8 / 1e9, rel_tol=1e-12)
    assert float(mem["weights_gb"]) > params / 16 * 2 / 8 / 1e9
    # activations: 8 layers (Korthikanti et al. 2022, Table 2: 34 sbh/t with SP and selective recompute) x 16
    # micro-batches in flight (Eq. 5: p of them) + the first stage's embedding dropout, p sbh/t (§4.3)
    # [arxiv-2205.05198]
    sbh = 8192 * 1 * plan.model.hidden
    acts = 34 * sbh / 8 * 8 * 16 + 16 * sbh / 8
    assert math.isclose(float(mem["activations_gb"]), acts / 1e9, rel_tol=1e-12)
    assert math.isfinite(float(mem["per_gpu_gb"]))


def test_memory_with_stages_that_divide_the_layers_is_unchanged():
    # invariant: when PP divides the layers the busiest stage is the even split, params / (TP x PP) (ZeRO §5,
    # Fig. 1, with the model split by TP x PP: Transformer Math 101, "3D Parallelism") and L/p layers' activations
    # in flight (Korthikanti et al. 2022, Eq. 5) [arxiv-1910.02054;eleuther-transformer-math-101;arxiv-2205.05198],
    # to the last bit
    plan = load_plan(copy.deepcopy(PRETRAIN))
    m, w = plan.model, plan.workload
    trainable = M.plan_param_counts(plan)["params"]
    for tp in (1, 2, 4, 8):
        for pp in (p for p in range(1, m.layers + 1) if m.layers % p == 0):
            for zero in range(4):
                dp = max(256 // (tp * pp), 1)
                got = M.training_memory(plan, tp, pp, dp, zero, 1, "selective")
                even = M.model_state_gb(trainable, 0.0, 2.0, 2.0, 12.0, tp * pp, dp, zero)
                assert [float(got[k]) for k in ("weights_gb", "gradients_gb", "optimizer_gb")] == \
                    [float(x) for x in even]
                per_layer = M.activation_bytes_per_layer(w["seq_len"], 1, m.hidden, m.heads, tp, True, "selective")
                in_flight = M.microbatches_in_flight(pp, w["global_batch_tokens"], w["seq_len"], 1, dp)
                acts = per_layer * m.layers / pp * in_flight + M.activation_extra_bytes(w["seq_len"], 1, m.hidden,
                                                                                        m.vocab, tp, pp)
                assert float(got["activations_gb"]) == float(acts / 1e9)


# --- fine-tuning --------------------------------------------------------------------------------


def test_qlora_bytes_per_param():
    # NF4 4 bits + 0.127 bit/param after double quantisation (Dettmers et al. 2023, §3) [arxiv-2305.14314]
    assert_allclose(M.qlora_base_bytes_per_param(), (4 + 0.127) / 8)


def test_lora_params_llama2_7b_qv_rank8():
    # r (d_in + d_out) per adapted matrix (Hu et al. 2021, §4.1) [arxiv-2106.09685]; q and v of a 4096-wide
    # model at r = 8: 2 x 8 x 8192 x 32 layers = 4,194,304 (the 4.2M PEFT reports for Llama-2-7B q,v r=8)
    assert M.lora_params(32, 4096, 8, 4096, 4096, 4096, 11008, ["q", "v"]) == 4_194_304


def test_lora_and_qlora_memory_below_full():
    full = run_model(make_plan(FINETUNE, workload={"method": "full"}))["memory"]
    lora = run_model(FINETUNE)["memory"]
    qlora = run_model(make_plan(FINETUNE, workload={"method": "qlora"}))["memory"]
    # frozen base: no gradients/optimizer for it; QLoRA weights ~ 4 bits for the layer matrices
    assert lora["optimizer_gb"] < full["optimizer_gb"] / 100 and lora["gradients_gb"] < full["gradients_gb"] / 100
    assert qlora["weights_gb"] < lora["weights_gb"] / 2.5
    assert qlora["activations_gb"] == lora["activations_gb"] == full["activations_gb"]


# --- inference --------------------------------------------------------------------------------

# bf16 KV bytes per token, derived as 2 x layers x KV heads x head width x 2 B from each config / paper table
# [hf-llama-2-7b-hf-config;hf-llama-2-13b-hf-config;hf-llama-2-70b-hf-config;hf-meta-llama-3-8b-config]
# [arxiv-2407.21783;arxiv-2310.06825;arxiv-2401.04088;hf-qwen2.5-7b-instruct-config;hf-qwen2.5-72b-instruct-config]
# [tii-falcon-40b-config;arxiv-2005.14165;deepseek-v3-inference-model;deepseek-v3-config-671b]
KV_BYTES = {
    "llama-2-7b": 524_288, "llama-2-13b": 819_200, "llama-2-70b": 327_680, "llama-3-8b": 131_072,
    "llama-3.1-8b": 131_072, "llama-3-70b": 327_680, "llama-3.1-70b": 327_680, "llama-3.1-405b": 516_096,
    "mistral-7b": 131_072, "mixtral-8x7b": 131_072, "qwen2.5-7b": 57_344, "qwen2.5-72b": 327_680,
    "falcon-40b": 122_880, "gpt-3-175b": 4_718_592, "deepseek-v3": 70_272,
}


@pytest.mark.parametrize("model_id, expected", KV_BYTES.items())
def test_kv_bytes_per_token_table(model_id, expected):
    r = evaluate(make_plan(INFERENCE, model=model_id, workload={"prompt_tokens": 1000, "output_tokens": 200}))
    assert r["inference"]["kv_bytes_per_token"] == expected
    fp8 = evaluate(make_plan(INFERENCE, model=model_id, workload={"prompt_tokens": 1000, "output_tokens": 200,
                                                                   "kv_precision": "fp8"}))
    assert fp8["inference"]["kv_bytes_per_token"] == expected / 2  # FP8 KV cache: 1 byte per element (derived)


def test_kv_gib_columns():
    # derived: Llama 2 7B 2.0 / 4.0 / 16.0 / 64.0 GiB at 4k / 8k / 32k / 128k; DeepSeek-V3 MLA
    # 0.27 / 0.54 / 2.14 / 8.58; naive MHA-expanded DeepSeek-V3 4,997,120 B/token
    # [hf-llama-2-7b-hf-config;deepseek-v3-inference-model;deepseek-v3-config-671b]
    for ctx, gib in zip((4096, 8192, 32768, 131072), (2.0, 4.0, 16.0, 64.0)):
        assert M.kv_cache_gb(524_288, 1, ctx) * 1e9 / BYTES_PER_GIB == gib
    for ctx, gib in zip((4096, 8192, 32768, 131072), (0.27, 0.54, 2.14, 8.58)):
        assert round(M.kv_cache_gb(70_272, 1, ctx) * 1e9 / BYTES_PER_GIB, 2) == gib
    assert M.kv_cache_bytes_per_token(61, 128, (192 + 128) / 2, 2.0) == 4_997_120
    # Mistral rolling buffer caps the cache at the 4,096-token window: 0.5 GiB at 8k (Jiang et al. 2023,
    # §2 "Rolling Buffer Cache", Table 1) [arxiv-2310.06825]
    assert M.kv_cache_gb(131_072, 1, 8192, 4096) * 1e9 / BYTES_PER_GIB == 0.5


def test_inference_splits_weights_that_do_not_fit():
    # Llama 3.1 405B in bf16 (812 GB) cannot fit one 80 GB GPU; int4 (203 GB) needs 4 (72 GB usable each)
    r = evaluate(make_plan(INFERENCE, model="llama-3.1-405b", workload={"weight_precision": "int4"}))
    assert r["inference"]["tensor_parallel_min"] == 4 and r["memory"]["fits"]
    # int4 linear layers, the embeddings and output head (2 x 128,256 x 16,384 = 4.2B) kept at the checkpoint's bf16
    emb = 2 * 128_256 * 16_384
    assert r["memory"]["weights_gb"] == pytest.approx(((405_853_388_800 - emb) * 0.5 + emb * 2.0) / 1e9
                                                       / r["inference"]["tensor_parallel"])
    # bf16: 812 GB do not fit 8 GPUs of 77 GB usable; pipeline stages across two servers do (TP8 PP2)
    big = evaluate(make_plan(INFERENCE, model="llama-3.1-405b"))["inference"]
    assert big["gpus_per_replica"] >= 16 and big["pipeline_parallel"] >= 2
    one_node = evaluate(make_plan(INFERENCE, model="llama-3.1-405b", cluster={"pipeline_parallel": 1}))
    assert one_node["memory"]["fits"] is False


def test_inference_little_law_and_capacity():
    r = evaluate(copy.deepcopy(INFERENCE))
    inf = r["inference"]
    assert inf["replicas"] * inf["requests_per_s_per_replica"] >= 10  # serves requests_per_s
    assert inf["gpus"] == inf["replicas"] * inf["tensor_parallel"]
    assert_allclose(inf["requests_in_flight"], 10 * inf["latency_s"])
    assert inf["latency_s"] >= 500 * inf["tpot_ms"] / 1e3
    assert inf["concurrent_sequences"] <= inf["max_concurrent_sequences"]
    assert r["memory"]["per_gpu_gb"] <= r["memory"]["usable_gb"]


# --- training time and GPUs -------------------------------------------------------------------


def test_gpus_for_deadline_whole_nodes():
    # C = GPUs x peak x MFU x T (Transformer Math 101, "Compute Requirements") [eleuther-transformer-math-101].
    # 1e24 FLOPs, 989.5 TFLOP/s, MFU 0.4, 30 days -> 975.1 GPUs -> 976
    n = M.gpus_for_deadline(1e24, 989.5e12, 0.4, 30, 8)
    assert n == 976
    r = evaluate(PLANS / "example.yaml")
    assert r["compute"]["gpus"] % 8 == 0 and r["compute"]["meets_deadline"]
    assert r["compute"]["wall_clock_days"] <= 30


def test_gpu_hours_band_from_mfu():
    r = run_model(PRETRAIN)["compute"]  # wall clock at goodput 1 (the cluster step adds failures)
    assert r["gpu_hours_low"] < r["gpu_hours"] < r["gpu_hours_high"]
    assert_allclose(r["gpu_hours_low"] * r["mfu_high"], r["gpu_hours"] * r["mfu"])
    assert_allclose(r["wall_clock_days_no_failures"], r["gpu_hours"] / 256 / 24)


def test_rule_of_thumb_and_usable_memory():
    r = run_model(PRETRAIN)["memory"]
    # rule of thumb: params x 2 bytes x 4, whole model (DCS Global quick reference, GPU memory rule)
    # [seed-ai-training-quick-reference]
    assert r["rule_of_thumb_gb"] == pytest.approx(6_738_415_616 * 8 / 1e9)
    # A100 80GB: the driver reports 81,920 MiB = 85.9 GB (nvidia-smi) [modal-client-pr-2797]
    assert r["gpu_capacity_gb"] == pytest.approx(81920 * 2**20 / 1e9)
    assert r["usable_gb"] == pytest.approx(0.9 * 81920 * 2**20 / 1e9)
    assert r["fits"] == (r["per_gpu_gb"] <= r["usable_gb"])


def test_layout_read_from_cluster_result(pretrain):
    # the cluster step's layout wins over the plan's fallback
    result = model_only(pretrain, tensor_parallel=2, pipeline_parallel=2, data_parallel=64, zero_stage=3)
    expect = M.training_memory(pretrain, 2, 2, 64, 3)
    assert_allclose(result["memory"]["per_gpu_gb"], expect["per_gpu_gb"])


# --- contract ---------------------------------------------------------------------------------

TRAIN_KEYS = {"model": RESULT_KEYS["model"],
              "memory": ("weights_gb", "gradients_gb", "optimizer_gb", "activations_gb", "per_gpu_gb",
                         "gpu_capacity_gb", "fits", "rule_of_thumb_gb", "usable_gb"),
              "compute": RESULT_KEYS["compute"] + ("mfu_low", "mfu_high", "hardware_flops", "days_low",
                                                   "days_high", "tokens_per_s")}
INFER_KEYS = {"model": RESULT_KEYS["model"],
              "memory": ("weights_gb", "kv_cache_gb", "per_gpu_gb", "gpu_capacity_gb", "fits", "rule_of_thumb_gb"),
              "inference": RESULT_KEYS["inference"] + ("weights_gb", "tensor_parallel", "tokens_per_s_per_replica",
                                                       "requests_per_s_per_replica")}


@pytest.mark.parametrize("name", ["example", "finetune-lora", "moe-pretrain", "does-not-fit", "inference"])
def test_contract_keys_filled(name):
    r = evaluate(PLANS / f"{name}.yaml")
    keys = INFER_KEYS if r["plan"]["workload"]["kind"] == "inference" else TRAIN_KEYS
    for section, names in keys.items():
        for key in names:
            assert r[section][key] is not None, f"{section}.{key}"
    assert r["model"]["flops_per_token_basis"]


def test_does_not_fit_is_a_result():
    r = evaluate(PLANS / "does-not-fit.yaml")
    assert r["memory"]["fits"] is False  # 405B full fine-tune on 8 GPUs, ZeRO 0


@pytest.mark.parametrize("plan, message", [
    (make_plan(PRETRAIN, model={"layers": 4, "hidden": 1000, "heads": 3, "vocab": 100}),
     "model.heads: must divide hidden (1000)"),
    (make_plan(PRETRAIN, model={"layers": 4, "hidden": 1024, "heads": 16, "kv_heads": 3, "vocab": 100}),
     "model.kv_heads: must divide heads (16)"),
    (make_plan(PRETRAIN, cluster={"tensor_parallel": 3}), "cluster.tensor_parallel: must divide the model's heads"),
    (make_plan(PRETRAIN, model="llama-3.1-70b", cluster={"tensor_parallel": 16}),
     "cluster.tensor_parallel: must be at most gpus_per_node (8)"),
    (make_plan(FINETUNE, workload={"lora_rank": 5000}), "workload.lora_rank: must be at most the model's hidden"),
    (make_plan(PRETRAIN, model={"from": "mixtral-8x7b", "dense_layers": 40}),
     "model.dense_layers: must be at most layers (32), got 40"),
])
def test_bad_input_is_a_plan_error(plan, message):
    with pytest.raises(PlanError) as info:
        evaluate(plan)
    assert message in str(info.value)


# --- vectorised table ----------------------------------------------------------------------------


@pytest.mark.parametrize("precision", ["bf16", "fp32"])  # fp32: the calibrated MFU of the TF32 peak
def test_training_table_matches_per_plan_model(catalog, precision):
    plan = load_plan(make_plan(PRETRAIN, cluster={"tensor_parallel": 2, "pipeline_parallel": 2, "zero_stage": 2},
                               workload={"precision": precision}))
    r = model_only(plan)
    m = plan.model
    df = pd.DataFrame([{"params": r["model"]["params"], "layers": m.layers, "hidden": m.hidden, "heads": m.heads,
                        "vocab": m.vocab, "seq_len": 4096, "gpus": 256, "zero_stage": 2, "precision": precision,
                        "tokens": 2.0e12, "gpu": "a100-80gb", "tensor_parallel": 2, "pipeline_parallel": 2}] * 3)
    t = M.training_table(df, catalog)
    for key in ("weights_gb", "gradients_gb", "optimizer_gb", "activations_gb", "per_gpu_gb"):
        assert_allclose(t[key], r["memory"][key], rtol=1e-12)
    assert_allclose(t["gpu_hours"], r["compute"]["gpu_hours"], rtol=1e-12)
    assert_allclose(t["wall_clock_days"], r["compute"]["wall_clock_days_no_failures"], rtol=1e-12)
    assert not math.isnan(t["total_flops"].sum())


FP4_PLAN = make_plan(PRETRAIN, cluster={"gpu": "b200", "gpus": 64}, workload={"precision": "fp4"})


def test_fp4_training_runs_at_the_fp4_peak(catalog):
    # NVIDIA B200: dense FP4 9 PFLOP/s, twice its FP8 rate (the catalog row's datasheet figures)
    b200 = catalog.gpus["b200"]
    assert M.peak_flops_per_s(b200, "fp4") == 9000e12 == 2 * M.peak_flops_per_s(b200, "fp8")
    fp4, fp8 = evaluate(FP4_PLAN), evaluate(make_plan(FP4_PLAN, workload={"precision": "fp8"}))
    speedup = fp8["compute"]["wall_clock_days"] / fp4["compute"]["wall_clock_days"]
    # faster, but by less than the doubled peak: the calibrated MFU falls at the higher peak
    assert 1.0 < speedup < 2.0
    assert fp4["compute"]["mfu"] < fp8["compute"]["mfu"]


def test_fp4_training_needs_fp4_tensor_cores():
    with pytest.raises(PlanError, match=r"workload\.precision: fp4 needs a GPU with FP4 tensor cores"):
        evaluate(make_plan(FP4_PLAN, cluster={"gpu": "h100-sxm"}))
