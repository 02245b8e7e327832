"""Driving the planner app in a real Voilà server and a real Chromium (Playwright), for the browser
tests and ``benchmarks/bench_browser.py``.

The server is what ``aiplan app`` runs (:func:`aiplan.cli.voila_command`); pages are read through the
app's stable DOM ids (``aiplan-<figure>`` with its raw number in ``data-value``, ``aiplan-banner``,
``aiplan-apply-fix``, ``aiplan-pin``, ``aiplan-scenarios``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from aiplan.cli import KERNEL_STARTED, READY_MARK, voila_command, wait_until_warm

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]

#: In-page probe: the time of the last input event, the first change of the key figures after it,
#: and the last change of the charts after it (performance.now(), ms)
PROBE_JS = """
window.__aiplan = {input: 0, figures: 0, charts: 0};
const mark = () => { window.__aiplan.input = performance.now(); window.__aiplan.figures = 0;
                     window.__aiplan.charts = 0; };
for (const type of ["change", "click", "keydown"]) document.addEventListener(type, mark, true);
const watch = () => {
  const figures = document.querySelector(".aiplan-figures");
  const results = document.querySelector(".aiplan-results");
  if (!figures || !results) { setTimeout(watch, 100); return; }
  new MutationObserver(() => { if (window.__aiplan.input && !window.__aiplan.figures)
    window.__aiplan.figures = performance.now(); }).observe(figures, {subtree: true, childList: true,
                                                                     characterData: true, attributes: true});
  new MutationObserver((records) => {
    if (!window.__aiplan.input) return;
    if (records.some((r) => r.target.closest && r.target.closest(".aiplan-chart-pane")
                     || (r.target.parentElement && r.target.parentElement.closest(".aiplan-chart-pane"))))
      window.__aiplan.charts = performance.now();
  }).observe(results, {subtree: true, childList: true, attributes: true});
};
watch();
"""


#: process id of the Voilà server of each URL :func:`planner_server` serves
SERVERS: dict[str, int] = {}


def missing_browser() -> list[str]:
    """What the browser tests need and this machine lacks."""
    missing = []
    if not Path(CHROMIUM).exists():
        missing.append(f"{CHROMIUM} (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("python playwright")
    if not (Path(sys.executable).parent / "voila").exists() and not shutil.which("voila"):
        missing.append("voila")
    return missing


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def planner_server(log_path: Path, cull_idle_s: int | None = None, timeout_s: float = 180,
                   pool: int = 1) -> Iterator[str]:
    """A Voilà server of the planner (as ``aiplan app`` starts it, ``pool`` kernels kept warm) on a free port;
    yields its URL once every preheated kernel is ready. Stopped with SIGTERM, as ``aiplan app`` stops it."""
    port = free_port()
    kwargs = {"cull_idle_s": cull_idle_s} if cull_idle_s else {}
    argv, env = voila_command(port, open_browser=False, host="127.0.0.1", pool=pool, **kwargs)
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + timeout_s
            while READY_MARK not in log_path.read_text():
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"voila did not get ready: {log_path.read_text()[-2000:]}")
                time.sleep(0.3)
            url = f"http://127.0.0.1:{port}/"
            kernels = [part.split()[0] for part in log_path.read_text().split(KERNEL_STARTED)[1:]][:pool]
            with ThreadPoolExecutor(len(kernels)) as waiting:  # each watched from now: busy, then idle
                list(waiting.map(lambda k: wait_until_warm(url, k, timeout_s), kernels))  # as aiplan app does
            SERVERS[url] = proc.pid
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=BROWSER_ARGS)


def open_planner(browser, url: str, width: int = 1280, height: int = 720, probe: bool = False,
                 timeout_ms: int = 180_000):
    """A page of the planner at a viewport, once the key figures show."""
    context = browser.new_context(viewport={"width": width, "height": height}, accept_downloads=True)
    page = context.new_page()
    if probe:
        page.add_init_script(PROBE_JS)
    page.goto(url, wait_until="domcontentloaded", timeout=timeout_ms)
    page.wait_for_selector("#aiplan-gpus", state="visible", timeout=timeout_ms)
    return page


def kernel_id(page) -> str:
    return json.loads(page.locator("#jupyter-config-data").text_content())["kernelId"]


def read(page, fig_id: str) -> float | None:
    raw = page.get_attribute(f"#aiplan-{fig_id}", "data-value", timeout=5_000)
    return float(raw) if raw not in (None, "", "true", "false") else None


def wait_for(page, fig_id: str, expected: float, timeout_s: float = 30.0) -> float | None:
    """The figure once it equals ``expected`` (to 1e-9), or what it shows after ``timeout_s``."""
    deadline = time.time() + timeout_s
    value = None
    while time.time() < deadline:
        try:
            value = read(page, fig_id)
        except Exception:  # the figures are being redrawn
            value = None
        if value is not None and abs(value - expected) <= 1e-9 * max(1.0, abs(expected)):
            return value
        time.sleep(0.05)
    return value


def select_preset(page, label: str) -> None:
    page.select_option(".aiplan-field-preset select", label=label)


def select_field(page, path: str, label: str) -> None:
    """Choose the option ``label`` (what the dropdown shows) of plan field ``path`` (``cluster.gpu``)."""
    page.select_option(f".aiplan-field-{path.replace('.', '-').replace('_', '-')} select", label=label)


def type_field(page, path: str, text: str) -> None:
    """Type into the text field of plan field ``path`` and press Enter."""
    box = page.locator(f".aiplan-field-{path.replace('.', '-').replace('_', '-')} input")
    box.fill(text)
    box.press("Enter")


def open_more_options(page, group: int) -> None:
    """Unfold "More options" of control group ``group`` (0: model and workload, 1: cluster, ...)."""
    fold = page.locator(".aiplan-more").nth(group)
    header = fold.locator(".lm-AccordionPanel-title, .p-Accordion-title, .jupyter-widget-Collapse-header").first
    if "true" not in (header.get_attribute("aria-expanded") or ""):
        header.click()


def probe_reset(page) -> None:
    page.evaluate("() => { window.__aiplan.input = 0; }")


def probe_times(page, settle_ms: float = 400, timeout_s: float = 20) -> tuple[float | None, float | None]:
    """(input -> key figures updated, input -> charts settled) in ms for the last input event.

    Charts have settled when no chart changed for ``settle_ms``.
    """
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        t = page.evaluate("() => ({...window.__aiplan, now: performance.now()})")
        if t["figures"] and t["charts"] and t["now"] - t["charts"] >= settle_ms:
            return t["figures"] - t["input"], t["charts"] - t["input"]
        time.sleep(0.05)
    t = page.evaluate("() => window.__aiplan")
    return ((t["figures"] - t["input"]) if t["figures"] else None, (t["charts"] - t["input"]) if t["charts"] else None)


def descendants(pid: int) -> set[int]:
    """Process ids below ``pid`` (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


def memory_kb(pid: int) -> dict[str, int]:
    """RSS, PSS (shared pages split between the processes that map them) and USS (pages only this process
    holds) of a process [kB] (Linux /proc/<pid>/smaps_rollup)."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value = line.split(":", 1)
        fields[name] = int(value.split()[0])
    return {"rss": fields["Rss"], "pss": fields["Pss"],
            "uss": fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)}


def kernels_of(pid: int) -> list[int]:
    """Process ids of the Jupyter kernels below ``pid``."""
    out = []
    for child in descendants(pid):
        try:
            cmd = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "ipykernel" in cmd:
            out.append(child)
    return sorted(out)
