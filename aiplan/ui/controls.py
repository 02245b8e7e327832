"""Plan controls: one widget per plan field, grouped by step, built from the schema and the catalog.

The widgets are generated from :data:`aiplan.plan.SECTIONS` (each :class:`~aiplan.plan.F` gives
the kind, choices, range, unit, short label and description) and from the catalog ids, in four
groups (model and workload, cluster, facility, cost); fields marked ``advanced`` fold away under
"More options". The controls keep the *raw* plan (what the user or the preset set explicitly);
every other widget shows the value the kit filled in, refreshed by :meth:`PlanControls.sync`
after each evaluation. No formula lives here.

What a consultant can rely on:

- nothing typed is lost: each workload kind keeps its own fields across switches (pretrain ->
  inference -> pretrain gives the tokens back), and the first switch to fine-tuning applies
  fine-tuning defaults (:data:`FINETUNE_DEFAULTS`) so the change shows;
- changing the GPU resets the server and the cloud offer to that GPU's defaults (a server or
  offer for another GPU is not a valid plan);
- the preset shows "(modified)" after an edit, and choosing a preset (or loading a file) again
  reloads it;
- the plan's name follows the plan ("Llama 3.1 70B pretraining on 1,184 H100": model, workload, GPU count
  and GPU, after every change, fix and loaded option) unless the user typed one or loaded a file
  that names it; a preset's name stays until the plan is changed;
- an empty number field means "auto": the kit decides (e.g. GPUs from the deadline). Numbers
  take "2e12", "2T", "16M", "1,024".
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import ipywidgets as W

from ..analysis.fixes import with_overrides
from ..analysis.options import offer_text
from ..core.catalog import Catalog, load_catalog
from ..core.inputs import number_from_text, read_yaml
from ..model import chinchilla_tokens
from ..plan import SECTIONS, TRAINING_ONLY, F, plan_as_data
from ..report.figures import choice_label

#: the control groups: (title, plan section); the model and the workload kind open the first
GROUPS = (("1 · Model and workload", "workload"), ("2 · Cluster", "cluster"), ("3 · Facility", "facility"),
          ("4 · Cost", "cost"))
DESC_STYLE = {"description_width": "118px"}
AUTO = "auto"
#: the dropdown value of a preset (or loaded file) the user has edited since
MODIFIED = "__modified__"
UPLOADED = "__uploaded__"
#: fields a first switch to fine-tuning sets, so the change is visible: a LoRA fine-tune (rank 16,
#: the LoRA paper's range [arxiv-2106.09685]) on 1 billion tokens, with the kit's fine-tuning batch
#: (``None``: the field is removed, the kit's default applies). Judgement: a typical instruction
#: data set is 10^8 to 10^9 tokens.
FINETUNE_DEFAULTS = {"method": "lora", "lora_rank": 16, "tokens": 1.0e9, "global_batch_tokens": None}
#: a training plan without a GPU count or a deadline (one that was a serving plan) gets this deadline
#: [days] (judgement: a month, as the example plan); its tokens default to the compute-optimal count
TRAINING_DEADLINE_DAYS = 30.0
#: words of a GPU's catalog name that say how it is mounted, not what it is (left out of the plan's name)
MOUNT_WORDS = re.compile(r"^(SXM\d*|PCIe|OAM|HGX/DGX|HGX|DGX|HL-\d+\w*)$", re.I)
#: vendors' words that open a GPU's catalog name
VENDOR_WORDS = ("NVIDIA", "AMD Instinct", "AMD", "Intel", "Google", "AWS")
#: plan fields drawn as sliders (fractions, shown as percentages; and two small ranges)
SLIDERS = ("facility.pue", "cost.years")
#: units as people write them
UNIT_WORDS = {"USD": "$", "USD/kWh": "$/kWh", "USD/kW-month": "$/kW/month", "USD/MW": "$/MW", "USD/yr": "$/yr",
              "USD/TB": "$/TB", "1/yr": "per yr", "1/month": "per month", "sequences": "seq.", "GPUs": "",
              "kg CO2e/kWh": "kg/kWh"}


def _full() -> W.Layout:
    return W.Layout(width="99%")


def presets_dir() -> Path | None:
    """The example plans used as presets: the repository's ``plans/`` or the copy a wheel ships."""
    here = Path(__file__).resolve()
    for folder in (here.parents[2] / "plans", here.parents[1] / "plans"):
        if folder.is_dir():
            return folder
    return None


def find_presets(folder: Path | str | None = None) -> dict[str, str]:
    """``{label: path}`` of the YAML plans in ``folder`` (default: the example plans); the label is the
    plan's name."""
    folder = Path(folder) if folder else presets_dir()
    if not folder or not folder.is_dir():
        return {}
    out = {}
    for path in sorted(folder.glob("*.y*ml")):
        try:
            name = (read_yaml(path) or {}).get("name") or path.stem
        except Exception:  # an unreadable preset is listed by its file name; loading it shows the error
            name = path.stem
        out[str(name)] = str(path.resolve())
    return out


def field_description(spec: F, key: str) -> str:
    """A control's label with its unit hint ("Electricity price <span>$/kWh</span>")."""
    label = spec.label or key.replace("_", " ")
    unit = "%" if spec.fmt == "pct" else UNIT_WORDS.get(spec.unit, spec.unit)
    return f'{label} <span class="aiplan-unit">{unit}</span>' if unit else label


def offer_name(offer: Any) -> str:
    """A cloud offer as a client reads it: provider and instance, the instance's underscores as spaces
    ("Lambda gpu 8x h100 sxm 80gb", "Azure Standard ND96isr H200 v5")."""
    return offer_text(getattr(offer, "name", "") or getattr(offer, "id", ""))


def gpu_short_name(catalog: Catalog, gpu_id: str) -> str:
    """A GPU as people say it: "H100", "A100 80GB", "B200", "MI300X" (the catalog name without vendor, mounting,
    remarks, and without the memory unless another catalog GPU has the same short name)."""
    record = catalog.gpus.get(gpu_id)
    if record is None:
        return str(gpu_id).upper()

    def short(name: str, memory: bool, mount: bool = False) -> str:
        name = name.split(" (", 1)[0]
        for vendor in VENDOR_WORDS:
            if name.startswith(vendor + " "):
                name = name[len(vendor) + 1:]
                break
        words = [w for w in name.split() if mount or not MOUNT_WORDS.match(w)]
        return " ".join(w for w in words if memory or not re.fullmatch(r"\d+GB", w))

    plain = short(record.name, False)
    clashes = [g for g in catalog.gpus.values() if g.id != gpu_id and short(g.name, False) == plain]
    if not clashes:
        return plain
    sxm = lambda g: " SXM" in g.name  # noqa: E731  (the flagship mounting keeps the plain name)
    if sxm(record) and not any(sxm(g) for g in clashes):
        return plain
    with_mount = short(record.name, False, mount=True)
    if all(short(g.name, False, mount=True) != with_mount for g in clashes):
        return re.sub(r"\b(SXM)\d\b", r"\1", with_mount)
    return short(record.name, True)


def _number_text(value: Any) -> str:
    """A plan number as the user would type it: 8, 0.08, 2T, 16M, 1.5B; a large number that no suffix writes
    exactly, with separators (301,760, as a server price from the catalog).

    >>> [_number_text(v) for v in (8, 0.08, 2e12, 3.1e6, 8192, 301760, 1234567)]
    ['8', '0.08', '2T', '3.1M', '8192', '301,760', '1,234,567']
    """
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6)):
        if abs(value) >= scale and (value / scale) == round(value / scale, 3):
            return f"{value / scale:g}{suffix}"
    if float(value).is_integer():
        return f"{int(value):,}" if abs(value) >= 100_000 else str(int(value))
    return f"{value:.6g}"


def _percent_text(value: Any) -> str:
    """A fraction as people type it: 0.38 -> "38%"."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value * 100:.4g}%"
    return "" if value is None else str(value)


def parse_number_text(text: str) -> Any:
    """Text of a number field to a plan value: "" -> None (auto), "2e12" / "2T" -> 2e12, "1,024" -> 1024,
    "38%" -> 0.38.

    Anything else is returned unchanged so plan validation reports it.
    """
    text = (text or "").strip()
    if not text or text.lower() == AUTO:
        return None
    number = number_from_text(text)
    return text if number is None else number


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
        ``{label: path}`` of preset plans (default: the example plans).
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
        # one layout and one style per widget class, shared: every widget model is one more object the
        # browser builds when the page opens (a widget whose visibility changes gets its own layout)
        self._shared_layout = _full()
        self._styles: dict[type, W.Widget] = {}
        self._kind_memory: dict[str, dict[str, Any]] = {}
        self._synced = False
        self._source: tuple[str, str] | None = None  # (label, dropdown value) of the loaded preset or file
        self.modified = False
        self.name_typed = False
        self._preset_named = False
        self.base_dir: Path | None = None
        self.invalid: set[str] = set()
        self.model = W.Dropdown(description="Model", options=self._model_options(), style=self._style(W.Dropdown),
                                layout=self._shared_layout)
        self.model.observe(self._on_model, names="value")
        self.model.add_class("aiplan-field-model")
        self.preset = W.Dropdown(description="Start from", options=self._preset_options(),
                                 style=self._style(W.Dropdown), layout=self._shared_layout)
        self.preset.observe(self._on_preset, names="value")
        self.preset.add_class("aiplan-field-preset")
        self.name = W.Text(placeholder="Plan name", tooltip="Plan name: the title, the report and file names",
                           layout=self._shared_layout, continuous_update=False)
        self.name.observe(self._on_name, names="value")
        self.name.add_class("aiplan-field-name")
        for section in SECTIONS:
            for key, spec in SECTIONS[section].items():
                path = f"{section}.{key}"
                widget = self._make(path, spec)
                widget.add_class("aiplan-field-" + path.replace(".", "-").replace("_", "-"))
                widget.observe(lambda change, p=path: self._on_field(p, change["new"]), names="value")
                self.widgets[path] = widget
                self.specs[path] = spec
        self.view = self._layout()
        start = plan if plan is not None else self.presets.get(next((k for k, v in self.presets.items()
                                                                     if Path(v).stem == "example"), ""))
        if start is not None:
            self.set_plan(start, notify=False)

    # --- building ---------------------------------------------------------------

    def _model_options(self) -> list:
        opts = [(getattr(m, "name", mid) or mid, mid) for mid, m in self.catalog.models.items()]
        return opts + [("Custom (from the plan file)", "__custom__")]

    def _preset_options(self, current: tuple[str, str] | None = None) -> list:
        opts = [("—", None)] + list(self.presets.items())
        return ([current] if current else []) + opts

    def _id_options(self, table: str, gpu: str | None = None) -> list:
        records = self.catalog.table(table)
        opts = []
        for rid, rec in records.items():
            if gpu and table in ("servers", "clouds") and getattr(rec, "gpu", gpu) != gpu:
                continue
            name = offer_name(rec) if table == "clouds" else getattr(rec, "name", "") or ""
            opts.append((name if name and name != rid else rid, rid))
        if table == "clouds":  # an offer the catalog lists at two dates: its older price says its date
            newest = {}
            for label, rid in opts:
                if rid is not None:
                    newest[label] = max(newest.get(label, ""), str(records[rid].as_of))
            opts = [(f"{label} (price of {str(records[rid].as_of)[:4]})" if rid is not None and
                     str(records[rid].as_of) != newest[label] else label, rid) for label, rid in opts]
        if table == "clouds":
            opts.append(("None (no cloud comparison)", None))
        return opts

    def _style(self, cls: type) -> W.Widget:
        """The one style object of a widget class (description width for every control)."""
        if cls not in self._styles:
            style_class = cls.style.klass if hasattr(cls.style, "klass") else W.DescriptionStyle
            self._styles[cls] = style_class(**DESC_STYLE)
        return self._styles[cls]

    def _make(self, path: str, spec: F) -> W.Widget:
        key = path.split(".", 1)[1]
        own_layout = bool(spec.kinds) or path in ("workload.lora_rank", *TRAINING_ONLY)  # shown or hidden on its own
        layout = _full() if own_layout else self._shared_layout
        cls = (W.Dropdown if spec.kind in ("choice", "id") else W.SelectMultiple if spec.kind == "list"
               else W.FloatSlider if (spec.fmt == "pct" and spec.default is not None) or path in SLIDERS else W.Text)
        common = dict(description=field_description(spec, key), description_allow_html=True,
                      style=self._style(cls), layout=layout, tooltip=spec.doc or None)
        if path == "workload.kind":
            return W.ToggleButtons(options=[("Pretrain", "pretrain"), ("Fine-tune", "finetune"),
                                            ("Serve", "inference")], description="Workload",
                                   style={"button_width": "72px", "description_width": "62px"}, tooltip=spec.doc)
        if spec.kind == "choice":
            return W.Dropdown(options=[(choice_label(path, c), c) for c in spec.choices], **common)
        if spec.kind == "id":
            return W.Dropdown(options=self._id_options(spec.table), **common)
        if spec.kind == "bool":
            return W.Checkbox(indent=False, description=spec.label or key, layout=layout, tooltip=spec.doc or None,
                              style=self._style(W.Checkbox))
        if spec.kind == "list":
            return W.SelectMultiple(options=list(spec.choices), rows=min(4, len(spec.choices)), **common)
        if spec.kind == "str":
            return W.Text(continuous_update=False, **common)
        if spec.fmt == "pct" and spec.default is not None and spec.lo is not None and spec.hi is not None:
            return W.FloatSlider(min=spec.lo + (0.01 if spec.lo_open else 0), max=spec.hi, step=0.01,
                                 readout_format=".0%", continuous_update=False, **common)
        if path in SLIDERS:
            return W.FloatSlider(min=spec.lo, max=min(spec.hi, 10.0), step=0.05 if spec.hi <= 5 else 0.5,
                                 readout_format=".2f" if spec.hi <= 5 else ".1f", continuous_update=False, **common)
        return W.Text(continuous_update=False, placeholder=AUTO if spec.default is None else "", **common)

    def _group(self, section: str) -> W.Widget:
        paths = [f"{section}.{k}" for k in SECTIONS[section]]
        main = [self.widgets[p] for p in paths if not self.specs[p].advanced]
        more = [self.widgets[p] for p in paths if self.specs[p].advanced]
        if section == "workload":
            main = [self.model] + main
        fold = W.Accordion(children=[W.VBox(more)], titles=("More options",), selected_index=None)
        fold.add_class("aiplan-more")
        return W.VBox(main + ([fold] if more else []))

    def _layout(self) -> W.Widget:
        parts = [self.preset, W.HTML('<div class="aiplan-group-title">Plan name</div>'), self.name]
        for title, section in GROUPS:
            if section not in self.sections:
                continue
            head = W.HTML(f'<div class="aiplan-group-title">{title}</div>')
            parts += [head, self._group(section)]
        box = W.VBox(parts, layout=W.Layout(width="100%"))
        box.add_class("aiplan-controls")
        return box

    # --- reading and writing values ----------------------------------------------

    def on_change(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(path)`` after the user changes any field."""
        self._callbacks.append(callback)

    def _notify(self, path: str) -> None:
        if path not in ("plan", "undo"):
            self._mark_modified()
        for cb in self._callbacks:
            cb(path)

    def plan_dict(self) -> dict:
        """The plan the controls describe (the explicit fields only; defaults are the kit's)."""
        return copy.deepcopy(self._raw)

    @property
    def plan_name(self) -> str:
        return str(self._raw.get("name") or "Unnamed plan")

    def set_plan(self, plan: Any, notify: bool = True, source: str | None = None) -> None:
        """Load a plan (dict, path or YAML text) into the controls; ``source`` names a loaded file."""
        data, folder = plan_as_data(plan)
        path = str(Path(plan).resolve()) if folder is not None else None
        self.base_dir = Path(folder) if folder is not None else None  # the plan file's folder (own catalogs)
        data = copy.deepcopy(data)
        self._raw = data if isinstance(data, dict) else {}
        self._kind_memory = {}
        self.modified = False
        preset_label = next((label for label, p in self.presets.items() if p == path), None)
        named = bool(self._raw.get("name"))
        # a name the user wrote (in a file or a dict) stays; a preset's stays until the plan changes
        self.name_typed = named and preset_label is None
        self._preset_named = named and preset_label is not None
        if preset_label is not None:
            self._source = (preset_label, path)
        elif source:
            self._source = (f"{source} (loaded)", UPLOADED)
        else:
            self._source = None
        self._show_source()
        self._synced = False
        if notify:  # the evaluation shows the figures first, then every widget (:meth:`sync`)
            for cb in self._callbacks:
                cb("plan")
        if not self._synced:  # not evaluated, or not valid: show the plan as it is
            self._show(self._raw)

    def apply(self, overrides: Mapping[str, Any], why: str = "fix") -> None:
        """Change plan fields (``{"cluster.gpus": 120}``; ``None`` removes one), as the user would; ``why`` is
        passed to the change callbacks ("fix", "option")."""
        self.restore(with_overrides(self._raw, overrides), why)

    def restore(self, plan: Mapping, why: str = "undo", modified: bool | None = None) -> None:
        """Put a plan dict (as :meth:`plan_dict` gave it) back in the controls, as a change of the plan;
        ``modified`` (for an undo) says whether it was an edited preset, else the change marks it edited."""
        if modified is not None:
            self.modified = modified
            self._show_source()
        self._raw = copy.deepcopy(dict(plan))
        self._synced = False
        self._notify(why)
        if not self._synced:
            self._show(self._raw)

    def _show_source(self) -> None:
        """The preset dropdown: the loaded preset or file, "(modified)" after an edit."""
        label, value = self._source if self._source else ("—", None)
        extra = None
        if self._source and (self.modified or value == UPLOADED):
            extra = (f"{label} (modified)" if self.modified else label, MODIFIED if self.modified else UPLOADED)
        self._syncing = True
        try:
            options = self._preset_options(extra)
            if list(self.preset.options) != options:
                self.preset.options = options
            self.preset.value = extra[1] if extra else value
        finally:
            self._syncing = False

    def _mark_modified(self) -> None:
        if self._source and not self.modified:
            self.modified = True
            self._show_source()

    def _set_widget(self, widget: W.Widget, spec: F | None, value: Any) -> None:
        if isinstance(widget, W.Text) and spec is not None:
            if spec.kind in ("int", "float"):
                widget.value = _percent_text(value) if spec.fmt == "pct" else _number_text(value)
            else:
                widget.value = "" if value is None else str(value)
        elif isinstance(widget, W.SelectMultiple):
            widget.value = tuple(v for v in (value or ()) if v in widget.options)
        elif isinstance(widget, W.Dropdown):
            values = [o[1] if isinstance(o, tuple) else o for o in widget.options]
            if value in values:
                widget.value = value
            elif value is None:
                widget.index = None
        elif isinstance(widget, (W.FloatSlider, W.IntSlider)):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                widget.value = min(max(value, widget.min), widget.max)
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
            self.name.value = self.plan_name
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
        """Show an evaluated plan in every widget: the user's values and the kit's defaults (the filled
        plan holds both)."""
        self._show(filled_plan)
        self._synced = True

    def mark_invalid(self, paths: set[str]) -> None:
        """Outline the widgets of the plan fields a validation problem names."""
        for path in self.invalid - paths:
            if path in self.widgets:
                self.widgets[path].remove_class("aiplan-invalid")
        for path in paths - self.invalid:
            if path in self.widgets:
                self.widgets[path].add_class("aiplan-invalid")
        self.invalid = set(paths)

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
            hidden = (bool(spec.kinds) and kind not in spec.kinds) or (kind == "inference" and path in TRAINING_ONLY)
            if path == "workload.lora_rank":
                hidden = hidden or self.widgets["workload.method"].value == "full"
            display = "none" if hidden else None
            if self.widgets[path].layout.display != display:
                self.widgets[path].layout.display = display

    # --- callbacks ----------------------------------------------------------------

    def auto_name(self, result: Mapping | None = None) -> str:
        """The plan's name from the plan: "Llama 3.1 70B pretraining on 1,184 H100" (the GPU count of ``result``,
        an evaluation of the plan; without it the plan's own count, if any)."""
        model = self._raw.get("model")
        record = self.catalog.models.get(model) if isinstance(model, str) else None
        model_name = getattr(record, "name", None) or (model if isinstance(model, str) else "Custom model")
        kind = (self._raw.get("workload") or {}).get("kind", "pretrain")
        what = {"pretrain": "pretraining", "finetune": "fine-tune", "inference": "serving"}.get(kind, kind)
        gpu = (self._raw.get("cluster") or {}).get("gpu") or ((result or {}).get("plan") or {}).get(
            "cluster", {}).get("gpu")
        count = None
        if result:
            count = (result.get("inference") or {}).get("gpus") if kind == "inference" else None
            count = count or (result.get("cluster") or {}).get("gpus")
        count = count or (self._raw.get("cluster") or {}).get("gpus")
        on = f"{count:,} " if isinstance(count, (int, float)) and not isinstance(count, bool) else ""
        return f"{model_name} {what}" + (f" on {on}{gpu_short_name(self.catalog, gpu)}" if gpu else "")

    @property
    def name_follows(self) -> bool:
        """Whether the name follows the plan: the user typed none, and a preset's name only once it changed."""
        return not self.name_typed and (not self._preset_named or self.modified)

    def follow_name(self, result: Mapping | None = None) -> bool:
        """Rename the plan after itself (:meth:`auto_name`) unless :attr:`name_follows` says not; True if renamed."""
        if not self.name_follows:
            return False
        name = self.auto_name(result)
        if self._raw.get("name") == name:
            return False
        self._raw["name"] = name
        self._syncing = True
        try:
            self.name.value = name
        finally:
            self._syncing = False
        return True

    def _follow_name(self) -> None:
        self.follow_name()

    def _switch_kind(self, old: str | None, new: str) -> None:
        """Keep the fields of the kind left; give back those of the kind chosen (or its defaults)."""
        kept: dict[str, Any] = {}
        for path, spec in self.specs.items():
            s, k = path.split(".")
            part = self._raw.get(s) or {}
            if spec.kinds and old in spec.kinds and k in part:
                kept[path] = part[k]
            if spec.kinds and new not in spec.kinds:
                part.pop(k, None)
        if old:
            self._kind_memory[old] = kept
        restore = self._kind_memory.get(new)
        if restore is None:
            restore = self._first_defaults(new, kept)
        for path, value in restore.items():
            s, k = path.split(".")
            part = self._raw.setdefault(s, {})
            if value is None:
                part.pop(k, None)
            else:
                part[k] = value
        # the widgets show the values and the fields of the new kind after the evaluation (:meth:`sync`)

    def _first_defaults(self, kind: str, kept: dict[str, Any]) -> dict[str, Any]:
        """Fields a first switch to ``kind`` sets: fine-tuning defaults; for training without tokens the
        compute-optimal count (``aiplan.model.chinchilla_tokens``), without GPUs a deadline."""
        out: dict[str, Any] = {}
        if kind == "finetune":
            out = {**{p: v for p, v in kept.items() if p.startswith("workload.")},
                   **{f"workload.{k}": v for k, v in FINETUNE_DEFAULTS.items()}}
        if kind in ("pretrain", "finetune"):
            model = self.catalog.models.get(self._raw.get("model")) if isinstance(self._raw.get("model"), str) \
                else None
            params = getattr(model, "params_published", None)
            if "workload.tokens" not in out and not (self._raw.get("workload") or {}).get("tokens") and params:
                out["workload.tokens"] = float(chinchilla_tokens(params))
            cluster = self._raw.get("cluster") or {}
            if not cluster.get("gpus") and not cluster.get("deadline_days"):
                out["cluster.deadline_days"] = TRAINING_DEADLINE_DAYS
        return out

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
        if not isinstance(self._raw.get(section), dict):
            self._raw[section] = {}
        part = self._raw[section]
        old_kind = (self._raw.get("workload") or {}).get("kind", "pretrain")
        if value is None or (isinstance(value, str) and spec.kind == "str" and not value):
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
        if path == "workload.kind" and value != old_kind:
            self._switch_kind(old_kind, value)
        if path == "workload.method":
            self._update_visibility()
        if path in ("cluster.gpu", "workload.kind"):
            self._follow_name()
        self._synced = False
        self._notify(path)
        if path == "workload.kind" and not self._synced:  # not evaluated: still show the kind's fields
            self._update_visibility()

    def _on_model(self, change) -> None:
        if self._syncing or change["new"] == "__custom__":
            return
        self._raw["model"] = change["new"]
        self._follow_name()
        self._notify("model")

    def _on_name(self, change) -> None:
        if self._syncing:
            return
        self._raw["name"] = change["new"] or "Unnamed plan"
        self.name_typed = bool(change["new"])
        self._notify("name")

    def _on_preset(self, change) -> None:
        if self._syncing or change["new"] in (None, MODIFIED, UPLOADED):
            return
        self.set_plan(change["new"])
