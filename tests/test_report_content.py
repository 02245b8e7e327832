"""What the client report says, built without a kernel: bill of materials, step figures, assumptions, sources."""

from __future__ import annotations

import csv
import datetime as dt
import re
from pathlib import Path

import pytest
from conftest import PLANS, make_plan
from test_report import E_NOTATION, SNAKE_CASE, visible_text

import aiplan
from aiplan import load_catalog, report
from aiplan.cli import format_table
from aiplan.core.catalog import buyer_figure, data_dir
from aiplan.core.fields import format_range, format_value
from aiplan.core.inputs import read_yaml
from aiplan.model import layout_words
from aiplan.plan import SECTIONS as PLAN_SECTIONS
from aiplan.plan import TRAINING_ONLY, UNUSED_UNLESS
from aiplan.report.assumptions import PROFILE_DEFAULTS

PLAN_FILES = sorted(p.name for p in PLANS.glob("*.yaml"))


@pytest.fixture(scope="module")
def evaluated():
    return {name: (read_yaml(PLANS / name), aiplan.evaluate(PLANS / name)) for name in PLAN_FILES}


def test_bill_of_materials_counts_what_the_result_counts(evaluated):
    _, result = evaluated["example.yaml"]
    lines = {line["item"]: line for line in report.bill_of_materials(result)}
    assert lines["GPU servers"]["quantity"] == result["cluster"]["nodes"]
    assert lines["GPUs"]["quantity"] == result["cluster"]["gpus"]
    switches = sum(lines[f"{t} switches"]["quantity"] for t in ("Leaf", "Spine", "Core") if f"{t} switches" in lines)
    assert switches == result["network"]["switches"]
    assert lines["Fabric cables"]["quantity"] == result["network"]["cables"]
    assert lines["Transceivers"]["quantity"] == result["network"]["transceivers"]
    assert lines["Racks"]["quantity"] == result["facility"]["racks"]
    assert lines["Provisioned power"]["quantity"] == result["facility"]["provisioned_kw"]
    assert lines["Cooling"]["quantity"] == result["facility"]["cooling_tons"]
    assert lines["Storage capacity"]["quantity"] == result["storage"]["capacity_tb"]
    assert lines["Storage throughput"]["quantity"] == result["storage"]["read_gb_per_s"]
    # totals are quantity x unit price where the kit prices a line, and add up to the capex
    servers = lines["GPU servers"]
    assert servers["total"] == pytest.approx(servers["quantity"] * servers["unit_price"])
    storage = lines["Storage capacity"]
    assert storage["total"] == pytest.approx(storage["quantity"] * storage["unit_price"])
    priced = servers["total"] + storage["total"] + lines["Network, all of the above"]["total"]
    assert lines["Total to buy"]["total"] == pytest.approx(priced + result["cost"]["capex"]["facility_usd"])
    assert lines["Total to buy"]["total"] == result["cost"]["capex_usd"]


def test_one_server_has_no_fabric_and_its_network_share_says_what_it_stands_for(evaluated):
    """The LoRA plan runs on one server: the cluster step says there is no fabric (not "a 0-tier fabric of 0
    switches"), and the network share of the capex is named as the storage and front-end network it stands for."""
    _, result = evaluated["finetune-lora.yaml"]
    assert result["cluster"]["nodes"] == 1 and result["network"]["switches"] == 0
    switches = {f["key"]: f for f in report.step_figures(result, "Cluster")}["network.switches"]
    assert switches["meaning"].startswith("One server needs no switch fabric") and "0-tier" not in switches["meaning"]
    for plan, sentence in (("inference.yaml", "A 1-tier fabric of 1 leaf switch connects"),
                           ("moe-pretrain.yaml", "A 2-tier fabric of 16 leaf and 8 spine switches connects")):
        fabric = [f["meaning"] for f in report.step_figures(aiplan.evaluate(PLANS / plan), "Cluster")
                  if f["key"] == "network.switches"]
        assert len(fabric) == 1 and fabric[0].startswith(sentence) and " 0 " not in fabric[0], fabric
    for gpus, servers in ((16, 2), (8, 1)):  # a service on two servers reaches across them; on one, nothing does
        plan = {**read_yaml(PLANS / "inference.yaml"), "cluster": {"gpu": "h100-sxm", "gpus": gpus}}
        served = aiplan.evaluate(plan)
        reach = {f["key"]: f for f in report.step_figures(served, "Cluster")}["network.scale_out_gb_per_s"]["meaning"]
        assert served["cluster"]["nodes"] == servers and ("across servers" in reach) == (servers > 1)
    # no fabric joins servers: Epoch AI's cluster share does not apply, so the network costs nothing unless the
    # plan gives a share of its own for the storage and front-end network
    lines = {line["item"]: line for line in report.bill_of_materials(result)}
    assert not {"Network, all of the above", "Network, storage and front end"} & set(lines)
    assert result["cost"]["capex"]["network_usd"] == 0 and result["cost"]["network_cost_fraction"] == 0
    assert result["cost"]["network_cost_basis"].startswith("none: no fabric switches")
    capex = [f["meaning"] for f in report.step_figures(result, "Cost") if f["key"] == "cost.capex_usd"]
    assert len(capex) == 1 and "no network is bought" in capex[0] and "$0" not in capex[0], capex
    raw = read_yaml(PLANS / "finetune-lora.yaml")
    quoted = aiplan.evaluate({**raw, "cost": {**raw.get("cost", {}), "network_cost_fraction": 0.05}})
    network = {line["item"]: line for line in report.bill_of_materials(quoted)}["Network, storage and front end"]
    assert network["total"] == pytest.approx(quoted["cost"]["capex"]["servers_usd"] * 0.05 / 0.95, rel=1e-9)
    assert "the plan's figure" in network["note"]

def test_the_hybrid_sentence_appears_only_for_a_mix(evaluated):
    """"Owning 70% of the GPUs and renting the peaks" is said only when the cheapest hybrid mixes; a one-server
    plan owns its server or rents it, and the cost step says nothing of a hybrid."""
    for name in ("example.yaml", "finetune-lora.yaml"):
        _, result = evaluated[name]
        share = result["cost"]["hybrid_best_owned_fraction"]
        said = [f["meaning"] for f in report.step_figures(result, "Cost") if f["key"] == "cost.hybrid_best_usd"]
        assert bool(said) == (0 < share < 1), (name, share, said)
    assert evaluated["finetune-lora.yaml"][1]["cluster"]["nodes"] == 1
    assert 0 < evaluated["example.yaml"][1]["cost"]["hybrid_best_owned_fraction"] < 1


def test_serving_cost_ranges_read_as_ranges_only_when_they_are(evaluated):
    """A P10–P90 that whole instances make one figure reads as one ("$48.2K a month at the GPUs' P10 and P90
    alike"), not "$48.2K to $48.2K"; a real range still reads as a range; and owning per GPU-hour says it is per GPU
    used when owning buys idle GPUs."""
    plan, served = evaluated["inference.yaml"]
    for rate in (None, 120):  # 12 GPUs: P10 and P90 on two 8-GPU servers; 120 requests a second: a real range
        result = served if rate is None else aiplan.evaluate({**plan, "workload": {**plan["workload"],
                                                                                   "requests_per_s": rate}})
        c = result["cost"]
        same = report.figures.format_field("cost.cloud_usd_per_month_low", c["cloud_usd_per_month_low"]) == \
            report.figures.format_field("cost.cloud_usd_per_month_high", c["cloud_usd_per_month_high"])
        rent = [f for f in report.step_figures(result, "Cost") if f["key"] == "cost.cloud_usd_per_month_low"]
        assert len(rent) == 1 and same == (rate is None), c
        assert ("P10 and P90 alike" in rent[0]["meaning"]) == same and (" to " in rent[0]["meaning"]) == (not same)
    owned = {f["key"]: f for f in report.step_figures(served, "Cost")}["cost.owned_usd_per_gpu_hour_full"]
    used, bought = served["cluster"]["gpus"], int(served["cost"]["owned_gpus"])
    assert used < bought and f"This is per GPU the plan uses ({used} of the {bought} owned)" in owned["meaning"]
    _, trained = evaluated["example.yaml"]
    owned = {f["key"]: f for f in report.step_figures(trained, "Cost")}["cost.owned_usd_per_gpu_hour_full"]
    assert trained["cluster"]["gpus"] == trained["cost"]["owned_gpus"]
    assert "per GPU the plan uses" not in owned["meaning"]


@pytest.mark.parametrize("plan", PLAN_FILES)
def test_each_step_shows_6_to_12_figures_with_a_sentence(evaluated, plan):
    _, result = evaluated[plan]
    for step in report.STEPS:
        figures = report.step_figures(result, step)
        assert 6 <= len(figures) <= 12, (step, len(figures))
        for f in figures:
            assert f["text"] and f["text"] != "n/a"
            assert f["meaning"].endswith(".") and not f["meaning"][0].islower(), f["meaning"]


def test_the_rule_of_thumb_sits_beside_its_detailed_figure(evaluated):
    _, result = evaluated["example.yaml"]
    model = {f["key"]: f for f in report.step_figures(result, "Model")}
    rule = format_value(result["memory"]["rule_of_thumb_gb"], "gb")
    assert rule in model["memory.per_gpu_gb"]["rule"]
    facility = {f["key"]: f for f in report.step_figures(result, "Facility")}
    assert format_value(result["facility"]["rule_of_thumb_kw_low"], "power") in facility["facility.total_kw"]["rule"]


def test_the_serving_step_describes_the_pools_the_plan_is_served_on(evaluated):
    """One pool: its replicas, each of ``gpus_per_replica`` GPUs (not the tensor-parallel degree alone); two
    pools: the GPUs of each, which add up to the plan's GPUs, and no one-pool replica figures."""
    _, one = evaluated["inference.yaml"]
    figs = {f["key"]: f for f in report.step_figures(one, "Model")}
    inf = one["inference"]
    assert "inference.prefill_gpus" not in figs and inf["replicas"] * inf["gpus_per_replica"] == inf["gpus"]
    assert figs["inference.gpus_per_replica"]["value"] == inf["gpus_per_replica"]
    assert f"spans {inf['gpus_per_replica']} GPUs ({inf['layout']}: each layer split over " \
           f"{inf['tensor_parallel']} GPUs)" in figs["inference.gpus_per_replica"]["meaning"]
    # a mixture of experts on one pool: its attention-data-parallel layout in words
    moe = aiplan.evaluate({"model": "deepseek-r1", "workload": {
        "kind": "inference", "requests_per_s": 20, "prompt_tokens": 2000, "output_tokens": 500},
        "cluster": {"gpu": "h200", "disaggregated": False}})
    layout = moe["inference"]["layout"]
    meaning = {f["key"]: f for f in report.step_figures(moe, "Model")}["inference.gpus_per_replica"]["meaning"]
    assert "DP" in layout and f"({layout}: {layout_words(layout)})" in meaning and "attention groups of" in meaning
    two = aiplan.evaluate({"model": "deepseek-r1", "workload": {
        "kind": "inference", "requests_per_s": 50, "prompt_tokens": 2000, "output_tokens": 500,
        "ttft_ms_target": 1000, "tpot_ms_target": 50}, "cluster": {"gpu": "h200", "disaggregated": True}})
    figs = {f["key"]: f for f in report.step_figures(two, "Model")}
    inf = two["inference"]
    assert not {"inference.replicas", "inference.gpus_per_replica"} & set(figs)
    assert inf["prefill_gpus"] + inf["decode_gpus"] == inf["gpus"]
    assert two["cluster"]["data_parallel"] == inf["prefill_replicas"] + inf["decode_replicas"]
    meaning = figs["inference.prefill_gpus"]["meaning"]
    assert meaning.startswith(f"{inf['prefill_gpus']} GPUs read the prompts and {inf['decode_gpus']} write the output")
    # each pool's layout in words, not only its code
    for pool in ("prefill", "decode"):
        assert f"({inf[pool + '_layout']}: {layout_words(inf[pool + '_layout'])})" in meaning, pool
    # the quick memory rule sizes training state (weights, gradients, two optimizer states): not beside a served model
    assert not figs["memory.per_gpu_gb"]["rule"]
    assert "Rule of thumb (whole model)" not in format_table(two)
    trained = {f["key"]: f for f in report.step_figures(aiplan.evaluate(PLANS / "example.yaml"), "Model")}
    assert "parameters x 2 bytes x 4" in trained["memory.per_gpu_gb"]["rule"]


def test_assumptions_list_every_applicable_field_and_flag_the_judgement_values(evaluated):
    raw, result = evaluated["example.yaml"]
    rows = {r["path"]: r for r in report.assumption_rows(result, raw, "2026-12-03")}
    for section, fields in PLAN_SECTIONS.items():
        for name, spec in fields.items():
            path = f"{section}.{name}"
            unused = path in UNUSED_UNLESS and not UNUSED_UNLESS[path][1](
                report.figures.get_path(result, f"plan.{UNUSED_UNLESS[path][0]}"))
            if (not spec.kinds or "pretrain" in spec.kinds) and not unused:  # every field that changes the answer
                assert path in rows, path
    assert rows["cost.utilisation"]["given"] and not rows["cost.utilisation"]["judgement"]  # the plan gives it
    assert rows["cost.maintenance_fraction_per_year"]["judgement"]  # a default the kit judged
    assert not rows["cluster.interruptions_per_gpu_year"]["judgement"]
    assert rows["cluster.gpus"]["value"] == result["cluster"]["gpus"]  # what the kit resolved, not null
    profile = result["plan"]["cost"]["buyer_profile"]
    for path, row in rows.items():
        spec = PLAN_SECTIONS[path.split(".")[0]][path.split(".")[1]]
        if path in PROFILE_DEFAULTS:  # the buyer profile's figure: a judgement where none is published
            judged = buyer_figure(load_catalog(), profile, PROFILE_DEFAULTS[path]).status == "estimate"
        else:
            judged = spec.judgement
        assert row["judgement"] == (judged and not row["given"]), path


def test_a_serving_report_lists_the_serving_layout_fields_and_no_training_only_ones(evaluated):
    """A serving plan's layout is its tensor, attention-data, expert and pipeline parallelism (plan fields fix
    each); the training-only settings (MFU, ZeRO stage, data parallel), which change nothing in a serving result,
    are not listed as its assumptions."""
    raw, result = evaluated["inference.yaml"]
    rows = {r["path"] for r in report.assumption_rows(result, raw, "2026-12-03")}
    assert {"cluster.tensor_parallel", "cluster.attention_data_parallel", "cluster.expert_parallel",
            "cluster.pipeline_parallel"} <= rows
    assert not rows & set(TRAINING_ONLY)
    by_path = {row["path"]: row for row in report.assumption_rows(result, raw, "2026-12-03")}
    for field in ("tensor_parallel", "attention_data_parallel", "expert_parallel", "pipeline_parallel"):
        assert by_path[f"cluster.{field}"]["value"] == result["inference"][field]  # the serving layout the kit chose
    texts = [row[k] for row in report.assumption_rows(result, raw, "2026-12-03")
             for k in ("meaning", "basis", "value_text")]
    assert not [t for t in texts if re.search(r"\b(workload|cluster|facility|cost)\.\w", str(t))]  # no field paths
    unused = dict(raw, cluster={**raw.get("cluster", {}), "mfu": 0.1, "zero_stage": 3, "data_parallel": 3})
    changed = aiplan.evaluate(unused)
    assert {k: v for k, v in changed.items() if k != "plan"} == {k: v for k, v in result.items() if k != "plan"}


def test_assumptions_give_each_default_its_source_date_and_age(evaluated):
    raw, result = evaluated["example.yaml"]
    rows = {r["path"]: r for r in report.assumption_rows(result, raw, "2026-12-03")}
    colo = rows["cost.colocation_usd_per_kw_month"]
    published = load_catalog().sources[colo["sources"][0]].date  # the source's own date, from the bibliography
    assert colo["date"] == published
    assert colo["age_text"] == format_value((dt.date(2026, 12, 3) - dt.date.fromisoformat(published)).days, "days")
    price = rows["cost.server_price_usd"]
    assert price["date"] == result["cost"]["server_price_as_of"]  # the catalog's dated price
    assert set(price["sources"]) == set(result["cost"]["server_price_source"].split(";"))


def test_sources_are_full_bibliography_entries_for_every_id_the_result_cites(evaluated):
    raw, result = evaluated["example.yaml"]
    catalog = load_catalog()
    entries = {e["id"]: e for e in report.bibliography(result, raw)}
    cited = set(result["cost"]["price_source"].split(";")) | set(result["facility"]["grid_source"].split(";"))
    cited |= {i for c in result["checks"] for i in c.get("sources") or []}
    cited |= set(catalog.gpus[result["plan"]["cluster"]["gpu"]].sources.split(";"))
    cited.add("arxiv-2407.21783")  # the interruption rate the plan assumed
    assert cited <= set(entries), cited - set(entries)
    for sid, entry in entries.items():
        src = catalog.sources[sid]
        assert (entry["author"], entry["title"], entry["url"]) == (src.author, src.title, src.url or "")
    html = report.sources(result, raw)
    assert html.count("<li class='aiplan-bib'>") == len(entries)
    assert "https://arxiv.org/abs/2407.21783" in html


#: a file name or path in a source title ("benchmarks.json", "data/x.csv", "src/a/b.py")
FILE_IN_TITLE = re.compile(r"\b[A-Za-z_*][\w*-]*\.(json|md|py|txt|ya?ml|csv|js|ts|rst|ipynb)\b|"
                           r"\b[A-Za-z_][\w-]*/[A-Za-z_*][\w./*-]*\.[a-z]{2,5}\b")


def test_sources_a_finding_or_a_price_can_cite_have_titles_a_client_reads():
    """A finding's footnote and a price's source line show the cited titles: none names a file or a path (the
    exact file stays in each entry's URL). The ids: every source id written in the findings, and the sources of
    every cloud offer, server price, API price, region and switch row."""
    catalog = load_catalog()
    text = (Path(aiplan.__file__).parent / "findings.py").read_text(encoding="utf-8")
    ids = set(re.findall(r'"([a-z0-9][a-z0-9.-]+)"', text)) & set(catalog.sources)
    for table in ("clouds", "server_prices", "api_prices", "regions", "switches"):
        for row in csv.DictReader((data_dir() / f"{table}.csv").open(encoding="utf-8")):
            ids |= {i.strip() for i in (row.get("sources") or "").split(";") if i.strip()}
    assert len(ids) > 100
    named_files = {i: catalog.sources[i].title for i in sorted(ids) if FILE_IN_TITLE.search(catalog.sources[i].title)}
    assert not named_files, named_files


@pytest.mark.parametrize("plan", PLAN_FILES)
def test_the_report_body_has_no_e_notation_and_no_snake_case(evaluated, plan):
    raw, result = evaluated[plan]
    parts = [report.cover(result, "2026-12-03"), report.executive_summary(result), report.bom_table(result),
             *(report.step(result, s) for s in report.STEPS), report.findings(result),
             report.assumptions(raw, result, "2026-12-03"), report.sources(result, raw)]
    text = visible_text("".join(parts))
    assert not E_NOTATION.findall(text), E_NOTATION.findall(text)[:5]
    assert not SNAKE_CASE.findall(text), SNAKE_CASE.findall(text)[:5]
    assert "n/a" not in text and "None" not in text
    # the appendix is where keys and exact values belong
    appendix = visible_text(report.appendix_tables(result))
    assert "compute.total_flops" in appendix or plan == "inference.yaml"


def test_the_appendix_lists_every_figure_with_its_label_and_unit(evaluated):
    _, result = evaluated["example.yaml"]
    html = report.appendix_tables(result)
    for key, text in (("facility.total_kw", "Facility power [kW]"), ("cost.capex_usd", "Capex [USD]"),
                      ("compute.gpu_hours", "GPU-hours [GPU-h]")):
        assert f"<code>{key}</code>" in html and text in html
    assert re.search(r"Cumulative cost by month", html)


def test_calibrated_training_days_replace_the_mfu_band_once_the_result_has_them(evaluated):
    """compute.wall_clock_days_p10/_p50/_p90 and compute.deadline_probability (the calibration's Monte Carlo)."""
    _, result = evaluated["example.yaml"]
    c = result["compute"]
    figures = {f["label"]: f for f in report.step_figures(result, "Model")}
    assert "Training time" not in figures
    assert figures["Training time, median"]["text"] == format_value(c["wall_clock_days_p50"], "days")
    assert (f"8 in 10 take {format_range(c['wall_clock_days_p10'], c['wall_clock_days_p90'], 'days', sep=' to ')}."
            in figures["Training time, median"]["meaning"])
    # a range that crosses a unit reads in one unit: DeepSeek-V3 on 2,048 H800 takes about 2.3 to 4.3 months
    long = aiplan.evaluate({"model": "deepseek-v3", "cluster": {"gpu": "h800", "gpus": 2048},
                            "workload": {"kind": "pretrain", "tokens": 14.8e12, "seq_len": 4096, "precision": "fp8"}})
    meaning = {f["label"]: f for f in report.step_figures(long, "Model")}["Training time, median"]["meaning"]
    assert long["compute"]["wall_clock_days_p10"] < 90 < long["compute"]["wall_clock_days_p90"]
    assert re.search(r"8 in 10 take [\d.]+ to [\d.]+ months\.", meaning) and "days" not in meaning, meaning
    assert figures["Chance of meeting the deadline"]["text"] == format_value(c["deadline_probability"], "odds")
    assert len(figures) <= 12


def test_alternatives_count_options_in_words():
    """The alternatives' introduction and their "not ranked" list count options as people write them: thousands
    separated, "1 option" in the singular."""
    from aiplan.report.alternatives import alternatives

    intro = visible_text(str(alternatives(aiplan.load_plan(PLANS / "inference.yaml"))[0]))
    counts = re.findall(r"\(([\d,]+) options?\)|\(([\d,]+) options, ", intro)
    assert counts and not re.search(r"\b1 options\b|\b\d{4,} options\b", intro)


def test_record_tables_read_in_the_registrys_order_after_a_json_round_trip(evaluated):
    """The report and the workbook read the result back from JSON, whose keys come sorted: their tables still
    start with the year of a growth phase and the driver and option of a sensitivity, not alphabetically."""
    import json

    from aiplan.report.figures import records

    _, result = evaluated["example.yaml"]
    sorted_keys = json.loads(json.dumps(result, sort_keys=True))
    assert records(sorted_keys, "cost.sensitivity")[2][:2] == ["driver", "option"]
    assert records(sorted_keys, "cluster.candidates")[2][:3] == ["tensor_parallel", "pipeline_parallel",
                                                                 "data_parallel"]
    raw = read_yaml(PLANS / "example.yaml")
    growth = aiplan.evaluate({**raw, "facility": {**raw["facility"], "growth_per_year": 0.5}})
    assert records(json.loads(json.dumps(growth, sort_keys=True)), "facility.growth")[2][0] == "year"


@pytest.mark.parametrize("path, value, text", [
    ("cost.colocation_usd_per_kw_month", 184.06, "$184.06 per kW-month"),
    ("cost.support_usd_per_gpu_year", 4500.0, "$4.50K per GPU-year"),
    ("cost.build_usd_per_mw", 11.5e6, "$11.5M per MW"),
    ("cost.spot_interruptions_per_instance_month", 0.1, "0.100 a month"),
])
def test_plan_values_carry_their_per_unit_in_words(path, value, text):
    """An assumption's value says what it is per ("$184.06 per kW-month"), not a bare "$184.06" or "0.100 1/month"."""
    from aiplan.report.figures import format_plan_value

    assert format_plan_value(path, value) == text


def test_facility_sentences_count_the_servers_a_plan_has(evaluated):
    """One server in a rack that holds six: the report says so, and not "1 compute rack of 6 servers" or "a full
    compute rack", and that rack holds the network, storage and management gear too (no rack of its own); a layout
    of one GPU per layer reads "1 GPU"."""
    _, result = evaluated["finetune-lora.yaml"]
    facility = {f["key"]: f["meaning"] for f in report.step_figures(result, "Facility")}
    per_rack = format_value(result["facility"]["servers_per_rack"], "count")
    assert result["facility"]["other_racks"] == 0 and result["facility"]["racks"] == 1
    assert facility["facility.racks"] == (f"1 server in one rack, with room for the network, storage and management "
                                          f"gear (up to {per_rack} servers a rack).")
    assert facility["facility.rack_kw_actual"].startswith("The fullest compute rack draws")
    cluster = {f["key"]: f["meaning"] for f in report.step_figures(result, "Cluster")}
    assert cluster["cluster.data_parallel"].startswith("Each layer is split over 1 GPU, the layers in one pipeline "
                                                       "stage,")
    emissions = {f["key"]: f for f in report.step_figures(result, "Facility")}["facility.co2_t"]
    assert 0 < result["facility"]["co2_t"] < 1 and emissions["text"] != "0 t CO₂e"


def test_only_a_known_single_rack_reads_as_holding_its_own_gear():
    """The "one rack holds the network, storage and management gear" sentence needs one compute rack and no other
    rack; a server without a published power has no rack count (and 0 other racks), which must not read so."""
    from aiplan.report.figures import one_shared_rack

    def facility(compute, other):
        return {"facility": {"compute_racks": compute, "other_racks": other}}

    assert one_shared_rack(facility(1.0, 0.0))
    assert not any(one_shared_rack(facility(c, o)) for c, o in ((None, 0.0), (1.0, 1.0), (2.0, 1.0)))


def test_alternatives_show_the_chance_of_a_deadline_only_where_there_is_one():
    from aiplan.report.alternatives import alternatives

    without = visible_text(str(alternatives(aiplan.load_plan(PLANS / "finetune-lora.yaml"))[0]))
    assert "Chance of the deadline" not in without and "Time (P10–P90)" in without
    assert "Chance of the deadline" in visible_text(str(alternatives(aiplan.load_plan(PLANS / "example.yaml"))[0]))


def test_a_served_models_data_set_reads_in_gb_and_the_network_share_used():
    """The assumptions name what the kit used in the unit people read: the served weights in GB (not "0.141 TB"),
    and the network share the cluster got (none for one server without a fabric)."""
    from aiplan.report.assumptions import assumptions

    result = aiplan.evaluate(make_plan(read_yaml(PLANS / "inference.yaml"), cluster={"gpu": "gb300"}))
    rows = {r["path"]: r for r in assumptions(result)}
    assert rows["cluster.dataset_tb"]["value_text"] == "72.7 GB"  # 70.6 billion parameters in FP8
    assert rows["cost.network_cost_fraction"]["value_text"] == "0%"


def test_assumptions_show_the_calibrated_value_and_never_say_a_default_twice():
    """A default the kit calibrates shows the value it used (the MFU, the run overhead) beside where it comes from;
    a default with no value ("as many as fit", no budget) is said once, not again as its source."""
    from aiplan.report.assumptions import assumptions

    result = aiplan.evaluate(PLANS / "example.yaml")
    rows = {r["path"]: r for r in assumptions(result)}
    assert rows["cluster.mfu"]["value"] == pytest.approx(result["compute"]["mfu"])
    assert rows["cluster.run_overhead"]["value"] == pytest.approx(result["compute"]["overhead_factor"])
    assert rows["cluster.mfu"]["basis"].startswith("calibrated")
    served = assumptions(aiplan.evaluate(PLANS / "inference.yaml"))
    assert all(r["value_text"] != r["basis"] for r in [*rows.values(), *served]), \
        [r["path"] for r in [*rows.values(), *served] if r["value_text"] == r["basis"]]


def test_each_step_asks_the_question_of_the_plans_kind():
    """A serving plan's steps speak of the service (no run, checkpoints or training time); a training plan's of the
    run, in the report and the deck alike."""
    from aiplan.report.figures import STEPS, step_question

    served, trained = aiplan.evaluate(PLANS / "inference.yaml"), aiplan.evaluate(PLANS / "example.yaml")
    for name in STEPS:
        asked = step_question(served, name)
        assert not re.search(r"\b(run|checkpoints|train it|compute and time)\b", asked), (name, asked)
        assert asked in report.step(served, name)
    assert "train it" in step_question(trained, "Cluster") and "the run" in step_question(trained, "Cost")


def test_a_breakeven_past_the_period_reads_alike_on_the_card_and_in_the_finding():
    """Owning a whole GB300 rack for a 9-GPU service pays back after about 22 years: the card, the chart's subtitle
    and the finding say it in the same words (the card used to read "261 months")."""
    from aiplan.present import charts
    from aiplan.present.summary import client_summary

    plan = read_yaml(PLANS / "inference.yaml")
    result = aiplan.evaluate(make_plan(plan, cluster={"gpu": "gb300"}, workload={**plan["workload"],
                                                                                 "weight_precision": "bf16"}))
    card = next(f for b in client_summary(result)["blocks"] for f in b["figures"]
                if f["id"] == "fleet-breakeven-months")
    finding = next(c["message"] for c in result["checks"] if c["id"] == "breakeven-after-ownership")
    assert card["text"].endswith(" years") and f"after {card['text']}" in finding
    subtitle = charts.cumulative_cost_chart(result).to_dict()["title"]["subtitle"]
    assert f"after {card['text']}, past the period" in str(subtitle)


def test_a_services_storage_bandwidth_says_how_long_its_replicas_take_to_load():
    """A service reads its weights from storage when replicas start: all of them at once, and one added to carry a
    peak, each at the storage's read bandwidth."""
    result = aiplan.evaluate(PLANS / "inference.yaml")
    inf, read = result["inference"], result["storage"]["read_gb_per_s"]
    meaning = next(f["meaning"] for f in report.step_figures(result, "Cluster") if f["key"] == "storage.read_gb_per_s")
    replicas = inf["replicas"]
    assert replicas > 1 and f"Starting all {replicas} replicas at once reads" in meaning
    assert format_value(inf["weights_gb"] * replicas / read, "seconds") in meaning
    assert f"one more replica loads its {format_value(inf['weights_gb'], 'gb')} of weights in " \
           f"{format_value(inf['weights_gb'] / read, 'seconds')}" in meaning
