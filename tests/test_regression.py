"""Notebook regression suite and notebook hygiene.

Every notebook in ``notebooks/`` runs under papermill (sequentially, kernel ``python3``,
cwd = notebooks/): ``report.ipynb`` with every plan in ``plans/``, the others with one plan
each (``tools/regen_golden.py`` decides which). Each run writes its key results to a JSON
sidecar that is compared with ``tests/golden/<notebook>__<plan>.json``; the tolerance
(``REL_TOL``/``ABS_TOL``) and why it is tight are documented in ``tools/regen_golden.py``.

Regenerate the golden files after an intended change with
``.venv/bin/python tools/regen_golden.py`` and review the JSON diff.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import regen_golden as rg  # noqa: E402

NOTEBOOK_FILES = sorted((ROOT / "notebooks").glob("*.ipynb"))
REQUIRED_REPORT_PLANS = {"example.yaml", "finetune-lora.yaml", "inference.yaml", "does-not-fit.yaml",
                         "moe-pretrain.yaml"}


@pytest.mark.parametrize("path", NOTEBOOK_FILES, ids=lambda p: p.name)
def test_notebook_is_committed_clean(path):
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    assert "papermill" not in nb.metadata, "executed notebook committed: papermill metadata present"
    assert "widgets" not in nb.metadata, "widget state committed"
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) <= 1, "more than one parameters cell"
    for i, cell in enumerate(nb.cells):
        assert "papermill" not in cell.metadata, f"cell {i}: papermill metadata"
        assert "injected-parameters" not in cell.metadata.get("tags", []), f"cell {i}: injected parameters"
        if cell.cell_type != "code":
            continue
        assert cell.outputs == [], f"cell {i} has outputs"
        assert cell.execution_count is None, f"cell {i} has an execution count"
        lines = cell.source.splitlines()
        assert not any(line.lstrip().startswith(("def ", "async def ", "class ")) for line in lines), \
            f"cell {i} defines a function or class: it belongs in aiplan/"


def test_report_notebook_declares_its_parameters_with_types_and_help():
    import papermill

    params = papermill.inspect_notebook(str(ROOT / "notebooks" / "report.ipynb"))
    for name in ("plan_path", "plan_yaml", "results_path", "report_date", "svg_charts"):
        assert name in params, name
        assert params[name]["inferred_type_name"] in ("str", "bool"), params[name]
        assert params[name]["help"], f"{name} has no help comment"


def test_cases_cover_every_plan_and_every_notebook():
    report_plans = {plan for nb, plan in rg.CASES if nb == "report.ipynb"}
    assert report_plans == {p.name for p in (ROOT / "plans").glob("*.yaml")}
    assert REQUIRED_REPORT_PLANS <= report_plans
    assert {nb for nb, _ in rg.CASES} == {p.name for p in NOTEBOOK_FILES}


def test_compare_flags_changes_and_tolerates_only_float_noise():
    golden = {"a.x_gb": 100.0, "a.fits": True, "checks": ["info:x"], "a.none": None}
    assert rg.compare(dict(golden), golden) == []
    assert rg.compare({**golden, "a.x_gb": 100.0 * (1 + 1e-12)}, golden) == []
    assert rg.compare({**golden, "a.x_gb": 100.01}, golden)  # a 1e-4 change is a change
    assert rg.compare({**golden, "a.fits": 1}, golden)  # a bool is not a number
    assert rg.compare({**golden, "a.none": 0.0}, golden)
    assert rg.compare({k: v for k, v in golden.items() if k != "checks"}, golden)
    assert rg.compare({**golden, "new": 1}, golden)


@pytest.mark.parametrize("path", sorted((ROOT / "tests" / "golden").glob("*.json")), ids=lambda p: p.name)
def test_golden_files_are_sorted_one_value_per_line(path):
    text = path.read_text(encoding="utf-8")
    from aiplan.report import dumps_sorted

    assert text == dumps_sorted(json.loads(text)), "regenerate with tools/regen_golden.py"


@pytest.mark.slow
@pytest.mark.parametrize("notebook,plan", rg.CASES, ids=[f"{n}-{p or 'defaults'}" for n, p in rg.CASES])
def test_notebook_matches_golden(notebook, plan, tmp_path):
    values = rg.run_case(notebook, plan, tmp_path)
    if values is None:
        pytest.skip(f"{notebook} ran without error but writes no sidecar (no results_path parameter)")
    golden = rg.golden_path(notebook, plan)
    assert golden.is_file(), f"no golden file {golden.name}: run tools/regen_golden.py"
    diffs = rg.compare(values, json.loads(golden.read_text(encoding="utf-8")))
    assert not diffs, "\n".join(diffs)
