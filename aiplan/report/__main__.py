"""``python -m aiplan.report --regen-golden``: rewrite tests/golden from the notebooks."""

import sys

from .batch import regen_golden_cli

sys.exit(regen_golden_cli())
