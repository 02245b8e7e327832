"""Shared fixtures: the shipped catalog and small plan builders."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.database import DirectoryBasedExampleDatabase

from aiplan import load_catalog, load_plan
from aiplan.pipeline import run_model as model_only  # noqa: F401  (re-exported for the tests)

ROOT = Path(__file__).resolve().parent.parent
PLANS = ROOT / "plans"
# A test run writes nothing into the repository: Hypothesis keeps its examples in a temporary
# folder (pyproject.toml turns pytest's cache off; pytest_sessionfinish below checks).
_HYPOTHESIS_HOME = os.path.join(os.environ.get("TMPDIR", "/tmp"), "aiplan-hypothesis")
set_hypothesis_home_dir(_HYPOTHESIS_HOME)  # its constants cache too, not only the example database
settings.register_profile("aiplan", database=DirectoryBasedExampleDatabase(os.path.join(_HYPOTHESIS_HOME, "examples")))
settings.load_profile("aiplan")
# Findings about old prices depend on the date: every test (and every notebook kernel the tests
# start, which inherits this) evaluates plans as of one fixed day, so results do not age.
os.environ.setdefault("AIPLAN_TODAY", "2026-12-03")

PRETRAIN = {
    "name": "test pretrain",
    "model": "llama-2-7b",
    "workload": {"kind": "pretrain", "tokens": 2.0e12, "seq_len": 4096},
    "cluster": {"gpu": "a100-80gb", "gpus": 256},
}
FINETUNE = {
    "name": "test finetune",
    "model": "llama-3.1-8b",
    "workload": {"kind": "finetune", "method": "lora", "tokens": 1.0e9, "seq_len": 4096},
    "cluster": {"gpu": "h100-sxm", "gpus": 8},
}
INFERENCE = {
    "name": "test inference",
    "model": "llama-3.1-70b",
    "workload": {"kind": "inference", "requests_per_s": 10, "prompt_tokens": 2000, "output_tokens": 500},
    "cluster": {"gpu": "h100-sxm"},
}


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()


def make_plan(base: dict, **sections) -> dict:
    """Deep copy of ``base`` with ``section={field: value}`` merged in."""
    plan = copy.deepcopy(base)
    for section, fields in sections.items():
        if isinstance(fields, dict) and isinstance(plan.get(section), dict):
            plan.setdefault(section, {}).update(fields)
        else:
            plan[section] = fields
    return plan


@pytest.fixture
def pretrain():
    return load_plan(copy.deepcopy(PRETRAIN))


def copy_repo(dest: Path) -> Path:
    """The files a fresh checkout has (what git tracks), without local venvs and build output."""
    ignore = shutil.ignore_patterns(".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                    ".ipynb_checkpoints", "reports", ".ruff_cache")
    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


class BinderEnv:
    """A virtual environment built from ``binder/`` alone, as repo2docker would build it."""

    kernel = "aiplan-binder"

    def __init__(self, root: Path, venv: Path, env: dict):
        self.root, self.venv, self.env = root, venv, env
        self.python = venv / "bin" / "python"


@pytest.fixture(scope="session")
def binder_env(tmp_path_factory):
    """A copy of the repository and a fresh venv: ``pip install -r binder/requirements.txt``, then
    ``binder/postBuild`` from the repository root, and a Jupyter kernel of that venv.

    repo2docker cannot run here (no container engine), so this does what it does with these files.
    The notebook regression suite runs every notebook once, in this kernel.
    """
    base = tmp_path_factory.mktemp("binder")
    repo = copy_repo(base / "repo")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(venv),
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "-r", str(repo / "binder" / "requirements.txt")],
                   check=True, env=env, timeout=1800)
    subprocess.run([str(repo / "binder" / "postBuild")], cwd=repo, check=True, env=env, timeout=600)
    subprocess.run([str(venv / "bin" / "python"), "-m", "ipykernel", "install", "--prefix", str(venv), "--name",
                    BinderEnv.kernel, "--display-name", "aiplan (Binder environment)"], check=True, env=env,
                   timeout=120)
    # this process's papermill finds the kernel through JUPYTER_PATH
    before = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(venv / "share" / "jupyter"), before) if p)
    yield BinderEnv(repo, venv, env)
    if before is None:
        os.environ.pop("JUPYTER_PATH", None)
    else:
        os.environ["JUPYTER_PATH"] = before



def _repository_files() -> set[str] | None:
    """Every file git would list as untracked or ignored in the repository (None outside git)."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode:
        return None
    skip = (".venv/", "aiplan.egg-info/", "__pycache__/")  # the environment and bytecode, not test output
    return {line[3:] for line in out.stdout.splitlines()
            if line[:2] in ("??", "!!") and not any(part in line[3:] for part in skip) and not line.endswith(".pyc")}


_FILES_BEFORE = _repository_files()


def pytest_sessionfinish(session, exitstatus):
    """Fail the run when it left new files in the repository (Hypothesis databases, caches, reports)."""
    if _FILES_BEFORE is None:
        return
    new = sorted((_repository_files() or set()) - _FILES_BEFORE)
    if new:
        session.config.pluginmanager.get_plugin("terminalreporter").write_line(
            f"the test run wrote into the repository: {new[:10]}", red=True)
        session.exitstatus = 1
