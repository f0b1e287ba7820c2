"""Reading a request body as JSON that the warehouse can store (docs/security.md, "Bodies").

``json.loads`` accepts more than PostgreSQL's ``jsonb`` and the rest of the service can hold:
``NaN``/``Infinity`` and numbers that overflow a float, lone surrogates (``"\\ud800"``), NUL
characters, and nesting deep enough to exhaust the interpreter's stack. Each of these is
refused here with a :class:`BodyRefused` naming where in the body it is, before anything
touches the database.

Depth is measured before parsing, on the text with its strings removed, so a body of ten
thousand ``[`` costs one regular-expression pass and a count, never a recursion; the checks
after parsing walk the value with an explicit stack for the same reason. Most bodies need
neither: one with at most ``max_depth`` opening brackets cannot nest deeper, and NUL and
surrogates can only arrive as ``\\u`` escapes (strict UTF-8 and JSON refuse them raw), so
the walk runs only for a body with such an escape or a non-finite number.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Any

MAX_DEPTH = 32

# A JSON string literal, escapes included; possessive, so it never backtracks.
_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_BRACKETS = re.compile(r"[^\[\]{}]+")
_SURROGATE = re.compile("[\ud800-\udfff]")


class BodyRefused(ValueError):
    """A body the service will not take; ``field`` is where in it (``body`` for the whole)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class _NonFinite:
    """What the parser leaves where the body had ``NaN``, ``Infinity`` or an overflowing
    number: found, with its place, by the walk after parsing."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _Parse:
    """One parse's hooks, remembering whether any number was not finite."""

    def __init__(self) -> None:
        self.non_finite = False

    def constant(self, text: str) -> _NonFinite:
        self.non_finite = True
        return _NonFinite(text)

    def float(self, text: str) -> float | _NonFinite:
        value = float(text)
        return value if math.isfinite(value) else self.constant(text)


def nesting_depth(text: str) -> int:
    """How deeply arrays and objects nest in the JSON ``text`` (strings do not count)."""
    brackets = _BRACKETS.sub("", _STRING.sub("", text))
    if not brackets:
        return 0
    return max(accumulate(1 if ch in "[{" else -1 for ch in brackets))


def parse_body(raw: bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of ``raw``, or :class:`BodyRefused`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BodyRefused("body", "the body is not UTF-8") from None
    if text.count("[") + text.count("{") > max_depth and nesting_depth(text) > max_depth:
        raise BodyRefused("body", f"the body nests deeper than {max_depth} levels")
    hooks = _Parse()
    try:
        value = json.loads(text, parse_constant=hooks.constant, parse_float=hooks.float)
    except (ValueError, RecursionError):
        raise BodyRefused("body", "the body is not valid JSON") from None
    if hooks.non_finite or "\\u" in text:
        _check_values(value)
    return value


def _check_values(value: Any) -> None:
    """Refuse non-finite numbers, NUL and lone surrogates anywhere in ``value``."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                child_path = _join(path, key)
                _check_text(child_path, key, what="a key")
                stack.append((child_path, child))
        elif isinstance(item, list):
            stack.extend((_join(path, str(index)), child) for index, child in enumerate(item))
        elif isinstance(item, str):
            _check_text(path or "body", item, what="text")
        elif isinstance(item, _NonFinite):
            raise BodyRefused(
                path or "body", f"{item.text} is not a finite number; JSON cannot store it"
            )


def _join(path: str, name: str) -> str:
    # A key is echoed in the refusal: one the answer could not encode is shown escaped.
    if not name.isprintable() or _SURROGATE.search(name):
        name = json.dumps(name)[1:-1]
    return f"{path}.{name}" if path else name


def _check_text(field: str, text: str, *, what: str) -> None:
    if "\x00" in text:  # PostgreSQL text cannot hold it: refuse, do not fail later
        raise BodyRefused(field, f"{what} may not contain NUL (\\u0000)")
    if _SURROGATE.search(text):
        raise BodyRefused(field, f"{what} may not contain a lone UTF-16 surrogate")
