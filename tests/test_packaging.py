"""A real, non-editable install: the wheel carries the catalog and the CLI works outside the checkout."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from conftest import PLANS, ROOT


@pytest.mark.slow
def test_wheel_install_in_fresh_venv_finds_catalog(tmp_path):
    wheels = tmp_path / "wheels"
    # built from a copy: setuptools writes build/ and *.egg-info beside the sources it builds
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv", ".git", "build", "dist", "*.egg-info",
                                                                "__pycache__", ".ruff_cache", "out", "reports"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(source), "-w", str(wheels)],
                   check=True, timeout=600)
    (wheel,) = wheels.glob("aiplan-*.whl")
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    for shipped in ("aiplan/data/gpus.csv", "aiplan/notebooks/report.ipynb", "aiplan/notebooks/planner.ipynb",
                    "aiplan/plans/example.yaml", "aiplan/templates/offline/index.html.j2"):
        assert shipped in names, shipped  # `aiplan report` and the presets work from a wheel
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(wheel)], check=True, timeout=600)
    work = tmp_path / "elsewhere"
    work.mkdir()

    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import aiplan; print(aiplan.__file__)"],
                           cwd=work, capture_output=True, text=True, check=True).stdout
    assert str(venv) in where and str(ROOT) not in where  # the installed copy, not the checkout

    gpus = subprocess.run([str(venv / "bin" / "aiplan"), "catalog", "gpus", "--format", "json"], cwd=work,
                          capture_output=True, text=True, timeout=120)
    assert gpus.returncode == 0, gpus.stderr
    assert "h100-sxm" in {row["id"] for row in json.loads(gpus.stdout)}

    result = subprocess.run([str(venv / "bin" / "aiplan"), "evaluate", str(PLANS / "example.yaml"), "--format",
                             "json"], cwd=work, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["plan"]["model"] == "llama-3.1-70b"


def test_every_subpackage_is_listed_for_the_wheel():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "aiplan").rglob("__init__.py")}
    assert found <= listed, f"add {sorted(found - listed)} to [tool.setuptools] packages"
