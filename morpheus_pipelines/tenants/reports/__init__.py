"""Daily Summary and Weekly Metrics: report content and its renderings (docs/reports.md).

Plain Python, pandas and matplotlib; no Dagster, no database, no HubSpot. The assets read the
figures through ``repositories.reports`` (``apac_active_tenants`` only), build a
:class:`~.figures.DailySummary` (:mod:`.daily`) or :class:`~.figures.WeeklyMetrics`
(:mod:`.weekly`), store its rows, and write the files rendered here (:mod:`.files`):

* Markdown for Dagster metadata (:mod:`.markdown`);
* self-contained HTML for Sales managers, charts embedded as base64 PNG (:mod:`.html`);
* CSV for spreadsheets, formula-like cells neutralised (:mod:`.csv`);
* PNG charts for the week (:mod:`.charts`, matplotlib imported only when drawing).

The Daily Summary also renders the operations notes its caller hands it
(:class:`~morpheus_pipelines.platform.report_notes.OperationsNote`, e.g. the HubSpot outbox's)
as an Operations section, and ``notes.csv``.

Tenant-provided text (names) and note text are untrusted: they are HTML-escaped in HTML,
escaped in Markdown, and any email-shaped text in them is masked everywhere (:mod:`.text`).
Customer email columns are never read.

Submodules are imported explicitly by their users; this package imports nothing eagerly.
"""
