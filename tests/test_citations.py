"""Citations point into the repository's bibliography, never outside the repository.

Sources are cited by the ids of ``data/sources.csv`` in brackets after the human reference
(numpydoc ``References`` sections, short comments). Two checks:

* no file refers to the working notes kept outside the repository, to their short source ids
  or to their status markers (the forms in ``FORBIDDEN``);
* every bracketed id in a comment or string of ``aiplan/**/*.py`` and ``tests/**/*.py`` names an
  entry of ``data/sources.csv`` (skipped while that file does not exist).
"""

from __future__ import annotations

import csv
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SELF = Path(__file__).resolve()

#: the files scanned for forbidden forms (patterns relative to the repository root)
SCANNED = ("aiplan/**/*.py", "tests/**/*.py", "README.md", "docs/*.md", "data/*.md", "notebooks/*.ipynb")

#: forbidden citation forms: name -> regex
FORBIDDEN = {
    "note file (*_and_*.md)": re.compile(r"\w+_and_\w+\.md"),
    "note file (facility_network_cost.md)": re.compile(r"\bfacility_network_cost\.md"),
    "note file (calibration_runs.csv)": re.compile(r"(?<!data/calibration/)\bcalibration_runs\.csv"),
    "design note outside the repository (plan-contract.md)": re.compile(r"\bplan-contract\.md"),
    "seed article file name": re.compile(r"(quick-reference|what-is-ai-infrastructure)\.txt"),
    "short source id (S01, A10, M08, K04, Z02)": re.compile(r"\b[SAMKZ]\d\d\b"),
    "primary/secondary marker [P]/[S]": re.compile(r"\[[PS]\]"),
    "status word": re.compile(r"\b(CONFIRMED|CORROBORATED|UNCONFIRMED)\b"),
}

#: Files the citation rewrite has not reached yet: the catalog and its README (replaced with the
#: new catalog), the client-visible check texts and the catalog's status vocabulary. Remove a path
#: when its file is rewritten; the test fails if a listed file no longer needs the exemption.
NOT_YET_REWRITTEN = frozenset()

#: a bracketed bibliography citation: ids of lower-case letters, digits, dots and hyphens, joined by ";"
CITATION = re.compile(r"\[([a-z0-9][a-z0-9.\-]*(?:;[a-z0-9][a-z0-9.\-]*)*)\]")


def _scanned_files() -> list[Path]:
    files = {p for pattern in SCANNED for p in ROOT.glob(pattern) if p.is_file()}
    return sorted(p for p in files if ".venv" not in p.parts and p.resolve() != SELF)


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _forbidden_hits(path: Path) -> list[str]:
    hits = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for name, pattern in FORBIDDEN.items():
            match = pattern.search(line)
            if match:
                hits.append(f"{_rel(path)}:{number}: {name}: {match.group(0)!r}")
    return hits


def test_no_citation_outside_the_repository():
    hits = [h for p in _scanned_files() if _rel(p) not in NOT_YET_REWRITTEN for h in _forbidden_hits(p)]
    assert not hits, "cite data/sources.csv ids instead:\n" + "\n".join(hits)


def test_not_yet_rewritten_list_is_current():
    missing = [p for p in NOT_YET_REWRITTEN if not (ROOT / p).is_file()]
    clean = [p for p in NOT_YET_REWRITTEN if (ROOT / p).is_file() and not _forbidden_hits(ROOT / p)]
    assert not missing and not clean, f"remove from NOT_YET_REWRITTEN: {sorted(missing + clean)}"


def _looks_like_id(token: str) -> bool:
    """Bibliography ids are hyphenated slugs with a word of 3+ characters (``arxiv-2407.21783``,
    ``nist-sp-811``); units (``[kg]``), ranges (``[0-9]``) and character classes are not."""
    return "-" in token and any(len(part) >= 3 and re.search("[a-z]", part) for part in token.split("-"))


def _cited_ids(path: Path) -> list[tuple[int, str]]:
    """(line, id) of every bracketed id in the comments and string literals of a Python file."""
    out = []
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    for tok in tokens:
        if tok.type not in (tokenize.COMMENT, tokenize.STRING):
            continue
        for match in CITATION.finditer(tok.string):
            line = tok.start[0] + tok.string.count("\n", 0, match.start())
            ids = match.group(1).split(";")
            if all(_looks_like_id(i) for i in ids):
                out.extend((line, i) for i in ids)
    return out


def test_cited_ids_are_in_the_bibliography():
    sources = ROOT / "data" / "sources.csv"
    if not sources.is_file():
        pytest.skip("data/sources.csv (the bibliography) is not in this tree yet")
    with sources.open(encoding="utf-8", newline="") as f:
        known = {row["id"] for row in csv.DictReader(f)}
    files = sorted(set(ROOT.glob("aiplan/**/*.py")) | set(ROOT.glob("tests/**/*.py")))
    unknown = [f"{_rel(p)}:{line}: [{i}]" for p in files if ".venv" not in p.parts
               for line, i in _cited_ids(p) if i not in known]
    assert not unknown, "ids missing from data/sources.csv:\n" + "\n".join(unknown)


def test_citation_scanner_finds_ids():
    # the scanner itself: ids in comments and docstrings, not units, ranges or code
    sample = ROOT / "aiplan" / "units.py"
    ids = {i for _, i in _cited_ids(sample)}
    assert "nist-sp-811" in ids and "seed-ai-training-quick-reference" in ids
    assert not ids & {"kg", "bit", "0-9"}
