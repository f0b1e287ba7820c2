"""The domain pool (corporate, IDN and non-APAC domains) and the local parts of mailboxes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .sampling import _choice, _objects, _texts, _top_k
from .vocabulary import (
    _APAC_COUNTRIES,
    _BRAND_WORDS,
    _FIRST,
    _INDUSTRY_WORDS,
    _LAST,
    _LEGAL_SUFFIX,
    _ROLES,
)


def _corporate_locals(rng: np.random.Generator, size: int) -> np.ndarray:
    """Local parts of work addresses: first.last, first, flast or a role, some with digits."""
    vocab = _objects(
        [f"{f}.{v}" for f in _FIRST for v in _LAST]
        + list(_FIRST)
        + [f"{f[0]}{v}" for f in _FIRST for v in _LAST]
        + list(_ROLES)
    )
    people = len(_FIRST) * len(_LAST)
    shape = rng.random(size)
    index = np.where(
        shape < 0.55,
        rng.integers(0, people, size),
        np.where(
            shape < 0.70,
            people + rng.integers(0, len(_FIRST), size),
            np.where(
                shape < 0.80,
                people + len(_FIRST) + rng.integers(0, people, size),
                2 * people + len(_FIRST) + rng.integers(0, len(_ROLES), size),
            ),
        ),
    )
    local = vocab[index]
    numbered = np.flatnonzero(rng.random(size) < 0.1)
    local[numbered] = local[numbered] + _texts(rng.integers(1, 100, len(numbered)))
    return local


def _free_locals(rng: np.random.Generator, size: int) -> np.ndarray:
    """Local parts of personal mailboxes: name plus digits, or name plus birth year."""
    with_digits = _objects(
        [f"{f}{sep}{v}" for f in _FIRST for sep in (".", "_", "") for v in _LAST]
    )
    with_year = _objects([f"{f}{year}" for f in _FIRST for year in range(1970, 2006)])
    local = with_year[rng.integers(0, len(with_year), size)]
    numbered = np.flatnonzero(rng.random(size) < 0.5)
    local[numbered] = with_digits[rng.integers(0, len(with_digits), len(numbered))] + _texts(
        rng.integers(1, 10_000, len(numbered))
    )
    return local


@dataclass
class _Pool:
    """All email/website domains: canonical (punycode) text, display text, metadata."""

    ascii: np.ndarray  # canonical lower-case punycode form
    display: np.ndarray  # what a person types: Unicode for IDNs, else the same as ascii
    country: np.ndarray
    name: np.ndarray
    industry: np.ndarray
    idn_count: int  # [0, idn_count) are IDNs
    tenant_start: int  # [tenant_start, extra_start): ASCII APAC domains tenants use
    extra_start: int  # [extra_start, row_start): APAC domains no tenant email uses
    row_start: int  # [row_start, len): EMEA/AMER domains


def _ascii_domains(
    rng: np.random.Generator, size: int, suffixes: Sequence[tuple[str, str, int]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``size`` distinct brand+industry domains under ``suffixes`` (weighted), with metadata."""
    n_brand, n_kind, n_suffix = len(_BRAND_WORDS), len(_INDUSTRY_WORDS), len(suffixes)
    base = n_brand * n_kind * n_suffix
    replicas = max(1, math.ceil(size * 1.05 / (0.6 * base)))
    suffix_weight = np.log(np.array([w for _, _, w in suffixes], dtype=float))
    candidate = np.arange(base * replicas, dtype=np.int64)
    replica, rest = np.divmod(candidate, base)
    suffix_index = rest % n_suffix
    log_weights = suffix_weight[suffix_index] - 0.4 * replica
    chosen = _top_k(rng, log_weights, min(len(candidate), size + size // 20 + 16))
    replica, rest = np.divmod(chosen, base)
    brand, rest = np.divmod(rest, n_kind * n_suffix)
    kind, suffix_index = np.divmod(rest, n_suffix)
    brands, kinds = _objects(_BRAND_WORDS), _objects([w for w, _ in _INDUSTRY_WORDS])
    suffix_text = _objects(["." + s for s, _, _ in suffixes])
    tail = np.where(replica > 0, _texts(replica + 1), "").astype(object)
    text = brands[brand] + kinds[kind] + tail + suffix_text[suffix_index]
    unique = ~pd.Index(text).duplicated()
    keep = np.flatnonzero(unique)[:size]
    if len(keep) < size:  # pragma: no cover - the candidate space is sized to avoid this
        raise RuntimeError("domain vocabulary exhausted")
    brand, kind, suffix_index, tail = brand[keep], kind[keep], suffix_index[keep], tail[keep]
    fixed_country = _objects([c for _, c, _ in suffixes])[suffix_index]
    random_country = _choice(rng, _APAC_COUNTRIES, len(keep))
    country = np.where(fixed_country == "", random_country, fixed_country).astype(object)
    titles = _objects([w.title() for w in _BRAND_WORDS])
    kind_titles = _objects([w.title() for w, _ in _INDUSTRY_WORDS])
    legal = _objects([_LEGAL_SUFFIX[c] for c in country.tolist()])
    name = titles[brand] + " " + kind_titles[kind] + " " + legal
    industry = _objects([i for _, i in _INDUSTRY_WORDS])[kind]
    return text[keep], country, name, industry
