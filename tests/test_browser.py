"""End to end: a real Voilà server with notebooks/planner.ipynb, driven by Chromium (Playwright).

Locally without Chromium this is skipped with a message; with
AIPLAN_REQUIRE_BROWSER=1 (set by .ci/run) a missing browser is a failure.
"""

from __future__ import annotations

import copy
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from conftest import PLANS, ROOT

from aiplan import evaluate, load_catalog
from aiplan.cli import voila_command

pytestmark = [pytest.mark.slow, pytest.mark.browser]
CHROMIUM = "/usr/bin/chromium"
NEW_GPU = "b200"


def _need_browser():
    missing = []
    if not Path(CHROMIUM).exists():
        missing.append(f"{CHROMIUM} (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("python playwright")
    voila = Path(sys.executable).parent / "voila"
    if not voila.exists() and not shutil.which("voila"):
        missing.append("voila")
    if missing:
        message = "browser test needs " + ", ".join(missing)
        if os.environ.get("AIPLAN_REQUIRE_BROWSER") == "1":
            pytest.fail(message + " (AIPLAN_REQUIRE_BROWSER=1)")
        pytest.skip(message)
    return str(voila if voila.exists() else shutil.which("voila"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def voila_url(tmp_path):
    _need_browser()
    port = _free_port()
    log = open(tmp_path / "voila.log", "w")
    argv, env = voila_command(port, open_browser=False)  # what `aiplan app` runs
    proc = subprocess.Popen(argv + ["--Voila.ip=127.0.0.1"], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.time() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(f"voila exited early: {(tmp_path / 'voila.log').read_text()[-2000:]}")
            try:
                urllib.request.urlopen(url + "static/", timeout=2)
                break
            except urllib.error.HTTPError:  # any HTTP answer means the server is up
                break
            except OSError:
                if time.time() > deadline:
                    pytest.fail("voila did not answer within 90 s")
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _expected(gpu: str, gpus: int | None) -> dict:
    plan = yaml.safe_load((PLANS / "example.yaml").read_text())
    plan = copy.deepcopy(plan)
    if gpu != plan["cluster"]["gpu"]:  # the app resets server and cloud to the new GPU's defaults
        plan["cluster"]["gpu"] = gpu
        plan["facility"].pop("server", None)
        plan["cost"].pop("cloud", None)
    if gpus:
        plan["cluster"]["gpus"] = gpus
    return evaluate(plan)


def _read(page, fig_id: str) -> float | None:
    raw = page.get_attribute(f"#aiplan-{fig_id}", "data-value")
    return float(raw) if raw else None


def _wait_for(page, fig_id: str, expected: float, timeout_s: float = 30.0) -> float | None:
    deadline = time.time() + timeout_s
    value = None
    while time.time() < deadline:
        value = _read(page, fig_id)
        if value is not None and abs(value - expected) <= 1e-9 * max(1.0, abs(expected)):
            return value
        time.sleep(0.2)
    return value


def test_planner_in_voila(voila_url, tmp_path):
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    start = _expected("h100-sxm", None)
    after_gpu = _expected(NEW_GPU, None)
    new_gpus = 2 * int(after_gpu["compute"]["gpus"] or 256)  # twice what the deadline needs
    after_both = _expected(NEW_GPU, new_gpus)
    assert after_gpu["memory"]["gpu_capacity_gb"] != start["memory"]["gpu_capacity_gb"]
    assert after_both["cost"]["onprem_usd"] != after_gpu["cost"]["onprem_usd"]
    gpu_index = list(load_catalog().gpus).index(NEW_GPU)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            # the app must work offline: record every request that leaves the Voilà server (the `aiplan`
            # Voilà template drops the lab template's Font Awesome links to a CDN)
            outside: list[str] = []
            page.on("request", lambda req: outside.append(req.url)
                    if not req.url.startswith((voila_url, "data:", "blob:")) else None)
            page.on("console", lambda msg: errors.append(f"console: {msg.text}") if msg.type == "error" else None)
            page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
            page.on("requestfailed", lambda req: errors.append(f"request failed (offline?): {req.url}"))
            page.goto(voila_url, wait_until="domcontentloaded", timeout=120_000)
            page.wait_for_selector("#aiplan-memory-per-gpu", timeout=120_000)
            assert _read(page, "memory-per-gpu") == pytest.approx(start["memory"]["per_gpu_gb"], rel=1e-12)
            assert _read(page, "onprem-cost") == pytest.approx(start["cost"]["onprem_usd"], rel=1e-12)

            page.select_option(".aiplan-field-cluster-gpu select", index=gpu_index)
            got = _wait_for(page, "gpu-capacity", after_gpu["memory"]["gpu_capacity_gb"])
            assert got == pytest.approx(after_gpu["memory"]["gpu_capacity_gb"])
            assert _wait_for(page, "memory-per-gpu", after_gpu["memory"]["per_gpu_gb"]) == pytest.approx(
                after_gpu["memory"]["per_gpu_gb"])

            field = page.locator(".aiplan-field-cluster-gpus input")
            field.fill(str(new_gpus))
            field.press("Enter")
            got = _wait_for(page, "onprem-cost", after_both["cost"]["onprem_usd"])
            assert got == pytest.approx(after_both["cost"]["onprem_usd"], rel=1e-12)
            assert _read(page, "memory-per-gpu") == pytest.approx(after_both["memory"]["per_gpu_gb"], rel=1e-12)
            assert _read(page, "cloud-cost") == pytest.approx(after_both["cost"]["cloud_usd"], rel=1e-12)
            assert _read(page, "gpus") == new_gpus

            page.wait_for_selector(".aiplan-chart svg, .aiplan-chart canvas", timeout=30_000)
            drawn = page.locator(".aiplan-chart svg, .aiplan-chart canvas").count()
            assert drawn >= 2, "both chart panes should draw a chart"
            assert page.locator(".aiplan-finding").count() >= 1
            page.wait_for_timeout(500)
            page.screenshot(path=str(tmp_path / "planner.png"), full_page=True)
            assert not outside, f"requests outside the local server: {outside}"
        finally:
            browser.close()
    assert not errors, "JavaScript errors in the page:\n" + "\n".join(errors)
    assert (tmp_path / "planner.png").stat().st_size > 10_000
