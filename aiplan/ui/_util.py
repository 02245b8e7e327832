"""Small helpers for the widget panels: download links, flattening.

No formulas here: only presentation of numbers the package computed.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Mapping


def data_uri(text: str, mime: str) -> str:
    """A ``data:`` URI holding ``text`` (works offline and in Voilà)."""
    return f"data:{mime};base64," + base64.b64encode(text.encode("utf-8")).decode("ascii")


def download_link(text: str, filename: str, mime: str, label: str, dom_id: str = "") -> str:
    """An HTML ``<a download>`` link whose target is the text itself."""
    ident = f' id="{dom_id}"' if dom_id else ""
    return (f'<a{ident} class="aiplan-download" download="{html.escape(filename)}" '
            f'href="{data_uri(text, mime)}" target="_blank">{html.escape(label)}</a>')


def result_json(result: Mapping) -> str:
    """The whole result as indented JSON text."""
    return json.dumps(result, indent=2, default=str)


def slug(name: str) -> str:
    """A file-name-safe version of a plan name."""
    keep = "".join(c.lower() if c.isalnum() else "-" for c in str(name))
    return "-".join(p for p in keep.split("-") if p) or "plan"
