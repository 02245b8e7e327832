"""Rules of thumb and common mistakes -> findings on a plan and its result."""

from __future__ import annotations

from typing import Any


def run_checks(plan, result: dict[str, Any]) -> list[dict[str, str]]:
    """Findings ``{id, severity, message, source}`` for ``plan`` and its ``result``."""
    return []
