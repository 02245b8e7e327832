"""Altair chart builders: ``result -> chart`` (pure functions, no widgets).

Every builder takes a result of :func:`aiplan.evaluate` (or, for the sweeps, a
plan) and returns an Altair chart. No formula lives here: the numbers come from
the result, and the sweeps call :func:`aiplan.evaluate` once per point. A chart
whose data is missing (a step that does not apply to the workload, or that the
kit has not computed) is a small text chart saying "not available", never an
exception. Each chart carries ``usermeta = {"aiplan": {"chart": name,
"available": bool}}`` so tests and reports can tell which is which.

Chart builders (stable names, used by the widgets, the notebooks and the report):

=========================  =====================================================
``memory_chart``           memory per GPU by part, against usable capacity
``training_sweep_chart``   training days and cost vs GPU count (sweep)
``inference_sweep_chart``  replicas / GPUs vs request rate (sweep)
``layout_chart``           parallel layout candidates: step time vs memory
``power_chart``            facility power by part (IT, network, storage, PUE)
``racks_chart``            compute and other racks, rack power vs budget
``facility_chart``         ``power_chart | racks_chart``
``cumulative_cost_chart``  cumulative cost by month, cloud vs on-prem, breakeven
``utilisation_chart``      cloud vs on-prem total cost vs utilisation (sweep)
``sensitivity_chart``      tornado of cost drivers
``growth_chart``           IT power and racks by year of growth
``comparison_chart``       two to four plans side by side
=========================  =====================================================

Rendering offline: call :func:`use_offline` once (svg renderer through
vl-convert for plain ``display(chart)``, and offline ``JupyterChart``). The
``spec`` renderer (:func:`spec_renderer`) emits the bare Vega-Lite spec instead,
for ``aiplan report`` to draw outside the kernel.

Chart data are inline rows (lists of dicts), not DataFrames: drawing charts never
imports pandas. The sweeps also come as DataFrames (``gpu_sweep`` ...) for notebooks.
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

# jsonschema imports the optional ``rfc3987_syntax`` package, when installed (it comes with
# jupyter-events), to check "iri" string formats; building its grammar costs ~1.2 s per process
# (measured with ``python -X importtime -c "import altair"``). Vega-Lite specs never use "iri"
# formats, so charts skip it: a report kernel or a Voilà kernel starts that much faster.
sys.modules.setdefault("rfc3987_syntax", None)

import math

import altair as alt

from ..analysis.options import are_serving, pareto_front
from ..core.errors import PlanError
from ..core.fields import format_value, get_path
from ..core.units import KW_PER_MW
from ..cost import (
    DRIVER_LABELS,
    PRICING_LABELS,
    utilisation_curve,
)
from ..pipeline import (
    evaluate,
    to_plain,
)
from ..plan import load_plan
from .summary import breakeven_text

if TYPE_CHECKING:  # the sweeps and the comparison table return DataFrames; charts need no pandas
    import pandas as pd

WIDTH = 340
HEIGHT = 220
#: height of each of the training sweep's two panels (the app's headline chart: it fits above the fold
#: at 1280 x 720 with the key figures)
SWEEP_PANEL_HEIGHT = 70
#: chart colours, by meaning (kept consistent across charts)
CLOUD_COLOUR = "#4c78a8"
ONPREM_COLOUR = "#f58518"
LIMIT_COLOUR = "#d62728"
FITS_DOMAIN = [True, False]
FITS_RANGE = ["#2ca02c", "#d62728"]

MEMORY_PARTS = (
    ("weights_gb", "weights"),
    ("gradients_gb", "gradients"),
    ("optimizer_gb", "optimizer states"),
    ("activations_gb", "activations"),
    ("kv_cache_gb", "KV cache"),
)


# --- helpers -----------------------------------------------------------------------


def use_offline(svg: bool = True) -> None:
    """Render charts with no internet access.

    ``display(chart)`` uses the ``svg`` renderer (vl-convert, works in JupyterLab,
    Voilà, papermill and nbconvert); ``alt.JupyterChart`` loads Vega from
    vl-convert instead of a CDN (needs ``anywidget``).
    """
    if svg:
        alt.renderers.enable("svg")
    try:
        bundle = jupyterchart_bundle()
        if bundle is not None:  # the cached bundle: vl-convert (~100 MB per kernel) is not loaded
            alt.JupyterChart._esm, alt.JupyterChart._is_offline = bundle, True
        else:
            alt.JupyterChart.enable_offline()
    except Exception:  # anywidget missing: plain display still works  # pragma: no cover
        pass


def _bundle_path() -> Path:
    """Where the offline JupyterChart bundle of this Altair and vl-convert is cached."""
    from importlib.metadata import version

    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "aiplan"
    return base / f"jupyterchart-altair{alt.__version__}-vlc{version('vl-convert-python')}.js"


def jupyterchart_bundle(create: bool = True) -> str | None:
    """The JavaScript of ``alt.JupyterChart`` with Vega bundled in (what ``enable_offline`` builds with
    vl-convert), cached in the user's cache folder so each planner kernel reads a file instead of loading
    vl-convert; None when it cannot be cached (then ``enable_offline`` builds it as usual)."""
    try:
        path = _bundle_path()
        if path.is_file():
            return path.read_text(encoding="utf-8")
        if not create:
            return None
        alt.JupyterChart.enable_offline()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(alt.JupyterChart._esm, encoding="utf-8")
        os.replace(tmp, path)
        return alt.JupyterChart._esm
    except (OSError, ImportError, ValueError):
        return None


#: Mimetype of a bare Vega-Lite spec. (Altair's own ``mimetype`` renderer writes
#: ``application/vnd.vegalite.v6.json``, which nbformat rejects: JSON data must be ``...+json``.)
SPEC_MIMETYPE = f"application/vnd.vegalite.{alt.SCHEMA_VERSION.split('.')[0]}+json"


def spec_renderer(spec: dict, **_: Any) -> dict:
    """Altair renderer ``"spec"``: the chart as its Vega-Lite spec, for another process to draw.

    The report notebook uses it under ``aiplan report``, which draws the specs as SVG in a
    warm worker process (:class:`aiplan.report.ChartDrawer`) instead of in the kernel.
    """
    return {SPEC_MIMETYPE: spec}


alt.renderers.register("spec", spec_renderer)


def _data(rows: Iterable[Mapping]) -> alt.InlineData:
    """Inline chart data from plain rows.

    Charts are built from lists of dicts, not DataFrames, so a kernel that only draws
    charts (the report's, the planner's) never imports pandas (~0.3 s).
    """
    return alt.InlineData(values=to_plain([dict(row) for row in rows]))


def _records(table: Any) -> list[dict]:
    """Rows of a sweep given as a list of dicts or as a DataFrame."""
    return table.to_dict("records") if hasattr(table, "to_dict") else [dict(row) for row in table]


def _long(rows: Iterable[Mapping], id_field: str, values: Mapping[str, str], var_name: str,
          value_name: str) -> list[dict]:
    """Rows in long form (a melt): one row per row and value field that has a value, labelled.

    ``values`` maps each value field to its label, e.g. ``{"cloud_usd": "cloud"}``.
    """
    rows = to_plain([dict(row) for row in rows])
    return [{id_field: row[id_field], var_name: label, value_name: row.get(field)}
            for field, label in values.items() for row in rows
            if row.get(field) is not None and row.get(id_field) is not None]


#: the two options of the cost charts, by result field
OPTIONS = {"cloud_usd": "cloud", "onprem_usd": "on-prem"}
#: the run's cost, rented and on owned hardware, by sweep field (same labels and colours)
RUN_OPTIONS = {"cloud_run_usd": "cloud", "onprem_run_usd": "on-prem"}
OPTION_SCALE = alt.Scale(domain=["cloud", "on-prem"], range=[CLOUD_COLOUR, ONPREM_COLOUR])
#: Vega expression: an axis value in dollars as $K/$M/$B with up to 3 significant digits (the
#: app's and the report's money format, :func:`aiplan.core.fields.format_value`; d3's "$.3s" would
#: print "$2.00G")
USD_LABEL_EXPR = (
    "abs(datum.value) >= 1e9 ? '$' + format(datum.value / 1e9, '.3~r') + 'B' : "
    "abs(datum.value) >= 1e6 ? '$' + format(datum.value / 1e6, '.3~r') + 'M' : "
    "abs(datum.value) >= 1e3 ? '$' + format(datum.value / 1e3, '.3~r') + 'K' : "
    "'$' + format(datum.value, ',.3~r')")


#: Vega expression: a count as 850, 12.5K, 3.2M, 1.1B (no "G" for billions)
COMPACT_LABEL_EXPR = USD_LABEL_EXPR.replace("'$' + ", "")


def usd_axis(title: str) -> alt.Axis:
    """A money axis: $K/$M/$B labels that never overlap."""
    return alt.Axis(title=title, labelExpr=USD_LABEL_EXPR, labelOverlap=True)


#: a count axis label: the axis's own label at whole numbers, blank between them
COUNT_LABEL_EXPR = "datum.value % 1 ? '' : datum.label"


def count_axis(title: str, **kwargs: Any) -> alt.Axis:
    """A count axis (GPUs, racks): labels at whole numbers only (Vega's ``tickMinStep`` still ticks 0 to 2 at
    halves, which ",d" printed as "0, 1, 1, 2, 2"), thousands separators, overlapping labels dropped."""
    return alt.Axis(title=title, format=",d", tickMinStep=1, labelExpr=COUNT_LABEL_EXPR, labelOverlap="greedy",
                    labelSeparation=6, **kwargs)


def bottom_legend(title: str | None = None, columns: int = 3, **kwargs: Any) -> alt.Legend:
    """A legend under the chart, labels never cut short (charts stay as wide as their plot)."""
    return alt.Legend(title=title, orient="bottom", direction="horizontal", columns=columns, labelLimit=0,
                      **kwargs)


def tag_chart(chart: alt.TopLevelMixin, name: str, available: bool = True) -> alt.TopLevelMixin:
    """Name a chart in its ``usermeta`` (chart files and slides find it by that name)."""
    return _props(chart, usermeta={"aiplan": {"chart": name, "available": available}})


def _props(chart: alt.TopLevelMixin, **kwargs: Any) -> alt.TopLevelMixin:
    """Set top-level properties in place, without the schema check of ``.properties()``.

    Builders make a new chart each time, and ``.properties()`` validates each property against
    the Vega-Lite schema (about 15 ms each), which the app pays on every change; the builders'
    specs are validated in tests/test_charts.py instead.
    """
    for key, value in kwargs.items():
        setattr(chart, key, value)
    return chart


def _inner(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """A copy without top-level-only properties, to nest inside a compound chart."""
    chart = chart.copy(deep=False)
    chart.usermeta = alt.Undefined
    return chart


def not_available(name: str, title: str, why: str = "not available for this plan") -> alt.Chart:
    """A small text chart saying why a chart cannot be drawn."""
    chart = alt.Chart(_data([{"text": why[:1].upper() + why[1:] + "."}])).mark_text(
        size=13, color="#666", align="center", limit=WIDTH).encode(text=alt.Text("text:N"), x=alt.XValue(WIDTH / 2))
    return tag_chart(_props(chart, width=WIDTH, height=60, title=title), name, available=False)


def _as_plan(plan_or_result: Any) -> Any:
    """A result's filled plan, or the plan itself (dict, path, YAML text or Plan)."""
    if isinstance(plan_or_result, Mapping) and "plan" in plan_or_result and "memory" in plan_or_result:
        return copy.deepcopy(plan_or_result["plan"])
    if isinstance(plan_or_result, Mapping):
        return copy.deepcopy(dict(plan_or_result))

    return copy.deepcopy(load_plan(plan_or_result).data)


def gpu_count(result: Mapping) -> int | None:
    """GPUs of the plan as the kit evaluated it (``cluster.gpus``, the one resolved count)."""
    value = get_path(result, "cluster.gpus")
    return int(value) if value else None


# --- memory ------------------------------------------------------------------------


def memory_chart(result: Mapping) -> alt.TopLevelMixin:
    """Memory per GPU by part (stacked), against the GPU's usable and total capacity [GB]."""
    title = "Memory per GPU"
    rows = [{"part": label, "gb": float(get_path(result, f"memory.{key}"))}
            for key, label in MEMORY_PARTS if get_path(result, f"memory.{key}")]
    if not rows:
        return not_available("memory", title)
    rows = [dict(row, order=i, plan="this plan") for i, row in enumerate(rows)]
    bars = alt.Chart(_data(rows)).mark_bar().encode(
        x=alt.X("sum(gb):Q", title="GB per GPU"),
        y=alt.Y("plan:N", title=None),
        color=alt.Color("part:N", sort=[label for _, label in MEMORY_PARTS], legend=bottom_legend()),
        order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("part:N"), alt.Tooltip("gb:Q", format=".1f", title="GB")],
    )
    limits = []
    capacity = get_path(result, "memory.gpu_capacity_gb")
    usable = get_path(result, "memory.usable_gb")
    if capacity:
        limits.append({"limit": "GPU capacity", "gb": float(capacity)})
    if usable:
        limits.append({"limit": "usable", "gb": float(usable)})
    layers = [bars]
    if limits:
        layers.append(alt.Chart(_data(limits)).mark_rule(color=LIMIT_COLOUR, size=2).encode(
            x=alt.X("gb:Q"), strokeDash=alt.StrokeDash("limit:N", legend=bottom_legend()),
            tooltip=[alt.Tooltip("limit:N"), alt.Tooltip("gb:Q", format=".1f")]))
    fits = get_path(result, "memory.fits")
    subtitle = "" if fits is None else ("fits in GPU memory" if fits else "does not fit in GPU memory")
    chart = _props(alt.layer(*layers), width=WIDTH, height=90, title=alt.TitleParams(title, subtitle=subtitle))
    return tag_chart(chart, "memory")


# --- sweeps over evaluate ---------------------------------------------------------


def _evaluate_quiet(plan: dict) -> dict | None:
    try:
        return evaluate(plan)
    except PlanError:
        return None


def default_gpu_counts(result: Mapping, factors: Sequence[float] = (0.25, 0.5, 1, 2, 4)) -> list[int]:
    """GPU counts around the plan's own, multiples of tensor x pipeline parallel (a sweep grid)."""
    base = gpu_count(result) or 8
    tp = get_path(result, "cluster.tensor_parallel", 1) or 1
    pp = get_path(result, "cluster.pipeline_parallel", 1) or 1
    plan_cluster = ((result or {}).get("plan") or {}).get("cluster") or {}
    step = int(tp if plan_cluster.get("tensor_parallel") else 1) * int(pp if plan_cluster.get("pipeline_parallel")
                                                                     else 1)
    step = max(step, 1)
    counts = sorted({max(step, int(round(base * f / step)) * step) for f in factors})
    return counts


GPU_SWEEP_COLUMNS = ["gpus", "wall_clock_days", "cloud_usd", "onprem_usd", "per_gpu_gb", "fits", "cloud_run_usd",
                     "onprem_run_usd", "step_fixed_fraction", "scaling_limit_gpus"]
#: the sweep reaches out to where adding GPUs stops paying when that is within this factor of its largest count
SCALING_LIMIT_REACH = 16


def gpu_sweep(plan_or_result: Any, gpu_counts: Iterable[int] | None = None) -> pd.DataFrame:
    """Evaluate the plan at several GPU counts (``cluster.gpus``; the deadline is dropped).

    Returns one row per count that validates: gpus, wall_clock_days, cloud_usd,
    onprem_usd, fits, per_gpu_gb, cloud_run_usd, onprem_run_usd, step_fixed_fraction (the share
    of each step that more GPUs do not shrink), scaling_limit_gpus (beyond it a doubling saves less
    than a quarter of the time). Without ``gpu_counts`` the counts around the plan's own include
    that limit when it is near enough to show.
    """
    import pandas as pd

    return pd.DataFrame(gpu_sweep_rows(plan_or_result, gpu_counts), columns=GPU_SWEEP_COLUMNS)


def gpu_sweep_rows(plan_or_result: Any, gpu_counts: Iterable[int] | None = None) -> list[dict]:
    """:func:`gpu_sweep` as a list of dicts."""
    plan = _as_plan(plan_or_result)
    given = plan_or_result if isinstance(plan_or_result, Mapping) and "memory" in plan_or_result else None
    if gpu_counts is None:
        base = given or _evaluate_quiet(plan)
        gpu_counts = default_gpu_counts(base or {"plan": plan})
        limit = get_path(base or {}, "compute.scaling_limit_gpus")
        if limit and limit <= max(gpu_counts) * SCALING_LIMIT_REACH:
            gpu_counts = sorted(set(gpu_counts) | {int(limit)})
    rows = []
    for n in gpu_counts:
        if given is not None and get_path(given, "cluster.gpus") == int(n):
            res = given  # the plan's own count: its result, not a second evaluation
        else:
            trial = copy.deepcopy(plan)
            cluster = dict(trial.get("cluster") or {})
            cluster["gpus"] = int(n)
            cluster.pop("deadline_days", None)
            cluster.pop("data_parallel", None)
            trial["cluster"] = cluster
            res = _evaluate_quiet(trial)
        if res is None:
            continue
        rows.append({"gpus": int(n),
                     "wall_clock_days": get_path(res, "compute.wall_clock_days"),
                     "cloud_usd": get_path(res, "cost.cloud_usd"),
                     "onprem_usd": get_path(res, "cost.onprem_usd"),
                     "per_gpu_gb": get_path(res, "memory.per_gpu_gb"),
                     "fits": get_path(res, "memory.fits"),
                     "cloud_run_usd": get_path(res, "cost.cloud_run_usd"),
                     "onprem_run_usd": get_path(res, "cost.onprem_run_usd"),
                     "step_fixed_fraction": get_path(res, "compute.step_fixed_fraction"),
                     "scaling_limit_gpus": get_path(res, "compute.scaling_limit_gpus")})
    return rows


def training_sweep_chart(plan_or_result: Any, gpu_counts: Iterable[int] | None = None,
                         sweep: pd.DataFrame | list[dict] | None = None) -> alt.TopLevelMixin:
    """Training time and the run's cost (rented and on owned hardware) vs GPU count, from :func:`gpu_sweep`.

    Two panels over one GPU axis: wall-clock days above, the cost of this run below (not the
    cost of keeping the cluster for years); a dashed rule marks the plan's own GPU count and a red
    one where adding GPUs stops paying (beyond it a doubling saves less than a quarter of the time:
    ``compute.scaling_limit_gpus``).
    """
    title = "Training time and run cost vs GPU count"
    rows = _records(sweep) if sweep is not None else gpu_sweep_rows(plan_or_result, gpu_counts)
    days = [row for row in rows if to_plain(row.get("wall_clock_days")) is not None]
    if not days:
        return not_available("training_sweep", title, "needs a training workload with computed days")
    gpus = [int(row["gpus"]) for row in days]
    scale = alt.Scale(type="log", base=2, domain=[min(gpus), max(gpus)], nice=False)
    run = any(row.get(k) is not None for row in days for k in RUN_OPTIONS)
    fields = RUN_OPTIONS if run else OPTIONS
    top = [alt.Chart(mark=alt.MarkDef(type="line", point=True, color="#333"), encoding=alt.FacetedEncoding(
        x=alt.X("gpus:Q", scale=scale, axis=count_axis(None, labels=False, ticks=True)),
        y=alt.Y("wall_clock_days:Q", axis=alt.Axis(title="days", labelOverlap=True, format=",.3~r")),
        tooltip=[alt.Tooltip("gpus:Q", format=",d", title="GPUs"),
                 alt.Tooltip("wall_clock_days:Q", format=",.1f", title="days")]))]
    bottom = [alt.Chart(mark=alt.MarkDef(type="line", point=True), transform=[
        alt.FoldTransform(fold=list(fields), **{"as": ["field", "usd"]}),
        alt.CalculateTransform(calculate=f"datum.field == '{list(fields)[0]}' ? 'cloud' : 'on-prem'", **{
            "as": "option"})], encoding=alt.FacetedEncoding(
        x=alt.X("gpus:Q", scale=scale, axis=count_axis("GPUs")),
        y=alt.Y("usd:Q", axis=usd_axis("run cost" if run else "cost over the plan's years")),
        color=alt.Color("option:N", scale=OPTION_SCALE, legend=alt.Legend(
            title=None, orient="bottom-right", direction="horizontal", labelLimit=0, fillColor="#ffffffcc")),
        tooltip=[alt.Tooltip("gpus:Q", format=",d", title="GPUs"), alt.Tooltip("option:N"),
                 alt.Tooltip("usd:Q", format="$,.0f", title="cost")]))]
    plan_gpus = gpu_count(plan_or_result) if isinstance(plan_or_result, Mapping) and "cluster" in plan_or_result \
        else None
    if plan_gpus:
        rule = alt.Chart(mark=alt.MarkDef(type="rule", color="#555", strokeDash=[4, 3]),
                         encoding=alt.FacetedEncoding(x=alt.XDatum(plan_gpus)))
        top.append(rule)
        bottom.append(rule)
    limit = _scaling_limit(days)
    if limit is not None:
        top.append(alt.Chart(mark=alt.MarkDef(type="rule", color="#c0392b", strokeDash=[2, 2]),
                             encoding=alt.FacetedEncoding(x=alt.XDatum(limit))))
        top.append(alt.Chart(mark=alt.MarkDef(type="text", color="#c0392b", align="right", dx=-4, dy=8, baseline="top",
                                              text="more GPUs stop paying"),
                             data=alt.InlineData(values=[{}]),  # one label, not one per sweep row
                             encoding=alt.FacetedEncoding(x=alt.XDatum(limit), y=alt.YValue(0))))
    chart = alt.VConcatChart(
        vconcat=[alt.LayerChart(layer=top, width=WIDTH, height=SWEEP_PANEL_HEIGHT, title="Training time"),
                 alt.LayerChart(layer=bottom, width=WIDTH, height=SWEEP_PANEL_HEIGHT,
                                title="Cost of this run" if run else "Cost")],
        data=_data(days), spacing=6, title=title, resolve=alt.Resolve(scale=alt.ScaleResolveMap(x="shared")))
    return tag_chart(chart, "training_sweep")


def _scaling_limit(rows: Sequence[Mapping]) -> int | None:
    """Where adding GPUs stops paying (``compute.scaling_limit_gpus``, the same in every row) within the sweep."""
    limits = {to_plain(row.get("scaling_limit_gpus")) for row in rows} - {None}
    gpus = [int(row["gpus"]) for row in rows]
    limit = min(limits) if limits else None
    return int(limit) if limit is not None and min(gpus) <= limit <= max(gpus) else None


RATE_SWEEP_COLUMNS = ["requests_per_s", "replicas", "gpus", "requests_per_s_per_replica", "pools"]


def rate_sweep(plan_or_result: Any, rates_per_s: Iterable[float] | None = None) -> pd.DataFrame:
    """Evaluate an inference plan at several request rates (``workload.requests_per_s``): the GPUs it needs, and
    ``pools`` (1, or 2 where separate prefill and decode pools serve the rate); ``replicas`` and
    ``requests_per_s_per_replica`` are those of the single pool, empty where two pools serve."""
    import pandas as pd

    return pd.DataFrame(rate_sweep_rows(plan_or_result, rates_per_s), columns=RATE_SWEEP_COLUMNS)


def rate_sweep_rows(plan_or_result: Any, rates_per_s: Iterable[float] | None = None) -> list[dict]:
    """:func:`rate_sweep` as a list of dicts (empty for a workload that is not inference)."""
    plan = _as_plan(plan_or_result)
    work = plan.get("workload") or {}
    if work.get("kind") != "inference":
        return []
    base = float(work.get("requests_per_s") or 1.0)
    if rates_per_s is None:
        rates_per_s = [base * f for f in (0.25, 0.5, 1, 2, 4, 8)]
    rows = []
    for rate in rates_per_s:
        trial = copy.deepcopy(plan)
        trial["workload"] = dict(work, requests_per_s=float(rate))
        cluster = dict(trial.get("cluster") or {})
        cluster.pop("gpus", None)  # let the kit size replicas for the rate
        trial["cluster"] = cluster
        res = _evaluate_quiet(trial)
        if res is None:
            continue
        one = not get_path(res, "inference.disaggregated")
        rows.append({"requests_per_s": float(rate), "gpus": get_path(res, "inference.gpus"), "pools": 1 if one else 2,
                     "replicas": get_path(res, "inference.replicas") if one else None,
                     "requests_per_s_per_replica": get_path(res, "inference.requests_per_s_per_replica") if one
                     else None})
    return rows


def inference_sweep_chart(plan_or_result: Any, rates_per_s: Iterable[float] | None = None,
                          sweep: pd.DataFrame | list[dict] | None = None) -> alt.TopLevelMixin:
    """Replicas and GPUs needed vs request rate, with the per-replica throughput [req/s]."""
    title = "Replicas and GPUs vs request rate"
    rows = _records(sweep) if sweep is not None else rate_sweep_rows(plan_or_result, rates_per_s)
    rows = [row for row in rows if to_plain(row.get("gpus")) is not None]
    if not rows:
        return not_available("inference_sweep", title, "needs an inference workload")
    long = _long(rows, "requests_per_s", {"replicas": "replicas", "gpus": "GPUs"}, "what", "count")
    lines = alt.Chart(_data(long)).mark_line(point=True, interpolate="step-after").encode(
        x=alt.X("requests_per_s:Q", axis=alt.Axis(title="requests per second", labelOverlap=True)),
        y=alt.Y("count:Q", axis=count_axis("replicas and GPUs")),
        color=alt.Color("what:N", legend=bottom_legend()),
        tooltip=[alt.Tooltip("requests_per_s:Q"), alt.Tooltip("what:N"), alt.Tooltip("count:Q")],
    )
    per = [to_plain(row.get("requests_per_s_per_replica")) for row in rows]
    per = [value for value in per if value is not None]
    subtitle = f"one replica serves {float(per[0]):.2f} req/s" if per else ""
    two = [row["requests_per_s"] for row in rows if row.get("pools") == 2]
    if two:
        rates = f"{two[0]:g}" if len(two) == 1 else f"{min(two):g}–{max(two):g}"
        if len(two) < sum(min(two) <= row["requests_per_s"] <= max(two) for row in rows):
            rates = ", ".join(f"{r:g}" for r in two)   # not every rate between: each one
        subtitle += ("; " if subtitle else "") + f"two pools (prefill, decode) at {rates} req/s"
    chart = _props(lines, width=WIDTH, height=HEIGHT, title=alt.TitleParams(title, subtitle=subtitle))
    return tag_chart(chart, "inference_sweep")


# --- cluster -----------------------------------------------------------------------


def layout_chart(result: Mapping) -> alt.TopLevelMixin:
    """Parallel layout candidates: step time vs memory per GPU, coloured by fit."""
    title = "Layout candidates"
    candidates = get_path(result, "cluster.candidates") or []
    rows = [c for c in candidates if c.get("per_gpu_gb") is not None and c.get("step_time_s") is not None]
    if not rows:
        return not_available("layout", title, "no layout candidates for this plan")
    rows = rows[:5000]
    chosen = {k: get_path(result, f"cluster.{k}") for k in ("tensor_parallel", "pipeline_parallel", "data_parallel",
                                                       "zero_stage")}
    any_fits = any("fits" in row for row in rows)
    points_rows = []
    for row in rows:
        point = {"tensor_parallel": None, "pipeline_parallel": None, "data_parallel": None, "zero_stage": None,
                 "micro_batch": None, **row}
        point["layout"] = (f"TP{point['tensor_parallel']} PP{point['pipeline_parallel']} "
                           f"DP{point['data_parallel']} ZeRO{point['zero_stage']}")
        point["fits"] = point.get("fits") if any_fits else True
        point["chosen"] = all(row.get(k) == v for k, v in chosen.items())
        point["role"] = "chosen" if point["chosen"] else "other candidates"
        points_rows.append(point)
    points = alt.Chart(_data(points_rows)).mark_point(filled=True, size=90).encode(
        x=alt.X("per_gpu_gb:Q", axis=alt.Axis(title="memory per GPU [GB]", labelOverlap=True)),
        y=alt.Y("step_time_s:Q", axis=alt.Axis(title="step time [s]", labelOverlap=True)),
        color=alt.Color("fits:N", scale=alt.Scale(domain=FITS_DOMAIN, range=FITS_RANGE),
                        legend=bottom_legend("memory", labelExpr="datum.value ? 'fits' : 'does not fit'")),
        shape=alt.Shape("role:N", scale=alt.Scale(domain=["chosen", "other candidates"], range=["diamond", "circle"]),
                        legend=bottom_legend("layout")),
        tooltip=[alt.Tooltip("layout:N"), alt.Tooltip("micro_batch:Q"), alt.Tooltip("per_gpu_gb:Q", format=".1f"),
                 alt.Tooltip("step_time_s:Q", format=".2f"), alt.Tooltip("fits:N")],
    )
    layers = [points]
    usable = get_path(result, "memory.usable_gb") or get_path(result, "memory.gpu_capacity_gb")
    if usable:
        layers.append(alt.Chart(_data([{"gb": float(usable)}])).mark_rule(
            color=LIMIT_COLOUR, strokeDash=[4, 3]).encode(x=alt.X("gb:Q")))
    chart = alt.layer(*layers).resolve_legend(color="independent", shape="independent")
    return tag_chart(_props(chart, width=WIDTH, height=HEIGHT, title=title), "layout")


# --- facility ----------------------------------------------------------------------


def power_rows(result: Mapping) -> list[dict]:
    """Facility power by part [kW]: GPUs, rest of servers, network, storage, cooling/PUE overhead.

    Parts are read from the facility step; "rest of servers" and "cooling and
    overhead" are the remainders of its own totals (servers_kw - gpu_kw,
    total_kw - it_kw), so the bar adds up to ``facility.total_kw``.
    """
    f = (result or {}).get("facility") or {}
    total, it = f.get("total_kw"), f.get("it_kw")
    if total is None or it is None:
        return []
    gpu, servers = f.get("gpu_kw"), f.get("servers_kw")
    rows = []
    if gpu is not None and servers is not None:
        rows += [{"part": "GPUs", "kw": gpu}, {"part": "rest of servers", "kw": servers - gpu}]
    elif servers is not None:
        rows.append({"part": "servers", "kw": servers})
    for key, label in (("network_kw", "network"), ("storage_kw", "storage")):
        if f.get(key) is not None:
            rows.append({"part": label, "kw": f[key]})
    if not rows:
        rows.append({"part": "IT", "kw": it})
    rows.append({"part": "cooling and overhead (PUE)", "kw": total - it})
    return [dict(r, kw=float(r["kw"])) for r in rows]


def power_chart(result: Mapping) -> alt.TopLevelMixin:
    """Facility power breakdown (stacked) with the rule-of-thumb band [kW].

    The band is servers + 30-40% (DCS Global quick reference, power rule)
    [seed-ai-training-quick-reference].
    """
    title = "Facility power"
    rows = power_rows(result)
    if not rows:
        return not_available("power", title)
    rows = [dict(row, order=i, what="detailed model") for i, row in enumerate(rows)]
    unit_mw = get_path(result, "facility.total_kw", 0) >= KW_PER_MW
    bars = alt.Chart(_data(rows)).mark_bar().encode(
        x=alt.X("sum(kw):Q", axis=alt.Axis(title="kW", format=",d", labelOverlap=True)),
        y=alt.Y("what:N", title=None),
        color=alt.Color("part:N", sort=[row["part"] for row in rows], legend=bottom_legend()),
        order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("part:N"), alt.Tooltip("kw:Q", format=",.1f", title="kW")],
    )
    layers = [bars]
    low, high = get_path(result, "facility.rule_of_thumb_kw_low"), get_path(result, "facility.rule_of_thumb_kw_high")
    if low is not None and high is not None:
        band = [{"what": "rule of thumb", "low": float(low), "high": float(high)}]
        layers.append(alt.Chart(_data(band)).mark_bar(color="#bbb", opacity=0.8).encode(
            x=alt.X("low:Q"), x2=alt.X2("high:Q"), y=alt.Y("what:N"),
            tooltip=[alt.Tooltip("low:Q", format=",.1f"), alt.Tooltip("high:Q", format=",.1f")]))
    total = get_path(result, "facility.total_kw")
    subtitle = f"total {total / KW_PER_MW:.2f} MW" if unit_mw else f"total {total:,.0f} kW"
    chart = _props(alt.layer(*layers), width=WIDTH, height=110, title=alt.TitleParams(title, subtitle=subtitle))
    return tag_chart(chart, "power")


def racks_chart(result: Mapping) -> alt.TopLevelMixin:
    """Compute and other racks, with the rack's actual power against its budget."""
    title = "Racks"
    compute, other = get_path(result, "facility.compute_racks"), get_path(result, "facility.other_racks")
    if compute is None and get_path(result, "facility.racks") is None:
        return not_available("racks", title)
    rows = ([{"kind": "compute", "racks": float(compute)}, {"kind": "network, storage, other",
                                                             "racks": float(other or 0)}]
            if compute is not None else [{"kind": "all", "racks": float(get_path(result, "facility.racks"))}])
    chart = alt.Chart(_data(dict(row, what="racks") for row in rows)).mark_bar().encode(
        x=alt.X("sum(racks):Q", axis=count_axis("racks")), y=alt.Y("what:N", title=None),
        color=alt.Color("kind:N", scale=alt.Scale(scheme="tableau10"), legend=bottom_legend()),
        tooltip=[alt.Tooltip("kind:N"), alt.Tooltip("racks:Q")])
    actual, budget = get_path(result, "facility.rack_kw_actual"), get_path(result, "facility.rack_kw_budget")
    subtitle = f"{actual:.1f} kW per compute rack of {budget:.0f} kW budget" if actual and budget else ""
    chart = _props(chart, width=WIDTH, height=70, title=alt.TitleParams(title, subtitle=subtitle))
    return tag_chart(chart, "racks")


def facility_chart(result: Mapping) -> alt.TopLevelMixin:
    """Power breakdown above the racks."""
    chart = alt.vconcat(_inner(power_chart(result)), _inner(racks_chart(result))).resolve_scale(color="independent")
    return tag_chart(chart, "facility",
                 available=bool(power_rows(result)))


def growth_chart(result: Mapping) -> alt.TopLevelMixin:
    """Total power and racks for each year of planned growth."""
    title = "Growth by year"
    growth = get_path(result, "facility.growth") or []
    if len(growth) < 2:
        return not_available("growth", title, "no growth planned")
    base = alt.Chart(_data(growth)).encode(x=alt.X("year:O", title="year"))
    kw = base.mark_bar(color=ONPREM_COLOUR).encode(y=alt.Y("total_kw:Q", axis=count_axis("facility power [kW]")),
                                                   tooltip=[alt.Tooltip("year:O"), alt.Tooltip("gpus:Q"),
                                                            alt.Tooltip("total_kw:Q"), alt.Tooltip("racks:Q")])
    racks = base.mark_line(point=True, color="#333").encode(y=alt.Y("racks:Q", axis=count_axis("racks")))
    chart = _props(alt.layer(kw, racks).resolve_scale(y="independent"), width=WIDTH, height=HEIGHT, title=title)
    return tag_chart(chart, "growth")


# --- cost --------------------------------------------------------------------------


def cumulative_cost_chart(result: Mapping) -> alt.TopLevelMixin:
    """Cumulative cost by month, cloud vs on-prem, with the breakeven month marked."""
    title = "If you keep the cluster: cumulative cost"
    monthly = get_path(result, "cost.monthly") or []
    if not monthly:
        return not_available("cumulative_cost", title)
    long = _long(monthly[:2000], "month", OPTIONS, "option", "usd")
    lines = alt.Chart(_data(long)).mark_line().encode(
        x=alt.X("month:Q", axis=alt.Axis(title="month", labelOverlap=True)),
        y=alt.Y("usd:Q", axis=usd_axis("cumulative cost")),
        color=alt.Color("option:N", scale=OPTION_SCALE, legend=bottom_legend()),
        tooltip=[alt.Tooltip("month:Q"), alt.Tooltip("option:N"), alt.Tooltip("usd:Q", format="$,.0f")],
    )
    layers = [lines]
    months = get_path(result, "cost.breakeven_months")
    last = max((row.get("month") or 0) for row in monthly[:2000])
    beyond = months is not None and months > last  # after the period drawn: said in the subtitle, not drawn
    if months is not None and not beyond:
        mark = _data([{"month": float(months), "label": f"breakeven {breakeven_text(months)}"}])
        rule = alt.Chart(mark).mark_rule(color=LIMIT_COLOUR, strokeDash=[5, 3]).encode(x=alt.X("month:Q"))
        text = alt.Chart(mark).mark_text(align="left", dx=4, dy=-6, color=LIMIT_COLOUR).encode(
            x=alt.X("month:Q"), y=alt.YValue(8), text=alt.Text("label:N"))
        layers += [rule, text]
    subtitle = ("renting vs owning: owning does not break even in the period" if months is None else
                f"renting vs owning: owning breaks even after {breakeven_text(months)}, past the period" if beyond
                else "renting vs owning, month by month")
    chart = _props(alt.layer(*layers), width=WIDTH, height=HEIGHT, title=alt.TitleParams(title, subtitle=subtitle))
    return tag_chart(chart, "cumulative_cost")


UTILISATION_SWEEP_COLUMNS = ["utilisation", "cloud_usd", "onprem_usd"]


def utilisation_sweep(plan_or_result: Any, utilisations: Iterable[float] | None = None) -> pd.DataFrame:
    """cloud_usd and onprem_usd at several ``cost.utilisation`` values (``aiplan.cost.utilisation_curve``)."""
    import pandas as pd

    return pd.DataFrame(utilisation_sweep_rows(plan_or_result, utilisations), columns=UTILISATION_SWEEP_COLUMNS)


def utilisation_sweep_rows(plan_or_result: Any, utilisations: Iterable[float] | None = None) -> list[dict]:
    """:func:`utilisation_sweep` as a list of dicts."""
    if utilisations is None:
        utilisations = (0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 1.0)
    is_result = isinstance(plan_or_result, Mapping) and "plan" in plan_or_result and "memory" in plan_or_result
    result = plan_or_result if is_result else _evaluate_quiet(_as_plan(plan_or_result))
    if result is None:
        return []
    curve = utilisation_curve(load_plan(result["plan"]), result, list(utilisations))
    n = len(curve["utilisation"])
    columns = {k: list(curve[k]) if curve[k] is not None else [None] * n for k in UTILISATION_SWEEP_COLUMNS}
    return [{k: to_plain(columns[k][i]) for k in UTILISATION_SWEEP_COLUMNS} for i in range(n)]


def utilisation_chart(plan_or_result: Any, utilisations: Iterable[float] | None = None,
                      sweep: pd.DataFrame | list[dict] | None = None, breakeven_utilisation: float | None = None
                      ) -> alt.TopLevelMixin:
    """Total cost vs utilisation, cloud vs on-prem, with the crossover (breakeven utilisation) marked."""
    title = "If you keep the cluster: cost vs utilisation"
    rows = _records(sweep) if sweep is not None else utilisation_sweep_rows(plan_or_result, utilisations)
    long = _long(rows, "utilisation", OPTIONS, "option", "usd")
    if not long:
        return not_available("utilisation", title)
    lines = alt.Chart(_data(long)).mark_line(point=True).encode(
        x=alt.X("utilisation:Q", axis=alt.Axis(title="utilisation", format="%", labelOverlap=True)),
        y=alt.Y("usd:Q", axis=usd_axis("cost over the ownership period")),
        color=alt.Color("option:N", scale=OPTION_SCALE, legend=bottom_legend()),
        tooltip=[alt.Tooltip("utilisation:Q", format=".0%"), alt.Tooltip("option:N"),
                 alt.Tooltip("usd:Q", format="$,.0f")],
    )
    layers = [lines]
    if breakeven_utilisation is None and isinstance(plan_or_result, Mapping):
        breakeven_utilisation = get_path(plan_or_result, "cost.breakeven_utilisation")
    if breakeven_utilisation is not None:
        mark = _data([{"u": float(breakeven_utilisation), "label": f"crossover {breakeven_utilisation:.0%}"}])
        layers.append(alt.Chart(mark).mark_rule(color=LIMIT_COLOUR, strokeDash=[5, 3]).encode(x=alt.X("u:Q")))
        layers.append(alt.Chart(mark).mark_text(align="left", dx=4, color=LIMIT_COLOUR).encode(
            x=alt.X("u:Q"), y=alt.YValue(8), text=alt.Text("label:N")))
    return tag_chart(_props(alt.layer(*layers), width=WIDTH, height=HEIGHT, title=title), "utilisation")


def sensitivity_chart(result: Mapping, option: str = "onprem") -> alt.TopLevelMixin:
    """Tornado of cost drivers for one option (``onprem`` or ``cloud``): low..high around the base [USD].

    The cost is the one :func:`aiplan.cost.sensitivity` varies: the training run's cost for a
    training plan, the cost over the ownership period otherwise; the title says which.
    """
    what = "on owned hardware" if option == "onprem" else "renting"
    rows = [r for r in (get_path(result, "cost.sensitivity") or []) if r.get("option") == option
            and r.get("low_usd") is not None and r.get("high_usd") is not None]
    if not rows:
        return not_available("sensitivity", f"What moves the cost {what}")
    # a training plan's tornado is centred on its run cost (aiplan.cost.sensitivity), else on the period's
    is_run = get_path(result, f"cost.{'onprem' if option == 'onprem' else 'cloud'}_run_usd") is not None
    cost = "run cost" if is_run else "cost over the ownership period"
    title = alt.TitleParams("What moves the run cost" if is_run else "What moves the cost",
                            subtitle=[f"the run {what}" if is_run else f"{cost} {what}",
                                      "each driver 20% lower and higher"])
    rows = [dict(row, lo=min(row["low_usd"], row["high_usd"]), hi=max(row["low_usd"], row["high_usd"]),
                 label=DRIVER_LABELS.get(row["driver"], str(row["driver"]).replace("_", " "))) for row in rows]
    # a driver that moves nothing is not drawn (MFU for a service, the server price for renting)
    rows = [dict(row, swing_usd=row["hi"] - row["lo"]) for row in rows
            if row["hi"] - row["lo"] > 1e-9 * abs(float(row["base_usd"]))]
    if not rows:
        return not_available("sensitivity", f"What moves the cost {what}", "no driver moves it")
    order = [row["label"] for row in sorted(rows, key=lambda row: -row["swing_usd"])]
    bars = alt.Chart(_data(rows)).mark_bar(color=ONPREM_COLOUR if option == "onprem" else CLOUD_COLOUR).encode(
        x=alt.X("lo:Q", axis=usd_axis(cost), scale=alt.Scale(zero=False)),
        x2=alt.X2("hi:Q"),
        y=alt.Y("label:N", sort=order, title=None),
        tooltip=[alt.Tooltip("label:N", title="driver"), alt.Tooltip("low_usd:Q", format="$,.0f", title="20% lower"),
                 alt.Tooltip("high_usd:Q", format="$,.0f", title="20% higher")],
    )
    rule = alt.Chart(_data([{"base": float(rows[0]["base_usd"])}])).mark_rule(color="#333").encode(
        x=alt.X("base:Q"))
    chart = _props(alt.layer(bars, rule), width=WIDTH, height=max(80, 22 * len(rows)), title=title)
    return tag_chart(chart, "sensitivity")


# --- comparison --------------------------------------------------------------------

#: metrics shown side by side: (label, section, key)
COMPARE_METRICS = (
    ("GPUs", None, None),
    ("memory per GPU [GB]", "memory", "per_gpu_gb"),
    ("wall-clock days", "compute", "wall_clock_days"),
    ("total power [kW]", "facility", "total_kw"),
    ("racks", "facility", "racks"),
    ("cloud cost [USD]", "cost", "cloud_usd"),
    ("on-prem cost [USD]", "cost", "onprem_usd"),
    ("breakeven [months]", "cost", "breakeven_months"),
)


def comparison_columns(results: Sequence[Mapping], names: Sequence[str] | None = None) -> dict[str, list]:
    """Key metrics of several results: plan name -> values in :data:`COMPARE_METRICS` order."""
    names = list(names) if names else [((r.get("plan") or {}).get("name") or f"plan {i + 1}")
                                       for i, r in enumerate(results)]
    return {name: [gpu_count(res) if section is None else get_path(res, f"{section}.{key}")
                   for _, section, key in COMPARE_METRICS] for name, res in zip(names, results)}


def comparison_table(results: Sequence[Mapping], names: Sequence[str] | None = None) -> pd.DataFrame:
    """Key metrics of several results, one column per plan."""
    import pandas as pd

    return pd.DataFrame(comparison_columns(results, names), index=[label for label, _, _ in COMPARE_METRICS])


def comparison_chart(results: Sequence[Mapping], names: Sequence[str] | None = None) -> alt.TopLevelMixin:
    """Two to four plans side by side: one small bar chart per key metric."""
    title = "Scenario comparison"
    columns = comparison_columns(results, names)
    long = [{"metric": label, "plan": plan, "value": float(values[i])}
            for plan, values in columns.items() for i, (label, _, _) in enumerate(COMPARE_METRICS)
            if to_plain(values[i]) is not None]
    if not long:
        return not_available("comparison", title)
    chart = alt.Chart(_data(long)).mark_bar().encode(
        x=alt.X("value:Q", title=None, axis=alt.Axis(labelExpr=COMPACT_LABEL_EXPR, labelOverlap=True)),
        y=alt.Y("plan:N", title=None, sort=list(columns)),
        color=alt.Color("plan:N", legend=None, sort=list(columns)),
        tooltip=[alt.Tooltip("plan:N"), alt.Tooltip("metric:N"), alt.Tooltip("value:Q", format=",.4~g")],
    ).properties(width=230, height=22 * len(columns)).facet(
        facet=alt.Facet("metric:N", title=None, sort=[m[0] for m in COMPARE_METRICS]), columns=2,
    ).resolve_scale(x="independent").properties(title=title)
    return tag_chart(chart, "comparison")


#: all single-result chart builders by name (the app and the report iterate over these)
RESULT_CHARTS = {
    "memory": memory_chart,
    "layout": layout_chart,
    "power": power_chart,
    "racks": racks_chart,
    "facility": facility_chart,
    "growth": growth_chart,
    "cumulative_cost": cumulative_cost_chart,
    "sensitivity": sensitivity_chart,
}
#: chart builders that evaluate the plan again over a sweep (slower; take a plan or a result)
SWEEP_CHARTS = {
    "training_sweep": training_sweep_chart,
    "inference_sweep": inference_sweep_chart,
    "utilisation": utilisation_chart,
}


def is_available(chart: alt.TopLevelMixin) -> bool:
    """True unless the chart is a "not available" note."""
    meta = getattr(chart, "usermeta", alt.Undefined)
    if meta is alt.Undefined or not isinstance(meta, dict):
        return True
    return bool(meta.get("aiplan", {}).get("available", True))


# --- options and validation ----------------------------------------------------------------------


def pareto_chart(rows, deadline_days=None, width=560, height=320, limit=20):
    """Time against cost, one point per option with P10–P90 whiskers; the deadline as a line.

    Training: median days (x) against median run cost (y), the Pareto front joined by a line.
    Serving: GPUs (x) against cost per month (y). The best ``limit`` ranked options are drawn
    (excluded options never).
    """
    import pandas as pd

    live = sorted((r for r in rows if not r["excluded"]), key=lambda r: r["rank"] or math.inf)[:limit]
    serving = are_serving(live)
    front = {id(r) for r in pareto_front(live)}
    data = pd.DataFrame([{
        "Option": " · ".join((r["gpu_name"], r.get("offer_name") or "",
                              PRICING_LABELS.get(r["pricing"], r["pricing"]))),
        "Pricing": PRICING_LABELS.get(r["pricing"], r["pricing"]), "GPUs": r["gpus"],
        "Days": r.get("days_p50"), "Days P10": r.get("days_p10"), "Days P90": r.get("days_p90"),
        "Cost": r.get("usd_per_month") if serving else r.get("run_cost_usd_p50"),
        "Cost P10": r.get("run_cost_usd_p10"), "Cost P90": r.get("run_cost_usd_p90"),
        "Cost text": format_value(r.get("usd_per_month") if serving else r.get("run_cost_usd_p50"), "usd"),
        "On the front": id(r) in front, "Rank": r["rank"]} for r in live])
    money = alt.Axis(labelExpr="datum.value >= 1e9 ? '$' + format(datum.value / 1e9, '.3~g') + 'B' : "
                               "datum.value >= 1e6 ? '$' + format(datum.value / 1e6, '.3~g') + 'M' : "
                               "datum.value >= 1e3 ? '$' + format(datum.value / 1e3, '.3~g') + 'K' : "
                               "'$' + format(datum.value, '.3~g')", labelOverlap=True)
    color = alt.Color("Pricing:N", legend=alt.Legend(orient="bottom", title=None, labelLimit=200))
    tooltip = ["Rank:Q", "Option:N", "GPUs:Q", alt.Tooltip("Cost text:N", title="Cost")]
    if serving:
        points = alt.Chart(data).mark_circle(size=70).encode(
            x=alt.X("GPUs:Q", title="GPUs", axis=alt.Axis(labelOverlap=True)),
            y=alt.Y("Cost:Q", title="Cost per month", axis=money, scale=alt.Scale(zero=False)),
            color=color, tooltip=tooltip)
        title = f"Cost per month against GPUs, the best {len(live)} options"
        return tag_chart(points.properties(width=width, height=height, title=title), "alternatives")
    tooltip += [alt.Tooltip("Days:Q", format=",.1f", title="Days (median)")]
    base = alt.Chart(data)
    x = alt.X("Days:Q", title="Days to train (median, P10–P90 whiskers)", scale=alt.Scale(zero=False),
              axis=alt.Axis(labelOverlap=True))
    y = alt.Y("Cost:Q", title="Run cost (median, P10–P90 whiskers)", axis=money, scale=alt.Scale(type="log"))
    layers = [
        base.mark_rule(opacity=0.35).encode(x=alt.X("Days P10:Q"), x2="Days P90:Q", y=y, color=color),
        base.mark_rule(opacity=0.35).encode(
            x=x, y=alt.Y("Cost P10:Q", axis=money, scale=alt.Scale(type="log")), y2="Cost P90:Q", color=color),
        base.transform_filter("datum['On the front']").mark_line(color="#444", strokeDash=[3, 3]).encode(
            x=x, y=y, order="Days:Q"),
        base.mark_circle(size=70, opacity=0.9).encode(x=x, y=y, color=color, tooltip=tooltip),
    ]
    if deadline_days:
        rule = alt.Chart(pd.DataFrame({"Deadline": [deadline_days]})).mark_rule(color="#c0392b", strokeWidth=2)
        layers.append(rule.encode(x="Deadline:Q"))
        layers.append(rule.mark_text(align="left", dx=4, dy=-6, color="#c0392b", text="deadline").encode(
            x="Deadline:Q", y=alt.value(8)))
    title = f"Time against cost, the best {len(live)} options (dashed: the best trade-offs)"
    return tag_chart(alt.layer(*layers).properties(width=width, height=height, title=title), "alternatives")


def validation_chart(rows):
    """Predicted against published for every case, one panel per figure, log scales, y = x dashed."""
    import pandas as pd

    data = pd.DataFrame([{"Figure": r["set"], "Case": r["name"], "GPU": r["gpu"],
                          "Published": r["published"], "Predicted": r["predicted_loo"],
                          "Cases are": "checked against (never fitted)" if r["role"] == "check"
                          else "fitted on (own source left out)"}
                         for r in rows if r["published"] and r["predicted_loo"] and r["predicted_loo"] > 0])
    panels = []
    for name, part in data.groupby("Figure", sort=False):
        lo, hi = float(min(part.Published.min(), part.Predicted.min())), float(max(part.Published.max(),
                                                                                   part.Predicted.max()))
        line = alt.Chart(pd.DataFrame({"x": [lo, hi]})).mark_line(strokeDash=[4, 4], color="#888").encode(
            x=alt.X("x:Q", scale=alt.Scale(type="log")), y=alt.Y("x:Q", scale=alt.Scale(type="log")))
        points = alt.Chart(part).mark_circle(size=40, opacity=0.7).encode(
            x=alt.X("Published:Q", scale=alt.Scale(type="log"),
                    title=f"Published ({VALIDATION_UNIT_TITLES.get(name, '')})"),
            y=alt.Y("Predicted:Q", scale=alt.Scale(type="log"), title="Predicted"),
            color=alt.Color("Cases are:N", legend=alt.Legend(orient="bottom", labelLimit=400)),
            tooltip=["Case", "GPU", alt.Tooltip("Published:Q", format=",.3~g"),
                     alt.Tooltip("Predicted:Q", format=",.3~g")])
        panels.append((line + points).properties(title=name, width=260, height=240))
    return alt.hconcat(*panels).resolve_scale(color="shared")


VALIDATION_UNIT_TITLES = {"Training GPU-hours": "GPU-hours", "MLPerf Training time-to-train": "minutes",
                "Steady-state MFU": "MFU", "Serving throughput": "tokens/s"}
