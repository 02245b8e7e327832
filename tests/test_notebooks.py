"""Notebooks are thin: narrative, widgets and calls into aiplan; they run in test_regression.py."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

NB_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(p.name for p in NB_DIR.glob("*.ipynb"))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_stripped_and_thin(name):
    nb = json.loads((NB_DIR / name).read_text())
    assert "papermill" not in nb["metadata"] and "widgets" not in nb["metadata"]
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
            assert "def " not in "".join(cell["source"]), "no functions in notebooks: put them in aiplan"


def test_narrative_quotes_no_typed_figures():
    """Results quoted in the narrative are computed: the "Detailed model" and "Why they differ"
    paragraphs hold no typed prices or percentages (the rules of thumb they discuss may quote the
    rule's own numbers)."""
    import re

    for name in NOTEBOOKS:
        nb = json.loads((NB_DIR / name).read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            for para in "".join(cell["source"]).split("\n\n"):
                if para.startswith(("**Why they differ.**", "**Detailed model.**")):
                    assert not re.search(r"\$\s?\d|\d\s?%", para), (name, para[:200])
