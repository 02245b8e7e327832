"""The plan: one schema table, defaults, validation, YAML load and dump.

A plan is a YAML file or the same nested dict. Every field is one row of the schema table
(:data:`TOP`, :data:`MODEL` and :data:`SECTIONS`): its type, allowed range or choices, default
(a value, or where it comes from), unit, label and one-line description. Validation, the
defaults reported back in ``result['plan']`` and the reference ``docs/plan.md`` all come from
that table; rules that relate several fields are the rows of :data:`MODEL_RULES` and
:data:`PLAN_RULES`.

:func:`load_plan` fills every default (from the table and the catalog), validates every field
and every rule, and raises one :class:`~aiplan.core.errors.PlanError` listing all problems found
("cluster.gpus: must be an integer from 1 to 10,000,000 [GPUs], got -8"). Problems that follow
from another one (a misspelt section, a field that is already wrong) are not repeated. The
filled plan (``Plan.data``) round-trips through YAML unchanged. Fields that are ``None`` after
loading are left for the kit to decide (e.g. the parallel layout).

Inputs come through :mod:`aiplan.core.inputs` (size, encoding and YAML rules). Relative folder
paths in a plan (``catalog:``) resolve against the plan file's folder (the current folder for
a plan given as data).
"""

from .checking import allowed, check_value
from .load import Plan, load_plan, plan_as_data
from .rules import MFU_MIN, MODEL_RULES, PLAN_RULES, Rule
from .schema import (
    CLUSTER,
    KINDS,
    LLAMA3_INTERRUPTIONS_PER_GPU_YEAR,
    LORA_TARGETS,
    MODEL,
    MODEL_REQUIRED,
    PRICINGS,
    SECTIONS,
    SERVING_PRECISIONS,
    TOP,
    TOP_LEVEL,
    TRAIN,
    TRAINING_ONLY,
    UNUSED_UNLESS,
    F,
)
from .yaml_io import apply_overrides, dump_plan
