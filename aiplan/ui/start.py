"""The "start here" guide: one plan walked through the four steps, with a plan picker and a few controls, so a
client changes the plan without touching code.

``StartHere(plan)`` holds the plan; :attr:`StartHere.view` is the picker (the example plans), the model,
the GPU and the GPU count, and the answer's key figures; :meth:`StartHere.step` gives one step's
figures (the rule of thumb beside the detailed model) and charts, :meth:`StartHere.findings` the
findings; every one of them follows the controls. :meth:`StartHere.show_static` shows the same as
plain outputs for a printout, and carries the key results in its first output's metadata (what a
regression run reads; a reader never sees it).
"""

from __future__ import annotations

import copy
import html
from collections.abc import Mapping
from typing import Any

import altair as alt
import ipywidgets as W

from ..core.catalog import load_catalog
from ..core.errors import PlanError
from ..pipeline import evaluate
from ..plan import plan_as_data
from ..present import charts as C
from ..report.sidecar import output_metadata
from . import figures
from .controls import find_presets, gpu_short_name, parse_number_text

#: the charts of each step, by workload
STEP_CHARTS = {"model": {"training": ("memory",), "inference": ("memory",)},
               "cluster": {"training": ("training_sweep",), "inference": ("inference_sweep",)},
               "facility": {"training": ("facility",), "inference": ("facility",)},
               "cost": {"training": ("cumulative_cost", "sensitivity"),
                        "inference": ("cumulative_cost", "sensitivity")}}
STEPS = tuple(STEP_CHARTS)
#: fields a change of GPU hands back to the kit (a server or offer of another GPU is not a plan)
GPU_FOLLOWERS = (("facility", "server"), ("cost", "cloud"), ("cluster", "gpus_per_node"),
                 ("cluster", "tensor_parallel"), ("cluster", "pipeline_parallel"), ("cluster", "data_parallel"))


class StartHere:
    """The guide's plan, controls and views (see the module docstring)."""

    def __init__(self, plan: Any = None, presets: Mapping[str, str] | None = None):
        C.use_offline(svg=False)
        self.catalog = load_catalog()
        self.presets = dict(find_presets() if presets is None else presets)
        self.raw: dict = {}
        self.result: dict | None = None
        style = {"description_width": "70px"}
        wide = W.Layout(width="340px")
        self.picker = W.Dropdown(description="Plan", options=list(self.presets.items()), style=style, layout=wide)
        self.model = W.Dropdown(description="Model", options=[(m.name, mid) for mid, m in self.catalog.models.items()],
                                style=style, layout=wide)
        self.gpu = W.Dropdown(description="GPU", options=[(g.name, gid) for gid, g in self.catalog.gpus.items()
                                                          if g.default_server], style=style, layout=wide)
        self.gpus = W.Text(description="GPUs", placeholder="auto", continuous_update=False, style=style,
                           layout=W.Layout(width="200px"))
        self.title = W.HTML()
        self.summary = W.HTML()
        self.problem = W.HTML()
        self.tables = {step: W.Output() for step in STEPS}
        self.charts = {step: [] for step in STEPS}
        self.boxes = {step: W.VBox([self.tables[step]]) for step in STEPS}
        self.findings_box = W.HTML()
        self._quiet = False
        for widget, handler in ((self.picker, self._on_pick), (self.model, self._on_model), (self.gpu, self._on_gpu),
                                (self.gpus, self._on_gpus)):
            widget.observe(handler, names="value")
        controls = W.VBox([W.HBox([self.picker, self.model], layout=W.Layout(flex_flow="row wrap")),
                           W.HBox([self.gpu, self.gpus], layout=W.Layout(flex_flow="row wrap"))])
        self.view = W.VBox([W.HTML(figures.CSS), self.title, controls, self.problem, self.summary])
        self.view.add_class("aiplan-app")
        self.load(plan if plan is not None else next(iter(self.presets.values())))

    # --- the plan -----------------------------------------------------------------------------------

    def load(self, plan: Any) -> None:
        """Start from a plan (a path, YAML text or a dict)."""
        data, _folder = plan_as_data(plan)
        self.raw = copy.deepcopy(data) if isinstance(data, dict) else {}
        path = str(plan) if isinstance(plan, str) else getattr(plan, "as_posix", lambda: "")()
        self._quiet = True
        try:
            match = [p for p in self.presets.values() if path and p.endswith(path.split("/")[-1])]
            if match:
                self.picker.value = match[0]
        finally:
            self._quiet = False
        self.recompute()

    def _set(self, section: str, key: str, value: Any) -> None:
        part = self.raw.setdefault(section, {})
        if value is None:
            part.pop(key, None)
        else:
            part[key] = value

    def _on_pick(self, change) -> None:
        if not self._quiet and change["new"]:
            self.load(change["new"])

    def _on_model(self, change) -> None:
        if not self._quiet:
            self.raw["model"] = change["new"]
            self.recompute()

    def _on_gpu(self, change) -> None:
        if not self._quiet:
            self._set("cluster", "gpu", change["new"])
            for section, key in GPU_FOLLOWERS:
                self._set(section, key, None)
            self.recompute()

    def _on_gpus(self, change) -> None:
        if self._quiet:
            return
        value = parse_number_text(change["new"])
        self._set("cluster", "gpus", value)
        if value is None and not (self.raw.get("cluster") or {}).get("deadline_days") \
                and (self.raw.get("workload") or {}).get("kind", "pretrain") != "inference":
            self._set("cluster", "deadline_days", 30.0)  # "auto" needs a deadline to size for (a month)
        self.recompute()

    # --- the views ------------------------------------------------------------------------------------

    def recompute(self) -> None:
        """Evaluate the plan and redraw every view."""
        try:
            result = evaluate(self.raw, self.catalog)
        except PlanError as exc:
            self.problem.value = figures.error_html(exc)
            return
        self.problem.value = figures.banner_html(result, None)
        self.result = result
        kind = "inference" if result["plan"]["workload"]["kind"] == "inference" else "training"
        gpus = (result.get("inference") or {}).get("gpus") or result["cluster"]["gpus"]
        gpu = gpu_short_name(self.catalog, result["plan"]["cluster"]["gpu"])
        self.title.value = (f'<div class="aiplan-title">{html.escape(str(result["plan"].get("name")))}</div>'
                            f'<div class="aiplan-subtitle">{html.escape(figures.question(result))}: '
                            f"{gpus:,} × {html.escape(gpu)}</div>")
        self.summary.value = figures.key_figures_html(result)
        self.findings_box.value = figures.findings_html(result.get("checks"))
        self._quiet = True
        try:
            self.model.value = result["plan"]["model"] if result["plan"]["model"] in self.catalog.models else None
            self.gpu.value = result["plan"]["cluster"]["gpu"]
            self.gpus.value = "" if "gpus" not in (self.raw.get("cluster") or {}) else str(result["cluster"]["gpus"])
            self.gpus.placeholder = f"auto ({result['cluster']['gpus']:,})"
        finally:
            self._quiet = False
        for step in STEPS:
            self._draw(step, kind)

    def _draw(self, step: str, kind: str) -> None:
        from IPython.display import Markdown, display

        out = self.tables[step]
        out.clear_output(wait=True)
        with out:
            display(Markdown(self.step_markdown(step)))
        names = STEP_CHARTS[step][kind]
        charts = self.charts[step]
        while len(charts) < len(names):
            chart = alt.JupyterChart(C.not_available("empty", "Chart", "waiting for a result"),
                                     embed_options={"renderer": "svg", "actions": False})
            charts.append(chart)
        for chart, name in zip(charts, names):
            with alt.utils.schemapi.debug_mode(False):
                chart.spec = _chart(name, self.result).to_dict(validate=False)
        self.boxes[step].children = [out, *charts[:len(names)]]

    def step_markdown(self, step: str) -> str:
        """One step's figures as Markdown (dollars escaped); the cost step adds the breakeven rule checked against
        every cloud price of the plan's GPU."""
        text = figures.step_markdown(self.result, step)
        if step == "cost":
            text += "\n\n" + figures.breakeven_claim_markdown(self.result["plan"]["cluster"]["gpu"], self.catalog)
        return text

    def step(self, step: str) -> W.Widget:
        """The view of one step (``model``, ``cluster``, ``facility`` or ``cost``): its figures and charts."""
        return self.boxes[step]

    def findings(self) -> W.Widget:
        """The findings of the plan, grouped by severity."""
        return self.findings_box

    def show_static(self) -> None:
        """Every view as plain outputs (a printout); the first output carries the key results in its metadata."""
        from IPython.display import HTML, Markdown, display

        if self.result is None:
            return
        kind = "inference" if self.result["plan"]["workload"]["kind"] == "inference" else "training"
        display(HTML(figures.CSS + figures.banner_html(self.result, None) + figures.key_figures_html(self.result)),
                metadata=output_metadata(self.result, "00_start_here"))
        with alt.renderers.enable("svg"):
            for step in STEPS:
                display(Markdown(f"**{step.title()}**\n\n" + self.step_markdown(step)))
                for name in STEP_CHARTS[step][kind]:
                    display(_chart(name, self.result))
        display(HTML(figures.findings_html(self.result.get("checks"))))


def _chart(name: str, result: Mapping) -> alt.TopLevelMixin:
    return C.RESULT_CHARTS[name](result) if name in C.RESULT_CHARTS else C.SWEEP_CHARTS[name](result)
