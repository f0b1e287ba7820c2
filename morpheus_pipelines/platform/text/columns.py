"""The normalisation of :mod:`.normalise` over a pandas column: each distinct value is
normalised once and the answers spread back, because a column of a million tenants holds far
fewer distinct domains, emails and ids than rows."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from morpheus_pipelines.platform.text.normalise import (
    CONTROL_CHARACTERS,
    canonical_host,
    normalise_email,
    normalise_identifier,
    registrable_root,
)


def object_array(values: list[object]) -> np.ndarray:
    """A 1-D ``object`` array of ``values``, even when the values are lists or tuples."""
    # Filled element by element so list-valued cells stay cells instead of becoming a 2-D array.
    array = np.empty(len(values), dtype=object)
    for position, value in enumerate(values):
        array[position] = value
    return array


def distinct_value_codes(
    values: pd.Series | np.ndarray | list[object], function: Callable[[object], object]
) -> tuple[np.ndarray, np.ndarray]:
    """Call ``function`` once per distinct value and say, per row, which result applies.

    Returns ``(codes, results)``: ``results[codes[i]]`` is ``function(values[i])``. Distinctness
    is dictionary equality (unhashable values get their own call). A plain dictionary beats
    ``pd.factorize`` + ``Index.get_indexer`` on Python strings here, measured.
    """
    memo: dict[object, int] = {}
    results: list[object] = []
    codes: list[int] = []
    record = codes.append
    cells = values.to_numpy(dtype=object) if isinstance(values, pd.Series) else values
    for value in cells.tolist() if isinstance(cells, np.ndarray) else cells:
        try:
            code = memo.get(value)
        except TypeError:  # unhashable cell
            record(len(results))
            results.append(function(value))
            continue
        if code is None:
            code = memo[value] = len(results)
            results.append(function(value))
        record(code)
    return np.fromiter(codes, dtype=np.intp, count=len(codes)), object_array(results)


def email_domain_codes(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised core of :func:`email_domain`: ``(codes, domains)`` with
    ``domains[codes[i]] == email_domain(series[i])``.

    Emails are nearly all distinct but their domains are not, so the work per row is only
    splitting off the host; each distinct host is canonicalised once. ``domains[0]`` is ``None``.
    """
    memo: dict[str, int] = {}
    domains: list[object] = [None]
    codes: list[int] = []
    record = codes.append
    host_of = canonical_host  # a local name: looked up once per call, not per value
    # Iterating a list is measurably faster than iterating an object ndarray.
    for value in series.to_numpy(dtype=object).tolist():
        code = 0
        if type(value) is str or isinstance(value, str):
            text = value.strip()
            at = text.rfind("@")
            # Same rule as email_domain: a last '@' preceded by a non-empty, control-free local
            # part. isprintable() on the whole text is a cheap pre-check that almost always
            # settles it (control characters are never printable).
            if at > 0 and (text.isprintable() or not CONTROL_CHARACTERS.search(text, 0, at)):
                host = text[at + 1 :]
                code = memo.get(host)
                if code is None:
                    code = memo[host] = len(domains)
                    domains.append(host_of(host))
        record(code)
    return np.fromiter(codes, dtype=np.intp, count=len(codes)), object_array(domains)


def map_unique_values(series: pd.Series, function: Callable[[object], object]) -> pd.Series:
    """Apply a scalar ``function`` to each *distinct* value of ``series`` and spread it back.

    The result is an ``object`` Series aligned with ``series.index`` holding exactly what
    ``function`` returned, so ``None`` stays ``None`` (not ``NaN``) for the database layer.
    """
    codes, results = distinct_value_codes(series, function)
    return pd.Series(results[codes], index=series.index, dtype=object)


def email_domains(series: pd.Series) -> pd.Series:
    """Vectorised :func:`email_domain`: an ``object`` Series of domains or ``None``."""
    codes, domains = email_domain_codes(series)
    return pd.Series(domains[codes], index=series.index, dtype=object)


def registrable_roots(series: pd.Series) -> pd.Series:
    """Vectorised :func:`registrable_root`: an ``object`` Series of roots or ``None``."""
    return map_unique_values(series, registrable_root)


def normalise_emails(series: pd.Series) -> pd.Series:
    """Vectorised :func:`normalise_email`: an ``object`` Series of emails or ``None``."""
    return map_unique_values(series, normalise_email)


def normalise_identifiers(series: pd.Series) -> pd.Series:
    """Vectorised :func:`normalise_identifier`: an ``object`` Series of identifiers or ``None``.

    Identifiers such as tenant ids are nearly all distinct, so this skips de-duplication and
    handles the common text case inline. (It also must not de-duplicate: ``1 == True`` for a
    dictionary, yet ``1`` is an identifier and ``True`` is not.)
    """
    values = series.to_numpy(dtype=object)
    # pd.isna settles the many empty cells (None / NaN in pandas' string columns) in C.
    missing = pd.isna(values)
    normalised = [
        None
        if is_missing
        else ((value.strip() or None) if type(value) is str else normalise_identifier(value))
        for value, is_missing in zip(values, missing.tolist(), strict=True)
    ]
    return pd.Series(object_array(normalised), index=series.index, dtype=object)
