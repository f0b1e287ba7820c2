"""The snapshot as routing prepared it for matching is kept for its content and the rules that
prepared it, and prepared again when either changes or the kept document cannot be read."""

from __future__ import annotations

import logging

import pytest

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.resources.hubspot import TargetListResource
from morpheus_pipelines.tenants.rules.matching import SnapshotIndex
from morpheus_pipelines.tenants.steps.routing_batches import SnapshotView, load_snapshot
from morpheus_pipelines.tenants.store.store import TenantStore
from tests.support.pipeline import Pipeline, load_source, tenant
from tests.support.tenants import PARTITION, lookups

KEPT = "SELECT content_digest, preparation FROM apac_hubspot_prepared_snapshots"
COMPANIES = "SELECT count(*) FROM apac_hubspot_target_accounts"


def load(pipeline: Pipeline, log: logging.Logger | None = None) -> SnapshotView:
    with get_session(pipeline.database_url) as session:
        return load_snapshot(session, list_id=TargetListResource().list_id, run_ids=None, log=log)


def test_the_prepared_snapshot_is_kept_until_its_content_changes(pipeline: Pipeline) -> None:
    assert pipeline.snapshot().success
    first, second = load(pipeline), load(pipeline)
    assert (first.index_kept, second.index_kept) == (False, True)
    assert first.index is not None and second.index is not None
    assert lookups(second.index) == lookups(first.index)
    assert second.index.domain_roots.owners["portalco.com.au"] == "501"
    [kept] = pipeline.query(KEPT)

    # A hand edit of a matching column is other content: prepared again, in place of the old.
    edited = edit_and_load(pipeline, "domain_root", "edited.com.au")
    assert edited.domain_roots.owners["edited.com.au"] == "501"
    assert "portalco.com.au" not in edited.domain_roots.owners
    [now_kept] = pipeline.query(KEPT)
    assert now_kept[0] != kept[0] and now_kept[1] == kept[1]
    assert load(pipeline).index_kept
    # The names are matching input too (the hint).
    renamed = edit_and_load(pipeline, "account_alias", "Portal Alias")
    assert renamed.company_names.owners["portalalias"] == "501"


def edit_and_load(pipeline: Pipeline, column: str, value: str) -> SnapshotIndex:
    """Set ``column`` of company 501 by hand; the snapshot must then be prepared again."""
    pipeline.execute(
        f"UPDATE apac_hubspot_target_accounts SET {column} = '{value}' "
        "WHERE hubspot_company_id = '501'"
    )
    view = load(pipeline)
    assert not view.index_kept and view.index is not None
    return view.index


def test_the_digest_read_with_the_rows_is_the_tables(pipeline: Pipeline) -> None:
    assert pipeline.snapshot().success
    for _ in range(2):
        with get_session(pipeline.database_url) as session:
            accounts = TenantStore(session).accounts
            frame, digest = accounts.load_frame_with_digest(session)
            assert digest == accounts.matching_digest(session)
            assert len(frame) == pipeline.query(COMPANIES)[0][0]
        pipeline.execute("DELETE FROM apac_hubspot_target_accounts")


def test_a_snapshot_that_cannot_be_kept_is_still_used(
    pipeline: Pipeline, caplog: pytest.LogCaptureFixture
) -> None:
    assert pipeline.snapshot().success
    pipeline.execute(
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'disk full'; END $$; "
        "CREATE TRIGGER refuse BEFORE INSERT ON apac_hubspot_prepared_snapshots "
        "FOR EACH ROW EXECUTE FUNCTION refuse()"
    )
    with caplog.at_level(logging.WARNING, logger="prepared"):
        refused = load(pipeline, logging.getLogger("prepared"))
    assert not refused.index_kept and refused.index is not None
    assert refused.index.domain_roots.owners["portalco.com.au"] == "501"
    assert "could not keep the prepared snapshot" in caplog.text
    assert pipeline.query(KEPT) == []
    pipeline.execute("DROP TRIGGER refuse ON apac_hubspot_prepared_snapshots")
    assert not load(pipeline).index_kept
    assert load(pipeline).index_kept


def test_other_rules_or_an_unreadable_document_prepare_it_again(
    pipeline: Pipeline, caplog: pytest.LogCaptureFixture
) -> None:
    assert pipeline.snapshot().success
    first = load(pipeline)
    assert first.index is not None

    pipeline.execute("UPDATE apac_hubspot_prepared_snapshots SET preparation = 'other rules'")
    assert not load(pipeline).index_kept

    pipeline.execute("""UPDATE apac_hubspot_prepared_snapshots SET document = '{"format": 1}'""")
    with caplog.at_level(logging.WARNING, logger="prepared"):
        again = load(pipeline, logging.getLogger("prepared"))
    assert not again.index_kept and again.index is not None
    assert "kept prepared snapshot is unreadable" in caplog.text
    assert lookups(again.index) == lookups(first.index)
    assert load(pipeline).index_kept


def test_routing_says_whether_it_read_the_kept_snapshot(pipeline: Pipeline) -> None:
    load_source(pipeline.database_url, [tenant("t-1")])
    assert pipeline.snapshot().success

    def prepared() -> object:
        [materialisation] = pipeline.route(PARTITION).asset_materializations_for_node(
            "routed_tenants"
        )
        return materialisation.metadata["snapshot_prepared"].value

    assert prepared() == "prepared"
    assert prepared() == "kept"
