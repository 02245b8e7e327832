"""The field registry: every result key's human label, unit, number format and meaning.

One table (:data:`RESULT_FIELDS`, read from ``aiplan/core/result_fields.csv``) says, for each key of
a result (``memory.per_gpu_gb``; list items as ``cost.monthly[].month``), how people read it: a
short label, the unit, the kind of number (which decides the format) and one sentence of meaning.
The app, the report, the spreadsheet, the CLI table and ``docs/result.md`` all read labels and formats from here, so a
figure looks the same everywhere. :func:`format_value` is the one number formatter: money as
$K/$M/$B, power as kW below 1 MW, durations in hours, days, months or years, large counts in
words, never e-notation.

Plan fields are described by the plan schema (:mod:`aiplan.plan`), which carries the same
label, unit and format attributes.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: report/app step of each result section
SECTION_STEP = {
    "model": "Model", "memory": "Model", "compute": "Model", "inference": "Model",
    "cluster": "Cluster", "network": "Cluster", "storage": "Cluster", "checkpoint": "Cluster",
    "reliability": "Cluster", "facility": "Facility", "cost": "Cost", "checks": "Findings",
}
#: human title of each result section
SECTION_TITLES = {
    "model": "Model", "memory": "Memory", "compute": "Compute and time", "inference": "Serving",
    "cluster": "Cluster layout", "network": "Network", "storage": "Storage", "checkpoint": "Checkpoints",
    "reliability": "Reliability", "facility": "Facility", "cost": "Cost", "checks": "Findings",
}
#: format kinds and the Excel number format of each
EXCEL_FORMATS = {
    "count": "#,##0", "number": "#,##0.00", "big": "#,##0", "pct": "0.0%", "odds": "0.0%", "usd": '"$"#,##0',
    "usd_rate": '"$"#,##0.00', "power": "#,##0.0", "energy": "#,##0.0", "days": "#,##0.0", "hours": "#,##0.0",
    "minutes": "#,##0.0", "seconds": "#,##0.00", "ms": "#,##0.0", "months": "#,##0.0", "gb": "#,##0.0",
    "tb": "#,##0.0##", "gb_per_s": "#,##0.0", "flops": "#,##0", "flops_rate": "#,##0", "text": "@", "bool": "@",
    "date": "yyyy-mm-dd", "range": "@", "co2": "#,##0.00",
}
NONE_TEXT = "n/a"


@dataclass(frozen=True)
class Field:
    """One result key: ``label`` [``unit``], formatted as ``kind``; ``doc`` says what it means."""

    key: str
    label: str
    unit: str
    kind: str
    doc: str
    #: the record (:mod:`aiplan.core.records`) the key belongs to, when not its section's
    record: str = ""

    @property
    def section(self) -> str:
        return self.key.split(".", 1)[0].split("[", 1)[0]

    @property
    def step(self) -> str:
        return SECTION_STEP.get(self.section, "")

    @property
    def label_with_unit(self) -> str:
        return f"{self.label} [{self.unit}]" if self.unit else self.label

    @property
    def excel_format(self) -> str:
        return EXCEL_FORMATS.get(self.kind, "General")


# --- formatting -------------------------------------------------------------------------------

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_WORDS = ((1e15, "quadrillion"), (1e12, "trillion"), (1e9, "billion"), (1e6, "million"))


#: from this size on (and below the second), numbers are written as a power of ten ("2.74 × 10²⁹"),
#: not 30 digits
_POWER_FROM, _POWER_BELOW = 1e15, 1e-6


def _power(value: float, digits: int = 3) -> str:
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def _sig(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, thousands separators, never e-notation (a power of
    ten from 10^15 and below 10^-6)."""
    if value == 0 or not math.isfinite(value):
        return "0"
    if not _POWER_BELOW <= abs(value) < _POWER_FROM:
        return _power(value, digits)
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(digits - 1 - magnitude, 0)
    text = f"{round(value, decimals):,.{decimals}f}"
    return text


def _plain(value: float, digits: int = 3) -> str:
    """A plain number: integers >= 1,000 with separators, smaller ones to 3 significant digits."""
    return f"{value:,.0f}" if 1000 <= abs(value) < _POWER_FROM else _sig(value, digits)


def _big(value: float) -> str:
    """Large counts in words ("70.6 billion"); beyond 10^18 as a power of ten ("9.75 × 10²³")."""
    v = abs(value)
    if v >= 1e18:
        return _power(value)
    for scale, word in _WORDS:
        if v >= scale:
            return f"{_sig(value / scale)} {word}"
    return _plain(value)


def big_like(value: float, reference: float, word: bool = True) -> str:
    """``value`` in the words scale ``reference`` reads in (:func:`_big`), so figures set side by side share one
    ("0.702 million" beside "1.46 million", not "702,220"); without the word when ``word`` is false.

    >>> big_like(702220, 1.46e6), big_like(511433, 1.46e6, word=False), big_like(3.2e7, 3.08e7), big_like(512, 900)
    ('0.702 million', '0.511', '32.0 million', '512')
    """
    for scale, name in _WORDS:
        if abs(reference) >= scale:
            return f"{_sig(value / scale)} {name}" if word else _sig(value / scale)
    return _plain(value)


def _usd(value: float) -> str:
    v = abs(value)
    sign = "-" if value < 0 else ""
    if v >= _POWER_FROM:
        return f"{sign}${_power(v)}"
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if v >= scale:
            return f"{sign}${_sig(v / scale)}{suffix}"
    return f"{sign}${v:,.2f}" if v < 100 else f"{sign}${v:,.0f}"


def _duration_days(days: float) -> str:
    if days < 2:  # "36.0 hours", not "1.50 days" (the CLI would otherwise print 24.0 hours beside 1.00 days)
        return _duration_hours(days * 24)
    if days < 90:
        return f"{_sig(days)} days"
    if days < 730:
        return f"{_sig(days / 30.4375)} months"
    return f"{_sig(days / 365.25)} years"


def _duration_hours(hours: float) -> str:
    if hours < 1:
        return _duration_minutes(hours * 60)
    if hours < 48:
        return f"{_sig(hours)} hours"
    return _duration_days(hours / 24)


def _duration_minutes(minutes: float) -> str:
    if minutes < 1:
        return _duration_seconds(minutes * 60)
    if minutes < 120:
        return f"{_sig(minutes)} min"
    return _duration_hours(minutes / 60)


def _duration_seconds(seconds: float) -> str:
    if seconds < 1:
        return f"{_sig(seconds * 1000)} ms"
    if seconds < 120:
        return f"{_sig(seconds)} s"
    return _duration_minutes(seconds / 60)


def _scaled(value: float, units: tuple[tuple[float, str], ...]) -> str:
    """``value`` in the largest unit it reaches (``units`` from largest, each (size, name))."""
    for size, name in units:
        if abs(value) >= size:
            return f"{_plain(value / size)} {name}"
    return f"{_sig(value / units[-1][0])} {units[-1][1]}"


def _usd_rate(v: float) -> str:
    """A price per unit: cents always shown, three significant digits below a dollar ("$0.10", "$0.055",
    "$0.306", "$2.21")."""
    if abs(v) >= 1:
        return f"${v:,.2f}"
    short = f"{v:.3g}"
    return f"${v:.2f}" if "e" not in short and len(short.partition(".")[2]) < 2 else f"${short}"


def _odds(p: float) -> str:
    """A probability in whole percent, rounded down, so that it never reads better than computed: 0.897 is
    "89%", not the "90%" a plan sized for 90% odds would show."""
    pct = p * 100
    return "under 1%" if 0 < pct < 1 else f"{math.floor(pct + 1e-6):.0f}%"


_NUMBER_KINDS = {
    "odds": _odds,
    "big": _big,
    "usd": _usd,
    "usd_rate": lambda v: _usd_rate(v) if abs(v) < _POWER_FROM else _usd(v),
    "power": lambda v: _scaled(v, ((1000.0, "MW"), (1.0, "kW"))) if abs(v) >= 1000 else f"{_plain(v)} kW",
    "energy": lambda v: _scaled(v, ((1000.0, "GWh"), (1.0, "MWh"), (0.001, "kWh"))),
    "co2": lambda v: _scaled(v, ((1.0, "t CO₂e"), (0.001, "kg CO₂e"))),
    "days": _duration_days,
    "hours": _duration_hours,
    "minutes": _duration_minutes,
    "seconds": _duration_seconds,
    "ms": lambda v: f"{_sig(v)} ms" if v < 1000 else _duration_seconds(v / 1000),
    "months": lambda v: f"{_sig(v)} months" if v < 36 else f"{_sig(v / 12)} years",
    "gb": lambda v: _scaled(v, ((1e6, "PB"), (1e3, "TB"), (1.0, "GB"))) if abs(v) >= 1 else f"{_sig(v)} GB",
    "tb": lambda v: _scaled(v, ((1e3, "PB"), (1.0, "TB"))) if abs(v) >= 1 else f"{_sig(v * 1000)} GB",
    "gb_per_s": lambda v: _scaled(v, ((1e3, "TB/s"), (1.0, "GB/s"))) if abs(v) >= 1 else f"{_sig(v * 1000)} MB/s",
    "flops": lambda v: f"{_big(v)} FLOP",
    "flops_rate": lambda v: _scaled(v, ((1e18, "EFLOP/s"), (1e15, "PFLOP/s"), (1e12, "TFLOP/s"), (1e9, "GFLOP/s"))),
}


def singular(unit: str) -> str:
    """The singular of a plural unit: "GPUs" -> "GPU", "switches" -> "switch" ("GB/s" unchanged)."""
    if "/" in unit or not unit.endswith("s") or unit.endswith("ss"):
        return unit
    if unit.endswith(("ches", "shes", "xes", "sses")):
        return unit[:-2]
    return unit[:-1]


def format_value(value: Any, kind: str = "number", unit: str = "") -> str:
    """A value for people: ``format_value(4.99e6, "usd") == "$4.99M"``; None gives "n/a".

    ``kind`` is a format kind of :data:`EXCEL_FORMATS`; ``count``, ``number`` and ``big`` append
    ``unit`` (singular for exactly 1: "1 GPU"); the other kinds carry their unit themselves. Lists
    of numbers (a range) are joined with an en dash.

    Examples
    --------
    >>> [format_value(v, k) for v, k in ((1803.67, "power"), (850.2, "power"), (0.38, "pct"),
    ...                                  (720646.8, "count"), (70553706496, "big"), (9.75e23, "flops"))]
    ['1.80 MW', '850 kW', '38%', '720,647', '70.6 billion', '9.75 × 10²³ FLOP']
    >>> [format_value(v, "days") for v in (0.5, 29.99, 400, 20462)]
    ['12.0 hours', '30.0 days', '13.1 months', '56.0 years']
    >>> [format_value(v, k) for v, k in ((0.120, "energy"), (29800.0, "energy"), (0.0439, "co2"), (10937, "co2"))]
    ['120 kWh', '29.8 GWh', '43.9 kg CO₂e', '10,937 t CO₂e']
    """
    if value is None:
        return NONE_TEXT
    if isinstance(value, bool) or kind == "bool":
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return "–".join(format_value(v, kind, unit) for v in value)
    if isinstance(value, str) or kind in ("text", "date", "range"):
        return str(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {format_value(v, kind, unit)}" for k, v in value.items())
    value = float(value)
    if not math.isfinite(value):
        return NONE_TEXT
    if kind in _NUMBER_KINDS:
        text = _NUMBER_KINDS[kind](value)
        return f"{text} {unit}" if unit and kind == "big" else text
    if kind == "pct":
        pct = value * 100
        text = f"{pct:.0f}%" if 10 <= abs(pct) < 99 or 100 <= abs(pct) < _POWER_FROM else \
            f"{_sig(pct, 2 if abs(pct) < 10 else 3)}%"
    elif kind == "count":
        text = f"{value:,.0f}" if abs(value) < _POWER_FROM else _power(value)
    else:
        text = _plain(value)
    if unit and kind in ("count", "number"):
        return f"{text} {singular(unit) if value == 1 else unit}"
    return text


# --- the registry ---------------------------------------------------------------------------------



def _load() -> dict[str, Field]:
    """The registry table ``aiplan/core/result_fields.csv`` (key, label, unit, kind, description, record)."""
    path = Path(__file__).resolve().parent / "result_fields.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    out = {}
    for row in rows:
        assert row["kind"] in EXCEL_FORMATS, f"{row['key']}: unknown kind {row['kind']}"
        out[row["key"]] = Field(row["key"], row["label"], row["unit"], row["kind"], row["description"],
                                row.get("record") or "")
    return out


#: every result key: key -> Field (list items as ``section.key[].item``), from ``result_fields.csv``
RESULT_FIELDS: dict[str, Field] = _load()


#: keys whose value is a mapping documented by its own keys (``memory.layout``)
_PARENTS = frozenset(".".join(k.replace("[]", "").split(".")[:i]) for k in RESULT_FIELDS
                     for i in range(2, k.count(".") + 1))


def get_path(result: Mapping | None, dotted: str, default: Any = None) -> Any:
    """``result["a"]["b"]`` for ``"a.b"``: the one reader of a result by key.

    ``default`` when any part is missing, or the value is None or not a finite number (NaN: not
    computed). Works on a result dict and on a step's :class:`~aiplan.core.records.ResultView`.

    >>> get_path({"compute": {"gpus": 8, "mfu": float("nan")}}, "compute.gpus")
    8
    >>> get_path({"compute": {"mfu": float("nan")}}, "compute.mfu", 0.4), get_path({}, "cost.cloud_usd")
    (0.4, None)
    """
    node: Any = result
    for part in dotted.split("."):
        if not isinstance(node, Mapping):
            return default
        node = node.get(part)
    if node is None or isinstance(node, (str, bool, Mapping, list)):
        return default if node is None else node
    try:
        return node if math.isfinite(node) else default
    except TypeError:  # not a number
        return node


def field(key: str) -> Field:
    """The :class:`Field` of a result key; a KeyError names keys that have none."""
    return RESULT_FIELDS[key]


def label(key: str, with_unit: bool = False) -> str:
    """The human label of a result key (``"Memory per GPU"``), optionally with ``[unit]``."""
    f = RESULT_FIELDS[key]
    return f.label_with_unit if with_unit else f.label


def describe(key: str) -> str:
    """One sentence on what a result key means."""
    return RESULT_FIELDS[key].doc


def format_field(key: str, value: Any) -> str:
    """``value`` of result key ``key`` formatted for people (its unit included)."""
    f = RESULT_FIELDS.get(key)
    return format_value(value, f.kind, f.unit) if f else format_value(value)


def result_keys(result: Mapping, prefix: str = "") -> Iterable[str]:
    """Every value's key path in a result (not the nested sections themselves), list items as
    ``[]`` (the form :data:`RESULT_FIELDS` uses)."""
    for key, value in result.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if path == "plan":
            continue
        if isinstance(value, Mapping):
            yield from result_keys(value, path)
            continue
        if value is None and path in _PARENTS:
            continue  # a mapping that does not apply: its keys document it
        yield path
        if isinstance(value, list) and value and isinstance(value[0], Mapping):
            for item_key in dict.fromkeys(k for item in value for k in item):
                yield f"{path}[].{item_key}"


def format_range(low: Any, high: Any, kind: str = "number", unit: str = "", sep: str = "–") -> str:
    """A range for people: "$580K–$1.50M", or one value when both ends read the same ("$56.6M", not
    "$56.6M–$56.6M").

    Examples
    --------
    Durations (``days``) read both ends in one unit, written once: the unit of the range's middle, which is where
    the median shown beside a range lies ("2.30 to 4.29 months", not "70.1 days to 4.29 months"; "28.5 to 53.3
    hours" beside a median of 39.2 hours, not "1.19 to 2.22 days").

    >>> format_range(56.6e6, 56.64e6, "usd"), format_range(21.4, 43.2, "days")
    ('$56.6M', '21.4–43.2 days')
    >>> format_range(70.1, 130.6, "days", sep=" to "), format_range(0.5, 1.5, "days")
    ('2.30 to 4.29 months', '12.0–36.0 hours')
    >>> format_range(28.5 / 24, 53.3 / 24, "days", sep=" to "), format_range(60.0, 200.0, "days")
    ('28.5 to 53.3 hours', '1.97–6.57 months')
    """
    if kind == "days" and all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in (low, high)):
        return _days_range(float(low), float(high), sep)
    lo, hi = format_value(low, kind, unit), format_value(high, kind, unit)
    return lo if lo == hi else f"{lo}{sep}{hi}"


#: days in one of each unit a duration is written in
_UNIT_DAYS = {"minutes": 1 / 1440, "hours": 1 / 24, "days": 1.0, "months": 30.4375, "years": 365.25}


def _days_range(low_days: float, high_days: float, sep: str) -> str:
    """A range of durations [days] in the unit of its geometric middle, written once ("2.30 to 4.29 months"), or the
    next shorter unit where the shorter end would be under one ("12.0–36.0 hours", not "0.500–1.50 days")."""
    unit = _duration_days(math.sqrt(low_days * high_days)).rsplit(" ", 1)[-1]
    if unit not in _UNIT_DAYS:  # seconds: no range is that short in practice
        lo, hi = _duration_days(low_days), _duration_days(high_days)
        return lo if lo == hi else f"{lo}{sep}{hi}"
    units = list(_UNIT_DAYS)
    while low_days < _UNIT_DAYS[unit] and units.index(unit) > 0:
        unit = units[units.index(unit) - 1]
    lo, hi = _sig(low_days / _UNIT_DAYS[unit]), _sig(high_days / _UNIT_DAYS[unit])
    return f"{hi} {unit}" if lo == hi else f"{lo}{sep}{hi} {unit}"
