"""The planner's "Options" view: the options explorer's ranked table and its time-versus-cost chart.

A click on a row loads that option (GPU, server or cloud offer, pricing) into the planner and says
what it loaded (``aiplan-options-loaded``). The ranking runs on request (``aiplan-options-run``):
it sizes every catalog GPU, so it takes a second, too long to redo on every keystroke. It never
goes stale unseen: "Rank by" re-sorts the ranked options at once, and a change of the plan that
changes the options (the model, the workload, the deadline, the facility, ...; not the GPU, offer
or pricing an option itself sets) marks the table out of date (class ``aiplan-options-stale``,
rows no longer clickable) until "Re-rank". An offer the catalog lists at two dates is shown once,
at its newest price. The table is a small anywidget so each row has a stable DOM id
(``aiplan-option-<rank>``) for the browser tests.
"""

from __future__ import annotations

import copy
import html
import json
import time
from collections.abc import Callable, Mapping
from typing import Any

import altair as alt
import anywidget
import ipywidgets as W
import traitlets

from ..analysis.options import (
    SERVING_SORT_KEYS,
    are_serving,
    capacity_risk_text,
    excluded_summary,
    explore,
    figure_cells,
    have_odds,
    is_plans_own,
    rank,
)
from ..core.catalog import load_catalog
from ..core.errors import PlanError
from ..cost import PRICING_LABELS
from ..model import layout_legend
from ..present.charts import not_available, pareto_chart
from .controls import offer_name
from .dom import ActionButton

#: what the options can be ranked by: (label, ``by`` of :func:`~aiplan.analysis.options.explore`)
RANK_BY = (("cost", "cost"), ("days", "days"), ("CO₂", "co2"))
#: rows the table shows (the chart draws the same ones)
SHOWN = 12
#: plan fields an option sets; layout fields are cleared so the kit re-plans them for the new GPU
LAYOUT_FIELDS = ("cluster.gpus_per_node", "cluster.tensor_parallel", "cluster.pipeline_parallel",
                 "cluster.data_parallel", "cluster.expert_parallel", "cluster.fabric_switch", "cluster.fabric_radix")
#: plan fields that do not change the ranking: those an option sets, and the plan's words
NOT_RANKED = LAYOUT_FIELDS + ("cluster.gpu", "facility.server", "cost.cloud", "cost.pricing",
                              "cost.server_price_usd", "cost.cloud_usd_per_hr")

_ESM = """
function render({ model, el }) {
  const draw = () => {
    const rows = model.get("rows");
    const head = model.get("header");
    el.innerHTML = "";
    const table = document.createElement("table");
    const stale = model.get("stale");
    table.id = "aiplan-options";
    table.className = "aiplan-options-table" + (stale ? " aiplan-options-stale" : "");
    const tr = document.createElement("tr");
    for (const h of head) { const th = document.createElement("th"); th.textContent = h; tr.appendChild(th); }
    table.appendChild(tr);
    for (const row of rows) {
      const r = document.createElement("tr");
      r.id = "aiplan-option-" + row.rank;
      r.className = "aiplan-option" + (row.current ? " aiplan-option-current" : "");
      r.title = stale ? "Out of date: re-rank first" : "Load this option into the planner";
      for (const cell of row.cells) {
        const td = document.createElement("td"); td.textContent = cell; r.appendChild(td);
      }
      r.addEventListener("click", () => { if (model.get("stale")) return;
                                          model.set("picked", row.rank); model.save_changes(); });
      table.appendChild(r);
    }
    el.appendChild(table);
  };
  draw();
  model.on("change:rows", draw);
  model.on("change:stale", draw);
}
export default { render };
"""


class OptionsTable(anywidget.AnyWidget):
    """A clickable table: ``rows`` of ``{rank, cells, current}``; a click sets ``picked`` to the rank."""

    _esm = _ESM
    header = traitlets.List([]).tag(sync=True)
    rows = traitlets.List([]).tag(sync=True)
    picked = traitlets.Int(0).tag(sync=True)
    stale = traitlets.Bool(False).tag(sync=True)


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


def _cells(r: Mapping[str, Any], serving: bool, odds: bool = True) -> list[str]:
    return [str(r["rank"]), r["gpu_name"], r.get("offer_name") or "", PRICING_LABELS.get(r["pricing"], r["pricing"]),
            *figure_cells(r, serving, odds), capacity_risk_text(r)]


def excluded_html(rows: list[dict]) -> str:
    """Why options were not ranked, grouped by reason (``aiplan-options-excluded``); "" when none was."""
    groups = excluded_summary(rows)
    if not groups:
        return ""
    total = sum(1 for r in rows if r["excluded"])
    items = "".join(f"<li><b>{html.escape(g['reason'][:1].upper() + g['reason'][1:])}</b> "
                    f"({g['count']:,} option{'s' if g['count'] != 1 else ''}, e.g. "
                    f"{html.escape('; '.join(g['offers']))})</li>" for g in groups)
    return (f'<div id="aiplan-options-excluded" class="aiplan-note"><b>Not ranked: {total:,} options.</b> '
            f"Why:<ul>{items}</ul></div>")


def ranking_key(plan: Mapping[str, Any]) -> str:
    """What the ranking depends on: the plan without the fields an option sets (and without its GPU count
    when a deadline sizes it) and without its words."""
    data = copy.deepcopy(dict(plan))
    for key in ("name", "client", "prepared_by"):
        data.pop(key, None)
    fields = NOT_RANKED + (("cluster.gpus",) if (data.get("cluster") or {}).get("deadline_days") else ())
    for path in fields:
        section, key = path.split(".")
        (data.get(section) or {}).pop(key, None)
    return json.dumps(data, sort_keys=True, default=str)


def once_per_offer(rows: list[dict], catalog) -> list[dict]:
    """Each offer once: of two catalog rows with the same name (one offer priced at two dates) the newest;
    ``offer_name`` is the offer as a client reads it (:func:`~aiplan.ui.controls.offer_name`)."""
    clouds = catalog.clouds
    newest: dict[tuple, tuple[str, str]] = {}
    for r in rows:
        if r["offer"] in clouds:
            key = (r["gpu"], clouds[r["offer"]].name, r["pricing"])
            newest[key] = max(newest.get(key, ("", "")), (str(clouds[r["offer"]].as_of), r["offer"]))
    out = []
    for r in rows:
        offer = clouds.get(r["offer"]) if r["offer"] else None
        if offer is not None and newest[(r["gpu"], offer.name, r["pricing"])][1] != r["offer"]:
            continue
        out.append({**r, "offer_name": offer_name(offer) if offer is not None else r.get("offer_name")})
    return out


class OptionsView:
    """Ranked options for the plan on screen; a click loads one.

    Parameters
    ----------
    plan : callable
        returns the plan dict on screen.
    load : callable
        ``load(overrides, row)`` loads an option's plan field changes (``{"cluster.gpu": "h200", ...}``) and
        returns the line confirming what it loaded.
    catalog : Catalog, optional
    """

    def __init__(self, plan: Callable[[], dict], load: Callable[[Mapping[str, Any], Mapping[str, Any]], str],
                 catalog=None):
        self._plan, self._load, self.catalog = plan, load, catalog
        self.rows: list[dict] = []
        self.ranked_key: str | None = None
        self.last_table_s = 0.0
        self._current: tuple | None = None
        self.by = W.Dropdown(options=RANK_BY, value="cost", description="Rank by", layout=W.Layout(width="170px"))
        self.by.observe(lambda _change: self.rerank(), names="value")
        self.run_button = ActionButton(label="Rank every option", dom_id="aiplan-options-run",
                                       hint="Size every catalog GPU for this plan and price it every published way")
        self.run_button.on_click(self.run)
        self.status = W.HTML("")
        self.loaded = W.HTML("")
        self.excluded = W.HTML("")
        self.table = OptionsTable()
        self.table.observe(self._on_pick, names="picked")
        self.chart: alt.JupyterChart | None = None  # made with the first ranking (drawn in the page, as SVG)
        self.view = W.VBox([W.HBox([self.run_button, self.by, self.status], layout=W.Layout(align_items="center",
                                                                                          flex_flow="row wrap")),
                            self.loaded, self.table, self.excluded])
        self.view.add_class("aiplan-options")

    @property
    def stale(self) -> bool:
        return self.table.stale

    def run(self) -> list[dict]:
        """Rank the options for the plan on screen and show the best :data:`SHOWN` and their chart."""
        start = time.perf_counter()
        plan = self._plan()
        try:
            rows = explore(plan, self.catalog, by=self.by.value)
        except PlanError as exc:
            self.status.value = f"<span class='aiplan-na'>{html.escape('; '.join(exc.lines()))}</span>"
            return []
        self.rows = rank(once_per_offer(rows, self.catalog or load_catalog()), self.by.value)
        self.ranked_key = ranking_key(plan)
        self.table.stale = False
        self.run_button.label = "Rank every option"
        self._show(time.perf_counter() - start, start)
        return self.rows

    def rerank(self) -> None:
        """Sort the ranked options again by "Rank by" (no new sizing: at once)."""
        if not self.rows:
            return
        start = time.perf_counter()
        fresh = [{**r, "excluded": None if r["excluded"] == "no figure to rank by" else r["excluded"]}
                 for r in self.rows]
        self.rows = rank(fresh, self.by.value)
        self._show(time.perf_counter() - start, start)

    def _show(self, seconds: float, start: float) -> None:
        ranked = [r for r in self.rows if not r["excluded"]]
        serving = are_serving(ranked)
        plan = self._plan()
        self.table.header = (["#", "GPU", "Offer", "Pricing", "GPUs", "Layout", "Per month", "Per million tokens",
                              "Capacity risk"]
                             if serving else
                             ["#", "GPU", "Offer", "Pricing", "GPUs", "Time P10–P90", "Run cost P10–P90",
                              *(["Deadline odds"] if have_odds(ranked) else []), "Capacity risk"])
        self.table.rows = self._table_rows(ranked)
        legend = layout_legend(r.get("layout") for r in ranked[:SHOWN]) if serving else ""
        self.excluded.value = (f'<div id="aiplan-options-layouts" class="aiplan-note">{html.escape(legend)}</div>'
                               if legend else "") + excluded_html(self.rows)
        by = dict((v, k) for k, v in self.by.options)[self.by.value]
        self.status.value = (f"{len(ranked)} of {len(self.rows)} options can run this plan with a published price, "
                             f"ranked by {by} ({seconds:.1f} s). Click a row to load it.")
        self.last_table_s = time.perf_counter() - start  # the table is on its way to the page; the chart follows
        deadline = (plan.get("cluster") or {}).get("deadline_days")
        with alt.utils.schemapi.debug_mode(False):
            spec = pareto_chart(ranked[:SHOWN], deadline, width=520, height=260).to_dict(validate=False)
        if self.chart is None:
            self.chart = alt.JupyterChart(not_available("alternatives", "Options", "ranking"),
                                          embed_options={"renderer": "svg", "actions": False})
            self.chart.add_class("aiplan-options-chart")
            self.view.children = [*self.view.children, self.chart]
        self.chart.spec = spec

    def _table_rows(self, ranked: list[dict]) -> list[dict]:
        """The table's rows; the odds column follows the ranked rows, as the header does, not the plan on screen
        (which may have changed since the ranking)."""
        return [{"rank": r["rank"], "cells": _cells(r, are_serving(ranked), have_odds(ranked)),
                 "current": is_plans_own(r, self._current)} for r in ranked[:SHOWN]]

    def plan_changed(self, plan: Mapping[str, Any], result: Mapping[str, Any]) -> None:
        """The plan on screen changed (and evaluated to ``result``): mark its own row, or the table out of date; a
        serving plan ranks by cost or CO₂ (a service has no run time)."""
        serving = (plan.get("workload") or {}).get("kind") == "inference"
        offered = [(label, by) for label, by in RANK_BY if not serving or by in SERVING_SORT_KEYS]
        if list(self.by.options) != offered:
            value = self.by.value if any(by == self.by.value for _, by in offered) else "cost"
            self.by.options = offered
            self.by.value = value
        filled = result.get("plan") or {}
        pricing = (filled.get("cost") or {}).get("pricing")
        own = (filled.get("facility") or {}).get("server") if pricing == "buy" else (filled.get("cost") or {}).get(
            "cloud")
        self._current = ((filled.get("cluster") or {}).get("gpu"), own, pricing)
        if not self.rows:
            return
        stale = ranking_key(plan) != self.ranked_key
        if stale != self.table.stale:
            self.table.stale = stale
            self.run_button.label = "Re-rank" if stale else "Rank every option"
            self.status.value = ('<span id="aiplan-options-stale" class="aiplan-stale-note">Out of date: the plan '
                                 'changed since this ranking. Re-rank to see the options for the plan on screen.'
                                 '</span>') if stale else ""
        if not stale:
            rows = self._table_rows([r for r in self.rows if not r["excluded"]])
            if rows != self.table.rows:
                self.table.rows = rows

    def pick(self, rank_: int) -> str:
        """Load the option ranked ``rank_`` into the planner (what a click on its row does); the confirmation."""
        if self.table.stale:
            self.loaded.value = ('<div class="aiplan-note">The ranking is out of date: re-rank before loading an '
                                 'option.</div>')
            return ""
        row = next((r for r in self.rows if r["rank"] == rank_), None)
        if row is None:
            return ""
        text = self._load(option_overrides(row, self._plan()), row)
        self.loaded.value = f'<div id="aiplan-options-loaded" class="aiplan-notice">{html.escape(text)}</div>'
        return text

    def _on_pick(self, change) -> None:
        if change["new"]:
            self.pick(change["new"])
            self.table.picked = 0
