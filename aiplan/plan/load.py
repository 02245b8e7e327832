"""Loading a plan: every default filled (from the schema and the catalog), every field and rule checked.

:func:`load_plan` raises one :class:`~aiplan.core.errors.PlanError` listing all problems found; the
filled plan (:class:`Plan`) round-trips through YAML unchanged.
"""


from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.catalog import GPU, Catalog, CloudOffer, Model, Region, Server, load_catalog
from ..core.errors import PlanError, Problem, unknown, unknown_keys
from ..core.inputs import check_depth, parse_yaml, read_yaml
from ..model.params import model_param_counts
from .checking import bound_text, check_value
from .rules import MODEL_RULES, PLAN_RULES, Rule
from .schema import KINDS, MODEL, MODEL_REQUIRED, SECTIONS, TOP, TOP_LEVEL, F


@dataclass
class _Ctx:
    data: dict
    catalog: Catalog
    model: Model | None = None
    deferred: list = field(default_factory=list)

    def resolve_deferred(self) -> None:
        """Fill defaults computed from other fields, once every section is read."""
        pending = self.deferred
        for _ in range(3):  # a default may depend on another default
            left = []
            for out, key, fn in pending:
                try:
                    out[key] = fn(self)
                except (KeyError, TypeError, AttributeError):
                    left.append((out, key, fn))  # depends on an invalid or unfilled field
            pending = left


@dataclass(frozen=True)
class Plan:
    """A validated plan with its catalog records resolved.

    ``data`` is the filled plan as plain data (what the result reports);
    ``model``, ``gpu``, ``server``, ``cloud`` and ``region`` are catalog records.
    """

    data: dict
    catalog: Catalog = field(repr=False)
    model: Model
    gpu: GPU
    server: Server
    cloud: CloudOffer | None
    region: Region

    @property
    def workload(self) -> dict:
        return self.data["workload"]

    @property
    def cluster(self) -> dict:
        return self.data["cluster"]

    @property
    def facility(self) -> dict:
        return self.data["facility"]

    @property
    def cost(self) -> dict:
        return self.data["cost"]

    @property
    def kind(self) -> str:
        return self.data["workload"]["kind"]


#: default types shared as they are (nothing can change them)
_IMMUTABLE = frozenset({int, float, str, bool, type(None)})


# --- filling sections -------------------------------------------------------------------------------


def _fill_section(name: str, raw: Any, specs: dict[str, F], ctx: _Ctx, problems: list[Problem],
                  kind: str | None) -> dict:
    """Validate the given fields of one section and fill the defaults (``kind``: the workload kind)."""
    out: dict = {}
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        problems.append(Problem(name, "must be a mapping of fields", raw))
        raw = {}
    problems += unknown_keys(name, [key for key in raw if key not in specs], f"field of {name}", specs)
    ctx.data[name] = out
    for key, spec in specs.items():
        applies = not spec.kinds or kind is None or kind in spec.kinds
        if raw.get(key) is not None:
            if not applies:
                problems.append(Problem(f"{name}.{key}", f"only applies to {' or '.join(spec.kinds)} workloads",
                                        raw[key]))
                continue
            value, problem = check_value(f"{name}.{key}", raw[key], spec, ctx.catalog)
            if problem:
                problems.append(problem)
                value = None
            out[key] = value
        elif applies:
            if callable(spec.default):
                out[key] = None
                ctx.deferred.append((out, key, spec.default))  # may depend on a later section
            else:  # a list or mapping default is copied: the plan may not share it
                default = spec.default
                out[key] = default if type(default) in _IMMUTABLE else copy.deepcopy(default)
        # fields that do not apply to this workload are left out of the plan
    return out


def _check_rules(rules: tuple[Rule, ...], values: dict, problems: list[Problem], bad: set[str]) -> None:
    """Append the problems of the rules whose inputs are all known and valid."""
    for rule in rules:
        if rule.path in bad or any(name in bad or (values.get(name) is None and name not in rule.optional)
                                   for name in rule.inputs):
            continue
        if rule.broken(values):
            message = _format(rule.message, values)
            if rule.shown:
                shown = values[rule.shown]  # a whole number as written ("got 100", not the float it became)
                shown = int(shown) if isinstance(shown, float) and shown.is_integer() else shown
                problems.append(Problem(rule.path, message, shown))
            else:
                problems.append(Problem(rule.path, message, has_value=False))
            bad.add(rule.path)


def _format(message: str, values: dict) -> str:
    for key, value in values.items():
        message = message.replace("{" + key + "}", str(value))
    return message


def _model_base(raw: Mapping, catalog: Catalog, problems: list[Problem]) -> dict | None:
    """The fields of the catalog model ``from:`` names ({} without ``from``; None if it is unknown)."""
    if raw.get("from") is None:
        return {}
    value, problem = check_value("model.from", raw["from"], MODEL["from"], catalog)
    if problem:
        problems.append(problem)
        return None
    rec = catalog.models[value]
    base = {k: getattr(rec, k) for k in MODEL if hasattr(rec, k)}
    base.update(name=rec.name, params=None)  # params: derived from the (possibly changed) architecture
    return base


def _model_fields(raw: Mapping, base: dict, catalog: Catalog, problems: list[Problem]) -> tuple[dict, set]:
    """Each model field: the given value (checked), else the base model's, else the default."""
    out, bad = {}, set()
    for key, spec in MODEL.items():
        if raw.get(key) is not None:
            out[key], problem = check_value(f"model.{key}", raw[key], spec, catalog)
            if problem:
                problems.append(problem)
                bad.add(key)
        elif key in base:
            out[key] = base[key]
        elif key in MODEL_REQUIRED:
            problems.append(Problem(f"model.{key}", "is required for a model given as a mapping", has_value=False))
            bad.add(key)
            out[key] = None
        else:
            out[key] = None if callable(spec.default) else copy.deepcopy(spec.default)
    return out, bad


def _model_from_mapping(raw: Mapping, catalog: Catalog, problems: list[Problem]) -> tuple[dict, Model | None]:
    """Validate a model given as a mapping; the filled fields and a Model record (None if invalid)."""
    problems += unknown_keys("model", [key for key in raw if key not in MODEL], "model field", MODEL)
    base = _model_base(raw, catalog, problems)
    if base is None:
        return dict(raw), None
    n_before = len(problems)
    out, bad = _model_fields(raw, base, catalog, problems)
    if len(problems) > n_before:
        return out, None
    for key, spec in MODEL.items():  # defaults that depend on other fields
        if out[key] is None and callable(spec.default):
            out[key] = spec.default(out)
    _check_rules(MODEL_RULES, out, problems, bad)
    if len(problems) > n_before:
        return out, None
    if out["head_dim"] is None:
        out["head_dim"] = out["hidden"] // out["heads"]
    record_fields = {k: v for k, v in out.items() if k not in ("from", "params", "name")}
    model = Model(id=out["from"] or "custom", name=out["name"], params_published=out["params"],
                  status="estimate", sources="", as_of="1970-01-01", notes=None, **record_fields)
    return out, _architecture_in_range(model, problems)


def _architecture_in_range(model: Model, problems: list[Problem]) -> Model | None:
    """``model``, or None (and a problem) when its architecture has more parameters than ``params`` allows."""
    derived = model_param_counts(model)["params"]
    if derived <= MODEL["params"].hi:
        return model
    problems.append(Problem("model", f"has {derived:.3g} parameters by its architecture, more than the "
                                     f"{bound_text(MODEL['params'].hi)} a plan may have: check layers, hidden, "
                                     f"ffn_hidden and experts", has_value=False))
    return None


def _fill_model(raw: Any, catalog: Catalog, problems: list[Problem]) -> tuple[Any, Model | None]:
    """Return (plan value, Model record) for ``model:`` given as an id or a mapping."""
    if raw is None:
        problems.append(Problem("model", "is required: a catalog model id (see `aiplan catalog models`) or a mapping",
                                has_value=False))
        return None, None
    if isinstance(raw, str):
        if raw in catalog.models:
            return raw, catalog.models[raw]
        problems.append(unknown("model", raw, "model id", catalog.models))
        return raw, None
    if not isinstance(raw, Mapping):
        problems.append(Problem("model", "must be a catalog model id or a mapping of architecture fields", raw))
        return raw, None
    return _model_from_mapping(raw, catalog, problems)


def _rule_values(data: dict, model: Model | None, catalog: Catalog) -> dict:
    """The values :data:`PLAN_RULES` read: every ``section.field``, the model's fields, the kind."""
    values = {f"{s}.{k}": v for s in SECTIONS for k, v in data[s].items()}
    values["kind"] = data["workload"].get("kind")
    if model is not None:
        values.update({f"model.{k}": getattr(model, k) for k in ("hidden", "heads", "layers", "context", "experts")})
    server = catalog.servers.get(values.get("facility.server")) if isinstance(values.get("facility.server"), str) \
        else None
    cloud = catalog.clouds.get(values.get("cost.cloud")) if isinstance(values.get("cost.cloud"), str) else None
    gpu = catalog.gpus.get(values.get("cluster.gpu")) if isinstance(values.get("cluster.gpu"), str) else None
    values["gpu.has_fp4"] = bool(gpu.fp4_tflops) if gpu else None
    values["server.gpu"] = server.gpu if server else None
    values["cloud.gpu"] = cloud.gpu if cloud else None
    tp, pp = values.get("cluster.tensor_parallel"), values.get("cluster.pipeline_parallel")
    values["tp_pp"] = (tp or 1) * (pp or 1) if (tp or pp) else None
    prompt, output = values.get("workload.prompt_tokens"), values.get("workload.output_tokens")
    values["prompt+output"] = prompt + output if prompt is not None and output is not None else None
    return values


def _top_level(plan: Mapping, problems: list[Problem]) -> set[str]:
    """Check the top-level keys; return the sections a misspelt key probably meant."""
    found = unknown_keys("", [key for key in plan if key not in TOP_LEVEL], "plan section", TOP_LEVEL)
    problems += found
    return {s for s in SECTIONS for problem in found if f"'{s}'" in problem.hint}


def _catalog_dirs(value: Any, base_dir: Path | None) -> list[str]:
    """The plan's catalog folders, relative ones resolved against ``base_dir``."""
    base = base_dir or Path.cwd()
    return [str((base / p).resolve()) if not Path(p).is_absolute() else p for p in value]


def plan_as_data(plan: Any) -> tuple[Any, Path | None]:
    """The plan as written, as data (a path or YAML text read, not filled with defaults), and the
    folder relative paths resolve against (the plan file's, None otherwise)."""
    data, path = _read_plan(plan)
    return data, None if path is None else Path(path).resolve().parent


def _read_plan(plan: Any) -> tuple[Any, Any]:
    """The plan as written, as data, and the path of its file (None when it is not a file)."""
    is_path = isinstance(plan, str) and "\n" not in plan and plan.strip().endswith((".yaml", ".yml"))
    if isinstance(plan, Path) or is_path:
        return read_yaml(plan), plan
    if isinstance(plan, str):
        return parse_yaml(plan, "plan"), None
    check_depth(plan)
    return plan, None


def load_plan(plan: Any, catalog: Catalog | None = None, base_dir: str | Path | None = None) -> Plan:
    """Validate ``plan`` (a dict, a YAML text, a path, or a :class:`Plan`) and fill defaults.

    ``base_dir``: folder relative paths in the plan resolve against (default: the plan file's
    folder, else the current folder).

    Raises
    ------
    PlanError
        with one line per problem: field path, value received, what is allowed.
    """
    if isinstance(plan, Plan):
        return plan
    plan, file_path = _read_plan(plan)
    if not isinstance(plan, Mapping):
        raise PlanError(Problem("plan", "must be a mapping with sections model, workload, cluster, facility, cost",
                                plan))
    problems: list[Problem] = []
    meant = _top_level(plan, problems)
    data: dict = {}
    for key in ("name", "client", "prepared_by", "catalog"):
        spec = TOP[key]
        if plan.get(key) is not None:
            data[key], problem = check_value(key, plan[key], spec)
            problems += [problem] if problem else []
        elif spec.default is not None:
            data[key] = spec.default
    folders = data.get("catalog") if not any(p.path == "catalog" for p in problems) else None
    if isinstance(folders, list):  # the plan as evaluated names its folders absolutely: it re-loads anywhere
        base = Path(base_dir) if base_dir is not None else \
            None if file_path is None else Path(file_path).resolve().parent  # the plan file's folder
        data["catalog"] = _catalog_dirs(folders, base)
    if catalog is None:
        extra = data["catalog"] if isinstance(folders, list) else []
        try:
            catalog = load_catalog(extra)
        except PlanError as exc:
            raise PlanError(problems + exc.problems) from None
    data["model"], model = _fill_model(plan.get("model"), catalog, problems)
    ctx = _Ctx(data, catalog, model)
    raw_w = plan.get("workload") if isinstance(plan.get("workload"), Mapping) else {}
    kind = raw_w.get("kind", "pretrain")
    kind = kind if isinstance(kind, str) and kind in KINDS else None
    for section, specs in SECTIONS.items():
        if section == "workload" and model is None:  # seq_len's default needs the model
            specs = {k: (F(s.kind, None, s.lo, s.lo_open, s.hi, s.choices, s.table, s.kinds) if callable(s.default)
                         else s) for k, s in specs.items()}
        _fill_section(section, plan.get(section), specs, ctx, problems, kind)
    ctx.resolve_deferred()
    bad = {p.path for p in problems}
    bad |= {f"{s}.{k}" for s in SECTIONS if s in meant or s in bad for k in SECTIONS[s]}
    _check_rules(PLAN_RULES, _rule_values(data, model, catalog), problems, bad)
    if problems:
        raise PlanError(problems)
    return Plan(data=data, catalog=catalog, model=model, gpu=catalog.gpus[data["cluster"]["gpu"]],
                server=catalog.servers[data["facility"]["server"]],
                cloud=catalog.clouds.get(data["cost"]["cloud"]) if data["cost"]["cloud"] else None,
                region=catalog.regions[data["facility"]["region"]])


