"""What a tenant's routing decision depends on, and which tenants a change of the rules'
inputs affects (docs/pipeline.md, "Incremental routing").

A tenant's decision is a function of two things:

* **its own inputs** — its candidate row and its enrichment; the database compares the
  numbers of their versions with those the tenant was last decided from
  (``store.routing_decision.unchanged_inputs``);
* **the rules' inputs** — the HubSpot snapshot, the APAC Sales list and the forced ids, each
  of which a tenant consults only through a handful of *keys*: its normalised id (portal id
  and forced id), its custom id (account id), the roots of its email domain and official
  website, its normalised name (the name hint) and its normalised Sales owner email.

:class:`RuleInputs` records, per kind of key, what the rules answer for every key they know
(the company owning a snapshot key, or :data:`~morpheus_pipelines.tenants.rules.matching.AMBIGUOUS`;
membership of the Sales list and of the forced ids). Between two days, the keys whose answer
differs are exactly the keys through which a tenant's decision can change
(:func:`changed_keys`); a tenant none of whose keys changed, and whose own inputs did not
change, is decided exactly as the day before. Anything else that can change any tenant's
decision — the rules' code (:data:`ROUTING_RULES_VERSION`), the free/disposable domain lists
and the public-suffix list matching uses, whether HubSpot matching is used at all, whether the
snapshot has a sync id — is the *regime*; a new regime routes everyone.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from morpheus_pipelines.platform.text.columns import normalise_emails, normalise_identifiers
from morpheus_pipelines.platform.text.email_domain_class import CORPORATE, classifier_version
from morpheus_pipelines.platform.text.normalise import normalise_email, normalise_identifier
from morpheus_pipelines.tenants.rules.matching import PREPARED_FORMAT, SnapshotIndex

# Bump when a change to rules.matching or rules.routing can change a decision for the same
# inputs: the next run then routes every tenant once.
ROUTING_RULES_VERSION = "2026-12-01.1"

SNAPSHOT_KINDS = ("portal", "account", "domain", "name")
KINDS = (*SNAPSHOT_KINDS, "sales", "forced")
MEMBER = "1"

# The decision-record column holding each kind's key of a tenant (a kind may use two).
KEY_COLUMNS: dict[str, tuple[str, ...]] = {
    "portal": ("portal_key",),
    "account": ("account_key",),
    "domain": ("email_root_key", "website_root_key"),
    "name": ("name_key",),
    "sales": ("sales_key",),
    "forced": ("portal_key",),
}
TENANT_KEY_COLUMNS = (
    "portal_key",
    "account_key",
    "email_root_key",
    "website_root_key",
    "name_key",
    "sales_key",
)


@dataclass(frozen=True)
class RuleInputs:
    """The rules' inputs of one routing run, as answers per key (see module docstring)."""

    regime: str
    answers: Mapping[str, Mapping[str, str]]

    @functools.cached_property
    def digest(self) -> str:
        return hashlib.sha256(self.to_json().encode()).hexdigest()

    def to_json(self) -> str:
        return self._json

    @functools.cached_property
    def _json(self) -> str:
        return json.dumps(
            {"regime": self.regime, "answers": self.answers}, sort_keys=True, ensure_ascii=False
        )

    @classmethod
    def from_json(cls, text: str) -> RuleInputs:
        data = json.loads(text)
        inputs = cls(regime=data["regime"], answers=data["answers"])
        # The text read is their JSON: recording them again sends it back instead of
        # serialising every key (docs/decisions/0061). Cached, not a field, so a copy with
        # other answers cannot take the text along.
        inputs.__dict__["_json"] = text
        return inputs


def rule_inputs(
    index: SnapshotIndex | None,
    *,
    snapshot_usable: bool,
    sync_id_known: bool,
    sales_emails: frozenset[str],
    forced_ids: frozenset[str],
) -> RuleInputs:
    """The rules' inputs of a run; ``index`` is the prepared snapshot (``None`` when it is not
    used: then no tenant is matched and the regime says so)."""
    answers: dict[str, dict[str, str]] = {kind: {} for kind in KINDS}
    usable = snapshot_usable and index is not None
    if usable:
        assert index is not None
        answers["portal"] = index.portal_ids.meaning()
        answers["account"] = index.account_ids.meaning()
        answers["domain"] = index.domain_roots.meaning()
        answers["name"] = index.company_names.meaning()
    for email in sales_emails:
        key = normalise_email(email)
        if key is not None:
            answers["sales"][key] = MEMBER
    for tenant_id in forced_ids:
        key = normalise_identifier(tenant_id)
        if key is not None:
            answers["forced"][key] = MEMBER
    regime = json.dumps(
        {
            "rules": ROUTING_RULES_VERSION,
            # Matching classifies email and website domains and takes their registrable
            # roots: other domain lists or another public-suffix list may match differently.
            "domain_lists": classifier_version(),
            "public_suffix_list": _package_version("tldextract"),
            "hubspot_matching": usable,
            # Bucket rows are rewritten when the snapshot's sync id appears or disappears.
            "sync_id_known": sync_id_known,
        },
        sort_keys=True,
    )
    return RuleInputs(regime=regime, answers=answers)


def snapshot_preparation(normalisation: str) -> str:
    """What else than the snapshot's content a prepared snapshot depends on: the rules' code,
    the ``normalisation`` of ids, domains and their roots (``platform.versions``), and the
    prepared document's format. A prepared snapshot kept under another preparation is
    prepared again."""
    return json.dumps(
        {"rules": ROUTING_RULES_VERSION, "normalisation": normalisation, "format": PREPARED_FORMAT},
        sort_keys=True,
    )


def _package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def changed_keys(before: RuleInputs, after: RuleInputs) -> dict[str, frozenset[str]] | None:
    """Per decision-record key column, the keys whose answer differs between two runs; None
    when the regime changed (every tenant is affected)."""
    if before.regime != after.regime:
        return None
    changed: dict[str, set[str]] = {column: set() for column in TENANT_KEY_COLUMNS}
    for kind in KINDS:
        old = before.answers.get(kind, {})
        new = after.answers.get(kind, {})
        if old == new:
            continue
        keys = {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}
        for column in KEY_COLUMNS[kind]:
            changed[column] |= keys
    return {column: frozenset(keys) for column, keys in changed.items()}


def tenant_keys(tenants: pd.DataFrame, matches: pd.DataFrame | None) -> pd.DataFrame:
    """Each tenant's keys (:data:`TENANT_KEY_COLUMNS`), aligned with ``tenants``.

    ``matches`` is ``match_tenants``' output for the same rows, or None when the snapshot was
    not used (then the snapshot-only keys are None: a regime change re-routes everyone
    anyway). The email root is a key only when the domain is corporate, as in matching."""

    def column(values: object) -> pd.Series:
        return pd.Series(values, index=tenants.index, dtype=object)

    none = column([None] * len(tenants))
    if matches is None:
        email_root = website_root = name = none
    else:
        corporate = (matches["email_domain_class"] == CORPORATE).to_numpy()
        email_root = column(np.where(corporate, matches["email_domain_root"].to_numpy(), None))
        website_root = column(matches["website_root"].to_numpy(dtype=object))
        name = column(matches["name_key"].to_numpy(dtype=object))
    return pd.DataFrame(
        {
            "portal_key": column(normalise_identifiers(tenants["tenant_id"]).to_numpy()),
            "account_key": column(normalise_identifiers(tenants["custom_id"]).to_numpy()),
            "email_root_key": email_root,
            "website_root_key": website_root,
            "name_key": name,
            "sales_key": column(normalise_emails(tenants["sales_owner_email"]).to_numpy()),
        },
        index=tenants.index,
    )
