"""A short PowerPoint deck of a report, for a consultant to edit and present (python-pptx).

Slides: title; executive summary with the key figures and the recommendation; top risks; one
slide per step with its headline chart (PNG at twice its size) and three bullets; bill of
materials; assumptions (the judgement values first). Text stays editable: no slide is an image.
"""

from __future__ import annotations

import datetime as _dt
import io
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.version import __version__
from ..present.summary import client_summary, question
from .assumptions import assumptions
from .bom import bill_of_materials
from .figures import STEPS, step_figures, step_question

WIDE_IN, HIGH_IN = 13.333, 7.5  # 16:9
NAVY = (0x1A, 0x3A, 0x6B)
GREY = (0x5A, 0x66, 0x75)
#: rows of a table slide (more would not be readable)
MAX_ROWS = 12


def _rgb(colour: tuple[int, int, int]) -> Any:
    from pptx.dml.color import RGBColor

    return RGBColor(*colour)


def _place(shape: Any, left: float, top: float, width: float, height: float) -> None:
    """Move a shape (inches): the default template's placeholders are laid out for 4:3 slides."""
    from pptx.util import Inches

    shape.left, shape.top, shape.width, shape.height = Inches(left), Inches(top), Inches(width), Inches(height)


def _title_slide_of(prs: Any, title: str) -> Any:
    """A "title only" slide with ``title``."""
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = title
    _place(slide.shapes.title, 0.5, 0.3, WIDE_IN - 1.0, 0.9)
    para = slide.shapes.title.text_frame.paragraphs[0]
    para.font.size, para.font.bold, para.font.color.rgb = _pt(30), True, _rgb(NAVY)
    return slide


def _pt(size: float) -> Any:
    from pptx.util import Pt

    return Pt(size)


def _box(slide: Any, left: float, top: float, width: float, height: float, lines: Sequence[str], size: float = 16,
         bullets: bool = False, colour: tuple[int, int, int] | None = None) -> Any:
    """A text box (inches) with one paragraph per line."""
    from pptx.util import Inches

    shape = slide.shapes.add_textbox(Inches(left), Inches(top), Inches(width), Inches(height))
    frame = shape.text_frame
    frame.word_wrap = True
    for i, line in enumerate(lines):
        para = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
        para.text = ("• " if bullets else "") + line
        para.font.size = _pt(size)
        para.space_after = _pt(6)
        if colour:
            para.font.color.rgb = _rgb(colour)
    return shape


def _table(slide: Any, top: float, header: Sequence[str], rows: Sequence[Sequence[str]],
           widths: Sequence[float], size: float = 12) -> Any:
    """A table (inches from the top) with a header row."""
    from pptx.util import Inches

    shape = slide.shapes.add_table(len(rows) + 1, len(header), Inches(0.5), Inches(top), Inches(sum(widths)),
                                   Inches(0.35 * (len(rows) + 1)))
    table = shape.table
    for j, width in enumerate(widths):
        table.columns[j].width = Inches(width)
    for i, row in enumerate([header, *rows]):
        for j, text in enumerate(row):
            cell = table.cell(i, j)
            cell.text = str(text)
            for para in cell.text_frame.paragraphs:
                para.font.size = _pt(size)
                para.font.bold = i == 0
    return shape


def _cover(prs: Any, result: Mapping, report_date: str) -> None:
    plan = result.get("plan") or {}
    slide = prs.slides.add_slide(prs.slide_layouts[0])
    slide.shapes.title.text = str(plan.get("name", "Unnamed plan"))
    _place(slide.shapes.title, 0.8, 2.0, WIDE_IN - 1.6, 1.5)
    _place(slide.placeholders[1], 0.8, 3.7, WIDE_IN - 1.6, 1.8)
    facts = [f"Prepared for {plan['client']}" if plan.get("client") else "",
             f"Prepared by {plan['prepared_by']}" if plan.get("prepared_by") else "",
             report_date or _dt.date.today().isoformat(), f"aiplan {__version__}"]
    slide.placeholders[1].text = question(result) + "\n" + " · ".join(f for f in facts if f)


def _summary(prs: Any, result: Mapping) -> None:
    s = client_summary(result)
    slide = _title_slide_of(prs, "Executive summary")
    _box(slide, 0.5, 1.35, 12.3, 0.9, [s["recommendation"]], size=18, colour=NAVY)
    rows = []
    for block in s["blocks"]:
        rows.append([block["title"], "", ""])
        rows += [[f"   {f['label']}", f["text"], f["detail"]] for f in block["figures"]]
    _table(slide, 2.35, ("Key figure", "Value", "Note"), rows[:MAX_ROWS + 2], (4.3, 1.6, 6.4), size=11)
    risks = _title_slide_of(prs, "Top risks")
    lines = [f"{r['severity'].capitalize()}: {r['message']}" for r in s["risks"]] or ["The plan raised no findings."]
    _box(risks, 0.6, 1.5, 12.0, 5.5, lines, size=16, bullets=True)


def _step_slide(prs: Any, result: Mapping, number: int, step: str, png: bytes | None) -> None:
    from pptx.util import Inches

    slide = _title_slide_of(prs, f"Step {number}: {step}")
    _box(slide, 0.5, 1.2, 12.3, 0.5, [step_question(result, step)], size=14, colour=GREY)
    figures = step_figures(result, step)[:3]
    bullets = [f"{f['label']}: {f['text']}. {f['meaning']}" for f in figures] or ["Does not apply to this plan."]
    if png is None:
        _box(slide, 0.6, 1.9, 12.0, 5.0, bullets, size=18, bullets=True)
        return
    from PIL import Image

    width_px, height_px = Image.open(io.BytesIO(png)).size
    width_in = min(7.6, 5.2 * width_px / height_px)
    slide.shapes.add_picture(io.BytesIO(png), Inches(0.4), Inches(1.9), width=Inches(width_in))
    _box(slide, 0.6 + width_in, 1.9, WIDE_IN - width_in - 1.0, 5.2, bullets, size=15, bullets=True)


def _bom(prs: Any, result: Mapping, plan: Any) -> None:
    slide = _title_slide_of(prs, "Bill of materials")
    lines = bill_of_materials(result, plan)
    rows = [[b["item"], b["quantity_text"], b["unit_price_text"], b["total_text"]] for b in lines]
    _table(slide, 1.4, ("Item", "Quantity", "Unit price", "Total"), rows[:MAX_ROWS + 3], (4.6, 3.0, 2.2, 2.5),
           size=11)


def _assumptions(prs: Any, result: Mapping, raw_plan: Any, report_date: str, plan: Any) -> None:
    slide = _title_slide_of(prs, "Assumptions")
    rows = [r for r in assumptions(result, raw_plan, report_date, plan) if not r["given"]]
    rows.sort(key=lambda r: not r["judgement"])
    body = [[r["label"] + (" (judgement)" if r["judgement"] else ""), r["value_text"], r["basis"]]
            for r in rows[:MAX_ROWS]]
    _table(slide, 1.4, ("Setting", "Value", "Where it comes from"), body, (3.6, 2.6, 6.1), size=11)
    more = len(rows) - MAX_ROWS
    if more > 0:
        _box(slide, 0.5, 6.8, 12.0, 0.4, [f"{more} more defaults in the report and the workbook."], size=11,
             colour=GREY)


def write_pptx(result: Mapping, path: str | os.PathLike, headline_pngs: Mapping[str, bytes], raw_plan: Any = None,
               report_date: str = "", plan: Any = None) -> None:
    """The deck at ``path``; ``headline_pngs``: each step's headline chart as PNG (steps without one get text)."""
    try:
        from pptx import Presentation
        from pptx.util import Inches
    except ImportError as exc:
        raise RuntimeError('--pptx needs python-pptx: pip install "aiplan[notebooks]"') from exc

    prs = Presentation()
    prs.slide_width, prs.slide_height = Inches(WIDE_IN), Inches(HIGH_IN)
    _cover(prs, result, report_date)
    _summary(prs, result)
    for number, step in enumerate(STEPS, start=1):
        _step_slide(prs, result, number, step, headline_pngs.get(step))
    _bom(prs, result, plan)
    _assumptions(prs, result, raw_plan, report_date, plan)
    prs.save(str(path))
