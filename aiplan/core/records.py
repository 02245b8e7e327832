"""Typed records: what each pipeline step returns, and the public result assembled from them.

Every public result key (``compute.gpu_hours``) is one field of one record, and every record is
made by one step (:mod:`aiplan.pipeline` lists which). The field registry
(``aiplan/core/result_fields.csv``) says, for each key, its label, unit, kind and meaning and,
in its ``record`` column, the record it belongs to when that is not the key's section (the public
``compute`` section, for one, holds the model step's throughput, the cluster step's wall-clock
time with failures and the Monte Carlo's percentiles). So:

* a step builds its records with keyword arguments: a misspelt or undocumented field is a
  ``TypeError`` at once, and a field no step sets stays ``None``;
* no step can write another step's field: it can only return its own records;
* a step reads the records of the steps before it through a :class:`ResultView`, which answers
  with the same public keys as the final result (``view["compute"]["gpu_hours"]``) and raises
  :class:`NotYetMade` for a key whose record a later step makes;
* :func:`assemble` turns the records into the public result dict (``docs/contract.md``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .fields import RESULT_FIELDS

#: Python type of each registry kind (documentation; dataclasses do not check it)
_KIND_TYPES = {"count": "int | float | None", "bool": "bool | None", "text": "str | None", "date": "str | None",
               "range": "list | None"}


class NotYetMade(KeyError):
    """A step read a result key whose record a later step makes (a hidden order dependency)."""


def _field_rows() -> dict[str, dict[str, Any]]:
    """record name -> {attribute: (public section, public key, unit, kind, label)} from the registry."""
    out: dict[str, dict[str, Any]] = {}
    for key, f in RESULT_FIELDS.items():
        section = f.section
        if section == "checks":
            continue
        name = key.split(".")[1].split("[", 1)[0]
        record = f.record or section
        attrs = out.setdefault(record, {})
        nested = key.count(".") > 1
        spec = attrs.get(name)
        if spec is None:
            attrs[name] = {"section": section, "name": name, "unit": "" if nested else f.unit,
                           "kind": "dict" if "[" not in key.split(".")[1] and nested else
                           ("list" if "[]" in key else f.kind),
                           "label": f.label if not nested else name.replace("_", " "), "doc": f.doc}
        elif spec["section"] != section:
            raise ValueError(f"record {record!r} has two fields named {name!r} ({spec['section']} and {section})")
    return out


class Record:
    """Base of the record classes: keyword-only, read-only, a field not given is None."""

    __slots__ = ()
    #: the record's name (``"compute"``)
    kind: str = ""
    #: field name -> its registry facts (public section, unit, kind, label, doc)
    FIELDS: dict[str, dict[str, Any]] = {}

    def __init__(self, **values: Any):
        fields = self.FIELDS
        for name, value in values.items():
            if name not in fields:
                raise TypeError(f"record {self.kind!r} has no field {name!r} (aiplan/core/result_fields.csv)")
            object.__setattr__(self, name, value)
        for name in fields.keys() - values.keys():  # None, set once: reading it is then a plain slot read
            object.__setattr__(self, name, None)

    def __getattr__(self, name: str) -> Any:  # only called for a name that is not a field (or a copy's unset one)
        if name in type(self).FIELDS:
            return None
        raise AttributeError(f"record {self.kind!r} has no field {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"record {self.kind!r} is read-only: a step returns new records")

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.FIELDS if getattr(self, k) is not None)
        return f"{type(self).__name__}({shown})"


def _make(record: str, attrs: dict[str, dict[str, Any]]) -> type:
    lines = [f"Record ``{record}`` (one step makes it; see :mod:`aiplan.pipeline`).", "", "Fields", "------"]
    for name, a in attrs.items():
        kind = a["kind"]
        typ = _KIND_TYPES.get(kind, "dict | None" if kind == "dict" else "list | None" if kind == "list"
                              else "float | None")
        unit = f" [{a['unit']}]" if a["unit"] else ""
        lines.append(f"{name} : {typ}")
        lines.append(f"    ``{a['section']}.{name}``: {a['label']}{unit}. {a['doc']}")
    name = record.title().replace("_", "") + "Record"
    return type(name, (Record,), {"__slots__": tuple(attrs), "__doc__": "\n".join(lines), "__module__": __name__,
                                  "kind": record, "FIELDS": attrs})


#: every record class by name (``RECORDS["compute"](gpus=8, mfu=0.4)``)
RECORDS: dict[str, type] = {name: _make(name, attrs) for name, attrs in _field_rows().items()}
#: (public section, key) -> (record name, attribute)
OWNER: dict[tuple[str, str], tuple[str, str]] = {
    (spec["section"], name): (rec, name) for rec, cls in RECORDS.items() for name, spec in cls.FIELDS.items()}
#: public section -> its keys, in registry order
SECTION_KEYS: dict[str, tuple[str, ...]] = {}
for (_section, _key) in OWNER:
    SECTION_KEYS[_section] = (*SECTION_KEYS.get(_section, ()), _key)


#: public section -> (key, record name, attribute) of each of its keys, in registry order
_SECTION_OWNERS: dict[str, tuple[tuple[str, str, str], ...]] = {
    section: tuple((key, *OWNER[(section, key)]) for key in keys) for section, keys in SECTION_KEYS.items()}


def record(kind: str, /, **values: Any) -> Any:
    """A record of kind ``kind`` with ``values`` (every other field None)."""
    return RECORDS[kind](**values)


def record_of(kind: str, values: Mapping[str, Any]) -> Any:
    """A record of kind ``kind`` from a mapping (a step that builds its fields as a dict)."""
    return RECORDS[kind](**values)


class SectionView(Mapping):
    """One public section of the records made so far, read-only, by public key."""

    __slots__ = ("_section", "_records", "_keys")

    def __init__(self, section: str, records: Mapping[str, Any]):
        self._section, self._records = section, records
        self._keys = SECTION_KEYS.get(section, ())

    def __getitem__(self, key: str) -> Any:
        owner = OWNER.get((self._section, key))
        if owner is None:
            raise KeyError(f"{self._section}.{key} is not a result key (see aiplan/core/result_fields.csv)")
        rec = self._records.get(owner[0])
        if rec is None:
            raise NotYetMade(f"{self._section}.{key} belongs to the record {owner[0]!r}, which a later step makes")
        return getattr(rec, owner[1])

    def get(self, key: str, default: Any = None) -> Any:
        """The value (``default`` when it is None or not a result key); :class:`NotYetMade` when a
        later step makes it."""
        try:
            value = self[key]
        except NotYetMade:
            raise
        except KeyError:
            return default
        return default if value is None else value

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


class ResultView(Mapping):
    """The result so far, read-only, with the public keys: what a step reads of the steps before it."""

    __slots__ = ("plan", "records", "_views")

    def __init__(self, plan_data: Any, records: dict[str, Any] | None = None):
        self.plan = plan_data
        self.records: dict[str, Any] = records if records is not None else {}
        self._views: dict[str, SectionView] = {}

    def add(self, *records: Any) -> None:
        for rec in records:
            if rec.kind in self.records:
                raise ValueError(f"record {rec.kind!r} is made twice")
            self.records[rec.kind] = rec

    def __getitem__(self, section: str) -> Any:
        if section == "plan":
            return self.plan
        if section == "checks":
            return self.records.get("checks", [])
        if section not in SECTION_KEYS:
            raise KeyError(section)
        view = self._views.get(section)
        if view is None:
            view = self._views[section] = SectionView(section, self.records)
        return view

    def __iter__(self) -> Iterator[str]:
        return iter(("plan", *SECTION_KEYS, "checks"))

    def __len__(self) -> int:
        return len(SECTION_KEYS) + 2


def assemble(plan_data: Any, records: Mapping[str, Any], checks: list | None = None) -> dict[str, Any]:
    """The public result dict: ``plan``, every section with every registry key, ``checks``.

    A key whose record was not made (a section the workload does not use) is None.
    """
    out: dict[str, Any] = {"plan": plan_data}
    for section, owners in _SECTION_OWNERS.items():
        out[section] = {key: None if (rec := records.get(rec_name)) is None else getattr(rec, attr)
                        for key, rec_name, attr in owners}
    out["checks"] = list(checks or [])
    return out
