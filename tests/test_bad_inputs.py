"""The bad-input corpus (``tests/data/bad_inputs/cases.yaml``) through the CLI and the Python API.

CLI: ``aiplan evaluate`` from a folder that is not the plan's (every case through ``aiplan.cli.main``
in this process and through ``python -m aiplan`` in a subprocess, the latter in the slow tier but for
one case of each class): the exit
status, one ``error:`` line per problem (as many as the API's ``PlanError.problems``), each short,
no traceback, no "internal error", no control characters on stdout or stderr, and the message
fragment. API: ``aiplan.evaluate`` raises only ``PlanError`` (with the fragment), or returns a
result whose numbers are finite or None; with warnings as errors, and nothing printed.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from bad_inputs import MAX_LINE, Case, bad_findings, build, has_control, load_cases, non_finite, run_api

from aiplan import PlanError
from aiplan.cli import main

CASES = load_cases()
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


#: one case of each class also runs through ``python -m aiplan`` in the fast tier (all of them: slow)
SMOKE = ("utf16-with-bom", "binary-random", "utf8-bom-accepted", "windows-line-endings", "empty-file",
         "syntax-unclosed-flow-mapping", "duplicate-key-in-section", "deep-flow-nesting", "alias-bomb-wide",
         "python-object-tag", "integer-400-digits", "integer-5000-digits", "gpus-1e300", "layers-1e300",
         "deadline-1e-9-days", "on-in-numeric-field", "float-1.0e12-accepted", "misspelt-section-one-error",
         "far-off-section-no-suggestion", "gpu-id-10000-chars", "escape-codes-in-name", "set-on-top-level-list",
         "set-on-top-level-scalar", "catalog-relative-path", "catalog-excel-bom", "catalog-folder-without-csvs",
         "catalog-cell-beyond-csv-limit", "catalog-utf16", "plan-is-a-fifo", "checkpoints-too-rare-stall")
CLI_CASES = [c for c in CASES if c.cli]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("AIPLAN_DEBUG", "AIPLAN_CATALOG_PATH")}
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def _subprocess(case: Case, folder: Path, cwd: Path) -> tuple[int, str, str]:
    how = build(case, folder)
    proc = subprocess.run([sys.executable, "-m", "aiplan", "evaluate", *how["argv"]], capture_output=True,
                          cwd=cwd, env=_env(), timeout=60)
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


def _in_process(case: Case, folder: Path) -> tuple[int, str, str]:
    how = build(case, folder)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["evaluate", *how["argv"]])
    return status, out.getvalue(), err.getvalue()


def _skip_as_root(case: Case) -> None:
    if case.root_skip and IS_ROOT:
        pytest.skip("file permissions do not apply to root")


def check_cli(case: Case, status: int, out: str, err: str, api: tuple | None = None) -> None:
    """What the command line must do with a case (see the module docstring)."""
    assert status == case.exit, err[:2000]
    assert "Traceback" not in err and "internal error" not in err
    assert not has_control(out) and not has_control(err), "control characters reached the terminal"
    if case.exit == 0:
        assert err == "" and out.startswith("Plan: ")
        return
    assert out == ""
    lines = err.splitlines()
    assert lines and all(line.startswith("error: ") for line in lines), err
    assert all(len(line) <= MAX_LINE for line in lines), max(lines, key=len)
    assert case.msg in err
    if case.lines is not None:
        assert len(lines) == case.lines, err
    if api is not None and api[1] is not None:  # one line per problem the API reports (at most 50, then a count)
        assert isinstance(api[1], PlanError) and len(lines) == len(api[1].lines()), err
        assert len(lines) == min(len(api[1].problems), 50) + (len(api[1].problems) > 50)


def check_api(case: Case, result: Any, exc: BaseException | None, printed: str) -> None:
    """What ``aiplan.evaluate`` must do with a case (see the module docstring)."""
    assert printed == "", "evaluate printed something"
    if case.api_expect == "ok":
        assert exc is None, f"{type(exc).__name__}: {exc}"
        assert isinstance(result, dict) and not non_finite(result), non_finite(result)
        assert not bad_findings(result), bad_findings(result)
        return
    assert isinstance(exc, PlanError), f"{type(exc).__name__} escaped: {exc}"
    assert isinstance(exc, ValueError) and exc.problems
    text = str(exc)
    assert case.msg in text
    assert all(len(str(p)) <= MAX_LINE and "\n" not in str(p) for p in exc.problems)
    assert not has_control(text)


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory) -> Path:
    """The folder the command line runs in: not the plan's."""
    return tmp_path_factory.mktemp("elsewhere")


def test_corpus_is_large_and_well_formed():
    ids = [c.id for c in CASES]
    assert len(ids) >= 110 and len(set(ids)) == len(ids)
    assert set(SMOKE) <= set(ids)
    for c in CASES:
        assert c.via in ("file", "set", "text", "dict", "path"), c.id
        assert c.exit in (0, 2), c.id
        assert c.exit == 0 or c.msg, f"{c.id}: a rejected input needs a message fragment"


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: c.id)
def test_cli_and_api(case: Case, tmp_path, elsewhere, monkeypatch):
    """``aiplan evaluate`` (``aiplan.cli.main``, in this process) from another folder, and ``evaluate``."""
    _skip_as_root(case)
    api = run_api(case, build(case, tmp_path / "api")) if case.api_expect != "skip" else None
    if api is not None:
        check_api(case, *api)
    monkeypatch.chdir(elsewhere)
    check_cli(case, *_in_process(case, tmp_path / "cli"), api)


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory, elsewhere) -> dict[str, tuple[int, str, str]]:
    """The smoke cases through ``python -m aiplan evaluate``, in parallel subprocesses."""
    base = tmp_path_factory.mktemp("bad_inputs_smoke")
    cases = [c for c in CLI_CASES if c.id in SMOKE]
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip((c.id for c in cases), pool.map(lambda c: _subprocess(c, base / c.id, elsewhere), cases)))


@pytest.mark.parametrize("case", [c for c in CLI_CASES if c.id in SMOKE], ids=lambda c: c.id)
def test_cli_subprocess_smoke(case: Case, smoke_runs):
    check_cli(case, *smoke_runs[case.id])


@pytest.mark.slow
@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: c.id)
def test_cli_subprocess(case: Case, tmp_path, elsewhere):
    """Every case through ``python -m aiplan evaluate`` in a subprocess."""
    _skip_as_root(case)
    check_cli(case, *_subprocess(case, tmp_path / "cli", elsewhere))


@pytest.mark.parametrize("case", [c for c in CASES if not c.cli], ids=lambda c: c.id)
def test_api(case: Case, tmp_path):
    """The cases only the Python API takes (dicts with numpy and Python values, YAML text)."""
    check_api(case, *run_api(case, build(case, tmp_path)))
