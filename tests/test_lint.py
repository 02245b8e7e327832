"""ruff (configured in pyproject.toml: line length 120, complexity C901 at most 12) passes."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import ROOT


def test_ruff_passes():
    ruff = shutil.which("ruff", path=str(ROOT / ".venv" / "bin")) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the [dev] extra)")
    proc = subprocess.run([ruff, "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
