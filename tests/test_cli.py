"""The command line: exit codes, JSON output with every contract key, no tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import PLANS, ROOT

from aiplan import evaluate
from aiplan.cli import main
from aiplan.pipeline import RESULT_KEYS

EXAMPLE = str(PLANS / "example.yaml")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aiplan", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def test_evaluate_json_has_every_contract_key():
    proc = run("evaluate", EXAMPLE, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)  # stdout is the JSON and nothing else
    for section, keys in RESULT_KEYS.items():
        assert set(keys) <= set(result[section]), section
    assert result["plan"]["cluster"]["gpu"] == "h100-sxm"
    assert result["checks"] == evaluate(EXAMPLE)["checks"]  # the command line's findings are the API's


def test_evaluate_table_is_readable(capsys):
    assert main(["evaluate", EXAMPLE]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Plan: Acme 70B pretraining")
    assert "\nMemory\n" in out and "\nCost\n" in out
    from aiplan import evaluate
    from aiplan.core.fields import format_field

    per_gpu = format_field("memory.per_gpu_gb", evaluate(EXAMPLE)["memory"]["per_gpu_gb"])
    assert f"  {'Memory per GPU':<42} {per_gpu}\n" in out  # human labels and units, not keys
    assert "per_gpu_gb" not in out
    from aiplan import load_catalog

    cloud = evaluate(EXAMPLE)["cost"]["cloud"]
    assert f"  {'Cloud offer':<42} {load_catalog().clouds[cloud].name} ({cloud})\n" in out  # a catalog id by name


def test_evaluate_table_keeps_every_value_whole(capsys):
    """A long value wraps under its column instead of being cut (the basis of a serving plan's rent, its price's
    sources), a label longer than the column puts its value on the next line, and no line runs past the width."""
    from aiplan.cli import LINE_WIDTH, VALUE_COLUMN

    result = evaluate(PLANS / "inference.yaml")
    assert main(["evaluate", str(PLANS / "inference.yaml")]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  Basis, renting "))
    value = [lines[start][VALUE_COLUMN:]]
    value += [line.strip() for line in lines[start + 1:] if line.startswith(" " * VALUE_COLUMN)][:5]
    basis = result["cost"]["cloud_basis"]
    assert len(basis) > LINE_WIDTH - VALUE_COLUMN and " ".join(value).startswith(basis)
    long_label = lines.index("  Layout of the fastest time per output token")
    assert lines[long_label + 1] == " " * VALUE_COLUMN + result["inference"]["tpot_fastest_layout"]
    assert all(len(line) <= LINE_WIDTH for line in lines if not line.startswith("  Findings") and
               not line.startswith(("  WARNING", "  INFO", "  CRITICAL")) and "per million tokens;" not in line)


def test_a_two_pool_plan_lists_its_one_pool_alternative_apart(capsys):
    """A plan served by separate prefill and decode pools does not show "Replicas" and "GPUs per replica" of the
    one-pool alternative among its own serving figures: they follow under their own heading, and the cluster's
    tensor-parallel degree (the one-pool layout's) is left out; a one-pool plan has no such heading."""
    from aiplan.cli import ONE_POOL_TITLE
    from aiplan.core.fields import RESULT_FIELDS

    plan = str(PLANS / "inference.yaml")
    two = ["--set", "cluster.disaggregated=true"]
    assert main(["evaluate", plan, *two]) == 0
    sections = {block.split("\n")[0]: block for block in capsys.readouterr().out.split("\n\n")}
    titles = list(sections)
    assert titles.index(ONE_POOL_TITLE) == titles.index("Serving") + 1
    for key in ("inference.replicas", "inference.gpus_per_replica", "inference.layout"):
        row = f"\n  {RESULT_FIELDS[key].label:<42} "
        assert row in sections[ONE_POOL_TITLE] and row not in sections["Serving"], key
    assert f"\n  {RESULT_FIELDS['inference.prefill_layout'].label:<42} " in sections["Serving"]
    assert f"\n  {RESULT_FIELDS['cluster.tensor_parallel'].label:<42} " not in sections["Cluster layout"]
    assert main(["evaluate", plan, "--set", "cluster.disaggregated=false"]) == 0
    one = capsys.readouterr().out
    assert ONE_POOL_TITLE not in one and f"\n  {RESULT_FIELDS['inference.replicas'].label:<42} " in one
    assert f"\n  {RESULT_FIELDS['cluster.tensor_parallel'].label:<42} " in one


def test_evaluate_table_names_sources_by_author(capsys):
    """A figure's sources read as authors and years, with the command that prints them in full; the ids
    appear only in that command."""
    from aiplan import load_catalog

    result = evaluate(EXAMPLE)
    ids = result["facility"]["grid_source"].split(";")
    assert main(["evaluate", EXAMPLE]) == 0
    out = " ".join(capsys.readouterr().out.split())   # the table wraps long values
    sources = load_catalog().sources
    row = out.split("Grid intensity source ", 1)[1].split(" Grid intensity as of", 1)[0]
    authors = row.split(" (in full: ", 1)[0]
    assert all(sources[i].author in authors and i not in authors for i in ids)
    assert row.endswith(f"(in full: aiplan sources {' '.join(ids)})")

def test_set_override_is_applied_and_validated(capsys):
    assert main(["evaluate", EXAMPLE, "--set", "cluster.gpus=512", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["plan"]["cluster"]["gpus"] == 512
    assert main(["evaluate", EXAMPLE, "--set", "cluster.gpus=-8"]) == 2
    assert capsys.readouterr().err == "error: cluster.gpus: must be an integer from 1 to 10,000,000 [GPUs], got -8\n"


@pytest.mark.parametrize("args,needle", [
    (["evaluate", "no-such-plan.yaml"], "no-such-plan.yaml: cannot be read"),
    (["evaluate", EXAMPLE, "--set", "cluster.gpu=h100sxm"], "did you mean 'h100-sxm'"),
    (["evaluate", EXAMPLE, "--set", "cluster.gpus"], "--set: must look like section.key=value"),
])
def test_bad_input_exits_2_with_one_line_per_problem(args, needle):
    proc = run(*args)
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_several_problems_one_line_each(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: llama-2-7b\nworkload: {tokens: -1}\ncluster: {gpus: 0, mfu: 3}\n")
    proc = run("evaluate", str(bad))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 3 and all(line.startswith("error: ") for line in lines)


def test_unknown_command_or_format_exits_2():
    assert run("frobnicate").returncode == 2
    assert run("evaluate", EXAMPLE, "--format", "xml").returncode == 2


@pytest.mark.parametrize("table", ["gpus", "servers", "models", "clouds", "regions", "api_prices"])
def test_catalog_lists_rows(table, catalog):
    proc = run("catalog", table, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert {r["id"] for r in rows} == set(catalog.table(table))
    table_proc = run("catalog", table)
    assert table_proc.returncode == 0 and table_proc.stdout.startswith("id")


def test_app_serves_the_planner_with_the_offline_voila_template():
    from pathlib import Path

    from aiplan.cli import voila_command

    argv, env = voila_command(port=8899, open_browser=False)
    assert argv[1].endswith("planner.ipynb") and Path(argv[1]).is_file()
    assert {"--template=aiplan", "--port=8899", "--no-browser"} <= set(argv)
    template = Path(env["JUPYTER_PATH"].split(os.pathsep)[0]) / "voila" / "templates" / "aiplan" / "index.html.j2"
    text = template.read_text()
    assert "extends 'lab/index.html.j2'" in text
    assert "https://" not in text.split("-#}", 1)[1]  # no CDN links once the comment is past
