"""API key format and comparison (pure functions)."""

from __future__ import annotations

import contextlib
import threading
import uuid

from morpheus_pipelines.crm.api import keys as keys_module
from morpheus_pipelines.crm.api.budget import MAX_BUCKETS, RequestBudget
from morpheus_pipelines.crm.api.keys import KeyDirectory, key_hash, key_id_of, new_key, same_hash


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


def _directory(loads: list[dict], now: list[float]) -> KeyDirectory:
    return KeyDirectory(lambda: loads.pop(0), 1.0, clock=lambda: now[0])


def test_the_key_directory_answers_from_its_last_load_until_its_ttl() -> None:
    subscription, key_id = uuid.uuid4(), uuid.uuid4()
    key = new_key(key_id)
    now = [0.0]
    directory = _directory([{key_id: (subscription, key_hash(key))}, {}], now)
    assert directory.due() and not directory.loaded
    directory.reload()
    assert directory.verify(key) == (key_id, subscription)
    assert directory.verify(key[:-1] + ("x" if key[-1] != "x" else "y")) is None
    assert directory.verify(new_key(uuid.uuid4())) is None  # unknown id
    assert directory.verify("not-a-key") is None
    now[0] = 1.5
    assert directory.due()
    directory.reload()  # the key was revoked meanwhile
    assert directory.verify(key) is None


def test_an_expired_directory_reloads_at_once() -> None:
    now = [0.0]
    directory = _directory([{}, {}], now)
    directory.reload()
    assert not directory.due()
    directory.expire()
    assert directory.due()


def test_unknown_and_wrong_secret_keys_take_the_same_comparison(monkeypatch) -> None:
    """Both paths compare a whole hash in constant time: an unknown id is compared with a
    stand-in hash, not answered early."""
    subscription, key_id = uuid.uuid4(), uuid.uuid4()
    key = new_key(key_id)
    now = [0.0]
    directory = _directory([{key_id: (subscription, key_hash(key))}], now)
    directory.reload()
    compared: list[tuple[str, str]] = []
    real = keys_module.same_hash
    monkeypatch.setattr(
        keys_module, "same_hash", lambda a, b: compared.append((a, b)) or real(a, b)
    )
    wrong_secret = f"mk_{key_id.hex}_{'x' * 43}"
    for presented in (wrong_secret, new_key(uuid.uuid4()), "garbage"):
        assert directory.verify(presented) is None
    assert len(compared) == 3
    assert all(len(stored) == 64 and len(given) == 64 for stored, given in compared)


def test_the_budget_refills_and_says_how_long_to_wait() -> None:
    now = [0.0]
    budget = RequestBudget(60, clock=lambda: now[0])  # one a second
    assert all(budget.take("a") == 0 for _ in range(60))
    assert 0.99 < budget.take("a") <= 1.0
    assert budget.take("b") == 0  # another key has its own bucket
    now[0] = 1.0
    assert budget.take("a") == 0


def test_wait_tells_the_time_to_a_token_without_taking_one() -> None:
    now = [0.0]
    budget = RequestBudget(60, clock=lambda: now[0])
    assert budget.wait("a") == 0
    assert all(budget.take("a") == 0 for _ in range(60))
    assert 0.99 < budget.wait("a") <= 1.0
    assert 0.99 < budget.wait("a") <= 1.0  # waiting took nothing
    now[0] = 1.0
    assert budget.wait("a") == 0


def test_the_budget_forgets_refilled_buckets_before_it_grows_past_its_bound() -> None:
    now = [0.0]
    budget = RequestBudget(60, clock=lambda: now[0])
    for index in range(MAX_BUCKETS):
        budget.take(f"old-{index}")
    budget.take("drained")
    now[0] = 2.0  # the old buckets have refilled since
    budget.take("new")
    assert len(budget._buckets) <= 3


def test_a_failed_load_is_tried_again_only_after_the_ttl() -> None:
    now = [0.0]
    attempts: list[float] = []

    def load() -> dict:
        attempts.append(now[0])
        raise ConnectionError("the database is away")

    directory = KeyDirectory(load, 1.0, clock=lambda: now[0])
    for _ in range(5):
        with contextlib.suppress(ConnectionError):
            directory.reload()
    assert attempts == [0.0] and not directory.loaded
    assert directory.due()  # no view yet: a caller still asks, and gets no new attempt
    now[0] = 1.5
    with contextlib.suppress(ConnectionError):
        directory.reload()
    assert attempts == [0.0, 1.5]


def test_a_caller_during_the_first_load_waits_for_it_instead_of_finding_no_keys() -> None:
    subscription, key_id = uuid.uuid4(), uuid.uuid4()
    key = new_key(key_id)
    loading, release = threading.Event(), threading.Event()

    def load() -> dict:
        loading.set()
        release.wait(10)
        return {key_id: (subscription, key_hash(key))}

    directory = KeyDirectory(load, 1.0)
    first = threading.Thread(target=directory.reload)
    first.start()
    assert loading.wait(10)
    assert directory.due()  # the load under way has not given a view yet
    second = threading.Thread(target=directory.reload)
    second.start()
    release.set()
    first.join(10)
    second.join(10)
    assert directory.verify(key) == (key_id, subscription)
