"""Regenerate the notebook regression golden files in ``tests/golden/``.

Usage (from the repository root)::

    .venv/bin/python tools/regen_golden.py            # every case
    .venv/bin/python tools/regen_golden.py report      # only cases whose notebook name contains "report"
    .venv/bin/python -m aiplan.report --regen-golden   # the same as the first line

Each case runs one notebook of ``notebooks/`` under papermill with one plan of
``plans/`` (``plan_path`` parameter) and reads the JSON sidecar the notebook
writes to its ``results_path`` parameter (``aiplan.report.write_sidecar``). The
golden file ``tests/golden/<notebook>__<plan>.json`` holds the sidecar's
``key_results`` (the contract keys of the result), sorted, one value per line,
so a changed value shows up as a one-line diff in review. Review that diff
before committing: a changed golden value is a changed answer.

``tests/test_regression.py`` imports :data:`CASES`, :func:`run_case` and
:func:`compare` from here, so the tests and this command always agree.
"""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
PLANS = ROOT / "plans"
GOLDEN = ROOT / "tests" / "golden"
sys.path.insert(0, str(ROOT))

from aiplan import report  # noqa: E402

#: Tolerance for numbers. evaluate() is deterministic Python/numpy on the same inputs, so values
#: only move when a formula, a default or a catalog row changes (which must show up in review).
#: rel 1e-6 leaves room for last-digit differences of libm/numpy builds across machines
#: (transcendentals and summation order differ by a few ulps, ~1e-15 relative, amplified at most
#: by the layout search's rounding, never close to 1e-6) and abs 1e-9 for values that are ~0.
REL_TOL = 1e-6
ABS_TOL = 1e-9

#: The plan used for notebooks other than report.ipynb (which runs with every plan). One plan each
#: keeps the suite fast on 2 cores; a notebook about one workload gets a plan of that workload.
PLAN_FOR_NOTEBOOK = {
    "01_model": "finetune-lora.yaml",  # spread the workloads over the step notebooks
    "02_cluster": "moe-pretrain.yaml",
    "04_cost": "inference.yaml",
    "inference": "inference.yaml",
    "serving": "inference.yaml",
    "finetune": "finetune-lora.yaml",
    "fine-tune": "finetune-lora.yaml",
}
DEFAULT_PLAN = "example.yaml"


def all_plans() -> list[str]:
    return sorted(p.name for p in PLANS.glob("*.yaml"))


def plan_for(notebook: str) -> str:
    """The one plan a non-report notebook runs with."""
    for hint, plan in PLAN_FOR_NOTEBOOK.items():
        if hint in notebook.lower():
            return plan
    return DEFAULT_PLAN


def declared_parameters(notebook: Path) -> dict:
    import papermill

    return papermill.inspect_notebook(str(notebook))


def cases() -> list[tuple[str, str]]:
    """(notebook file name, plan file name) pairs: report x every plan, others x one plan.

    Notebooks without a ``plan_path`` parameter cannot take a plan and are run with their
    defaults (plan name ``""``). A notebook gives its key results either in the metadata of a
    displayed output (the step notebooks: nothing for a reader to see) or in a JSON file at its
    ``results_path`` parameter (the report, the comparison and the validation notebooks).
    """
    out = []
    for nb in sorted(NOTEBOOKS.glob("*.ipynb")):
        if nb.name == "report.ipynb":
            out += [(nb.name, plan) for plan in all_plans()]
        elif "plan_path" in declared_parameters(nb):
            out.append((nb.name, plan_for(nb.name)))
        else:
            out.append((nb.name, ""))
    return out


CASES = cases()


def golden_path(notebook: str, plan: str) -> Path:
    return GOLDEN / f"{Path(notebook).stem}__{Path(plan).stem or 'defaults'}.json"


def run_case(notebook: str, plan: str, workdir: Path, kernel_name: str = "python3",
             root: Path = ROOT) -> tuple[dict | None, Path]:
    """Run one case; return the sidecar's key results (None if it wrote none) and the executed notebook.

    ``root`` is the repository whose notebooks and plans run (a copy, for the Binder environment);
    ``kernel_name`` the Jupyter kernel they run in.
    """
    import json

    notebooks = root / "notebooks"
    nb = notebooks / notebook
    declared = declared_parameters(nb)
    stem = f"{Path(notebook).stem}__{Path(plan).stem or 'defaults'}"
    sidecar = workdir / f"{stem}.json"
    params: dict[str, Any] = {"results_path": str(sidecar)} if "results_path" in declared else {}
    if plan:
        params["plan_path"] = str(root / "plans" / plan)
    if "report_date" in declared:
        params["report_date"] = "2000-01-01"
    if "static" in declared:
        params["static"] = True  # the planner's plain (headless) figures
    executed = workdir / f"{stem}.out.ipynb"
    report.run_notebook(nb, executed, params, cwd=notebooks, kernel_name=kernel_name)
    if sidecar.is_file():
        values = json.loads(sidecar.read_text(encoding="utf-8"))["key_results"]
    else:  # a notebook that shows its figures carries its key results in the output metadata
        values = report.key_results_of(json.loads(executed.read_text(encoding="utf-8")))
    return values, executed


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    return a == b


def compare(actual: dict, golden: dict) -> list[str]:
    """Differences between key results and a golden file, one line each (empty: equal)."""
    diffs = []
    for key in sorted(set(actual) | set(golden)):
        if key not in golden:
            diffs.append(f"{key}: new key (value {actual[key]!r}); regenerate the golden files")
        elif key not in actual:
            diffs.append(f"{key}: missing (golden {golden[key]!r})")
        elif not _close(actual[key], golden[key]):
            diffs.append(f"{key}: got {actual[key]!r}, golden {golden[key]!r}")
    return diffs


def main(argv: list[str]) -> int:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    only = argv[0] if argv else ""
    written = 0
    with tempfile.TemporaryDirectory(prefix="aiplan-golden-") as tmp:
        for notebook, plan in CASES:
            if only and only not in notebook:
                continue
            print(f"running {notebook} with {plan or 'its defaults'} ...", file=sys.stderr, flush=True)
            values, _ = run_case(notebook, plan, Path(tmp))
            if values is None:
                print(f"  {notebook} gave no results: show them with app.show_static() or report.write_sidecar",
                      file=sys.stderr)
                return 1
            path = golden_path(notebook, plan)
            path.write_text(report.dumps_sorted(values), encoding="utf-8")
            written += 1
            print(f"  wrote {path.relative_to(ROOT)}", file=sys.stderr)
    print(f"{written} golden file(s) written to {GOLDEN.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
