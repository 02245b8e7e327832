"""Two to four saved plans side by side: a table of key metrics and a comparison chart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import ipywidgets as W

from .. import charts as C
from ..errors import PlanError
from ..evaluate import evaluate
from . import figures
from .controls import find_presets


def compare(plans: Sequence[Any], names: Sequence[str] | None = None):
    """Evaluate 2-4 plans; return ``(results, table, chart)`` (table: pandas DataFrame, chart: Altair)."""
    if not 1 <= len(plans) <= 4:
        raise ValueError(f"compare takes one to four plans, got {len(plans)}")
    results = [evaluate(p) for p in plans]
    return results, C.comparison_table(results, names), C.comparison_chart(results, names)


class CompareApp:
    """Pick two to four preset plans (or give paths) and see them side by side."""

    def __init__(self, plans: Sequence[str] | None = None, presets: Mapping[str, str] | None = None):
        C.use_offline(svg=False)
        self.presets = dict(find_presets() if presets is None else presets)
        chosen = list(plans) if plans else list(self.presets.values())[:2]
        options = list(self.presets.items())
        for p in chosen:
            if p not in self.presets.values():
                options.append((str(p), p))
        self.select = W.SelectMultiple(options=options, value=tuple(chosen), rows=min(6, len(options)),
                                       description="plans", layout=W.Layout(width="420px"))
        self.table = W.HTML()
        self.problems = W.HTML()
        self.chart = alt.JupyterChart(C.not_available("comparison", "Scenario comparison", "pick plans"))
        self.results: list[dict] = []
        self.select.observe(lambda _: self.recompute(), names="value")
        self.view = W.VBox([W.HTML(figures.CSS + '<div class="aiplan-title">aiplan — compare plans</div>'),
                            self.select, self.problems, self.table, self.chart])
        self.recompute()

    def recompute(self) -> None:
        paths = list(self.select.value)
        if not 1 <= len(paths) <= 4:
            self.problems.value = figures.error_html(ValueError("pick one to four plans"))
            return
        try:
            self.results, table, chart = compare(paths)
        except PlanError as exc:
            self.problems.value = figures.error_html(exc)
            return
        self.problems.value = ""
        self.table_df = table
        self.table.value = table.to_html(float_format=lambda v: f"{v:,.4g}", na_rep="—")
        self.chart.spec = chart.to_dict(validate=False)
