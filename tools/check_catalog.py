"""Check the catalog CSVs in data/ (and optional user folders): exit 1 and one line per problem.

Usage (from the repository root)::

    .venv/bin/python tools/check_catalog.py            # the shipped catalog
    .venv/bin/python tools/check_catalog.py my-prices/  # plus a user folder

What it checks: cells and ids (as loading does), plausible ranges and units, prices in order,
dates not in the future, every source id resolvable, every bibliography entry with a URL and
cited somewhere. The test suite runs it (tests/test_catalog.py).
"""

import sys

from aiplan.core.catalog_check import check_catalog

if __name__ == "__main__":
    problems = check_catalog(sys.argv[1:], check_cited=not sys.argv[1:])
    for line in problems:
        print(line)
    print(f"{len(problems)} problem(s)", file=sys.stderr)
    sys.exit(1 if problems else 0)
