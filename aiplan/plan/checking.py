"""Checking one plan field against its schema row: numbers, ids, choices, text; one message per problem."""


from __future__ import annotations

import datetime as _dt
import math
import numbers
from typing import Any

from ..core.catalog import TABLES, Catalog
from ..core.errors import Problem, unknown
from ..core.inputs import number_from_text
from .schema import MAX_PATH_CHARS, MAX_PATHS, MAX_TEXT_CHARS, F

# --- value checking -------------------------------------------------------------------------------


def allowed(spec: F) -> str:
    """What a field allows, in words ("must be an integer from 1 to 10,000,000 [GPUs]")."""
    if spec.kind == "choice":
        return "must be one of " + ", ".join(map(str, spec.choices))
    if spec.kind == "bool":
        return "must be true or false"
    if spec.kind == "str":
        return f"must be a text value of at most {MAX_TEXT_CHARS} characters"
    if spec.kind == "id":
        return f"must be a catalog id (aiplan catalog {spec.table})"
    if spec.kind == "list":
        return "must be a list of " + ", ".join(spec.choices)
    if spec.kind == "paths":
        return f"must be a list of at most {MAX_PATHS} folder paths"
    word = "an integer" if spec.kind == "int" else "a number"
    unit = f" [{spec.unit}]" if spec.unit else ""
    lo, hi = bound_text(spec.lo), bound_text(spec.hi)
    if spec.lo_open:
        return f"must be {word} > {lo} and <= {hi}{unit}"
    return f"must be {word} from {lo} to {hi}{unit}"


def bound_text(x: float) -> str:
    """A range bound for a message: 10,000,000 with separators, 0.001 and 1e16 as such."""
    if float(x).is_integer() and abs(x) < 1e13:
        return f"{int(x):,}"
    return f"{x:g}" if 1e-4 <= abs(x) < 1e13 else f"{x:.0e}".replace("+", "").replace("e-0", "e-")


def _as_number(value: Any, percent: bool = False) -> float | int | None:
    """A plain int/float from an int, float, numpy number or numeric text as people write it ("2T", "4M", "1,024";
    "38%" where ``percent``); None if it is not one."""
    if isinstance(value, str):
        return number_from_text(value, percent)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return None


_YES_NO = ("yes", "no", "on", "off", "y", "n", "true", "false")


def _is_bool(value: Any) -> bool:
    """A Python or numpy boolean (``numpy.bool_``, named ``numpy.bool`` since numpy 2)."""
    kind = type(value)
    return isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool"))


def _bad(path: str, value: Any, spec: F) -> tuple[Any, Problem]:
    """``value`` and the problem that it is not what ``spec`` allows (made only for a bad value)."""
    return value, Problem(path, allowed(spec), value)


def _check_number(path: str, value: Any, spec: F) -> tuple[Any, Problem | None]:
    if _is_bool(value):
        return value, Problem(path, allowed(spec), value, hint="true/false is a yes/no value, not a number")
    number = _as_number(value, spec.fmt == "pct")
    if number is None:
        if isinstance(value, str) and value.strip().lower() in _YES_NO:
            return value, Problem(path, allowed(spec), value, hint="yes/no/on/off are words, not numbers")
        return _bad(path, value, spec)
    try:
        as_float = float(number)
    except OverflowError:
        return value, Problem(path, f"is too large: {allowed(spec)}", value)
    if not math.isfinite(as_float):
        return value, Problem(path, "must be a finite number", value)
    if spec.kind == "int":
        if not as_float.is_integer():
            return _bad(path, value, spec)
        number = int(number)
    else:
        number = as_float
    if as_float < spec.lo or (spec.lo_open and as_float == spec.lo) or as_float > spec.hi:
        return _bad(path, value, spec)
    return number, None


def _check_id(path: str, value: Any, spec: F, catalog: Catalog | None) -> tuple[Any, Problem | None]:
    rows = catalog.table(spec.table) if catalog else {}
    if isinstance(value, str) and value in rows:
        return value, None
    return value, unknown(path, value, TABLES[spec.table][2], rows)


def _check_other(path: str, value: Any, spec: F) -> tuple[Any, Problem | None]:
    if spec.kind == "bool":
        if _is_bool(value):
            return bool(value), None
        if isinstance(value, str) and value.lower() in ("yes", "no", "on", "off"):
            return value, Problem(path, allowed(spec), value, hint="write true or false (yes/no/on/off are text)")
        return _bad(path, value, spec)
    if spec.kind == "choice":
        ok = isinstance(value, str) and value in spec.choices
        return (value, None) if ok else _bad(path, value, spec)
    if spec.kind == "str":
        if isinstance(value, _dt.date):  # YAML reads an unquoted 2025-06-30 as a date
            value = value.isoformat()[:10]
        ok = isinstance(value, str) and value.strip() and len(value) <= MAX_TEXT_CHARS
        return (value, None) if ok else _bad(path, value, spec)
    if spec.kind == "list":
        if not isinstance(value, list) or not value or any(not isinstance(v, str) or v not in spec.choices
                                                           for v in value):
            return _bad(path, value, spec)
        return list(dict.fromkeys(value)), None
    if spec.kind == "paths":
        paths = [value] if isinstance(value, str) else value
        ok = isinstance(paths, list) and 0 < len(paths) <= MAX_PATHS and all(
            isinstance(v, str) and v.strip() and len(v) <= MAX_PATH_CHARS and "\0" not in v for v in paths)
        return (list(paths), None) if ok else _bad(path, value, spec)
    raise AssertionError(spec.kind)


def check_value(path: str, value: Any, spec: F, catalog: Catalog | None = None) -> tuple[Any, Problem | None]:
    """Coerce ``value`` to ``spec``; return ``(value, None)`` or ``(value, Problem)``."""
    if spec.kind in ("int", "float"):
        return _check_number(path, value, spec)
    if spec.kind == "id":
        return _check_id(path, value, spec, catalog)
    return _check_other(path, value, spec)


