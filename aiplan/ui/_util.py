"""Small helpers for the widget panels: download links, flattening.

No formulas here: only presentation of numbers the package computed.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
from collections.abc import Iterable, Mapping
from typing import Any


def data_uri(text: str, mime: str) -> str:
    """A ``data:`` URI holding ``text`` (works offline and in Voilà)."""
    return f"data:{mime};base64," + base64.b64encode(text.encode("utf-8")).decode("ascii")


def download_link(text: str, filename: str, mime: str, label: str, dom_id: str = "") -> str:
    """An HTML ``<a download>`` link whose target is the text itself."""
    ident = f' id="{dom_id}"' if dom_id else ""
    return (f'<a{ident} class="aiplan-download" download="{html.escape(filename)}" '
            f'href="{data_uri(text, mime)}" target="_blank">{html.escape(label)}</a>')


def flatten(result: Mapping, skip: Iterable[str] = ("plan", "checks")) -> list[tuple[str, str, Any]]:
    """Scalar values of a result as ``(section, key, value)`` rows (lists and dicts left out)."""
    rows = []
    for section, part in result.items():
        if section in skip or not isinstance(part, Mapping):
            continue
        for key, value in part.items():
            if value is None or isinstance(value, (str, bool, int, float)):
                rows.append((section, key, value))
    return rows


def result_csv(result: Mapping) -> str:
    """The result's scalar values as CSV text: section,key,value."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["section", "key", "value"])
    writer.writerows(flatten(result))
    return out.getvalue()


def result_json(result: Mapping) -> str:
    """The whole result as indented JSON text."""
    return json.dumps(result, indent=2, default=str)


def slug(name: str) -> str:
    """A file-name-safe version of a plan name."""
    keep = "".join(c.lower() if c.isalnum() else "-" for c in str(name))
    return "-".join(p for p in keep.split("-") if p) or "plan"
