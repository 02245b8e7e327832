"""Client reports: run ``notebooks/report.ipynb`` headless and publish it offline.

``aiplan report PLAN.yaml [PLAN2.yaml | FOLDER ...] -o OUT [--pdf] [--paper a4|letter] [--xlsx] [--pptx]
[--charts] [--jobs N]`` writes, for each plan ``NAME.yaml``:

- ``OUT/NAME.html``  one self-contained HTML file: no code, charts as inline SVG,
  nothing fetched from the network (an nbconvert template that drops the CDN
  scripts of the lab template, see ``aiplan/templates/offline``); its title is the plan name;
- ``OUT/NAME.ipynb`` the executed notebook (with papermill metadata), for audit: each
  chart as its Vega-Lite spec and the SVG drawn from it;
- ``OUT/NAME.json``  the key results and the full result (the notebook's sidecar);
- ``OUT/NAME.pdf``   with ``--pdf``: the HTML printed by the system Chromium on A4 (or
  ``--paper letter``), page numbers and the plan name in the footer;
- ``OUT/NAME.xlsx``  with ``--xlsx``: a "Summary" sheet, one sheet per step, the bill of
  materials, the monthly cost, the assumptions, findings and sources, with Excel number formats;
- ``OUT/NAME.pptx``  with ``--pptx``: a short deck (title, summary, one slide per step with its
  headline chart, assumptions) to edit and present;
- ``OUT/NAME-<n>-<step>-<chart>.png`` and ``.svg`` with ``--charts``: every chart, ready for slides.

The report reads, in order: cover, executive summary (:mod:`aiplan.present.summary`), bill of materials
(:mod:`.bom`), one section per step (:mod:`.figures`), findings, assumptions and sources
(:mod:`.assumptions`), appendix. Modules, one job each: :mod:`.sections` (the HTML blocks the
report notebook shows), :mod:`.sidecar` (the key results as JSON), :mod:`.workbook` (Excel),
:mod:`.deck` (PowerPoint), :mod:`.chartfiles` (charts as files), :mod:`.notebook` (running the
notebook in a kernel), :mod:`.svg` (charts drawn in a warm worker process), :mod:`.export`
(offline HTML), :mod:`.pdf` (printing with Chromium) and :mod:`.batch` (one report atomically,
batches, the command).

Exit status of :func:`main`: 0 when every report was written; 1 when any plan
failed (the others still run; a summary lists both); with a *single* plan an
invalid plan raises :class:`~aiplan.core.errors.PlanError` before anything runs
(the CLI prints it and exits 2).
"""

import sys

# nbformat, papermill and nbconvert import jsonschema, which builds the grammar of the optional
# ``rfc3987_syntax`` package (~1 s per process) to check "iri" formats that no notebook schema
# uses; skipped here as in the kernel (see aiplan/present/charts.py).
sys.modules.setdefault("rfc3987_syntax", None)

from .alternatives import alternatives
from .assumptions import assumptions as assumption_rows
from .assumptions import bibliography, cited_ids
from .batch import REPORT_PARAMETERS, Outcome, collect_plans, main, output_names, render, run_batch
from .bom import bill_of_materials
from .chartfiles import ReportChart, report_charts, write_chart_files
from .deck import write_pptx
from .export import TEMPLATES_DIR, export_html, html_exporter
from .figures import SECTIONS, STEP_CHARTS, STEPS, step_figures
from .notebook import EXECUTION_TIMEOUT_S, check_parameters, report_notebook, run_notebook, start_kernel, stop_kernel
from .pdf import PAPER_SIZES, chromium_path, html_to_pdf
from .sections import (
    REPORT_SECTIONS,
    Html,
    appendix_tables,
    assumptions,
    bom_table,
    colophon,
    cover,
    esc,
    executive_summary,
    findings,
    note,
    plan_folder,
    read_plan,
    sources,
    step,
    step_charts,
    table,
)
from .sidecar import dumps_sorted, key_results, key_results_of, output_metadata, write_sidecar
from .svg import VEGALITE_MIMETYPE, ChartDrawer, svg_worker, vegalite_to_svg
from .workbook import write_xlsx

__all__ = [
    "ChartDrawer", "EXECUTION_TIMEOUT_S", "Html", "Outcome", "PAPER_SIZES", "REPORT_PARAMETERS", "REPORT_SECTIONS",
    "ReportChart", "SECTIONS", "STEPS", "STEP_CHARTS", "TEMPLATES_DIR", "VEGALITE_MIMETYPE", "appendix_tables",
    "assumption_rows", "assumptions", "bibliography", "bill_of_materials", "bom_table", "check_parameters",
    "chromium_path", "cited_ids", "collect_plans", "colophon", "cover", "dumps_sorted", "esc", "executive_summary",
    "export_html", "findings", "html_exporter", "html_to_pdf", "key_results", "main", "note", "output_names",
    "read_plan", "render", "report_charts", "report_notebook", "run_batch", "run_notebook", "sources", "start_kernel",
    "step", "step_charts", "step_figures", "stop_kernel", "svg_worker", "table", "vegalite_to_svg",
    "write_chart_files", "write_pptx", "write_sidecar", "write_xlsx", "key_results_of", "output_metadata",
]
