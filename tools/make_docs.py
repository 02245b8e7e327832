"""Write docs/plan.md and docs/result.md from the schema table and the field registry, and the
validation summary into README.md.

Usage (from the repository root): ``.venv/bin/python tools/make_docs.py``
"""

from pathlib import Path

from aiplan.docs import plan_markdown, result_markdown, with_validation_block

DOCS = Path(__file__).resolve().parent.parent / "docs"

if __name__ == "__main__":
    (DOCS / "plan.md").write_text(plan_markdown(), encoding="utf-8")
    (DOCS / "result.md").write_text(result_markdown(), encoding="utf-8")
    readme = DOCS.parent / "README.md"
    readme.write_text(with_validation_block(readme.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {DOCS / 'plan.md'}, {DOCS / 'result.md'} and the validation summary in {readme}")
