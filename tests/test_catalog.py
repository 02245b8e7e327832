"""Catalog integrity: every row sourced and dated, ids unique, values in range, overrides."""

from __future__ import annotations

import csv
import dataclasses
import re
from pathlib import Path

import pytest

from aiplan import PlanError, load_catalog, load_plan
from aiplan.catalog import STATUSES, TABLES, data_dir

DATA = data_dir()

# Ids the plan contract requires (docs/contract.md) and issue 2 lists.
REQUIRED_IDS = {
    "gpus": {"a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h100-nvl", "h200", "h800", "b200", "gb200", "l40s",
             "l4", "mi300x", "mi325x", "gaudi3", "tpu-v4", "tpu-v5e", "tpu-v5p"},
    "servers": {"dgx-a100", "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72"},
    "models": {"llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b",
               "mistral-7b", "mixtral-8x7b", "qwen2.5-7b", "qwen2.5-72b", "deepseek-v3", "gpt-3-175b", "falcon-40b",
               "opt-175b", "bloom-176b"},
    "clouds": {"aws-p5.48xlarge"},
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


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_row_sourced_dated_and_unique(table):
    filename = TABLES[table][0]
    with open(DATA / filename, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows, filename
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), f"duplicate ids in {filename}"
    for r in rows:
        assert re.fullmatch(r"[a-z0-9][a-z0-9.\-]*", r["id"]), r["id"]
        assert r["source"].strip(), r["id"]
        assert r["status"] in STATUSES, r["id"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", r["as_of"]), r["id"]


def test_values_in_physical_ranges(catalog):
    for g in catalog.gpus.values():
        assert 8 <= g.memory_gb <= 300, g.id
        assert 100 <= g.memory_bw_gb_per_s <= 10000, g.id
        assert 50 <= g.bf16_tflops <= 3000, g.id
        assert g.fp8_tflops is None or g.fp8_tflops >= g.bf16_tflops, g.id
        assert 50 <= g.tdp_w <= 1500, g.id
        assert 0 < g.mfu_low <= g.mfu_default <= g.mfu_high <= 1, g.id
    for s in catalog.servers.values():
        gpu = catalog.gpus[s.gpu]
        # a server draws at least its GPUs' power (TPU v4: PaLM's system figure per chip, Chowdhery et al.
        # 2022, App. B [arxiv-2204.02311]), not absurdly more
        assert gpu.tdp_w * s.gpus_per_node / 1000 <= s.max_power_kw < 4 * gpu.tdp_w * s.gpus_per_node / 1000, s.id
    for m in catalog.models.values():
        assert m.heads % m.kv_heads == 0 or m.attention == "mla", m.id
        assert m.active_experts <= m.experts
    for c in catalog.clouds.values():
        for price in (c.reserved_1y_usd_per_hr, c.reserved_3y_usd_per_hr, c.spot_usd_per_hr):
            assert price is None or price < c.on_demand_usd_per_hr, c.id


def test_reference_figures_are_in_the_catalog(catalog):
    # H100 specifications (80 GB, 3.35 TB/s, 989.5/1979 dense, 700 W); DGX H100 10.2 kW; DGX B200 user
    # guide, "Power Specifications", 14.3 kW; p5.48xlarge us-east-1 55.04
    # [nvidia-h100-page;nvidia-dgx-h100-datasheet;nvidia-dgx-b200-ug;tsaol-aws-gpu]
    h100 = catalog.gpus["h100-sxm"]
    assert (h100.memory_gb, h100.memory_bw_gb_per_s, h100.bf16_tflops, h100.fp8_tflops, h100.tdp_w) == \
        (80, 3350, 989.5, 1979, 700)
    assert catalog.servers["dgx-h100"].max_power_kw == 10.2
    assert catalog.servers["dgx-b200"].max_power_kw == 14.3
    assert catalog.clouds["aws-p5.48xlarge"].on_demand_usd_per_hr == 55.04


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
    negotiated = dict(offer, on_demand_usd_per_hr=40.0, source="Acme contract 2026-11", as_of="2026-11-01")
    extra = dict(offer, id="acme-h100-8x", provider="acme", on_demand_usd_per_hr=30.0)
    for k in ("reserved_1y_usd_per_hr", "reserved_3y_usd_per_hr", "spot_usd_per_hr"):
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
    with pytest.raises(PlanError, match="missing required columns"):
        load_catalog([tmp_path])


def test_records_are_frozen(catalog):
    with pytest.raises(dataclasses.FrozenInstanceError):
        catalog.gpus["h100-sxm"].memory_gb = 1
