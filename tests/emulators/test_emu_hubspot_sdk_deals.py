"""HubSpot's official Python SDK searches deals and contacts and reads the deals' contacts from
the emulator as it would from api.hubapi.com."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hubspot import HubSpot
from hubspot.crm.associations.v4 import (
    BatchInputPublicFetchAssociationsBatchRequest,
    PublicFetchAssociationsBatchRequest,
)
from hubspot.crm.deals import (
    BatchReadInputSimplePublicObjectId,
    Filter,
    FilterGroup,
    PublicObjectSearchRequest,
    SimplePublicObjectId,
)

from morpheus_pipelines.devtools.emulators import HubSpotEmulator

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def _client(emu: HubSpotEmulator) -> HubSpot:
    return HubSpot(access_token=emu.token, host=emu.base_url)


def _modified_since(name: str, since: datetime, after: str = "0") -> PublicObjectSearchRequest:
    return PublicObjectSearchRequest(
        filter_groups=[
            FilterGroup(
                filters=[
                    Filter(
                        property_name=name,
                        operator="GTE",
                        value=str(int(since.timestamp() * 1000)),
                    )
                ]
            )
        ],
        sorts=[name],
        properties=["dealstage", "hubspot_owner_id"],
        limit=2,
        after=after,
    )


def test_sdk_searches_deals_modified_since_and_pages(hubspot: HubSpotEmulator) -> None:
    for n in range(3):
        hubspot.add_deal(
            70 + n, stage="closedwon", owner_id="1", modified_at=T0 + timedelta(minutes=n)
        )
    hubspot.add_deal(69, modified_at=T0 - timedelta(days=1))
    api = _client(hubspot).crm.deals.search_api

    first = api.do_search(_modified_since("hs_lastmodifieddate", T0))
    second = api.do_search(_modified_since("hs_lastmodifieddate", T0, first.paging.next.after))

    assert first.total == 3
    assert [d.id for d in first.results + second.results] == ["70", "71", "72"]
    assert first.results[0].properties["dealstage"] == "closedwon"
    assert second.paging is None
    assert hubspot.log.statuses("deals_search") == [200, 200]


def test_sdk_batch_reads_deals_with_the_stage_history(hubspot: HubSpotEmulator) -> None:
    hubspot.add_deal(70, modified_at=T0)
    hubspot.set_deal_stage(70, "closedlost", modified_at=T0 + timedelta(hours=1))
    body = BatchReadInputSimplePublicObjectId(
        inputs=[SimplePublicObjectId(id="70")],
        properties=["dealstage"],
        properties_with_history=["dealstage"],
    )

    [deal] = _client(hubspot).crm.deals.batch_api.read(body).results

    assert deal.properties["dealstage"] == "closedlost"
    history = deal.properties_with_history["dealstage"]
    assert [h.value for h in history] == ["closedlost", "appointmentscheduled"]
    assert history[0].timestamp == T0 + timedelta(hours=1)


def test_sdk_searches_contacts_on_lastmodifieddate(hubspot: HubSpotEmulator) -> None:
    hubspot.set_contact(601, {"hubspot_owner_id": "1"}, modified_at=T0 - timedelta(days=1))
    hubspot.set_contact(602, {"hubspot_owner_id": "1"}, modified_at=T0 - timedelta(days=1))
    hubspot.set_contact_property(602, "hubspot_owner_id", "2", modified_at=T0)

    page = _client(hubspot).crm.contacts.search_api.do_search(
        _modified_since("lastmodifieddate", T0)
    )

    assert [(c.id, c.properties["hubspot_owner_id"]) for c in page.results] == [("602", "2")]


def test_sdk_reads_the_contacts_of_deals(hubspot: HubSpotEmulator) -> None:
    hubspot.add_deal(70, contact_ids=[601, 602])
    hubspot.add_deal(71, contact_ids=[603])
    body = BatchInputPublicFetchAssociationsBatchRequest(
        inputs=[
            PublicFetchAssociationsBatchRequest(id="70"),
            PublicFetchAssociationsBatchRequest(id="71"),
        ]
    )

    answer = _client(hubspot).crm.associations.v4.batch_api.get_page("deals", "contacts", body)

    assert answer.status == "COMPLETE"
    assert {r._from.id: [t.to_object_id for t in r.to] for r in answer.results} == {
        "70": ["601", "602"],
        "71": ["603"],
    }
