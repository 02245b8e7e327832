"""A report's result tables as an Excel workbook."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from .sections import SECTIONS, flatten


def _sheet_name(text: str) -> str:
    for ch in "[]:*?/\\":
        text = text.replace(ch, "_")
    return text[:31]


def write_xlsx(result: Mapping, path: str | os.PathLike) -> None:
    """The result tables as an Excel workbook: the plan, one sheet per step section, findings, and lists."""
    import pandas as pd

    with pd.ExcelWriter(path, engine="openpyxl") as xl:
        plan_rows = [{"field": k, "value": v if not isinstance(v, (list, dict)) else json.dumps(v)}
                     for k, v in flatten(result.get("plan") or {}).items()]
        pd.DataFrame(plan_rows, columns=["field", "value"]).to_excel(xl, sheet_name="plan", index=False)
        lists = []
        for section in SECTIONS:
            values = result.get(section) or {}
            rows = [{"figure": k, "value": v} for k, v in values.items() if not isinstance(v, (list, dict))]
            pd.DataFrame(rows, columns=["figure", "value"]).to_excel(xl, sheet_name=section, index=False)
            for k, v in values.items():
                if isinstance(v, list) and v and isinstance(v[0], Mapping):
                    lists.append((f"{section} {k}", v))
                elif isinstance(v, Mapping):
                    lists.append((f"{section} {k}", [{"item": a, "value": b} for a, b in v.items()]))
        checks = result.get("checks") or []
        pd.DataFrame(checks, columns=["id", "severity", "message", "source"]).to_excel(
            xl, sheet_name="checks", index=False)
        for name, rows in lists:
            pd.DataFrame([{k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()}
                          for r in rows]).to_excel(xl, sheet_name=_sheet_name(name), index=False)
