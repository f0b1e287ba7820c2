"""The snapshot as routing prepared it for matching is kept for its content and the rules that
prepared it, and prepared again when either changes or the kept document cannot be read."""

from __future__ import annotations

import logging

import pytest

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.resources.hubspot import TargetListResource
from morpheus_pipelines.tenants.steps.routing_batches import SnapshotView, load_snapshot
from tests.support.pipeline import Pipeline
from tests.support.tenants import lookups

KEPT = "SELECT content_digest, preparation FROM apac_hubspot_prepared_snapshots"


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
    pipeline.execute(
        "UPDATE apac_hubspot_target_accounts SET domain_root = 'edited.com.au' "
        "WHERE hubspot_company_id = '501'"
    )
    edited = load(pipeline)
    assert not edited.index_kept and edited.index is not None
    assert edited.index.domain_roots.owners["edited.com.au"] == "501"
    assert "portalco.com.au" not in edited.index.domain_roots.owners
    [now_kept] = pipeline.query(KEPT)
    assert now_kept[0] != kept[0] and now_kept[1] == kept[1]
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
