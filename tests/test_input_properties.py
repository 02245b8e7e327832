"""Property test of the whole input contract (hypothesis): any plan built from the schema table.

Plans are built from :data:`aiplan.plan.TOP`, :data:`~aiplan.plan.MODEL` and
:data:`~aiplan.plan.SECTIONS`: each field gets an in-range value, a range bound, a value just outside
it, or something arbitrary (huge, tiny, negative, NaN, inf, None, text, booleans, numpy scalars,
lists and nested junk). ``evaluate`` either raises :class:`~aiplan.PlanError` or returns a result whose
numbers are all finite or None; a training or serving figure that should be there and is None comes
with a finding. Nothing else may escape, no warning may be raised (warnings are errors) and nothing
may be printed.
"""

from __future__ import annotations

import contextlib
import io
import math
import warnings

import numpy as np
from bad_inputs import bad_findings, non_finite
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aiplan import PlanError, evaluate, load_catalog
from aiplan.plan import KINDS, MODEL, SECTIONS, TOP, F

CATALOG = load_catalog()
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))

#: figures a training / serving result should have; when one is None a finding must say why
TRAINING_FIGURES = (("compute", "gpu_hours"), ("compute", "wall_clock_days"), ("compute", "total_flops"),
                    ("memory", "per_gpu_gb"), ("cluster", "gpus"), ("cluster", "nodes"))
SERVING_FIGURES = (("inference", "gpus"), ("inference", "replicas"), ("inference", "ttft_ms"),
                   ("inference", "tpot_ms"), ("memory", "per_gpu_gb"), ("cluster", "nodes"))

_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20), st.sampled_from([10**400, -(10**30), 5e-324, -0.0, 1e308, "1e400", "nan", "on", "yes", ""]),
)
#: nested junk: lists and mappings of scalars
JUNK = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                    st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                    max_leaves=12)


def _numpy(value):
    """The same number as a numpy scalar (as pandas and widgets hand them over)."""
    if isinstance(value, bool):
        return np.bool_(value)
    if isinstance(value, int) and abs(value) < 2**62:
        return np.int64(value)
    if isinstance(value, float):
        return np.float64(value)
    return value


def in_range(spec: F) -> st.SearchStrategy:
    """Values a field allows: anywhere in its range, spread over its orders of magnitude, or a bound."""
    lo, hi = float(spec.lo), float(spec.hi)
    if spec.kind == "int":
        first = math.ceil(lo) + (1 if spec.lo_open and lo.is_integer() else 0)
        logs = st.floats(math.log10(max(first, 1)), math.log10(hi)).map(lambda x: min(max(round(10.0**x), first),
                                                                                       int(hi)))
        return st.one_of(st.integers(first, int(hi)), logs, st.sampled_from([first, int(hi)]))
    logs = st.floats(math.log10(max(lo, 1e-12)), math.log10(hi)).map(lambda x: min(max(10.0**x, lo), hi))
    bounds = st.sampled_from([hi] if spec.lo_open else [lo, hi])
    return st.one_of(st.floats(lo, hi, exclude_min=spec.lo_open), logs.filter(lambda x: x > lo or not spec.lo_open),
                     bounds)


def number_values(spec: F) -> st.SearchStrategy:
    """In range, at the bounds, just outside them, or far off (huge, tiny, negative, NaN, inf)."""
    lo, hi = float(spec.lo), float(spec.hi)
    edges = st.sampled_from([v for v in (hi * 2 + 1, lo - 1, -lo, lo - 1e-9, hi + 1e-9) if math.isfinite(v)])
    far = st.sampled_from([1e300, -1e300, 1e-300, 5e-324, float("nan"), float("inf"), -float("inf"), 10**400, -0.0])
    base = st.one_of(in_range(spec), edges, far, _SCALARS)
    return st.one_of(base, base.map(_numpy))


def good_values(spec: F) -> st.SearchStrategy:
    """What a field allows (as Python or numpy values)."""
    if spec.kind in ("int", "float"):
        return st.one_of(in_range(spec), in_range(spec).map(_numpy))
    if spec.kind == "choice":
        return st.sampled_from(spec.choices)
    if spec.kind == "bool":
        return st.one_of(st.booleans(), st.booleans().map(np.bool_))
    if spec.kind == "id":
        return st.sampled_from(sorted(CATALOG.table(spec.table)))
    if spec.kind == "list":
        return st.lists(st.sampled_from(spec.choices), min_size=1, max_size=len(spec.choices))
    if spec.kind == "str":
        return st.text(st.characters(codec="utf-8"), min_size=1, max_size=40).filter(str.strip)
    return st.just(None)  # paths: a catalog folder test lives in test_bad_inputs


def any_values(spec: F) -> st.SearchStrategy:
    """Values for one schema field: mostly what it allows, sometimes anything."""
    if spec.kind in ("int", "float"):
        bad = number_values(spec)
    elif spec.kind == "bool":
        bad = st.sampled_from(["on", "yes", "no", 1, 0, None])
    else:
        bad = st.text(max_size=12)
    return st.one_of(good_values(spec), bad, JUNK)


#: fields that rules tie to others (the layout to the model, the server and cloud to the GPU, sequence
#: lengths to the context); a "valid" plan leaves them alone
TIED = {"tensor_parallel", "pipeline_parallel", "data_parallel", "expert_parallel", "server", "cloud", "seq_len",
        "lora_rank", "prompt_tokens", "output_tokens", "heads", "kv_heads", "hidden", "head_dim", "attention",
        "active_experts", "dense_layers", "from", "params", "kv_lora_rank", "qk_rope_head_dim", "global_layers"}


@st.composite
def sections(draw, specs: dict[str, F], valid: bool, max_fields: int = 5, kind: str = "") -> dict:
    keys = sorted(k for k, f in specs.items() if not (valid and (k in TIED or (f.kinds and kind not in f.kinds))))
    keys = draw(st.lists(st.sampled_from(keys), max_size=max_fields, unique=True))
    out = {k: draw(good_values(specs[k]) if valid else any_values(specs[k])) for k in keys}
    if not valid and draw(st.integers(0, 9)) == 0:
        out[draw(st.text(max_size=10))] = draw(JUNK)  # an unknown field
    return out


@st.composite
def models(draw, valid: bool):
    choice = draw(st.integers(0, 9))
    if choice < 5:
        return draw(st.sampled_from(sorted(CATALOG.models)))
    if choice < 8:  # a catalog model with some fields changed
        out = draw(sections(MODEL, valid, 4))
        out["from"] = draw(st.sampled_from(sorted(CATALOG.models)))
        return out
    if choice < 9:  # a whole architecture
        heads = draw(in_range(MODEL["heads"]))
        required = {"layers": draw(in_range(MODEL["layers"])), "hidden": heads * draw(st.integers(1, 256)),
                    "heads": heads, "vocab": draw(in_range(MODEL["vocab"]))}
        if not valid:
            required.update({k: draw(any_values(MODEL[k])) for k in draw(st.sets(st.sampled_from(sorted(required))))})
        return {**draw(sections(MODEL, valid, 6)), **required}
    return draw(JUNK) if not valid else "llama-2-7b"


@st.composite
def plans(draw):
    valid = draw(st.integers(0, 9)) < 7  # mostly plans that pass, so the pipeline itself is exercised
    kind = draw(st.sampled_from(KINDS))
    values = good_values if valid else any_values
    plan = {"model": draw(models(valid)), "workload": {"kind": kind}, "cluster": {}}
    if kind in ("pretrain", "finetune"):
        plan["workload"]["tokens"] = draw(values(SECTIONS["workload"]["tokens"]))
        if draw(st.booleans()):
            plan["cluster"]["gpus"] = draw(st.one_of(st.integers(1, 4096), values(SECTIONS["cluster"]["gpus"])))
        else:
            plan["cluster"]["deadline_days"] = draw(values(SECTIONS["cluster"]["deadline_days"]))
    for name, specs in SECTIONS.items():
        if draw(st.integers(0, 2)) > 0:
            fields = draw(sections(specs, valid, 4, kind))
            fields.pop("kind", None)
            plan.setdefault(name, {}).update(fields)
    for key in ("name", "client"):
        if draw(st.booleans()):
            plan[key] = draw(values(TOP[key]))
    if not valid and draw(st.integers(0, 9)) == 0:  # a whole section that is not a mapping
        plan[draw(st.sampled_from(sorted(SECTIONS)))] = draw(JUNK)
    return plan


def _missing_figures(result: dict) -> list[str]:
    figures = SERVING_FIGURES if result["plan"]["workload"]["kind"] == "inference" else TRAINING_FIGURES
    return [f"{section}.{key}" for section, key in figures if result[section][key] is None]


@SETTINGS
@given(plan=plans())
def test_any_plan_is_a_result_or_a_plan_error(plan):
    printed = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        warnings.simplefilter("error")
        try:
            result = evaluate(plan, catalog=CATALOG)
        except PlanError as exc:
            assert isinstance(exc, ValueError) and exc.problems
            assert all("\n" not in str(p) and len(str(p)) <= 200 for p in exc.problems)
            result = None
    assert printed.getvalue() == ""
    if result is None:
        return
    assert not non_finite(result), non_finite(result)
    assert not bad_findings(result), bad_findings(result)
    missing = _missing_figures(result)
    if missing:
        explained = [f["id"] for f in result["checks"] if f["severity"] in ("critical", "warning")]
        assert explained, f"{missing} are None and no finding says why"
