"""``aiplan app`` serves a meeting: the URL printed once ready, a closed tab's kernel shut down, the kernel of a
page that vanished culled, and SIGTERM stopping Voilà and every kernel (real processes, real Chromium)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture
def playwright_browser():
    from planner_browser import missing_browser

    missing = missing_browser()
    if missing:
        if os.environ.get("AIPLAN_REQUIRE_BROWSER") == "1":
            pytest.fail("needs " + ", ".join(missing))
        pytest.skip("needs " + ", ".join(missing))
    from planner_browser import launch
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        yield browser
        browser.close()


def kernel_exists(url: str, kernel: str) -> bool:
    try:
        urllib.request.urlopen(f"{url}api/kernels/{kernel}", timeout=5)
        return True
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return False
        raise


def wait_until(condition, timeout_s: float, step_s: float = 0.5) -> bool:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(step_s)
    return condition()


def test_aiplan_app_prints_the_url_and_stops_every_kernel_on_sigterm(playwright_browser, tmp_path):
    from planner_browser import alive, descendants, free_port, kernel_id, open_planner

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "aiplan", "app", "--no-browser", "--port", str(port), "--host",
                             "127.0.0.1"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    url = f"http://127.0.0.1:{port}/"
    try:
        lines = []
        deadline = time.time() + 180
        while time.time() < deadline and not any("ready" in line for line in lines):
            lines.append(proc.stdout.readline())
        assert lines[0].strip() == f"aiplan app: starting the planner at {url} (Ctrl-C stops it and its kernels)"
        assert any(line.strip() == f"aiplan app: the planner is ready, open {url}" for line in lines), lines

        page = open_planner(playwright_browser, url)
        first = kernel_id(page)
        # reloading the page (as closing it) shuts its kernel down within seconds (culling would take
        # minutes): the page's shutdown request is accepted
        page.reload(wait_until="domcontentloaded")
        page.wait_for_selector("#aiplan-gpus", state="visible", timeout=180_000)
        assert wait_until(lambda: not kernel_exists(url, first), 20), "the reloaded page's kernel still runs"
        second = kernel_id(page)
        assert second != first and kernel_exists(url, second)

        processes = descendants(proc.pid)
        assert len(processes) >= 2  # Voilà and the page's kernel (and the next page's preheated one)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        assert wait_until(lambda: not any(alive(pid) for pid in processes), 30), \
            [pid for pid in processes if alive(pid)]
    finally:
        if proc.poll() is None:
            proc.kill()
        page_ctx = locals().get("page")
        if page_ctx is not None:
            page_ctx.context.close()


def test_the_kernel_of_a_vanished_page_is_culled(playwright_browser, tmp_path):
    from planner_browser import kernel_id, open_planner, planner_server

    with planner_server(tmp_path / "voila.log", cull_idle_s=4) as url:
        page = open_planner(playwright_browser, url)
        kernel = kernel_id(page)
        assert kernel_exists(url, kernel)
        page.context.close()  # the tab goes without a word (no page unload: a crash, a lost network)
        assert wait_until(lambda: not kernel_exists(url, kernel), 4 + 2 + 15), "not culled"
    log = (tmp_path / "voila.log").read_text()
    assert "Culling kernels with idle durations > 4 seconds" in log
    assert f"({kernel}) with 0 connections due to" in log  # culled, not shut down by the page
