"""Serving calibration: published serving results, the fit of the serving constants, and its check.

Every published result is a case, fitted on or only checked against by its publication date:

* **fit**: published before 2026-01-01. MLPerf Inference v4.1 and v5.0 closed
  (``serving_fit_mlperf_v4.1.csv``, ``serving_fit_mlperf_v5.0.csv``), the 2024-25 tables of
  ``serving_fit_extra.csv``, and ``serving_fit_2025.csv``: MLPerf Inference v5.1 (with the
  measured TTFT and TPOT of the Server and Interactive runs and the submitters' layouts),
  TensorRT-LLM's perf-overview tables of releases 0.21 and 1.0, AMD's ROCm tables, engine blogs,
  InferenceX nightly results of November-December 2025.
* **check**: ``serving_check_2026.csv``: results published in 2026 (TensorRT-LLM 1.2 tables,
  MLPerf Inference v6.0-v6.1, vLLM, SGLang and InferenceX posts, InferenceX nightly results) and
  those whose date is not certain. Never fitted; they say how good the numbers are.

Each case is predicted by the serving engine (:mod:`aiplan.model.serving`) on its published
layout (or, where none is published, the layout that gives the most throughput per GPU): Offline
rows at the batch memory allows, MLPerf Server and Interactive rows at the largest batch whose
99th-percentile TTFT and TPOT meet the round's limits, fixed-concurrency rows at that
concurrency. The fit minimises a robust (soft-L1) loss of the log errors of throughput, and of
TPOT and mean TTFT where published, with :func:`scipy.optimize.least_squares`; the
leave-one-source-out errors refit without each source and are written beside the constants by
``tools/calibrate.py`` (``serving_loo.csv``).

Public functions: :func:`serving_cases`, :func:`predict_cases`, :func:`fit_serving`,
:func:`leave_one_source_out`, :func:`serving_validation`, :func:`segments` and
:func:`write_constants`.
"""

from __future__ import annotations

import csv
import math
from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares
from scipy.stats import qmc

from ..core.catalog import (
    calibration_file,
    data_dir,
    forget_constants,
    load_catalog,
    mlperf_benchmarks,
    mlperf_latency_limits_ms,
    parse_date,
    parse_number,
)
from ..model.params import model_param_counts
from ..model.serving import (
    ERROR_QUANTILES_FILE,
    Engine,
    at_concurrency,
    at_slo,
    constants_for,
    constants_path,
    layouts,
    offline,
    replica_gpus,
    serving_constants,
    serving_inputs,
    stack_inputs,
    take,
    weights_gb_per_gpu,
)
from ..plan import CLUSTER

#: result files (``data/calibration/``); a case is fit data when published before :data:`FIT_BEFORE`
FILES = ("serving_fit_mlperf_v4.1.csv", "serving_fit_mlperf_v5.0.csv", "serving_fit_extra.csv",
         "serving_fit_2025.csv", "serving_check_2026.csv")
FIT_BEFORE = "2026-01-01"
#: leave-one-source-out predictions, written by tools/calibrate.py
LOO_FILE = "serving_loo.csv"

#: catalog models a published model maps to because the architecture is identical
#: (Llama 3.3 70B = Llama 3.1 70B: same configuration, new post-training; Meta model card) [meta-llama3.3-model-card]
MODEL_ALIASES = {"llama-3.3-70b": "llama-3.1-70b"}
#: the MLPerf benchmark of a catalog model (results of ``serving_fit_2025.csv`` / ``serving_check_2026.csv``)
MLPERF_BENCHMARKS = {"llama-2-70b": "llama2-70b", "llama-3.1-405b": "llama3.1-405b", "llama-3.1-8b": "llama3.1-8b",
                     "deepseek-r1": "deepseek-r1", "mixtral-8x7b": "mixtral-8x7b"}
#: model families the validation reports errors by
MODEL_FAMILIES = {"llama-2": "Llama dense", "llama-3": "Llama dense", "llama-4": "Llama 4 MoE", "mixtral": "Mixtral",
                  "deepseek": "DeepSeek/Kimi MLA MoE", "kimi": "DeepSeek/Kimi MLA MoE", "gpt-oss": "gpt-oss",
                  "qwen3": "Qwen3 MoE"}

#: the constants fitted, with their search bounds (values outside are not tried). One bound is a physical
#: judgement: an expert's grouped GEMM pads its rows to one tile (at most 128 rows in CUTLASS's grouped
#: GEMM tiles)
PARAMETERS: dict[str, tuple[float, float]] = {
    "decode_bw_efficiency": (0.3, 1.0),
    "compute_efficiency": (0.1, 1.0),
    "compute_tokens_half": (1.0, 4096.0),
    "expert_tokens_half": (1.0, 128.0),
    "expert_compute_efficiency": (0.1, 1.0),
    "attention_efficiency": (0.02, 1.0),
    "step_overhead_s_per_layer": (1e-7, 1e-3),
    "sequence_overhead_s_per_layer": (1e-10, 1e-5),
    "moe_overhead_s_per_layer": (1e-7, 1e-3),
    "collective_latency_s": (1e-7, 1e-4),
    "tpot_p99_factor": (1.0, 2.5),
    "ttft_mean_steps": (0.1, 20.0),
    "ttft_p99_extra_steps": (0.1, 60.0),
    "tp_scaling_efficiency": (0.5, 1.0),
    "server_load_factor": (0.5, 1.0),
    "engine_max_batch": (32.0, 16384.0),
    "engine_max_batch_dp": (32.0, 16384.0),
    "decode_bw_efficiency.cdna": (0.3, 1.0),
    "decode_bw_efficiency.blackwell": (0.3, 1.0),
    "family_efficiency.cdna": (0.2, 2.0),
    "family_efficiency.blackwell": (0.3, 3.0),
    "fp4_compute_efficiency": (0.2, 2.0),
}

#: where the search starts (judgement: typical shares of peak for inference engines)
START = {"decode_bw_efficiency": 0.8, "compute_efficiency": 0.6, "compute_tokens_half": 64.0,
         "expert_tokens_half": 64.0, "expert_compute_efficiency": 0.7, "attention_efficiency": 0.3,
         "step_overhead_s_per_layer": 5e-5,
         "sequence_overhead_s_per_layer": 1e-7,
         "moe_overhead_s_per_layer": 2e-5, "collective_latency_s": 1e-5, "tp_scaling_efficiency": 0.95,
         "tpot_p99_factor": 1.2, "ttft_mean_steps": 1.0, "ttft_p99_extra_steps": 2.0,
         "server_load_factor": 0.9, "engine_max_batch": 2048.0, "engine_max_batch_dp": 1024.0,
         "decode_bw_efficiency.cdna": 0.75,
         "decode_bw_efficiency.blackwell": 0.75, "family_efficiency.cdna": 0.7,
         "family_efficiency.blackwell": 1.0, "fp4_compute_efficiency": 0.7}

#: units and notes written beside each constant
UNITS = {"step_overhead_s_per_layer": "s", "sequence_overhead_s_per_layer": "s", "moe_overhead_s_per_layer": "s",
         "collective_latency_s": "s", "ttft_mean_steps": "steps",
         "ttft_p99_extra_steps": "steps", "engine_max_batch": "sequences", "engine_max_batch_dp": "sequences",
         "compute_tokens_half": "tokens", "expert_tokens_half": "tokens"}
NOTES = {
    "decode_bw_efficiency": "share of the datasheet memory bandwidth a step reaches reading weights and KV cache",
    "compute_efficiency": "share of the dense peak (at each part's compute precision) large matrix multiplications "
                          "reach",
    "compute_tokens_half": "tokens per GPU at which a matrix multiplication reaches half of that share",
    "expert_tokens_half": "tokens per routed expert at which its grouped matrix multiplication reaches half of that "
                          "share",
    "expert_compute_efficiency": "factor on that share for the routed experts' grouped matrix multiplications",
    "attention_efficiency": "share of the peak at the KV-cache precision a decode step's attention scores and values "
                            "reach (a prompt's attention runs at the linear layers' share)",
    "step_overhead_s_per_layer": "fixed time of an engine step per layer (launches, synchronisation, scheduling)",
    "sequence_overhead_s_per_layer": "time of a step per layer for each running sequence (sampling, the engine's "
                                     "bookkeeping)",
    "moe_overhead_s_per_layer": "fixed extra time of a mixture-of-experts layer (routing, token permutation)",
    "collective_latency_s": "fixed time of one all-reduce or all-to-all",
    "tpot_p99_factor": "99th-percentile over mean time per output token of a request (the targets bound the "
                       "99th percentile)",
    "ttft_mean_steps": "decode steps a request waits on average before the scheduler takes its prompt in",
    "ttft_p99_extra_steps": "decode steps a request waits at the 99th percentile beyond the mean before its prompt "
                            "is taken in",
    "tp_scaling_efficiency": "compute efficiency kept per doubling of the tensor-parallel degree",
    "family_efficiency": "factor on every compute efficiency for GPUs of this family group (their memory "
                         "bandwidth share is their own decode_bw_efficiency row)",
    "fp4_compute_efficiency": "factor on the compute efficiency for FP4 (NVFP4/MXFP4) matmuls, at the FP4 peak",
    "server_load_factor": "share of the latency-constrained rate a Poisson load (MLPerf Server) sustains",
    "engine_max_batch": "most sequences one attention group of an engine runs at once",
    "engine_max_batch_dp": "most sequences one attention group runs at once in a replica of several "
                           "attention-data-parallel groups",
}

#: weight of a TPOT and of a mean-TTFT residual against a throughput residual (judgement: throughput is
#: what sizes a cluster; the latencies say whether the operating point is right)
LATENCY_WEIGHT = 0.5
#: scale of the soft-L1 loss on log errors: errors beyond ~10% count linearly, not squared (judgement)
ROBUST_SCALE = 0.10
#: a fit case is left out when its weights take more than this share of the usable memory (judgement)
WEIGHTS_SHARE_MAX = 0.90
#: least_squares restarts and function evaluations of a fit, and of each leave-one-source-out refit
#: (warm start from the full fit)
FIT_ROUNDS, MAX_EVALUATIONS, LOO_ROUNDS, LOO_EVALUATIONS = 3, 60, 1, 60
#: starting points of the full fit (:data:`START` and a seeded Latin hypercube over the middle half of the
#: log-bounds box): the loss has several local minima (the engine's batch limit, the per-step costs and
#: the expert tile trade off against each other), and one start can stop in a poor one
FIT_STARTS, FIT_SEED = 8, 0


# --- cases -----------------------------------------------------------------------------------------


def _read(name: str) -> list[dict]:
    with open(data_dir() / "calibration" / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _case(**kw) -> dict:
    base = {"layout": None, "concurrency": None, "ttft_ms": None, "tpot_ms": None, "ttft_prompt_tokens": None,
            "published_tpot_ms": None, "published_ttft_ms": None,
            "published_ttft_p99_ms": None, "draft_tokens": 0, "acceptance": 0.0, "activation": None,
            "skipped": None, "excluded": None, "notes": ""}
    base.update(kw)
    return base


def _benchmark(benchmark: str, round_: str) -> dict:
    return mlperf_benchmarks()[(benchmark, round_)]


def _mlperf_output(bench: dict) -> float | None:
    """The benchmark's reference mean output; its maximum where the rules give no mean (Llama 3.1 8B:
    the runs generate 128-129 tokens a sample, the maximum of 128)."""
    return parse_number(bench["output_tokens_mean"]) or parse_number(bench["output_tokens_max"])


def _mlperf_case(row: dict, name: str) -> dict:
    bench = _benchmark(row["benchmark"], row["round"])
    ttft, tpot = mlperf_latency_limits_ms(row["scenario"], row["benchmark"], row["round"])
    kv = row["aiplan_kv_precision"]
    system = row["platform"] or row["system"]
    published = {"v4.1": "2024-08-28", "v5.0": "2025-04-02"}[row["round"]]
    wp = row["aiplan_weight_precision"]
    return _case(
        id=row["id"], file=name, published=published, round=row["round"], source=f"mlperf-{row['round']}",
        model=row["aiplan_model"], gpu=row["aiplan_gpu"], scenario=row["scenario"].lower(),
        precisions=_precisions(row["aiplan_model"], wp, kv or "bf16"), precision=f"{wp}/{kv or 'bf16'}",
        notes="" if kv else "KV dtype not stated: the engine default (bf16) assumed",
        gpus=int(row["accelerators"]), prompt_tokens=parse_number(bench["input_tokens_mean"]),
        ttft_prompt_tokens=parse_number(bench["input_tokens_max"]),
        output_tokens=parse_number(row["out_tokens_per_sample_run"]) or _mlperf_output(bench),
        ttft_ms=ttft, tpot_ms=tpot, published_tokens_per_s=float(row["tokens_per_s"]),
        group="|".join((row["round"], row["submitter"], system, row["benchmark"], row["scenario"])),
        sources=row["sources"], layout=_published_layout(row))


def _extra_case(row: dict, name: str) -> dict:
    kv = row["kv_precision"]
    batch = parse_number(row["concurrency_or_batch"])
    wp = row["weight_precision"]
    tp = int(row["tensor_parallel"])
    return _case(
        id=row["id"], file=name, published=row["published_date"], round=row["published_date"],
        source=row["source_table"].split(":")[0], model=row["model"], gpu=row["gpu"],
        scenario="concurrency" if batch else "offline", concurrency=batch,
        precisions=_precisions(row["model"], wp, kv or "fp8"), precision=f"{wp}/{kv or 'fp8'}",
        notes="" if kv else "KV dtype not stated: FP8 assumed (the quantised checkpoints' KV cache)",
        gpus=int(row["gpus"]), layout=(tp, 1, 1, 1), prompt_tokens=float(row["input_tokens"]),
        output_tokens=float(row["output_tokens"]), published_tokens_per_s=float(row["output_tokens_per_s"]),
        group=row["id"], sources=row["sources"])


def _num(row, key):
    return parse_number(row.get(key))


def _result_case(row: dict, name: str) -> dict:
    """A case of ``serving_fit_2025.csv`` / ``serving_check_2026.csv`` (one row a published result)."""
    model = row["model"]
    scen = row["scenario"]
    mlperf = row["source_table"].startswith("MLPerf")
    wp = (row["weight_precision"] or "").replace("mxfp4", "fp4")
    kv_text = row["kv_precision"] or ""
    kv = "fp8" if kv_text.startswith("fp8") else "bf16" if kv_text else (
        "fp8" if "TensorRT" in row["framework"] + row["source_table"] and wp in ("fp8", "fp4") else "bf16")
    # gpt-oss ships MXFP4 experts; on Hopper they run weight-only at BF16 speed whatever the table's
    # precision label says (issue 23's diagnosis; the label is kept in the case's precision text)
    activation = None
    case = _case(
        id=row["id"], file=name, published=row["published_date"], round=row["published_date"],
        source=row["sources"], model=model, gpu=row["gpu"], scenario=scen, gpus=int(float(row["gpus"] or 0)),
        precisions=_precisions(model, wp or None, kv), precision=f"{wp or 'checkpoint'}/{kv}", activation=activation,
        notes="" if kv_text else f"KV dtype not stated: {kv} assumed", sources=row["sources"], group=row["id"],
        prompt_tokens=_num(row, "input_tokens"), output_tokens=_num(row, "output_tokens"),
        concurrency=_num(row, "concurrency"), published_tokens_per_s=_num(row, "output_tokens_per_s"),
        published_tpot_ms=_num(row, "tpot_ms_mean"), published_ttft_ms=_num(row, "ttft_ms_mean"),
        published_ttft_p99_ms=_num(row, "ttft_ms_p99"))
    case["layout"] = _published_layout(row)
    _speculation(row, case)
    if mlperf:
        _mlperf_fields(row, case)
    elif scen == "server":
        case["skipped"] = "a rate-limited run outside MLPerf (its throughput is the offered load)"
    if row["disaggregated"] == "yes":
        case["skipped"] = case["skipped"] or "one pool of a disaggregated deployment at a load the source does not give"
    if case["published_tokens_per_s"] is None:
        case["skipped"] = case["skipped"] or "no output tokens per second published (prefill-only or total tokens)"
    if case["prompt_tokens"] is None or case["output_tokens"] is None:
        case["skipped"] = case["skipped"] or "prompt or output length not published"
    if scen == "concurrency" and not case["concurrency"]:
        case["skipped"] = case["skipped"] or "concurrency not published"
    return case


def _published_layout(row) -> tuple | None:
    """(tp, dp, ep, pp) as a row publishes it (attention data parallelism: tp 1 and dp = ep), or None."""
    tp, ep, pp = _num(row, "tensor_parallel"), _num(row, "expert_parallel"), _num(row, "pipeline_parallel")
    if not tp:
        return None
    if row.get("attention_dp") == "yes":
        return 1, int(ep or 1), int(ep or 1), int(pp or 1)
    return int(tp), 1, int(ep or 1), int(pp or 1)


def _speculation(row, case) -> None:
    """Draft tokens and acceptance of a speculative-decoding row (skipped without a published acceptance)."""
    spec = row["spec_decode"] or ""
    accept = _num(row, "accept_len")
    if spec.startswith("MTP x") and accept:
        case["draft_tokens"] = int(spec.split("x")[1].split()[0])
        case["acceptance"] = _acceptance_for(case["draft_tokens"], accept)
    elif spec not in ("", "no"):
        case["skipped"] = f"speculative decoding ({spec}) without a published acceptance"


def _mlperf_fields(row, case) -> None:
    """An MLPerf row's benchmark lengths and latency limits (``serving_benchmarks.csv``)."""
    bench_id = MLPERF_BENCHMARKS.get(case["model"])
    round_ = "v6.1" if "v6.1" in row["source_table"] else "v5.1"
    if not bench_id or (bench_id, round_) not in mlperf_benchmarks():
        case["skipped"] = f"the MLPerf benchmark of {case['model']} ({row['source_table'][:30]}) is not defined here"
        return
    bench = _benchmark(bench_id, round_)
    scen = case["scenario"]
    ttft, tpot = mlperf_latency_limits_ms(scen.title(), bench_id, round_)
    case.update(prompt_tokens=parse_number(bench["input_tokens_mean"]), ttft_ms=ttft, tpot_ms=tpot,
                ttft_prompt_tokens=parse_number(bench["input_tokens_max"]),
                output_tokens=case["output_tokens"] or _mlperf_output(bench), round=round_,
                group="|".join((round_, row["id"].rsplit("-", 1)[0])))
    if scen != "offline" and ttft is None:
        case["skipped"] = f"no {scen} latency limits of {bench_id} {round_} read in a primary source"


def _acceptance_for(draft_tokens: int, accepted: float) -> float:
    """The per-token acceptance rate that gives ``accepted`` tokens per step with ``draft_tokens`` drafts."""
    lo, hi = 0.0, 0.9999
    for _ in range(60):
        a = 0.5 * (lo + hi)
        tau = (1.0 - a ** (draft_tokens + 1)) / (1.0 - a)
        lo, hi = (a, hi) if tau < accepted else (lo, a)
    return 0.5 * (lo + hi)


def _precisions(model_id: str, weight: str | None, kv: str) -> dict:
    """Part precisions of a published run: its stated weight precision on the linear layers (an FP4
    DeepSeek keeps FP8 attention and dense layers, NVIDIA's and SGLang's NVFP4 MoE checkpoints;
    gpt-oss always ships MXFP4 experts and BF16 elsewhere); embeddings and head at the checkpoint's."""
    model = load_catalog().models.get(MODEL_ALIASES.get(model_id, model_id))
    fmt = {p: (getattr(model, f"precision_{p}", None) if model else None) or "bf16"
           for p in ("attention", "dense", "experts", "embeddings")}
    out = {"attention": fmt["attention"], "dense": fmt["dense"], "experts": fmt["experts"], "head": fmt["embeddings"],
           "kv": kv}
    if weight and not model_id.startswith("gpt-oss"):
        if model_id.startswith(("deepseek", "kimi")) and weight == "fp4":
            out["experts"] = "fp4"
        else:
            out.update(attention=weight, dense=weight, experts=weight)
    return out


def _skip_reason(case: dict, catalog) -> str | None:
    model = MODEL_ALIASES.get(case["model"], case["model"])
    if model not in catalog.models:
        return f"model {case['model']} is not in the catalog"
    if case["gpu"] not in catalog.gpus:
        return f"GPU {case['gpu']} is not in the catalog (no catalog row has an identical architecture)"
    return case["skipped"]


def serving_cases(catalog=None) -> list[dict]:
    """Every published serving result as a case dict.

    Keys: ``id``, ``set`` (fit: published before 2026-01-01; check: later or undated), ``file``,
    ``published``, ``source`` (the left-out unit of leave-one-source-out), ``model`` (catalog id
    after :data:`MODEL_ALIASES`), ``gpu``, ``scenario`` (offline | server | interactive |
    concurrency), ``precisions``, ``gpus``, ``layout`` ((tp, dp, ep, pp) or None: searched),
    ``concurrency``, ``prompt_tokens``,
    ``output_tokens``, ``ttft_ms``/``tpot_ms`` limits, ``published_tokens_per_s``,
    ``published_tpot_ms``, ``published_ttft_ms`` (mean), ``published_ttft_p99_ms``, ``group``
    (identical runs), ``skipped`` / ``excluded`` (reasons) and ``sources``.
    """
    catalog = catalog or load_catalog()
    cases = []
    for name in FILES:
        for row in _read(name):
            if "aiplan_model" in row:
                case = _mlperf_case(row, name)
            elif "concurrency_or_batch" in row:
                case = _extra_case(row, name)
            else:
                case = _result_case(row, name)
            date = parse_date(case["published"])
            case["set"] = "fit" if date and case["published"] < FIT_BEFORE and len(case["published"]) >= 7 else "check"
            case["skipped"] = _skip_reason(case, catalog)
            case["model"] = MODEL_ALIASES.get(case["model"], case["model"])
            cases.append(case)
    for case in cases:
        if case["set"] == "fit" and not case["skipped"] and case["layout"]:
            share = _weights_share(case, catalog)
            if share > WEIGHTS_SHARE_MAX:
                case["excluded"] = f"weights take {share:.0%} of the usable memory (> {WEIGHTS_SHARE_MAX:.0%})"
    return cases


def _weights_share(case, catalog) -> float:
    s = stack_inputs([_inputs_for(case, case["prompt_tokens"] or 1000.0)])
    lay = {k: np.array([float(v)]) for k, v in zip(("tp", "dp", "ep", "pp"), case["layout"])}
    return float(weights_gb_per_gpu(s, lay)[0] / s["usable_gb"][0])


# --- prediction --------------------------------------------------------------------------------------


def _inputs_for(case, prompt) -> dict:
    p = case["precisions"]
    return _inputs(case["model"], case["gpu"], p["attention"], p["dense"], p["experts"], p["head"], p["kv"],
                   case["activation"], round(float(prompt), 3), float(case["output_tokens"]),
                   case["ttft_prompt_tokens"], case["draft_tokens"], round(case["acceptance"], 6))


@lru_cache(maxsize=20_000)
def _inputs(model_id, gpu_id, attn, dense, experts, head, kv, act, prompt, output, ttft_prompt, draft, accept) -> dict:
    catalog = load_catalog()
    model = catalog.models[model_id]
    precisions = {"attention": attn, "dense": dense, "experts": experts, "head": head, "kv": kv, "activation": act}
    return serving_inputs(model, model_param_counts(model), catalog.gpus[gpu_id], precisions, prompt, output,
                          CLUSTER["usable_memory_fraction"].default, None, 8192, draft, accept,
                          round(1.0 / model.layers, 4), ttft_prompt)


def _layouts(case, catalog) -> list[tuple]:
    """The case's published layout, or every layout of the engine search whose replica divides its GPUs."""
    if case["layout"]:
        return [case["layout"]]
    model, gpu = catalog.models[case["model"]], catalog.gpus[case["gpu"]]
    lay = layouts(model, gpu, 8, max_gpus=case["gpus"])
    g = replica_gpus(lay)
    keep = (case["gpus"] % g == 0)
    return [tuple(int(lay[x][i]) for x in ("tp", "dp", "ep", "pp")) for i in np.flatnonzero(keep)] or [(1, 1, 1, 1)]


_EXPANDED: dict = {}


def _expand(cases):
    """Rows (case, layout) with their stacked engine inputs and per-row scenario figures (cached)."""
    key = tuple(c["id"] for c in cases)
    if key not in _EXPANDED:
        if len(_EXPANDED) > 64:
            _EXPANDED.clear()
        _EXPANDED[key] = _build_rows(cases)
    return _EXPANDED[key]


def _build_rows(cases):
    catalog = load_catalog()
    rows, owner, lays = [], [], []
    for i, c in enumerate(cases):
        inp = _inputs_for(c, c["prompt_tokens"])
        for lay in _layouts(c, catalog):
            rows.append(inp)
            owner.append(i)
            lays.append(lay)
    s = stack_inputs(rows)
    a = np.array(lays, dtype=float)
    lay = {"tp": a[:, 0], "dp": a[:, 1], "ep": a[:, 2], "pp": a[:, 3]}
    owner = np.array(owner)
    per = {key: np.array([cases[i][key] or np.nan for i in owner], dtype=float)
           for key in ("ttft_ms", "tpot_ms", "concurrency", "gpus")}
    per["scenario"] = np.array([cases[i]["scenario"] for i in owner])
    return s, lay, owner, per


def _evaluate(s, k, lay, per) -> dict[str, np.ndarray]:
    """Per row: output tokens/s of the system, TPOT, mean and p99 TTFT [s] at the row's scenario."""
    n = len(lay["tp"])
    out = {key: np.full(n, np.nan) for key in ("tokens_per_s", "tpot_s", "ttft_s", "ttft_p99_s")}
    replicas = np.maximum(np.floor(per["gpus"] / replica_gpus(lay)), 1.0)
    for kind in ("offline", "slo", "concurrency"):
        if kind == "slo":
            idx = np.flatnonzero(np.isin(per["scenario"], ("server", "interactive")))
        else:
            idx = np.flatnonzero(per["scenario"] == kind)
        if not len(idx):
            continue
        eng = Engine(take(s, idx), take(k, idx), take(lay, idx))
        if kind == "offline":
            r = offline(eng)
        elif kind == "slo":
            # the interpolated batch, unchecked: the check moves it back by less than a thousandth (the
            # TPOT by a few parts in 10^5, far below the fit's errors), enough to send a fit stopped after
            # MAX_EVALUATIONS elsewhere
            r = at_slo(eng, per["ttft_ms"][idx] / 1e3, per["tpot_ms"][idx] / 1e3, checked=False)
        else:
            r = at_concurrency(eng, per["concurrency"][idx] / replicas[idx])
        for key in out:
            if key in r:
                out[key][idx] = r[key]
    out["tokens_per_s"] = out["tokens_per_s"] * replicas
    return out


def predict_cases(cases: list[dict], constants: dict | None = None) -> dict[str, np.ndarray]:
    """Predicted figures of each case (NaN for skipped cases), on the layout with the most throughput.

    ``tokens_per_s`` (output tokens per second of the case's whole system), ``tpot_ms``,
    ``ttft_ms`` (mean), ``ttft_p99_ms`` and ``layout`` (index into the candidates; for reports).
    """
    constants = constants or serving_constants()
    live = [i for i, c in enumerate(cases) if not c["skipped"]]
    out = {key: np.full(len(cases), np.nan) for key in ("tokens_per_s", "tpot_ms", "ttft_ms", "ttft_p99_ms")}
    if not live:
        return out
    sub = [cases[i] for i in live]
    s, lay, owner, per = _expand(sub)
    k = constants_for(constants, s["family"])
    r = _evaluate(s, k, lay, per)
    rate = np.nan_to_num(r["tokens_per_s"])
    order = np.lexsort((-rate, owner))  # per case, the row with the most throughput first
    first = order[np.r_[True, owner[order][1:] != owner[order][:-1]]]
    idx = np.array(live)[owner[first]]
    out["tokens_per_s"][idx] = rate[first]
    out["tpot_ms"][idx] = r["tpot_s"][first] * 1e3
    out["ttft_ms"][idx] = r["ttft_s"][first] * 1e3
    out["ttft_p99_ms"][idx] = r["ttft_p99_s"][first] * 1e3
    return out


# --- fit -------------------------------------------------------------------------------------------------


def _fit_cases(cases):
    return [c for c in cases if c["set"] == "fit" and not c["skipped"] and not c["excluded"]]


def _weights(cases) -> np.ndarray:
    """Case weights: identical runs share one unit; each source carries the square root of its runs
    (a large table counts more than a blog post, but not in proportion; judgement, as the training fit)."""
    groups: dict[str, int] = {}
    for c in cases:
        groups[c["group"]] = groups.get(c["group"], 0) + 1
    w = np.array([1.0 / groups[c["group"]] for c in cases])
    for src in {c["source"] for c in cases}:
        mask = np.array([c["source"] == src for c in cases])
        w[mask] *= math.sqrt(w[mask].sum()) / w[mask].sum()
    return w / w.mean()


def _targets(cases) -> dict[str, np.ndarray]:
    return {key: np.array([c[key] or np.nan for c in cases], dtype=float)
            for key in ("published_tokens_per_s", "published_tpot_ms", "published_ttft_ms", "published_ttft_p99_ms")}


def _residuals(cases, constants, weights, targets) -> np.ndarray:
    """Weighted log errors: throughput of every case, TPOT and mean and 99th-percentile TTFT where published (a case
    predicted at 0 counts as 1/1000 of its published figure)."""
    pred = predict_cases(cases, constants)
    res = [np.sqrt(weights) * np.log(np.maximum(pred["tokens_per_s"], 1e-3 * targets["published_tokens_per_s"])
                                      / targets["published_tokens_per_s"])]
    for p_key, t_key in (("tpot_ms", "published_tpot_ms"), ("ttft_ms", "published_ttft_ms"),
                         ("ttft_p99_ms", "published_ttft_p99_ms")):
        t = targets[t_key]
        r = np.log(np.maximum(np.nan_to_num(pred[p_key], nan=1e9), 1e-3 * np.nan_to_num(t, nan=1.0))
                   / np.nan_to_num(t, nan=1.0))
        res.append(np.where(np.isfinite(t), np.sqrt(weights * LATENCY_WEIGHT) * r, 0.0))
    return np.concatenate(res)


def _bounds():
    lo = np.log([b[0] / START[n] for n, b in PARAMETERS.items()])
    hi = np.log([b[1] / START[n] for n, b in PARAMETERS.items()])
    return lo, hi


def _from_x(x, base: dict) -> dict:
    return {**base, **{n: float(START[n] * np.exp(v)) for n, v in zip(PARAMETERS, x)}}


def _to_x(constants: dict) -> np.ndarray:
    lo, hi = _bounds()
    x = np.log([constants.get(n, START[n]) / START[n] for n in PARAMETERS])
    return np.clip(x, lo + 1e-9, hi - 1e-9)


def _fit(cases, start: dict, rounds=FIT_ROUNDS, max_nfev=MAX_EVALUATIONS) -> tuple[dict, float]:
    """Robust least squares (soft-L1 on the weighted log errors) over the log constants, from ``start``.

    The engine's batch search makes the loss slightly rough, which can stop the trust region early;
    the fit restarts it ``rounds`` times from where it stopped. Returns the constants and the loss.
    """
    fit = _fit_cases(cases)
    w, t = _weights(fit), _targets(fit)
    lo, hi = _bounds()
    x = _to_x(start)
    for _ in range(rounds):
        res = least_squares(lambda z: _residuals(fit, _from_x(z, START), w, t), x, bounds=(lo, hi), loss="soft_l1",
                            f_scale=ROBUST_SCALE, diff_step=0.05, x_scale="jac", max_nfev=max_nfev, xtol=1e-6,
                            ftol=1e-7)
        x = res.x
    return _from_x(x, START), float(res.cost)


def fit_starts(n=FIT_STARTS, seed=FIT_SEED) -> list[dict]:
    """Where the full fit starts: :data:`START`, then ``n - 1`` points of a seeded Latin hypercube over the
    middle half of each constant's log-bounds range (McKay, Beckman, Conover 1979). [mckay-1979-lhs]"""
    lo, hi = _bounds()
    points = qmc.LatinHypercube(d=len(lo), seed=seed).random(n - 1)
    return [START] + [_from_x(lo + (hi - lo) * (0.25 + 0.5 * p), START) for p in points]


def fit_serving(cases: list[dict] | None = None) -> dict[str, float]:
    """Fit the serving constants on the fit set from every :func:`fit_starts` point and keep the lowest loss;
    returns ``{name: value}`` (3 significant digits)."""
    cases = cases or serving_cases()
    best = min((_fit(cases, start) for start in fit_starts()), key=lambda fit: fit[1])[0]
    return {k: float(_sig3(v)) for k, v in best.items()}


def leave_one_source_out(cases=None, constants=None) -> dict[str, dict[str, float]]:
    """Each fit case predicted by constants refitted without its source (warm start from the full fit).

    Returns ``{case id: {"tokens_per_s", "tpot_ms", "ttft_ms", "ttft_p99_ms"}}``.
    """
    cases = cases or serving_cases()
    constants = constants or serving_constants()
    fit = _fit_cases(cases)
    out = {}
    for src in sorted({c["source"] for c in fit}):
        rest = [c for c in fit if c["source"] != src]
        held = [c for c in cases if c["set"] == "fit" and c["source"] == src and not c["skipped"]]
        refit = _fit(rest, constants, LOO_ROUNDS, LOO_EVALUATIONS)[0]
        pred = predict_cases(held, refit)
        for i, c in enumerate(held):
            out[c["id"]] = {key: float(v[i]) for key, v in pred.items()}
    return out


def write_loo(loo: dict, path=None) -> Path:
    """Write the leave-one-source-out predictions (``serving_loo.csv``: id and the four figures)."""
    path = Path(path or calibration_file(LOO_FILE))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["id", "tokens_per_s", "tpot_ms", "ttft_ms", "ttft_p99_ms"])
        for cid in sorted(loo):
            v = loo[cid]
            w.writerow([cid] + [_sig3(v[k]) if math.isfinite(v[k]) else "" for k in ("tokens_per_s", "tpot_ms",
                                                                                      "ttft_ms", "ttft_p99_ms")])
    return path


def read_loo(path=None) -> dict[str, dict[str, float | None]]:
    """The leave-one-source-out predictions ``tools/calibrate.py`` wrote ({} when none were; ``path``: another
    file written by :func:`write_loo`)."""
    path = Path(path or calibration_file(LOO_FILE))
    if not path.is_file():
        return {}
    with open(path, newline="", encoding="utf-8") as fh:
        return {r["id"]: {k: parse_number(v) for k, v in r.items() if k != "id"} for r in csv.DictReader(fh)}


# --- the error band the serving figures carry --------------------------------------------------------------

#: scenarios the band is taken from: a plan's replicas are sized on the latency-constrained rate, as MLPerf's
#: Server and Interactive runs measure it
BAND_SCENARIOS = ("server", "interactive")
#: percentiles of the band [percent]
BAND_PERCENTILES = (10, 50, 90)


def error_quantiles(rows: list[dict]) -> dict[int, float]:
    """P10, P50 and P90 of published over predicted throughput [ratio] on the out-of-sample errors of
    :func:`serving_validation` rows: the check rows' errors and the fit rows' leave-one-source-out errors, of the
    latency-constrained scenarios (:data:`BAND_SCENARIOS`), excluded rows left out; rows without a usable
    prediction (missing, zero) are skipped and counted (``skipped``). A ratio below 1: the published throughput
    was lower than predicted (more GPUs would be needed)."""
    errors = [_honest(r) for r in rows if r["scenario"] in BAND_SCENARIOS and not r["excluded"]]
    # predicted / published = 1 + e/100: a zero (or negative) prediction has no ratio, a missing one no error;
    # both are skipped and counted rather than divided by
    usable = [e for e in errors if _usable(e)]
    ratios = np.array([1.0 / (1.0 + e / 100.0) for e in usable])
    if not len(ratios):
        raise ValueError(f"no usable out-of-sample prediction for the serving band ({len(errors)} skipped)")
    return ({p: float(np.percentile(ratios, p)) for p in BAND_PERCENTILES}
            | {"n": len(ratios), "skipped": len(errors) - len(ratios),
               "zero": sum(1 for e in errors if e is not None and not _usable(e))})


def write_error_quantiles(rows: list[dict], path=None) -> Path:
    """Write ``serving_error_quantiles.csv`` (percentile, throughput ratio, cases, basis) from validation rows."""
    q = error_quantiles(rows)
    path = Path(path or calibration_file(ERROR_QUANTILES_FILE))
    basis = (f"published / predicted throughput per GPU of {q['n']} MLPerf Server and Interactive results: "
             f"the 2026 check results and the fit results predicted by constants refitted without their source "
             f"(serving_loo.csv)" + (f"; {q['skipped']} without a usable prediction skipped ({q['zero']} zero, "
                                     f"{q['skipped'] - q['zero']} missing)"
                                     if q["skipped"] else ""))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["percentile", "throughput_ratio", "cases", "basis"])
        for p in BAND_PERCENTILES:
            w.writerow([p, _sig3(q[p]), q["n"], basis])
    return path


# --- validation ------------------------------------------------------------------------------------------


def model_family(model_id: str) -> str:
    """The family a model's errors are reported under (:data:`MODEL_FAMILIES`)."""
    return next((f for prefix, f in MODEL_FAMILIES.items() if model_id.startswith(prefix)), model_id)


def _error(pred, pub):
    if pred is None or pub is None or not (math.isfinite(pred) and math.isfinite(pub)) or pub <= 0:
        return None
    return 100.0 * (pred / pub - 1.0)


def serving_validation(cases=None, constants=None, loo: bool | dict = True) -> dict:
    """Every case with published and predicted figures, errors, and the summary.

    Returns ``{"rows": [...], "summary": {...}}``. Each row: ``id``, ``set``, ``round``, ``model``,
    ``model_family``, ``gpu``, ``family`` (GPU), ``scenario``, ``precision``, published and
    predicted throughput, TPOT and TTFT with their errors [%] (``error_pct``: throughput), the
    leave-one-source-out throughput error of fit rows (``loo_error_pct``, from ``serving_loo.csv``
    or a dict given as ``loo``), ``skipped`` / ``excluded`` and ``sources``.
    """
    catalog = load_catalog()
    cases = cases or serving_cases(catalog)
    constants = constants or serving_constants()
    pred = predict_cases(cases, constants)
    loo_pred = (read_loo() if loo is True else loo) if loo else {}
    rows = []
    for i, c in enumerate(cases):
        gpu = catalog.gpus.get(c["gpu"])
        ok = not c["skipped"] and math.isfinite(pred["tokens_per_s"][i])
        p = {key: (float(v[i]) if ok and math.isfinite(v[i]) else None) for key, v in pred.items()}
        lp = loo_pred.get(c["id"], {}) if c["set"] == "fit" else {}
        rows.append({
            "id": c["id"], "set": c["set"], "round": c["round"], "model": c["model"],
            "model_family": model_family(c["model"]), "gpu": c["gpu"], "family": gpu.family if gpu else None,
            "scenario": c["scenario"], "precision": c["precision"], "gpus": c["gpus"],
            "published_tokens_per_s": c["published_tokens_per_s"], "predicted_tokens_per_s": p["tokens_per_s"],
            "error_pct": _error(p["tokens_per_s"], c["published_tokens_per_s"]),
            "loo_error_pct": _error(lp.get("tokens_per_s"), c["published_tokens_per_s"]),
            **{key: value for m in ("tpot_ms", "ttft_ms", "ttft_p99_ms") for key, value in (
                (f"published_{m}", c[f"published_{m}"]), (f"predicted_{m}", p[m]),
                (f"{m.removesuffix('_ms')}_error_pct", _error(p[m], c[f"published_{m}"])),
                (f"loo_{m.removesuffix('_ms')}_error_pct", _error(lp.get(m), c[f"published_{m}"])))},
            "skipped": c["skipped"], "excluded": c["excluded"], "note": c["notes"], "sources": c["sources"],
        })
    return {"rows": rows, "summary": summarise(rows)}


def median_abs(values) -> float | None:
    """Median of the absolute finite values (None when there are none)."""
    vals = [abs(v) for v in values if v is not None and math.isfinite(v)]
    return float(np.median(vals)) if vals else None


def _median_signed(values) -> float | None:
    vals = [v for v in values if v is not None and math.isfinite(v)]
    return float(np.median(vals)) if vals else None


def _share_within(values, pct=25.0) -> float | None:
    vals = [abs(v) for v in values if v is not None and math.isfinite(v)]
    return sum(v <= pct for v in vals) / len(vals) if vals else None


def _honest(r, key="error_pct"):
    """A row's out-of-sample error: the check error, or the fit row's leave-one-source-out error."""
    return r[key] if r["set"] == "check" else r[f"loo_{key}"]


def summarise(rows: list[dict]) -> dict:
    """Errors by set (check, fit in-sample, fit leave-one-source-out), by scenario kind, for TPOT and
    TTFT, the share within 25%, the GPU ratios, and by segment (:func:`segments`)."""
    used = [r for r in rows if r["error_pct"] is not None and not r["excluded"]]
    check = [r for r in used if r["set"] == "check"]
    fit = [r for r in used if r["set"] == "fit"]
    out = {
        "check": {"median_abs_error_pct": median_abs(r["error_pct"] for r in check), "n": len(check),
                  "skipped": sum(1 for r in rows if r["set"] == "check" and r["skipped"])},
        "fit": {"median_abs_error_pct": median_abs(r["error_pct"] for r in fit), "n": len(fit)},
        "loo": {"median_abs_error_pct": median_abs(r["loo_error_pct"] for r in fit),
                "n": sum(1 for r in fit if r["loo_error_pct"] is not None)},
    }
    for name, sel in (("check", check), ("loo", fit)):
        key = "error_pct" if name == "check" else "loo_error_pct"
        out[name].update({
            "offline_pct": median_abs(r[key] for r in sel if r["scenario"] == "offline"),
            "offline_signed_pct": _median_signed(r[key] for r in sel if r["scenario"] == "offline"),
            "online_pct": median_abs(r[key] for r in sel if r["scenario"] != "offline"),
            "concurrency_pct": median_abs(r[key] for r in sel if r["scenario"] == "concurrency"),
            "within_25_share": _share_within(r[key] for r in sel),
            "tpot_pct": median_abs(_honest(r, "tpot_error_pct") for r in sel),
            "tpot_n": sum(_honest(r, "tpot_error_pct") is not None for r in sel),
            "ttft_pct": median_abs(_honest(r, "ttft_error_pct") for r in sel),
            "ttft_signed_pct": _median_signed(_honest(r, "ttft_error_pct") for r in sel),
            "ttft_n": sum(_honest(r, "ttft_error_pct") is not None for r in sel),
            "ttft_p99_pct": median_abs(_honest(r, "ttft_p99_error_pct") for r in sel),
            "ttft_p99_n": sum(_honest(r, "ttft_p99_error_pct") is not None for r in sel),
            "gpu_ratio_pct": gpu_ratio_error(sel, key),
            "zero_predictions": unusable_predictions(sel, key),
        })
    out["segments"] = segments(used)
    return out


def _usable(err) -> bool:
    """An error [%] a ratio can be taken from: present, finite, and of a positive prediction
    (predicted / published = 1 + err / 100)."""
    return err is not None and math.isfinite(err) and 1.0 + err / 100.0 > 0.0


def unusable_predictions(rows, key="error_pct") -> int:
    """Rows whose prediction is zero or not finite (a published figure the model calls infeasible)."""
    return sum(1 for r in rows if r[key] is not None and not _usable(r[key]))


def gpu_ratio_error(rows, key="error_pct") -> float | None:
    """Median error [%] of the ratio between two GPUs' throughput on the same work (same model, scenario,
    precision, lengths, system size): which accelerator is faster, and by how much. A row without a usable
    prediction (missing, or zero: no batch meets the latency limits) has no ratio and is left out
    (:func:`unusable_predictions` counts them)."""
    by_work: dict[tuple, list] = {}
    for r in rows:
        if not _usable(r[key]):
            continue
        work = (r["model"], r["scenario"], r["precision"], r["id"].split(r["gpu"])[-1] if r["gpu"] in r["id"] else "")
        by_work.setdefault(work, []).append(r)
    errs = []
    for group in by_work.values():
        gpus = {}
        for r in group:
            gpus.setdefault(r["gpu"], r)
        items = list(gpus.values())
        for i in range(len(items)):
            for j in range(i + 1, len(items)):
                a, b = items[i], items[j]
                errs.append(100.0 * ((1 + a[key] / 100) / (1 + b[key] / 100) - 1.0))
    return median_abs(errs)


def segments(rows) -> list[dict]:
    """Median errors [%] by set x model family x GPU family x scenario (fit rows: leave-one-source-out)."""
    groups: dict[tuple, list] = {}
    for r in rows:
        err = r["error_pct"] if r["set"] == "check" else r["loo_error_pct"]
        groups.setdefault(("check" if r["set"] == "check" else "loo", r["model_family"], r["family"],
                           r["scenario"]), []).append(err)
    return [{"set": s, "model_family": m, "family": f, "scenario": sc, "n": len(v),
             "median_abs_error_pct": median_abs(v), "median_error_pct": _median_signed(v)}
            for (s, m, f, sc), v in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0])))]


# --- constants file --------------------------------------------------------------------------------------

#: relative difference allowed between the committed constants and a refit (3 significant digits)
REFIT_TOLERANCE = 0.01


def differences(committed: dict, refit: dict, tolerance: float = REFIT_TOLERANCE) -> list[str]:
    """Constants whose committed value differs from the refit by more than ``tolerance`` (relative)."""
    out = []
    for name in sorted(set(committed) | set(refit)):
        a, b = committed.get(name), refit.get(name)
        if a is None or b is None or abs(a - b) > tolerance * max(abs(a), abs(b)):
            out.append(f"{name}: committed {a}, refit {b}")
    return out


def write_constants(constants: dict[str, float], path: str | Path | None = None, cases=None) -> Path:
    """Write ``serving_constants.csv``: name, value, unit, fitted_on (the fit files), note."""
    path = Path(path or constants_path())
    cases = _fit_cases(cases or serving_cases())
    files = ";".join(sorted({c["file"] for c in cases}))
    n = len(cases)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["name", "value", "unit", "fitted_on", "note"])
        for name, value in constants.items():
            base = name.split(".")[0]
            note = NOTES.get(base, "")
            if "." in name:
                note = f"{note} ({name.split('.', 1)[1]})"
            w.writerow([name, _sig3(value), UNITS.get(base, "-"), f"{files} ({n} cases)", note])
    forget_constants()
    return path


def _sig3(value: float) -> str:
    """``value`` to 3 significant digits, without exponent (1310, 0.000263)."""
    return np.format_float_positional(value, precision=3, unique=False, fractional=False, trim="-")
