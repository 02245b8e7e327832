"""Worked examples: the public formula functions of ``aiplan/model`` and ``aiplan/cluster`` carry a doctest.

A function counts as covered when its docstring has a numpy-doc ``Examples`` section with at least one
``>>>`` line; the examples themselves run in the fast tier (``--doctest-modules`` in the pytest options),
so a wrong number fails there. Counted: every module-level ``def`` whose name does not start with ``_``,
except

* the pipeline step functions ``describe``, ``step`` and ``layout``, which run a whole step on a plan and a
  result dict and are exercised by the step tests, and
* helpers whose first argument is a ``plan`` or a ``result``: they apply the formulas to a whole validated
  plan (a worked example would need a plan, the catalog and often the previous steps); the formula
  functions they call carry the worked examples.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "aiplan"
FOLDERS = ("model", "cluster")
STEP_FUNCTIONS = {"describe", "step", "layout"}
PLAN_ARGUMENTS = {"plan", "result"}
#: share of the counted functions that must carry a worked example
THRESHOLD = 0.80
#: files in which every counted function already has one (kept complete)
COMPLETE = ("model/params.py", "model/memory.py", "model/compute.py", "model/collectives.py",
            "model/inference.py", "model/efficiency.py", "model/step.py", "model/table.py",
            "cluster/network.py", "cluster/storage.py", "cluster/reliability.py")


def has_example(node: ast.FunctionDef) -> bool:
    """An ``Examples`` heading underlined with dashes, followed by a ``>>>`` line."""
    lines = (ast.get_docstring(node) or "").splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.strip() == "Examples" and set(lines[i + 1].strip()) == {"-"}:
            return any(rest.lstrip().startswith(">>>") for rest in lines[i + 2:])
    return False


def counted(node: ast.FunctionDef) -> bool:
    args = node.args.posonlyargs + node.args.args
    return (not node.name.startswith("_") and node.name not in STEP_FUNCTIONS
            and not (args and args[0].arg in PLAN_ARGUMENTS))


def functions() -> list[tuple[str, str, bool]]:
    """(file relative to aiplan/, function, has an example) of every counted function."""
    rows = []
    for folder in FOLDERS:
        for path in sorted((PACKAGE / folder).glob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            rows += [(f"{folder}/{path.name}", node.name, has_example(node)) for node in tree.body
                     if isinstance(node, ast.FunctionDef) and counted(node)]
    return rows


def missing_by_file(rows) -> str:
    by_file = defaultdict(list)
    for file, name, covered in rows:
        if not covered:
            by_file[file].append(name)
    return "\n".join(f"  {file}: {', '.join(names)}" for file, names in sorted(by_file.items()))


def test_the_count_sees_the_formulas_and_skips_the_steps():
    rows = functions()
    names = {name for _, name, _ in rows}
    # formula functions of both folders are counted ...
    assert {"zero_model_state_gb", "activation_bytes_per_layer", "kv_cache_gb", "fabric", "goodput"} <= names
    # ... the step functions and plan-level helpers are not
    assert not names & (STEP_FUNCTIONS | {"training_memory", "plan_param_counts", "serve_plan"})
    assert len(rows) > 100
    source = ast.parse('def f(x):\n    """Sum.\n\n    Examples\n    --------\n    >>> f(1)\n    1\n    """\n')
    assert has_example(source.body[0])
    assert not has_example(ast.parse('def f(x):\n    """See Examples below: >>> f(1)."""\n').body[0])


def test_complete_files_keep_an_example_for_every_function():
    rows = [r for r in functions() if r[0] in COMPLETE]
    assert {r[0] for r in rows} == set(COMPLETE)
    assert all(covered for _, _, covered in rows), "functions without a worked example:\n" + missing_by_file(rows)


def test_at_least_80_percent_of_the_formula_functions_have_a_worked_example():
    rows = functions()
    share = sum(covered for _, _, covered in rows) / len(rows)
    assert share >= THRESHOLD, (f"{share:.0%} of {len(rows)} public formula functions in model/ and cluster/ "
                                f"have a worked example (at least {THRESHOLD:.0%} wanted); without one:\n"
                                + missing_by_file(rows))
