"""Write the thin notebooks in notebooks/ (run once: `.venv/bin/python tools/make_notebooks.py`).

Notebooks are narrative plus calls into aiplan; they are written stripped
(no outputs, execution_count null, no papermill metadata).
"""

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

OUT = Path(__file__).resolve().parent.parent / "notebooks"
META = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}}


def params(text):
    return new_code_cell(text, metadata={"tags": ["parameters"]})


def write(name, cells, extra_meta=None):
    nb = new_notebook(cells=cells, metadata=dict(META, **(extra_meta or {})))
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{Path(name).stem.replace('_', '-')}-{i:02d}"
    nbformat.validate(nb)
    nbformat.write(nb, OUT / name)


SETUP = """from IPython.display import Markdown, display

import aiplan
from aiplan import charts
from aiplan.ui.figures import step_markdown

charts.use_offline()  # charts render with no internet (svg via vl-convert)"""

PLAN_PARAM = 'plan_path: str = "../plans/example.yaml"  # plan file to start from'

write("planner.ipynb", [
    params(PLAN_PARAM + "\nstatic: bool = False  # also show the figures as plain outputs (headless runs)"),
    new_code_cell("from aiplan.ui import PlannerApp\n\napp = PlannerApp(plan_path)\napp.view"),
    new_code_cell("if static:\n    app.show_static()"),
])

write("00_start_here.ipynb", [
    new_markdown_cell(
        "# Start here: one plan, four steps\n\n"
        "aiplan answers *what does it need, what machines serve it, where do they live, what does it cost* "
        "in four steps: **model → cluster → facility → cost**. Every number below comes from "
        "`aiplan.evaluate(plan)`; findings come from `aiplan.run_checks`. This notebook walks through one "
        "plan (by default `plans/example.yaml`: pretrain a 70B model in 30 days on H100s) and, at each step, "
        "shows the quick rule of thumb beside the detailed model and says why they differ.\n\n"
        "To explore choices interactively open `01_model` … `04_cost`; for a client meeting open "
        "`planner.ipynb` in Voilà."),
    params(PLAN_PARAM),
    new_code_cell(SETUP + "\n\nplan = aiplan.load_plan(plan_path)\nresult = aiplan.evaluate(plan)\n"
                  "print(plan.data['name'])"),
    new_markdown_cell(
        "## 1. Model: what does it need?\n\n"
        "**Rule of thumb.** Training memory ≈ parameters × 2 bytes × 4 (weights, gradients and optimizer "
        "states in round numbers), for the whole model.\n\n"
        "**Detailed model.** Mixed-precision Adam really holds about 16 bytes per parameter "
        "(bf16 weights and gradients plus fp32 master weights, momentum and variance), plus activations that "
        "depend on sequence length, micro-batch and recomputation; sharding (ZeRO, tensor and pipeline "
        "parallelism) then divides that across GPUs. The chart shows what *one GPU* holds against its "
        "usable memory.\n\n"
        "**Why they differ.** The rule undercounts the optimizer and ignores activations, but it also ignores "
        "sharding, so it is a whole-model sanity check, not a per-GPU answer."),
    new_code_cell('display(Markdown(step_markdown(result, "model")))\ncharts.memory_chart(result)'),
    new_markdown_cell(
        "## 2. Cluster: what machines serve it?\n\n"
        "**Rule of thumb.** Training time ≈ 6 × parameters × tokens / (GPUs × peak FLOP/s × MFU); storage "
        "reads ≈ 1 GB/s per GPU.\n\n"
        "**Detailed model.** The kit picks a parallel layout (tensor, pipeline, data parallel and ZeRO stage) "
        "that fits in memory, adds attention FLOPs, communication time, checkpoint writes and restarts "
        "after failures (goodput), and reports a range of days from the plausible MFU band.\n\n"
        "**Why they differ.** MFU is not a constant: it depends on the layout, the network and the scale; "
        "failures and checkpoints cost wall-clock time the FLOP count does not see."),
    new_code_cell('display(Markdown(step_markdown(result, "cluster")))\ncharts.training_sweep_chart(result)'),
    new_code_cell("charts.layout_chart(result)"),
    new_markdown_cell(
        "## 3. Facility: where do they live?\n\n"
        "**Rule of thumb.** Facility power ≈ server nameplate + 30–40 % for network, storage and cooling.\n\n"
        "**Detailed model.** IT power adds GPUs' servers, switches and storage; PUE adds cooling and losses; "
        "redundancy (N+1, 2N) sets what must be provisioned; the rack power budget and cooling type set the "
        "rack count and floor space.\n\n"
        "**Why they differ.** The overhead share depends on the fabric size and the site's PUE; dense racks "
        "may need rear-door or liquid cooling, which the rule does not see."),
    new_code_cell('display(Markdown(step_markdown(result, "facility")))\ncharts.facility_chart(result)'),
    new_markdown_cell(
        "## 4. Cost: what does it cost, and which way is cheaper?\n\n"
        "**Rule of thumb.** The seed: owning has the lower 3-year cost at 40%+ utilisation, and breaks even "
        "after 12–18 months of continuous use; below 40% renting wins.\n\n"
        "**Detailed model.** Cloud cost is the priced offer × hours used; on-prem cost is capex "
        "(servers, network, storage, facility) plus power, colocation, staff and maintenance over the "
        "ownership period. The breakeven month and the breakeven utilisation say when owning wins.\n\n"
        "**Why they differ.** The threshold is the owned cost per GPU-hour divided by the cloud price, so "
        "it moves with the price: against hyperscaler on-demand rates (AWS p5, $6.88–12.29 per GPU-hour) "
        "owning wins above roughly 17–31%, against 3-year commitments (~$4.86) above ~44%, against "
        "neocloud rates (~$3) above ~71%, and against ~$2 never (`aiplan.cost.breakeven_table`, "
        "facility_network_cost.md §5.4). The tornado shows which assumption moves the total most."),
    new_code_cell('display(Markdown(step_markdown(result, "cost")))\ncharts.cumulative_cost_chart(result)'),
    new_code_cell("charts.utilisation_chart(result)"),
    new_code_cell("charts.sensitivity_chart(result)"),
    new_markdown_cell("## Findings\n\nRules of thumb and common mistakes the kit checked for this plan:"),
    new_code_cell("from aiplan.ui.figures import findings_html\nfrom IPython.display import HTML\n\n"
                  "HTML(findings_html(result['checks']))"),
])

STEP_TEXT = {
    "model": ("01_model.ipynb", "# Step 1 — Model: memory and compute\n\n"
              "Choose the model, workload kind, precision, optimizer, sequence length and recomputation, and "
              "see the memory each GPU holds against its usable capacity, and how training time and cost move "
              "with the GPU count. Invalid combinations show the plan error inline.",
              ["memory", "training_sweep"]),
    "cluster": ("02_cluster.ipynb", "# Step 2 — Cluster: GPUs, layout, network\n\n"
                "Choose the GPU, the GPU count (or a deadline), and optionally fix the parallel layout "
                "(tensor / pipeline / data parallel, ZeRO stage). Leave a field empty to let the kit decide; "
                "the layout chart shows the candidates it weighed.",
                ["layout", "training_sweep", "inference_sweep"]),
    "facility": ("03_facility.ipynb", "# Step 3 — Facility: power, cooling, racks\n\n"
                 "Choose the server, PUE, rack power budget, redundancy, region and growth, and see the power "
                 "breakdown against the rule of thumb, the racks and the growth by year.",
                 ["facility", "growth"]),
    "cost": ("04_cost.ipynb", "# Step 4 — Cost: cloud vs on-prem\n\n"
             "Choose the cloud offer, pricing plan, utilisation, ownership years and facility model, and see "
             "cumulative cost by month with the breakeven, the utilisation crossover and the sensitivity "
             "tornado.",
             ["cumulative_cost", "utilisation", "sensitivity"]),
}

for step, (name, text, chart_names) in STEP_TEXT.items():
    write(name, [
        new_markdown_cell(text),
        params(PLAN_PARAM),
        new_code_cell(SETUP + f'\nfrom aiplan.ui import step_app\n\napp = step_app("{step}", plan_path)\napp.view'),
        new_markdown_cell("The same figures as plain output (what a headless run or a report shows):"),
        new_code_cell(f'display(Markdown(step_markdown(app.result, "{step}")))\n'
                      f"app.show_static({chart_names!r})"),
    ])

write("05_compare.ipynb", [
    new_markdown_cell("# Compare plans side by side\n\nPick two to four saved plans (the presets in `plans/` or "
                      "your own files). The table and charts put their key figures side by side."),
    params('plans: list = ["../plans/example.yaml", "../plans/moe-pretrain.yaml", "../plans/inference.yaml"]'
           "  # two to four plan files"),
    new_code_cell(SETUP + "\nfrom aiplan.ui import CompareApp\n\napp = CompareApp(plans)\napp.view"),
    new_markdown_cell("The same comparison as plain output:"),
    new_code_cell("display(app.table_df)\ncharts.comparison_chart(app.results)"),
])
print("wrote", sorted(p.name for p in OUT.glob("*.ipynb")))
