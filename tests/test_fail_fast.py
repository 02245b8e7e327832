"""Large and hostile inputs are refused fast: each in under 2 s and under 200 MB.

Each input runs in a fresh Python process (so the peak memory is its own): the command line
(``aiplan.cli.main``, as ``aiplan evaluate`` runs it) or ``aiplan.evaluate`` on a path, YAML text or a
dict. The process reports the CPU seconds the call took (after importing aiplan and loading the
catalog; wall-clock time too, which only has to show nothing hangs) and its peak resident memory
(``VmHWM`` of ``/proc/self/status``, else ``resource.getrusage``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from bad_inputs import BASE, MAKERS, REGION_HEADER, REGION_ROW

#: CPU seconds (the machine the tests run on may be shared: wall-clock time only guards against a hang)
MAX_SECONDS = 2.0
MAX_WALL_SECONDS = 10.0
MAX_MB = 200.0

RUNNER = textwrap.dedent('''
    import contextlib, io, json, resource, sys, time
    from pathlib import Path
    import aiplan
    from aiplan.cli import main
    aiplan.load_catalog()
    mode, arg = sys.argv[1], sys.argv[2]
    text = Path(arg).read_text(encoding="utf-8") if mode == "text" else None
    err = io.StringIO()
    start, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            if mode == "cli":
                outcome = f"exit {main(['evaluate', arg])}"
            else:
                if mode == "dict":  # a dict nested int(arg) levels deep
                    plan = {"model": "llama-2-7b", "facility": {}}
                    node = plan["facility"]
                    for _ in range(int(arg)):
                        node["a"] = {}
                        node = node["a"]
                else:
                    plan = text if mode == "text" else Path(arg)
                aiplan.evaluate(plan)
                outcome = "result"
        except aiplan.PlanError as exc:
            outcome, err = "PlanError", io.StringIO(str(exc))
        except BaseException as exc:
            outcome = type(exc).__name__
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    try:  # this process's own peak (ru_maxrss may keep the parent's across exec)
        status = Path("/proc/self/status").read_text()
        mb = int(status.split("VmHWM:")[1].split()[0]) / 1024
    except (OSError, IndexError):
        mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"outcome": outcome, "seconds": seconds, "cpu": cpu, "mb": mb, "message": err.getvalue()[:20000]}))
''')


def _measure(mode: str, arg: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", RUNNER, mode, str(arg)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _csv_folder(tmp: Path, text: str) -> Path:
    cat = tmp / "cat"
    cat.mkdir()
    (cat / "regions.csv").write_text(text, encoding="utf-8")
    return cat


#: (id, mode, how to write the input into a folder -> the path passed, fragment of the message)
CASES = [
    ("plan-20mb-cli", "cli", lambda d: _write(d, "name: " + "x" * 20_000_000 + "\n"), "is larger than the 1 MB"),
    ("plan-20mb-api-path", "path", lambda d: _write(d, "name: " + "x" * 20_000_000 + "\n"), "is larger than"),
    ("plan-20mb-api-text", "text", lambda d: _write(d, BASE + "# " + "x" * 20_000_000 + "\n"), "is larger than 1 MB"),
    ("plan-just-under-1mb-one-value", "cli", lambda d: _write(d, BASE + "client: " + "x" * 990_000 + "\n"),
     "client: must be a text value of at most 200 characters"),
    ("alias-bomb-9-levels-cli", "cli", lambda d: _write(d, MAKERS["alias_bomb"](9)), "aliases"),
    ("alias-bomb-wide-cli", "cli", lambda d: _write(d, MAKERS["alias_bomb_wide"](10)), "more than 20,000 values"),
    ("alias-bomb-wide-api-text", "text", lambda d: _write(d, MAKERS["alias_bomb_wide"](10)), "more than 20,000"),
    ("alias-bomb-wide-api-path", "path", lambda d: _write(d, MAKERS["alias_bomb_wide"](10)), "more than 20,000"),
    ("deep-flow-nesting-cli", "cli", lambda d: _write(d, MAKERS["deep_flow"](400_000)), "nested more than 20"),
    ("deep-block-nesting-cli", "cli", lambda d: _write(d, MAKERS["deep_block"](900)), "nested more than 20"),
    ("deep-flow-nesting-api-text", "text", lambda d: _write(d, MAKERS["deep_flow"](400_000)), "nested more than 20"),
    ("deep-dict-api", "dict", lambda d: Path("100000"), "nested more than 20"),
    ("value-10000-chars-cli", "cli", lambda d: _write(d, BASE.replace("a100-80gb", "x" * 10_000)),
     "must be a known GPU id"),
    ("value-900000-chars-cli", "cli", lambda d: _write(d, BASE.replace("a100-80gb", "x" * 900_000)),
     "must be a known GPU id"),
    ("integer-900000-digits-cli", "cli", lambda d: _write(d, BASE.replace("2.0e12", "1" * 900_000)),
     "too long to read"),
    ("many-values-cli", "cli", lambda d: _write(d, MAKERS["many_values"](100_000)), "more than 20,000 values"),
    ("many-unknown-fields-cli", "cli", lambda d: _write(d, MAKERS["many_fields"](9000)), "more problems"),
    ("csv-cell-15mb-cli", "cli", lambda d: _write(d, BASE + "catalog: cat\n", _csv_folder(
        d, REGION_HEADER + "\n" + REGION_ROW.replace("a user region", '"' + "x" * 15_000_000 + '"') + "\n")),
     "is not a valid CSV file"),
    ("csv-25mb-cli", "cli", lambda d: _write(d, BASE + "catalog: cat\n", _csv_folder(
        d, REGION_HEADER + "\n" + (REGION_ROW + "\n") * 300_000)), "is larger than the 20 MB"),
]


def _write(folder: Path, text: str, _extra: Path | None = None) -> Path:
    path = folder / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("case_id,mode,make,fragment", CASES, ids=[c[0] for c in CASES])
def test_refused_fast(case_id, mode, make, fragment, tmp_path):
    arg = make(tmp_path)
    m = _measure(mode, arg)
    assert m["outcome"] in ("exit 2", "PlanError"), m
    assert fragment in m["message"], m["message"]
    assert m["cpu"] < MAX_SECONDS, f"{case_id}: {m['cpu']:.2f} s of CPU"
    assert m["seconds"] < MAX_WALL_SECONDS, f"{case_id}: {m['seconds']:.2f} s"
    assert m["mb"] < MAX_MB, f"{case_id}: {m['mb']:.0f} MB"
