"""Reading a request body strictly (pure: no server, no database)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from morpheus_pipelines.crm.api.body import MAX_DEPTH, BodyRefused, nesting_depth, parse_body

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


def _storable(value: object) -> bool:
    """What jsonb can hold: no NUL, no lone surrogate, anywhere."""
    text = json.dumps(value, ensure_ascii=False)
    return "\\u0000" not in text and not any(0xD800 <= ord(c) <= 0xDFFF for c in text)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_a_storable_body_reads_as_json_loads_reads_it(value: object) -> None:
    raw = json.dumps({"payload": value}).encode()
    if _storable(value) and nesting_depth(raw.decode()) <= MAX_DEPTH:
        assert parse_body(raw) == json.loads(raw)
    else:
        with pytest.raises(BodyRefused):
            parse_body(raw)


@settings(max_examples=200, deadline=None)
@given(json_values, st.sampled_from(["\x00", "\ud800", "\udfff"]))
def test_nul_and_surrogates_are_refused_wherever_they_are(value: object, bad: str) -> None:
    raw = json.dumps({"payload": value, "k": [f"x{bad}y"]}).encode()
    with pytest.raises(BodyRefused) as refused:
        parse_body(raw)
    assert refused.value.field.startswith(("k.0", "payload"))


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400", "-1e999"])
def test_non_finite_numbers_are_refused_with_their_place(number: str) -> None:
    with pytest.raises(BodyRefused) as refused:
        parse_body(f'{{"a": [0, {{"b": {number}}}]}}'.encode())
    assert refused.value.field == "a.1.b"
    assert math.isfinite(parse_body(b'{"a": 1e300}')["a"])


def test_depth_ignores_brackets_inside_strings() -> None:
    text = json.dumps({"s": "[" * 100 + '\\"{' * 50})
    assert nesting_depth(text) == 1
    assert nesting_depth("[[[]],[{}]]") == 3
    with pytest.raises(BodyRefused, match="deeper than 32"):
        parse_body(b"[" * 100_000)  # refused before parsing: no recursion to exhaust


def test_not_utf8_is_refused() -> None:
    with pytest.raises(BodyRefused, match="not UTF-8"):
        parse_body("\u00e9".encode("latin-1"))
