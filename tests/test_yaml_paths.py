"""The plan reader's fast paths (libyaml, with or without its composer) read every text as the pure-Python
reader does: the same values, or an error from the pure-Python reader in its own words."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aiplan.core import inputs

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)

_KEYS = st.one_of(st.text(min_size=1, max_size=12), st.integers(-5, 5), st.sampled_from(["yes", "on", "1e3", "~"]))
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20),
    st.sampled_from(["1e12", "1.0e12", "yes", "no", "on", "off", "null", "~", "0x1F", "0o17", "12_000", ".inf",
                     "2024-01-01", "+1", "-0", "- item", "a: b", "# not a comment"]),
)
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(_KEYS, inner, max_size=4)), max_leaves=25)


def _pure(text: str):
    """The pure-Python reader's value, or the type of what it raises."""
    try:
        return yaml.load(text, Loader=inputs._Loader)  # noqa: S506 - a SafeConstructor
    except Exception as exc:  # noqa: BLE001 - compared, not hidden
        return type(exc)


def _fast(text: str):
    try:
        return inputs._load(text)
    except Exception as exc:  # noqa: BLE001
        return type(exc)


@SETTINGS
@given(_VALUES)
def test_block_texts_read_as_the_pure_python_reader_reads_them(value):
    text = yaml.safe_dump(value, default_flow_style=False, allow_unicode=True, sort_keys=False)
    assert _fast(text) == _pure(text)


@pytest.mark.parametrize("text", [
    "a: 1\na: 2\n",                      # a repeated key
    "? [1, 2]\n: x\n",                   # a non-scalar key
    "~: 1\n",                            # a null key
    "a: &x 1\nb: *x\n",                  # an alias
    "a: !!python/object:os.system x\n",  # a Python tag
    "a: !!str 12\n",                     # an explicit tag
    "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 30)) + "  " * 30 + "v: 1\n",  # too deep
    "a: " + "x" * 300 + "\n",            # a long line
    "a:\n  - 1\n  - b: 2\n    c: [3, 4]\n",
    "model: llama-3.1-8b\nworkload: {kind: pretrain, tokens: 1.0e12}\n",
])
def test_edge_texts_read_as_the_pure_python_reader_reads_them(text):
    assert _fast(text) == _pure(text)
