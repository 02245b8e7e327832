"""Binder: the binder/ files alone build an environment that installs the kit and runs the notebooks.

repo2docker cannot run here (no container engine), so the slow test does what it would do with
these files: a fresh venv, ``pip install -r binder/requirements.txt``, then ``binder/postBuild``
from the repository root with that venv's pip first on PATH, then every notebook under papermill
with that venv's own kernel.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

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


def _copy_repo(dest: Path) -> Path:
    """The files a Binder checkout has (what git tracks), without local venvs and build output."""
    ignore = shutil.ignore_patterns(".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                    ".ipynb_checkpoints", "reports")
    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


@pytest.mark.slow
def test_fresh_binder_environment_runs_every_notebook(tmp_path):
    repo = _copy_repo(tmp_path / "repo")
    venv = tmp_path / "venv"
    py, pip = venv / "bin" / "python", venv / "bin" / "pip"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(venv),
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    subprocess.run([str(pip), "install", "-q", "-r", str(repo / "binder" / "requirements.txt")], check=True,
                   env=env, timeout=1800)
    subprocess.run([str(repo / "binder" / "postBuild")], cwd=repo, check=True, env=env, timeout=600)

    where = subprocess.run([str(py), "-c", "import aiplan; print(aiplan.__file__)"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert str(venv) in where and str(ROOT) not in where, where  # the kit as Binder installs it

    subprocess.run([str(py), "-m", "ipykernel", "install", "--prefix", str(venv), "--name", "aiplan-binder"],
                   check=True, env=env, timeout=120)
    notebooks = sorted((repo / "notebooks").glob("*.ipynb"))
    assert notebooks
    out = tmp_path / "executed"
    out.mkdir()
    script = (
        "import sys, papermill\n"
        "for nb in sys.argv[2:]:\n"
        "    print('running', nb, flush=True)\n"
        "    papermill.execute_notebook(nb, sys.argv[1] + '/' + nb.rsplit('/', 1)[1], kernel_name='aiplan-binder',\n"
        "                               cwd=nb.rsplit('/', 1)[0], execution_timeout=600, progress_bar=False)\n"
    )
    proc = subprocess.run([str(py), "-c", script, str(out), *map(str, notebooks)], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert sorted(p.name for p in out.glob("*.ipynb")) == [p.name for p in notebooks]

    # and a client report, run the way a Binder user would (from the repository root)
    report = subprocess.run([str(venv / "bin" / "aiplan"), "report", "plans/inference.yaml", "-o",
                             str(tmp_path / "reports")], cwd=repo, env=env, capture_output=True, text=True,
                            timeout=900)
    assert report.returncode == 0, report.stdout + report.stderr
    assert (tmp_path / "reports" / "inference.html").is_file()
