"""One assumptions registry: every judgement value and default with its unit and its source or
"judgement", read by the report's assumptions table, the workbook and the app."""

from __future__ import annotations

import ast
import html

import pytest
from conftest import PLANS, ROOT

from aiplan import evaluate, load_catalog
from aiplan.core import assumptions as A
from aiplan.core.inputs import read_yaml
from aiplan.plan import SECTIONS
from aiplan.report.assumptions import kit_constants


def test_every_constant_has_a_unit_label_and_a_source_or_is_a_judgement():
    sources = load_catalog().sources
    for c in A.REGISTRY.values():
        assert c.label and c.unit and c.used_for, c.name
        assert c.judgement or c.sources, c.name
        assert all(i in sources for i in c.sources), (c.name, c.sources)
        assert c.judgement or c.basis, c.name


def test_the_registry_refuses_a_constant_without_a_source():
    with pytest.raises(ValueError, match="needs sources or judgement"):
        A.assume("TEST_UNSOURCED", 1.0, "kW", "a test value")
    assert "TEST_UNSOURCED" not in A.REGISTRY


def test_plan_defaults_name_their_sources_in_the_schema():
    sources = load_catalog().sources
    cited = [(f"{s}.{k}", spec.sources) for s, specs in SECTIONS.items() for k, spec in specs.items() if spec.sources]
    assert len(cited) >= 10
    assert all(i in sources for _, ids in cited for i in ids), cited


def test_units_holds_units_and_published_constants_only():
    """A judgement constant lives in the registry, not in core/units.py."""
    text = (ROOT / "aiplan" / "core" / "units.py").read_text(encoding="utf-8")
    assert "judgement" not in text.lower().replace("(judgement", "")
    names = {t.id for node in ast.parse(text).body if isinstance(node, ast.Assign) for t in node.targets
             if isinstance(t, ast.Name)}
    assert not names & set(A.REGISTRY)


@pytest.fixture(scope="module")
def example():
    from aiplan.core.inputs import read_yaml

    return read_yaml(PLANS / "example.yaml"), evaluate(PLANS / "example.yaml")


def test_the_report_lists_every_constant(example):
    from aiplan import report

    raw, result = example
    text = report.assumptions(raw, result, "2026-12-03")
    for c in kit_constants(kind="pretrain"):
        assert html.escape(c["label"]) in text, c["label"]


def test_the_workbook_lists_every_constant(example, tmp_path):
    from openpyxl import load_workbook

    from aiplan import report

    raw, result = example
    path = tmp_path / "plan.xlsx"
    report.write_xlsx(result, path, raw, "2026-12-03")
    labels = {row[0] for row in load_workbook(path)["Assumptions"].iter_rows(values_only=True)}
    assert {c["label"] for c in kit_constants(kind="pretrain")} <= labels


def test_a_plan_lists_only_the_constants_of_its_workload(example):
    from aiplan import report
    from aiplan.ui.figures import assumptions_html

    serving = html.escape(A.REGISTRY["RELAX_TARGET_MULTIPLE"].label)  # the fix of a missed latency target
    training = html.escape(A.REGISTRY["GOODPUT_MIN"].label)  # the low-goodput finding
    raw, result = example
    assert training in report.assumptions(raw, result, "2026-12-03") and serving not in report.assumptions(
        raw, result, "2026-12-03")
    raw = read_yaml(PLANS / "inference.yaml")
    result = evaluate(PLANS / "inference.yaml")
    for text in (report.assumptions(raw, result, "2026-12-03"), assumptions_html(result, raw)):
        assert serving in text and training not in text
        assert html.escape(A.REGISTRY["SWITCH_KW"].label) in text  # one that applies to both
    assert {c.workload for c in A.constants()} == {"", "training", "serving"}


def test_the_app_lists_every_constant_and_the_plan_defaults(example):
    from aiplan.report.assumptions import assumptions
    from aiplan.ui.figures import assumptions_html

    raw, result = example
    text = assumptions_html(result, raw)
    assert all(html.escape(c["label"]) in text for c in kit_constants(kind="pretrain"))
    defaults = [r for r in assumptions(result, raw) if not r["given"]]
    assert defaults and all(html.escape(r["label"]) in text for r in defaults)


@pytest.mark.parametrize("changes, shown, hidden", [
    # speculation off: its draft settings change nothing and are not listed; on, they are
    ({}, set(), {"workload.speculative_method", "workload.speculative_acceptance", "workload.draft_cost"}),
    ({"workload": {"speculative_tokens": 2}},
     {"workload.speculative_method", "workload.speculative_acceptance", "workload.draft_cost"}, set()),
    # colocation prices space, a build prices construction: only the one the plan uses is an assumption
    ({}, {"cost.colocation_usd_per_kw_month"}, {"cost.build_usd_per_mw"}),
    ({"cost": {"facility_model": "build"}}, {"cost.build_usd_per_mw"}, {"cost.colocation_usd_per_kw_month"}),
    ({"facility": {"growth_per_year": 0.5}}, {"facility.growth_years"}, set()),
])
def test_assumptions_list_only_settings_that_change_the_answer(changes, shown, hidden):
    from aiplan.core.inputs import read_yaml
    from aiplan.report.assumptions import assumptions

    raw = read_yaml(PLANS / "inference.yaml")
    for section, fields in changes.items():
        raw[section] = {**(raw.get(section) or {}), **fields}
    listed = {a["path"] for a in assumptions(evaluate(raw), raw)}
    assert shown <= listed and not hidden & listed
    if not changes:
        assert "facility.growth_years" not in listed
