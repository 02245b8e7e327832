"""Client reports: run ``notebooks/report.ipynb`` headless and publish it offline.

``aiplan report PLAN.yaml [PLAN2.yaml | FOLDER ...] -o OUT [--pdf] [--xlsx] [--jobs N]``
writes, for each plan ``NAME.yaml``:

- ``OUT/NAME.html``  one self-contained HTML file: no code, charts as inline SVG,
  nothing fetched from the network (an nbconvert template that drops the CDN
  scripts of the lab template, see ``aiplan/templates/offline``);
- ``OUT/NAME.ipynb`` the executed notebook (with papermill metadata), for audit: each
  chart as its Vega-Lite spec and the SVG drawn from it;
- ``OUT/NAME.json``  the key results and the full result (the notebook's sidecar);
- ``OUT/NAME.pdf``   with ``--pdf``: the HTML printed by the system Chromium;
- ``OUT/NAME.xlsx``  with ``--xlsx``: the result tables, one sheet per step.

Modules, one job each: :mod:`.sections` (the HTML blocks the report notebook shows),
:mod:`.sidecar` (the key results as JSON), :mod:`.workbook` (Excel), :mod:`.notebook`
(running the notebook in a kernel), :mod:`.svg` (charts drawn in a warm worker process),
:mod:`.export` (offline HTML), :mod:`.pdf` (printing with Chromium) and :mod:`.batch`
(one report atomically, batches, the command).

Exit status of :func:`main`: 0 when every report was written; 1 when any plan
failed (the others still run; a summary lists both); with a *single* plan an
invalid plan raises :class:`~aiplan.errors.PlanError` before anything runs
(the CLI prints it and exits 2).
"""

import sys

# nbformat, papermill and nbconvert import jsonschema, which builds the grammar of the optional
# ``rfc3987_syntax`` package (~1 s per process) to check "iri" formats that no notebook schema
# uses; skipped here as in the kernel (see aiplan/charts.py).
sys.modules.setdefault("rfc3987_syntax", None)

from .batch import REPORT_PARAMETERS, Outcome, collect_plans, main, output_names, render, run_batch  # noqa: E402
from .export import TEMPLATES_DIR, export_html, html_exporter  # noqa: E402
from .notebook import EXECUTION_TIMEOUT_S, check_parameters, report_notebook, run_notebook, start_kernel, stop_kernel  # noqa: E402
from .pdf import chromium_path, html_to_pdf  # noqa: E402
from .sections import (  # noqa: E402
                       SECTIONS,
                       STEPS,
                       Html,
                       applies,
                       assumed_defaults,
                       esc,
                       findings,
                       five_numbers,
                       header,
                       note,
                       plan_table,
                       read_plan,
                       records_table,
                       rules_of_thumb,
                       scalars,
                       section_table,
                       sources,
                       step,
                       summary,
                       table,
)
from .sidecar import dumps_sorted, key_results, write_sidecar  # noqa: E402
from .svg import VEGALITE_MIMETYPE, ChartDrawer, svg_worker, vegalite_to_svg  # noqa: E402
from .workbook import write_xlsx  # noqa: E402

__all__ = [
    "EXECUTION_TIMEOUT_S", "REPORT_PARAMETERS", "SECTIONS", "STEPS", "TEMPLATES_DIR", "VEGALITE_MIMETYPE",
    "ChartDrawer", "Html", "Outcome", "applies", "assumed_defaults", "check_parameters", "chromium_path",
    "collect_plans", "dumps_sorted", "esc", "export_html", "findings", "five_numbers", "header", "html_exporter",
    "html_to_pdf", "key_results", "main", "note", "output_names", "plan_table", "read_plan", "records_table",
    "render", "report_notebook", "rules_of_thumb", "run_batch", "run_notebook", "scalars", "section_table",
    "sources", "start_kernel", "step", "stop_kernel", "summary", "svg_worker", "table", "vegalite_to_svg",
    "write_sidecar", "write_xlsx",
]
