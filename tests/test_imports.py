"""The core imports without the notebook stack (speed itself is in benchmarks/bench_import.py)."""

from __future__ import annotations

import subprocess
import sys


def test_import_aiplan_does_not_pull_notebook_or_dataframe_libraries():
    code = ("import sys, aiplan; heavy = {'pandas', 'altair', 'ipywidgets', 'papermill', 'nbconvert'} "
            "& set(sys.modules); print(sorted(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_version_matches_package_metadata():
    from importlib.metadata import version

    import aiplan

    assert aiplan.__version__ == version("aiplan")
