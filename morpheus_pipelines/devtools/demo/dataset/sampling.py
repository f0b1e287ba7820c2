"""Vectorised sampling helpers: object arrays, weighted draws, exact allocations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import idna
import numpy as np
import pandas as pd


def _objects(values: Sequence[Any]) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    array[:] = list(values)
    return array


def _texts(numbers: np.ndarray) -> np.ndarray:
    """Decimal text of an integer array, as an object array."""
    return _objects(list(map(str, numbers.tolist())))


def _counts(size: int, weights: Sequence[float], minimum: Sequence[int] | None = None) -> list[int]:
    """Split ``size`` into integer parts proportional to ``weights`` (with per-part minimums).

    The first part absorbs the rounding, so it should be the largest.
    """
    total = float(sum(weights))
    counts = [round(size * w / total) for w in weights]
    if minimum is not None:
        counts = [max(c, m) for c, m in zip(counts, minimum, strict=True)]
    counts[0] += size - sum(counts)
    if counts[0] < 0:
        raise ValueError("minimum counts exceed the size")
    return counts


def _allocate(rng: np.random.Generator, counts: Sequence[int]) -> np.ndarray:
    """Exactly ``counts[k]`` cells of code ``k``, in random order."""
    codes = np.repeat(np.arange(len(counts), dtype=np.int8), counts)
    rng.shuffle(codes)
    return codes


def _choice(
    rng: np.random.Generator,
    values: Sequence[Any],
    size: int,
    weights: Sequence[float] | None = None,
) -> np.ndarray:
    """``size`` draws from ``values`` (optionally weighted), as an object array."""
    p = None if weights is None else _normalised(weights)
    return _objects(values)[rng.choice(len(values), size=size, p=p)]


def _top_k(rng: np.random.Generator, log_weights: np.ndarray, k: int) -> np.ndarray:
    """Weighted sampling of ``k`` distinct positions without replacement (Gumbel top-k)."""
    k = min(k, len(log_weights))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    keys = log_weights + rng.gumbel(size=len(log_weights))
    chosen = np.argpartition(-keys, k - 1)[:k]
    return chosen[np.argsort(-keys[chosen], kind="stable")]


def _upper(text: str) -> str:
    """Upper case that keeps the value's meaning: ``"straße".upper()`` is ``"STRASSE"``, a
    different domain, so such text stays as it is."""
    upper = text.upper()
    return upper if upper.lower() == text.lower() else text


def _normalised(weights: Sequence[float]) -> np.ndarray:
    p = np.asarray(weights, dtype=float)
    return p / p.sum()


def _isin(values: np.ndarray, items: Sequence[Any] | frozenset[Any]) -> np.ndarray:
    """Element-wise membership that tolerates ``None`` cells (hash based, unlike ``np.isin``)."""
    return pd.Series(values, dtype=object).isin(list(items)).to_numpy(dtype=bool)


def _punycode(domain: str) -> str:
    return idna.encode(domain, uts46=True, transitional=False).decode("ascii")


def _iso_z(micros: np.ndarray) -> list[str]:
    """HubSpot-style timestamps (``2026-07-01T03:04:05.678Z``)."""
    millis = np.asarray(micros, dtype=np.int64) // 1000
    return [f"{text}Z" for text in np.datetime_as_string(millis.astype("datetime64[ms]")).tolist()]
