"""Rules that relate several plan fields (one row each): :data:`MODEL_RULES` and :data:`PLAN_RULES`."""


from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..core.catalog import parse_date
from .schema import TRAIN

_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def _not_a_date(text) -> bool:
    """Whether ``text`` is not a date YYYY, YYYY-MM or YYYY-MM-DD."""
    return not (isinstance(text, str) and _DATE.match(text) and parse_date(text) is not None)


@dataclass(frozen=True)
class Rule:
    """A rule relating several fields: when ``broken(values)`` is true, ``path`` gets ``message``.

    ``values`` is a dict of the (validated) fields the rule reads; a rule is skipped when one of
    its inputs is already wrong (no follow-on errors) or missing (unless it is ``optional``).
    ``message`` is formatted with ``values``; ``shown`` names the value the problem reports (none
    when empty).
    """

    path: str
    inputs: tuple[str, ...]
    broken: Callable[[dict], bool]
    message: str
    shown: str = ""
    optional: tuple[str, ...] = ()


#: rules of a model given as a mapping (inputs are model fields)
MODEL_RULES: tuple[Rule, ...] = (
    Rule("model.heads", ("hidden", "heads", "head_dim"), lambda v: v["head_dim"] is None and v["hidden"] % v["heads"],
         "must divide hidden ({hidden}) when head_dim is not given", "heads", optional=("head_dim",)),
    Rule("model.kv_heads", ("heads", "kv_heads"), lambda v: v["heads"] % v["kv_heads"], "must divide heads ({heads})",
         "kv_heads"),
    Rule("model.active_experts", ("experts", "active_experts"), lambda v: v["active_experts"] > v["experts"],
         "must be at most experts ({experts})", "active_experts"),
    Rule("model.dense_layers", ("layers", "dense_layers"),
         lambda v: v["dense_layers"] is not None and v["dense_layers"] > v["layers"],
         "must be at most layers ({layers})", "dense_layers", optional=("dense_layers",)),
    Rule("model.attention", ("attention", "kv_lora_rank", "qk_rope_head_dim"),
         lambda v: v["attention"] == "mla" and not (v["kv_lora_rank"] and v["qk_rope_head_dim"]),
         "mla needs kv_lora_rank and qk_rope_head_dim", "attention", optional=("kv_lora_rank", "qk_rope_head_dim")),
)

_TP_PP = ("cluster.tensor_parallel", "cluster.pipeline_parallel")
#: smallest model FLOP utilisation the kit computes with (a run at less would take ages; below it
#: figures overflow)
MFU_MIN = 0.001

def _fp4_rule(path: str, kinds: tuple[str, ...]) -> Rule:
    """A precision field set to fp4 needs a GPU with FP4 tensor cores."""
    return Rule(path, ("kind", path, "gpu.has_fp4"),
                lambda v: v["kind"] in kinds and v[path] == "fp4" and not v["gpu.has_fp4"],
                "fp4 needs a GPU with FP4 tensor cores (catalog fp4_tflops); {cluster.gpu} has none", path)


#: rules across plan sections (inputs are ``section.field`` paths; ``model.*`` reads the model record,
#: ``kind`` the workload kind)
PLAN_RULES: tuple[Rule, ...] = (
    Rule("workload.tokens", ("kind", "workload.tokens"), lambda v: v["kind"] in TRAIN and v["workload.tokens"] is None,
         "is required for a {kind} plan (training tokens)", optional=("workload.tokens",)),
    Rule("cluster.gpus", ("kind", "cluster.gpus", "cluster.deadline_days"),
         lambda v: v["kind"] in TRAIN and v["cluster.gpus"] is None and v["cluster.deadline_days"] is None,
         "a {kind} plan needs cluster.gpus or cluster.deadline_days",
         optional=("cluster.gpus", "cluster.deadline_days")),
    Rule("workload.lora_rank", ("kind", "workload.method", "workload.lora_rank", "model.hidden"),
         lambda v: v["kind"] == "finetune" and v["workload.method"] in ("lora", "qlora")
         and v["workload.lora_rank"] > v["model.hidden"],
         "must be at most the model's hidden size ({model.hidden})", "workload.lora_rank"),
    Rule("workload.seq_len", ("kind", "workload.seq_len", "model.context"),
         lambda v: v["kind"] in TRAIN and v["workload.seq_len"] > v["model.context"],
         "must be at most the model's context ({model.context})", "workload.seq_len"),
    Rule("workload.global_batch_tokens", ("kind", "workload.global_batch_tokens", "workload.seq_len"),
         lambda v: v["kind"] in TRAIN and v["workload.global_batch_tokens"] < v["workload.seq_len"],
         "must hold at least one sequence (workload.seq_len, {workload.seq_len} tokens)",
         "workload.global_batch_tokens"),
    Rule("workload.prompt_tokens", ("kind", "workload.prompt_tokens", "workload.output_tokens", "model.context"),
         lambda v: v["kind"] == "inference" and v["workload.prompt_tokens"] + v["workload.output_tokens"]
         > v["model.context"],
         "prompt + output tokens must be at most the model's context ({model.context})", "prompt+output"),
    *(_fp4_rule(path, kinds) for path, kinds in (("workload.precision", TRAIN),
                                                  ("workload.activation_precision", ("inference",)),
                                                  ("workload.kv_precision", ("inference",)))),
    Rule("facility.server", ("facility.server", "cluster.gpu", "server.gpu"),
         lambda v: v["server.gpu"] != v["cluster.gpu"], "holds {server.gpu} GPUs, but cluster.gpu is {cluster.gpu}",
         "facility.server"),
    Rule("cost.cloud", ("cost.cloud", "cluster.gpu", "cloud.gpu"), lambda v: v["cloud.gpu"] != v["cluster.gpu"],
         "offers {cloud.gpu} GPUs, but cluster.gpu is {cluster.gpu}", "cost.cloud"),
    Rule("cost.purchase_date", ("cost.purchase_date",), lambda v: _not_a_date(v["cost.purchase_date"]),
         "must be a date YYYY-MM-DD (or YYYY-MM, YYYY)", "cost.purchase_date"),
    Rule("cluster.mfu", ("cluster.mfu",), lambda v: v["cluster.mfu"] < MFU_MIN,
         f"must be at least {MFU_MIN:g} ({MFU_MIN:.1%}); published training runs reach 20-60%",
         "cluster.mfu"),
    Rule("cluster.tensor_parallel", ("cluster.tensor_parallel", "model.heads"),
         lambda v: v["model.heads"] % v["cluster.tensor_parallel"], "must divide the model's heads ({model.heads})",
         "cluster.tensor_parallel"),
    Rule("cluster.tensor_parallel", ("cluster.tensor_parallel", "cluster.gpus_per_node"),
         lambda v: v["cluster.tensor_parallel"] > v["cluster.gpus_per_node"],
         "must be at most gpus_per_node ({cluster.gpus_per_node})", "cluster.tensor_parallel"),
    Rule("cluster.pipeline_parallel", ("cluster.pipeline_parallel", "model.layers"),
         lambda v: v["cluster.pipeline_parallel"] > v["model.layers"],
         "must be at most the model's layers ({model.layers})", "cluster.pipeline_parallel"),
    Rule("cluster.expert_parallel", ("cluster.expert_parallel", "model.experts"),
         lambda v: v["model.experts"] % v["cluster.expert_parallel"],
         "must divide the model's experts ({model.experts})", "cluster.expert_parallel"),
    Rule("cluster.data_parallel", ("cluster.gpus", "cluster.tensor_parallel", "cluster.pipeline_parallel",
                                   "cluster.data_parallel"),
         lambda v: v["cluster.tensor_parallel"] * v["cluster.pipeline_parallel"] * v["cluster.data_parallel"]
         != v["cluster.gpus"],
         "tensor x pipeline x data parallel must equal gpus ({cluster.gpus})", "cluster.data_parallel"),
    Rule("cluster.tensor_parallel", ("cluster.gpus", "tp_pp", *_TP_PP), lambda v: v["tp_pp"] > v["cluster.gpus"],
         "tensor x pipeline parallel must be at most gpus ({cluster.gpus})", "tp_pp", optional=_TP_PP),
    Rule("cluster.gpus", ("cluster.gpus", "tp_pp", *_TP_PP), lambda v: v["cluster.gpus"] % v["tp_pp"],
         "must be a multiple of tensor x pipeline parallel ({tp_pp})", "cluster.gpus", optional=_TP_PP),
)


