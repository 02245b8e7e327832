"""Plan schema: defaults, validation messages, YAML round trip."""

from __future__ import annotations

import math

import pytest
import yaml
from conftest import FINETUNE, INFERENCE, PLANS, PRETRAIN, make_plan

from aiplan import PlanError, dump_plan, load_plan
from aiplan.core.inputs import parse_yaml
from aiplan.plan import apply_overrides


def problems(plan) -> list[str]:
    with pytest.raises(PlanError) as info:
        load_plan(plan)
    return [str(p) for p in info.value.problems]


def one(plan) -> str:
    found = problems(plan)
    assert len(found) == 1, found
    return found[0]


# --- bad input: each kind gives one line naming path, value and what is allowed -------------

GPUS = "cluster.gpus: must be an integer from 1 to 10,000,000 [GPUs]"

BAD = [
    ("negative", make_plan(PRETRAIN, cluster={"gpus": -8}), f"{GPUS}, got -8"),
    ("zero", make_plan(PRETRAIN, cluster={"gpus": 0}), f"{GPUS}, got 0"),
    ("wrong type", make_plan(PRETRAIN, cluster={"gpus": "many"}), f"{GPUS}, got 'many'"),
    ("bool for int", make_plan(PRETRAIN, cluster={"gpus": True}),
     f"{GPUS}, got True; true/false is a yes/no value, not a number"),
    ("fractional int", make_plan(PRETRAIN, cluster={"gpus": 10.5}), f"{GPUS}, got 10.5"),
    ("nan", make_plan(PRETRAIN, workload={"tokens": math.nan}), "workload.tokens: must be a finite number, got nan"),
    ("inf", make_plan(PRETRAIN, workload={"tokens": math.inf}), "workload.tokens: must be a finite number, got inf"),
    ("negative tokens", make_plan(PRETRAIN, workload={"tokens": -1e9}),
     "workload.tokens: must be a number from 1 to 1e16 [tokens], got -1000000000.0"),
    ("bad choice", make_plan(PRETRAIN, workload={"precision": "fp64"}),
     "workload.precision: must be one of fp32, fp16, bf16, fp8, fp4, got 'fp64'"),
    ("mfu above 1", make_plan(PRETRAIN, cluster={"mfu": 1.2}), "cluster.mfu: must be a number > 0 and <= 1, got 1.2"),
    ("pue below 1", make_plan(PRETRAIN, facility={"pue": 0.9}), "facility.pue: must be a number from 1 to 5, got 0.9"),
    ("utilisation zero", make_plan(PRETRAIN, cost={"utilisation": 0}),
     "cost.utilisation: must be a number from 0.001 to 1, got 0"),
    ("utilisation above 1", make_plan(PRETRAIN, cost={"utilisation": 1.5}),
     "cost.utilisation: must be a number from 0.001 to 1, got 1.5"),
    ("negative price", make_plan(PRETRAIN, facility={"electricity_usd_per_kwh": -0.1}),
     "facility.electricity_usd_per_kwh: must be a number from 0 to 10 [USD/kWh], got -0.1"),
    ("zero stage 4", make_plan(PRETRAIN, cluster={"zero_stage": 4}),
     "cluster.zero_stage: must be an integer from 0 to 3, got 4"),
    ("section not a mapping", make_plan(PRETRAIN, cluster=5), "cluster: must be a mapping of fields, got 5"),
    ("missing gpus and deadline", make_plan(PRETRAIN, cluster={"gpus": None}),
     "cluster.gpus: a pretrain plan needs cluster.gpus or cluster.deadline_days"),
    ("missing tokens", make_plan(PRETRAIN, workload={"tokens": None}),
     "workload.tokens: is required for a pretrain plan (training tokens)"),
    ("field of another workload", make_plan(PRETRAIN, workload={"requests_per_s": 5}),
     "workload.requests_per_s: only applies to inference workloads, got 5"),
    ("server of another GPU", make_plan(PRETRAIN, facility={"server": "dgx-h100"}),
     "facility.server: holds h100-sxm GPUs, but cluster.gpu is a100-80gb, got 'dgx-h100'"),
    ("tp not dividing heads", make_plan(PRETRAIN, cluster={"tensor_parallel": 3}),
     "cluster.tensor_parallel: must divide the model's heads (32), got 3"),
    ("tp above node", make_plan(PRETRAIN, model="llama-3.1-70b", cluster={"tensor_parallel": 16}),
     "cluster.tensor_parallel: must be at most gpus_per_node (8), got 16"),
    ("pp above layers", make_plan(PRETRAIN, cluster={"pipeline_parallel": 33}),
     "cluster.pipeline_parallel: must be at most the model's layers (32), got 33"),
    ("lora rank above hidden", make_plan(FINETUNE, workload={"lora_rank": 5000}),
     "workload.lora_rank: must be at most the model's hidden size (4096), got 5000"),
    ("seq_len above context", make_plan(PRETRAIN, workload={"seq_len": 8192}),
     "workload.seq_len: must be at most the model's context (4096), got 8192"),
    ("global batch below one sequence", make_plan(PRETRAIN, workload={"global_batch_tokens": 100}),
     "workload.global_batch_tokens: must hold at least one sequence (workload.seq_len, 4096 tokens), got 100"),
    ("bad lora target", make_plan(FINETUNE, workload={"lora_targets": ["q", "w"]}),
     "workload.lora_targets: must be a list of q, k, v, o, gate, up, down, got ['q', 'w']"),
]


@pytest.mark.parametrize("case,plan,message", BAD, ids=[b[0] for b in BAD])
def test_bad_input_names_path_value_and_allowed(case, plan, message):
    assert one(plan) == message


@pytest.mark.parametrize("model_id,layers,pp,gpus", [
    # Llama 3 405B: 126 layers, PP 16 on 16,384 H100 with TP 8 and DP 128 (Llama Team 2024, §3.3.2, Table 4)
    # [arxiv-2407.21783]
    ("llama-3.1-405b", 126, 16, 16384),
    # DeepSeek-V3: 61 layers, "16-way Pipeline Parallelism" on 2,048 H800 (DeepSeek-AI 2024, §3.2) [arxiv-2412.19437]
    ("deepseek-v3", 61, 16, 2048),
])
def test_pipeline_stages_need_not_divide_the_layers(model_id, layers, pp, gpus):
    plan = load_plan(make_plan(PRETRAIN, model=model_id, workload={"seq_len": 4096},
                               cluster={"gpu": "h100-sxm", "gpus": gpus, "pipeline_parallel": pp}))
    assert plan.model.layers == layers and layers % pp != 0
    assert plan.cluster["pipeline_parallel"] == pp
    # a stage per layer is the most the rule allows
    assert load_plan(make_plan(PRETRAIN, cluster={"pipeline_parallel": 32})).cluster["pipeline_parallel"] == 32


def test_unknown_gpu_suggests_nearest():
    msg = one(make_plan(PRETRAIN, cluster={"gpu": "h100sxm"}))
    assert msg.startswith("cluster.gpu: must be a known GPU id, got 'h100sxm'; did you mean 'h100-sxm'")


def test_unknown_model_suggests_nearest():
    msg = one(make_plan(PRETRAIN, model="lama-2-7b"))
    assert msg.startswith("model: must be a known model id, got 'lama-2-7b'; did you mean 'llama-2-7b'")


def test_unknown_field_suggests_nearest():
    msg = one(make_plan(PRETRAIN, cluster={"gpu_count": 8}))
    assert msg.startswith("cluster.gpu_count: must be a known field of cluster, got 'gpu_count'")
    assert "'gpus'" in msg


def test_unknown_section_suggests_nearest():
    plan = make_plan(PRETRAIN)
    plan["clusters"] = {"gpus": 8}
    assert one(plan).startswith("clusters: must be a known plan section, got 'clusters'; did you mean 'cluster'")


def test_model_mapping_architecture_errors():
    bad = {"layers": 4, "hidden": 1000, "heads": 3, "vocab": 1000, "kv_heads": 2}
    found = problems(make_plan(PRETRAIN, model=bad))
    assert "model.heads: must divide hidden (1000) when head_dim is not given, got 3" in found
    bad = {"layers": 4, "hidden": 1024, "heads": 16, "kv_heads": 3, "vocab": 1000}
    assert "model.kv_heads: must divide heads (16), got 3" in problems(make_plan(PRETRAIN, model=bad))


def test_model_mapping_missing_required_field():
    found = problems(make_plan(PRETRAIN, model={"layers": 4, "hidden": 1024, "heads": 16}))
    assert found == ["model.vocab: is required for a model given as a mapping"]


def test_several_problems_reported_together():
    found = problems(make_plan(PRETRAIN, cluster={"gpus": -1, "mfu": 2}, facility={"pue": 0.5}))
    assert len(found) == 3
    assert {f.split(":")[0] for f in found} == {"cluster.gpus", "cluster.mfu", "facility.pue"}


def test_plan_must_be_mapping():
    assert one(["a", "b"]).startswith("plan: must be a mapping")


def test_yaml_syntax_error_names_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: llama-2-7b\ncluster: [unclosed\n")
    msg = one(bad)
    assert msg.startswith(f"{bad}: is not valid YAML at line")


def test_yaml_is_loaded_safely():
    with pytest.raises(PlanError):
        parse_yaml("!!python/object/apply:os.system ['echo hacked']", "plan")


# --- defaults, round trip -------------------------------------------------------------------


def test_defaults_come_from_the_catalog(catalog):
    plan = load_plan(make_plan(PRETRAIN))
    gpu = catalog.gpus["a100-80gb"]
    assert plan.cluster["mfu"] is None  # calibrated at evaluation time (aiplan.model.plan_mfu)
    assert plan.facility["server"] == gpu.default_server
    assert plan.cluster["gpus_per_node"] == catalog.servers[gpu.default_server].gpus_per_node
    assert plan.cost["cloud"] == gpu.default_cloud


def test_numbers_written_as_text_are_accepted():
    # PyYAML reads "2e12" (no dot) as a string; the plan accepts it as a number.
    plan = load_plan(yaml.safe_load("model: llama-2-7b\nworkload: {tokens: 2e12}\ncluster: {gpus: 64}"))
    assert plan.workload["tokens"] == 2e12


def test_fields_of_other_workloads_are_left_out():
    plan = load_plan(make_plan(INFERENCE))
    assert "tokens" not in plan.workload and "requests_per_s" in plan.workload
    plan = load_plan(make_plan(PRETRAIN))
    assert "requests_per_s" not in plan.workload and "lora_rank" not in plan.workload


@pytest.mark.parametrize("path", sorted(PLANS.glob("*.yaml")), ids=lambda p: p.name)
def test_filled_plan_round_trips_through_yaml(path):
    filled = load_plan(path).data
    text = dump_plan(filled)
    assert yaml.safe_load(text) == filled
    assert load_plan(yaml.safe_load(text)).data == filled


def test_model_mapping_round_trips_and_derives_attention():
    arch = {"layers": 8, "hidden": 1024, "heads": 16, "kv_heads": 4, "vocab": 32000}
    filled = load_plan(make_plan(PRETRAIN, model=arch)).data
    assert filled["model"]["attention"] == "gqa" and filled["model"]["head_dim"] == 64
    assert load_plan(yaml.safe_load(dump_plan(filled))).data == filled


def test_model_from_catalog_with_override():
    plan = load_plan(make_plan(PRETRAIN, model={"from": "llama-2-7b", "layers": 16}))
    assert plan.model.layers == 16 and plan.model.hidden == 4096


def test_overrides_are_validated_like_the_file():
    raw = apply_overrides(make_plan(PRETRAIN), ["cluster.gpus=512", "model.layers=16"])
    assert raw["cluster"]["gpus"] == 512 and raw["model"] == {"from": "llama-2-7b", "layers": 16}
    assert one(apply_overrides(make_plan(PRETRAIN), ["cluster.gpus=-8"])) == \
        "cluster.gpus: must be an integer from 1 to 10,000,000 [GPUs], got -8"
    with pytest.raises(PlanError, match="--set: must look like section.key=value"):
        apply_overrides({}, ["cluster.gpus"])


def test_plan_numbers_as_people_write_them():
    """A plan file takes numbers as the app's fields do: "2T" tokens, "4M" a batch, "301,760" dollars, and "55%"
    for a share; a percent sign on a count is an error naming the field."""
    written = load_plan(make_plan(PRETRAIN, workload={"tokens": "2T", "global_batch_tokens": "4M"},
                                  cost={"utilisation": "55%", "server_price_usd": "301,760"}))
    plain = load_plan(make_plan(PRETRAIN, workload={"tokens": 2e12, "global_batch_tokens": 4e6},
                                cost={"utilisation": 0.55, "server_price_usd": 301760}))
    assert written.workload == plain.workload and written.cost == plain.cost
    with pytest.raises(PlanError, match=r"workload.tokens: must be a number .*got '38%'"):
        load_plan(make_plan(PRETRAIN, workload={"tokens": "38%"}))
