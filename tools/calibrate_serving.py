"""Refit the serving constants and rewrite ``data/calibration/serving_constants.csv``.

Usage (from the repository root)::

    .venv/bin/python tools/calibrate_serving.py            # refit, rewrite, print the validation summary
    .venv/bin/python tools/calibrate_serving.py --check    # refit, compare with the committed file (exit 1: differ)
    .venv/bin/python tools/calibrate_serving.py --no-loo   # skip the leave-one-out refits (faster summary)

The fit uses only the fit set (``serving_fit_mlperf_v4.1.csv`` and ``serving_fit_extra.csv``);
the MLPerf v5.x check set is predicted, never fitted (:mod:`aiplan.calibration_serving`).
"""

from __future__ import annotations

import argparse
import sys

from aiplan import calibration_serving as cal
from aiplan.model.serving import serving_constants

#: relative difference allowed between the committed constants and a refit (3 significant digits)
TOLERANCE = 0.01


def differences(committed: dict, refit: dict, tolerance: float = TOLERANCE) -> list[str]:
    """Constants whose committed value differs from the refit by more than ``tolerance`` (relative)."""
    out = []
    for name in sorted(set(committed) | set(refit)):
        a, b = committed.get(name), refit.get(name)
        if a is None or b is None or abs(a - b) > tolerance * max(abs(a), abs(b)):
            out.append(f"{name}: committed {a}, refit {b}")
    return out


def _print_summary(loo: bool) -> None:
    summary = cal.serving_validation(loo=loo)["summary"]
    for key in ("check", "fit", "loo"):
        s = summary[key]
        if s["median_abs_error_pct"] is not None:
            print(f"{key:6s} median |error| {s['median_abs_error_pct']:5.1f}%  (n = {s['n']})")
    for row in summary["by_family_scenario"]:
        print(f"  {row['set']:5s} {str(row['family']):10s} {row['scenario']:11s} n={row['n']:3d} "
              f"median |error| {row['median_abs_error_pct']:5.1f}%  median error {row['median_error_pct']:+6.1f}%")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare a refit with the committed constants")
    parser.add_argument("--no-loo", action="store_true", help="skip the leave-one-out refits")
    args = parser.parse_args(argv)
    refit = cal.fit_serving()
    if args.check:
        diff = differences(serving_constants(), refit)
        print("\n".join(diff) if diff else "the committed serving constants match a refit")
        return 1 if diff else 0
    path = cal.write_constants(refit)
    print(f"wrote {path}")
    for name, value in refit.items():
        print(f"  {name} = {value}")
    _print_summary(loo=not args.no_loo)
    return 0


if __name__ == "__main__":
    sys.exit(main())
