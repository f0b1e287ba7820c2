"""Plain-Python business rules of the APAC tenant pipeline (docs/pipeline.md).

Nothing in this package talks to Dagster, a database or the network: every function is a pure
transformation of values or DataFrames, so the rules can be unit- and property-tested in
milliseconds and reused by any asset, job or script.

* :mod:`.domains` — normalisation of domains, URLs, emails and identifiers (docs/pipeline.md).
* :mod:`.email_domains` — free / disposable / corporate classification of email domains.
* :mod:`.matching` — HubSpot target-account matching (docs/pipeline.md).
* :mod:`.routing` — routing precedence and the scoring-message allowlists (docs/pipeline.md).

Submodules are imported explicitly by their users; this package imports nothing eagerly.
"""
