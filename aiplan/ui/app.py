"""The planner app: plan controls on the left, live key figures, findings and charts.

``PlannerApp`` wires :class:`~aiplan.ui.controls.PlanControls` to
:func:`aiplan.evaluate` (the only computation) and shows the result: key
figures with stable DOM ids (``aiplan-memory-per-gpu`` ...), the findings of
``checks`` coloured by severity, and Altair charts from :mod:`aiplan.charts`
in two chart panes (only the chart on show is redrawn, so a change redraws in
well under 100 ms). An invalid plan shows the ``PlanError`` lines inline.

Use in a notebook::

    from aiplan.ui import PlannerApp
    app = PlannerApp("../plans/example.yaml")
    app.view            # the widget app (AppLayout)
    app.show_static()   # the same figures as plain outputs (visible headless)
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import ipywidgets as W

from .. import charts as C
from ..errors import PlanError
from ..evaluate import evaluate
from ..plan import dump_plan
from . import figures
from ._util import download_link, result_csv, result_json, slug
from .controls import PlanControls

#: chart panes: label -> chart name in aiplan.charts (RESULT_CHARTS or SWEEP_CHARTS)
PANE_A = {"Memory": "memory", "Layouts": "layout", "Time & cost vs GPUs": "training_sweep",
          "Inference": "inference_sweep"}
PANE_B = {"Cumulative cost": "cumulative_cost", "Utilisation": "utilisation", "Sensitivity": "sensitivity",
          "Facility": "facility", "Growth": "growth"}
AUTO_PLACEHOLDERS = {"cluster.gpus": ("compute", "gpus"), "cluster.tensor_parallel": ("cluster", "tensor_parallel"),
                     "cluster.pipeline_parallel": ("cluster", "pipeline_parallel"),
                     "cluster.data_parallel": ("cluster", "data_parallel"),
                     "cluster.zero_stage": ("cluster", "zero_stage")}


def build_chart(name: str, result: Mapping) -> alt.TopLevelMixin:
    """Any chart of :mod:`aiplan.charts` by name, from a result."""
    if name in C.RESULT_CHARTS:
        return C.RESULT_CHARTS[name](result)
    return C.SWEEP_CHARTS[name](result)


class ChartPane:
    """A chart selector and one offline ``alt.JupyterChart``; redraws only the chart on show."""

    def __init__(self, options: Mapping[str, str], initial: str | None = None):
        self.options = dict(options)
        self.selector = W.ToggleButtons(options=list(self.options), value=initial or next(iter(self.options)),
                                        style={"button_width": "auto"})
        self.widget = alt.JupyterChart(C.not_available("empty", "Chart", "waiting for a result"))
        self.widget.add_class("aiplan-chart")
        self.view = W.VBox([self.selector, self.widget], layout=W.Layout(min_height="320px", width="49%",
                                                                         overflow="auto",
                                                                         margin="0 6px 8px 0"))
        self.result: Mapping | None = None
        self.drawn: str | None = None
        self.selector.observe(lambda _: self.draw(), names="value")

    @property
    def name(self) -> str:
        return self.options[self.selector.value]

    def update(self, result: Mapping | None) -> None:
        self.result = result
        self.drawn = None
        self.draw()

    def draw(self) -> None:
        if self.result is None or self.drawn == self.name:
            return
        with alt.utils.schemapi.debug_mode(False):
            chart = build_chart(self.name, self.result)
            # hot path: skip schema validation (builders are validated in tests/test_charts.py)
            self.widget.spec = chart.to_dict(validate=False)
        self.drawn = self.name


class PlannerApp:
    """The whole planner as one widget app.

    Parameters
    ----------
    plan : dict, path or YAML text, optional
        Starting plan (default: the ``example`` preset).
    sections : sequence of str
        Plan sections whose controls are shown (default: all).
    panes : two dicts ``{label: chart name}``, optional
        Charts offered in the two chart panes.
    title : str
    """

    def __init__(self, plan: Any = None, catalog=None, sections: Sequence[str] | None = None,
                 panes: Sequence[Mapping[str, str]] | None = None, title: str = "aiplan — AI infrastructure planner"):
        C.use_offline(svg=False)
        kwargs = {"sections": tuple(sections)} if sections else {}
        self.controls = PlanControls(plan, catalog=catalog, **kwargs)
        self.result: dict | None = None
        self.error: PlanError | None = None
        self.last_update_s = 0.0
        self.title = title
        self.header = W.HTML(self._header_html())
        self.figures = W.HTML(figures.key_figures_html(None))
        self.figures.add_class("aiplan-figures")
        self.problems = W.HTML("")
        self.problems.add_class("aiplan-problems")
        self.findings = W.HTML("")
        self.findings.add_class("aiplan-findings")
        self.note = W.HTML("")
        panes = list(panes) if panes else [PANE_A, PANE_B]
        self.panes = [ChartPane(p) for p in panes]
        self.upload = W.FileUpload(accept=".yaml,.yml", multiple=False, description="Load plan")
        self.upload.observe(self._on_upload, names="value")
        self.downloads = W.HTML("")
        self.downloads.add_class("aiplan-downloads")
        self.controls.on_change(lambda _path: self.recompute())
        self.view = self._layout()
        self.recompute()

    # --- layout -----------------------------------------------------------------

    def _header_html(self) -> str:
        name = (self.result or {}).get("plan", {}).get("name") if self.result else ""
        return (figures.CSS + f'<div class="aiplan-title">{self.title}</div>'
                f'<div class="aiplan-subtitle" id="aiplan-plan-name">{name or ""} — model → cluster → facility → '
                f'cost. Every figure comes from <code>aiplan.evaluate</code>; findings from '
                f'<code>aiplan.run_checks</code>.</div>')

    def _layout(self) -> W.Widget:
        io_box = W.VBox([W.HTML("<b>Plan file</b>"), self.upload, self.downloads])
        left = W.VBox([self.controls.view, io_box], layout=W.Layout(width="100%", overflow="auto"))
        charts = W.HBox([p.view for p in self.panes], layout=W.Layout(flex_flow="row wrap", width="100%"))
        center = W.VBox([self.figures, self.problems, W.HTML("<b>Findings</b>"), self.findings, charts, self.note],
                        layout=W.Layout(width="100%", padding="0 0 0 12px"))
        return W.AppLayout(header=self.header, left_sidebar=left, center=center, right_sidebar=None,
                           footer=None, pane_widths=["390px", 1, 0], pane_heights=["70px", 1, 0],
                           grid_gap="6px", layout=W.Layout(min_height="900px"))

    # --- behaviour --------------------------------------------------------------

    def recompute(self) -> None:
        """Evaluate the plan in the controls and redraw every result view."""
        start = time.perf_counter()
        try:
            result = evaluate(self.controls.plan_dict(), self.controls.catalog)
        except Exception as exc:  # a PlanError, or a bug: one readable message, never a traceback
            self.error = exc if isinstance(exc, PlanError) else \
                PlanError(f"internal error: {type(exc).__name__}: {exc}")
            self.problems.value = figures.error_html(self.error)
            self.figures.layout.opacity = "0.4"
            self.last_update_s = time.perf_counter() - start
            return
        self.error = None
        self.result = result
        self.problems.value = ""
        self.figures.layout.opacity = "1"
        self.figures.value = figures.key_figures_html(result)
        self.findings.value = figures.findings_html(result.get("checks"))
        self.header.value = self._header_html()
        self.controls.sync(result["plan"])
        self._placeholders(result)
        self.downloads.value = self._downloads_html(result)
        for pane in self.panes:
            pane.update(result)
        self.last_update_s = time.perf_counter() - start

    def _placeholders(self, result: Mapping) -> None:
        raw = self.controls.plan_dict()
        for path, (section, key) in AUTO_PLACEHOLDERS.items():
            s, k = path.split(".")
            widget = self.controls.widgets[path]
            if k in (raw.get(s) or {}):
                continue
            value = C.get(result, section, key)
            widget.placeholder = f"auto ({value:g})" if isinstance(value, (int, float)) else "auto"

    def _downloads_html(self, result: Mapping) -> str:
        name = slug((result.get("plan") or {}).get("name", "plan"))
        links = [download_link(dump_plan(self.controls.plan_dict()), f"{name}.yaml", "application/x-yaml",
                               "Save plan (YAML)", "aiplan-save-yaml"),
                 download_link(dump_plan(result["plan"]), f"{name}-filled.yaml", "application/x-yaml",
                               "Filled plan (YAML)", "aiplan-save-filled"),
                 download_link(result_json(result), f"{name}-result.json", "application/json",
                               "Result (JSON)", "aiplan-download-json"),
                 download_link(result_csv(result), f"{name}-result.csv", "text/csv",
                               "Result (CSV)", "aiplan-download-csv")]
        return " · ".join(links)

    def _on_upload(self, change) -> None:
        files = change["new"]
        if not files:
            return
        item = files[0] if isinstance(files, (list, tuple)) else next(iter(files.values()))
        text = bytes(item["content"]).decode("utf-8")
        self.load_text(text)

    def load_text(self, text: str) -> None:
        """Load a plan from YAML text (what the upload button does)."""
        from ..plan import parse_yaml

        try:
            data = parse_yaml(text, "uploaded plan")
        except PlanError as exc:
            self.error = exc
            self.problems.value = figures.error_html(exc)
            return
        if not isinstance(data, dict):
            self.error = PlanError("uploaded plan: must be a mapping with sections model, workload, ...")
            self.problems.value = figures.error_html(self.error)
            return
        self.controls.set_plan(data)

    def save(self, path: str) -> str:
        """Write the current plan (explicit fields) to a YAML file; returns the path."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(dump_plan(self.controls.plan_dict()))
        return path

    # --- headless display ---------------------------------------------------------

    def show_static(self, chart_names: Sequence[str] | None = None) -> None:
        """Display key figures, findings and charts as plain outputs (visible headless and in reports)."""
        from IPython.display import HTML, Markdown, display

        if self.error is not None:
            display(HTML(figures.error_html(self.error)))
            return
        display(HTML(figures.CSS + figures.key_figures_html(self.result)))
        display(HTML(figures.findings_html(self.result.get("checks"))))
        display(Markdown(figures.summary_markdown(self.result)))
        with alt.renderers.enable("svg"):  # static and offline, whatever the notebook's renderer
            for name in chart_names or [p.name for p in self.panes]:
                display(build_chart(name, self.result))
