"""Widget panels driven by setting ``.value`` in plain pytest (no kernel, no browser).

The displayed figures must equal what aiplan.evaluate gives for the same plan.
"""

from __future__ import annotations

import base64
import csv
import datetime
import io
import re

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")

import yaml  # noqa: E402
from conftest import PLANS  # noqa: E402

from aiplan import PlanError, evaluate, load_plan  # noqa: E402
from aiplan.fields import format_value as fmt  # noqa: E402
from aiplan.ui import CompareApp, PlannerApp, compare, step_app  # noqa: E402
from aiplan.ui.controls import parse_number_text  # noqa: E402
from aiplan.ui.figures import findings_html, key_figures  # noqa: E402


def shown(app: PlannerApp, fig_id: str) -> float | None:
    """The raw value the app shows in ``<span id="aiplan-<fig_id>" data-value=...>``."""
    m = re.search(rf'id="aiplan-{fig_id}" data-value="([^"]*)"', app.figures.value)
    assert m, f"no element aiplan-{fig_id}"
    return float(m.group(1)) if m.group(1) else None


@pytest.fixture
def app():
    return PlannerApp(PLANS / "example.yaml")


def test_initial_figures_equal_evaluate(app):
    direct = evaluate(PLANS / "example.yaml")
    assert app.error is None
    assert shown(app, "memory-per-gpu") == pytest.approx(direct["memory"]["per_gpu_gb"])
    assert shown(app, "gpu-capacity") == pytest.approx(direct["memory"]["gpu_capacity_gb"])
    assert shown(app, "onprem-cost") == pytest.approx(direct["cost"]["onprem_usd"])
    assert shown(app, "cloud-cost") == pytest.approx(direct["cost"]["cloud_usd"])
    assert shown(app, "racks") == pytest.approx(direct["facility"]["racks"])
    assert shown(app, "breakeven") == pytest.approx(direct["cost"]["breakeven_months"])


def test_changing_the_gpu_recomputes_and_follows_its_server(app):
    before = shown(app, "gpu-capacity")
    app.controls.widgets["cluster.gpu"].value = "b200"
    plan = app.controls.plan_dict()
    assert plan["cluster"]["gpu"] == "b200"
    assert "server" not in plan.get("facility", {}) and "cloud" not in plan.get("cost", {})
    direct = evaluate(plan)
    assert app.error is None
    assert shown(app, "gpu-capacity") == pytest.approx(direct["memory"]["gpu_capacity_gb"]) != before
    assert shown(app, "memory-per-gpu") == pytest.approx(direct["memory"]["per_gpu_gb"])
    assert app.controls.widgets["facility.server"].value == direct["plan"]["facility"]["server"]
    assert all(opt[1] is None or "b200" in opt[1] for opt in app.controls.widgets["facility.server"].options)


def test_gpu_count_text_field(app):
    app.controls.widgets["cluster.gpus"].value = "512"
    direct = evaluate(app.controls.plan_dict())
    assert app.controls.plan_dict()["cluster"]["gpus"] == 512
    assert shown(app, "gpus") == 512
    assert shown(app, "onprem-cost") == pytest.approx(direct["cost"]["onprem_usd"])
    app.controls.widgets["cluster.gpus"].value = ""  # back to auto: the deadline decides
    assert "gpus" not in app.controls.plan_dict()["cluster"]


def test_slider_changes_cost(app):
    before = shown(app, "cloud-cost")
    app.controls.widgets["cost.utilisation"].value = 0.35
    direct = evaluate(app.controls.plan_dict())
    assert direct["plan"]["cost"]["utilisation"] == pytest.approx(0.35)
    assert shown(app, "cloud-cost") == pytest.approx(direct["cost"]["cloud_usd"]) != before


def test_invalid_combination_shows_the_plan_error_inline(app):
    app.controls.widgets["cluster.tensor_parallel"].value = "3"
    assert isinstance(app.error, PlanError)
    assert "cluster.tensor_parallel" in app.problems.value and "Traceback" not in app.problems.value
    app.controls.widgets["cluster.tensor_parallel"].value = "abc"
    assert "cluster.tensor_parallel" in app.problems.value
    app.controls.widgets["cluster.tensor_parallel"].value = ""
    assert app.error is None and app.problems.value == ""


def test_workload_kind_switches_fields(app):
    w = app.controls.widgets
    assert w["workload.tokens"].layout.display is None
    w["workload.kind"].value = "inference"
    assert app.error is None
    assert w["workload.tokens"].layout.display == "none"
    assert w["workload.requests_per_s"].layout.display is None
    assert "tokens" not in app.controls.plan_dict()["workload"]
    assert app.result["inference"] == evaluate(app.controls.plan_dict())["inference"]


def test_model_and_preset_dropdowns(app):
    app.controls.model.value = "llama-3.1-8b"
    assert app.result["plan"]["model"] == "llama-3.1-8b"
    app.controls.preset.value = str(PLANS / "inference.yaml")
    assert app.result["plan"]["name"] == load_plan(PLANS / "inference.yaml").data["name"]
    assert app.controls.widgets["workload.kind"].value == "inference"


def test_save_and_load_round_trip(app, tmp_path):
    app.controls.widgets["cluster.gpus"].value = "256"
    path = app.save(tmp_path / "saved.yaml")
    saved = yaml.safe_load(open(path))
    assert saved["cluster"]["gpus"] == 256
    other = PlannerApp(PLANS / "inference.yaml")
    other.load_text(open(path).read())
    assert other.controls.plan_dict() == app.controls.plan_dict()
    assert shown(other, "onprem-cost") == pytest.approx(shown(app, "onprem-cost"))
    other.load_text("model: [unclosed")
    assert "not valid YAML" in other.problems.value


def test_upload_widget_loads_a_plan(app):
    content = (PLANS / "finetune-lora.yaml").read_bytes()
    app.upload.value = ({"name": "finetune-lora.yaml", "type": "", "size": len(content), "content": content,
                         "last_modified": datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)},)
    assert app.result["plan"]["workload"]["kind"] == "finetune"


def test_download_links_hold_plan_json_and_csv(app):
    links = dict(re.findall(r'id="([^"]+)"[^>]*href="data:[^;]+;base64,([^"]+)"', app.downloads.value))
    plan_text = base64.b64decode(links["aiplan-save-yaml"]).decode()
    assert load_plan(yaml.safe_load(plan_text)).data == load_plan(PLANS / "example.yaml").data
    rows = list(csv.DictReader(io.StringIO(base64.b64decode(links["aiplan-download-csv"]).decode())))
    racks = [r for r in rows if r["section"] == "facility" and r["key"] == "racks"][0]
    assert float(racks["value"]) == app.result["facility"]["racks"]
    assert b'"cost"' in base64.b64decode(links["aiplan-download-json"])


def test_chart_panes_draw_the_selected_chart(app):
    pane = app.panes[1]
    assert pane.widget.spec["usermeta"]["aiplan"]["chart"] == "cumulative_cost"
    pane.selector.value = "Sensitivity"
    assert pane.widget.spec["usermeta"]["aiplan"]["chart"] == "sensitivity"


def test_findings_are_coloured_by_severity():
    html = findings_html([{"id": "a", "severity": "info", "message": "fyi", "source": "S1"},
                          {"id": "b", "severity": "critical", "message": "<boom>", "source": ""}])
    assert html.index("critical") < html.index("info")
    assert "#c62828" in html and "&lt;boom&gt;" in html


def test_key_figures_have_raw_values():
    res = evaluate(PLANS / "example.yaml")
    figs = {f["id"]: f for f in key_figures(res)}
    assert figs["power-mw"]["value"] * 1000 == pytest.approx(res["facility"]["total_kw"])
    assert figs["cloud-cost"]["value"] == res["cost"]["cloud_usd"]


def test_parse_number_text_and_fmt():
    assert parse_number_text("") is None and parse_number_text("auto") is None
    assert parse_number_text("8") == 8 and parse_number_text("2e12") == 2e12
    assert parse_number_text("eight") == "eight"
    assert fmt(None) == "n/a" and fmt(1.5e6, "usd") == "$1.50M" and fmt(47.9, "gb") == "47.9 GB"


@pytest.mark.parametrize("step", ["model", "cluster", "facility", "cost"])
def test_step_apps(step):
    app = step_app(step, PLANS / "example.yaml")
    assert app.error is None
    assert shown(app, "racks") == evaluate(PLANS / "example.yaml")["facility"]["racks"]


def test_compare():
    paths = [str(PLANS / "example.yaml"), str(PLANS / "moe-pretrain.yaml")]
    results, table, _chart = compare(paths)
    assert table.iloc[:, 0]["racks"] == evaluate(paths[0])["facility"]["racks"]
    app = CompareApp(paths)
    assert app.chart.spec["usermeta"]["aiplan"]["chart"] == "comparison"
    app.select.value = (paths[0],)
    assert len(app.results) == 1


def test_an_internal_error_is_shown_inline_not_raised(monkeypatch):
    import aiplan.ui.app as app_module

    app = PlannerApp(str(PLANS / "example.yaml"))

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(app_module, "evaluate", broken)
    app.recompute()  # must not raise
    assert "internal error: ZeroDivisionError: division by zero" in app.problems.value
    assert isinstance(app.error, PlanError)
