"""Citations point into the repository's bibliography, never outside the repository.

Sources are cited by the ids of ``data/sources.csv`` in brackets after the human reference
(numpydoc ``References`` sections, short comments). Two checks:

* no file names a file that is not in the repository (working notes kept elsewhere), and none
  uses the notes' short source ids or status markers (the forms in ``FORBIDDEN``);
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
SCANNED = ("aiplan/**/*.py", "tests/**/*.py", "tools/*.py", "benchmarks/*.py", "README.md", "docs/*.md",
           "data/**/*.md", "data/**/*.csv", "notebooks/*.ipynb")
#: the bibliography names primary documents (a publisher's file, a URL) by design
NAMES_OTHER_FILES = frozenset({"data/sources.csv"})

#: a bare file name in lower-case snake or kebab case, the way the working notes and seed articles
#: are named and cited (a primary source's file is cited with its path or repository); URLs are
#: removed before looking
NOTE_NAME = re.compile(r"(?<![\w./-])([a-z0-9]+(?:[_-][a-z0-9]+)+\.(?:md|txt|csv))\b")
URL = re.compile(r"https?://\S+")

#: forbidden citation forms: name -> regex
FORBIDDEN = {
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


def _repository_names() -> set[str]:
    """Names of the repository's files."""
    return {p.name for p in ROOT.rglob("*") if p.is_file() and not {".venv", ".git", "build"} & set(p.parts)}


def _forbidden_hits(path: Path, known: set[str] | None = None) -> list[str]:
    known = _repository_names() if known is None else known
    hits = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for name, pattern in FORBIDDEN.items():
            match = pattern.search(line)
            if match:
                hits.append(f"{_rel(path)}:{number}: {name}: {match.group(0)!r}")
        if _rel(path) in NAMES_OTHER_FILES:
            continue
        for match in NOTE_NAME.finditer(URL.sub(" ", line)):
            if match.group(1) not in known:
                hits.append(f"{_rel(path)}:{number}: file outside the repository: {match.group(1)!r}")
    return hits


def test_no_citation_outside_the_repository():
    known = _repository_names()
    hits = [h for p in _scanned_files() if _rel(p) not in NOT_YET_REWRITTEN for h in _forbidden_hits(p, known)]
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
    sample = ROOT / "aiplan" / "core" / "units.py"
    ids = {i for _, i in _cited_ids(sample)}
    assert "nist-sp-811" in ids and "seed-ai-training-quick-reference" in ids
    assert not ids & {"kg", "bit", "0-9"}
