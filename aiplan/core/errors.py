"""The one exception type users meet, and id suggestions."""

from __future__ import annotations

import difflib
import os
import re
import reprlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: longest value shown in a message before it is shortened [characters]
MAX_VALUE_CHARS = 80
#: longest field path shown in a message (a 10,000-character key) [characters]
MAX_PATH_CHARS = 80
#: longest message line [characters]
MAX_LINE_CHARS = 200
#: most problems a message lists (a plan with 9,000 unknown fields) [-]
MAX_PROBLEMS_SHOWN = 50
# control characters (terminal escape codes and the like), and the Unicode format characters that
# reorder or hide text on a terminal (bidirectional overrides, zero-width characters)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
# repr of containers and strings, bounded: a huge or deeply nested value is never expanded in full
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 3, 200, 200, 200
_REPR.maxdict = _REPR.maxlist = _REPR.maxtuple = _REPR.maxset = _REPR.maxfrozenset = 6


def clean_text(text: Any, limit: int | None = None) -> str:
    """``text`` without control characters (terminal escape codes and the like), one line;
    at most ``limit`` characters (with an ellipsis) when given."""
    text = _CONTROL.sub("", str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("\t", " "))
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


def short(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """``repr(value)`` for a message: one line, control characters removed, at most ``limit`` characters.

    Containers and long strings are shown in part (a YAML alias bomb is never expanded), and a value
    whose ``repr`` fails is shown by its type.
    """
    try:
        text = _REPR.repr(value) if isinstance(value, (str, int, list, tuple, dict, set, frozenset)) else repr(value)
    except RecursionError:  # a structure nested past Python's limit
        text = f"<{type(value).__name__} nested too deeply>"
    except Exception:  # noqa: BLE001 - a user object whose repr fails
        text = f"<{type(value).__name__}>"
    return clean_text(text, limit)


def _middle(text: str, limit: int) -> str:
    """``text`` shortened in the middle (a file path keeps its start and its file name)."""
    if len(text) <= limit:
        return text
    head = limit // 3
    return text[:head] + "…" + text[len(text) - (limit - head - 1):]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: where, what was received, what is allowed."""

    path: str
    allowed: str
    value: Any = None
    has_value: bool = True
    hint: str = ""

    def __str__(self) -> str:
        text = f"{_middle(clean_text(self.path), MAX_PATH_CHARS)}: {self.allowed}"
        if self.has_value:
            text += f", got {short(self.value)}"
        return clean_text(text + (f"; {self.hint}" if self.hint else ""), MAX_LINE_CHARS)


class PlanError(ValueError):
    """Invalid input. ``problems`` lists every problem found, one line each.

    The message (and the command line) shows the first :data:`MAX_PROBLEMS_SHOWN` and says how many
    more there are.
    """

    def __init__(self, problems: Iterable[Problem] | Problem | str):
        if isinstance(problems, (Problem, str)):
            problems = [problems]
        self.problems = list(problems)
        super().__init__("\n".join(self.lines()))

    def lines(self) -> list[str]:
        """One line per problem, at most :data:`MAX_PROBLEMS_SHOWN`, then how many more there are."""
        lines = [str(p) for p in self.problems[:MAX_PROBLEMS_SHOWN]]
        more = len(self.problems) - MAX_PROBLEMS_SHOWN
        return lines + ([f"... and {more:,} more problems"] if more > 0 else [])


def suggest(name: Any, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Nearest ids to ``name``, only close ones: a difflib similarity of at least 0.7, or a shared
    start of at least 3 characters covering most of the shorter name ("gpu_count" -> "gpus")."""
    text = str(name).lower()[:200]
    candidates = list(candidates)
    close = difflib.get_close_matches(text, candidates, n=n, cutoff=0.7)
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


def unknown_keys(prefix: str, keys: Iterable[Any], kind: str, candidates: Iterable[str]) -> list[Problem]:
    """:func:`unknown` for each key (path ``prefix.key``); did-you-mean for the first
    :data:`MAX_PROBLEMS_SHOWN` only (the rest are not shown, and suggestions take time)."""
    candidates = list(candidates)
    out = []
    for i, key in enumerate(keys):
        path = f"{prefix}.{key}" if prefix else str(key)
        out.append(unknown(path, key, kind, candidates) if i < MAX_PROBLEMS_SHOWN
                   else Problem(path, f"must be a known {kind}", key))
    return out
