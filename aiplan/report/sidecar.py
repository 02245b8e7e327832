"""The key results of a report as a JSON sidecar (what the regression tests compare)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.version import __version__
from ..pipeline import RESULT_KEYS, to_plain
from .figures import get_path


def key_results(result: Mapping) -> dict[str, Any]:
    """The contract keys of ``result`` flattened to ``section.key`` plus the finding ids.

    This is what regression tests compare with ``tests/golden/*.json``: the public
    contract only (``aiplan.RESULT_KEYS``), so a step adding extra keys does not churn
    the golden files, but a changed contract value does.
    """
    out: dict[str, Any] = {"plan.name": get_path(result, "plan.name"),
                           "plan.workload.kind": get_path(result, "plan.workload.kind")}
    for section, keys in RESULT_KEYS.items():
        for key in keys:
            out[f"{section}.{key}"] = get_path(result, f"{section}.{key}")
    out["checks"] = sorted(f"{c.get('severity')}:{c.get('id')}" for c in result.get("checks") or [])
    return out


#: key of the output metadata that carries a notebook's key results (invisible to a reader)
OUTPUT_KEY = "aiplan"


def output_metadata(result: Mapping, notebook: str = "") -> dict[str, Any]:
    """Metadata for a displayed output that carries ``result``'s key results: a notebook that shows
    its figures this way needs no file and no parameter for a regression run to read them."""
    keys = to_plain(key_results(result))
    return {OUTPUT_KEY: {"aiplan_version": __version__, "notebook": notebook, "key_results": keys}}


def key_results_of(executed: Mapping) -> dict[str, Any] | None:
    """The key results an executed notebook (its JSON) displayed with :func:`output_metadata`, or None."""
    for cell in executed.get("cells") or []:
        for out in cell.get("outputs") or []:
            found = (out.get("metadata") or {}).get(OUTPUT_KEY)
            if found:
                return found["key_results"]
    return None


def dumps_sorted(data: Any) -> str:
    """JSON with sorted keys and one value per line (diff-friendly golden files)."""
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write_sidecar(result: Mapping | list, path: str | os.PathLike = "", notebook: str = "") -> None:
    """Write ``{"key_results": ..., "result": ...}`` as JSON to ``path`` (no-op when empty).

    Notebooks call this in their last cell with their ``results_path`` parameter. A list of
    results (a comparison) is written with keys ``"<index>.<key>"``.
    """
    if not path:
        return

    if isinstance(result, list):
        keys = {f"{i}.{k}": v for i, r in enumerate(result) for k, v in key_results(r).items()}
        full: Any = [to_plain(dict(r)) for r in result]
    else:
        keys, full = key_results(result), to_plain(dict(result))
    data = {"aiplan_version": __version__, "notebook": notebook, "key_results": keys, "result": full}
    Path(path).write_text(dumps_sorted(data), encoding="utf-8")
