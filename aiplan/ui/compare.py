"""Scenarios side by side: the planner's pinned plans (:class:`ScenarioBoard`) and saved plan files
(:class:`CompareApp`), with the differences against the first.

A consultant pins the plan on screen ("the H100 plan"), changes it ("and with B200s?"), pins
again: the table (DOM id ``aiplan-scenarios``) says first which inputs differ between the
scenarios (the GPU, the offer, the pricing, the method, the latency targets, ...; every plan field
whose value differs, the ones clients ask about first), then the figures side by side, each with
its change against the first scenario: for serving the GPUs, time to first token, time per output
token and the cost per million tokens; for training the GPUs, days, the run's cost and the chance
of the deadline; then power, racks and the breakeven. Two scenarios never share a name: a pinned
plan named like one already pinned is named after what differs ("…, reserved 1 year").
Scenarios are renamed, removed, and downloaded as a zip of YAML plans.
"""

from __future__ import annotations

import base64
import copy
import html
import io
import zipfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import altair as alt
import ipywidgets as W

from ..core.errors import PlanError
from ..core.fields import RESULT_FIELDS, format_field, get_path, label
from ..core.fields import format_value as fmt
from ..pipeline import evaluate
from ..plan import SECTIONS, dump_plan
from ..present import charts as C
from ..present.summary import breakeven_text
from . import figures
from ._util import slug
from .controls import find_presets

#: most scenarios side by side
MAX_SCENARIOS = 4
#: figures of the table, as result keys (label and format from the field registry); a row no scenario has
#: is left out. Serving first shows its latencies and cost per million tokens, training its time and run cost
SERVING_ROWS = ("inference.gpus", "inference.ttft_ms", "inference.tpot_ms", "cost.usd_per_million_tokens",
                "cost.usd_per_million_tokens_onprem", "cost.cloud_usd_per_month")
TRAINING_ROWS = ("cluster.gpus", "compute.wall_clock_days", "cost.cloud_run_usd", "cost.onprem_run_usd",
                 "compute.deadline_probability")
COMMON_ROWS = ("facility.total_kw", "facility.racks", "cost.breakeven_months")
ROWS = TRAINING_ROWS + SERVING_ROWS + COMMON_ROWS
#: the inputs clients compare first (plan field paths); any other field that differs follows
KEY_INPUTS = ("model", "workload.kind", "cluster.gpu", "cost.cloud", "cost.pricing", "facility.server",
              "workload.method", "workload.weight_precision", "workload.kv_precision", "workload.ttft_ms_target",
              "workload.tpot_ms_target", "workload.requests_per_s", "workload.tokens", "cluster.gpus",
              "cluster.deadline_days", "cost.utilisation", "cost.years")
#: plan fields never compared (words, and what a catalog row brings along)
NOT_COMPARED = ("name", "client", "prepared_by", "catalog", "cost.server_price_usd", "cost.cloud_usd_per_hr",
                "cluster.gpus_per_node", "cluster.fabric_switch", "cluster.fabric_radix")


def _plan_value(result: Mapping, path: str) -> Any:
    plan = result.get("plan") or {}
    if "." not in path:
        value = plan.get(path)
        return value if isinstance(value, str) else (get_path(result, "model.name") or "custom model")
    return get_path(plan, path)


def _input_paths() -> list[str]:
    rest = [f"{section}.{key}" for section, specs in SECTIONS.items() for key in specs]
    return list(KEY_INPUTS) + [p for p in rest if p not in KEY_INPUTS and p not in NOT_COMPARED]


def differing_inputs(results: Sequence[Mapping]) -> list[str]:
    """The plan fields whose values differ between the scenarios, the key ones first."""
    return [p for p in _input_paths() if len({repr(_plan_value(r, p)) for r in results}) > 1]


def _input_text(path: str, value: Any) -> str:
    if path == "model":
        return str(value)
    if path == "workload.kind":
        return {"pretrain": "pretraining", "finetune": "fine-tuning", "inference": "serving"}.get(value, str(value))
    return figures.plan_value_text(path, value)


def _input_label(path: str) -> str:
    return "Model" if path == "model" else figures.field_label(path)


def compare(plans: Sequence[Any], names: Sequence[str] | None = None):
    """Evaluate 1-4 plans; return ``(results, table, chart)`` (table: pandas DataFrame, chart: Altair)."""
    if not 1 <= len(plans) <= 4:
        raise ValueError(f"compare takes one to four plans, got {len(plans)}")
    results = [evaluate(p) for p in plans]
    return results, C.comparison_table(results, names), C.comparison_chart(results, names)


def _value(result: Mapping, section: str, key: str) -> Any:
    if section == "cluster" and key == "gpus":
        return C.gpu_count(result) or get_path(result, "inference.gpus")
    return get_path(result, f"{section}.{key}")


def delta_text(value: Any, base: Any) -> str:
    """The change of ``value`` against ``base`` in words: "+50%", "−8%", "same"."""
    if not isinstance(value, (int, float)) or not isinstance(base, (int, float)) or not base:
        return ""
    change = (value - base) / abs(base)
    if abs(change) < 0.005:
        return "same"
    return f"{'+' if change > 0 else '−'}{fmt(abs(change), 'pct')}"


def scenarios_html(names: Sequence[str], results: Sequence[Mapping]) -> str:
    """The scenarios side by side (``<table id="aiplan-scenarios">``): the inputs that differ, then the figures with
    their changes against the first."""
    if not results:
        return ('<div id="aiplan-scenarios" class="aiplan-note">No scenarios yet: pin the plan on screen, change '
                'it, and pin again to compare.</div>')
    head = "".join(f"<th>{html.escape(n)}</th>" for n in names)
    span = len(results) + 1
    differ = differing_inputs(results) if len(results) > 1 else [
        p for p in ("model", "workload.kind", "cluster.gpu", "cost.cloud", "cost.pricing")]
    body = [f'<tr class="aiplan-scenarios-part"><th colspan="{span}">'
            f'{"What differs" if len(results) > 1 else "The plan"}</th></tr>']
    if len(results) > 1 and not differ:
        body.append(f'<tr><td colspan="{span}" class="aiplan-note">The scenarios have the same inputs.</td></tr>')
    for path in differ:
        cells = "".join(f"<td>{html.escape(_input_text(path, _plan_value(r, path)))}</td>" for r in results)
        body.append(f'<tr class="aiplan-input" data-input="{path}"><td>{html.escape(_input_label(path))}</td>'
                    f"{cells}</tr>")
    serving = [get_path(r, "plan.workload.kind") == "inference" for r in results]
    keys = (SERVING_ROWS if all(serving) else TRAINING_ROWS if not any(serving) else
            tuple(dict.fromkeys(SERVING_ROWS[:1] + TRAINING_ROWS[1:] + SERVING_ROWS[1:]))) + COMMON_ROWS
    body.append(f'<tr class="aiplan-scenarios-part"><th colspan="{span}">The figures</th></tr>')
    for key in keys:
        section, name = key.split(".", 1)
        values = [_value(r, section, name) for r in results]
        if all(v is None for v in values):
            continue
        cells = []
        for i, (v, text) in enumerate(zip(values, row_texts(key, values))):
            delta = delta_text(v, values[0]) if i else ""
            cells.append(f"<td>{html.escape(text)}"
                         + (f'<span class="delta">{html.escape(delta)}</span>' if delta else "") + "</td>")
        body.append(f'<tr data-figure="{key}"><td>{html.escape(label(key))}</td>{"".join(cells)}</tr>')
    return (f'<table id="aiplan-scenarios" class="aiplan-scenarios-table"><thead><tr><th>Scenario</th>{head}</tr>'
            f'</thead><tbody>{"".join(body)}</tbody></table>')


def row_texts(key: str, values: Sequence[Any]) -> list[str]:
    """One row of figures in one unit: the breakeven in months (as the card and the chart), a duration in days
    when the scenarios' durations would read in different units."""
    if key == "cost.breakeven_months":
        return [breakeven_text(v) if v is not None else format_field(key, v) for v in values]
    texts = [format_field(key, v) for v in values]
    units = {t.rsplit(" ", 1)[-1] for t, v in zip(texts, values) if isinstance(v, (int, float))}
    if RESULT_FIELDS[key].kind == "days" and len(units) > 1:
        return [fmt(v, "number", "days") if isinstance(v, (int, float)) else t for v, t in zip(values, texts)]
    return texts


def distinct_name(name: str, names: Sequence[str], results: Sequence[Mapping], result: Mapping) -> str:
    """``name``, or when a pinned scenario has it, ``name`` and what differs from that one ("…, reserved 1 year"),
    else a number."""
    if name not in names:
        return name
    other = results[list(names).index(name)]
    for path in differing_inputs([other, result]):
        candidate = f"{name}, {_input_text(path, _plan_value(result, path))}"
        if candidate not in names:
            return candidate
    unique, n = name, 2
    while unique in names:
        unique, n = f"{name} ({n})", n + 1
    return unique


def scenarios_zip(names: Sequence[str], plans: Sequence[Mapping]) -> bytes:
    """A zip of the scenarios' plans, one YAML file each, named after the scenario."""
    out = io.BytesIO()
    used: set[str] = set()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, plan in zip(names, plans):
            stem, n = slug(name), 2
            while f"{stem}.yaml" in used:
                stem, n = f"{slug(name)}-{n}", n + 1
            used.add(f"{stem}.yaml")
            archive.writestr(f"{stem}.yaml", dump_plan({**copy.deepcopy(dict(plan)), "name": name}, rounded=True))
    return out.getvalue()


class ScenarioBoard:
    """Up to :data:`MAX_SCENARIOS` pinned plans: the table, rename and remove controls, a zip download."""

    def __init__(self, on_change: Callable[[], None] | None = None):
        self.names: list[str] = []
        self.plans: list[dict] = []
        self.results: list[dict] = []
        self._on_change = on_change
        self.chips = W.HBox([], layout=W.Layout(flex_flow="row wrap"))
        self.chips.add_class("aiplan-scenario-chips")
        self.table = W.HTML(scenarios_html([], []))
        self.download = W.HTML("")
        self.view = W.VBox([W.HTML('<div class="aiplan-section-title">Scenarios side by side</div>'),
                            self.chips, self.table, self.download])
        self.view.add_class("aiplan-scenario-board")

    @property
    def full(self) -> bool:
        return len(self.plans) >= MAX_SCENARIOS

    def add(self, name: str, plan: Mapping, result: Mapping) -> bool:
        """Pin a plan and its result; False when the board is full."""
        if self.full:
            return False
        self.names.append(distinct_name(name, self.names, self.results, result))
        self.plans.append(copy.deepcopy(dict(plan)))
        self.results.append(result)
        self._redraw()
        return True

    def remove(self, index: int) -> None:
        for seq in (self.names, self.plans, self.results):
            del seq[index]
        self._redraw()

    def rename(self, index: int, name: str) -> None:
        if name.strip() and 0 <= index < len(self.names) and name.strip() not in self.names[:index] + \
                self.names[index + 1:]:
            self.names[index] = name.strip()
            self._redraw(chips=False)

    def _chip(self, index: int) -> W.Widget:
        name = W.Text(value=self.names[index], continuous_update=False, layout=W.Layout(width="200px"))
        name.add_class("aiplan-scenario-name")
        name.observe(lambda change: self.rename(index, change["new"]), names="value")
        remove = W.Button(description="Remove", tooltip=f"Remove {self.names[index]}",
                          layout=W.Layout(width="auto"))
        remove.add_class("aiplan-scenario-remove")
        remove.on_click(lambda _b: self.remove(index))
        return W.HBox([name, remove])

    def _redraw(self, chips: bool = True) -> None:
        if chips:
            self.chips.children = [self._chip(i) for i in range(len(self.names))]
        if self.plans:  # the zip first: once the table shows a name, the download carries it
            data = base64.b64encode(scenarios_zip(self.names, self.plans)).decode("ascii")
            self.download.value = (f'<a id="aiplan-scenarios-zip" class="aiplan-download" download="scenarios.zip" '
                                   f'href="data:application/zip;base64,{data}">Download the scenarios '
                                   f'(zip of plan files)</a>')
        else:
            self.download.value = ""
        self.table.value = scenarios_html(self.names, self.results)
        if self._on_change:
            self._on_change()


class CompareApp:
    """Pick two to four preset plans (or give paths) and see them side by side."""

    def __init__(self, plans: Sequence[str] | None = None, presets: Mapping[str, str] | None = None):
        C.use_offline(svg=False)
        self.presets = dict(find_presets() if presets is None else presets)
        chosen = list(plans) if plans else list(self.presets.values())[:2]
        resolved = {str(p): p for p in self.presets.values()}
        options = list(self.presets.items())
        for p in chosen:
            if str(p) not in resolved:
                options.append((str(p), p))
        self.select = W.SelectMultiple(options=options, value=tuple(chosen), rows=min(6, len(options)),
                                       description="Plans", layout=W.Layout(width="420px"))
        self.table = W.HTML()
        self.problems = W.HTML()
        self.chart = alt.JupyterChart(C.not_available("comparison", "Scenario comparison", "pick plans"))
        self.results: list[dict] = []
        self.select.observe(lambda _: self.recompute(), names="value")
        self.view = W.VBox([W.HTML(figures.CSS + '<div class="aiplan-title">Compare plans</div>'),
                            self.select, self.problems, self.table, self.chart])
        self.view.add_class("aiplan-app")
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
        names = [(r.get("plan") or {}).get("name") or f"plan {i + 1}" for i, r in enumerate(self.results)]
        self.table.value = scenarios_html(names, self.results)
        self.chart.spec = chart.to_dict(validate=False)
