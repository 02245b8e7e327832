"""docs/deploy.md, recipe 2: a JupyterHub (docs/jupyterhub_config.py) serves the planner to a team.

A real JupyterHub with configurable-http-proxy on this machine; a person logs in in Chromium and lands on
the planner (Voilà, aiplan's template) in their own server, whose figures equal ``aiplan evaluate``; a
second person gets a server of their own. Needs ``jupyterhub`` (beside aiplan[notebooks], in the
environment named by AIPLAN_HUB_PYTHON, default this one) and ``configurable-http-proxy``
(AIPLAN_HUB_PROXY, default on PATH): skipped without them (jupyterhub comes with the dev extra, the proxy
is an npm package), except where AIPLAN_REQUIRE_HUB=1 (CI, which installs the proxy): then a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import PLANS, ROOT

from aiplan import evaluate

pytestmark = [pytest.mark.slow, pytest.mark.browser]
PYTHON = os.environ.get("AIPLAN_HUB_PYTHON", sys.executable)
PROXY = os.environ.get("AIPLAN_HUB_PROXY") or shutil.which("configurable-http-proxy") or ""


def _missing() -> list[str]:
    from planner_browser import missing_browser

    missing = missing_browser()
    if not (Path(PYTHON).parent / "jupyterhub").exists():
        missing.append(f"jupyterhub beside {PYTHON}")
    if not PROXY or not Path(PROXY).exists():
        missing.append("configurable-http-proxy")
    return missing


def test_a_team_logs_in_and_lands_on_the_planner(tmp_path):
    missing = _missing()
    if missing:
        if os.environ.get("AIPLAN_REQUIRE_HUB") == "1":
            pytest.fail("needs " + ", ".join(missing) + " (AIPLAN_REQUIRE_HUB=1)")
        pytest.skip("needs " + ", ".join(missing))
    from planner_browser import free_port, launch
    from playwright.sync_api import sync_playwright

    port = free_port()
    env = {**os.environ, "AIPLAN_USER_PYTHON": PYTHON, "AIPLAN_HUB_STATE": str(tmp_path),
           "AIPLAN_HUB_PROXY": PROXY, "AIPLAN_HUB_URL": f"http://127.0.0.1:{port}",
           "AIPLAN_HUB_PASSWORD": "test-password"}
    log = tmp_path / "hub.log"
    hub = [str(Path(PYTHON).parent / "jupyterhub"), "-f", str(ROOT / "docs" / "jupyterhub_config.py"),
           f"--JupyterHub.hub_port={free_port()}", f"--ConfigurableHTTPProxy.api_url=http://127.0.0.1:{free_port()}"]
    with open(log, "w") as out:
        proc = subprocess.Popen(hub, cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT)
    expected = evaluate(PLANS / "example.yaml")["cluster"]["gpus"]
    try:
        deadline = time.time() + 120
        while "JupyterHub is now running" not in log.read_text():
            assert proc.poll() is None and time.time() < deadline, log.read_text()[-3000:]
            time.sleep(0.5)
        with sync_playwright() as p:
            browser = launch(p)
            for user in ("alice", "bob"):
                page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
                page.goto(f"http://127.0.0.1:{port}/hub/login", timeout=60_000)
                page.fill("input[name=username]", user)
                page.fill("input[name=password]", "test-password")
                page.click("input[type=submit], button[type=submit]")
                page.wait_for_selector("#aiplan-gpus", state="visible", timeout=300_000)
                assert f"/user/{user}/voila/render/planner.ipynb" in page.url
                assert float(page.get_attribute("#aiplan-gpus", "data-value")) == expected
                assert page.locator("#aiplan-plan-name").inner_text() == "Acme 70B pretraining"
                page.context.close()
            browser.close()
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
