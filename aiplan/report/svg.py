"""Charts of a report: Vega-Lite specs drawn as SVG by vl-convert in a warm worker process."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .notebook import EXECUTION_TIMEOUT_S

#: Start of every Vega-Lite mimetype (the report kernel's is ``aiplan.present.charts.SPEC_MIMETYPE``,
#: ``application/vnd.vegalite.v6+json``; this module does not import the charts, nor altair).
VEGALITE_MIMETYPE = "application/vnd.vegalite."
_svg_worker: tuple[int, ProcessPoolExecutor] | None = None  # (owner pid, worker)


def _spec_version(spec: str | Mapping) -> tuple[dict, str | None]:
    """The spec as a dict, and vl-convert's name of its Vega-Lite version ("v6_1") from ``$schema``."""
    spec = json.loads(spec) if isinstance(spec, str) else dict(spec)
    version = re.search(r"/v(\d+)\.(\d+)", spec.get("$schema", ""))
    return spec, f"v{version[1]}_{version[2]}" if version else None


def vegalite_to_svg(spec: str | Mapping) -> str:
    """One Vega-Lite spec (JSON text or dict) drawn as SVG text by vl-convert.

    The same call as Altair's ``svg`` renderer (the Vega-Lite version comes from the spec's
    ``$schema``), so a chart drawn here is byte-identical to one drawn in the kernel. Data
    must be inline: no URL may be fetched.
    """
    import vl_convert as vlc

    spec, version = _spec_version(spec)
    return vlc.vegalite_to_svg(spec, vl_version=version, allowed_base_urls=[])


def vegalite_to_png(spec: str | Mapping, scale: float = 2.0) -> bytes:
    """One Vega-Lite spec drawn as PNG by vl-convert at ``scale`` times its size (2: for slides)."""
    import vl_convert as vlc

    spec, version = _spec_version(spec)
    return vlc.vegalite_to_png(spec, vl_version=version, scale=scale, allowed_base_urls=[])


def _warm_up() -> None:
    """Start vl-convert's JavaScript engine (~0.6 s, once per process) by drawing an empty chart."""
    vegalite_to_svg({"mark": "point"})


def svg_worker() -> ProcessPoolExecutor:
    """The process that draws charts, started (and warmed up) on first use and reused after.

    vl-convert holds the GIL while its engine starts, so it warms up in its own process,
    on the other core, while the kernel starts; then it draws each chart while the kernel
    runs the next cells. A batch worker keeps one for all its reports; it is shut down
    when its owner exits (before :mod:`multiprocessing` waits for its children).
    """
    global _svg_worker
    if _svg_worker is None or _svg_worker[0] != os.getpid():
        import multiprocessing
        from multiprocessing import util

        worker = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        # before multiprocessing closes the queues (priority 10) and joins the children
        util.Finalize(worker, worker.shutdown, exitpriority=100)
        worker.submit(_warm_up)
        _svg_worker = (os.getpid(), worker)
    return _svg_worker[1]


class ChartDrawer:
    """nbclient hook that sends each Vega-Lite output to :func:`svg_worker` as its cell finishes.

    :meth:`finish` then adds the SVG next to the Vega-Lite spec of every such output (the
    executed notebook keeps both: the SVG to read, the spec to audit).
    """

    def __init__(self) -> None:
        self.pending: list[tuple[Any, Any]] = []

    def __call__(self, cell: Any, **_: Any) -> None:
        for output in cell.get("outputs", []):
            for mime, spec in output.get("data", {}).items():
                if mime.startswith(VEGALITE_MIMETYPE):
                    self.pending.append((output, svg_worker().submit(vegalite_to_svg, json.dumps(spec))))

    def finish(self, timeout_s: float = EXECUTION_TIMEOUT_S) -> int:
        """Wait for every chart and put it in its output; returns how many were drawn."""
        global _svg_worker
        try:
            for output, future in self.pending:
                output["data"]["image/svg+xml"] = future.result(timeout=timeout_s)
        except BrokenProcessPool:
            _svg_worker = None  # the next report starts a new one
            raise
        return len(self.pending)
