"""aiplan: plan AI infrastructure, model -> cluster -> facility -> cost.

Public API::

    from aiplan import load_plan, evaluate, run_checks, load_catalog, PlanError
    result = evaluate("plans/example.yaml")
"""

from .core.catalog import Catalog, load_catalog
from .core.errors import PlanError
from .findings import run_checks
from .pipeline import RESULT_KEYS, evaluate
from .plan import Plan, dump_plan, load_plan

__version__ = "0.1.0"
__all__ = ["Catalog", "Plan", "PlanError", "RESULT_KEYS", "dump_plan", "evaluate", "load_catalog", "load_plan",
           "run_checks", "__version__"]
