"""The core imports without the notebook stack (speed itself is in benchmarks/bench_import.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_import_aiplan_does_not_pull_notebook_or_dataframe_libraries():
    code = ("import sys, aiplan; heavy = {'pandas', 'altair', 'ipywidgets', 'papermill', 'nbconvert'} "
            "& set(sys.modules); print(sorted(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_version_matches_package_metadata():
    from importlib.metadata import version

    import aiplan

    assert aiplan.__version__ == version("aiplan")


def test_a_report_kernel_draws_every_chart_without_pandas():
    """Charts are built from plain rows, so the report and planner kernels skip pandas (~0.3 s each)."""
    code = ("import sys; from aiplan import evaluate; from aiplan.present import charts; "
            "r = evaluate(sys.argv[1]); "
            "[b(r).to_dict() for b in {**charts.RESULT_CHARTS, **charts.SWEEP_CHARTS}.values()]; "
            "print('pandas' in sys.modules)")
    plan = Path(__file__).resolve().parent.parent / "plans" / "example.yaml"
    out = subprocess.run([sys.executable, "-c", code, str(plan)], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
