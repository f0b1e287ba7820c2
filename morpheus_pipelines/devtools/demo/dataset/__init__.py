"""Deterministic generator of a realistic APAC data set for ``morpheus demo``, benchmarks and tests.

Modules: ``builder`` (:func:`generate_dataset` and the order of the steps), ``tenants`` (the
source rows), ``companies`` (the HubSpot companies), ``planted`` (the planted matches and the
Domain Intelligence data), ``expectations`` (``truth``/``expected``), ``model``
(:class:`DemoDataset` and its serialisation), ``vocabulary``, ``domains`` and ``sampling``
(the fixed word lists, the domain pool and the numpy helpers).

:func:`generate_dataset` returns a :class:`DemoDataset` holding, for one partition day:

* ``tenants``: rows of the DevOps source table ``{MORPHEUS_SOURCE_SCHEMA}.tenants`` with exactly
  its columns (README, :data:`TENANT_COLUMNS`). Text columns are ``object`` dtype with
  ``None`` for NULL (so ``""`` and NULL stay distinct), ``seats``/``active_users_30d`` are
  nullable ``Int64``, ``created_at``/``last_active_at`` are tz-aware UTC.
* ``companies``: flat HubSpot company dicts for
  :func:`~morpheus_pipelines.devtools.emulators.hubspot.build_data` (every one a member of
  list 19544).
* ``domain_intel``: data for the Domain Intelligence emulator (``{"tenants": {...},
  "domains": {...}}``).
* ``sales_emails``/``forced_ids``/``token``: the ``APAC_SALES_EMAILS``,
  ``FORCED_SALES_OWNED_TENANT_IDS`` and ``HUBSPOT_PRIVATE_APP_TOKEN`` to run with
  (:meth:`DemoDataset.environment`).
* ``truth``/``expected``: what the generator planted and what routing it implies, per tenant and
  as counts, so benchmarks and tests can assert on outcomes.

What it contains
    About 85 % of tenants are ``APAC`` (the rest ``EMEA``/``AMER``), with statuses ``active``,
    ``paid``, ``free_trial``, ``new_user``, ``closing`` and ``suspended``. Signups cluster on the
    partition day in Asia/Shanghai time, with rows at exactly 00:00:00, 23:59:59 and
    23:59:59.999999 CST, just outside the day (one second / microsecond before, the next
    midnight) and on the UTC-date traps (inside the CST day but on the previous UTC date, and
    outside it but on the same UTC date). Emails use corporate domains under APAC country
    suffixes (``.com.au``, ``.co.jp``, ``.com.cn``, ``.co.kr``, ``.com.sg``, ``.co.nz``,
    ``.com.hk``, ``.co.in``, …), free mail (Gmail, QQ, 163, Naver, Daum, Hanmail, Yahoo Japan,
    Outlook, …), disposable mail, internationalised domains written by some tenants in Unicode
    (``例え.jp``, ``bücher.de``, ``上海科技.中国``) and by others in punycode, ``www.``/``mail.``
    hosts, upper case, trailing dots and padding, and at a low rate missing or malformed values
    (NULL, ``""``, ``no-at-sign``, ``a@@b``, very long, odd Unicode, SQL-looking text).
    About 8 % of tenants have an APAC Sales owner (with case and padding variants), others a
    non-APAC sales person, near misses (``+tag``, other domain, two addresses) or nothing.

Planted HubSpot matches (docs/pipeline.md), each present at every supported size (``tenants >=
100``,
``companies >= 20``):
    * ``portal_id``: companies whose ``portal_id__c`` is a candidate tenant's id (as text, as a
      number, or padded with spaces), one id shared by two companies (ambiguous, falls through);
    * ``account_id``: companies whose ``account_id__c`` is a candidate's ``custom_id``, one
      shared by two companies, one lower-cased near miss (identifiers are case-sensitive);
    * ``email_domain``: company ``domain``/``website``/``hs_additional_domains`` roots that
      candidates' corporate emails use (as written, as a subdomain, ``www.``, URL, IDN in either
      form);
    * ``official_website``: companies whose root no tenant email uses but that the Domain
      Intelligence data returns as the ``official_website`` of free-mail, malformed-email or
      otherwise unmatched candidates;
    * ambiguous roots shared by two companies (one pair is an IDN written in Unicode by one
      company and in punycode by the other), free-mail company domains (``gmail.com``,
      ``qq.com``, …) that must never match, companies without any domain.

``truth`` (one row per tenant, :data:`TRUTH_COLUMNS`) is computed from how the data was built
(pool indices), not by running the matcher; the test suite checks that
:func:`~.matching.match_tenants` agrees row for row (method, company,
ambiguity) when given the companies' roots and the Domain Intelligence ``official_website``.
A *candidate* is an ``APAC`` tenant whose status is not ``free_trial``/``new_user``/``closing``
(the active query) or that signed up on the partition day in CST (the signup query); a tenant
can be both. ``hubspot_match_method`` is given for every tenant regardless of the forced list;
``bucket`` (candidates only) applies the routing precedence: forced → ``sales_owned``, HubSpot
match →
``active``, APAC Sales owner → ``sales_owned``, else ``active``. ``expected`` counts the same
things: ``matches`` per method and ``matched``/``unmatched``/``ambiguous_*`` over non-forced
candidates, ``buckets`` over all candidates, ``planted`` what was deliberately placed.

``write()`` produces a ``tenants.csv`` in PostgreSQL ``COPY … (FORMAT csv, HEADER)`` form:
an unquoted empty field is NULL and ``""`` is the empty string.

Performance: 1,000,000 tenants x 50,000 companies in seconds and bounded memory. Per-tenant work
is numpy arithmetic, indexing into small precomputed vocabularies and element-wise object-array
concatenation; Python-level loops run over companies and to build the Domain Intelligence dict.
Every step draws from its own child stream of ``numpy.random.SeedSequence(seed)``, so the same
arguments always give the same data.
"""

from .builder import generate_dataset
from .model import DemoDataset, write_tenants_csv
from .vocabulary import (
    CST,
    EMAIL_KINDS,
    EXCLUDED_ACTIVE_STATUSES,
    HUBSPOT_MATCH_METHODS,
    TENANT_COLUMNS,
    TRUTH_COLUMNS,
)

__all__ = [
    "CST",
    "EMAIL_KINDS",
    "EXCLUDED_ACTIVE_STATUSES",
    "HUBSPOT_MATCH_METHODS",
    "TENANT_COLUMNS",
    "TRUTH_COLUMNS",
    "DemoDataset",
    "generate_dataset",
    "write_tenants_csv",
]
