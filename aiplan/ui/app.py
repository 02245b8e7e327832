"""The planner app: plan controls on the left; the answer, the problems, charts and scenarios on the right.

``PlannerApp`` wires :class:`~aiplan.ui.controls.PlanControls` to :func:`aiplan.evaluate` (the
only computation) and shows the result, the client's question first: the cards of
:mod:`aiplan.ui.figures` (the recommendation, this run or the service, memory and facility, then
keeping the cluster for years), a banner
(DOM id ``aiplan-banner``) when the plan cannot work, with a button (``aiplan-apply-fix``) that
applies the fix of :func:`aiplan.analysis.fixes.suggest_fix`, the headline chart beside a chart of choice,
the findings grouped by severity, and the pinned scenarios (``aiplan-pin``, ``aiplan-scenarios``).
An invalid plan shows its problems at the top, naming each field, and dims the figures of the
last valid plan (CSS class ``aiplan-stale``).

After a change the key figures go out first, then the banner, the charts (only the two on show are
redrawn, and only when they change), the values of the controls, the findings and the download
links. The page is laid out for 1280 x 720 and up: the key figures and the headline chart above the
fold, the page scrolling as a whole.

Use in a notebook::

    from aiplan.ui import PlannerApp
    app = PlannerApp("../plans/example.yaml")
    app.view            # the widget app
    app.show_static()   # the same figures as plain outputs (visible headless)
"""

from __future__ import annotations

import html
import time
from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import ipywidgets as W

from ..analysis.fixes import Fix, problems, suggest_fix
from ..core.errors import PlanError
from ..core.fields import get_path
from ..core.inputs import parse_yaml
from ..pipeline import evaluate
from ..plan import dump_plan
from ..present import charts as C
from ..report.sidecar import output_metadata
from . import figures
from ._util import download_link, result_csv, result_json, slug
from .compare import ScenarioBoard
from .controls import PlanControls
from .dom import ActionButton, PageReady
from .options_view import OptionsView

#: chart panes: label -> chart name in aiplan.present.charts (RESULT_CHARTS or SWEEP_CHARTS); the first pane's
#: first two are the headlines of a training and a serving plan
PANE_A = {"Time and run cost vs GPUs": "training_sweep", "Replicas vs load": "inference_sweep", "Memory": "memory",
          "Layouts": "layout"}
PANE_B = {"Cumulative cost": "cumulative_cost", "By utilisation": "utilisation", "Cost drivers": "sensitivity",
          "Facility": "facility", "Growth": "growth"}
HEADLINES = {"inference": "Replicas vs load", "pretrain": "Time and run cost vs GPUs",
             "finetune": "Time and run cost vs GPUs"}
AUTO_PLACEHOLDERS = {"cluster.gpus": ("cluster", "gpus"), "cluster.tensor_parallel": ("cluster", "tensor_parallel"),
                     "cluster.pipeline_parallel": ("cluster", "pipeline_parallel"),
                     "cluster.data_parallel": ("cluster", "data_parallel"),
                     "cluster.zero_stage": ("cluster", "zero_stage"), "cluster.mfu": ("compute", "mfu")}
#: layout of the page: the controls' width; the rest goes to the results
SIDEBAR_WIDTH = "310px"

APP_CSS = """
<style>
.aiplan-options-table {border-collapse: collapse; font-size: 13px; margin: 6px 0; width: 100%;}
.aiplan-options-table th, .aiplan-options-table td {border-bottom: 1px solid #e3e8ee; padding: 3px 8px;
                                                    text-align: right; white-space: nowrap;}
.aiplan-options-table th:nth-child(2), .aiplan-options-table td:nth-child(2),
.aiplan-options-table th:nth-child(3), .aiplan-options-table td:nth-child(3),
.aiplan-options-table th:nth-child(4), .aiplan-options-table td:nth-child(4) {text-align: left;}
.aiplan-options-table td:nth-child(3) {white-space: normal; max-width: 260px;}
.aiplan-option {cursor: pointer;}
.aiplan-option:hover {background: #eef4fb;}
.aiplan-option-current {font-weight: 600; background: #f3f8ee;}
.aiplan-options-chart svg {max-width: 100%; height: auto;}
body[data-voila="voila"].jp-Notebook {height: auto; min-height: 100%; overflow: visible;}
body[data-voila="voila"] #main, body[data-voila="voila"] #jp-main-content-panel,
body[data-voila="voila"] #rendered_cells {position: static !important; height: auto !important;
                                          width: auto !important; contain: layout style paint !important;
                                          overflow: visible !important;}
body[data-voila="voila"] #rendered_cells {padding: 0 8px !important;}
.aiplan-app .aiplan-sidebar {flex: 0 0 """ + SIDEBAR_WIDTH + """; width: """ + SIDEBAR_WIDTH + """;
                             padding-right: 10px; border-right: 1px solid #e3e8ee;}
.aiplan-app .aiplan-main {flex: 1 1 auto; min-width: 0; padding-left: 12px;}
.aiplan-app .aiplan-group-title {font-weight: 600; font-size: 13px; color: #1a237e; margin: 8px 0 2px 0;
                                 border-bottom: 1px solid #e3e8ee;}
.aiplan-app .aiplan-controls .widget-label {white-space: normal; overflow: visible; text-overflow: clip;
                                            line-height: 1.15; height: auto; min-height: 28px; display: flex;
                                            align-items: center; justify-content: flex-start; text-align: left;}
.aiplan-app .aiplan-controls .widget-inline-hbox {align-items: center; height: auto;}
.aiplan-app .aiplan-controls .aiplan-unit {color: #78909c; font-size: 11px; margin-left: 3px;}
.aiplan-app .aiplan-controls .widget-toggle-buttons .widget-toggle-button {padding: 0 4px;}
.aiplan-app .aiplan-controls .widget-readout {min-width: 44px; overflow: visible;}
.aiplan-app .aiplan-more .p-Accordion-child, .aiplan-app .aiplan-more .lm-Accordion-child {padding: 2px;}
.aiplan-app .aiplan-invalid input, .aiplan-app .aiplan-invalid select {border: 2px solid #c62828 !important;
                                                                      background: #fdecea;}
.aiplan-app .aiplan-chart-pane {flex: 1 1 440px; min-width: 430px; max-width: 640px; margin: 0 8px 8px 0;}
.aiplan-app .aiplan-chart-pane .widget-toggle-buttons .widget-toggle-button {width: auto; padding: 0 8px;}
.aiplan-app .aiplan-chart, .aiplan-app .aiplan-chart-placeholder {min-height: 330px;}
.aiplan-app .aiplan-toolbar {align-items: center; gap: 8px;}
.aiplan-app .aiplan-banner-row {align-items: center; gap: 10px; margin-bottom: 6px;}
.aiplan-app .aiplan-download {margin-right: 10px; font-size: 13px;}
.aiplan-app .aiplan-question {font-size: 13px; font-weight: 400; color: #455a64; margin-left: 12px;}
.aiplan-app .widget-upload {width: auto;}
</style>
"""


def build_chart(name: str, result: Mapping) -> alt.TopLevelMixin:
    """Any chart of :mod:`aiplan.present.charts` by name, from a result."""
    if name in C.RESULT_CHARTS:
        return C.RESULT_CHARTS[name](result)
    return C.SWEEP_CHARTS[name](result)


class ChartPane:
    """A chart selector and one offline ``alt.JupyterChart`` (drawn as SVG); redraws only the chart on show.

    ``spec`` is the Vega-Lite spec on show. The chart widget itself is made by :meth:`attach`
    once the page is on screen (see :class:`~aiplan.ui.dom.PageReady`); until then the pane shows
    a placeholder.
    """

    def __init__(self, options: Mapping[str, str], initial: str | None = None):
        self.options = dict(options)
        self.selector = W.ToggleButtons(options=list(self.options), value=initial or next(iter(self.options)),
                                        style={"button_width": "auto"})
        self.widget: alt.JupyterChart | None = None
        self.placeholder = W.HTML('<div class="aiplan-note aiplan-chart-placeholder">Drawing the chart…</div>')
        self.view = W.VBox([self.selector, self.placeholder])
        self.view.add_class("aiplan-chart-pane")
        self.result: Mapping | None = None
        self.spec: dict | None = None
        self.drawn: str | None = None
        self.selector.observe(lambda _: self.draw(), names="value")

    @property
    def name(self) -> str:
        return self.options[self.selector.value]

    def attach(self) -> None:
        """Make the chart widget (once) and show the chart on show in it."""
        if self.widget is None:
            self.widget = alt.JupyterChart(C.not_available("empty", "Chart", "waiting for a result"),
                                           embed_options={"renderer": "svg", "actions": False})
            self.widget.add_class("aiplan-chart")
            if self.spec is not None:
                self.widget.spec = self.spec
            self.view.children = [self.selector, self.widget]

    def update(self, result: Mapping | None) -> None:
        self.result = result
        self.drawn = None
        self.draw()

    def show(self, label: str) -> None:
        """Put the chart ``label`` on show (redraws it)."""
        if label in self.options and self.selector.value != label:
            self.selector.value = label

    def draw(self) -> None:
        if self.result is None or self.drawn == self.name:
            return
        with alt.utils.schemapi.debug_mode(False):
            chart = build_chart(self.name, self.result)
            # hot path: skip schema validation (builders are validated in tests/test_charts.py)
            spec = chart.to_dict(validate=False)
        if spec != self.spec:  # a chart the change does not touch is not drawn again
            self.spec = spec
            if self.widget is not None:
                self.widget.spec = spec
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
                 panes: Sequence[Mapping[str, str]] | None = None, title: str = "AI infrastructure planner"):
        C.use_offline(svg=False)
        kwargs = {"sections": tuple(sections)} if sections else {}
        self.controls = PlanControls(plan, catalog=catalog, **kwargs)
        self.result: dict | None = None
        self.error: PlanError | None = None
        self.fix: Fix | None = None
        self.last_update_s = 0.0
        self.title = title
        self.header = W.HTML("")
        self.figures = W.HTML(figures.key_figures_html(None))
        self.figures.add_class("aiplan-figures")
        self.banner = W.HTML("")
        self.apply_fix = ActionButton(label="Apply the fix", dom_id="aiplan-apply-fix", kind="primary")
        self.apply_fix.on_click(self.apply_suggested_fix)
        self.banner_row = W.HBox([self.banner, self.apply_fix], layout=W.Layout(display="none"))
        self.banner_row.add_class("aiplan-banner-row")
        self.problems = W.HTML("")
        self.problems.add_class("aiplan-problems")
        self.findings = W.HTML("")
        self.findings.add_class("aiplan-findings-box")
        self.assumed = W.HTML("")
        self.assumptions = W.Accordion(children=[self.assumed], selected_index=None)
        self.assumptions.set_title(0, "What the kit assumed")
        self.assumptions.observe(lambda _: self._show_assumptions(), names="selected_index")
        panes = list(panes) if panes else [PANE_A, PANE_B]
        self.panes = [ChartPane(p) for p in panes]
        self.board = ScenarioBoard(on_change=self._pin_state)
        self.options = OptionsView(self.controls.plan_dict, self.controls.apply, self.controls.catalog)
        self.pin = ActionButton(label="Pin as scenario", dom_id="aiplan-pin",
                                hint="Add the plan on screen to the scenarios below (up to 4)")
        self.pin.on_click(self.pin_scenario)
        self.upload = W.FileUpload(accept=".yaml,.yml", multiple=False, description="Load a plan file")
        self.upload.observe(self._on_upload, names="value")
        self.downloads = W.HTML("")
        self.downloads.add_class("aiplan-downloads")
        self.controls.on_change(self._on_control)
        self.ready = PageReady(self.page_ready)
        self.view = self._layout()
        self.recompute()

    # --- layout -----------------------------------------------------------------

    def _header_html(self) -> str:
        return (f'<div class="aiplan-title" title="{html.escape(self.title)}">'
                f'<span id="aiplan-plan-name">{html.escape(self.controls.plan_name)}</span>'
                f'<span class="aiplan-question">{html.escape(figures.question(self.result))}</span></div>')

    def _layout(self) -> W.Widget:
        style = W.HTML(figures.CSS + APP_CSS)
        toolbar = W.HBox([self.pin, self.upload], layout=W.Layout(flex_flow="row wrap"))
        toolbar.add_class("aiplan-toolbar")
        top = W.HBox([W.VBox([self.header], layout=W.Layout(flex="1 1 0", min_width="0")), toolbar],
                     layout=W.Layout(justify_content="space-between", align_items="flex-start"))
        charts = W.HBox([p.view for p in self.panes], layout=W.Layout(flex_flow="row wrap", width="100%"))
        self.results_box = W.VBox([self.figures, charts])
        self.results_box.add_class("aiplan-results")
        main = W.VBox([self.banner_row, self.problems, self.results_box,
                       W.HTML('<div class="aiplan-section-title">Findings</div>'), self.findings, self.assumptions,
                       self.board.view,
                       W.HTML('<div class="aiplan-section-title">Options: every GPU, offer and pricing</div>'),
                       self.options.view, self.downloads])
        main.add_class("aiplan-main")
        side = W.VBox([self.controls.view])
        side.add_class("aiplan-sidebar")
        app = W.VBox([style, self.ready, top,
                      W.HBox([side, main], layout=W.Layout(width="100%", align_items="flex-start"))],
                     layout=W.Layout(width="100%"))
        app.add_class("aiplan-app")
        return app

    # --- behaviour --------------------------------------------------------------

    def page_ready(self) -> None:
        """The page shows the app: add the chart widgets (what :class:`~aiplan.ui.dom.PageReady` calls)."""
        for pane in self.panes:
            pane.attach()

    def _on_control(self, path: str) -> None:
        if path in ("workload.kind", "plan"):
            kind = (self.controls.plan_dict().get("workload") or {}).get("kind", "pretrain")
            self.panes[0].result = None  # the headline follows the workload, drawn once evaluated
            self.panes[0].show(HEADLINES.get(kind, ""))
        self.recompute()

    def recompute(self) -> None:
        """Evaluate the plan in the controls and redraw every result view, key figures first."""
        start = time.perf_counter()
        try:
            result = evaluate(self.controls.plan_dict(), self.controls.catalog)
        except Exception as exc:  # a PlanError, or a bug: one readable message, never a traceback
            self.error = exc if isinstance(exc, PlanError) else \
                PlanError(f"internal error: {type(exc).__name__}: {exc}")
            self.problems.value = figures.error_html(self.error)
            self.results_box.add_class("aiplan-stale")
            self.controls.mark_invalid({getattr(p, "path", "") for p in self.error.problems})
            self._pin_state()
            self.last_update_s = time.perf_counter() - start
            return
        self.error = None
        self.result = result
        self.figures.value = figures.key_figures_html(result)
        self.results_box.remove_class("aiplan-stale")
        self.problems.value = ""
        self.controls.mark_invalid(set())
        self.header.value = self._header_html()
        self._show_banner(result)
        for pane in self.panes:
            pane.update(result)
        self.controls.sync(result["plan"])
        self.findings.value = figures.findings_html(result.get("checks"))
        self._show_assumptions()
        self._placeholders(result)
        self.downloads.value = self._downloads_html(result)
        self._pin_state()
        self.last_update_s = time.perf_counter() - start

    def _show_assumptions(self) -> None:
        """Fill the assumptions table when it is open (it follows every change while open)."""
        if self.assumptions.selected_index is not None and self.result is not None:
            self.assumed.value = figures.assumptions_html(self.result, self.controls.plan_dict())

    def _show_banner(self, result: Mapping) -> None:
        self.fix = suggest_fix(self.controls.plan_dict(), result, self.controls.catalog) if problems(result) \
            else None
        self.banner.value = figures.banner_html(result, self.fix)
        self.apply_fix.disabled = not (self.fix and self.fix.applicable)
        self.apply_fix.layout.display = None if self.fix and self.fix.applicable else "none"
        self.apply_fix.hint = self.fix.label if self.fix else ""
        self.banner_row.layout.display = None if self.banner.value else "none"

    def apply_suggested_fix(self) -> None:
        """Apply the banner's suggested fix to the plan (what the ``aiplan-apply-fix`` button does)."""
        if self.fix and self.fix.applicable:
            self.controls.apply(self.fix.overrides)

    def pin_scenario(self) -> bool:
        """Add the plan on screen to the scenarios (what the ``aiplan-pin`` button does)."""
        if self.result is None or self.error is not None:
            return False
        return self.board.add(self.controls.plan_name, self.controls.plan_dict(), self.result)

    def _pin_state(self) -> None:
        self.pin.disabled = self.board.full or self.error is not None

    def _placeholders(self, result: Mapping) -> None:
        raw = self.controls.plan_dict()
        for path, (section, key) in AUTO_PLACEHOLDERS.items():
            s, k = path.split(".")
            widget = self.controls.widgets[path]
            if k in (raw.get(s) or {}):
                continue
            value = get_path(result, f"{section}.{key}")
            if not isinstance(value, (int, float)):
                placeholder = "auto"
            else:
                placeholder = f"auto ({value:.0%})" if self.controls.specs[path].fmt == "pct" else f"auto ({value:,g})"
            if widget.placeholder != placeholder:
                widget.placeholder = placeholder

    def downloads_content(self, result: Mapping | None = None) -> dict[str, tuple[str, str, str, str]]:
        """The downloads: DOM id -> (file name, text, MIME type, link text); names follow the plan."""
        result = result or self.result or {}
        name = slug(self.controls.plan_name)
        return {
            "aiplan-save-yaml": (f"{name}.yaml", dump_plan(self.controls.plan_dict(), rounded=True),
                                 "application/x-yaml", "Save plan (YAML)"),
            "aiplan-save-filled": (f"{name}-filled.yaml", dump_plan(result.get("plan") or {}, rounded=True),
                                   "application/x-yaml", "Plan with every default (YAML)"),
            "aiplan-download-json": (f"{name}-result.json", result_json(result), "application/json",
                                     "Result (JSON)"),
            "aiplan-download-csv": (f"{name}-result.csv", result_csv(result), "text/csv", "Result (CSV)"),
        }

    def _downloads_html(self, result: Mapping) -> str:
        links = [download_link(text, filename, mime, label, dom_id)
                 for dom_id, (filename, text, mime, label) in self.downloads_content(result).items()]
        return '<div class="aiplan-section-title">Download</div>' + " ".join(links)

    def _on_upload(self, change) -> None:
        files = change["new"]
        if not files:
            return
        item = files[0] if isinstance(files, (list, tuple)) else next(iter(files.values()))
        text = bytes(item["content"]).decode("utf-8", errors="replace")
        self.load_text(text, source=str(item.get("name") or "plan file"))
        self.upload.value = ()  # the same file loaded again reloads it

    def load_text(self, text: str, source: str = "plan file") -> None:
        """Load a plan from YAML text (what the upload button does)."""
        try:
            data = parse_yaml(text, source)
        except PlanError as exc:
            self.error = exc
            self.problems.value = figures.error_html(exc)
            return
        if not isinstance(data, dict):
            self.error = PlanError(f"{source}: must be a mapping with sections model, workload, cluster, ...")
            self.problems.value = figures.error_html(self.error)
            return
        self.controls.set_plan(data, source=source)

    def save(self, path: str) -> str:
        """Write the current plan (explicit fields, rounded as typed) to a YAML file; returns the path."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(dump_plan(self.controls.plan_dict(), rounded=True))
        return path

    # --- headless display ---------------------------------------------------------

    def show_static(self, chart_names: Sequence[str] | None = None) -> None:
        """Display key figures, findings and charts as plain outputs (visible headless and in reports).

        The first output carries the key results in its metadata (:func:`aiplan.report.output_metadata`),
        which a reader never sees and a regression run reads.
        """
        from IPython.display import HTML, Markdown, display

        if self.error is not None:
            display(HTML(figures.error_html(self.error)))
            return
        display(HTML(figures.CSS + figures.banner_html(self.result, self.fix) +
                     figures.key_figures_html(self.result)), metadata=output_metadata(self.result, self.title))
        display(HTML(figures.findings_html(self.result.get("checks"))))
        display(Markdown(figures.summary_markdown(self.result)))
        with alt.renderers.enable("svg"):  # static and offline, whatever the notebook's renderer
            for name in chart_names or [p.name for p in self.panes]:
                display(build_chart(name, self.result))
