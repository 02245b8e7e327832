"""The executed report notebook as one offline HTML file (nbconvert, offline template)."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from .svg import VEGALITE_MIMETYPE

#: CSS page size of each paper the report prints on
PAPER_CSS = {"a4": "A4", "letter": "letter"}
#: Folder of the offline nbconvert template (``offline/index.html.j2``).
TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"


@functools.lru_cache(maxsize=1)
def html_exporter() -> Any:
    """The nbconvert exporter of reports (offline template; no code, prompts or remove-cell cells).

    One per process: its templates are compiled on first use and kept.
    """
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    config = Config()
    config.TagRemovePreprocessor.remove_cell_tags = {"remove-cell"}  # notes for notebook readers only
    return HTMLExporter(config=config, template_name="offline", extra_template_basedirs=[str(TEMPLATES_DIR)],
                        exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)


def warm_up_exporter() -> None:
    """Compile the exporter's templates (and import what they use) by exporting an empty notebook."""
    import nbformat

    html_exporter().from_notebook_node(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("#")]))


def css_string(text: str) -> str:
    """``text`` as a CSS string literal, safe inside ``<style>`` (quotes, backslashes, ``<`` escaped)."""
    escaped = "".join(ch if ch.isprintable() and ch not in '"\\<>' else f"\\{ord(ch):X} " for ch in str(text))
    return f'"{escaped}"'


def export_html(executed: Any, html_path: str | os.PathLike, title: str = "", paper: str = "a4") -> None:
    """The executed notebook (a path or a notebook) as one offline HTML file.

    No code, no prompts, no stderr, no CDN: a chart kept both as Vega-Lite and as SVG is
    published as the SVG only. ``title`` (the plan name) is the HTML title and the printed
    pages' footer; ``paper`` ("a4" or "letter") the printed page size.
    """
    import copy

    import nbformat

    nb = nbformat.read(str(executed), as_version=4) if isinstance(executed, (str, os.PathLike)) \
        else copy.deepcopy(executed)
    nb.metadata.pop("widgets", None)
    if title:
        nb.metadata["title"] = title
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if not (o.get("output_type") == "stream"
                                                            and o.get("name") == "stderr")]
            for output in cell.outputs:
                data = output.get("data", {})
                if "image/svg+xml" in data:
                    for mime in [m for m in data if m.startswith(VEGALITE_MIMETYPE)]:
                        del data[mime]
    page = {"page_size": PAPER_CSS[paper], "footer": css_string(title)}
    body, _ = html_exporter().from_notebook_node(
        nb, resources={"metadata": {"name": nb.metadata.get("title", "report")}, "aiplan": page})
    Path(html_path).write_text(body, encoding="utf-8")
