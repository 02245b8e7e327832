"""The planner app: plan controls on the left; the answer, the problems, charts and scenarios on the right.

``PlannerApp`` wires :class:`~aiplan.ui.controls.PlanControls` to :func:`aiplan.evaluate` (the
only computation) and shows the result, the client's question first: the cards of
:mod:`aiplan.ui.figures` (the recommendation, this run or the service, memory and facility, then
keeping the cluster for years), a banner
(DOM id ``aiplan-banner``) when the plan cannot work, with up to three fixes to choose from
(:func:`aiplan.analysis.fixes.suggest_fixes`; buttons ``aiplan-apply-fix``, ``aiplan-apply-fix-2``,
``aiplan-apply-fix-3``), a line saying what a fix or a loaded option changed with an undo
(``aiplan-notice``, ``aiplan-undo``), the headline chart beside a chart of choice (the charts of
the workload in view only), the findings grouped by severity, the pinned scenarios (``aiplan-pin``,
``aiplan-scenarios``), the options (re-ranked on "Rank by", marked out of date when the plan
changes) and the deliverables: the client report as ``aiplan report`` writes it (HTML, PDF,
workbook) and the plan and result files.
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

from ..analysis.fixes import Fix, changed_fields, suggest_fixes
from ..core.errors import PlanError
from ..core.fields import get_path
from ..core.inputs import parse_yaml
from ..pipeline import evaluate
from ..plan import dump_plan
from ..present import charts as C
from ..report.sidecar import output_metadata
from . import deliverables, figures
from ._util import download_link, result_json, slug
from .compare import ScenarioBoard
from .controls import PlanControls
from .dom import ActionButton, FileButton, PageReady, PlanUpload
from .options_view import LAYOUT_FIELDS, OptionsView

#: chart panes: label -> chart name in aiplan.present.charts (RESULT_CHARTS or SWEEP_CHARTS); the first pane's
#: first two are the headlines of a training and a serving plan
PANE_A = {"Time and run cost vs GPUs": "training_sweep", "Replicas vs load": "inference_sweep", "Memory": "memory",
          "Layouts": "layout"}
PANE_B = {"Cumulative cost": "cumulative_cost", "By utilisation": "utilisation", "Cost drivers": "sensitivity",
          "Facility": "facility", "Growth": "growth"}
HEADLINES = {"inference": "Replicas vs load", "pretrain": "Time and run cost vs GPUs",
             "finetune": "Time and run cost vs GPUs"}
#: charts of one workload only (a serving plan shows no training chart and the other way round)
WORKLOAD_CHARTS = {"training_sweep": ("pretrain", "finetune"), "layout": ("pretrain", "finetune"),
                   "inference_sweep": ("inference",)}
#: suggested fixes shown, each with its button
FIX_CHOICES = 3
#: the deliverables: DOM id -> (button label, what ``aiplan report`` writes)
REPORTS = {"aiplan-report-html": ("Client report (HTML)", "html"), "aiplan-report-pdf": ("Client report (PDF)", "pdf"),
           "aiplan-report-xlsx": ("Workbook (Excel)", "xlsx")}
AUTO_PLACEHOLDERS = {"cluster.gpus": ("cluster", "gpus"), "cluster.tensor_parallel": ("cluster", "tensor_parallel"),
                     "cluster.pipeline_parallel": ("cluster", "pipeline_parallel"),
                     "cluster.data_parallel": ("cluster", "data_parallel"),
                     "cluster.zero_stage": ("cluster", "zero_stage"), "cluster.mfu": ("compute", "mfu"),
                     "cost.network_cost_fraction": ("cost", "network_cost_fraction")}
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
.aiplan-options-table td:nth-child(2), .aiplan-options-table td:nth-child(3) {white-space: normal; max-width: 220px;}
.aiplan-options-table th {white-space: normal;}
.aiplan-options-table td:nth-child(6), .aiplan-options-table td:last-child {white-space: normal; max-width: 130px;}
.aiplan-options-stale {opacity: 0.45; filter: grayscale(70%);}
.aiplan-options-stale .aiplan-option {cursor: not-allowed;}
.aiplan-stale-note {color: #8e3b00; font-weight: 600; font-size: 13px;}
.aiplan-app .aiplan-options .widget-html, .aiplan-app .aiplan-options .widget-html-content {white-space: normal;
                                                                                           height: auto;}
.aiplan-app .aiplan-fix-row {gap: 8px; margin: 2px 0 2px 10px;}
.aiplan-app .aiplan-fix-row .widget-html-content, .aiplan-app .aiplan-notice-row .widget-html-content
    {white-space: normal; line-height: 1.35;}
.aiplan-app .aiplan-notice-row {gap: 10px; margin-bottom: 6px;}
.aiplan-app .aiplan-report-status {margin-left: 6px;}
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
        self.options = dict(options)  # every chart the pane offers; :meth:`follow` shows those of a workload
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

    def follow(self, kind: str) -> None:
        """Offer only the charts of workload ``kind`` (:data:`WORKLOAD_CHARTS`); the chart on show stays if it can."""
        shown = [label for label, name in self.options.items() if kind in WORKLOAD_CHARTS.get(name, (kind,))]
        if list(self.selector.options) != shown and shown:
            current = self.selector.value
            self.selector.options = shown
            self.selector.value = current if current in shown else shown[0]

    def show(self, label: str) -> None:
        """Put the chart ``label`` on show (redraws it)."""
        if label in self.selector.options and self.selector.value != label:
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
        self.fixes: list[Fix] = []
        self.history: list[tuple[dict, bool]] = []  # (plan, edited) before each fix or loaded option, for "Undo"
        self.last_update_s = 0.0
        self.last_figures_s = 0.0
        self.title = title
        self.header = W.HTML("")
        self.figures = W.HTML(figures.key_figures_html(None))
        self.figures.add_class("aiplan-figures")
        self.banner = W.HTML("")
        self.fix_buttons = [ActionButton(label="Apply", dom_id="aiplan-apply-fix" + (f"-{i + 1}" if i else ""),
                                         kind="primary") for i in range(FIX_CHOICES)]
        self.fix_texts = [W.HTML("") for _ in range(FIX_CHOICES)]
        self.fix_rows = []
        for i, (button, text) in enumerate(zip(self.fix_buttons, self.fix_texts)):
            button.on_click(lambda i=i: self.apply_fix_choice(i))
            row = W.HBox([button, text], layout=W.Layout(display="none", align_items="center"))
            row.add_class("aiplan-fix-row")
            self.fix_rows.append(row)
        self.apply_fix = self.fix_buttons[0]
        self.banner_row = W.VBox([self.banner, *self.fix_rows], layout=W.Layout(display="none"))
        self.banner_row.add_class("aiplan-banner-row")
        self.notice = W.HTML("")
        self.undo = ActionButton(label="Undo", dom_id="aiplan-undo", hint="Put the plan back as it was before")
        self.undo.on_click(self.undo_change)
        self.notice_row = W.HBox([self.notice, self.undo], layout=W.Layout(display="none", align_items="center"))
        self.notice_row.add_class("aiplan-notice-row")
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
        self.options = OptionsView(self.controls.plan_dict, self._load_option, self.controls.catalog)
        self.pin = ActionButton(label="Pin as scenario", dom_id="aiplan-pin",
                                hint="Add the plan on screen to the scenarios below (up to 4)")
        self.pin.on_click(self.pin_scenario)
        self.upload = PlanUpload(on_file=lambda name, text: self.load_text(text, source=name))
        self.downloads = W.HTML("")
        self.downloads.add_class("aiplan-downloads")
        self.report_status = W.HTML("")
        self.report_status.add_class("aiplan-report-status")
        self.report_buttons = {dom_id: FileButton(lambda what=what: self.report_file(what), self._report_done,
                                                  label=label, dom_id=dom_id, busy_label="Writing the report…",
                                                  hint="The client report, as the aiplan report command writes it")
                               for dom_id, (label, what) in REPORTS.items()}
        if not deliverables.has_chromium():
            pdf = self.report_buttons["aiplan-report-pdf"]
            pdf.disabled, pdf.hint = True, deliverables.NO_CHROMIUM
            self.report_status.value = f'<span class="aiplan-note">{html.escape(deliverables.NO_CHROMIUM)}</span>'
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
        reports = W.HBox(list(self.report_buttons.values()) + [self.report_status],
                         layout=W.Layout(flex_flow="row wrap", align_items="center"))
        reports.add_class("aiplan-toolbar")
        main = W.VBox([self.notice_row, self.banner_row, self.problems, self.results_box,
                       W.HTML('<div class="aiplan-section-title">Findings</div>'), self.findings, self.assumptions,
                       self.board.view,
                       W.HTML('<div class="aiplan-section-title">Options: every GPU, offer and pricing</div>'),
                       self.options.view,
                       W.HTML('<div class="aiplan-section-title">The client report</div>'), reports, self.downloads])
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

    @property
    def fix(self) -> Fix | None:
        """The first suggested fix (the ``aiplan-apply-fix`` button's), or None."""
        return self.fixes[0] if self.fixes else None

    def _on_control(self, path: str) -> None:
        if path not in ("fix", "option", "undo"):  # the user's own change: what a fix did is no longer undone
            self.history.clear()
            self.notice_row.layout.display = "none"
        if path in ("workload.kind", "plan"):
            kind = (self.controls.plan_dict().get("workload") or {}).get("kind", "pretrain")
            self.panes[0].result = None  # the headline follows the workload, drawn once evaluated
            self.panes[0].follow(kind)
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
        if self.controls.follow_name(result):  # the name follows the plan (its GPU count is known now)
            result["plan"]["name"] = self.controls.plan_name
        self.result = result
        self.figures.value = figures.key_figures_html(result)
        self.last_figures_s = time.perf_counter() - start  # the key figures are on their way to the page
        self.results_box.remove_class("aiplan-stale")
        self.problems.value = ""
        self.controls.mark_invalid(set())
        self.header.value = self._header_html()
        self._show_banner(result)
        kind = get_path(result, "plan.workload.kind") or "pretrain"
        for pane in self.panes:
            pane.result = None
            pane.follow(kind)
            pane.update(result)
        self.controls.sync(result["plan"])
        self.findings.value = figures.findings_html(result.get("checks"))
        self._show_assumptions()
        self._placeholders(result)
        self.downloads.value = self._downloads_html(result)
        self.options.plan_changed(self.controls.plan_dict(), result)
        self._pin_state()
        self._show_fixes(result)
        self.last_update_s = time.perf_counter() - start

    def _show_assumptions(self) -> None:
        """Fill the assumptions table when it is open (it follows every change while open)."""
        if self.assumptions.selected_index is not None and self.result is not None:
            self.assumed.value = figures.assumptions_html(self.result, self.controls.plan_dict())

    def _show_banner(self, result: Mapping) -> None:
        """The problems at once; the fixes to choose from (each checked by evaluating the plan again) come last
        (:meth:`_show_fixes`), after the charts and the findings."""
        self.fixes = []
        self.banner.value = figures.banner_html(result, None, choices=False)
        for row in self.fix_rows:
            row.layout.display = "none"
        self.banner_row.layout.display = None if self.banner.value else "none"

    def _show_fixes(self, result: Mapping) -> None:
        if not self.banner.value:
            return
        self.fixes = suggest_fixes(self.controls.plan_dict(), result, self.controls.catalog)
        self.banner.value = figures.banner_html(result, self.fixes, choices=False)
        applicable = [f for f in self.fixes if f.applicable]
        for i, (row, button, text) in enumerate(zip(self.fix_rows, self.fix_buttons, self.fix_texts)):
            fix = applicable[i] if i < len(applicable) else None
            button.disabled = fix is None
            button.hint = fix.label if fix else ""
            text.value = figures.fix_html(fix, self.controls.catalog) if fix else ""
            row.layout.display = None if fix else "none"
        self.banner_row.layout.display = None if self.banner.value else "none"

    def apply_fix_choice(self, index: int) -> None:
        """Apply the suggested fix ``index`` (0: the first; what the ``aiplan-apply-fix[-n]`` buttons do)."""
        applicable = [f for f in self.fixes if f.applicable]
        if index < len(applicable):
            fix = applicable[index]
            self._change(fix.overrides, "fix", f"Applied: {fix.label}.", fix.changes)

    def apply_suggested_fix(self) -> None:
        """Apply the first suggested fix."""
        self.apply_fix_choice(0)

    def _load_option(self, overrides: Mapping[str, Any], row: Mapping[str, Any]) -> str:
        """Load an option of the options table (what a click on its row does); returns the confirmation line."""
        before = self.result
        self._change(overrides, "option", "", ())
        if self.error is not None or self.result is None:
            return ""
        gpus = get_path(self.result, "inference.gpus") or get_path(self.result, "cluster.gpus")
        what = (f"Loaded option {row['rank']}: {figures.fmt(gpus, 'count')} × {row['gpu_name']}, "
                f"{row.get('offer_name') or ''}, "
                f"{figures.plan_value_text('cost.pricing', row['pricing'])}.")
        paths = [p for p in overrides if p not in LAYOUT_FIELDS]
        changes = changed_fields(before, self.result, paths) if before else ()
        self._show_notice(what, changes)
        return what

    def _change(self, overrides: Mapping[str, Any], why: str, what: str,
                changes: Sequence[tuple[str, Any, Any]]) -> None:
        """Change the plan for a fix or an option, remembering the plan before for "Undo"."""
        self.history.append((self.controls.plan_dict(), self.controls.modified))
        self.controls.apply(overrides, why)
        if what:
            self._show_notice(what, changes)

    def _show_notice(self, what: str, changes: Sequence[tuple[str, Any, Any]] = ()) -> None:
        changed = figures.changes_text(changes, self.controls.catalog)
        self.notice.value = (f'<div id="aiplan-notice" class="aiplan-notice">{html.escape(what)}'
                             + (f" Changed {html.escape(changed)}." if changed else "") + "</div>")
        self.undo.disabled = not self.history
        self.undo.layout.display = None if self.history else "none"
        self.notice_row.layout.display = None

    def undo_change(self) -> None:
        """Put back the plan before the last fix or loaded option (what ``aiplan-undo`` does)."""
        if self.history:
            plan, modified = self.history.pop()
            self.controls.restore(plan, "undo", modified)
            self._show_notice("Undone: the plan is back as it was before.")

    def report_file(self, what: str) -> tuple[str, bytes, str]:
        """The client report of the plan on screen as ``aiplan report`` writes it (``html``, ``pdf``, ``xlsx``)."""
        if self.error is not None:
            raise ValueError("The plan on screen is not valid: correct it first.")
        return deliverables.report_file(self.controls.plan_dict(), slug(self.controls.plan_name), what,
                                        self.controls.base_dir)

    def _report_done(self, message: str) -> None:
        self.report_status.value = f'<span id="aiplan-report-done" class="aiplan-note">{html.escape(message)}</span>'

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
            "aiplan-download-csv": (f"{name}-result.csv", deliverables.result_csv(result), "text/csv",
                                    "Result (CSV)"),
        }

    def _downloads_html(self, result: Mapping) -> str:
        links = [download_link(text, filename, mime, label, dom_id)
                 for dom_id, (filename, text, mime, label) in self.downloads_content(result).items()]
        return '<div class="aiplan-section-title">Download</div>' + " ".join(links)

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
        display(HTML(figures.CSS + figures.banner_html(self.result, self.fixes, catalog=self.controls.catalog) +
                     figures.key_figures_html(self.result)), metadata=output_metadata(self.result, self.title))
        display(HTML(figures.findings_html(self.result.get("checks"))))
        display(Markdown(figures.summary_markdown(self.result)))
        with alt.renderers.enable("svg"):  # static and offline, whatever the notebook's renderer
            for name in chart_names or [p.name for p in self.panes]:
                display(build_chart(name, self.result))
