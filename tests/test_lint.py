"""ruff (configured in pyproject.toml: line length 120, complexity C901 at most 12) passes.

ruff comes with the [dev] extra, which the README's test command installs: a dev environment
without it is broken, so the test fails rather than skips.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from conftest import ROOT


def test_ruff_is_installed():
    assert importlib.util.find_spec("ruff") is not None, "ruff is missing: install the [dev] extra"


def test_ruff_passes():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
