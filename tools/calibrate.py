"""Refit the calibrated constants from the published cases in ``data/calibration/``.

    python tools/calibrate.py            # rewrite training_, power_ and serving_constants.csv, serving_loo.csv,
                                         # serving_error_quantiles.csv (the serving band, from the validation),
                                         # training_run_predictions.csv (published runs beside the kit's figure)
    python tools/calibrate.py --check    # exit 1 when the committed constants differ from a refit
    python tools/calibrate.py --check --loo   # ... or serving_loo.csv does (refits without each source: minutes)

Only cases with ``role = fit`` are used (training) or, for serving, results published before
2026-01-01 (``aiplan.calibration.serving``); later results are only ever predicted, by ``aiplan
validate``. Writing also refits the serving constants without each source in turn and stores those
leave-one-source-out predictions (``serving_loo.csv``, several minutes); ``--check`` compares them only with
``--loo``, and always compares the serving band with one taken from the committed predictions.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aiplan.calibration import power as calibration_power  # noqa: E402
from aiplan.calibration import serving as calibration_serving  # noqa: E402
from aiplan.calibration import training as calibration_training  # noqa: E402
from aiplan.core.catalog import data_dir, forget_constants  # noqa: E402
from aiplan.model.serving import serving_constants  # noqa: E402


def _render(rows) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
    return buf.getvalue()


def _same_file(committed: Path, write) -> bool:
    """Whether ``write(path)`` writes exactly the committed file's text (into a scratch folder)."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(write(Path(tmp) / committed.name))
        return fresh.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8")


#: relative difference allowed between a committed leave-one-source-out prediction and a refit's (three
#: significant digits are stored, so a value near a rounding edge may move by one unit of the last one)
LOO_TOLERANCE = 0.02


def _loo_differences(committed: Path, write) -> list[str]:
    """Cases whose leave-one-source-out figures in ``committed`` differ from what ``write(path)`` writes by more
    than :data:`LOO_TOLERANCE` (or that only one of the two has)."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = calibration_serving.read_loo(write(Path(tmp) / committed.name))
    old = calibration_serving.read_loo(committed)

    def moved(a, b) -> bool:
        return (a is None) != (b is None) or (a is not None and abs(a - b) > LOO_TOLERANCE * max(abs(a), abs(b)))

    return sorted(set(fresh) ^ set(old)) + [cid for cid in sorted(set(fresh) & set(old))
                                            if any(moved(v, old[cid][k]) for k, v in fresh[cid].items())]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed constants, write nothing")
    parser.add_argument("--no-loo", action="store_true", help="do not refresh the leave-one-source-out predictions")
    parser.add_argument("--loo", action="store_true",
                        help="with --check: also refit without each source in turn and compare serving_loo.csv")
    args = parser.parse_args(argv)
    training = data_dir() / "calibration" / "training_constants.csv"
    text = _render(calibration_training.fit_training())
    cases = calibration_serving.serving_cases()
    serving = calibration_serving.fit_serving(cases)
    power, power_text = calibration_power.constants_path(), _render(calibration_power.fit_power())
    runs = data_dir() / "calibration" / "training_run_predictions.csv"
    if args.check:
        stale = [] if training.read_text(encoding="utf-8") == text else [f"{training.name} differs from a refit"]
        runs_text = _render(calibration_training.run_predictions())
        stale += [] if runs.read_text(encoding="utf-8") == runs_text else [f"{runs.name} differs from the constants"]
        stale += [] if power.read_text(encoding="utf-8") == power_text else [f"{power.name} differs from a refit"]
        stale += calibration_serving.differences(serving_constants(), serving)
        band = data_dir() / "calibration" / calibration_serving.ERROR_QUANTILES_FILE
        rows = calibration_serving.serving_validation(cases)["rows"]
        if not _same_file(band, lambda path: calibration_serving.write_error_quantiles(rows, path)):
            stale.append(f"{band.name} differs from the committed leave-one-source-out predictions")
        loo = data_dir() / "calibration" / calibration_serving.LOO_FILE
        moved = _loo_differences(loo, lambda path: calibration_serving.write_loo(
            calibration_serving.leave_one_source_out(cases, serving_constants()), path)) if args.loo else []
        if moved:
            stale.append(f"{loo.name} differs from a refit without each source in {len(moved)} cases "
                         f"(more than {LOO_TOLERANCE:.0%}), e.g. {moved[0]}")
        for line in stale:
            print(line, file=sys.stderr)
        if stale:
            print("run: python tools/calibrate.py", file=sys.stderr)
        return 1 if stale else 0
    training.write_text(text, encoding="utf-8")
    forget_constants()
    runs.write_text(_render(calibration_training.run_predictions()), encoding="utf-8")
    power.write_text(power_text, encoding="utf-8")
    path = calibration_serving.write_constants(serving, cases=cases)
    print(f"wrote {training.relative_to(ROOT)}, {runs.relative_to(ROOT)}, {power.relative_to(ROOT)} and "
          f"{Path(path).relative_to(ROOT)}")
    if not args.no_loo:
        loo = calibration_serving.write_loo(calibration_serving.leave_one_source_out(cases, serving_constants()))
        print(f"wrote {Path(loo).relative_to(ROOT)}")
    band = calibration_serving.write_error_quantiles(calibration_serving.serving_validation(cases)["rows"])
    print(f"wrote {Path(band).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
