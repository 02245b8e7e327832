"""The reference docs are generated from the schema table and the registry, and stay current."""

from __future__ import annotations

import re

from conftest import ROOT
from make_docs import plan_markdown, result_markdown, with_validation_block

from aiplan.core import fields
from aiplan.plan import MODEL, SECTIONS, TOP

DOCS = ROOT / "docs"


def test_plan_and_result_docs_are_current():
    """Regenerate with `python tools/make_docs.py` after changing the schema or the registry."""
    assert (DOCS / "plan.md").read_text(encoding="utf-8") == plan_markdown()
    assert (DOCS / "result.md").read_text(encoding="utf-8") == result_markdown()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert with_validation_block(readme) == readme  # the validation figures quoted are aiplan validate's


def test_plan_doc_lists_every_plan_field():
    text = plan_markdown()
    paths = list(TOP) + [f"{s}.{k}" for s, specs in SECTIONS.items() for k in specs] + [f"model.{k}" for k in MODEL]
    missing = [p for p in paths if f"| `{p}` |" not in text]
    assert not missing


def test_result_doc_lists_every_registry_key():
    text = result_markdown()
    assert all(f"| `{key}` |" in text for key in fields.RESULT_FIELDS)


def test_docs_link_nothing_outside_the_repository():
    for path in list(DOCS.glob("*.md")) + [ROOT / "README.md"]:
        text = path.read_text(encoding="utf-8")
        for link in re.findall(r"\]\(([^)#]+)", text):
            if link.startswith(("http://", "https://")):
                continue
            assert (path.parent / link).resolve().is_relative_to(ROOT.resolve()), (path.name, link)
            assert (path.parent / link).exists(), (path.name, link)
        assert "../shared" not in text, path.name
