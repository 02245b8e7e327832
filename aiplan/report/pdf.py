"""Printing a report's HTML to PDF with the system Chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..core.errors import PlanError, Problem

#: papers a report prints on (``--paper``); the page size itself is set by the HTML's CSS
PAPER_SIZES = ("a4", "letter")


def check_paper(paper: str) -> str:
    """``paper`` if it is one of :data:`PAPER_SIZES`; else a PlanError naming ``--paper``."""
    if paper not in PAPER_SIZES:
        raise PlanError(Problem("--paper", "must be one of " + ", ".join(PAPER_SIZES), paper))
    return paper


def chromium_path() -> str:
    """The system Chromium: ``$AIPLAN_CHROMIUM``, ``chromium`` on PATH, or ``/usr/bin/chromium``."""
    return os.environ.get("AIPLAN_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser") \
        or "/usr/bin/chromium"


def html_to_pdf(html_path: str | os.PathLike, pdf_path: str | os.PathLike, timeout_s: float = 120) -> None:
    """Print ``html_path`` to ``pdf_path`` with the system Chromium (headless; no browser download).

    The page size, margins and footer (plan name, page numbers) come from the HTML's ``@page``
    rules (:func:`aiplan.report.export.export_html`); Chromium's own header and footer are off.
    """
    exe = chromium_path()
    if not Path(exe).exists():
        raise RuntimeError(f"--pdf needs Chromium; not found at {exe} (apt-get install chromium, or set "
                           "AIPLAN_CHROMIUM)")
    with tempfile.TemporaryDirectory(prefix="aiplan-chromium-") as profile:
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-dev-shm-usage", "--no-first-run", "--no-pdf-header-footer", f"--user-data-dir={profile}",
               f"--print-to-pdf={Path(pdf_path).resolve()}", Path(html_path).resolve().as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    if not Path(pdf_path).is_file() or Path(pdf_path).stat().st_size == 0:
        raise RuntimeError(f"Chromium did not write the PDF (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
