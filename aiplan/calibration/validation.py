"""How good are the numbers: every calibration case predicted against its published figure.

:func:`validation_rows` lists the training cases (:mod:`aiplan.calibration.training`) and, when
installed, the serving cases (:mod:`aiplan.calibration.serving`); :func:`validation_summary`
gives per set and role (fitted on, or checked against) the median error, the share inside the
band and the leave-one-source-out figures, with the targets the kit is held to. ``aiplan
validate`` prints both; ``notebooks/06_validation.ipynb`` charts them.
"""

from __future__ import annotations

import copy
import math
from functools import lru_cache
from typing import Any

from ..core.catalog import data_dir
from ..pipeline import to_plain
from .cost_energy import SET_OWNING_TARGET, cost_energy_rows
from .power import SET_SERVING, SET_TRAINING
from .serving import median_abs, segments, serving_validation
from .training import training_validation

#: targets on published results the kit is not fitted to: set -> (median |error| [%], share inside the
#: P10-P90 band, share within +-25%); None where a set has no such target
TARGETS = {
    "Training GPU-hours": (15.0, 0.85, None),
    "MLPerf Training time-to-train": (20.0, None, 0.60),
    "Serving throughput": (15.0, None, 0.70),
}
#: targets every check case of a set must meet: set -> largest |error| [%] (issue 26: owning cost per GPU-hour of
#: H100 and B200 within 20% of a large neocloud's published figure; run energy within 15% of metered clusters)
EVERY_CASE_TARGETS = {SET_OWNING_TARGET: 20.0, SET_TRAINING: 15.0, SET_SERVING: 15.0}
#: a serving segment (model family x GPU family x scenario) of at least SEGMENT_MIN_CASES cases must keep
#: its median error at most SEGMENT_MAX_PCT (issue 23)
SEGMENT_MAX_PCT = 35.0
ROLE_LABELS = {"fit": "fitted on (leave-one-source-out)", "check": "checked against (never fitted)"}
#: |error| a case may have and still count as "within" [%]
WITHIN_PCT = 25.0
#: a segment of at least this many cases may not have a median |error| above the limit [cases, %]
#: (training: SEGMENT_MAX_MEDIAN_PCT, issue 24; serving: SEGMENT_MAX_PCT, issue 23)
SEGMENT_MIN_CASES = 5
SEGMENT_MAX_MEDIAN_PCT = 30.0


def validation_rows() -> list[dict[str, Any]]:
    """Every calibration case: set, id, name, role, GPU, published, predicted, error, band, LOO figures.

    Cached per state of the calibration files (the serving leave-one-out refits take seconds).
    """
    stamp = tuple((p.name, p.stat().st_mtime_ns) for p in sorted((data_dir() / "calibration").glob("*.csv")))
    return copy.deepcopy(_rows(stamp))


@lru_cache(maxsize=2)
def _rows(stamp) -> list[dict[str, Any]]:
    return training_validation() + serving_rows() + cost_energy_rows()


def serving_segments(loo=True) -> list[dict[str, Any]]:
    """Serving median errors by role (check, or fit leave-one-source-out) x model family x GPU family x
    scenario, with ``over`` true where a segment of :data:`SEGMENT_MIN_CASES` or more cases has a
    median error above :data:`SEGMENT_MAX_PCT`."""
    rows = [r for r in serving_validation(loo=loo)["rows"] if r["error_pct"] is not None and not r["excluded"]]
    out = segments(rows)
    for seg in out:
        med = seg["median_abs_error_pct"]
        seg["over"] = bool(seg["n"] >= SEGMENT_MIN_CASES and med is not None and med > SEGMENT_MAX_PCT)
    return out


def serving_rows(loo=True) -> list[dict[str, Any]]:
    """The serving cases of :func:`aiplan.calibration.serving.serving_validation` in this module's rows.

    Cases the kit cannot predict (GPU not in the catalog) or that the calibration excludes (with a
    stated reason) are left out.
    """
    out = []
    for r in serving_validation(loo=loo)["rows"]:
        if r["skipped"] or r["excluded"] or r["predicted_tokens_per_s"] is None:
            continue
        published, predicted = r["published_tokens_per_s"], r["predicted_tokens_per_s"]
        loo_error = r["loo_error_pct"] if r["set"] == "fit" else r["error_pct"]
        predicted_loo = predicted if loo_error is None else published * (1.0 + loo_error / 100.0)
        out.append({"set": "Serving throughput", "kind": "serving", "id": r["id"],
                    "name": f"{r['model']} {r['scenario']} ({r['round']}, {r['precision']})", "role": r["set"],
                    "gpu": r["gpu"], "gpus": r["gpus"], "precision": r["precision"], "unit": "tokens/s",
                    "model_family": r["model_family"], "gpu_family": r["family"], "scenario": r["scenario"],
                    "published": published, "predicted": predicted, "error_pct": r["error_pct"],
                    "low": None, "high": None, "inside_band": None, "predicted_loo": predicted_loo,
                    "error_loo_pct": 100.0 * (predicted_loo / published - 1.0), "inside_band_loo": None,
                    "sources": r["sources"] if isinstance(r["sources"], str) else ";".join(r["sources"])})
    return out


def _share(values) -> float | None:
    values = [bool(v) for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _within(errors) -> float | None:
    """Share of the finite errors within +-:data:`WITHIN_PCT` [share]."""
    return _share(abs(e) <= WITHIN_PCT for e in errors if e is not None and math.isfinite(e))


def validation_summary(rows) -> list[dict[str, Any]]:
    """Per set and role: cases, median |error|, share within +-25% and coverage, plain and
    leave-one-source-out, vs target.

    For fitted cases the honest figure is the leave-one-source-out one (the case's source left
    out of the fit); check cases were never fitted, so both figures are the same.
    """
    out = []
    order = list(TARGETS) + [s for s in dict.fromkeys(r["set"] for r in rows) if s not in TARGETS]
    every = EVERY_CASE_TARGETS
    for name in order:
        for role in ("check", "fit"):
            sel = [r for r in rows if r["set"] == name and r["role"] == role]
            if not sel:
                continue
            med, loo = median_abs(r["error_pct"] for r in sel), median_abs(r["error_loo_pct"] for r in sel)
            cov, cov_loo = _share(r["inside_band"] for r in sel), _share(r["inside_band_loo"] for r in sel)
            within, within_loo = _within(r["error_pct"] for r in sel), _within(r["error_loo_pct"] for r in sel)
            target = TARGETS.get(name)
            met, text = None, _target_text(target)
            if target and role == "check":
                met = (loo is not None and loo <= target[0] and (target[1] is None or (cov_loo or 0) >= target[1])
                       and (target[2] is None or (within_loo or 0) >= target[2]))
            if name in every and role == "check":
                met = all(r["error_pct"] is not None and abs(r["error_pct"]) <= every[name] for r in sel)
                text = f"every case within {every[name]:.0f}%"
            out.append({"set": name, "role": role, "cases": len(sel), "median_error_pct": med,
                        "inside_band": cov, "median_error_loo_pct": loo, "inside_band_loo": cov_loo,
                        "within_25": within, "within_25_loo": within_loo, "target": text, "target_met": met})
    return out


def _target_text(target) -> str | None:
    if not target:
        return None
    parts = [f"median error ≤ {target[0]:.0f}%"]
    if target[1]:
        parts.append(f"≥ {target[1]:.0%} inside the band")
    if target[2]:
        parts.append(f"≥ {target[2]:.0%} within ±{WITHIN_PCT:.0f}%")
    return ", ".join(parts)


def segment_summary(rows) -> list[dict[str, Any]]:
    """Per set, role and segment (GPU family, precision, model size, scale): cases and median |error| [%].

    The error of a fitted case is its leave-one-source-out one (none when its GPU family has no
    other source); ``with_error`` counts the cases that have one. ``too_far`` marks a segment of at
    least :data:`SEGMENT_MIN_CASES` such cases whose median is above :data:`SEGMENT_MAX_MEDIAN_PCT`.
    """
    groups: dict[tuple, list] = {}
    for r in rows:
        if r.get("segment"):
            groups.setdefault((r["set"], r["role"], r["segment"]), []).append(r["error_loo_pct"])
    out = []
    for (name, role, seg), errors in sorted(groups.items()):
        med = median_abs(errors)
        n = sum(1 for e in errors if e is not None and math.isfinite(e))
        out.append({"set": name, "role": role, "segment": seg, "cases": len(errors), "with_error": n,
                    "median_error_pct": med,
                    "within_25": _within(errors),
                    "too_far": bool(n >= SEGMENT_MIN_CASES and med is not None and med > SEGMENT_MAX_MEDIAN_PCT)})
    return out


def _pct(value, digits=0) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.{digits}f}%"


def _share_text(value) -> str:
    return "–" if value is None else f"{value:.0%}"


def _number(value, unit) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    if unit == "MFU":
        return f"{value:.1%}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def format_segments(segs) -> list[str]:
    """Lines of the serving errors by model family x GPU family x scenario."""
    head = f"{'Cases are':<34} {'Model family':<24} {'GPU family':<16} {'Scenario':<12} {'Cases':>5} " \
           f"{'Median error':>12} {'Signed':>7}"
    lines = ["Serving throughput by segment (fit cases: each source left out of the fit; "
             f"a segment of {SEGMENT_MIN_CASES}+ cases above {SEGMENT_MAX_PCT:.0f}% is marked !)", "", head,
             "-" * len(head)]
    for g in segs:
        role = ROLE_LABELS["check" if g["set"] == "check" else "fit"]
        mark = " !" if g.get("over") else ""
        lines.append(f"{role:<34} {str(g['model_family'])[:24]:<24} {str(g['family'])[:16]:<16} {g['scenario']:<12} "
                     f"{g['n']:>5} {_pct(g['median_abs_error_pct'], 1):>12} {_pct(g['median_error_pct']):>7}{mark}")
    return lines


def format_validation(rows, summary, segs=None) -> str:
    """``aiplan validate``'s table: the summary first, the serving segments, then every case."""
    lines = ["How good are the numbers: predicted against published results", ""]
    head = f"{'Set':<32} {'Cases':>5}  {'Role':<32} {'Median error':>12} {'Within 25%':>10} {'In band':>8}  Target"
    lines += [head, "-" * len(head)]
    for s in summary:
        met = {True: "met", False: "NOT met", None: ""}[s["target_met"]]
        error = s["median_error_loo_pct"] if s["role"] == "fit" else s["median_error_pct"]
        band = s["inside_band_loo"] if s["role"] == "fit" else s["inside_band"]
        within = s["within_25_loo"] if s["role"] == "fit" else s["within_25"]
        target = f"{s['target']} ({met})" if s["target"] and s["role"] == "check" else ""
        lines.append(f"{s['set']:<32} {s['cases']:>5}  {ROLE_LABELS[s['role']]:<32} {_pct(error, 1):>12} "
                     f"{_share_text(within):>10} {_share_text(band):>8}  {target}")
    segments = segment_summary(rows)
    lines += ["", "By segment (GPU family, precision, model size, scale; fitted cases leave-one-source-out)", ""]
    head = f"{'Set':<30} {'Role':<5} {'Segment':<52} {'Cases':>5} {'Median error':>12} {'Within 25%':>10}"
    lines += [head, "-" * len(head)]
    for s in segments:
        flag = f"  above {SEGMENT_MAX_MEDIAN_PCT:.0f}%" if s["too_far"] else ""
        lines.append(f"{s['set'][:30]:<30} {s['role']:<5} {s['segment'][:52]:<52} {s['cases']:>5} "
                     f"{_pct(s['median_error_pct'], 1):>12} {_share_text(s['within_25']):>10}{flag}")
    if segs:
        lines += [""] + format_segments(segs)
    lines += ["", "Every case (error = predicted / published - 1; LOO = its source left out of the fit)", ""]
    head = (f"{'Set':<30} {'Case':<44} {'Role':<5} {'GPU':<10} {'GPUs':>6} {'Published':>12} {'Predicted':>12} "
            f"{'Error':>7} {'Band':>6} {'LOO':>7}")
    lines += [head, "-" * len(head)]
    for r in rows:
        band = {True: "in", False: "out", None: ""}[r.get("inside_band_loo")]
        gpus = "" if r.get("gpus") is None else f"{r['gpus']:,.0f}"
        lines.append(f"{r['set'][:30]:<30} {str(r['name'])[:44]:<44} {r['role']:<5} {r['gpu']:<10} {gpus:>6} "
                     f"{_number(r['published'], r['unit']):>12} {_number(r['predicted'], r['unit']):>12} "
                     f"{_pct(r['error_pct']):>7} {band:>6} {_pct(r['error_loo_pct']):>7}")
    return "\n".join(lines)


SUMMARY_COLUMNS = {"set": "Figure", "role": "Cases are", "cases": "Cases", "median_error_loo_pct": "Median error",
                   "inside_band_loo": "Inside the P10–P90 band", "target": "Target", "target_met": "Target met"}
CASE_COLUMNS = {"set": "Figure", "name": "Case", "role": "Cases are", "gpu": "GPU", "gpus": "GPUs",
                "published": "Published", "predicted_loo": "Predicted", "unit": "Unit", "error_loo_pct": "Error",
                "inside_band_loo": "Inside the band"}


def validation_frames(rows, summary):
    """(summary, cases) as DataFrames with human column names, errors in percent.

    The prediction shown for a fitted case is its leave-one-source-out one.
    """
    import pandas as pd

    s = pd.DataFrame(summary)[list(SUMMARY_COLUMNS)].rename(columns=SUMMARY_COLUMNS)
    s["Cases are"] = s["Cases are"].map(ROLE_LABELS)
    c = pd.DataFrame(rows)[list(CASE_COLUMNS)].rename(columns=CASE_COLUMNS)
    c["Cases are"] = c["Cases are"].map({"fit": "fitted on", "check": "checked against"})
    return s.round(1), c.round({"Error": 1})


def write_sidecar(summary, path="") -> None:
    """Write the summary as ``{"key_results": ...}`` JSON for the notebook regression (no-op when empty)."""
    if not path:
        return
    import json
    from pathlib import Path


    keys = {}
    for s in summary:
        stem = f"{s['set']} / {s['role']}"
        keys.update({f"{stem} / cases": s["cases"], f"{stem} / median_error_loo_pct": s["median_error_loo_pct"],
                     f"{stem} / inside_band_loo": s["inside_band_loo"]})
    Path(path).write_text(json.dumps({"notebook": "06_validation", "key_results": to_plain(keys)}, indent=1,
                                     sort_keys=True), encoding="utf-8")
