"""Client reports: ``aiplan report`` end to end (papermill + nbconvert + Chromium), batch and atomicity."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PLANS, ROOT

import aiplan
from aiplan import PlanError, report

SECTIONS_IN_HTML = report.REPORT_SECTIONS
#: text a client reads must not carry e-notation ("4.877e+11") or snake_case keys ("flops_per_token")
E_NOTATION = re.compile(r"\d(?:\.\d+)?[eE][+-]?\d")
SNAKE_CASE = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b")


def args(plans, out, pdf=False, xlsx=False, jobs=1, **more):
    return argparse.Namespace(plans=[str(p) for p in plans], output=str(out), pdf=pdf, xlsx=xlsx, jobs=jobs, **more)


def cli(*argv, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "aiplan", *map(str, argv)], capture_output=True, text=True,
                          cwd=cwd, timeout=900)


def visible_text(html: str) -> str:
    """The text a reader sees: no tags, no style or script blocks, no bibliography entries (cited titles and
    URLs are quoted as published), entities decoded."""
    import html as _html

    html = re.sub(r"<(style|script)\b.*?</\1>", " ", html, flags=re.S | re.I)
    html = re.sub(r"<li class=[\"']aiplan-bib[\"']>.*?</li>", " ", html, flags=re.S)
    return _html.unescape(re.sub(r"<[^>]+>", " ", html))


def before_appendix(html: str) -> str:
    return html.split(">Appendix: every figure<", 1)[0]


# --- fast: helpers, no kernel ---------------------------------------------------------------


def test_key_results_hold_every_contract_key():
    result = aiplan.evaluate(PLANS / "example.yaml")
    keys = report.key_results(result)
    for section, names in aiplan.RESULT_KEYS.items():
        for name in names:
            assert f"{section}.{name}" in keys
    assert keys["plan.name"] == "Acme 70B pretraining"
    assert keys["checks"] == sorted(keys["checks"])
    text = report.dumps_sorted(keys)
    assert json.loads(text) == json.loads(json.dumps(keys))
    assert list(json.loads(text)) == sorted(keys)


def test_html_helpers_escape_user_text():
    result = aiplan.evaluate({"name": "<script>alert(1)</script>", "client": "A & B <Ltd>", "model": "llama-3.1-8b",
                              "workload": {"kind": "inference"}, "cluster": {"gpu": "h100-sxm"}})
    cover = report.cover(result)
    assert "<script>" not in cover and "&lt;script&gt;" in cover
    assert "A &amp; B &lt;Ltd&gt;" in cover
    assert "<script>" not in report.colophon(result)


def test_footer_text_is_a_safe_css_string():
    """The plan name reaches the printed footer as a CSS string: it cannot close the string or the style."""
    from aiplan.report.export import css_string

    text = css_string('Acme "70B" </style><script>x</script> \\ é')
    assert text.startswith('"') and text.endswith('"') and text.count('"') == 2
    assert "<" not in text and ">" not in text and "é" in text


def test_collect_plans_from_files_and_folders(tmp_path):
    found = report.collect_plans([PLANS, PLANS / "example.yaml"])
    assert [p.name for p in found] == sorted(p.name for p in PLANS.glob("*.yaml"))  # no duplicates
    with pytest.raises(PlanError, match="no such plan file"):
        report.collect_plans([tmp_path / "missing.yaml"])
    with pytest.raises(PlanError, match="no plan files"):
        report.collect_plans([tmp_path])
    a, b = tmp_path / "a" / "x.yaml", tmp_path / "b" / "x.yaml"
    assert report.output_names([a, b]) == ["a-x", "b-x"]


def test_single_invalid_plan_fails_fast_with_the_plan_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: llama-3.1-8b\ncluster: {gpu: h100-sxm, gpus: -8}\n")
    with pytest.raises(PlanError, match="cluster.gpus"):
        report.main(args([bad], tmp_path / "out"))
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    with pytest.raises(PlanError, match="--jobs"):
        report.main(args([PLANS / "example.yaml"], tmp_path / "out", jobs=0))


def test_cli_invalid_plan_exits_2_with_the_message_and_no_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: llama-3.1-8b\ncluster: {gpu: h100-sxm, gpus: -8}\n")
    proc = cli("report", bad, "-o", tmp_path / "out")
    assert proc.returncode == 2
    assert "cluster.gpus" in proc.stderr and "Traceback" not in proc.stderr


def test_report_parameters_are_declared_by_the_notebook():
    report.check_parameters(report.report_notebook(), report.REPORT_PARAMETERS)
    with pytest.raises(RuntimeError, match="plan_pth"):
        report.check_parameters(report.report_notebook(), ["plan_pth"])


def test_charts_drawn_by_the_worker_equal_the_kernels_own(tmp_path):
    """``aiplan report`` draws the kernel's Vega-Lite specs in a warm worker process.

    Each comes out byte for byte as Altair's ``svg`` renderer draws it inside a kernel; the
    executed notebook keeps the spec beside the SVG, and the HTML publishes the SVG only.
    """
    alt = pytest.importorskip("altair")
    nbformat = pytest.importorskip("nbformat")
    from aiplan import evaluate
    from aiplan.present import charts

    def bundle(chart, renderer):
        with alt.renderers.enable(renderer):
            data = chart._repr_mimebundle_()
        return dict(data[0] if isinstance(data, tuple) else data)

    result = evaluate(PLANS / "example.yaml")
    built = [charts.cumulative_cost_chart(result), charts.facility_chart(result)]
    outputs = [nbformat.v4.new_output("display_data", data=bundle(c, "spec")) for c in built]
    cell = nbformat.v4.new_code_cell(outputs=outputs)
    drawer = report.ChartDrawer()
    drawer(cell=cell)
    assert drawer.finish() == 2
    for chart, output in zip(built, outputs):
        assert output["data"]["image/svg+xml"] == bundle(chart, "svg")["image/svg+xml"]
        assert output["data"][charts.SPEC_MIMETYPE] == chart.to_dict()  # kept for audit
    report.export_html(nbformat.v4.new_notebook(cells=[cell]), tmp_path / "r.html")
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert html.count('<svg class="marks"') == 2
    assert "vnd.vegalite" not in html and "vega-lite/v" not in html


# --- slow: real runs ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """One CLI run: two plans in parallel (--jobs 2), with every output (--pdf --xlsx --pptx --charts)."""
    out = tmp_path_factory.mktemp("reports")
    proc = cli("report", PLANS / "example.yaml", PLANS / "inference.yaml", "-o", out, "--pdf", "--xlsx", "--pptx",
               "--charts", "--jobs", "2")
    return proc, out


@pytest.mark.slow
def test_batch_writes_every_artefact(batch):
    proc, out = batch
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 report(s) written" in proc.stdout
    assert "[2/2]" in proc.stderr  # progress line
    assert "without encryption" not in proc.stderr  # kernels listen on private Unix sockets, not TCP
    for stem in ("example", "inference"):
        for ext in ("html", "ipynb", "json", "pdf", "xlsx", "pptx"):
            assert (out / f"{stem}.{ext}").is_file(), f"{stem}.{ext}"
        assert (out / f"{stem}.pdf").read_bytes()[:5] == b"%PDF-"
        executed = json.loads((out / f"{stem}.ipynb").read_text())
        assert "papermill" in executed["metadata"]  # the audit copy keeps the run's metadata
        data = [o.get("data", {}) for c in executed["cells"] for o in c.get("outputs", [])]
        specs = [d for d in data if any(m.startswith("application/vnd.vegalite.") for m in d)]
        assert len(specs) >= 6 and all("".join(d["image/svg+xml"]).startswith("<svg") for d in specs)  # + drawing
        # --charts: every chart of the report as SVG and PNG, named by step
        svgs = sorted(out.glob(f"{stem}-[1-4]-*.svg"))
        assert len(svgs) == len(specs)
        assert {p.name.split("-")[2] for p in svgs} <= {"model", "cluster", "facility", "cost"}
        assert {p.name for p in svgs} >= {f"{stem}-4-cost-alternatives.svg"}  # the options chart, after the cost
        for svg in svgs:
            png = svg.with_suffix(".png")
            width, height = (float(v) for v in re.search(r'<svg[^>]*?width="([\d.]+)"[^>]*?height="([\d.]+)"',
                                                           svg.read_text()).groups())
            png_w, png_h = struct.unpack(">II", png.read_bytes()[16:24])  # the PNG header's size
            assert abs(png_w - 2 * width) <= 2 and abs(png_h - 2 * height) <= 2, svg.name  # 2x, for slides
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temp folders left


@pytest.mark.slow
@pytest.mark.parametrize("stem", ["example", "inference"])
def test_html_is_self_contained_and_offline(batch, stem):
    _, out = batch
    html = (out / f"{stem}.html").read_text(encoding="utf-8")
    loading = r"<(?:script|img|link|iframe|source|video|audio|object|embed)\b[^>]*?(?:src|href|data)\s*="
    loads = re.findall(loading + r"""\s*["']?([^"' >]+)""", html, flags=re.I)  # links (<a href>) load nothing
    assert not [r for r in loads if not r.startswith("data:")], loads
    assert not re.search(r"@import|url\(\s*['\"]?(?!data:)[a-z]+:", html, flags=re.I)
    assert "cdn.jsdelivr" not in html and "unpkg.com" not in html and "cdnjs" not in html
    assert "vnd.vegalite" not in html  # the charts' specs stay in the audit notebook
    assert html.count("<svg") >= 6, "charts must be inline <svg>"
    assert not re.search(r"<img[^>]*data:image/svg", html)  # charts are not base64 images
    # no code: neither the imports nor the calls of the notebook's code cells
    assert "import altair" not in html and "report.executive_summary(" not in html and "evaluate(plan)" not in html
    assert f"aiplan {aiplan.__version__}" in html
    result = json.loads((out / f"{stem}.json").read_text())["result"]
    assert re.search(r"<title>(.*?)</title>", html).group(1) == result["plan"]["name"]
    if result["cost"].get("price_as_of"):
        assert result["cost"]["price_as_of"] in html  # prices are dated


@pytest.mark.slow
@pytest.mark.parametrize("stem", ["example", "inference"])
def test_html_sections_come_in_order_and_read_for_people(batch, stem):
    _, out = batch
    html = (out / f"{stem}.html").read_text(encoding="utf-8")
    headings = [visible_text(h).strip() for h in re.findall(r"<h2[^>]*>(.*?)</h2>", html, flags=re.S)]
    headings = [h.rstrip("¶").strip() for h in headings]
    assert [h for h in headings if h in SECTIONS_IN_HTML] == list(SECTIONS_IN_HTML), headings
    assert html.index("aiplan-cover") < html.index(">Executive summary<")
    body = visible_text(before_appendix(html))
    assert not E_NOTATION.findall(body), E_NOTATION.findall(body)[:5]
    assert not SNAKE_CASE.findall(body), SNAKE_CASE.findall(body)[:5]
    # nothing refers to files outside the repository (nor to the machine it ran on)
    text = visible_text(html)
    assert not re.search(r"(?<![\w.])/(?:work|home|tmp|root|usr|opt|var)/|file://|[A-Za-z]:\\\\", text)
    assert not re.search(r"\b[\w-]+\.(?:md|py|ipynb|yaml)\b", visible_text(before_appendix(html)))
    assert str(out) not in html and str(ROOT) not in html


def page_fill(png: Path) -> tuple[float, float]:
    """(how far down the page the content reaches, share of inked pixels) of one rasterised page, the footer
    band left out: a page with a heading and nothing else reaches ~0.1."""
    from PIL import Image

    page = Image.open(png).convert("L")
    body = page.crop((0, 0, page.width, int(page.height * 0.93)))
    ink = body.point(lambda v: 255 if v < 200 else 0)
    box = ink.getbbox()
    inked = sum(ink.histogram()[255:]) / (body.width * body.height)
    return (box[3] / body.height if box else 0.0), inked


def rasterise(pdf: Path, folder: Path) -> list[Path]:
    if not shutil.which("pdftoppm"):
        pytest.skip("poppler-utils (pdftoppm) is not installed; .ci/run installs it")
    subprocess.run(["pdftoppm", "-r", "40", "-gray", "-png", str(pdf), str(folder / "page")], check=True)
    return sorted(folder.glob("page-*.png"))


def page_texts(pdf: Path) -> list[str]:
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return text.split("\f")[:-1]


@pytest.mark.slow
@pytest.mark.parametrize("stem", ["example", "inference"])
def test_every_pdf_page_is_filled_and_carries_the_footer(batch, stem, tmp_path):
    _, out = batch
    pages = rasterise(out / f"{stem}.pdf", tmp_path)
    assert len(pages) >= 4
    for n, png in enumerate(pages, start=1):
        reach, inked = page_fill(png)
        assert reach >= 0.15 and inked >= 0.005, f"page {n} of {len(pages)}: reaches {reach:.0%}, ink {inked:.1%}"
    name = json.loads((out / f"{stem}.json").read_text())["result"]["plan"]["name"]
    texts = page_texts(out / f"{stem}.pdf")
    assert len(texts) == len(pages)
    for n, text in enumerate(texts, start=1):
        assert f"Page {n} of {len(pages)}" in text and name in text
    size = subprocess.run(["pdfinfo", str(out / f"{stem}.pdf")], capture_output=True, text=True).stdout
    assert re.search(r"Page size:\s+59[45][.\d]* x 84[12]", size), size  # A4 by default


@pytest.mark.slow
def test_letter_paper(tmp_path):
    proc = cli("report", PLANS / "finetune-lora.yaml", "-o", tmp_path, "--pdf", "--paper", "letter")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    size = subprocess.run(["pdfinfo", str(tmp_path / "finetune-lora.pdf")], capture_output=True, text=True).stdout
    assert re.search(r"Page size:\s+612 x 792", size), size
    for n, png in enumerate(rasterise(tmp_path / "finetune-lora.pdf", tmp_path), start=1):
        assert page_fill(png)[0] >= 0.15, f"page {n}"


@pytest.mark.slow
def test_deck_of_a_real_run_has_the_step_charts(batch):
    pptx = pytest.importorskip("pptx")
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    _, out = batch
    deck = pptx.Presentation(str(out / "example.pptx"))
    assert len(deck.slides) >= 6
    pictures = [s for slide in deck.slides for s in slide.shapes if s.shape_type == MSO_SHAPE_TYPE.PICTURE]
    assert len(pictures) == 4  # a headline chart for each step of a training plan


@pytest.mark.slow
@pytest.mark.browser
def test_html_renders_with_the_network_off(batch):
    """Chromium loads the report, every request that is not the file itself is recorded and blocked."""
    chromium = Path(report.chromium_path())
    if not chromium.exists():
        pytest.skip("no system Chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    _, out = batch
    requested = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium),
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page()

        def block(route):
            if not route.request.url.startswith(("file://", "data:")):
                requested.append(route.request.url)
                return route.abort()
            return route.continue_()

        page.route("**/*", block)
        page.goto((out / "example.html").resolve().as_uri(), wait_until="load")
        charts = page.locator("svg.marks").count()
        text = page.inner_text("body")
        browser.close()
    assert requested == []
    assert charts >= 6
    assert "Executive summary" in text and "GPUs" in text


@pytest.mark.slow
def test_batch_keeps_going_when_one_plan_fails(tmp_path):
    bad = tmp_path / "plans" / "bad.yaml"
    bad.parent.mkdir()
    bad.write_text("model: no-such-model\n")
    good = tmp_path / "plans" / "good.yaml"
    good.write_text((PLANS / "finetune-lora.yaml").read_text())
    proc = cli("report", tmp_path / "plans", "-o", tmp_path / "out", "--jobs", "2")
    assert proc.returncode == 1
    assert "1 report(s) written" in proc.stdout and "1 failed" in proc.stdout
    assert re.search(r"FAILED\s+\S*bad.yaml: model", proc.stdout)
    assert (tmp_path / "out" / "good.html").is_file()
    assert not (tmp_path / "out" / "bad.html").exists()


@pytest.mark.slow
def test_failed_rerun_leaves_the_previous_good_report_untouched(tmp_path, monkeypatch, capsys):
    plan = tmp_path / "client.yaml"
    plan.write_text((PLANS / "inference.yaml").read_text())
    out = tmp_path / "out"
    assert report.main(args([plan], out, xlsx=True)) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {"client.html", "client.ipynb", "client.json", "client.xlsx"} <= set(before)

    # 1. the re-run dies half-way through writing the HTML
    real_export = report.export_html

    def export_then_crash(executed, html_path, **kw):
        real_export(executed, html_path, **kw)
        Path(html_path).write_text("<html><body>half a rep")  # a partial file ...
        raise OSError("disk full")  # ... then the failure

    monkeypatch.setattr(report.batch, "export_html", export_then_crash)
    plan.write_text(plan.read_text().replace("requests_per_s: 20", "requests_per_s: 40"))
    assert report.main(args([plan], out, xlsx=True)) == 1
    assert "disk full" in capsys.readouterr().out
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing replaced, no temp dir left

    # 2. the re-run is interrupted (Ctrl-C) after the notebook ran
    def interrupted(executed, html_path, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(report.batch, "export_html", interrupted)
    with pytest.raises(KeyboardInterrupt):
        report.render(plan, out, xlsx=True)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before

    # 3. the re-run's plan became invalid: it fails before running anything
    monkeypatch.setattr(report, "export_html", real_export)
    plan.write_text("model: llama-3.1-70b\nworkload: {kind: inference, requests_per_s: -1}\n")
    with pytest.raises(PlanError):
        report.main(args([plan], out))
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.slow
def test_batch_resolves_plan_relative_catalogs_and_reports_failures_in_words(tmp_path):
    """A plan's `catalog:` folder resolves against the plan file (not the notebook); a failed plan
    is one line naming the field and the value, not an exception class."""
    plans = tmp_path / "plans"
    (plans / "mycat").mkdir(parents=True)
    header = (ROOT / "data" / "clouds.csv").read_text(encoding="utf-8").splitlines()[0]
    (plans / "mycat" / "clouds.csv").write_text(
        header + "\nmy-h100,mine,box,h100-sxm,8,here,16,,,,,,,estimate,seed-ai-training-quick-reference,2026-11-01,"
        "own quote\n", encoding="utf-8")
    text = (PLANS / "example.yaml").read_text(encoding="utf-8").replace("cloud: aws-p5.48xlarge", "cloud: my-h100")
    (plans / "own.yaml").write_text(text.replace("name: Acme 70B pretraining", "name: Own\ncatalog: [mycat]"),
                                    encoding="utf-8")
    (plans / "bad.yaml").write_text("name: bad\nmodel: nosuch-model\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "aiplan", "report", str(plans), "-o", str(tmp_path / "out")],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert (tmp_path / "out" / "own.html").is_file()
    assert json.loads((tmp_path / "out" / "own.json").read_text())["result"]["cost"]["cloud"] == "my-h100"
    failed = [line for line in proc.stdout.splitlines() if "FAILED" in line]
    assert len(failed) == 1 and "model: must be a known model id, got 'nosuch-model'" in failed[0]
    assert "Error" not in failed[0] and "Traceback" not in proc.stdout + proc.stderr
