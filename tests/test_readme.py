"""The README works for a newcomer: two set-up commands, CI runs the test one, the tour runs as written."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def readme_commands() -> list[str]:
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(?:bash|sh)?\n(.*?)```", quick, flags=re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_readme_has_exactly_two_setup_commands():
    commands = readme_commands()
    assert len(commands) == 2, commands
    planner, tests = commands
    assert "python3 -m venv .venv" in planner and "jupyter lab notebooks/" in planner
    assert "python3 -m venv .venv" in tests and "pytest" in tests
    assert tests.index('-m "not slow"') < tests.index("-m slow"), "fast tier first"


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert readme_commands()[1] in ci.splitlines()


def test_tour_commands_run_after_the_setup_command():
    """No bare `aiplan`: after the set-up command only .venv/bin/aiplan exists."""
    for block in re.findall(r"```bash\n(.*?)```", README, flags=re.S):
        for line in block.splitlines():
            if line.strip() and not line.startswith("python3 -m venv"):
                assert not re.match(r"\s*aiplan\b", line), line


def test_evaluate_excerpt_matches_what_the_command_prints():
    excerpt = README.split("An excerpt of `.venv/bin/aiplan evaluate plans/example.yaml`", 1)[1]
    excerpt = excerpt.split("```\n", 1)[1].split("```", 1)[0]
    out = subprocess.run([sys.executable, "-m", "aiplan", "evaluate", "plans/example.yaml"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    printed = {line.rstrip() for line in out.splitlines()}
    missing = [line for line in excerpt.splitlines() if line.strip() and line.rstrip() not in printed]
    assert not missing, f"README excerpt lines the command does not print: {missing}"


def test_invalid_plan_example_matches_the_messages():
    example = README.split("$ .venv/bin/aiplan evaluate plans/example.yaml --set cluster.gpu=h100sxm", 1)[1]
    expected = [line for line in example.split("```", 1)[0].splitlines() if line.startswith("error:")]
    proc = subprocess.run([sys.executable, "-m", "aiplan", "evaluate", "plans/example.yaml", "--set",
                           "cluster.gpu=h100sxm", "--set", "cluster.mfu=2"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.splitlines() == expected


@pytest.mark.slow
def test_every_tour_command_runs():
    """The commands of "A tour" run as written after the set-up command (exit status 0)."""
    import shlex

    tour = README.split("## A tour", 1)[1].split("\n## ", 1)[0]
    lines = [line.split("  #")[0].strip() for block in re.findall(r"```bash\n(.*?)```", tour, flags=re.S)
             for line in block.splitlines() if line.startswith(".venv/bin/aiplan")]
    assert len(lines) >= 8
    for line in lines:
        args = shlex.split(line)[1:]
        proc = subprocess.run([sys.executable, "-m", "aiplan", *args], cwd=ROOT, capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stdout.strip(), (line, proc.stderr[-500:])
