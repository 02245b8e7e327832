"""Widget panels driven by setting ``.value`` in plain pytest (no kernel, no browser).

The displayed figures must equal what aiplan.evaluate gives for the same plan; nothing the user
typed is lost; a plan that cannot work says so and the fix applies; scenarios compare.
"""

from __future__ import annotations

import base64
import csv
import io
import math
import re
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")

import yaml  # noqa: E402
from conftest import PLANS  # noqa: E402

from aiplan import PlanError, evaluate, load_plan  # noqa: E402
from aiplan.analysis.fixes import suggest_fix, with_overrides  # noqa: E402
from aiplan.core.fields import RESULT_FIELDS  # noqa: E402
from aiplan.core.inputs import read_yaml  # noqa: E402
from aiplan.ui import CompareApp, PlannerApp, compare, step_app  # noqa: E402
from aiplan.ui.controls import FINETUNE_DEFAULTS, MODIFIED, gpu_short_name, parse_number_text  # noqa: E402
from aiplan.ui.figures import findings_html, humanize, key_figures  # noqa: E402

PRESETS = sorted(PLANS.glob("*.yaml"))


def shown(app: PlannerApp, fig_id: str) -> float | None:
    """The raw value the app shows in ``<span id="aiplan-<fig_id>" data-value=...>``."""
    m = re.search(rf'id="aiplan-{fig_id}" data-value="([^"]*)"', app.figures.value)
    assert m, f"no element aiplan-{fig_id}"
    return float(m.group(1)) if m.group(1) else None


def card_state(app: PlannerApp, fig_id: str) -> str:
    m = re.search(rf'class="aiplan-card ([a-z]*)" data-card="{fig_id}"', app.figures.value)
    assert m, f"no card {fig_id}"
    return m.group(1)


def page_text(app: PlannerApp) -> str:
    """The text a client reads: every HTML widget's text without its tags and styles."""
    parts = [app.header.value, app.banner.value, app.problems.value, app.figures.value, app.findings.value,
             app.board.table.value]
    text = " ".join(re.sub(r"<style>.*?</style>", " ", p, flags=re.S) for p in parts)
    return re.sub(r"<[^>]+>", " ", text)


def links_of(app: PlannerApp) -> dict[str, bytes]:
    return {k: base64.b64decode(v) for k, v in
            re.findall(r'id="([^"]+)"[^>]*href="data:[^;]+;base64,([^"]+)"', app.downloads.value)}


@pytest.fixture
def app():
    return PlannerApp(PLANS / "example.yaml")


def test_initial_figures_equal_evaluate(app):
    direct = evaluate(PLANS / "example.yaml")
    assert app.error is None
    assert shown(app, "memory-per-gpu") == pytest.approx(direct["memory"]["per_gpu_gb"])
    assert shown(app, "gpu-capacity") == pytest.approx(direct["memory"]["gpu_capacity_gb"])
    days = direct["compute"].get("wall_clock_days_p50") or direct["compute"]["wall_clock_days"]  # the median
    assert shown(app, "days") == pytest.approx(days)
    assert shown(app, "run-cost-cloud") == pytest.approx(direct["cost"]["cloud_run_usd"])
    assert shown(app, "run-cost-owned") == pytest.approx(direct["cost"]["onprem_run_usd"])
    assert shown(app, "onprem-cost") == pytest.approx(direct["cost"]["onprem_usd"])
    assert shown(app, "cloud-cost") == pytest.approx(direct["cost"]["cloud_usd"])
    assert shown(app, "racks") == pytest.approx(direct["facility"]["racks"])
    assert shown(app, "breakeven") == pytest.approx(direct["cost"]["breakeven_months"])


def test_the_run_comes_first_and_the_fleet_block_says_what_it_is(app):
    html = app.figures.value
    assert html.index('data-block="run"') < html.index('data-block="fleet"')
    assert "If you keep the cluster for 3 years at 70% utilisation" in html
    assert html.index("aiplan-run-cost-cloud") < html.index("aiplan-cloud-cost")


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


def test_gpu_count_text_field(app):
    app.controls.widgets["cluster.gpus"].value = "512"
    direct = evaluate(app.controls.plan_dict())
    assert app.controls.plan_dict()["cluster"]["gpus"] == 512
    assert shown(app, "gpus") == 512
    assert shown(app, "onprem-cost") == pytest.approx(direct["cost"]["onprem_usd"])
    app.controls.widgets["cluster.gpus"].value = ""  # back to auto: the deadline decides
    assert "gpus" not in app.controls.plan_dict()["cluster"]


def test_the_network_share_field_shows_the_share_the_kit_used(app):
    """Left empty, the network share says what the cluster got: Epoch AI's 19% for servers a fabric joins, none
    for one server; a share typed in is the plan's."""
    widget = app.controls.widgets["cost.network_cost_fraction"]
    assert widget.value == "" and widget.placeholder == "auto (19%)"
    app.controls.widgets["cluster.gpus"].value = "8"
    assert widget.placeholder == "auto (0%)"
    widget.value = "5%"
    assert app.controls.plan_dict()["cost"]["network_cost_fraction"] == pytest.approx(0.05)
    assert app.result["cost"]["network_cost_fraction"] == pytest.approx(0.05)


def test_slider_changes_cost_and_the_saved_plan_is_rounded(app, tmp_path):
    before = shown(app, "cloud-cost")
    app.controls.widgets["cost.utilisation"].value = 0.41000000000000003
    direct = evaluate(app.controls.plan_dict())
    assert shown(app, "cloud-cost") == pytest.approx(direct["cost"]["cloud_usd"]) != before
    saved = links_of(app)["aiplan-save-yaml"].decode()
    assert "utilisation: 0.41\n" in saved
    assert "utilisation: 0.41\n" in open(app.save(tmp_path / "p.yaml")).read()


def test_an_invalid_field_is_named_dims_the_figures_and_clears(app):
    app.controls.widgets["cluster.tensor_parallel"].value = "3"
    assert isinstance(app.error, PlanError)
    assert "Tensor parallel" in app.problems.value and "cluster.tensor_parallel" not in app.problems.value
    assert "Traceback" not in app.problems.value
    assert "aiplan-stale" in app.results_box._dom_classes
    assert "aiplan-invalid" in app.controls.widgets["cluster.tensor_parallel"]._dom_classes
    assert app.pin.disabled
    app.controls.widgets["cluster.tensor_parallel"].value = "abc"
    assert "Tensor parallel" in app.problems.value
    app.controls.widgets["cluster.tensor_parallel"].value = ""
    assert app.error is None and app.problems.value == ""
    assert "aiplan-stale" not in app.results_box._dom_classes
    assert "aiplan-invalid" not in app.controls.widgets["cluster.tensor_parallel"]._dom_classes


def test_workload_round_trip_keeps_every_training_field(app):
    w = app.controls.widgets
    before = app.controls.plan_dict()
    w["workload.kind"].value = "inference"
    assert app.error is None
    assert w["workload.tokens"].layout.display == "none"
    assert w["workload.requests_per_s"].layout.display is None
    assert "tokens" not in app.controls.plan_dict()["workload"]
    assert app.result["inference"] == evaluate(app.controls.plan_dict())["inference"]
    w["workload.requests_per_s"].value = "40"
    w["workload.kind"].value = "pretrain"
    assert app.error is None
    after = app.controls.plan_dict()
    assert after["workload"] == before["workload"]
    assert after["cluster"] == before["cluster"]
    assert w["workload.tokens"].value == "2T"
    w["workload.kind"].value = "inference"
    assert app.controls.plan_dict()["workload"]["requests_per_s"] == 40


def test_finetune_applies_visible_defaults(app):
    app.controls.widgets["workload.kind"].value = "finetune"
    plan = app.controls.plan_dict()["workload"]
    assert plan["method"] == FINETUNE_DEFAULTS["method"] and plan["tokens"] == FINETUNE_DEFAULTS["tokens"]
    assert app.error is None
    assert app.result["plan"]["workload"]["global_batch_tokens"] == evaluate(app.controls.plan_dict())["plan"][
        "workload"]["global_batch_tokens"] != 16e6
    assert app.controls.widgets["workload.lora_rank"].layout.display is None


def test_preset_shows_modified_and_choosing_it_again_reloads(app):
    example = app.controls.preset.value
    app.controls.widgets["cluster.gpus"].value = "512"
    assert app.controls.preset.value == MODIFIED
    assert app.controls.preset.options[0][0].endswith("(modified)")
    app.controls.preset.value = example
    assert "gpus" not in app.controls.plan_dict()["cluster"]
    assert shown(app, "gpus") == evaluate(PLANS / "example.yaml")["cluster"]["gpus"]
    assert not any(label.endswith("(modified)") for label, _ in app.controls.preset.options)


def test_the_name_follows_the_plan_unless_the_user_wrote_one(app):
    """A preset's name stays until the plan changes, then follows it (count and GPU included); a name the user
    typed or a plan file carries stays."""
    assert app.controls.plan_name == "Acme 70B pretraining"
    app.controls.widgets["cluster.gpu"].value = "b200"
    assert app.controls.plan_name == f"Llama 3.1 70B pretraining on {app.result['cluster']['gpus']:,} B200"
    assert app.result["plan"]["name"] == app.controls.plan_name
    app.controls.widgets["cluster.gpus"].value = "512"
    assert app.controls.plan_name == "Llama 3.1 70B pretraining on 512 B200"
    own = PlannerApp({"name": "Board plan", "model": "llama-3.1-8b", "workload": {"kind": "pretrain", "tokens": 1e11},
                      "cluster": {"gpu": "h100-sxm", "gpus": 64}})
    own.controls.widgets["cluster.gpus"].value = "128"
    assert own.controls.plan_name == "Board plan"


def test_the_name_follows_the_model_until_typed(app):
    app.controls.model.value = "llama-3.1-8b"
    assert "Llama 3.1 8B" in app.controls.plan_name and "Llama 3.1 8B" in app.header.value
    assert "aiplan-save-yaml" in links_of(app)
    assert re.search(r'download="llama-3-1-8b[^"]*\.yaml"', app.downloads.value)
    app.controls.name.value = "Board meeting plan"
    app.controls.model.value = "llama-3.1-70b"
    assert app.controls.plan_name == "Board meeting plan"
    assert 'download="board-meeting-plan.yaml"' in app.downloads.value


def test_model_and_preset_dropdowns(app):
    app.controls.model.value = "llama-3.1-8b"
    assert app.result["plan"]["model"] == "llama-3.1-8b"
    app.controls.preset.value = str((PLANS / "inference.yaml").resolve())
    assert app.result["plan"]["name"] == load_plan(PLANS / "inference.yaml").data["name"]
    assert app.controls.widgets["workload.kind"].value == "inference"
    assert app.panes[0].name == "inference_sweep"  # the headline follows the workload


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


def _upload(app, path):
    app.upload.send_file(path.name, path.read_text())  # what choosing the file in the page sends


def test_uploading_the_same_file_again_reloads_it(app):
    _upload(app, PLANS / "finetune-lora.yaml")
    assert app.result["plan"]["workload"]["kind"] == "finetune"
    app.controls.widgets["cluster.gpus"].value = "16"
    assert app.result["cluster"]["gpus"] == 16
    _upload(app, PLANS / "finetune-lora.yaml")
    assert app.result["cluster"]["gpus"] == 8


def test_download_links_hold_plan_json_and_csv(app):
    links = links_of(app)
    assert load_plan(yaml.safe_load(links["aiplan-save-yaml"])).data == load_plan(PLANS / "example.yaml").data
    rows = list(csv.DictReader(io.StringIO(links["aiplan-download-csv"].decode())))
    assert list(rows[0]) == ["Section", "Figure", "Value", "Unit"]
    racks = next(r for r in rows if r["Figure"] == RESULT_FIELDS["facility.racks"].label)
    assert int(racks["Value"]) == app.result["facility"]["racks"]
    # human labels and units, numbers rounded to four significant digits, no keys
    days = next(r for r in rows if r["Figure"] == RESULT_FIELDS["compute.wall_clock_days"].label)
    assert days["Unit"] == RESULT_FIELDS["compute.wall_clock_days"].unit
    assert float(days["Value"]) == pytest.approx(app.result["compute"]["wall_clock_days"], rel=5e-4)
    assert len(days["Value"].replace(".", "").lstrip("0")) <= 4
    assert not any(re.search(r"\b[a-z]+_[a-z_]+\b", r["Figure"]) for r in rows)
    assert b'"cost"' in links["aiplan-download-json"]


def test_chart_panes_draw_the_selected_chart_once_the_page_is_up(app):
    pane = app.panes[1]
    assert pane.spec["usermeta"]["aiplan"]["chart"] == "cumulative_cost"
    assert pane.widget is None  # the chart widgets come once the page shows the figures
    app.page_ready()
    assert pane.widget.spec == pane.spec
    pane.selector.value = "Cost drivers"
    assert pane.widget.spec["usermeta"]["aiplan"]["chart"] == "sensitivity"
    assert app.panes[0].widget.spec["usermeta"]["aiplan"]["chart"] == "training_sweep"


def test_an_unknown_figure_is_not_marked_as_in_doubt():
    """A plan on a server without a published price: the breakeven card reads "unknown, a price is missing" and
    carries no "only if the plan ran as written" mark; renting, which has a value, keeps its plain state."""
    app = PlannerApp(with_overrides(read_yaml(PLANS / "finetune-lora.yaml"), {"cluster.gpu": "l40s"}))
    assert app.result["cost"]["onprem_usd"] is None and app.result["cost"]["cloud_usd"] is not None
    assert "no-server-price" in {c["id"] for c in app.result["checks"]}
    assert card_state(app, "breakeven") == "" and "only if the plan ran as written" not in app.figures.value


def test_a_plan_that_cannot_work_says_so_and_the_fix_applies():
    app = PlannerApp(PLANS / "does-not-fit.yaml")
    raw = read_yaml(PLANS / "does-not-fit.yaml")
    fix = suggest_fix(raw)
    assert 'id="aiplan-banner"' in app.banner.value and fix.label in app.fix_texts[0].value
    assert app.banner_row.layout.display is None and not app.apply_fix.disabled
    assert card_state(app, "memory-per-gpu") == "bad"
    assert card_state(app, "days") == "doubt" and card_state(app, "onprem-cost") != "good"
    app.apply_fix.click()
    applied = app.controls.plan_dict()
    # the fix's fields; the preset's name now follows the plan, which changed
    assert {k: v for k, v in applied.items() if k != "name"} == {k: v for k, v in with_overrides(
        raw, fix.overrides).items() if k != "name"}
    assert applied["name"] == f"Llama 3.1 405B fine-tune on {fix.overrides['cluster.gpus']} H100"
    assert app.result["memory"]["fits"] is True
    assert app.banner.value == "" and app.banner_row.layout.display == "none"
    assert card_state(app, "memory-per-gpu") == "good"
    notice = re.sub(r"<[^>]+>", "", app.notice.value)
    assert notice.startswith(f"Applied: {fix.label}.") and f"GPUs: 8 → {fix.overrides['cluster.gpus']}" in notice
    assert app.notice_row.layout.display is None and not app.undo.disabled
    app.undo.click()
    assert app.controls.plan_dict() == raw and app.result["memory"]["fits"] is False
    assert app.undo.disabled  # nothing more to undo


def test_the_fix_choices_each_apply_and_say_what_they_keep():
    """does-not-fit: more GPUs gives up the one server; QLoRA keeps it and carries a quality note; each button
    applies its own fix."""
    from aiplan.analysis.fixes import suggest_fixes

    raw = read_yaml(PLANS / "does-not-fit.yaml")
    fixes = suggest_fixes(raw)
    app = PlannerApp(PLANS / "does-not-fit.yaml")
    shown = [re.sub(r"<[^>]+>", "", t.value) for t in app.fix_texts if t.value]
    assert len(shown) == len(fixes) >= 2
    qlora = next(i for i, f in enumerate(fixes) if f.overrides.get("workload.method") == "qlora")
    assert "Keeps the 8 GPUs on one server" in shown[qlora] and "check the quality" in shown[qlora]
    assert "Gives up: needs" in shown[0]
    app.fix_buttons[qlora].click()
    assert app.controls.plan_dict()["workload"]["method"] == "qlora" and app.result["memory"]["fits"] is True
    assert app.result["cluster"]["nodes"] == 1


def test_an_absurd_duration_is_marked():
    app = PlannerApp({"name": "405B on 8", "model": "llama-3.1-405b", "workload": {"kind": "pretrain", "tokens": 15e12},
                      "cluster": {"gpu": "h100-sxm", "gpus": 8}})
    assert card_state(app, "days") == "bad"
    assert "longer than any plan can wait" in app.banner.value


@pytest.mark.parametrize("path", PRESETS, ids=lambda p: p.stem)
def test_no_developer_artefacts_on_screen(path):
    app = PlannerApp(path)
    app.pin_scenario()
    text = page_text(app)
    assert not re.search(r"\.md\b", text)
    assert not re.search(r"aiplan\.", text)
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", text), re.findall(r"\b[a-z]+_[a-z_]+\b", text)
    assert not re.search(r"\b1 nodes\b|\b1 servers\b|\d\.\d+e[+-]?\d", text)


def test_findings_are_grouped_and_info_folds_away():
    html = findings_html([{"id": "a", "severity": "info", "message": "fyi", "source": "A (2020), T"},
                          {"id": "b", "severity": "critical", "message": "<boom> see cluster.gpus_per_node",
                           "source": ""}])
    assert html.index("Must fix") < html.index("Good to know")
    assert "<details" in html and html.index("<details") < html.index("fyi")
    assert "&lt;boom&gt;" in html and "GPUs per server" in html
    assert "Source: A (2020), T" in html


def test_humanize_names_fields_by_their_labels():
    assert humanize("give cluster.deadline_days") == "give Deadline"
    assert humanize("must be at most gpus_per_node (8)") == "must be at most GPUs per server (8)"
    assert humanize("add it (servers.csv)") == "add it (the servers table)"


def test_key_figures_have_raw_values():
    res = evaluate(PLANS / "example.yaml")
    figs = {f["id"]: f for f in key_figures(res)}
    assert figs["power-mw"]["value"] * 1000 == pytest.approx(res["facility"]["total_kw"])
    assert figs["cloud-cost"]["value"] == res["cost"]["cloud_usd"]
    serving = {f["id"]: f for f in key_figures(evaluate(PLANS / "inference.yaml"))}
    assert serving["usd-per-million-tokens"]["value"] == evaluate(PLANS / "inference.yaml")["cost"][
        "usd_per_million_tokens"]


def test_scenarios_side_by_side_with_deltas_rename_remove_and_zip(app):
    assert app.pin_scenario()
    app.controls.widgets["cluster.gpu"].value = "b200"
    assert app.pin_scenario()
    first, second = app.board.results
    table = app.board.table.value
    assert 'id="aiplan-scenarios"' in table
    # each figure's change against the first scenario, in words: "same" under half a percent, else signed
    # percent to two significant digits
    deltas = re.findall(r'<span class="delta">([^<]+)</span>', table)
    shown = [float(d.replace("−", "-").rstrip("%")) / 100 for d in deltas if d != "same"]
    for section, key in (("cost", "cloud_run_usd"), ("compute", "wall_clock_days"), ("cluster", "gpus")):
        change = (second[section][key] - first[section][key]) / first[section][key]
        if abs(change) < 0.005:
            assert "same" in deltas, (key, change)
        else:
            assert any(math.isclose(v, change, rel_tol=0.051) for v in shown), (key, change, deltas)  # 2 digits
    assert abs(second["cluster"]["gpus"] / first["cluster"]["gpus"] - 1) > 0.005
    app.board.chips.children[1].children[0].value = "B200 option"
    assert "B200 option" in app.board.table.value
    archive = zipfile.ZipFile(io.BytesIO(base64.b64decode(
        re.search(r'base64,([^"]+)"', app.board.download.value).group(1))))
    assert sorted(archive.namelist()) == ["acme-70b-pretraining.yaml", "b200-option.yaml"]
    plan = yaml.safe_load(archive.read("b200-option.yaml"))
    assert plan["cluster"]["gpu"] == "b200" and plan["name"] == "B200 option"
    assert evaluate(plan)["cost"]["cloud_run_usd"] == pytest.approx(second["cost"]["cloud_run_usd"])
    app.board.chips.children[0].children[1].click()
    assert app.board.names == ["B200 option"]
    for _ in range(4):
        app.pin_scenario()
    assert len(app.board.names) == 4 and app.pin.disabled


def test_parse_number_text():
    assert parse_number_text("") is None and parse_number_text("auto") is None
    assert parse_number_text("8") == 8 and parse_number_text("2e12") == 2e12
    assert parse_number_text("2T") == 2e12 and parse_number_text("16M") == 16_000_000
    assert parse_number_text("1,024") == 1024 and parse_number_text("38%") == 0.38
    assert parse_number_text("eight") == "eight"


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
    assert 'id="aiplan-scenarios"' in app.table.value
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


def test_options_view_loads_the_option_it_ranks():
    """A click on a ranked option gives the plan that option: its GPU, offer and pricing, and the
    planner's figures equal evaluate of that plan."""
    from aiplan import evaluate as evaluate_plan
    from aiplan.analysis.fixes import with_overrides
    from aiplan.ui import PlannerApp
    from aiplan.ui.options_view import option_overrides

    app = PlannerApp()
    rows = app.options.run()
    ranked = [r for r in rows if not r["excluded"]]
    assert [r["rank"] for r in app.options.table.rows] == [r["rank"] for r in ranked[:len(app.options.table.rows)]]
    plan = app.controls.plan_dict()
    pick = next(r for r in ranked if r["gpu"] != plan["cluster"]["gpu"])
    app.options.table.picked = pick["rank"]  # what a click on the row sends
    assert app.controls.plan_dict()["cluster"]["gpu"] == pick["gpu"]
    expected = evaluate_plan(with_overrides(plan, option_overrides(pick, plan)))
    assert app.result["cluster"]["gpus"] == expected["cluster"]["gpus"]
    assert app.result["cost"]["cloud"] == (pick["offer"] if pick["pricing"] != "buy" else expected["cost"]["cloud"])
    assert app.options.table.picked == 0  # ready for the next click
    # a click says what it loaded: GPU, offer, pricing and count; the name follows the loaded plan
    loaded = re.sub(r"<[^>]+>", "", app.options.loaded.value)
    gpus = app.result["cluster"]["gpus"]
    assert loaded.startswith(f"Loaded option {pick['rank']}: {gpus:,} × {pick['gpu_name']}, ")
    assert pick["offer_name"] in loaded and pick["pricing"].replace("-", " ").split()[0] in loaded.lower()
    assert app.controls.plan_name.endswith(f" on {gpus:,} {gpu_short_name(app.controls.catalog, pick['gpu'])}")
    assert "Loaded option" in app.notice.value and not app.undo.disabled
    # loading an option does not change what the options are; the table stays live and marks the loaded row
    assert not app.options.stale
    assert [r["rank"] for r in app.options.table.rows if r["current"]] == [pick["rank"]]
    # "Rank by" re-sorts at once, without sizing again
    app.options.by.value = "days"
    days = [r["days_p50"] for r in app.options.rows if not r["excluded"]]
    assert days == sorted(days) and not app.options.stale
    # a serving plan ranks by cost or CO2 (a service has no run time); a training plan by days again
    app.controls.widgets["workload.kind"].value = "inference"
    assert [by for _, by in app.options.by.options] == ["cost", "co2"] and app.options.by.value == "cost"
    app.controls.widgets["workload.kind"].value = "pretrain"
    assert [by for _, by in app.options.by.options] == ["cost", "days", "co2"]
    # a change of the plan that changes the options marks the table out of date, and a click loads nothing
    app.controls.model.value = "llama-3.1-8b"
    assert app.options.stale and "Out of date" in app.options.status.value
    assert app.options.run_button.label == "Re-rank"
    before = app.controls.plan_dict()
    assert app.options.pick(1) == "" and app.controls.plan_dict() == before
    # no offer twice, every offer by its name (not its catalog id)
    shown = [(r["gpu"], r["offer_name"], r["pricing"]) for r in app.options.rows if r["offer"]]
    assert len(shown) == len(set(shown))
    assert not any(r["offer_name"] == r["offer"] for r in app.options.rows if r["offer"])


def test_any_critical_finding_shows_in_the_banner():
    from aiplan.ui.figures import banner_html

    result = evaluate(PLANS / "example.yaml")
    assert banner_html(result, None) == ""
    result["checks"].append({"id": "something-new", "severity": "critical", "source": "",
                             "message": "The plan breaks a rule the app does not know yet. Here is why."})
    html = banner_html(result, suggest_fix(read_yaml(PLANS / "example.yaml"), result))
    assert 'id="aiplan-banner"' in html and "The plan breaks a rule the app does not know yet." in html
    assert "Here is why" not in html  # the first sentence only


def test_scenarios_show_the_inputs_that_differ_first_then_the_serving_figures():
    """Two pins of a serving plan that differ in pricing and the TPOT target: those two inputs come first, then
    TTFT, TPOT and the cost per million tokens; the names differ by what differs."""
    app = PlannerApp(PLANS / "inference.yaml")
    app.pin_scenario()
    app.controls.widgets["cost.pricing"].value = "reserved-1y"
    app.controls.name.value = "Chat assistant serving"  # the same name typed: the board tells them apart
    app.pin_scenario()
    table = app.board.table.value
    assert re.findall(r'data-input="([^"]+)"', table) == ["cost.pricing"]
    assert app.board.names == ["Chat assistant serving", "Chat assistant serving, reserved 1 year"]
    figures_ = re.findall(r'data-figure="([^"]+)"', table)
    assert figures_[:4] == ["inference.gpus", "inference.ttft_ms", "inference.tpot_ms", "cost.usd_per_million_tokens"]
    assert table.index("What differs") < table.index("cost.pricing") < table.index("The figures")
    assert "compute.wall_clock_days" not in figures_  # no training rows for serving scenarios


def test_one_voice_units_unknown_prices_and_ranges():
    from aiplan.core.fields import format_range
    from aiplan.present.summary import client_summary

    # a missing price: the breakeven is unknown, not "never"
    result = evaluate({"model": "llama-3.1-8b", "workload": {"kind": "finetune", "tokens": 1e9},
                       "cluster": {"gpu": "mi325x", "gpus": 8}})  # no server price in the catalog
    assert result["cost"]["onprem_usd"] is None and result["cost"]["cloud_usd"]
    fleet = {f["id"]: f for b in client_summary(result)["blocks"] for f in b["figures"]}
    assert fleet["fleet-breakeven-months"]["text"] == "unknown"
    # the breakeven in months on the card, as the chart draws it
    example = evaluate(PLANS / "example.yaml")
    fleet = {f["id"]: f for b in client_summary(example)["blocks"] for f in b["figures"]}
    assert fleet["fleet-breakeven-months"]["text"].endswith(" months")
    assert format_range(56.6e6, 56.62e6, "usd") == "$56.6M"


def test_a_serving_plan_shows_no_training_controls_charts_or_advice():
    app = PlannerApp(PLANS / "inference.yaml")
    for path in ("cluster.mfu", "cluster.zero_stage", "cluster.data_parallel", "workload.tokens"):
        assert app.controls.widgets[path].layout.display == "none", path
    for path in ("cluster.tensor_parallel", "cluster.attention_data_parallel", "cluster.expert_parallel",
                 "cluster.pipeline_parallel"):  # the serving layout's fields: each fixes it
        assert app.controls.widgets[path].layout.display != "none", path
    offered = {app.panes[0].options[label] for label in app.panes[0].selector.options}
    assert "inference_sweep" in offered and not offered & {"training_sweep", "layout"}
    app.controls.widgets["workload.kind"].value = "pretrain"
    assert app.controls.widgets["cluster.mfu"].layout.display is None
    assert "training_sweep" in {app.panes[0].options[label] for label in app.panes[0].selector.options}
    serving = evaluate({"model": "llama-3.1-405b", "workload": {"kind": "inference", "requests_per_s": 2},
                        "cluster": {"gpu": "h100-sxm", "pipeline_parallel": 1}})  # one server does not hold it
    message = next(c["message"] for c in serving["checks"] if c["id"] == "model-does-not-fit")
    assert "ZeRO" not in message and "recomputation" not in message and "FP8" in message


def test_the_report_button_sends_the_report_aiplan_report_writes(monkeypatch):
    """The button's file is render()'s own output for the plan on screen (render is replaced by a stand-in that
    records its call: the real one runs a kernel, in the browser test)."""
    import aiplan.ui.deliverables as d

    calls = []

    def fake_render(plan_path, out_dir, name, pdf=False, xlsx=False):
        calls.append((yaml.safe_load(open(plan_path)), name, pdf, xlsx))
        out = Path(out_dir) / f"{name}.xlsx"
        out.parent.mkdir(parents=True)
        out.write_bytes(b"PK")
        return [out]

    monkeypatch.setattr(d, "render", fake_render)
    app = PlannerApp(PLANS / "example.yaml")
    sent = []
    button = app.report_buttons["aiplan-report-xlsx"]
    monkeypatch.setattr(button, "send", lambda content, buffers=None: sent.append((content, buffers)))
    button.click(wait=True)
    assert calls == [(app.controls.plan_dict(), "acme-70b-pretraining", False, True)]
    assert sent[0][0]["name"] == "acme-70b-pretraining.xlsx" and bytes(sent[0][1][0]) == b"PK"
    assert "acme-70b-pretraining.xlsx" in app.report_status.value and not button.busy


@pytest.mark.parametrize("deadline", [30, None])
def test_options_table_has_a_deadline_column_only_with_a_deadline(deadline):
    """A plan without a deadline has no chance of meeting one: the options table leaves the column out, and
    every row has as many cells as the header."""
    from aiplan.core.inputs import read_yaml
    from aiplan.ui.options_view import OptionsView

    plan = read_yaml(PLANS / "example.yaml")
    plan["cluster"] = {**plan["cluster"], "deadline_days": deadline, "gpus": None if deadline else 1024}
    view = OptionsView(lambda: plan, lambda *_: "")
    view.run()
    assert ("Deadline odds" in view.table.header) == (deadline is not None)
    assert view.table.rows and all(len(r["cells"]) == len(view.table.header) for r in view.table.rows)
