"""The full daily job with a recognisable token and emails: neither appears in any log line,
Dagster event, metadata value, exception text or report."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import dagster as dg

from morpheus_pipelines.definitions import defs
from morpheus_pipelines.devtools.emulators import (
    DomainIntelEmulator,
    HubSpotEmulator,
    build_hubspot_data,
)
from morpheus_pipelines.platform.observability.events import LOGGER_NAME
from tests.support.pipeline import Pipeline, load_source, tenant

TOKEN = "pat-na1-RECOGNISABLE-SECRET-0123456789"
SALES = "secret.salesperson@morpheus-apac.example"
CUSTOMER_EMAILS = [
    "jane.customer@acme-secret.com.au",
    "kim.customer@hangul-secret.co.kr",
    "free.user.secret@gmail.com",
]
PARTITION = "2026-11-29"


def test_no_token_or_email_anywhere(database_url: str, tmp_path: Path, capfd) -> None:
    rows = [
        tenant(
            "s1",
            email=CUSTOMER_EMAILS[0],
            sales_owner_email=SALES,
            name=f"Contact {CUSTOMER_EMAILS[0]}",
        ),
        tenant("s2", email=CUSTOMER_EMAILS[1]),
        tenant("s3", email=CUSTOMER_EMAILS[2], sales_owner_email=SALES.upper()),
        tenant("s4", email="not-an-email"),
    ]
    load_source(database_url, rows)
    companies = [{"id": "1", "name": "Acme", "domain": "acme-secret.com.au"}]
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logging.getLogger(LOGGER_NAME).addHandler(handler)
    try:
        with (
            HubSpotEmulator(build_hubspot_data(companies, token=TOKEN)) as hubspot,
            DomainIntelEmulator({"tenants": {}}) as domain_intel,
        ):
            # one retried HubSpot failure and one failed enrichment, so error paths log too
            hubspot.fail_page(0, "503", times=1)
            domain_intel.fail(500, times=None)
            pipeline = Pipeline(
                database_url=database_url,
                hubspot_url=hubspot.base_url,
                hubspot_token=TOKEN,
                domain_intel_url=domain_intel.base_url,
                sales_emails=SALES,
                home=str(tmp_path),
                webhook_url="",
            )
            with dg.instance_for_test() as instance:
                job = defs.resolve_job_def("apac_daily_job")
                result = job.execute_in_process(
                    partition_key=PARTITION,
                    instance=instance,
                    resources=pipeline.resources(),
                    raise_on_error=False,
                )
                assert result.success
                # and one run that fails: a wrong token makes HubSpot answer 401, which fails
                # the asset naming the variable, never its value
                pipeline.hubspot_token = TOKEN + "-wrong"
                failing = pipeline.materialize(["hubspot_target_accounts"], raise_on_error=False)
                assert not failing.success
                records = list(instance.all_logs(result.run_id))
    finally:
        logging.getLogger(LOGGER_NAME).removeHandler(handler)

    texts = [stream.getvalue()]
    out, err = capfd.readouterr()
    texts += [out, err]
    for record in records:
        texts.append(record.user_message or "")
        event = record.dagster_event
        if event is not None:
            texts.append(repr(event.event_specific_data))
    for event in failing.all_events:
        texts.append(event.message or "")
        texts.append(repr(event.event_specific_data))
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.suffix in {".jsonl", ".html", ".csv", ".md"}:
            texts.append(path.read_text(errors="replace"))
    everything = "\n".join(texts)
    assert "sync_id" in everything and "tenant_routing_completed" in everything  # we looked
    assert TOKEN not in everything
    for email in [SALES, SALES.upper(), *CUSTOMER_EMAILS]:
        assert email not in everything, email
