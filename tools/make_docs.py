"""Write docs/plan.md and docs/result.md from the schema table and the field registry.

Usage (from the repository root): ``.venv/bin/python tools/make_docs.py``
"""

from pathlib import Path

from aiplan.docs import plan_markdown, result_markdown

DOCS = Path(__file__).resolve().parent.parent / "docs"

if __name__ == "__main__":
    (DOCS / "plan.md").write_text(plan_markdown(), encoding="utf-8")
    (DOCS / "result.md").write_text(result_markdown(), encoding="utf-8")
    print(f"wrote {DOCS / 'plan.md'} and {DOCS / 'result.md'}")
