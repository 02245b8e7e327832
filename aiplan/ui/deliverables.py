"""What a client takes away from the app: the client report exactly as ``aiplan report`` writes it (HTML,
PDF, workbook) and the result as a CSV a spreadsheet reads (labels, units, rounded numbers).

The report is :func:`aiplan.report.render` of the plan on screen: the same notebook, the same
files. The PDF needs the system Chromium; without it the app says so in one line.
"""

from __future__ import annotations

import copy
import csv
import io
import math
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.fields import RESULT_FIELDS, SECTION_TITLES, get_path
from ..plan import dump_plan
from ..report.batch import render
from ..report.pdf import chromium_path

#: MIME type of each deliverable
MIME = {"html": "text/html", "pdf": "application/pdf",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}
#: the one line shown where the PDF cannot be made
NO_CHROMIUM = "The PDF needs Chromium, which this server does not have (apt-get install chromium)."
#: significant digits of the numbers in the CSV
CSV_DIGITS = 4


def has_chromium() -> bool:
    """Whether this server can print a report to PDF (:func:`aiplan.report.pdf.chromium_path` exists)."""
    return Path(chromium_path()).exists()


def _absolute_catalogs(plan: Mapping, base_dir: Path | None) -> dict:
    """The plan with its own catalog folders made absolute (the report reads a copy of the plan elsewhere)."""
    out = copy.deepcopy(dict(plan))
    folders = out.get("catalog")
    if folders and base_dir is not None:
        folders = [folders] if isinstance(folders, str) else list(folders)
        out["catalog"] = [str((base_dir / f).resolve()) if not Path(f).is_absolute() else f for f in folders]
    return out


def report_file(plan: Mapping, name: str, what: str, base_dir: Path | None = None) -> tuple[str, bytes, str]:
    """``(file name, bytes, MIME type)`` of the client report of ``plan`` as ``aiplan report`` writes it:
    ``what`` is ``html``, ``pdf`` or ``xlsx``; ``name`` the file stem."""
    if what not in MIME:
        raise ValueError(f"a report is html, pdf or xlsx, not {what}")
    if what == "pdf" and not has_chromium():
        raise RuntimeError(NO_CHROMIUM)
    with tempfile.TemporaryDirectory(prefix="aiplan-report-") as tmp:
        plan_path = Path(tmp) / f"{name}.yaml"
        plan_path.write_text(dump_plan(_absolute_catalogs(plan, base_dir)), encoding="utf-8")
        files = render(plan_path, Path(tmp) / "out", name, pdf=what == "pdf", xlsx=what == "xlsx")
        path = next(f for f in files if f.suffix == f".{what}")
        return path.name, path.read_bytes(), MIME[what]


def rounded(value: float, digits: int = CSV_DIGITS) -> float | int:
    """``value`` to ``digits`` significant digits, a whole number as an int (1183.9999 -> 1184, 0.123456 -> 0.1235)."""
    if not math.isfinite(value):
        return value
    if float(value).is_integer() and abs(value) < 1e15:
        return int(value)
    out = round(value, digits - 1 - int(math.floor(math.log10(abs(value)))))
    return int(out) if float(out).is_integer() and 10 ** (digits - 1) <= abs(out) < 1e15 else out


def result_csv(result: Mapping) -> str:
    """The result as CSV for a spreadsheet: section, figure (the registry's label), value (numbers rounded to
    :data:`CSV_DIGITS` significant digits, yes/no, text) and unit; lists and values that do not apply left out."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["Section", "Figure", "Value", "Unit"])
    writer.writerow(["Plan", "Plan name", get_path(result, "plan.name") or "", ""])
    for key, spec in RESULT_FIELDS.items():
        section, _, rest = key.partition(".")
        value: Any = get_path(result, key)
        if not rest or "[]" in key or value is None or isinstance(value, (list, dict)):
            continue
        if isinstance(value, bool):
            value = "yes" if value else "no"
        elif isinstance(value, (int, float)):
            value = rounded(float(value))
        writer.writerow([SECTION_TITLES.get(section, section), spec.label, value, spec.unit or ""])
    return out.getvalue()
