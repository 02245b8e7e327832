"""Refit the calibrated constants from the published cases in ``data/calibration/``.

    python tools/calibrate.py            # rewrite training_constants.csv (and the serving constants)
    python tools/calibrate.py --check    # exit 1 when the committed constants differ from a refit

Only cases with ``role = fit`` are used; ``role = check`` cases (MLPerf Training v5.0+, runs
published after mid-2025) are only ever predicted, by ``aiplan validate``.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aiplan import calibration_training  # noqa: E402
from aiplan.catalog import data_dir  # noqa: E402


def _serving():
    """The serving refit, when the serving calibration is installed: (rows, writer, path) or None."""
    try:
        from aiplan import calibration_serving
    except ImportError:
        return None
    return calibration_serving


def _render(rows) -> str:
    buf = io.StringIO()
    fields = list(rows[0])
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
    return buf.getvalue()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed constants, write nothing")
    args = parser.parse_args(argv)
    targets = {data_dir() / "calibration" / "training_constants.csv": _render(calibration_training.fit_training())}
    serving = _serving()
    if serving is not None and hasattr(serving, "fit_serving_rows"):
        targets[data_dir() / "calibration" / "serving_constants.csv"] = _render(serving.fit_serving_rows())
    stale = []
    for path, text in targets.items():
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if args.check:
            if current != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print("stale constants (run python tools/calibrate.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
