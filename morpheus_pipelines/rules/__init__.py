"""Plain-Python business rules of the APAC tenant pipeline (spec 002).

Nothing in this package talks to Dagster, a database or the network: every function is a pure
transformation of values or DataFrames, so the rules can be unit- and property-tested in
milliseconds and reused by any asset, job or script.

* :mod:`.domains` — normalisation of domains, URLs, emails and identifiers (002 §4.1, §5).
* :mod:`.email_domains` — free / disposable / corporate classification of email domains.
* :mod:`.matching` — HubSpot target-account matching (002 §6).
* :mod:`.routing` — routing precedence and the scoring-message allowlists (002 §2, §7, §9.2).

Submodules are imported explicitly by their users; this package imports nothing eagerly.
"""
