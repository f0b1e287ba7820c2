"""The rules' inputs as answers per key, and which keys a change touches
(rules/routing_inputs.py; docs/pipeline.md, "Incremental routing")."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from morpheus_pipelines.tenants.rules import routing_inputs
from morpheus_pipelines.tenants.rules.matching import AMBIGUOUS, match_tenants, prepare_snapshot
from morpheus_pipelines.tenants.rules.routing_inputs import (
    RuleInputs,
    changed_keys,
    rule_inputs,
    snapshot_preparation,
    tenant_keys,
)
from tests.support.incremental import snapshot_frame


def snapshot(*companies: dict) -> pd.DataFrame:
    return snapshot_frame(list(companies))


def inputs(frame: pd.DataFrame | None, *, sales=(), forced=(), usable=True) -> RuleInputs:
    return rule_inputs(
        prepare_snapshot(frame) if frame is not None else None,
        snapshot_usable=usable,
        sync_id_known=True,
        sales_emails=frozenset(sales),
        forced_ids=frozenset(forced),
    )


ACME = {"hubspot_company_id": "1", "domain_root": "acme.com", "name": "Acme", "portal_id": "t-1"}
BETA = {"hubspot_company_id": "2", "domain_root": "beta.co.jp", "account_id": "ACC-2"}


def test_a_new_company_touches_exactly_its_keys() -> None:
    before = inputs(snapshot(ACME))
    after = inputs(snapshot(ACME, BETA))
    changed = changed_keys(before, after)
    assert changed is not None
    assert changed["email_root_key"] == changed["website_root_key"] == {"beta.co.jp"}
    assert changed["account_key"] == {"ACC-2"}
    assert changed["portal_key"] == changed["sales_key"] == frozenset()


def test_a_key_that_becomes_shared_is_changed_for_both_owners_tenants() -> None:
    twin = {"hubspot_company_id": "3", "domain_root": "acme.com"}
    after = inputs(snapshot(ACME, twin))
    assert after.answers["domain"]["acme.com"] == AMBIGUOUS
    changed = changed_keys(inputs(snapshot(ACME)), after)
    assert changed is not None and changed["email_root_key"] == {"acme.com"}


def test_the_same_inputs_change_nothing_and_survive_storage() -> None:
    before = inputs(snapshot(ACME, BETA), sales={"Rep@Corp.com "}, forced={"t-9"})
    text = before.to_json()
    stored = RuleInputs.from_json(text)
    assert stored == before and stored.digest == before.digest
    # Read back, they are the text they were read from: recording them again needs no
    # serialisation. A copy with other answers is serialised anew.
    assert stored.to_json() is text
    other = dataclasses.replace(stored, answers={**stored.answers, "forced": {}})
    assert other.to_json() != text
    assert other.to_json() == RuleInputs(other.regime, other.answers).to_json()
    changed = changed_keys(
        stored, inputs(snapshot(BETA, ACME), sales={"rep@corp.com"}, forced={"t-9"})
    )
    assert changed is not None and not any(changed.values())


def test_sales_and_forced_changes_touch_their_keys() -> None:
    changed = changed_keys(
        inputs(snapshot(ACME), sales={"a@corp.com"}, forced={"t-1"}),
        inputs(snapshot(ACME), sales={"b@corp.com"}, forced={"t-2"}),
    )
    assert changed is not None
    assert changed["sales_key"] == {"a@corp.com", "b@corp.com"}
    assert changed["portal_key"] == {"t-1", "t-2"}


def test_a_new_regime_routes_everyone(monkeypatch) -> None:
    usable = inputs(snapshot(ACME))
    assert changed_keys(usable, inputs(None, usable=False)) is None
    monkeypatch.setattr(routing_inputs, "classifier_version", lambda: "other-lists")
    assert changed_keys(usable, inputs(snapshot(ACME))) is None
    before = inputs(snapshot(ACME))
    monkeypatch.setattr(routing_inputs, "ROUTING_RULES_VERSION", "next")
    assert changed_keys(before, inputs(snapshot(ACME))) is None


def test_a_prepared_snapshot_is_of_the_rules_the_normalisation_and_the_format(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keys = {snapshot_preparation("normalised")}
    assert snapshot_preparation("normalised") in keys
    keys.add(snapshot_preparation("normalised otherwise"))
    monkeypatch.setattr(routing_inputs, "ROUTING_RULES_VERSION", "next")
    keys.add(snapshot_preparation("normalised"))
    monkeypatch.setattr(routing_inputs, "PREPARED_FORMAT", 2)
    keys.add(snapshot_preparation("normalised"))
    assert len(keys) == 4


def test_tenant_keys_are_the_keys_matching_looks_up() -> None:
    tenants = pd.DataFrame(
        {
            "tenant_id": [" t-1 ", "t-2"],
            "custom_id": ["ACC-2", None],
            "email": ["ops@shop.acme.com", "me@gmail.com"],
            "official_website": ["https://www.beta.co.jp/x", None],
            "name": ["ACME Inc.", None],
            "sales_owner_email": [" Rep@Corp.com", None],
        }
    )
    keys = tenant_keys(tenants, match_tenants(tenants, prepare_snapshot(snapshot(ACME, BETA))))
    assert keys.iloc[0].to_dict() == {
        "portal_key": "t-1",
        "account_key": "ACC-2",
        "email_root_key": "acme.com",
        "website_root_key": "beta.co.jp",
        "name_key": "acme",
        "sales_key": "rep@corp.com",
    }
    # Free mail never matches, so its root is no key; missing values are None.
    assert keys.iloc[1].to_dict() == {
        "portal_key": "t-2",
        "account_key": None,
        "email_root_key": None,
        "website_root_key": None,
        "name_key": None,
        "sales_key": None,
    }
    assert tenant_keys(tenants, None)["email_root_key"].isna().all()
