"""ipywidgets panels bound to ``plan -> result`` (no formulas here).

- :class:`PlannerApp`: the whole planner (controls, key figures, findings, charts).
- :func:`step_app`: the same app narrowed to one step (model, cluster, facility, cost).
- :class:`CompareApp`: two to four saved plans side by side.
- :class:`PlanControls`: the plan's widgets, generated from the plan schema and catalog.
- :class:`StartHere`: the "start here" guide: a plan picker, a few controls, the four steps.
"""

from ..present import charts as _charts  # noqa: F401  (first: it trims altair's import time, see charts.py)
from .app import PANE_A, PANE_B, ChartPane, PlannerApp, build_chart
from .compare import CompareApp, compare
from .controls import PlanControls, find_presets
from .start import StartHere

#: per-step apps: sections shown and chart panes
STEPS = {
    "model": (("workload", "cluster"), [{"Memory": "memory", "Time and run cost vs GPUs": "training_sweep"},
                                        {"Replicas vs load": "inference_sweep", "Layouts": "layout"}]),
    "cluster": (("workload", "cluster"), [{"Layouts": "layout", "Memory": "memory"},
                                          {"Time and run cost vs GPUs": "training_sweep",
                                           "Replicas vs load": "inference_sweep"}]),
    "facility": (("cluster", "facility"), [{"Facility": "facility"}, {"Growth": "growth"}]),
    "cost": (("cluster", "cost", "facility"), [{"Cumulative cost": "cumulative_cost",
                                                "Cost vs utilisation": "utilisation"},
                                               {"What moves the cost": "sensitivity"}]),
}
#: the title of each step's app
STEP_TITLES = {"model": "Step 1, the model: memory and compute", "cluster": "Step 2, the cluster: layout and time",
               "facility": "Step 3, the facility: power and racks", "cost": "Step 4, the cost: renting or owning"}


def step_app(step: str, plan=None, catalog=None) -> PlannerApp:
    """A :class:`PlannerApp` showing one step's controls and charts (``model|cluster|facility|cost``)."""
    sections, panes = STEPS[step]
    return PlannerApp(plan, catalog=catalog, sections=sections, panes=panes, title=STEP_TITLES[step])


__all__ = ["CompareApp", "ChartPane", "PANE_A", "PANE_B", "PlanControls", "PlannerApp", "STEPS", "StartHere",
           "build_chart", "compare", "find_presets", "step_app"]
