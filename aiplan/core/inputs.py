"""The one input layer: every plan file, ``--set`` value, upload and user catalog comes in here.

Rules (also in the README's plan section):

- **Size**: a plan file is at most :data:`MAX_PLAN_BYTES` (1 MB); a catalog CSV at most
  :data:`MAX_CSV_BYTES` (20 MB). Larger files are refused before they are parsed.
- **Encoding**: UTF-8, with or without a byte-order mark. Anything else (UTF-16, binary) is a
  clear error naming the file.
- **YAML**: the YAML 1.2 core schema. ``true``/``false`` are the only booleans (``yes``, ``no``,
  ``on``, ``off`` are text), and ``1.0e12``, ``2e12`` and ``1e-3`` are numbers; a number field also
  takes ``2T``, ``4M``, ``1,024`` and, for a share, ``55%`` (:func:`number_from_text`). Duplicate keys
  are an error. Nesting deeper than :data:`MAX_DEPTH` levels, more than :data:`MAX_ALIASES`
  aliases or more than :data:`MAX_NODES` values are refused (no "billion laughs"). Python tags
  are never run (safe loading).
- **Messages**: one line each; values longer than :data:`MAX_VALUE_CHARS` characters are
  shortened with an ellipsis; control characters in user text are removed before printing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from stat import S_ISREG
from typing import Any

import yaml

from .errors import MAX_VALUE_CHARS, PlanError, Problem, clean_text, short  # noqa: F401

#: largest plan file read [bytes]
MAX_PLAN_BYTES = 1_000_000
#: largest catalog CSV read [bytes]
MAX_CSV_BYTES = 20_000_000
#: deepest nesting of mappings and lists in a plan
MAX_DEPTH = 20
#: most YAML aliases (``*name``) in one plan
MAX_ALIASES = 50
#: most values (scalars, lists, mappings) in one plan
MAX_NODES = 20_000
#: longest integer read from YAML [digits] (far beyond any range; Python refuses more than 4,300)
MAX_INT_DIGITS = 4000

#: YAML 1.2 core-schema floats (also ``1e12`` and ``1.0e12``, which YAML 1.1 reads as text)
_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?$|^[-+]?\.(?:inf|Inf|INF)$"
                    r"|^\.(?:nan|NaN|NAN)$")
_INT = re.compile(r"^[-+]?[0-9][0-9_]*$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")


# --- YAML ----------------------------------------------------------------------------------------


class _Resolver(yaml.resolver.BaseResolver):
    """YAML 1.2 core schema: only true/false are booleans; 1e12 and 1.0e12 are floats.

    No path resolvers: :meth:`resolve` is PyYAML's without them (the implicit resolvers of the
    scalar's first character, in the order added, else the default tag of the node's kind), and a
    node's descent and ascent have nothing to track.
    """

    def resolve(self, kind, value, implicit):  # noqa: D102 - PyYAML hook
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, regexp in self.yaml_implicit_resolvers.get(value[:1], ()):
                    if regexp.match(value):
                        return tag
            return self.DEFAULT_SCALAR_TAG
        return self.DEFAULT_SEQUENCE_TAG if kind is yaml.SequenceNode else self.DEFAULT_MAPPING_TAG

    def descend_resolver(self, current_node, current_index):  # noqa: D102 - PyYAML hook
        pass

    def ascend_resolver(self):  # noqa: D102 - PyYAML hook
        pass


for _tag, _regexp, _first in (
        ("tag:yaml.org,2002:bool", _BOOL, "tTfF"),
        ("tag:yaml.org,2002:int", _INT, "-+0123456789"),
        ("tag:yaml.org,2002:float", _FLOAT, "-+0123456789."),
        ("tag:yaml.org,2002:null", _NULL, ["~", "n", "N", ""])):
    _Resolver.add_implicit_resolver(_tag, _regexp, list(_first))


class _Checks:
    """The rules above as PyYAML hooks: depth, aliases and size bounded, duplicate keys rejected."""

    def _start_checks(self) -> None:
        self._depth = 0
        self._aliases = 0
        self._nodes = 0

    def compose_node(self, parent, index):  # noqa: D102 - PyYAML hook
        if self.check_event(yaml.events.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise _Limit(f"has more than {MAX_ALIASES} aliases (*name)", self.peek_event().start_mark)
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise _Limit(f"has more than {MAX_NODES:,} values", self.peek_event().start_mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Limit(f"is nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node):  # noqa: D102 - PyYAML hook
        # YAML 1.2 core: decimal, leading zeros included ("010" is ten, not YAML 1.1's octal eight)
        text = self.construct_scalar(node).replace("_", "")
        if len(text.lstrip("+-")) > MAX_INT_DIGITS:
            raise _Limit(f"has a number of {len(text):,} digits, too long to read", node.start_mark)
        return int(text, 10)

    def construct_mapping(self, node, deep=False):  # noqa: D102 - PyYAML hook
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key (a list or mapping): let PyYAML report it
                duplicate = False
            if duplicate:
                raise _Limit(f"repeats the key {short(key)}", key_node.start_mark)
            if not isinstance(key, (list, dict)):
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


class _Loader(_Checks, yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.composer.Composer,
              yaml.constructor.SafeConstructor, _Resolver):
    """A safe loader that bounds depth, aliases and size and rejects duplicate keys (pure Python)."""

    def __init__(self, stream: str):
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        _Resolver.__init__(self)
        self._start_checks()


try:
    from yaml.cyaml import CParser as _CParser
except ImportError:  # PyYAML built without libyaml: the pure-Python loader reads everything
    _CParser = None

if _CParser is not None:
    class _FastLoader(_Checks, yaml.composer.Composer, _CParser, yaml.constructor.SafeConstructor, _Resolver):
        """:class:`_Loader` with libyaml's scanner and parser (six times faster); the same composer,
        resolver and constructor, so the same checks and values. Used only on text it reads as the
        pure-Python loader does (:func:`_libyaml_reads_as_pyyaml`); any error is reported by :class:`_Loader`."""

        def __init__(self, stream: str):
            _CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            _Resolver.__init__(self)
            self._start_checks()

    _FastLoader.add_constructor("tag:yaml.org,2002:int", _Checks.construct_yaml_int)

    class _ComposedLoader(_CParser, _Checks, yaml.constructor.SafeConstructor, _Resolver):
        """:class:`_FastLoader` with libyaml's composer too (half the time again), for text whose
        limits can be checked on the values read (:func:`_composed_in_c`, :func:`_within_limits`); the
        same resolver and scalar constructors (:func:`_construct` builds the collections)."""

        def __init__(self, stream: str):
            _CParser.__init__(self, stream)
            yaml.constructor.SafeConstructor.__init__(self)
            _Resolver.__init__(self)

    _ComposedLoader.add_constructor("tag:yaml.org,2002:int", _Checks.construct_yaml_int)


#: what the two loaders read differently (tabs, tags, a byte-order mark or a Unicode line break inside
#: the text, a comment right after a block scalar's | or >)
_PYTHON_ONLY = re.compile("[\t!\ufeff\x85\u2028\u2029]|[|>][-+0-9]*#")


def _libyaml_reads_as_pyyaml(text: str) -> bool:
    """Whether libyaml reads ``text`` as PyYAML does: none of :data:`_PYTHON_ONLY`, and no ``?`` in a
    text with flow collections (libyaml allows it inside a plain scalar there, PyYAML does not)."""
    if _PYTHON_ONLY.search(text):
        return False
    return "?" not in text or ("[" not in text and "{" not in text)


#: what libyaml's composer is not given: aliases (counted by the Python composer), flow collections and
#: lines over 200 characters (they could nest deeper than its recursion should go)
_COMPOSED_IN_PYTHON = re.compile(r"[*\[{]|<<|[^\n]{201}")


def _composed_in_c(text: str) -> bool:
    """Whether libyaml may compose ``text``: no alias, no flow collection, no line over 200
    characters. Block nodes nest only by indentation or a "- " on the same line, so such a text nests
    at most about 400 levels, a depth libyaml's recursive composer handles; deeper or larger than the
    rules allow is then refused by :func:`_within_limits` (and reported by the Python composer)."""
    return _COMPOSED_IN_PYTHON.search(text) is None


def _within_limits(data: Any) -> bool:
    """Whether values read without aliases keep the limits the Python composer checks as it goes:
    nesting at most :data:`MAX_DEPTH` levels, at most :data:`MAX_NODES` nodes (mapping keys count)."""
    stack, nodes = [(data, 1)], 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if depth > MAX_DEPTH or nodes > MAX_NODES:
            return False
        if isinstance(node, dict):
            nodes += len(node)  # the keys, scalars at the values' depth
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return nodes <= MAX_NODES


#: the constructor of each tag the resolver gives a scalar (an explicit tag never reaches libyaml)
_SCALARS = {"tag:yaml.org,2002:str": yaml.constructor.SafeConstructor.construct_yaml_str,
            "tag:yaml.org,2002:int": _Checks.construct_yaml_int,
            "tag:yaml.org,2002:float": yaml.constructor.SafeConstructor.construct_yaml_float,
            "tag:yaml.org,2002:bool": yaml.constructor.SafeConstructor.construct_yaml_bool,
            "tag:yaml.org,2002:null": yaml.constructor.SafeConstructor.construct_yaml_null}


class _NotPlain(Exception):
    """A node :func:`_construct` leaves to the pure-Python loader."""


def _construct(loader, node) -> Any:
    """The value of a node libyaml composed, as the safe constructor builds it (scalars by the
    constructor of their tag, lists, mappings in order) without its generic machinery; a duplicate or
    non-scalar key, or anything else, raises :class:`_NotPlain` (the pure-Python loader then reads
    the text and reports it in its own words)."""
    kind = type(node)
    if kind is yaml.ScalarNode:
        make = _SCALARS.get(node.tag)
        if make is None:
            raise _NotPlain(node.tag)
        return make(loader, node)
    if kind is yaml.SequenceNode and node.tag == "tag:yaml.org,2002:seq":
        return [_construct(loader, item) for item in node.value]
    if kind is not yaml.MappingNode or node.tag != "tag:yaml.org,2002:map":
        raise _NotPlain(node.tag)
    out: dict = {}
    for key_node, value_node in node.value:
        key = _construct(loader, key_node) if type(key_node) is yaml.ScalarNode else None
        if key is None or key in out:  # a non-scalar, null or repeated key
            raise _NotPlain("key")
        out[key] = _construct(loader, value_node)
    return out


def _load(text: str) -> Any:
    """The YAML value of ``text`` by the rules above (libyaml when it reads the text as PyYAML does)."""
    if _CParser is not None and _libyaml_reads_as_pyyaml(text):
        try:
            if _composed_in_c(text):
                loader = _ComposedLoader(text)
                try:
                    node = loader.get_single_node()
                finally:
                    loader.dispose()
                data = None if node is None else _construct(loader, node)
                if _within_limits(data):
                    return data
            else:
                return yaml.load(text, Loader=_FastLoader)  # noqa: S506 - a SafeConstructor
        except Exception:  # noqa: BLE001, S110 - the pure-Python loader below says why, in its own words
            pass
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeConstructor


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)

# Alias counting must also see aliases inside flow collections and mapping keys: PyYAML composes
# every node through compose_node, so the hook above covers them.


class _Limit(yaml.YAMLError):
    def __init__(self, problem: str, mark):
        super().__init__(problem)
        self.problem, self.problem_mark = problem, mark


_EMPTY = "is empty: a plan needs at least a model and a workload"


def parse_yaml(text: str, where: str, document: bool = True) -> Any:
    """Parse YAML text by the rules above; a one-line :class:`PlanError` naming ``where`` if it fails.

    ``document``: the text is a whole plan, so one with no values (empty, only white space or
    comments, or ``null``) is an error; a ``--set`` value may be ``null``.
    """
    if len(text) > MAX_PLAN_BYTES:
        raise PlanError(Problem(where, f"is larger than {MAX_PLAN_BYTES // 1_000_000} MB "
                                f"({len(text):,} characters): split it or remove unused data", has_value=False))
    if document and not text.strip():
        raise PlanError(Problem(where, _EMPTY, has_value=False))
    try:
        data = _load(text)
    except yaml.YAMLError as exc:
        raise PlanError(Problem(where, f"is not valid YAML{_line(exc, text)}: {_reason(exc)}",
                                has_value=False)) from None
    except RecursionError:
        raise PlanError(Problem(where, f"is nested more than {MAX_DEPTH} levels deep", has_value=False)) from None
    except (ValueError, TypeError, OverflowError) as exc:  # a scalar PyYAML cannot convert
        raise PlanError(Problem(where, f"is not valid YAML: {clean_text(exc, 120)}", has_value=False)) from None
    if document and data is None:
        raise PlanError(Problem(where, _EMPTY + " (it holds only comments or null)", has_value=False))
    check_depth(data, where)  # aliases can expand a small file into a huge structure
    return data


def _line(exc: yaml.YAMLError, text: str) -> str:
    mark = getattr(exc, "problem_mark", None)
    if mark:
        return f" at line {mark.line + 1}"
    if isinstance(exc, yaml.reader.ReaderError):
        return f" at line {text.count(chr(10), 0, exc.position) + 1}"
    return ""


def _reason(exc: yaml.YAMLError) -> str:
    """The problem in words, without PyYAML's position block ('in "<unicode string>", line 3, column 7')."""
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow
        code = exc.character if isinstance(exc.character, int) else ord(exc.character[:1] or "\0")
        return f"the control character U+{code:04X} is not allowed: remove it"
    reason = clean_text(getattr(exc, "problem", None) or exc, 160)
    if "'\\t'" in reason:  # PyYAML reads YAML 1.1: no tab to indent, nor after a colon
        reason += " (a tab: use spaces)"
    return reason


# --- files -----------------------------------------------------------------------------------------


def read_text(path: str | Path, limit: int = MAX_PLAN_BYTES, what: str = "plan file") -> str:
    """A text file's content, checked: it exists, fits the size limit and is UTF-8 (BOM allowed)."""
    path = Path(path)
    where = clean_text(path)
    try:
        st = path.stat()
        size = st.st_size
        if not S_ISREG(st.st_mode):
            raise PlanError(Problem(where, f"is not a {what}", has_value=False))
        if size > limit:
            raise PlanError(Problem(where, f"is larger than the {limit / 1e6:g} MB a {what} may be "
                                    f"({size / 1e6:.1f} MB)", has_value=False))
        data = _read_bytes(path)
    except OSError as exc:
        raise PlanError(Problem(where, f"cannot be read ({exc.strerror or exc})", has_value=False)) from None
    return decode(data, where, what)


def _read_bytes(path: Path) -> bytes:
    """The bytes of a regular file: open, read to the end, close (half the system calls of
    ``Path.read_bytes``, which also asks whether the file is a terminal and where it stands)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))  # O_BINARY: no newline translation on Windows
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def decode(data: bytes, where: str, what: str = "plan file") -> str:
    """UTF-8 bytes (with or without a byte-order mark) as text; other encodings are a clear error."""
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        raise PlanError(Problem(where, f"is UTF-32 text: save the {what} as UTF-8", has_value=False))
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise PlanError(Problem(where, f"is UTF-16 text: save the {what} as UTF-8", has_value=False))
    if b"\x00" in data:
        raise PlanError(Problem(where, f"is not a text file (it contains binary data): a {what} is UTF-8 text",
                                has_value=False))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PlanError(Problem(where, f"is not UTF-8 text (byte {exc.start}): save the {what} as UTF-8",
                                has_value=False)) from None
    return text


def read_yaml(path: str | Path) -> Any:
    """Read and parse a plan file by the rules above."""
    return parse_yaml(read_text(path), clean_text(path))


def check_depth(value: Any, where: str = "plan", limit: int = MAX_DEPTH) -> None:
    """Refuse Python data nested deeper than ``limit`` (the API's equivalent of the YAML rule)."""
    stack = [(value, 1)]
    nodes = 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if depth > limit:
            raise PlanError(Problem(where, f"is nested more than {limit} levels deep", has_value=False))
        if nodes > MAX_NODES:
            raise PlanError(Problem(where, f"has more than {MAX_NODES:,} values", has_value=False))
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend((v, depth + 1) for v in node)


#: number suffixes people write: 4M tokens, 2T tokens, 1.5B parameters (g as b)
NUMBER_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}


def number_from_text(text: str, percent: bool = True) -> int | float | None:
    """A number as people write it, or None: "2e12" and "2T" -> 2e12, "4M" -> 4000000, "1,024" -> 1024, and
    (``percent``) "38%" -> 0.38.

    >>> [number_from_text(t) for t in ("2T", "4M", "1,024", "38%", "0.5", "abc", "")]
    [2000000000000, 4000000, 1024, 0.38, 0.5, None, None]
    >>> number_from_text("38%", percent=False) is None
    True
    """
    plain = (text or "").strip().replace(",", "").replace("_", "").replace(" ", "")
    if percent and plain.endswith("%"):
        try:
            return float(plain[:-1]) / 100
        except ValueError:
            return None
    for convert in (int, float):
        try:
            return convert(plain)
        except ValueError:
            pass
    m = re.fullmatch(r"([0-9.]+(?:e[+-]?\d+)?)([kmbgtp])", plain.lower())
    if m:
        try:
            value = float(m.group(1)) * NUMBER_SUFFIXES[m.group(2)]
        except ValueError:
            return None
        return int(value) if value.is_integer() and abs(value) < 1e15 else value
    return None
