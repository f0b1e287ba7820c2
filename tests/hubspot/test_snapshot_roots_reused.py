"""A sync takes the registrable roots of values the stored snapshot already holds from it,
while the snapshot is as the last sync left it and normalised as now (against the emulator
and the real warehouse)."""

from __future__ import annotations

from sqlalchemy import text

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.platform.text.normalise import additional_domain_roots, registrable_root
from morpheus_pipelines.platform.versions import normalisation
from morpheus_pipelines.tenants.steps import hubspot_snapshot
from morpheus_pipelines.tenants.steps.hubspot_snapshot import (
    DomainRoots,
    SyncOutcome,
    sync_target_list,
)
from morpheus_pipelines.tenants.store import HubSpotTargetAccountRepository
from morpheus_pipelines.tenants.store.hubspot_target_account import CONTENT_COLUMNS, KnownRoots
from tests.support.hubspot import LIST_ID

accounts = HubSpotTargetAccountRepository()


def _sync(make_client, sessions, run_id: str) -> SyncOutcome:
    with make_client() as client:
        outcome = sync_target_list(client, sessions, list_id=LIST_ID, run_id=run_id)
    assert outcome.succeeded, outcome.error
    assert outcome.roots is not None
    return outcome


def _content(database_url: str) -> list[tuple]:
    with get_session(database_url) as session:
        return [
            tuple(row)
            for row in session.execute(
                text(
                    f"SELECT {', '.join(CONTENT_COLUMNS)} FROM apac_hubspot_target_accounts "
                    "ORDER BY hubspot_company_id"
                )
            )
        ]


def _root_of(database_url: str, company_id: str) -> str | None:
    with get_session(database_url) as session:
        return session.execute(
            text(
                "SELECT domain_root FROM apac_hubspot_target_accounts "
                "WHERE hubspot_company_id = :id"
            ),
            {"id": company_id},
        ).scalar_one()


def test_an_unchanged_list_takes_every_root_from_the_snapshot(
    make_client, sessions, database_url: str
) -> None:
    first = _sync(make_client, sessions, "run00001")
    assert first.roots.reused == 0 and first.roots.computed > 0
    content = _content(database_url)

    second = _sync(make_client, sessions, "run00002")
    assert second.roots.computed == 0
    assert second.roots.reused == first.roots.computed
    assert _content(database_url) == content


def test_a_changed_domain_is_normalised_and_the_others_reused(
    emulator: HubSpotEmulator, make_client, sessions, database_url: str
) -> None:
    first = _sync(make_client, sessions, "run00001")
    emulator.set_company("9007", {"domain": "https://Shop.NewSite.co.uk/about"})

    second = _sync(make_client, sessions, "run00002")
    assert second.roots.computed == 1
    assert second.roots.reused == first.roots.computed - 1
    assert _root_of(database_url, "9007") == "newsite.co.uk"


def test_a_root_edited_by_hand_is_computed_again(make_client, sessions, database_url: str) -> None:
    first = _sync(make_client, sessions, "run00001")
    with get_session(database_url) as session:
        session.execute(
            text(
                "UPDATE apac_hubspot_target_accounts SET domain_root = 'elsewhere.com' "
                "WHERE hubspot_company_id = '9007'"
            )
        )

    second = _sync(make_client, sessions, "run00002")
    assert second.roots.reused == 0
    assert second.roots.computed == first.roots.computed
    assert _root_of(database_url, "9007") == "target7.com.au"


def test_a_sync_under_another_normalisation_computes_every_root(
    make_client, sessions, monkeypatch
) -> None:
    first = _sync(make_client, sessions, "run00001")
    # As after an edit of the normalisation module or an upgrade of tldextract or idna.
    monkeypatch.setattr(hubspot_snapshot, "normalisation", lambda: "another normalisation")
    second = _sync(make_client, sessions, "run00002")
    assert second.roots.reused == 0
    assert second.roots.computed == first.roots.computed
    third = _sync(make_client, sessions, "run00003")
    assert third.roots.computed == 0


def test_a_failed_sync_in_between_leaves_the_roots_to_reuse(
    emulator: HubSpotEmulator, make_client, sessions
) -> None:
    first = _sync(make_client, sessions, "run00001")
    emulator.unauthorized(endpoint="list")  # once, and never retried
    with make_client() as client:
        failed = sync_target_list(client, sessions, list_id=LIST_ID, run_id="run00002")
    assert not failed.succeeded and failed.roots is None
    after = _sync(make_client, sessions, "run00003")
    assert after.roots.reused == first.roots.computed and after.roots.computed == 0


def test_roots_stored_under_another_normalisation_are_not_known(
    make_client, sessions, database_url: str
) -> None:
    _sync(make_client, sessions, "run00001")
    with get_session(database_url) as session:
        known = accounts.known_roots(session, list_id=LIST_ID, normalisation=normalisation())
        assert (
            known is not None and known.domains_and_websites["target7.com.au"] == "target7.com.au"
        )
        assert (
            accounts.known_roots(session, list_id=LIST_ID, normalisation="another normalisation")
            is None
        )
        assert (
            accounts.known_roots(session, list_id="another list", normalisation=normalisation())
            is None
        )


def test_the_content_hash_is_the_same_in_any_session_time_zone(
    make_client, sessions, database_url: str
) -> None:
    _sync(make_client, sessions, "run00001")
    with get_session(database_url) as session:
        session.execute(text("SET TIME ZONE 'UTC'"))
        in_utc = accounts.content_hash(session, normalisation=normalisation())
        session.execute(text("SET TIME ZONE 'Asia/Tokyo'"))
        assert accounts.content_hash(session, normalisation=normalisation()) == in_utc
        assert accounts.content_hash(session, normalisation="another normalisation") != in_utc


def test_known_roots_are_taken_as_they_are_and_others_computed() -> None:
    # A known root that is not what normalising gives proves the known one is taken.
    roots = DomainRoots(
        KnownRoots(
            domains_and_websites={"acme.com": "kept.example"},
            additional={"a.com; b.com": ["kept.org"]},
        )
    )
    assert roots.of("acme.com") == "kept.example"
    assert roots.of("https://www.other.co.uk/x") == registrable_root("other.co.uk")
    assert roots.of(12345) is None
    assert roots.of(None) is None
    assert roots.of_additional("a.com; b.com") == ["kept.org"]
    assert roots.of_additional("c.com") == ["c.com"]
    assert roots.of_additional(None) is None
    # A value of another type than text is computed, never looked up (a list is unhashable).
    assert roots.of(["acme.com"]) == registrable_root(["acme.com"])
    assert roots.of_additional(["a.com"]) == additional_domain_roots(["a.com"])
    assert (roots.reused, roots.computed) == (2, 5)
    # The caller's list is its own: the known one stays as it was.
    roots.of_additional("a.com; b.com").append("x")
    assert roots.of_additional("a.com; b.com") == ["kept.org"]


def test_roots_that_cannot_be_read_are_computed_and_the_sync_goes_on(
    make_client, sessions, database_url: str, caplog
) -> None:
    first = _sync(make_client, sessions, "run00001")
    calls = []

    def first_session_refused():
        # The database refuses the first session only: the read of the stored roots.
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("the database is restarting")
        return sessions()

    with make_client() as client:
        outcome = sync_target_list(
            client, first_session_refused, list_id=LIST_ID, run_id="run00002"
        )
    assert outcome.succeeded, outcome.error
    assert outcome.roots.reused == 0 and outcome.roots.computed == first.roots.computed
    assert "could not read the snapshot's domain roots" in caplog.text
    assert _root_of(database_url, "9007") == "target7.com.au"
