"""The one exception type users meet, and id suggestions."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: longest value shown in a message before it is shortened [characters]
MAX_VALUE_CHARS = 80
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_text(text: Any) -> str:
    """``text`` without control characters (terminal escape codes and the like), one line."""
    return _CONTROL.sub("", str(text).replace("\n", " ").replace("\t", " "))


def short(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """``repr(value)`` for a message: one line, control characters removed, at most ``limit`` characters."""
    try:
        text = repr(value)
    except RecursionError:  # a structure nested past Python's limit
        text = f"<{type(value).__name__} nested too deeply>"
    text = clean_text(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: where, what was received, what is allowed."""

    path: str
    allowed: str
    value: Any = None
    has_value: bool = True
    hint: str = ""

    def __str__(self) -> str:
        text = f"{clean_text(self.path)}: {self.allowed}"
        if self.has_value:
            text += f", got {short(self.value)}"
        return text + (f"; {clean_text(self.hint)}" if self.hint else "")


class PlanError(ValueError):
    """Invalid input. ``problems`` lists every problem found, one line each."""

    def __init__(self, problems: Iterable[Problem] | Problem | str):
        if isinstance(problems, (Problem, str)):
            problems = [problems]
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def suggest(name: Any, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Nearest ids to ``name``, only close ones: a difflib similarity of at least 0.6, or a shared
    start of at least 3 characters covering most of the shorter name ("gpu_count" -> "gpus")."""
    text = str(name).lower()[:200]
    candidates = list(candidates)
    close = difflib.get_close_matches(text, candidates, n=n, cutoff=0.6)
    for c in candidates:
        common = len(os.path.commonprefix([text, c.lower()]))
        if len(close) < n and c not in close and common >= 3 and common >= 0.6 * min(len(text), len(c)):
            close.append(c)
    return close


def unknown(path: str, value: Any, kind: str, candidates: Iterable[str]) -> Problem:
    """A Problem for an unknown id or field name, with did-you-mean."""
    near = suggest(value, candidates)
    hint = f"did you mean {' or '.join(repr(c) for c in near)}?" if near else ""
    return Problem(path, f"must be a known {kind}", value, hint=hint)
