"""The self-service notebook in a real JupyterLab and a real Chromium: ``00_start_here`` opens unmodified (no
"unsaved changes" mark once the kernel is up), runs with no code edited, its controls change the figures,
and its dollar amounts render as dollars, never as mathematics.

The notebooks and plans are copied to a temporary folder first: JupyterLab saves what it changes.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.browser]
TOKEN = "aiplan-test"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    from planner_browser import free_port, missing_browser

    missing = missing_browser()
    if missing:
        if os.environ.get("AIPLAN_REQUIRE_BROWSER") == "1":
            pytest.fail("needs " + ", ".join(missing))
        pytest.skip("needs " + ", ".join(missing))
    root = tmp_path_factory.mktemp("lab")
    for folder in ("notebooks", "plans"):
        shutil.copytree(ROOT / folder, root / folder)
    port = free_port()
    log = root / "lab.log"
    argv = [str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser", f"--port={port}",
            "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}",
            "--LabApp.expose_app_in_browser=True", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.news_url=None"] + (["--allow-root"] if os.geteuid() == 0 else [])
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=root)
    try:
        deadline = time.time() + 180
        while f":{port}/" not in log.read_text():
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(log.read_text()[-2000:])
            time.sleep(0.3)
        yield f"http://127.0.0.1:{port}", root
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_start_here_opens_unmodified_runs_without_code_and_shows_dollars(lab):
    from planner_browser import launch
    from playwright.sync_api import sync_playwright

    url, root = lab
    before = (root / "notebooks" / "00_start_here.ipynb").read_bytes()
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(f"{url}/lab/tree/notebooks/00_start_here.ipynb?token={TOKEN}", timeout=180_000)
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=180_000)
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                               " && window.jupyterapp.shell.currentWidget.sessionContext"
                               " && window.jupyterapp.shell.currentWidget.sessionContext.session"
                               " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
                               " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
                               " === 'idle'", timeout=180_000)
        page.wait_for_timeout(3000)  # the kernel's spec and language info have arrived
        dirty = page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty")
        assert dirty is False, "the notebook is marked modified on open"
        assert page.locator(".lm-TabBar-tab.jp-mod-dirty").count() == 0

        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_selector("#aiplan-gpus", timeout=180_000)
        page.wait_for_selector(".jp-OutputArea-output svg", timeout=180_000)
        page.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
                               " === 'idle'", timeout=180_000)
        page.wait_for_timeout(1500)
        # the controls change the figures, no code edited
        gpus = page.get_attribute("#aiplan-gpus", "data-value")
        box = page.locator(".jp-OutputArea-output input[placeholder^='auto']").first
        box.fill("512")
        box.press("Enter")
        page.wait_for_function(f"() => document.querySelector('#aiplan-gpus').dataset.value !== '{gpus}'",
                               timeout=60_000)
        assert float(page.get_attribute("#aiplan-gpus", "data-value")) == 512
        # dollars are dollars: the cost tables show "$" and no mathematics is typeset in any output
        page.wait_for_function("() => Array.from(document.querySelectorAll("
                               "'.jp-OutputArea-output .jp-RenderedMarkdown'))"
                               ".some((e) => e.textContent.includes('Run cost, renting'))", timeout=60_000)
        markdown = page.locator(".jp-OutputArea-output .jp-RenderedMarkdown")
        assert markdown.count() >= 4
        text = " ".join(markdown.all_text_contents())  # textContent: cells out of view are not laid out
        assert "$" in text and "\\$" not in text
        assert page.locator(".jp-OutputArea-output mjx-container, .jp-OutputArea-output .MathJax").count() == 0
        # whole numbers read as whole numbers
        assert re.search(r"Tensor, pipeline and data parallel\s+\d[\d,]* / \d[\d,]* / \d[\d,]*\s", text), text[:2000]
        assert "Error displaying widget" not in page.evaluate("() => document.body.innerText")
        browser.close()
    assert (root / "notebooks" / "00_start_here.ipynb").read_bytes() == before  # nothing saved
