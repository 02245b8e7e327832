"""Charts as people read them: money axes in $K/$M/$B, no label cut short, the run's cost in the headline.

Charts are drawn with vl-convert (the same Vega the browser and the report run), and the texts of
the drawn SVG are checked.
"""

from __future__ import annotations

import re

import pytest

alt = pytest.importorskip("altair")
vlc = pytest.importorskip("vl_convert")

from conftest import PLANS  # noqa: E402

from aiplan import evaluate  # noqa: E402
from aiplan.present import charts as C  # noqa: E402

PLAN_FILES = ["example", "inference", "does-not-fit"]
MONEY = re.compile(r"^-?\$\d{1,3}(\.\d{1,2})?[KMB]?$")


@pytest.fixture(scope="module")
def results():
    return {name: evaluate(PLANS / f"{name}.yaml") for name in PLAN_FILES}


def texts(chart) -> list[str]:
    """Every text the drawn chart shows (axis labels, titles, legends), unescaped."""
    svg = vlc.vegalite_to_svg(chart.to_dict())
    out = []
    for body in re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S):
        lines = re.findall(r"<tspan[^>]*>([^<]*)</tspan>", body) if "<tspan" in body else [body]
        out += [t.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">") for t in lines]
    return out


def axis_labels(chart, axis_title: str) -> list[str]:
    """Labels of the axis titled ``axis_title``: the texts drawn just before the title."""
    shown = texts(chart)
    end = shown.index(axis_title)
    labels = []
    for text in reversed(shown[:end]):
        if not MONEY.match(text):
            break
        labels.append(text)
    return labels[::-1]


@pytest.mark.parametrize("name", ["cumulative_cost", "utilisation", "sensitivity", "training_sweep"])
def test_money_axes_read_in_k_m_b_dollars(results, name):
    chart = {**C.RESULT_CHARTS, **C.SWEEP_CHARTS}[name](results["example"])
    title = {"cumulative_cost": "cumulative cost", "utilisation": "cost over the ownership period",
             "sensitivity": "run cost", "training_sweep": "run cost"}[name]
    labels = axis_labels(chart, title)
    assert len(labels) >= 2, texts(chart)
    assert not any(label.endswith("G") for label in texts(chart))


def test_the_usd_label_expression_matches_the_formatter():
    """Axis labels read as the app's cards do (:func:`format_value`), trailing zeros trimmed."""
    from aiplan.core.fields import format_value

    values = [2.0e9, 4.99e6, 127.7e6, 850e3, 12.5e3, 40.0]
    chart = alt.Chart(alt.InlineData(values=[{"v": v} for v in values])).mark_point().encode(
        y=alt.Y("v:Q", scale=alt.Scale(type="log"), axis=alt.Axis(values=values, labelExpr=C.USD_LABEL_EXPR)))
    drawn = [t for t in texts(chart) if t.startswith("$")]
    trimmed = [re.sub(r"\.(\d*?)0+(?=[KMB]?$)", lambda m: "." + m[1] if m[1] else "", format_value(v, "usd"))
               for v in values]
    assert sorted(drawn) == sorted(trimmed) == sorted(["$2B", "$4.99M", "$128M", "$850K", "$12.5K", "$40"])


@pytest.mark.parametrize("plan", PLAN_FILES)
def test_no_label_or_legend_entry_is_cut_short(results, plan):
    for name, builder in {**C.RESULT_CHARTS, **C.SWEEP_CHARTS}.items():
        shown = texts(builder(results[plan]))
        cut = [t for t in shown if t.endswith("…")]
        assert not cut, f"{name}: {cut}"
        assert not [t for t in shown if re.fullmatch(r"[a-z]+_[a-z_]+", t)], f"{name}: {shown}"
        assert "true" not in shown and "false" not in shown, f"{name}: {shown}"


def test_the_training_headline_shows_the_run_cost_not_the_fleet(results):
    res = results["example"]
    rows = C.gpu_sweep_rows(res, [C.gpu_count(res)])
    assert rows[0]["cloud_run_usd"] == pytest.approx(res["cost"]["cloud_run_usd"])
    chart = C.training_sweep_chart(res, sweep=rows)
    spec = chart.to_dict()
    folds = [t["fold"] for part in spec["vconcat"] for layer in part["layer"] for t in layer.get("transform", [])
             if "fold" in t]
    assert folds == [["cloud_run_usd", "onprem_run_usd"]]
    drawn = [r for ds in spec["datasets"].values() for r in ds]
    assert drawn[0]["onprem_run_usd"] == res["cost"]["onprem_run_usd"]
    assert "Cost of this run" in texts(chart)


def test_the_sensitivity_chart_names_the_cost_it_varies(results):
    training = texts(C.sensitivity_chart(results["example"]))
    serving = texts(C.sensitivity_chart(results["inference"]))
    assert "What moves the run cost" in training and "the run on owned hardware" in training
    assert "What moves the cost" in serving and "cost over the ownership period on owned hardware" in serving
    assert "server price" in training and "gpu_price" not in training
