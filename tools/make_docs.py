"""Write docs/plan.md and docs/result.md from the schema table and the field registry, and the
validation summary into README.md. Not shipped in the wheel: a repository tool.

Usage (from the repository root): ``.venv/bin/python tools/make_docs.py``

Reference docs generated from the schema table and the field registry.

``docs/plan.md`` lists every plan field (from :mod:`aiplan.plan`) and ``docs/result.md`` every
result key (from :mod:`aiplan.core.fields`). ``python tools/make_docs.py`` rewrites both; a test fails
when a committed file differs from what this module generates.
"""

from __future__ import annotations

from pathlib import Path

from aiplan.calibration.validation import ROLE_LABELS, validation_rows, validation_summary
from aiplan.core.fields import RESULT_FIELDS, SECTION_TITLES
from aiplan.plan import MODEL, MODEL_RULES, PLAN_RULES, SECTIONS, TOP, TRAINING_ONLY, F, allowed


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _default(spec: F) -> str:
    if callable(spec.default):
        return spec.default_doc or "computed"
    if spec.default is None:
        return spec.default_doc or "—"
    if isinstance(spec.default, list):
        return ", ".join(spec.default)
    if isinstance(spec.default, bool):
        return "true" if spec.default else "false"
    return f"{spec.default:g}" if isinstance(spec.default, float) else str(spec.default)


def _allowed(spec: F) -> str:
    return allowed(spec).removeprefix("must be ")


def _table(prefix: str, specs: dict[str, F]) -> list[str]:
    lines = ["| field | allowed | default | unit | applies to | meaning |", "|---|---|---|---|---|---|"]
    for key, spec in specs.items():
        applies = ", ".join(spec.kinds) if spec.kinds else "all"
        if f"{prefix}{key}" in TRAINING_ONLY:
            applies = "all (used by pretrain, finetune)"
        judgement = " (judgement)" if spec.judgement else ""
        lines.append(f"| `{prefix}{key}` | {_cell(_allowed(spec))} | {_cell(_default(spec))}{judgement} | "
                     f"{_cell(spec.unit)} | {applies} | {_cell(spec.label)}: {_cell(spec.doc)} |")
    return lines


def plan_markdown() -> str:
    """``docs/plan.md``: every plan field with its type, range, default, unit and meaning."""
    out = ["# Plan fields", "",
           "Generated from the schema table in `aiplan/plan/` by `python tools/make_docs.py`; do not edit.",
           "", "Every field is optional except what the workload needs (`model`, `workload.tokens` and "
           "`cluster.gpus` or `cluster.deadline_days` for training). A default marked *(judgement)* is our "
           "engineering judgement rather than a published figure; the report's assumptions table lists it.",
           "", "## Top level", "", *_table("", TOP),
           "", "`model` is a catalog id (`aiplan catalog models`) or a mapping of the fields below.", ""]
    for section, specs in SECTIONS.items():
        out += [f"## {section}", "", *_table(f"{section}.", specs), ""]
    out += ["## model (as a mapping)", "",
            "`layers`, `hidden`, `heads` and `vocab` are required unless `from` names a catalog model to start "
            "from. When `params` is given it is the parameter count; the architecture still drives activations, "
            "KV cache and attention FLOPs.", "", *_table("model.", MODEL), "",
            "## Rules across fields", "", "| field | rule |", "|---|---|"]
    for rule in MODEL_RULES + PLAN_RULES:
        out.append(f"| `{rule.path}` | {_cell(rule.message)} |")
    return "\n".join(out) + "\n"


def result_markdown() -> str:
    """``docs/result.md``: every result key with its label, unit and meaning."""
    out = ["# Result keys", "",
           "Generated from the field registry `aiplan/core/result_fields.csv` by `python tools/make_docs.py`; do not "
           "edit. A key that does not apply to the workload is `null`. List items are shown as `key[].item`.", ""]
    section = None
    for key, f in RESULT_FIELDS.items():
        if f.section != section:
            section = f.section
            out += ["", f"## {SECTION_TITLES[section]} (`{section}`)", "",
                    "| key | label | unit | meaning |", "|---|---|---|---|"]
        out.append(f"| `{key}` | {_cell(f.label)} | {_cell(f.unit)} | {_cell(f.doc)} |")
    return "\n".join(out).replace("\n\n\n", "\n\n") + "\n"


VALIDATION_MARKERS = ("<!-- validation:start (python tools/make_docs.py) -->", "<!-- validation:end -->")


def validation_markdown() -> str:
    """The summary of ``aiplan validate`` as a Markdown table (README and docs/validation.md)."""

    lines = ["| figure | cases | cases are | median error | within ±25% | inside the P10–P90 band | target |",
             "|---|---|---|---|---|---|---|"]
    for s in validation_summary(validation_rows()):
        error, within, band = s["median_error_loo_pct"], s["within_25_loo"], s["inside_band_loo"]
        target = ""
        if s["target"] and s["role"] == "check":
            target = f"{s['target']}: {'met' if s['target_met'] else '**not met**'}"
        lines.append(f"| {s['set']} | {s['cases']} | {ROLE_LABELS[s['role']]} | "
                     f"{'–' if error is None else f'{error:.1f}%'} | {'–' if within is None else f'{within:.0%}'} | "
                     f"{'–' if band is None else f'{band:.0%}'} | {target} |")
    return "\n".join(lines) + "\n"


def with_validation_block(text: str) -> str:
    """``text`` with the block between :data:`VALIDATION_MARKERS` replaced by :func:`validation_markdown`."""
    start, end = VALIDATION_MARKERS
    a, b = text.index(start) + len(start), text.index(end)
    return text[:a] + "\n" + validation_markdown() + text[b:]


DOCS = Path(__file__).resolve().parent.parent / "docs"

if __name__ == "__main__":
    (DOCS / "plan.md").write_text(plan_markdown(), encoding="utf-8")
    (DOCS / "result.md").write_text(result_markdown(), encoding="utf-8")
    readme = DOCS.parent / "README.md"
    readme.write_text(with_validation_block(readme.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {DOCS / 'plan.md'}, {DOCS / 'result.md'} and the validation summary in {readme}")
