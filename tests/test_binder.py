"""Binder: the binder/ files alone build an environment that installs the kit and runs the notebooks.

The environment is the ``binder_env`` fixture (conftest.py): a fresh venv, ``pip install -r
binder/requirements.txt``, then ``binder/postBuild``. Every notebook runs in its kernel once, in
the regression suite (test_regression.py).
"""

from __future__ import annotations

import importlib.metadata
import re
import stat
import subprocess

import pytest
from conftest import ROOT

BINDER = ROOT / "binder"
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([A-Za-z0-9_.\-+]+)$")


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict[str, str]:
    out = {}
    for line in (BINDER / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = PIN.match(line)
        assert m, f"not an exact pin: {line!r}"
        assert norm(m.group(1)) not in out, f"pinned twice: {m.group(1)}"
        out[norm(m.group(1))] = m.group(2)
    return out


def test_requirements_are_exact_pins_of_the_tested_versions():
    for name, version in pins().items():
        assert importlib.metadata.version(name) == version, f"{name}: binder pins {version}, venv has " \
            f"{importlib.metadata.version(name)}"


def test_requirements_cover_the_kit_and_notebook_dependencies():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["notebooks"]
    names = {norm(re.split(r"[<>=!~\[ ;]", req, maxsplit=1)[0]) for req in wanted}
    assert names <= set(pins()), names - set(pins())
    assert "aiplan" not in pins()  # the kit comes from postBuild, not from PyPI


def test_runtime_and_postbuild():
    assert re.fullmatch(r"python-3\.1[12]\n?", (BINDER / "runtime.txt").read_text())
    post = BINDER / "postBuild"
    text = post.read_text()
    assert text.startswith("#!/bin/bash\n")
    assert re.search(r"^set -e$", text, flags=re.M), "without set -e a failing step is ignored"
    assert re.search(r"^pip install --no-deps \.$", text, flags=re.M)
    assert post.stat().st_mode & stat.S_IXUSR, "postBuild must be executable"
    assert not (BINDER / "environment.yml").exists()  # it would make repo2docker ignore runtime.txt
    assert not (ROOT / ".binder").exists()  # both folders is an error


@pytest.mark.slow
def test_binder_environment_installs_the_kit_and_writes_a_report(binder_env, tmp_path):
    """The Binder venv holds the kit as postBuild installs it (not this checkout), and a client report
    runs there the way a Binder user would run it (the notebooks run in it in test_regression.py)."""
    py, env = binder_env.python, binder_env.env
    where = subprocess.run([str(py), "-c", "import aiplan; print(aiplan.__file__)"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert str(binder_env.venv) in where and str(ROOT) not in where, where
    report = subprocess.run([str(binder_env.venv / "bin" / "aiplan"), "report", "plans/inference.yaml", "-o",
                             str(tmp_path / "reports")], cwd=binder_env.root, env=env, capture_output=True, text=True,
                            timeout=900)
    assert report.returncode == 0, report.stdout + report.stderr
    assert (tmp_path / "reports" / "inference.html").is_file()
