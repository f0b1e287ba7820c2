"""API key format and comparison (pure functions)."""

from __future__ import annotations

import uuid

from morpheus_pipelines.intake.budget import RequestBudget
from morpheus_pipelines.intake.keys import KeyCache, key_hash, key_id_of, new_key, same_hash


def test_a_key_names_its_id_and_only_its_whole_hash_matches() -> None:
    key_id = uuid.uuid4()
    key = new_key(key_id)
    assert key.startswith(f"mk_{key_id.hex}_") and len(key) == 3 + 32 + 1 + 43
    assert key_id_of(key) == key_id
    assert same_hash(key_hash(key), key_hash(key))
    assert not same_hash(key_hash(key), key_hash(key[:-1] + "x"))
    assert new_key(key_id) != key  # the secret is random


def test_malformed_keys_name_no_id() -> None:
    for presented in ("", "mk_", "mk_abc_def", f"xx_{uuid.uuid4().hex}_s", f"mk_{'g' * 32}_s"):
        assert key_id_of(presented) is None, presented
    assert key_id_of(f"mk_{uuid.uuid4().hex}_") is None  # no secret


def test_the_key_cache_forgets_after_its_ttl() -> None:
    now = [0.0]
    cache = KeyCache(1.0, clock=lambda: now[0])
    cache.put("k", None)
    assert cache.get("k") == (True, None)
    now[0] = 1.5
    assert cache.get("k") == (False, None)


def test_the_budget_refills_and_says_how_long_to_wait() -> None:
    now = [0.0]
    budget = RequestBudget(60, clock=lambda: now[0])  # one a second
    assert all(budget.take("a") == 0 for _ in range(60))
    assert 0.99 < budget.take("a") <= 1.0
    assert budget.take("b") == 0  # another key has its own bucket
    now[0] = 1.0
    assert budget.take("a") == 0
