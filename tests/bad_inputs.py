"""Build the bad and edge-case inputs of ``tests/data/bad_inputs/cases.yaml`` and run them.

Each case of the table says how to build its input and how it is passed in:

- ``via``: ``file`` (a plan file: CLI ``aiplan evaluate FILE``, API ``evaluate(Path)``), ``set`` (a plan
  file and ``--set`` overrides: CLI ``--set``, API :func:`~aiplan.plan.apply_overrides` then
  ``evaluate``), ``text`` (API only: ``evaluate(yaml_text)``), ``dict`` (API only: ``evaluate(dict)``) or
  ``path`` (a special path: a directory, a missing file, a FIFO...; CLI and API).
- the plan: ``yaml`` (text; ``{base}`` is the valid base plan) or ``edit`` (the base plan with fields
  replaced by raw YAML scalars, ``section.field: text``; ``model`` replaces the model line) or ``plan``
  (a mapping, for ``dict``; ``numpy`` turns ``section.field`` values into numpy scalars of the named
  type, ``py`` sets ``section.field`` to a Python value from :data:`PY_VALUES`); ``make`` names a
  generator in :data:`MAKERS` (with ``n``); ``encoding`` (utf-16, utf-32, latin-1, utf-8-sig, gzip...)
  and ``newline`` (crlf, cr) say how the text is written. In text, ``{c*N}`` is the character ``c``
  repeated N times (``1{0*400}`` is 1 followed by 400 zeros; ``c`` may be several characters).
- a user catalog (``cat``): a folder ``cat/`` beside the plan holding ``regions.csv`` (``cat_file``
  names another file) with the text given (``{H}`` is the regions.csv header, ``{R}`` a valid row of
  the region ``my-region``; ``cat_make`` and ``cat_encoding`` as above); the plan names it with the
  relative path ``catalog: cat`` and uses ``facility.region: my-region``.
- ``exit``: the CLI's exit status (0 done, 2 bad input); ``msg``: a fragment of stderr (and of the
  PlanError); ``lines``: the number of error lines when it matters; ``api``: ``ok`` or ``error`` when the
  API differs from the CLI (``skip``: not run through the API); ``root_skip``: meaningless as root.

The CLI runs from an empty folder that is not the plan's, so relative paths must resolve against
the plan file's folder.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import io
import math
import os
import random
import re
import warnings
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
CASES_FILE = ROOT / "tests" / "data" / "bad_inputs" / "cases.yaml"

BASE = ("name: robust test\nmodel: llama-2-7b\nworkload:\n  kind: pretrain\n  tokens: 2.0e12\n"
        "cluster:\n  gpu: a100-80gb\n  gpus: 64\n")
REGION_HEADER = "id,name,grid_kg_co2_per_kwh,electricity_usd_per_kwh,status,sources,as_of,notes"
REGION_ROW = "my-region,My region,0.3,0.1,estimate,aws-spot-instance-advisor,2025-01-01,a user region"
#: longest error line on stderr ("error: " + one problem) [characters]
MAX_LINE = 210
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]")


class _Weird:
    """A value whose repr fails (a careless user object)."""

    def __repr__(self):
        raise RuntimeError("no repr")


def _recursive_dict():
    d: dict = {"gpus": 8}
    d["self"] = d
    return d


def _deep_dict(n):
    d: dict = {}
    for _ in range(n):
        d = {"a": d}
    return d


#: Python values the table can put into a dict plan (``py: {section.field: name}``)
PY_VALUES = {
    "fraction_half": lambda: Fraction(1, 2),
    "complex": lambda: complex(1, 2),
    "bytes": lambda: b"h100-sxm",
    "set": lambda: {"q", "k"},
    "tuple_targets": lambda: ("q", "k"),
    "object": lambda: object(),
    "weird_repr": _Weird,
    "recursive_dict": _recursive_dict,
    "deep_dict_5000": lambda: _deep_dict(5000),
    "nan": lambda: float("nan"),
    "inf": lambda: float("inf"),
    "big_int": lambda: 10**400,
    "huge_int": lambda: 10**5000,
    "list_25000": lambda: ["q"] * 25000,
    "zero_d_array": lambda: np.array(8),
    "numpy_array": lambda: np.arange(3),
    "func": lambda: print,
    "long_str": lambda: "x" * 10_000,
}


def _deep_block(n: int) -> str:
    return "model:\n" + "".join("  " * (i + 1) + "a:\n" for i in range(n)) + "  " * (n + 1) + "b: 1\n"


def _alias_bomb(n: int) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, n):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + f"\nmodel: *a{n - 1}\n"


def _alias_bomb_wide(n: int) -> str:
    """``n`` levels of five aliases each: at most 50 aliases, 5^n values once expanded."""
    lines = ["b0: &b0 [1, 2, 3, 4, 5]"]
    for i in range(1, n):
        lines.append(f"b{i}: &b{i} [" + ", ".join([f"*b{i - 1}"] * 5) + "]")
    return BASE + "\n".join(lines) + "\n"


#: generators of plan text (or bytes) from ``n``
MAKERS = {
    "deep_block": _deep_block,
    "deep_flow": lambda n: BASE + "facility: " + "[" * n + "]" * n + "\n",
    "alias_bomb": _alias_bomb,
    "alias_bomb_wide": _alias_bomb_wide,
    "many_aliases": lambda n: BASE + "anchors: &a 1\nmany: [" + ", ".join(["*a"] * n) + "]\n",
    "many_values": lambda n: BASE.replace("kind: pretrain", "kind: finetune")
    + "  lora_targets: [" + ", ".join(["q"] * n) + "]\n",
    "binary": lambda n: random.Random(n).randbytes(n),
    "comments_mb": lambda n: BASE + ("# " + "c" * 98 + "\n") * (n * 10_000),
    "long_line": lambda n: BASE + "# " + "x" * n + "\n",
    "many_documents": lambda n: "\n".join(["---", BASE] * n),
    "long_key": lambda n: BASE + "x" * n + ": 1\n",
    "many_fields": lambda n: BASE + "".join(f"  field{i}: {i}\n" for i in range(n)),
    "long_section_key": lambda n: BASE + "  " + "y" * n + ": 1\n",
    "csv_big_cell": lambda n: REGION_HEADER + "\n" + REGION_ROW.replace("a user region", '"' + "x" * n + '"') + "\n",
    "csv_nul": lambda n: REGION_HEADER + "\n" + REGION_ROW + "\x00\n",
}


@dataclass
class Case:
    """One row of the table (see the module docstring)."""

    id: str
    via: str
    exit: int
    msg: str = ""
    yaml: str | None = None
    edit: dict = field(default_factory=dict)
    plan: Any = None
    numpy: dict = field(default_factory=dict)
    py: dict = field(default_factory=dict)
    make: str | None = None
    n: int = 0
    encoding: str = "utf-8"
    newline: str | None = None
    set: list = field(default_factory=list)
    path: str | None = None
    cat: str | None = None
    cat_file: str = "regions.csv"
    cat_make: str | None = None
    cat_n: int = 0
    cat_encoding: str = "utf-8"
    lines: int | None = None
    api: str | None = None
    root_skip: bool = False
    note: str = ""

    @property
    def api_expect(self) -> str:
        """What the API must do: ``ok``, ``error`` or ``skip``."""
        return self.api or ("ok" if self.exit == 0 else "error")

    @property
    def cli(self) -> bool:
        return self.via in ("file", "set", "path")


def load_cases() -> list[Case]:
    rows = yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))
    return [Case(**row) for row in rows]


def _expand(text: str) -> str:
    return re.sub(r"\{([^{}*]+)\*(\d+)\}", lambda m: m.group(1) * int(m.group(2)), text)


def _edited(edit: dict) -> str:
    """The base plan with ``section.field`` lines replaced or added (values are raw YAML)."""
    data: dict[str, Any] = {"name": "robust test", "model": "llama-2-7b",
                            "workload": {"kind": "pretrain", "tokens": "2.0e12"},
                            "cluster": {"gpu": "a100-80gb", "gpus": "64"}}
    for key, value in edit.items():
        section, _, name = key.partition(".")
        value = _expand(str(value))
        if not name:
            data[section] = value
        elif value == "<delete>":
            data[section].pop(name, None)
        else:
            data.setdefault(section, {})[name] = value
    out = []
    for section, body in data.items():
        if isinstance(body, dict):
            out.append(f"{section}:")
            out += [f"  {k}: {v}" for k, v in body.items()]
        else:
            out.append(f"{section}: {body}")
    return "\n".join(out) + "\n"


def _encode(text: str | bytes, encoding: str, newline: str | None = None) -> bytes:
    if isinstance(text, bytes):
        return text
    if newline:
        text = text.replace("\n", {"crlf": "\r\n", "cr": "\r"}[newline])
    if encoding == "gzip":
        return gzip.compress(text.encode("utf-8"), mtime=0)
    return text.encode(encoding)


def plan_text(case: Case) -> str | bytes:
    """The plan text (or bytes) of a case."""
    if case.make:
        text: str | bytes = MAKERS[case.make](case.n)
    elif case.yaml is not None:
        text = _expand(case.yaml.replace("{base}", BASE))
    else:
        text = _edited(case.edit)
    if case.cat is not None or case.cat_make:
        text = text + "catalog: cat\nfacility:\n  region: my-region\n"
    return text


def _numpy(value: Any, kind: str) -> Any:
    return getattr(np, kind)(value)


def plan_dict(case: Case) -> Any:
    """The Python plan of a ``dict`` case (numpy scalars and odd Python values put in)."""
    plan = copy.deepcopy(case.plan) if case.plan is not None else yaml.safe_load(BASE)
    for path, kind in case.numpy.items():
        section, _, name = path.partition(".")
        node = plan[section] if name else plan
        node[name or section] = _numpy(node[name or section], kind)
    for path, value in case.py.items():
        section, _, name = path.partition(".")
        if path == "plan":
            return PY_VALUES[value]()
        if not name:
            plan[section] = PY_VALUES[value]()
        else:
            plan.setdefault(section, {})[name] = PY_VALUES[value]()
    return plan


def build(case: Case, folder: Path) -> dict[str, Any]:
    """Write a case's files into ``folder``; return how to run it: ``argv`` (CLI, after ``evaluate``),
    ``api`` (the argument of ``evaluate``), ``base_dir`` and ``sets``."""
    folder.mkdir(parents=True, exist_ok=True)
    plan_file = folder / "plan.yaml"
    if case.cat is not None or case.cat_make:
        cat = folder / "cat"
        cat.mkdir(exist_ok=True)
        text = MAKERS[case.cat_make](case.cat_n) if case.cat_make else _expand(
            case.cat.replace("{H}", REGION_HEADER).replace("{R}", REGION_ROW))
        if text != "<none>":
            (cat / case.cat_file).write_bytes(_encode(text, case.cat_encoding))
    if case.via == "path":
        target = _special_path(case, folder)
        return {"argv": [str(target)], "api": target, "base_dir": None, "sets": []}
    if case.via == "dict":
        return {"argv": None, "api": plan_dict(case), "base_dir": folder, "sets": []}
    text = plan_text(case)
    if case.via == "text":
        return {"argv": None, "api": text, "base_dir": folder, "sets": []}
    plan_file.write_bytes(_encode(text, case.encoding, case.newline))
    sets = [_expand(s) for s in case.set]
    argv = [str(plan_file)] + [a for s in sets for a in ("--set", s)]
    return {"argv": argv, "api": plan_file, "base_dir": folder, "sets": sets}


def _special_path(case: Case, folder: Path) -> Path:
    kind = case.path
    target = folder / "special.yaml"
    if kind == "directory":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "symlink_loop":
        target.symlink_to(folder / "loop.yaml")
        (folder / "loop.yaml").symlink_to(target)
    elif kind == "unreadable":
        target.write_text(BASE, encoding="utf-8")
        target.chmod(0)
    elif kind == "dev_zero":
        return Path("/dev/zero")
    elif kind == "control_name":
        target = folder / "evil\x1b[31mname.yaml"
    elif kind == "missing":
        pass
    else:
        raise AssertionError(kind)
    return target


def run_api(case: Case, how: dict) -> tuple[Any, BaseException | None, str]:
    """``evaluate`` with warnings as errors and stdout/stderr captured: (result, exception, printed)."""
    from aiplan import evaluate
    from aiplan.core.inputs import read_yaml
    from aiplan.plan import apply_overrides

    printed = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        warnings.simplefilter("error")
        try:
            if how["sets"]:
                plan = apply_overrides(read_yaml(how["api"]), how["sets"])
                return evaluate(plan, base_dir=how["base_dir"]), None, printed.getvalue()
            return evaluate(how["api"], base_dir=how["base_dir"]), None, printed.getvalue()
        except BaseException as exc:  # noqa: BLE001 - the test says what escaped
            return None, exc, printed.getvalue()


def non_finite(value: Any, path: str = "result") -> list[str]:
    """Paths of the numbers in a result that are not finite (or not plain JSON types)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [] if type(value) in (int, float) and math.isfinite(value) else [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in non_finite(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in non_finite(v, f"{path}[{i}]")]
    return [f"{path} ({type(value).__name__})"]


def bad_findings(result: dict) -> list[str]:
    """Findings whose message shows a figure that was not computed (n/a, nan, inf) or runs on and on."""
    return [f["id"] for f in result.get("checks") or []
            if "n/a" in f["message"] or re.search(r"\b(nan|inf)\b", f["message"]) or len(f["message"]) > 800]


def has_control(text: str) -> bool:
    return bool(_CONTROL.search(text))
