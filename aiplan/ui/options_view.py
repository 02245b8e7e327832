"""The planner's "Options" view: the options explorer's ranked table and its time-versus-cost chart.

A click on a row loads that option (GPU, server or cloud offer, pricing) into the planner. The
ranking runs on request (``aiplan-options-run``): it sizes every catalog GPU, so it takes a
second, too long to redo on every keystroke. The table is a small anywidget so each row has a
stable DOM id (``aiplan-option-<rank>``) for the browser tests.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable, Mapping
from typing import Any

import anywidget
import ipywidgets as W
import traitlets

from ..analysis.options import are_serving, explore, figure_cells, is_plans_own, plans_own_option
from ..core.errors import PlanError
from ..cost import PRICING_LABELS
from ..plan import load_plan
from ..present.charts import pareto_chart
from .dom import ActionButton

#: rows the table shows (the chart draws the same ones)
SHOWN = 12
#: plan fields an option sets; layout fields are cleared so the kit re-plans them for the new GPU
LAYOUT_FIELDS = ("cluster.gpus_per_node", "cluster.tensor_parallel", "cluster.pipeline_parallel",
                 "cluster.data_parallel", "cluster.expert_parallel", "cluster.fabric_switch", "cluster.fabric_radix")

_ESM = """
function render({ model, el }) {
  const draw = () => {
    const rows = model.get("rows");
    const head = model.get("header");
    el.innerHTML = "";
    const table = document.createElement("table");
    table.id = "aiplan-options";
    table.className = "aiplan-options-table";
    const tr = document.createElement("tr");
    for (const h of head) { const th = document.createElement("th"); th.textContent = h; tr.appendChild(th); }
    table.appendChild(tr);
    for (const row of rows) {
      const r = document.createElement("tr");
      r.id = "aiplan-option-" + row.rank;
      r.className = "aiplan-option" + (row.current ? " aiplan-option-current" : "");
      r.title = "Load this option into the planner";
      for (const cell of row.cells) {
        const td = document.createElement("td"); td.textContent = cell; r.appendChild(td);
      }
      r.addEventListener("click", () => { model.set("picked", row.rank); model.save_changes(); });
      table.appendChild(r);
    }
    el.appendChild(table);
  };
  draw();
  model.on("change:rows", draw);
}
export default { render };
"""


class OptionsTable(anywidget.AnyWidget):
    """A clickable table: ``rows`` of ``{rank, cells, current}``; a click sets ``picked`` to the rank."""

    _esm = _ESM
    header = traitlets.List([]).tag(sync=True)
    rows = traitlets.List([]).tag(sync=True)
    picked = traitlets.Int(0).tag(sync=True)


def option_overrides(row: Mapping[str, Any], plan: Mapping[str, Any]) -> dict[str, Any]:
    """The plan field changes that load ``row`` (an options-explorer row) into the planner.

    The GPU and the way of paying for it; with a deadline the kit sizes the GPU count again, else
    the option's count is kept. Layout fields are cleared for the new GPU.
    """
    out: dict[str, Any] = dict.fromkeys(LAYOUT_FIELDS)
    out["cluster.gpu"] = row["gpu"]
    deadline = (plan.get("cluster") or {}).get("deadline_days")
    out["cluster.gpus"] = None if deadline else row["gpus"]
    if row["pricing"] == "buy":
        out.update({"facility.server": row["offer"], "cost.cloud": None})
    else:
        out.update({"facility.server": None, "cost.cloud": row["offer"], "cost.pricing": row["pricing"]})
    return out


def _cells(r: Mapping[str, Any], serving: bool) -> list[str]:
    return [str(r["rank"]), r["gpu_name"], r.get("offer_name") or "", PRICING_LABELS.get(r["pricing"], r["pricing"]),
            *figure_cells(r, serving)]


class OptionsView:
    """Ranked options for the plan on screen; a click loads one.

    Parameters
    ----------
    plan : callable
        returns the plan dict on screen.
    apply : callable
        takes plan field overrides (``{"cluster.gpu": "h200", ...}``) and applies them.
    catalog : Catalog, optional
    """

    def __init__(self, plan: Callable[[], dict], apply: Callable[[Mapping[str, Any]], None], catalog=None):
        self._plan, self._apply, self.catalog = plan, apply, catalog
        self.rows: list[dict] = []
        self.by = W.Dropdown(options=[("cost", "cost"), ("days", "days"), ("CO₂", "co2")], value="cost",
                             description="Rank by", layout=W.Layout(width="170px"))
        self.run_button = ActionButton(label="Rank every option", dom_id="aiplan-options-run",
                                       hint="Size every catalog GPU for this plan and price it every published way")
        self.run_button.on_click(self.run)
        self.status = W.HTML("")
        self.table = OptionsTable()
        self.table.observe(self._on_pick, names="picked")
        self.chart = W.HTML("")
        self.view = W.VBox([W.HBox([self.run_button, self.by, self.status], layout=W.Layout(align_items="center")),
                            self.table, self.chart])
        self.view.add_class("aiplan-options")

    def run(self) -> list[dict]:
        """Rank the options for the plan on screen and show the best :data:`SHOWN` and their chart."""
        start = time.perf_counter()
        plan = self._plan()
        try:
            rows = explore(plan, self.catalog, by=self.by.value)
        except PlanError as exc:
            self.status.value = f"<span class='aiplan-na'>{html.escape('; '.join(exc.lines()))}</span>"
            return []
        self.rows = rows
        ranked = [r for r in rows if not r["excluded"]]
        serving = are_serving(ranked)
        cluster = plan.get("cluster") or {}
        current = plans_own_option(load_plan(plan, self.catalog))
        self.table.header = (["#", "GPU", "Offer", "Pricing", "GPUs", "Layout", "Per month", "Per million tokens"]
                             if serving else
                             ["#", "GPU", "Offer", "Pricing", "GPUs", "Days P10–P90", "Run cost P10–P90",
                              "Deadline odds"])
        self.table.rows = [{"rank": r["rank"], "cells": _cells(r, serving),
                            "current": is_plans_own(r, current)} for r in ranked[:SHOWN]]
        self.chart.value = _svg(pareto_chart(ranked[:SHOWN], cluster.get("deadline_days"), width=520, height=260))
        self.status.value = (f"{len(ranked)} of {len(rows)} options can run this plan with a published price "
                             f"({time.perf_counter() - start:.1f} s). Click a row to load it.")
        return rows

    def pick(self, rank: int) -> None:
        """Load the option ranked ``rank`` into the planner (what a click on its row does)."""
        row = next((r for r in self.rows if r["rank"] == rank), None)
        if row is not None:
            self._apply(option_overrides(row, self._plan()))

    def _on_pick(self, change) -> None:
        if change["new"]:
            self.pick(change["new"])
            self.table.picked = 0


def _svg(chart) -> str:
    """The chart as inline SVG (offline, drawn by vl-convert)."""
    import vl_convert as vlc

    return f"<div class='aiplan-options-chart'>{vlc.vegalite_to_svg(chart.to_json())}</div>"
