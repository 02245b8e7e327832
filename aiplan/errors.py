"""The one exception type users meet, and id suggestions."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Iterable


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: where, what was received, what is allowed."""

    path: str
    allowed: str
    value: Any = None
    has_value: bool = True
    hint: str = ""

    def __str__(self) -> str:
        text = f"{self.path}: {self.allowed}"
        if self.has_value:
            text += f", got {self.value!r}"
        return text + (f"; {self.hint}" if self.hint else "")


class PlanError(ValueError):
    """Invalid input. ``problems`` lists every problem found, one line each."""

    def __init__(self, problems: Iterable[Problem] | Problem | str):
        if isinstance(problems, (Problem, str)):
            problems = [problems]
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def suggest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Nearest ids to ``name`` (difflib ratio, then prefix/substring matches)."""
    candidates = list(candidates)
    close = difflib.get_close_matches(str(name).lower(), candidates, n=n, cutoff=0.5)
    key = str(name).lower()
    for c in candidates:  # substring or shared-prefix matches ("gpu_count" -> "gpus")
        if len(close) >= n:
            break
        if c not in close and (key in c or c in key or (len(key) >= 3 and c.startswith(key[:3]))):
            close.append(c)
    return close


def unknown(path: str, value: Any, kind: str, candidates: Iterable[str]) -> Problem:
    """A Problem for an unknown id or field name, with did-you-mean."""
    near = suggest(value, candidates)
    hint = f"did you mean {' or '.join(repr(c) for c in near)}?" if near else ""
    return Problem(path, f"must be a known {kind}", value, hint=hint)
