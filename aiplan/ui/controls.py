"""Plan controls: one widget per plan field, built from the schema and the catalog.

The widgets are generated from :data:`aiplan.plan.SECTIONS` (each :class:`~aiplan.plan.F`
gives the kind, choices, lo/hi, unit and doc) and from the catalog ids. The
controls keep the *raw* plan (what the user or the preset set explicitly);
every other widget shows the value the kit filled in, refreshed by
:meth:`PlanControls.sync` after each evaluation. No formula lives here.

Rules a consultant should know:

- changing the GPU resets ``facility.server`` and ``cost.cloud`` to that GPU's
  defaults (a server or cloud offer for another GPU is not a valid plan);
- changing the workload kind drops the fields that do not apply to the new kind
  and hides their widgets;
- an empty number field means "auto": the kit decides (e.g. GPUs from the deadline).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import ipywidgets as W

from ..catalog import Catalog, load_catalog
from ..plan import SECTIONS, F, read_yaml

#: fields shown at the top of the panel (the rest sit in one accordion per section)
TOP_FIELDS = ("workload.kind", "cluster.gpu", "cluster.gpus")
DESC_STYLE = {"description_width": "150px"}
def _full() -> W.Layout:
    return W.Layout(width="98%")
AUTO = "auto"


def presets_dir() -> Path | None:
    """The repository's ``plans/`` folder (example plans used as presets), if present."""
    here = Path(__file__).resolve()
    for parent in here.parents[1:4]:
        if (parent / "plans").is_dir():
            return parent / "plans"
    return None


def find_presets(folder: Path | str | None = None) -> dict[str, str]:
    """``{label: path}`` of the YAML plans in ``folder`` (default: the repository's plans/)."""
    folder = Path(folder) if folder else presets_dir()
    if not folder or not folder.is_dir():
        return {}
    out = {}
    for path in sorted(folder.glob("*.y*ml")):
        out[path.stem] = str(path.resolve())
    return out


def _label(key: str, spec: F) -> str:
    text = key.replace("_", " ")
    return f"{text} [{spec.unit}]" if spec.unit and spec.unit not in ("tokens", "sequences") else text


def _number_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) < 1e6):
        return str(int(value))
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def parse_number_text(text: str) -> Any:
    """Text of a number field to a plan value: "" -> None (auto), "2e12" -> 2e12, "8" -> 8.

    Anything else is returned unchanged so plan validation reports it.
    """
    text = (text or "").strip()
    if not text or text.lower() == AUTO:
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text.replace("_", ""))
    except ValueError:
        return text


class PlanControls:
    """Widgets for every plan field; ``plan_dict()`` gives the plan they describe.

    Parameters
    ----------
    plan : dict, path or None
        The starting plan (default: the ``example`` preset).
    catalog : Catalog, optional
    sections : sequence of str
        Plan sections to show (default: all four).
    presets : dict, optional
        ``{label: path}`` of preset plans (default: the repository's plans/).
    """

    def __init__(self, plan: Any = None, catalog: Catalog | None = None,
                 sections: tuple[str, ...] = tuple(SECTIONS), presets: Mapping[str, str] | None = None):
        self.catalog = catalog or load_catalog()
        self.presets = dict(find_presets() if presets is None else presets)
        self.sections = sections
        self.widgets: dict[str, W.Widget] = {}
        self.specs: dict[str, F] = {}
        self._raw: dict = {}
        self._syncing = False
        self._callbacks: list[Callable[[str], None]] = []
        self.model = W.Dropdown(description="model", options=self._model_options(), style=DESC_STYLE, layout=_full())
        self.model.observe(self._on_model, names="value")
        self.model.add_class("aiplan-field-model")
        self.preset = W.Dropdown(description="preset", options=[("—", None)] + list(self.presets.items()),
                                 style=DESC_STYLE, layout=_full())
        self.preset.observe(self._on_preset, names="value")
        self.preset.add_class("aiplan-field-preset")
        self.name = W.Text(description="plan name", style=DESC_STYLE, layout=_full(), continuous_update=False)
        self.name.observe(self._on_name, names="value")
        for section in SECTIONS:
            for key, spec in SECTIONS[section].items():
                path = f"{section}.{key}"
                widget = self._make(path, spec)
                widget.add_class("aiplan-field-" + path.replace(".", "-").replace("_", "-"))
                widget.observe(lambda change, p=path: self._on_field(p, change["new"]), names="value")
                self.widgets[path] = widget
                self.specs[path] = spec
        self.view = self._layout()
        start = plan if plan is not None else self.presets.get("example")
        if start is not None:
            self.set_plan(start, notify=False)

    # --- building ---------------------------------------------------------------

    def _model_options(self) -> list:
        opts = []
        for mid, m in self.catalog.models.items():
            params = getattr(m, "params_published", None)
            opts.append((f"{mid}" + (f"  ({params / 1e9:.0f}B)" if params else ""), mid))
        return opts + [("custom (from plan file)", "__custom__")]

    def _id_options(self, table: str, gpu: str | None = None) -> list:
        records = self.catalog.table(table)
        opts = []
        for rid, rec in records.items():
            if gpu and table in ("servers", "clouds") and getattr(rec, "gpu", gpu) != gpu:
                continue
            name = getattr(rec, "name", "")
            opts.append((f"{rid} — {name}" if name and name != rid else rid, rid))
        if table == "clouds":
            opts.append(("none (no cloud comparison)", None))
        return opts

    def _make(self, path: str, spec: F) -> W.Widget:
        key = path.split(".", 1)[1]
        common = dict(description=_label(key, spec), style=DESC_STYLE, layout=_full(), tooltip=spec.doc or None)
        if path == "workload.kind":
            return W.ToggleButtons(options=list(spec.choices), description="workload", style={"button_width": "86px",
                                   "description_width": "60px"}, tooltip=spec.doc)
        if spec.kind == "choice":
            return W.Dropdown(options=list(spec.choices), **common)
        if spec.kind == "id":
            return W.Dropdown(options=self._id_options(spec.table), **common)
        if spec.kind == "bool":
            return W.Checkbox(indent=False, **common)
        if spec.kind == "list":
            return W.SelectMultiple(options=list(spec.choices), rows=min(4, len(spec.choices)), **common)
        if spec.kind == "str":
            return W.Text(continuous_update=False, **common)
        nullable = spec.default is None
        if not nullable and spec.lo is not None and spec.hi is not None:
            cls = W.IntSlider if spec.kind == "int" else W.FloatSlider
            step = 1 if spec.kind == "int" else (0.01 if spec.hi <= 1 else 0.1)
            lo = spec.lo + (step if spec.lo_open else 0)
            return cls(min=lo, max=spec.hi, step=step, continuous_update=False, readout=True, **common)
        placeholder = AUTO if nullable else ""
        return W.Text(continuous_update=False, placeholder=placeholder, **common)

    def _layout(self) -> W.Widget:
        top = [self.preset, self.model] + [self.widgets[p] for p in TOP_FIELDS]
        boxes, titles = [], []
        for section in self.sections:
            children = [self.widgets[f"{section}.{k}"] for k in SECTIONS[section]
                        if f"{section}.{k}" not in TOP_FIELDS]
            if section == "workload":
                children = [self.name] + children
            boxes.append(W.VBox(children))
            titles.append(section.capitalize())
        acc = W.Accordion(children=boxes, titles=tuple(titles), selected_index=0)
        return W.VBox(top + [acc], layout=W.Layout(width="100%"))

    # --- reading and writing values ----------------------------------------------

    def on_change(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(path)`` after the user changes any field."""
        self._callbacks.append(callback)

    def _notify(self, path: str) -> None:
        for cb in self._callbacks:
            cb(path)

    def plan_dict(self) -> dict:
        """The plan the controls describe (the explicit fields only; defaults are the kit's)."""
        return copy.deepcopy(self._raw)

    def set_plan(self, plan: Any, notify: bool = True) -> None:
        """Load a plan (dict, path or YAML text) into the controls."""
        if isinstance(plan, (str, Path)) and str(plan).endswith((".yaml", ".yml")):
            data = read_yaml(plan)
        elif isinstance(plan, str):
            import yaml

            data = yaml.safe_load(plan)
        else:
            data = copy.deepcopy(dict(plan))
        self._raw = data if isinstance(data, dict) else {}
        self._show(self._raw)
        resolved = str(Path(plan).resolve()) if isinstance(plan, (str, Path)) and str(plan).endswith(
            (".yaml", ".yml")) else None
        if resolved in self.presets.values():
            self._syncing = True
            try:
                self.preset.value = resolved
            finally:
                self._syncing = False
        if notify:
            self._notify("plan")

    def _set_widget(self, widget: W.Widget, spec: F | None, value: Any) -> None:
        if isinstance(widget, W.Text) and spec is not None:
            widget.value = _number_text(value) if spec.kind in ("int", "float") else ("" if value is None
                                                                                    else str(value))
        elif isinstance(widget, W.SelectMultiple):
            widget.value = tuple(v for v in (value or ()) if v in widget.options)
        elif isinstance(widget, W.Dropdown):
            values = [o[1] if isinstance(o, tuple) else o for o in widget.options]
            if value in values:
                widget.value = value
            elif value is None:
                widget.index = None
        elif isinstance(widget, (W.FloatSlider, W.IntSlider)):
            if value is not None and not isinstance(value, str):
                widget.value = value
        elif value is not None:
            widget.value = value

    def _show(self, data: Mapping, only_missing_from: Mapping | None = None) -> None:
        """Show ``data``'s values in the widgets (all, or only those not in ``only_missing_from``)."""
        self._syncing = True
        try:
            gpu = (data.get("cluster") or {}).get("gpu") or (self._raw.get("cluster") or {}).get("gpu")
            self._refresh_options(gpu)
            if only_missing_from is None:
                model = data.get("model")
                if isinstance(model, str) and model in self.catalog.models:
                    self.model.value = model
                elif model is not None:
                    self.model.value = "__custom__"
                self.name.value = str(data.get("name") or "")
            for path, widget in self.widgets.items():
                section, key = path.split(".", 1)
                if only_missing_from is not None and key in (only_missing_from.get(section) or {}):
                    continue
                value = (data.get(section) or {}).get(key)
                if only_missing_from is None and value is None:
                    default = self.specs[path].default
                    value = default if not callable(default) else None
                self._set_widget(widget, self.specs[path], value)
            self._update_visibility()
        finally:
            self._syncing = False

    def sync(self, filled_plan: Mapping) -> None:
        """Show the kit's filled-in values in every widget the user did not set."""
        self._show(filled_plan, only_missing_from=self._raw)

    def _refresh_options(self, gpu: str | None) -> None:
        for path, table in (("facility.server", "servers"), ("cost.cloud", "clouds")):
            widget = self.widgets[path]
            opts = self._id_options(table, gpu)
            if list(widget.options) != opts:
                current = widget.value
                widget.options = opts
                if current in [o[1] for o in opts]:
                    widget.value = current

    def _update_visibility(self) -> None:
        kind = self.widgets["workload.kind"].value
        for path, spec in self.specs.items():
            hidden = bool(spec.kinds) and kind not in spec.kinds
            self.widgets[path].layout.display = "none" if hidden else None

    # --- callbacks ----------------------------------------------------------------

    def _on_field(self, path: str, new: Any) -> None:
        if self._syncing:
            return
        section, key = path.split(".", 1)
        spec = self.specs[path]
        if isinstance(self.widgets[path], W.Text) and spec.kind in ("int", "float"):
            value = parse_number_text(new)
        elif isinstance(new, tuple):
            value = list(new)
        else:
            value = new
        part = self._raw.setdefault(section, {}) if isinstance(self._raw.get(section), dict) else None
        if part is None:
            self._raw[section] = part = {}
        if value is None or (isinstance(value, str) and spec.kind in ("str",) and not value):
            part.pop(key, None)
        else:
            part[key] = value
        if path == "cluster.gpu":
            for other in ("facility.server", "cost.cloud"):
                s, k = other.split(".")
                (self._raw.get(s) or {}).pop(k, None)
            self._syncing = True
            try:
                self._refresh_options(value)
            finally:
                self._syncing = False
        if path == "workload.kind":
            for other, other_spec in self.specs.items():
                s, k = other.split(".")
                if other_spec.kinds and value not in other_spec.kinds:
                    (self._raw.get(s) or {}).pop(k, None)
            self._update_visibility()
        self._notify(path)

    def _on_model(self, change) -> None:
        if self._syncing or change["new"] == "__custom__":
            return
        self._raw["model"] = change["new"]
        self._notify("model")

    def _on_name(self, change) -> None:
        if self._syncing:
            return
        self._raw["name"] = change["new"] or "Unnamed plan"
        self._notify("name")

    def _on_preset(self, change) -> None:
        if self._syncing or not change["new"]:
            return
        self.set_plan(change["new"])
