"""Refit the calibrated constants from the published cases in ``data/calibration/``.

    python tools/calibrate.py            # rewrite training_constants.csv and serving_constants.csv
    python tools/calibrate.py --check    # exit 1 when the committed constants differ from a refit

Only cases with ``role = fit`` are used (training: published before 2026-01-01) or the fit files
(serving: ``serving_fit_mlperf_v4.1.csv``, ``serving_fit_extra.csv``); the check cases (training
results published from 2026, MLPerf Training v6.0 among them; MLPerf Inference v5.0+) are only
ever predicted, by ``aiplan validate``.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aiplan.calibration import serving as calibration_serving  # noqa: E402
from aiplan.calibration import training as calibration_training  # noqa: E402
from aiplan.core.catalog import data_dir  # noqa: E402
from aiplan.model.serving import serving_constants  # noqa: E402


def _render(rows) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
    return buf.getvalue()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed constants, write nothing")
    args = parser.parse_args(argv)
    training = data_dir() / "calibration" / "training_constants.csv"
    text = _render(calibration_training.fit_training())
    serving = calibration_serving.fit_serving()
    if args.check:
        stale = [] if training.read_text(encoding="utf-8") == text else [f"{training.name} differs from a refit"]
        stale += calibration_serving.differences(serving_constants(), serving)
        for line in stale:
            print(line, file=sys.stderr)
        if stale:
            print("run: python tools/calibrate.py", file=sys.stderr)
        return 1 if stale else 0
    training.write_text(text, encoding="utf-8")
    path = calibration_serving.write_constants(serving)
    print(f"wrote {training.relative_to(ROOT)} and {Path(path).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
