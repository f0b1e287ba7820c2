"""HubSpot target-account matching (docs/pipeline.md).

A tenant is a Target Account when one of these steps, tried in order, finds a company of the
current snapshot of HubSpot list 19544; the first step that finds one wins:

1. ``portal_id``         the tenant id equals a company's ``portal_id``;
2. ``account_id``        the tenant's non-empty ``custom_id`` equals a company's ``account_id``;
3. ``email_domain``      the registrable root of the tenant's email domain equals a company's
                         domain, website or additional-domain root — only when the email domain is
                         corporate (free and disposable mail never takes part);
4. ``official_website``  the registrable root of the ``official_website`` found by Domain
                         Intelligence equals such a root — again only when it is not a
                         free/disposable mail domain.

A key (id or root) that belongs to more than one company is *ambiguous*: it never matches, the
step falls through to the next one, and the tenant is flagged with ``ambiguous_match`` and the
first ambiguous key met, for investigation. The same root listed twice by one company is not
ambiguous. Empty values never match. The company name and alias only produce
``name_hint_company_id``, a logged hint that never makes a tenant a Target Account.

Matching is set-based: the snapshot is turned once into hash indexes of unique keys
(:func:`prepare_snapshot`), and each step is one hash look-up of a whole column of tenants
(:func:`match_tenants`), so a million tenants cost a handful of vectorised look-ups.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from morpheus_pipelines.platform.text.columns import (
    distinct_value_codes,
    email_domain_codes,
    map_unique_values,
    normalise_identifiers,
    object_array,
    registrable_roots,
)
from morpheus_pipelines.platform.text.email_domain_class import CORPORATE, classify_canonical_domain
from morpheus_pipelines.platform.text.normalise import (
    registrable_root,
    root_of_canonical_host,
    split_additional_domains,
)
from morpheus_pipelines.tenants.rules.vocabulary import MatchMethod, values

__all__ = [
    "HUBSPOT_MATCH_METHODS",
    "MATCH_COLUMNS",
    "SNAPSHOT_COLUMNS",
    "TENANT_COLUMNS",
    "KeyLookup",
    "SnapshotIndex",
    "match_tenants",
    "normalise_company_name",
    "prepare_snapshot",
]

PORTAL_ID = MatchMethod.PORTAL_ID.value
ACCOUNT_ID = MatchMethod.ACCOUNT_ID.value
EMAIL_DOMAIN = MatchMethod.EMAIL_DOMAIN.value
OFFICIAL_WEBSITE = MatchMethod.OFFICIAL_WEBSITE.value
HUBSPOT_MATCH_METHODS: tuple[str, ...] = values(MatchMethod)

SNAPSHOT_COLUMNS: tuple[str, ...] = (
    "hubspot_company_id",
    "portal_id",
    "account_id",
    "domain_root",
    "website_domain_root",
    "additional_domain_roots",
)
"""Snapshot columns :func:`prepare_snapshot` requires (``name``/``account_alias`` optional)."""

TENANT_COLUMNS: tuple[str, ...] = ("tenant_id", "custom_id", "email", "official_website")
"""Tenant columns :func:`match_tenants` requires (``name`` optional)."""

MATCH_COLUMNS: tuple[str, ...] = (
    "hubspot_company_id",
    "hubspot_match_method",
    "email_domain",
    "email_domain_class",
    "email_domain_root",
    "website_root",
    "ambiguous_match",
    "ambiguous_key",
    "name_hint_company_id",
    "name_key",
)
"""Columns of the frame returned by :func:`match_tenants`, in order."""

AMBIGUOUS = "*"
"""What :meth:`KeyLookup.meaning` gives a key that two or more companies share."""


# Bump when :meth:`SnapshotIndex.to_json` writes another document.
PREPARED_FORMAT = 1
_LOOKUP_NAMES = ("portal_ids", "account_ids", "domain_roots", "company_names")


@dataclass(frozen=True, eq=False)
class KeyLookup:
    """A hash index from a key (id, root or name) to the single company that owns it.

    ``owners`` holds only keys owned by exactly one company; keys owned by two or more
    companies are in ``ambiguous_keys`` instead and are never found.
    """

    owners: Mapping[str, str]
    ambiguous_keys: frozenset[str]

    @classmethod
    def from_pairs(cls, keys: pd.Series, company_ids: pd.Series) -> KeyLookup:
        """Build the index from parallel (key, company) columns; missing keys are ignored."""
        pairs = pd.DataFrame(
            {
                "key": pd.Series(keys.to_numpy(dtype=object), dtype=object),
                "company": pd.Series(company_ids.to_numpy(dtype=object), dtype=object),
            }
        )
        # Repeating a key within one company (domain == website root, say) is not ambiguity,
        # so duplicate pairs are removed before companies are counted per key.
        pairs = pairs.dropna().drop_duplicates()
        companies_per_key = pairs.groupby("key", sort=False)["company"].transform("size")
        owned_once = (companies_per_key == 1).to_numpy()
        unique = pairs[owned_once]
        return cls(
            owners=dict(zip(unique["key"], unique["company"], strict=True)),
            ambiguous_keys=frozenset(pairs.loc[~owned_once, "key"]),
        )

    def find(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Look up a column of keys at once (``None`` keys are never found).

        Returns ``(company_ids, found, ambiguous)``: the owning company per row (``None`` when
        not found), whether it was found, and whether the key is ambiguous.
        """
        owner_of = self.owners.get
        # A dictionary probe per key is the fastest hash join available on Python strings
        # (pandas' object hash tables were slower here).
        companies = object_array([owner_of(key) for key in keys])
        found = ~pd.isna(companies)
        if self.ambiguous_keys:
            ambiguous_keys = self.ambiguous_keys
            ambiguous = np.fromiter(
                (key in ambiguous_keys for key in keys), dtype=bool, count=len(keys)
            )
        else:
            ambiguous = np.zeros(len(keys), dtype=bool)
        return companies, found, ambiguous

    def meaning(self) -> dict[str, str]:
        """What a look-up answers for every key it knows: the owning company, or
        :data:`AMBIGUOUS`. Two lookups with the same meaning match every tenant alike, so the
        keys whose meaning differs are exactly the tenants a snapshot change can affect."""
        return {**self.owners, **dict.fromkeys(self.ambiguous_keys, AMBIGUOUS)}


@dataclass(frozen=True)
class SnapshotIndex:
    """The current HubSpot snapshot prepared for matching (kept as :meth:`to_json` for as
    long as the snapshot's matching columns and the rules do not change).

    ``domain_roots`` indexes the domain, website and additional-domain roots of all companies
    together, so a root shared by two companies through any of these columns is ambiguous.
    """

    portal_ids: KeyLookup
    account_ids: KeyLookup
    domain_roots: KeyLookup
    company_names: KeyLookup
    company_count: int

    @property
    def ambiguous_domain_roots(self) -> frozenset[str]:
        """Roots that belong to more than one company and therefore never match."""
        return self.domain_roots.ambiguous_keys

    def to_json(self) -> str:
        """The index as a JSON document :meth:`from_json` reads back into an equal index, so
        a snapshot is prepared once for as long as its content does not change."""
        # Parallel lists, not objects: the standard library writes them several times faster.
        lookups = {
            name: {
                "keys": list(lookup.owners),
                "companies": list(lookup.owners.values()),
                "ambiguous": sorted(lookup.ambiguous_keys),
            }
            for name, lookup in self._lookups().items()
        }
        document = {"format": PREPARED_FORMAT, "company_count": self.company_count, **lookups}
        return json.dumps(document, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> SnapshotIndex:
        """The index :meth:`to_json` wrote; ``ValueError`` naming what is wrong with a
        document of another format or shape."""
        document = json.loads(text)
        if not isinstance(document, dict) or document.get("format") != PREPARED_FORMAT:
            raise ValueError(f"not a prepared snapshot of format {PREPARED_FORMAT}")
        count = document.get("company_count")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise ValueError("a prepared snapshot's company_count is not a count")
        return cls(
            **{name: _lookup_from(document.get(name), name) for name in _LOOKUP_NAMES},
            company_count=count,
        )

    def _lookups(self) -> dict[str, KeyLookup]:
        return {name: getattr(self, name) for name in _LOOKUP_NAMES}


def _lookup_from(part: object, name: str) -> KeyLookup:
    """One look-up of a prepared snapshot's document, its keys and companies checked to be
    text (they are compared with tenants' keys as they are)."""
    if not isinstance(part, dict):
        raise ValueError(f"a prepared snapshot has no {name}")
    keys, companies, ambiguous = (part.get(k) for k in ("keys", "companies", "ambiguous"))
    texts = (keys, companies, ambiguous)
    if not all(isinstance(t, list) and all(isinstance(v, str) for v in t) for t in texts):
        raise ValueError(f"a prepared snapshot's {name} is not lists of text")
    if len(keys) != len(companies):
        raise ValueError(f"a prepared snapshot's {name} has keys without companies")
    return KeyLookup(
        owners=dict(zip(keys, companies, strict=True)), ambiguous_keys=frozenset(ambiguous)
    )


_LEGAL_FORM_WORDS = frozenset(
    {
        "inc", "incorporated", "corp", "corporation", "co", "company", "ltd", "limited", "llc",
        "llp", "plc", "pte", "pty", "pvt", "private", "gmbh", "ag", "sa", "bv", "kk", "gk",
        "sdn", "bhd", "berhad", "tbk", "pt", "jsc", "group", "holdings",
    }
)  # fmt: skip
_CJK_LEGAL_FORMS = (
    "股份有限公司", "有限责任公司", "有限公司", "株式会社", "有限会社", "合同会社", "주식회사",
    "(주)", "유한회사",
)  # fmt: skip
_NAME_SEPARATORS = re.compile(r"[\W_]+")


def normalise_company_name(value: object) -> str | None:
    """Normalise a company or tenant name for the investigation hint (never for matching).

    Unicode-compatibility folded (full-width → ASCII), case-folded, common legal forms removed
    (``Pte. Ltd.``, ``株式会社``, ``(주)``, a leading ``PT``…), punctuation and spaces dropped:
    ``"ACME Pte. Ltd."`` and ``"acme"`` both give ``"acme"``. ``None`` when nothing is left.
    """
    if not isinstance(value, str):
        return None
    text = value if value.isascii() else unicodedata.normalize("NFKC", value)
    text = text.casefold()
    for legal_form in _CJK_LEGAL_FORMS:
        text = text.replace(legal_form, " ")
    words = [word for word in _NAME_SEPARATORS.split(text) if word]
    while words and words[-1] in _LEGAL_FORM_WORDS:
        words.pop()
    while words and words[0] in _LEGAL_FORM_WORDS:
        words.pop(0)
    return "".join(words) or None


def _require_columns(frame: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise ValueError(f"{what} is missing required columns: {', '.join(missing)}")


def _root_list(value: object) -> list[str]:
    """The cells of ``additional_domain_roots``: a list (JSON array) of roots, or None."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, str):
        # A JSON array read back as text, or (defensively) raw ``;``-separated domains.
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = value
        value = decoded if isinstance(decoded, list) else value
    return split_additional_domains(value)


def prepare_snapshot(snapshot_df: pd.DataFrame) -> SnapshotIndex:
    """Turn the ``apac_hubspot_target_accounts`` rows into the look-up indexes used for matching.

    Required columns: :data:`SNAPSHOT_COLUMNS`; ``name`` and ``account_alias`` are optional.
    Ids are normalised with :func:`~.normalise.normalise_identifier` and
    roots re-normalised with :func:`~.normalise.registrable_root` (a no-op
    for roots written by this package), so a hand-edited snapshot cannot smuggle in ``""`` or
    ``"WWW.Acme.com"`` as a key. An id or root shared by two or more companies is ambiguous.
    """
    _require_columns(snapshot_df, SNAPSHOT_COLUMNS, "HubSpot snapshot")
    company = normalise_identifiers(snapshot_df["hubspot_company_id"]).reset_index(drop=True)

    def identifier_lookup(column: str) -> KeyLookup:
        keys = normalise_identifiers(snapshot_df[column]).reset_index(drop=True)
        return KeyLookup.from_pairs(keys, company)

    root_keys: list[pd.Series] = []
    root_companies: list[pd.Series] = []
    for column in ("domain_root", "website_domain_root"):
        root_keys.append(registrable_roots(snapshot_df[column]).reset_index(drop=True))
        root_companies.append(company)
    additional_roots: list[str] = []
    additional_companies: list[object] = []
    for company_id, cell in zip(company, snapshot_df["additional_domain_roots"], strict=True):
        for domain in _root_list(cell):
            additional_roots.append(domain)
            additional_companies.append(company_id)
    root_keys.append(registrable_roots(pd.Series(additional_roots, dtype=object)))
    root_companies.append(pd.Series(additional_companies, dtype=object))

    name_keys: list[pd.Series] = []
    for column in ("name", "account_alias"):
        if column in snapshot_df.columns:
            names = map_unique_values(snapshot_df[column], normalise_company_name)
            name_keys.append(names.reset_index(drop=True))

    return SnapshotIndex(
        portal_ids=identifier_lookup("portal_id"),
        account_ids=identifier_lookup("account_id"),
        domain_roots=KeyLookup.from_pairs(
            pd.concat(root_keys, ignore_index=True), pd.concat(root_companies, ignore_index=True)
        ),
        company_names=KeyLookup.from_pairs(
            pd.concat(name_keys, ignore_index=True) if name_keys else pd.Series([], dtype=object),
            pd.concat([company] * len(name_keys), ignore_index=True)
            if name_keys
            else pd.Series([], dtype=object),
        ),
        company_count=int(company.nunique(dropna=True)),
    )


def match_tenants(tenants_df: pd.DataFrame, index: SnapshotIndex) -> pd.DataFrame:
    """Match a batch of tenants against the prepared snapshot.

    ``tenants_df`` needs :data:`TENANT_COLUMNS` (``tenant_id``, ``custom_id``, ``email``,
    ``official_website``) and may have ``name``. Returns a frame aligned with
    ``tenants_df.index`` with the columns :data:`MATCH_COLUMNS`:

    ``hubspot_company_id``   the matched company, or ``None``
    ``hubspot_match_method`` one of :data:`HUBSPOT_MATCH_METHODS`, or ``None`` when unmatched
    ``email_domain``         the normalised email domain (subdomains kept), or ``None``
    ``email_domain_class``   ``free`` / ``disposable`` / ``corporate`` / ``missing``
    ``email_domain_root``    registrable root of the email domain, or ``None``
    ``website_root``         registrable root of ``official_website``, or ``None``
    ``ambiguous_match``      bool: a step tried before the winning one (or all steps, when
                             unmatched) met an ambiguous id or root and skipped it
    ``ambiguous_key``        the first such ambiguous id or root, or ``None``
    ``name_hint_company_id`` the single company whose normalised name or alias equals the
                             tenant's normalised ``name`` — a hint for logs only, never a match
    ``name_key``             the tenant's normalised ``name``, or ``None``

    Text columns are ``object`` dtype with ``None`` for missing values.
    """
    _require_columns(tenants_df, TENANT_COLUMNS, "tenant batch")
    row_count = len(tenants_df)

    # Domain work happens once per distinct email host / website, then is spread back to rows
    # with an integer take; only the id look-ups touch every row in Python.
    email_codes, email_domain_slots = email_domain_codes(tenants_df["email"])
    email = _DomainEvidence.of(email_domain_slots, index.domain_roots)
    website_codes, website_roots = distinct_value_codes(
        tenants_df["official_website"], registrable_root
    )
    website = _DomainEvidence.of(website_roots, index.domain_roots)

    tenant_ids = normalise_identifiers(tenants_df["tenant_id"]).to_numpy()
    custom_ids = normalise_identifiers(tenants_df["custom_id"]).to_numpy()
    steps = (
        (PORTAL_ID, tenant_ids, *index.portal_ids.find(tenant_ids)),
        (ACCOUNT_ID, custom_ids, *index.account_ids.find(custom_ids)),
        (EMAIL_DOMAIN, *email.take(email_codes)),
        (OFFICIAL_WEBSITE, *website.take(website_codes)),
    )

    company_ids = np.full(row_count, None, dtype=object)
    methods = np.full(row_count, None, dtype=object)
    ambiguous_match = np.zeros(row_count, dtype=bool)
    ambiguous_key = np.full(row_count, None, dtype=object)
    undecided = np.ones(row_count, dtype=bool)
    for method, keys, found_companies, found, ambiguous in steps:
        first_ambiguity = undecided & ambiguous & ~ambiguous_match
        ambiguous_key[first_ambiguity] = keys[first_ambiguity]
        ambiguous_match |= undecided & ambiguous
        hit = undecided & found
        company_ids[hit] = found_companies[hit]
        methods[hit] = method
        undecided &= ~hit

    if "name" in tenants_df.columns:
        name_codes, names = distinct_value_codes(tenants_df["name"], normalise_company_name)
        name_hints = index.company_names.find(names)[0][name_codes]
        name_keys = names[name_codes]
    else:
        name_hints = np.full(row_count, None, dtype=object)
        name_keys = name_hints

    def column(values: np.ndarray) -> pd.Series:
        return pd.Series(values, index=tenants_df.index, dtype=object)

    return pd.DataFrame(
        {
            "hubspot_company_id": column(company_ids),
            "hubspot_match_method": column(methods),
            "email_domain": column(email_domain_slots[email_codes]),
            "email_domain_class": column(email.classes[email_codes]),
            "email_domain_root": column(email.roots[email_codes]),
            "website_root": column(website.roots[website_codes]),
            "ambiguous_match": pd.Series(ambiguous_match, index=tenants_df.index, dtype=bool),
            "ambiguous_key": column(ambiguous_key),
            "name_hint_company_id": column(name_hints),
            "name_key": column(name_keys),
        },
        index=tenants_df.index,
    )


@dataclass(frozen=True)
class _DomainEvidence:
    """Roots, classes and snapshot look-up results of the distinct values of a domain column."""

    roots: np.ndarray
    classes: np.ndarray
    keys: np.ndarray
    companies: np.ndarray
    found: np.ndarray
    ambiguous: np.ndarray

    @classmethod
    def of(cls, domains: np.ndarray, lookup: KeyLookup) -> _DomainEvidence:
        """Evidence for distinct canonical domains (email domains, or websites' roots)."""
        roots = object_array([root_of_canonical_host(domain) for domain in domains])
        # A personal mail domain never matches, whether it is the tenant's email domain or the
        # website Domain Intelligence returned (a tenant that typed "gmail.com" as its site).
        classes = object_array([classify_canonical_domain(domain) for domain in domains])
        keys = np.where(classes == CORPORATE, roots, None)
        return cls(roots, classes, keys, *lookup.find(keys))

    def take(self, codes: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per-row (keys, companies, found, ambiguous)."""
        return (
            self.keys[codes],
            self.companies[codes],
            self.found[codes],
            self.ambiguous[codes],
        )
