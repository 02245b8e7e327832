"""Notebook regression suite: every notebook runs once, headless, in the Binder environment.

Every notebook in ``notebooks/`` runs under papermill in the kernel of the ``binder_env``
fixture (a venv built from ``binder/`` alone): ``report.ipynb`` with every plan in ``plans/``,
the others with one plan each (``tools/regen_golden.py`` decides which). Each run writes its key
results to a JSON sidecar that is compared with ``tests/golden/<notebook>__<plan>.json``, and its
outputs are checked: no errors, charts as SVG, nothing from a CDN. The tolerance
(``REL_TOL``/``ABS_TOL``) and why it is tight are documented in ``tools/regen_golden.py``.

Regenerate the golden files after an intended change with ``.venv/bin/python tools/regen_golden.py``
and review the JSON diff.
"""

from __future__ import annotations

import json
import sys

import nbformat
import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import regen_golden as rg  # noqa: E402

NOTEBOOK_FILES = sorted((ROOT / "notebooks").glob("*.ipynb"))
REQUIRED_REPORT_PLANS = {"example.yaml", "finetune-lora.yaml", "inference.yaml", "does-not-fit.yaml",
                         "moe-pretrain.yaml"}
IDS = [f"{n}-{p or 'defaults'}" for n, p in rg.CASES]


@pytest.mark.parametrize("path", NOTEBOOK_FILES, ids=lambda p: p.name)
def test_notebook_is_committed_clean(path):
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    assert "papermill" not in nb.metadata, "executed notebook committed: papermill metadata present"
    assert "widgets" not in nb.metadata, "widget state committed"
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "one parameters cell"
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


#: the step notebooks read as documents: they show their figures (the key results travel in the output
#: metadata) and carry no test plumbing (no results file, no hidden cells)
DOCUMENTS = ("01_model.ipynb", "02_cluster.ipynb", "03_facility.ipynb", "04_cost.ipynb")


#: notebooks a client opens: their key results too travel in the output metadata (no plumbing in view)
SELF_SERVICE = DOCUMENTS + ("00_start_here.ipynb",)


@pytest.mark.parametrize("path", NOTEBOOK_FILES, ids=lambda p: p.name)
def test_notebook_declares_typed_parameters_and_gives_results(path):
    import papermill

    params = papermill.inspect_notebook(str(path))
    assert all(p["inferred_type_name"] != "None" and p["help"] for p in params.values()), params
    source = "\n".join(c.source for c in nbformat.read(str(path), as_version=4).cells)
    if path.name in SELF_SERVICE:
        assert "show_static" in source and "results_path" not in params
    else:
        assert "results_path" in params and "write_sidecar" in source


def test_start_here_needs_no_code_and_shows_no_plumbing():
    """00_start_here: a plan picker and controls from aiplan.ui, one short call per step, no hidden cells, no
    results file; its dollar amounts are escaped Markdown (never read as mathematics)."""
    nb = nbformat.read(str(ROOT / "notebooks" / "00_start_here.ipynb"), as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])]
    assert "StartHere(plan_path)" in code[0] and all(len(c.splitlines()) <= 4 for c in code)
    assert not any(c.metadata.get("tags") for c in nb.cells if "parameters" not in c.metadata.get("tags", []))
    assert "sidecar" not in "\n".join(code) and "results_path" not in "\n".join(code)
    assert all(c.get("id") for c in nb.cells)  # cell ids: JupyterLab adds none on open


@pytest.mark.parametrize("name", DOCUMENTS)
def test_step_notebooks_read_as_documents(name):
    """What the step computes, with which published model, how to read each chart; no plumbing."""
    nb = nbformat.read(str(ROOT / "notebooks" / name), as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "What this step computes" in text and "Reading the charts" in text
    assert sum(c.cell_type == "markdown" for c in nb.cells) >= 3
    assert not any("remove-cell" in c.metadata.get("tags", []) for c in nb.cells)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "sidecar" not in code and "results" not in code.replace("app.result", "")


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


@pytest.fixture(scope="session")
def runs(binder_env, tmp_path_factory):
    """Each case run once (lazily), in the Binder environment's kernel: ``{case: (values, executed)}``."""
    workdir = tmp_path_factory.mktemp("notebook-runs")
    cache: dict = {}

    def run(notebook: str, plan: str):
        if (notebook, plan) not in cache:
            cache[(notebook, plan)] = rg.run_case(notebook, plan, workdir, kernel_name=binder_env.kernel,
                                                  root=binder_env.root)
        return cache[(notebook, plan)]

    return run


@pytest.mark.slow
@pytest.mark.parametrize("notebook,plan", rg.CASES, ids=IDS)
def test_notebook_matches_golden(notebook, plan, runs):
    values, _ = runs(notebook, plan)
    assert values is not None, f"{notebook} wrote no results: its last cell must call report.write_sidecar"
    golden = rg.golden_path(notebook, plan)
    assert golden.is_file(), f"no golden file {golden.name}: run tools/regen_golden.py"
    diffs = rg.compare(values, json.loads(golden.read_text(encoding="utf-8")))
    assert not diffs, "\n".join(diffs)


@pytest.mark.slow
@pytest.mark.parametrize("notebook,plan", rg.CASES, ids=IDS)
def test_executed_notebook_shows_figures_offline(notebook, plan, runs):
    _, executed = runs(notebook, plan)
    nb = json.loads(executed.read_text(encoding="utf-8"))
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    mimes = {m for o in outputs for m in o.get("data", {})}
    assert "image/svg+xml" in mimes, "charts shown plainly as SVG (visible headless and offline)"
    text = json.dumps(outputs)
    assert "cdn.jsdelivr.net" not in text and "unpkg.com" not in text
