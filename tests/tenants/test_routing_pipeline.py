"""002 §12 "Worker": selection, enrichment, matching and bucket routing end to end."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from tests.support.pipeline import Pipeline, load_source, tenant
from tests.support.tenants import PARTITION

SALES = "alice.sales@morpheus.example"


def _cst(text: str) -> datetime:
    return datetime.fromisoformat(text + "+08:00")


def base_tenants() -> list[dict]:
    return [
        tenant("t-portal", email="x@gmail.com"),
        tenant("t-account", custom_id="CUST-9", email="x@qq.com"),
        tenant("t-email", email="Ops@Mail.EmailCo.com.cn", sales_owner_email=SALES),
        tenant("t-additional", email="ops@emailco-group.com"),
        tenant("t-website", email="owner@hanmail.net"),
        tenant("t-shared", email="ops@shared.com.sg"),
        tenant("t-shared-site", email="x@daum.net"),
        tenant("t-freemail", email="someone@gmail.com"),
        tenant("t-idn", email="info@xn--r8jz45g.jp"),
        tenant(
            "t-sales",
            email="ceo@plainco.com.au",
            sales_owner_email="  ALICE.SALES@morpheus.example ",
        ),
        tenant("t-sales-domain-only", sales_owner_email="carol@morpheus.example"),
        tenant("t-default"),
        tenant("t-trial", status="free_trial"),
        tenant("t-closing", status="closing"),
        tenant("t-emea", region="EMEA"),
        tenant("t-signup-start", status="new_user", created_at=_cst("2026-11-29T00:00:00")),
        tenant("t-signup-end", status="free_trial", created_at=_cst("2026-11-29T23:59:59")),
        tenant("t-signup-next", status="new_user", created_at=_cst("2026-11-30T00:00:00")),
        tenant("t-signup-active", status="paid", created_at=_cst("2026-11-29T12:00:00")),
        tenant("t-forced-1", sales_owner_email=None, email="x@portalco.com.au"),
        # forced ids are written directly whatever their status or region
        tenant("t-forced-2", status="closing", region="EMEA"),
    ]


def decisions(pipeline: Pipeline, partition_key: str = PARTITION) -> dict[str, tuple]:
    return {
        r[0]: r[1:]
        for r in pipeline.query(
            "SELECT tenant_id, tenant_bucket, routing_rule, hubspot_match_method, "
            "hubspot_company_id, ambiguous_match, source_type, moved_from "
            "FROM apac_routing_decisions WHERE partition_key = :p",
            p=partition_key,
        )
    }


def test_selection_precedence_and_every_match_method(pipeline: Pipeline) -> None:
    load_source(pipeline.database_url, base_tenants())
    assert pipeline.snapshot().success
    result = pipeline.route(PARTITION)
    assert result.success
    d = decisions(pipeline)
    # selection: excluded statuses and other regions are not candidates; CST day boundaries
    assert {"t-trial", "t-closing", "t-emea", "t-signup-next"}.isdisjoint(d)
    assert d["t-signup-start"][5] == "signup" and d["t-signup-end"][5] == "signup"
    assert d["t-signup-active"][5] == "signup"  # in both sets: routed once, as a signup
    assert d["t-default"][5] == "active"
    # match methods, in order
    assert d["t-portal"][:4] == ("active", "hubspot_target_account", "portal_id", "501")
    assert d["t-account"][:4] == ("active", "hubspot_target_account", "account_id", "502")
    assert d["t-email"][:4] == ("active", "hubspot_target_account", "email_domain", "503")
    assert d["t-additional"][2:4] == ("email_domain", "503")
    assert d["t-website"][2:4] == ("official_website", "504")
    assert d["t-idn"][2:4] == ("email_domain", "508")
    # HubSpot before Sales-owned: t-email has an APAC Sales owner but is an Active target
    assert pipeline.bucket_of("t-email") == "active"
    # free mail never matches, even though a company lists gmail.com
    assert d["t-freemail"][1] == "default_active" and d["t-freemail"][2] is None
    # ambiguous roots never match, and are recorded
    assert d["t-shared"][1] == "default_active" and d["t-shared"][4] is True
    assert d["t-shared-site"][1] == "default_active" and d["t-shared-site"][4] is True
    # Sales-owned: exact (normalised) email only, no domain match
    assert d["t-sales"][:2] == ("sales_owned", "apac_sales_owner")
    assert d["t-sales-domain-only"][:2] == ("active", "default_active")
    # forced fast path
    assert d["t-forced-1"][:2] == ("sales_owned", "forced_sales_owned")
    forced = pipeline.query(
        "SELECT priority, enrichment_status FROM apac_sales_owned_tenants "
        "WHERE tenant_id = 't-forced-1'"
    )
    assert forced == [("P0", None)]
    assert pipeline.query(
        "SELECT count(*) FROM apac_enriched_tenants WHERE tenant_id LIKE 't-forced%'"
    ) == [(0,)]
    # the active row carries the P0 intent and the evidence
    assert pipeline.query(
        "SELECT priority_override, hubspot_target, hubspot_match_method, "
        "hubspot_sync_id IS NOT NULL FROM apac_active_tenants WHERE tenant_id = 't-portal'"
    ) == [("P0", True, "portal_id", True)]
    assert d["t-forced-2"][:2] == ("sales_owned", "forced_sales_owned")
    # forced tenants get their per-tenant event lines too
    events = (Path(pipeline.home) / "reports" / "tenant_events" / f"{PARTITION}.jsonl").read_text(
        encoding="utf-8"
    )
    forced_lines = [json.loads(line) for line in events.splitlines() if "t-forced-2" in line]
    assert {line["event"] for line in forced_lines} == {
        "tenant_routing_started",
        "tenant_routing_completed",
    }
    assert pipeline.bucket_of("t-forced-2") == "sales_owned"
    # checks green, but for the configured forced id the source does not have (WARN)
    evaluations = {e.check_name: e for e in result.get_asset_check_evaluations()}
    missing = evaluations.pop("forced_ids_in_source")
    assert not missing.passed and missing.severity.value == "WARN"
    assert missing.metadata["missing_forced_ids"].value == ["t-forced-3"]
    assert evaluations and all(e.passed for e in evaluations.values()), evaluations


def test_rerunning_a_partition_gives_identical_tables(pipeline: Pipeline) -> None:
    load_source(pipeline.database_url, base_tenants())
    pipeline.snapshot()
    pipeline.route(PARTITION)
    tables = [
        "apac_active_tenants",
        "apac_sales_owned_tenants",
        "apac_routing_decisions",
        "apac_tenant_candidates",
        "apac_enriched_tenants",
    ]
    before = {t: pipeline.table_hash(t) for t in tables}
    assert pipeline.route(PARTITION).success
    assert {t: pipeline.table_hash(t) for t in tables} == before


def test_transitions_in_all_three_directions_carry_tracking_fields(
    pipeline: Pipeline, hubspot_emulator: HubSpotEmulator
) -> None:
    rows = [tenant("t-move", email="x@portalco.com.au")]
    load_source(pipeline.database_url, rows)
    pipeline.snapshot()
    pipeline.route("2026-11-26")
    assert pipeline.bucket_of("t-move") == "active"  # email-domain target account
    pipeline.query(
        "UPDATE apac_active_tenants SET track_step = 'called', startup_program = 'yes', "
        "total_score = 61.5, priority = 'P0' WHERE tenant_id = 't-move' RETURNING 1"
    )
    # 1. leaves the HubSpot list and gains an APAC Sales owner: Active -> Sales-owned
    hubspot_emulator.remove_list_members("19544", ["501"])
    pipeline.snapshot()
    load_source(
        pipeline.database_url,
        [tenant("t-move", email="x@portalco.com.au", sales_owner_email=SALES)],
    )
    pipeline.route("2026-11-27")
    assert pipeline.bucket_of("t-move") == "sales_owned"
    assert pipeline.query(
        "SELECT track_step, startup_program, total_score FROM apac_sales_owned_tenants "
        "WHERE tenant_id = 't-move'"
    ) == [("called", "yes", 61.5)]
    assert decisions(pipeline, "2026-11-27")["t-move"][6] == "active"
    # 2. enters the HubSpot list: Sales-owned -> Active (P0 intent)
    hubspot_emulator.add_list_members("19544", ["501"])
    pipeline.snapshot()
    pipeline.route("2026-11-28")
    assert pipeline.bucket_of("t-move") == "active"
    assert pipeline.query(
        "SELECT track_step, priority_override FROM apac_active_tenants WHERE tenant_id = 't-move'"
    ) == [("called", "P0")]
    # 3. leaves the list again but keeps its Sales owner: back to Sales-owned ...
    hubspot_emulator.remove_list_members("19544", ["501"])
    pipeline.snapshot()
    pipeline.route("2026-11-29")
    assert pipeline.bucket_of("t-move") == "sales_owned"
    assert decisions(pipeline, "2026-11-29")["t-move"][6] == "active"
    # ... then loses the owner: Sales-owned -> Active, the tracking fields carried across
    load_source(pipeline.database_url, [tenant("t-move", email="x@portalco.com.au")])
    pipeline.route("2026-11-30")
    assert pipeline.bucket_of("t-move") == "active"
    assert decisions(pipeline, "2026-11-30")["t-move"][6] == "sales_owned"
    assert pipeline.query(
        "SELECT track_step FROM apac_active_tenants WHERE tenant_id = 't-move'"
    ) == [("called",)]


def test_stale_snapshot_still_matches(
    pipeline: Pipeline, hubspot_emulator: HubSpotEmulator
) -> None:
    load_source(pipeline.database_url, base_tenants())
    assert pipeline.snapshot().success
    hubspot_emulator.fail(503, endpoint="list", times=None)  # HubSpot down, not misconfigured
    result = pipeline.snapshot()
    assert result.success  # a failed sync does not fail the run
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks["snapshot_refresh_succeeded"] is False
    pipeline.route(PARTITION)
    d = decisions(pipeline)
    assert d["t-portal"][1] == "hubspot_target_account"
    assert pipeline.query("SELECT DISTINCT snapshot_status FROM apac_routing_decisions") == [
        ("stale",)
    ]


def test_unavailable_snapshot_falls_through_to_sales_owned(
    pipeline: Pipeline, hubspot_emulator: HubSpotEmulator
) -> None:
    load_source(pipeline.database_url, base_tenants())
    hubspot_emulator.fail(503, endpoint="list", times=None)
    pipeline.snapshot()
    pipeline.route(PARTITION)
    d = decisions(pipeline)
    assert d["t-portal"][:2] == ("active", "default_active")
    assert d["t-email"][:2] == ("sales_owned", "apac_sales_owner")  # HubSpot would have won
    assert {r[0] for r in pipeline.query("SELECT snapshot_status FROM apac_routing_decisions")} == {
        "unavailable"
    }


def test_enrichment_down_never_blocks_routing(pipeline: Pipeline, domain_intel) -> None:
    load_source(pipeline.database_url, base_tenants())
    pipeline.snapshot()
    domain_intel.fail(503, times=None)
    assert pipeline.route(PARTITION).success
    d = decisions(pipeline)
    assert d["t-website"][1] == "default_active"  # official_website unknown without the service
    assert d["t-portal"][1] == "hubspot_target_account"
    statuses = {r[0] for r in pipeline.query("SELECT enrichment_status FROM apac_enriched_tenants")}
    assert statuses == {"unavailable"}


def test_malformed_source_rows_are_routed_or_rejected(pipeline: Pipeline) -> None:
    weird = [
        tenant("t-none", email=None, name=None, custom_id=None, plan=None, seats=None),
        tenant("t-empty", email="", custom_id="   "),
        tenant("t-noat", email="no-at-sign"),
        tenant("t-double", email="a@@b"),
        tenant("t-long", email="x" * 5000 + "@example.com", name="n" * 20000),
        tenant("t-unicode", email="ü\u200b@Bücher.DE", name="名前\u0000".replace("\u0000", "")),
        tenant("t-sql", email="x@y.com'; DROP TABLE apac_active_tenants;--"),
        tenant("   ", email="blank@id.com"),
    ]
    load_source(pipeline.database_url, [*base_tenants(), *weird])
    pipeline.snapshot()
    result = pipeline.route(PARTITION)
    assert result.success
    d = decisions(pipeline)
    for row in weird[:-1]:
        assert d[row["id"]][0] == "active", row["id"]
    assert d["   "][0] is None
    assert pipeline.query(
        "SELECT rejection_reason FROM apac_routing_decisions WHERE tenant_id = '   '"
    ) == [("blank tenant id",)]
    assert pipeline.query("SELECT count(*) FROM apac_active_tenants")[0][0] > 0
