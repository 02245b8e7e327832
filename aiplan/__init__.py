"""aiplan: plan AI infrastructure, model -> cluster -> facility -> cost.

Public API::

    from aiplan import load_plan, evaluate, run_checks, load_catalog, PlanError
    result = evaluate("plans/example.yaml")

The public names are loaded when first used (PEP 562), so ``import aiplan`` (the command line, a
notebook's first cell) does not pay for numpy and the formulas until something is evaluated.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .core.errors import PlanError
from .core.version import __version__

#: public name -> the module that defines it
_PUBLIC = {
    "Catalog": "aiplan.core.catalog", "load_catalog": "aiplan.core.catalog",
    "run_checks": "aiplan.findings",
    "RESULT_KEYS": "aiplan.pipeline", "evaluate": "aiplan.pipeline",
    "Plan": "aiplan.plan", "dump_plan": "aiplan.plan", "load_plan": "aiplan.plan",
}
__all__ = sorted([*_PUBLIC, "PlanError", "__version__"])

if TYPE_CHECKING:  # for type checkers and editors; at run time __getattr__ loads them
    from .core.catalog import Catalog, load_catalog
    from .findings import run_checks
    from .pipeline import RESULT_KEYS, evaluate
    from .plan import Plan, dump_plan, load_plan


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        try:  # a subpackage (aiplan.report, aiplan.present, ...) used as an attribute
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise  # the subpackage exists but needs something missing: say that
            raise AttributeError(f"module 'aiplan' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
