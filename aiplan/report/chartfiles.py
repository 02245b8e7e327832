"""The charts of an executed report as files: SVG as drawn for the HTML, PNG at twice the size for slides."""

from __future__ import annotations

import os
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .figures import STEP_CHARTS, STEPS
from .svg import VEGALITE_MIMETYPE, svg_worker, vegalite_to_png

#: step of each chart builder (the headline chart of a step is the first of :data:`STEP_CHARTS`)
CHART_STEP = {**{chart: step for step, names in STEP_CHARTS.items() for chart in names},
              "alternatives": "Cost"}  # the options explorer's chart, after the cost step
#: PNG scale for slides and documents (2: sharp on high-density screens and projectors)
PNG_SCALE = 2.0


@dataclass
class ReportChart:
    """One chart of an executed report: its step, its builder's name, the Vega-Lite spec and the SVG."""

    step: str
    name: str
    spec: dict
    svg: str

    def stem(self, report: str) -> str:
        """File stem, named by step: ``REPORT-1-model-memory``."""
        number = list(STEPS).index(self.step) + 1
        return f"{report}-{number}-{self.step.lower()}-{self.name.replace('_', '-')}"


def report_charts(executed: Any) -> list[ReportChart]:
    """The charts of an executed report notebook (outputs holding a Vega-Lite spec and its SVG), in order."""
    out = []
    for cell in executed.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            spec = next((v for m, v in data.items() if m.startswith(VEGALITE_MIMETYPE)), None)
            if spec is None or "image/svg+xml" not in data:
                continue
            meta = (spec.get("usermeta") or {}).get("aiplan", {})
            name = meta.get("chart", "chart")
            if meta.get("available", True):
                out.append(ReportChart(CHART_STEP.get(name, "Model"), name, dict(spec), "".join(data["image/svg+xml"])))
    return out


def headline_charts(charts: list[ReportChart]) -> dict[str, ReportChart]:
    """The first chart of each step (its headline)."""
    out: dict[str, ReportChart] = {}
    for chart in charts:
        out.setdefault(chart.step, chart)
    return out


def draw_pngs(charts: list[ReportChart], scale: float = PNG_SCALE) -> list[Future]:
    """Each chart as PNG, handed to the warm chart worker: futures of the PNG bytes, in order."""
    return [svg_worker().submit(vegalite_to_png, chart.spec, scale) for chart in charts]


def write_chart_files(charts: list[ReportChart], pngs: list[bytes], folder: str | os.PathLike,
                      report: str) -> list[Path]:
    """``REPORT-<n>-<step>-<chart>.svg`` and ``.png`` for every chart, in ``folder``; returns the paths."""
    folder = Path(folder)
    written = []
    for chart, png in zip(charts, pngs):
        svg_path, png_path = folder / f"{chart.stem(report)}.svg", folder / f"{chart.stem(report)}.png"
        svg_path.write_text(chart.svg, encoding="utf-8")
        png_path.write_bytes(png)
        written += [svg_path, png_path]
    return written
