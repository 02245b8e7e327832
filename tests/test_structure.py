"""The package's structure: no import cycles, no reaching into another package's private names,
and the step time of the chosen layout agrees with the wall-clock time."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from aiplan import evaluate

PACKAGE = Path(__file__).resolve().parent.parent / "aiplan"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    is_package = MODULES[module].name == "__init__.py"
    base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def _with_packages(name: str) -> set[str]:
    """``name`` and every package above it: importing ``aiplan.a.b`` runs ``aiplan.a``'s ``__init__``."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(2, len(parts) + 1)}


def imports_of(module: str, deferred: bool = True) -> set[str]:
    """aiplan modules ``module`` imports (anywhere, or only at the top level), with the packages
    whose ``__init__`` those imports run (``if TYPE_CHECKING:`` imports never run)."""
    out = set()
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    tree.body = [n for n in tree.body if not (isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")]
    for node in ast.walk(tree) if deferred else tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                out |= _with_packages(a.name)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out |= _with_packages(sub if sub in MODULES else target)
    own = _with_packages(module)  # a submodule's own packages are being imported already
    return {m for m in out if m in MODULES and m not in own}


def test_imports_are_resolved_to_real_modules():
    graph = {m: imports_of(m) for m in MODULES}
    assert "aiplan.model" in graph["aiplan.cluster.step"]
    assert "aiplan.core.units" in graph["aiplan.facility.formulas"]


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_cycles():
    """A module imports another only if that one never imports it back, directly or not.

    A package's ``__init__`` counts as a module: a submodule that imports its own package's
    ``__init__`` (``from .. import x`` of a name the ``__init__`` defines) closes a cycle.
    Submodules importing sibling modules are fine.
    """
    cycle = _find_cycle({m: imports_of(m) for m in MODULES})
    assert cycle is None, " -> ".join(cycle)


def test_a_package_init_cycle_is_seen():
    """model -> cluster/__init__ -> cluster.parallel -> model was invisible before packages counted."""
    graph = {"aiplan.model.step": {"aiplan.cluster"}, "aiplan.cluster": {"aiplan.cluster.parallel"},
             "aiplan.cluster.parallel": {"aiplan.model.step"}}
    assert _find_cycle(graph) is not None
    assert "aiplan.cluster" in _with_packages("aiplan.cluster.network")


#: the layers, bottom to top (docs/architecture.md): a module imports only from its own layer or below
LAYERS = ("core", "model", "plan", "cluster", "facility", "cost", "uncertainty", "findings", "pipeline",
          "calibration", "analysis", "present", "report", "ui", "cli", "__main__", "")
#: modules that load an optional heavy library (altair, ipywidgets) at import: only these may be
#: imported inside a function (a report or the CLI stays quick until it draws a chart)
HEAVY = {"aiplan.present.charts", "aiplan.ui", "aiplan.ui.app", "aiplan.ui.compare", "aiplan.ui.controls",
         "aiplan.ui.options_view", "aiplan.ui.dom", "aiplan.ui.figures", "aiplan.report", "aiplan.present"}


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1] if len(parts) > 1 else "")


def test_every_module_has_a_layer():
    assert all(_layer(m) >= 0 for m in MODULES)


def test_imports_go_down_the_layers():
    up = [f"{m} ({LAYERS[_layer(m)]}) imports {t} ({LAYERS[_layer(t)]})"
          for m in MODULES for t in imports_of(m) if _layer(t) > _layer(m)]
    assert not up, up


def test_deferred_imports_only_for_heavy_modules():
    """An aiplan import inside a function is there to keep altair or ipywidgets out of a quick
    import, never to dodge a cycle."""
    deferred = [f"{m} -> {t}" for m in MODULES for t in imports_of(m) - imports_of(m, deferred=False)
                if t not in HEAVY]
    assert not deferred, deferred


def test_the_layer_check_can_fail():
    assert _layer("aiplan.model.step") < _layer("aiplan.cluster.step") < _layer("aiplan.pipeline")
    assert _layer("aiplan.present.charts") > _layer("aiplan.analysis.options")


def test_cycle_finder_finds_a_cycle():
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_private_names_of_another_package():
    """``from x import _name`` or ``x._name`` only within the same subpackage."""
    offenders = []
    for module, path in MODULES.items():
        package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(module, node)
                for alias in node.names:
                    if alias.name.startswith("_") and not target.startswith(package) and alias.name != "__version__":
                        offenders.append(f"{module}: from {target} import {alias.name}")
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr" and len(node.args) >= 2:
                arg = node.args[1]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("_") \
                        and not arg.value.startswith("__"):
                    offenders.append(f"{module}: getattr(..., {arg.value!r})")
    assert not offenders, offenders


def test_package_inits_export_only_public_names():
    for module, path in MODULES.items():
        if path.name != "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                private = [a.name for a in node.names if a.name.startswith("_") and a.name != "__version__"]
                assert not private, f"{module} re-exports {private}"


STEP_PLANS = {
    precision: {"name": f"step time {precision}", "model": "llama-2-7b",
                "workload": {"kind": "pretrain", "tokens": 1.0e11, "seq_len": 4096, "precision": precision},
                "cluster": {"gpu": {"fp8": "h100-sxm", "fp4": "b200"}.get(precision, "a100-80gb"), "gpus": 64}}
    for precision in ("bf16", "fp8", "fp32", "fp4")
}


@pytest.mark.parametrize("precision", STEP_PLANS)
def test_step_time_agrees_with_wall_clock_days(precision):
    """steps x cluster.step_time_s x run overhead / goodput = compute.wall_clock_days within 5%
    (one peak FLOP/s and one MFU for both; before the consolidation fp32 gave 2x)."""
    r = evaluate(STEP_PLANS[precision])
    steps = r["plan"]["workload"]["tokens"] / r["plan"]["workload"]["global_batch_tokens"]
    days = steps * r["cluster"]["step_time_s"] * r["compute"]["overhead_factor"] / r["reliability"]["goodput"] / 86400
    assert math.isclose(days, r["compute"]["wall_clock_days"], rel_tol=0.05), (days, r["compute"]["wall_clock_days"])


def test_fp32_takes_twice_the_bf16_time_on_a100():
    """A100 TF32 dense peak is half the BF16 one (datasheet: 156 vs 312 TFLOP/s)."""
    bf16, fp32 = (evaluate(STEP_PLANS["bf16"]),
                  evaluate({**STEP_PLANS["fp32"], "cluster": STEP_PLANS["bf16"]["cluster"]}))
    ratio = fp32["compute"]["step_compute_s"] / bf16["compute"]["step_compute_s"]
    assert math.isclose(ratio, 2.0, rel_tol=1e-9)
    # the per-step fixed time is the same in either precision, so the run takes a little under twice as long
    days = fp32["compute"]["wall_clock_days_no_failures"] / bf16["compute"]["wall_clock_days_no_failures"]
    assert fp32["compute"]["step_fixed_s"] == bf16["compute"]["step_fixed_s"] and 1.8 < days < 2.0
