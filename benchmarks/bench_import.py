"""Time `import aiplan` (without the notebook extras) in fresh interpreters.

Prints the best and median of several runs, after subtracting the bare
interpreter start-up. Target (issue 2): under 0.5 s here.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def _run(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def main(runs: int = 7) -> None:
    bare = [_run("pass") for _ in range(runs)]
    full = [_run("import aiplan") for _ in range(runs)]
    heavy = [_run("import aiplan, sys; assert 'pandas' not in sys.modules and 'altair' not in sys.modules")
             for _ in range(2)]
    base = min(bare)
    print(f"interpreter start-up      : {base * 1000:7.1f} ms")
    print(f"import aiplan (best)      : {(min(full) - base) * 1000:7.1f} ms")
    print(f"import aiplan (median)    : {(statistics.median(full) - base) * 1000:7.1f} ms")
    print(f"pandas/altair not imported: yes ({len(heavy)} runs)")
    print("target                    :   500.0 ms")


if __name__ == "__main__":
    main()
