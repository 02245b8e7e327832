"""The report's reusable files, written from a real result: the workbook, the deck, the chart files."""

from __future__ import annotations

import datetime as dt
import io
import json

import pytest
from conftest import PLANS

import aiplan
from aiplan import report
from aiplan.core.inputs import read_yaml

openpyxl = pytest.importorskip("openpyxl")


@pytest.fixture(scope="module")
def example():
    return read_yaml(PLANS / "example.yaml"), aiplan.evaluate(PLANS / "example.yaml")


@pytest.fixture(scope="module")
def book(example, tmp_path_factory):
    raw, result = example
    path = tmp_path_factory.mktemp("xlsx") / "r.xlsx"
    report.write_xlsx(result, path, raw, "2026-12-03")
    return openpyxl.load_workbook(path)


def cells(book):
    for sheet in book.worksheets:
        for row in sheet.iter_rows(min_row=2):
            for cell in row:
                yield sheet.title, cell


def test_workbook_opens_on_the_summary_then_one_sheet_per_step(book, example):
    _, result = example
    assert book.sheetnames[:5] == ["Summary", "Model", "Cluster", "Facility", "Cost"]
    assert {"Bill of materials", "Monthly cost", "Assumptions", "Findings", "Sources"} <= set(book.sheetnames)
    summary = {row[1]: row[2] for row in book["Summary"].iter_rows(min_row=2, values_only=True)}
    assert summary["Plan name"] == result["plan"]["name"]
    assert summary["Run cost, renting"] == pytest.approx(result["cost"]["cloud_run_usd"])
    for step in ("Model", "Cluster", "Facility", "Cost"):
        sheet = book[step]
        assert [c.value for c in sheet[1]] == ["Figure", "Value", "Unit", "Source", "Key"]  # headers in words
        assert sheet.column_dimensions["E"].hidden  # the client reads labels; the keys stay for an analyst
        rows = {r[4]: r for r in sheet.iter_rows(min_row=2, values_only=True)}
        assert len(rows) >= 10
        for key, (_label, value, *_rest) in rows.items():
            expected = aiplan.report.figures.get_path(result, key)
            if isinstance(expected, bool):
                assert value == ("yes" if expected else "no")
            elif isinstance(expected, (int, float)):
                assert value == pytest.approx(expected), key


def test_every_number_carries_an_excel_number_format(book):
    numbers = [(title, c) for title, c in cells(book) if isinstance(c.value, (int, float))
               and not isinstance(c.value, bool)]
    assert len(numbers) > 300
    unformatted = [(title, c.coordinate) for title, c in numbers if c.number_format == "General"]
    assert not unformatted, unformatted[:10]
    model = {r[4].value: r[1] for r in book["Model"].iter_rows(min_row=2)}
    assert model["compute.mfu"].number_format == "0.0%"
    cost = {r[4].value: r[1] for r in book["Cost"].iter_rows(min_row=2)}
    assert "$" in cost["cost.capex_usd"].number_format and "," in cost["cost.capex_usd"].number_format
    dates = [c for title, c in cells(book) if isinstance(c.value, dt.datetime)]
    assert dates and all(c.number_format == "yyyy-mm-dd" for c in dates)


def test_no_cell_holds_json(book):
    for _title, cell in cells(book):
        if isinstance(cell.value, str) and cell.value[:1] in "[{":
            with pytest.raises(ValueError):
                json.loads(cell.value)


def test_findings_read_as_words(book, example):
    """Each finding's severity reads as a word ("Warning"), in the order and number the result has them."""
    _, result = example
    rows = list(book["Findings"].iter_rows(min_row=2, values_only=True))
    assert [r[0] for r in rows] == [c["severity"].capitalize() for c in result["checks"]]
    assert [r[1] for r in rows] == [c["message"] for c in result["checks"]]


def test_monthly_cost_is_a_table_with_cumulatives(book, example):
    _, result = example
    rows = list(book["Monthly cost"].iter_rows(min_row=2, values_only=True))
    assert len(rows) == len(result["cost"]["monthly"])
    cloud = owned = 0.0
    for _month, rent, rent_total, own, own_total in rows:
        cloud, owned = cloud + rent, owned + own
        assert rent_total == pytest.approx(cloud) and own_total == pytest.approx(owned)
    assert rows[-1][2] == pytest.approx(result["cost"]["monthly"][-1]["cloud_usd"])
    assert rows[0][3] > result["cost"]["capex_usd"]  # owning pays the purchase in the first month


def test_sheets_have_frozen_headers_and_sized_columns(book):
    for sheet in book.worksheets:
        assert sheet.freeze_panes == "A2", sheet.title
        assert sheet.column_dimensions["A"].width >= 8, sheet.title
    assert book["Assumptions"].column_dimensions["A"].width > 15


@pytest.fixture(scope="module")
def headline_pngs(example):
    """Each step's headline chart drawn as PNG at twice its size, as ``aiplan report --pptx`` draws it."""
    from aiplan.present import charts
    from aiplan.report.svg import vegalite_to_png

    _, result = example
    built = {"Model": charts.memory_chart(result), "Cluster": charts.layout_chart(result),
             "Facility": charts.facility_chart(result), "Cost": charts.cumulative_cost_chart(result)}
    return {step: vegalite_to_png(chart.to_dict()) for step, chart in built.items()}


def test_deck_opens_with_its_slides_and_the_chart_pictures(example, headline_pngs, tmp_path):
    pptx = pytest.importorskip("pptx")
    from PIL import Image
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    raw, result = example
    report.write_pptx(result, tmp_path / "deck.pptx", headline_pngs, raw, "2026-12-03")
    deck = pptx.Presentation(str(tmp_path / "deck.pptx"))
    slides = list(deck.slides)
    assert len(slides) >= 6
    def text(shape):
        if shape.has_text_frame:
            return shape.text_frame.text
        if shape.has_table:
            return "\n".join(c.text for row in shape.table.rows for c in row.cells)
        return ""

    texts = ["\n".join(text(s) for s in slide.shapes) for slide in slides]
    assert result["plan"]["name"] in texts[0]
    assert "Executive summary" in texts[1] and aiplan.present.summary.recommendation(result) in texts[1]
    pictures = [s for slide in slides for s in slide.shapes if s.shape_type == MSO_SHAPE_TYPE.PICTURE]
    assert len(pictures) == len(headline_pngs)
    for step_number, step in enumerate(report.STEPS, start=1):
        slide_text = next(t for t in texts if t.startswith(f"Step {step_number}: {step}"))
        bullets = [line for line in slide_text.splitlines() if line.startswith("• ")]
        assert len(bullets) == 3, slide_text
    for picture in pictures:  # the PNG inside the deck is the chart at twice its size, not a thumbnail
        width, height = Image.open(io.BytesIO(picture.image.blob)).size
        assert width >= 2 * 300 and height >= 2 * 150
    assert any("Assumptions" in t and "judgement" in t for t in texts)


def test_chart_files_are_named_by_step(tmp_path, example):
    from aiplan.report.chartfiles import ReportChart, write_chart_files

    chart = ReportChart("Cost", "cumulative_cost", {}, "<svg></svg>")
    paths = write_chart_files([chart], [b"\x89PNG"], tmp_path, "client")
    assert [p.name for p in paths] == ["client-4-cost-cumulative-cost.svg", "client-4-cost-cumulative-cost.png"]
