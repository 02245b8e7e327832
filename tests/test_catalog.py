"""Catalog integrity: every row sourced and dated, ids unique, values in range, overrides.

Most of the integrity rules live in ``aiplan.core.catalog_check`` (what ``tools/check_catalog.py`` runs
in CI); these tests run it on the shipped data and show that it catches each kind of mistake.
"""

from __future__ import annotations

import csv
import dataclasses
import re
from pathlib import Path

import pytest

from aiplan import PlanError, load_catalog, load_plan
from aiplan.core.catalog import PROVIDER_NAMES, STATUSES, TABLES, data_dir
from aiplan.core.catalog_check import check_catalog

DATA = data_dir()

# Ids the contract requires (docs/contract.md), including the December 2026 additions.
REQUIRED_IDS = {
    "gpus": {"a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h100-nvl", "h200", "h800", "b200", "gb200", "l40s",
             "l4", "mi300x", "mi325x", "gaudi3", "tpu-v4", "tpu-v5e", "tpu-v5p", "b300", "gb300", "mi355x", "mi350x",
             "tpu-v6e", "trainium2"},
    "servers": {"dgx-a100", "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72", "dgx-b300", "hgx-b300-8gpu",
                "gb300-nvl72", "mi355x-8oam", "tpu-v6e-host", "trn2-48xlarge"},
    "switches": {"qm9700", "q3400", "sn5600"},
    "models": {"llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b",
               "mistral-7b", "mixtral-8x7b", "qwen2.5-7b", "qwen2.5-72b", "deepseek-v3", "gpt-3-175b", "falcon-40b",
               "opt-175b", "bloom-176b", "llama-4-scout", "llama-4-maverick", "deepseek-r1", "qwen3-32b",
               "qwen3-235b-a22b", "gpt-oss-20b", "gpt-oss-120b", "kimi-k2", "gemma-3-27b"},
    "clouds": {"aws-p5.48xlarge", "aws-p5en.48xlarge", "aws-p6-b200.48xlarge", "gcp-a3-ultragpu-8g",
               "gcp-a4-highgpu-8g", "azure-nd96isr-h200-v5"},
}


@pytest.mark.parametrize("table", sorted(REQUIRED_IDS))
def test_required_ids_present(catalog, table):
    assert REQUIRED_IDS[table] <= set(catalog.table(table))


def test_generic_8gpu_server_per_generation_and_pcie_servers(catalog):
    by_gpu = {}
    for s in catalog.servers.values():
        by_gpu.setdefault(s.gpu, []).append(s)
    for gpu in ("a100-80gb", "h100-sxm", "h200", "b200"):
        assert any(s.gpus_per_node == 8 and not s.id.startswith("dgx") for s in by_gpu[gpu]), gpu
    assert by_gpu["l40s"] and by_gpu["l4"]


@pytest.mark.parametrize("table", sorted(t for t in TABLES if t != "sources"))
def test_every_row_sourced_dated_and_unique(table):
    filename = TABLES[table][0]
    with open(DATA / filename, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows, filename
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), f"duplicate ids in {filename}"
    for r in rows:
        assert re.fullmatch(r"[a-z0-9][a-z0-9.\-]*", r["id"]), r["id"]
        assert r["sources"].strip(), r["id"]
        assert r["status"] in STATUSES, r["id"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", r["as_of"]), r["id"]


def test_the_shipped_catalog_passes_its_checks():
    """What tools/check_catalog.py runs (ranges, units, dates, sources; every source cited somewhere)."""
    problems = [p for p in check_catalog()]
    assert not problems, "\n".join(problems)


def test_catalog_2026_coverage(catalog):
    """Issue 14: at least 8 prices dated 2026, three GPU clouds, the new parts marked as announced."""
    assert sum(c.as_of.startswith("2026") for c in catalog.clouds.values()) >= 8
    assert len({c.provider for c in catalog.clouds.values()} - {"aws", "gcp", "azure", "oracle"}) >= 3
    assert {g.availability for g in catalog.gpus.values()} <= {"shipping", "announced"}
    assert catalog.gpus["rubin"].availability == "announced"


def test_every_cloud_provider_is_spelled_as_it_spells_itself(catalog):
    # offers reach the client by name ("CoreWeave ...", not "coreweave ..."): a new provider needs its spelling
    assert {c.provider for c in catalog.clouds.values()} <= set(PROVIDER_NAMES)
    assert catalog.clouds["aws-p5.48xlarge"].name == "AWS p5.48xlarge"


def test_reference_figures_are_in_the_catalog(catalog):
    # NVIDIA H100 datasheet (dense = sparse / 2), DGX H100/B200 user guides, AWS p5 price list
    h100 = catalog.gpus["h100-sxm"]
    assert (h100.memory_gb, h100.memory_bw_gb_per_s, h100.bf16_tflops, h100.fp8_tflops, h100.tdp_w) == \
        (80, 3350, 989.5, 1979, 700)
    assert catalog.servers["dgx-h100"].max_power_kw == 10.2
    assert catalog.servers["dgx-h100"].weight_kg == 130.45  # DGX H100/H200 user guide: 287.6 lb
    assert catalog.servers["dgx-b200"].max_power_kw == 14.3
    assert catalog.clouds["aws-p5.48xlarge"].on_demand_usd_per_hr == 55.04
    assert (catalog.switches["q3400"].ports, catalog.switches["q3400"].port_gbps) == (144, 800)


@pytest.mark.parametrize("column,value,expected", [
    ("memory_gb", "8000", "outside the plausible range"),  # a unit mistake (MB)
    ("fp8_tflops", "500", "below bf16_tflops"),  # a sparse/dense mix-up
    ("as_of", "2099-01-01", "in the future"),
])
def test_check_catalog_catches_mistakes(tmp_path, catalog, column, value, expected):
    row = dict(_row(catalog.gpus["h100-sxm"]), id="h100-typo", **{column: value})
    _write(tmp_path / "gpus.csv", list(row), [row])
    problems = check_catalog([tmp_path], check_cited=False)
    assert any("h100-typo" in p and expected in p for p in problems), problems


def test_check_catalog_catches_a_percentage_typed_as_a_whole_number(tmp_path, catalog):
    row = dict(_row(catalog.buyer_profiles["large-neocloud.cost-of-capital"]), value="11")  # 11 for 11%
    _write(tmp_path / "buyer_profiles.csv", list(row), [row])
    problems = check_catalog([tmp_path], check_cited=False)
    assert any("large-neocloud.cost-of-capital" in p and "outside the plausible range" in p for p in problems)


def test_a_users_own_buyer_figure_and_server_price_replace_the_shipped_ones(tmp_path, catalog):
    fig = dict(_row(catalog.buyer_profiles["enterprise.years"]), value="5")  # a client's own depreciation life
    price = dict(_row(catalog.server_prices["hgx-h100-8gpu-2025-01"]), id="my-quote", price_usd="199000",
                 as_of="2026-11-01", status="published")  # a quote newer than any published price
    _write(tmp_path / "buyer_profiles.csv", list(fig), [fig])
    _write(tmp_path / "server_prices.csv", list(price), [price])
    plan = load_plan({"model": "llama-2-7b", "catalog": [str(tmp_path)], "workload": {"kind": "pretrain",
                      "tokens": 1e12}, "cluster": {"gpu": "h100-sxm", "gpus": 64},
                      "facility": {"server": "hgx-h100-8gpu"}})
    assert plan.cost["years"] == 5 and plan.cost["server_price_usd"] == 199000


def test_unknown_source_ids_are_load_errors(tmp_path, catalog):
    row = dict(_row(catalog.gpus["h100-sxm"]), sources="no-such-source")
    _write(tmp_path / "gpus.csv", list(row), [row])
    with pytest.raises(PlanError, match="sources: must be a known source id, got 'no-such-source'"):
        load_catalog([tmp_path])


def _cites(path: Path) -> bool:
    """Whether a CSV file has a ``sources`` column."""
    with path.open(encoding="utf-8") as f:
        return "sources" in next(csv.reader(f))


@pytest.mark.parametrize("path", [p for p in sorted((DATA / "calibration").glob("*.csv")) if _cites(p)],
                         ids=lambda p: p.name)
def test_every_calibration_case_cites_known_sources(path, catalog):
    """The published cases the kit is fitted and checked on cite bibliography ids that exist (a finding quotes a
    run's sources to the client: one id, mistyped as meta-llama31-model-card, had silently dropped Meta's card)."""
    with path.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows
    unknown = {s.strip() for r in rows for s in (r["sources"] or "").split(";") if s.strip()} - set(catalog.sources)
    assert not unknown, sorted(unknown)


def test_user_files_may_have_a_byte_order_mark_and_must_be_utf8(tmp_path, catalog):
    row = _row(catalog.regions["us"])
    _write(tmp_path / "regions.csv", list(row), [dict(row, id="acme-site")])
    data = (tmp_path / "regions.csv").read_bytes()
    (tmp_path / "regions.csv").write_bytes(b"\xef\xbb\xbf" + data)  # as Excel saves "CSV UTF-8"
    assert "acme-site" in load_catalog([tmp_path]).regions
    (tmp_path / "regions.csv").write_bytes(data.decode().encode("utf-16"))
    with pytest.raises(PlanError, match="is UTF-16 text"):
        load_catalog([tmp_path])


def test_a_folder_without_catalog_files_is_an_error(tmp_path):
    (tmp_path / "notes.txt").write_text("prices are in the other folder")
    with pytest.raises(PlanError, match="folder holds none of the catalog files"):
        load_catalog([tmp_path])


def _write(path: Path, header: list[str], rows: list[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=header)
        w.writeheader()
        w.writerows(rows)


def _row(record) -> dict:
    return {k: ("" if v is None else str(v).lower() if isinstance(v, bool) else v)
            for k, v in dataclasses.asdict(record).items()}


def test_user_folder_overrides_and_extends(tmp_path, catalog, monkeypatch):
    offer = _row(catalog.clouds["aws-p5.48xlarge"])
    negotiated = dict(offer, on_demand_usd_per_hr=40.0, as_of="2026-11-01", notes="Acme contract 2026-11")
    extra = dict(offer, id="acme-h100-8x", provider="acme", on_demand_usd_per_hr=30.0)
    for k in ("reserved_1y_usd_per_hr", "reserved_3y_usd_per_hr", "spot_usd_per_hr", "usd_per_hr_low",
              "usd_per_hr_high", "derived_columns"):
        negotiated[k] = extra[k] = ""
    _write(tmp_path / "clouds.csv", list(offer), [negotiated, extra])
    monkeypatch.setenv("AIPLAN_CATALOG_PATH", str(tmp_path))
    cat = load_catalog()
    assert cat.clouds["aws-p5.48xlarge"].on_demand_usd_per_hr == 40.0
    assert cat.clouds["acme-h100-8x"].provider == "acme"
    assert len(cat.clouds) == len(catalog.clouds) + 1
    monkeypatch.delenv("AIPLAN_CATALOG_PATH")
    # the same folder named in the plan
    plan = load_plan({"model": "llama-2-7b", "catalog": [str(tmp_path)],
                      "workload": {"tokens": 1e12}, "cluster": {"gpu": "h100-sxm", "gpus": 64},
                      "cost": {"cloud": "acme-h100-8x"}})
    assert plan.cloud.on_demand_usd_per_hr == 30.0


def test_invalid_user_rows_are_reported_with_file_line_and_field(tmp_path, catalog):
    offer = _row(catalog.clouds["aws-p5.48xlarge"])
    _write(tmp_path / "clouds.csv", list(offer), [
        dict(offer, id="bad-1", on_demand_usd_per_hr=-3),
        dict(offer, id="bad-2", gpu="h100sxm", as_of="last year"),
        dict(offer, id="bad-2"),
    ])
    with pytest.raises(PlanError) as info:
        load_catalog([tmp_path])
    text = str(info.value)
    assert "clouds.csv:2 (bad-1).on_demand_usd_per_hr: must be a positive number, got '-3'" in text
    assert "clouds.csv:3 (bad-2).as_of: must be a date YYYY-MM-DD, got 'last year'" in text
    assert "clouds.csv:4 (bad-2): duplicate id in the same file" in text


def test_missing_required_column_is_reported(tmp_path):
    (tmp_path / "regions.csv").write_text("id,name\nmars,Mars\n")
    with pytest.raises(PlanError, match="is missing the required columns"):
        load_catalog([tmp_path])


def test_records_are_frozen(catalog):
    with pytest.raises(dataclasses.FrozenInstanceError):
        catalog.gpus["h100-sxm"].memory_gb = 1


def test_gpu_memory_unit_agrees_with_the_driver(catalog):
    """Issue 23: the datasheet's "GB" of every GPU with a cited driver figure is the binary unit the driver
    counts in: the driver reports 93-100% of it (ECC and reserved memory), never more; read as decimal GB
    the H100's "80 GB" would be 7% below what nvidia-smi shows (81,559 MiB) [modal-client-pr-2797]."""
    cited = [g for g in catalog.gpus.values() if g.memory_driver_mib]
    assert len(cited) >= 7
    for gpu in cited:
        vendor_mib = gpu.memory_gb * (1024 if gpu.memory_unit in (None, "GiB") else 1e9 / 2**20)
        assert 0.90 * vendor_mib <= gpu.memory_driver_mib <= vendor_mib, gpu.id
        assert gpu.memory_driver_mib * 2**20 > gpu.memory_gb * 1e9 or gpu.memory_unit == "GB", gpu.id
    assert catalog.gpus["h100-sxm"].capacity_gb == pytest.approx(81559 * 2**20 / 1e9)
