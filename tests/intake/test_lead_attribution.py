"""``lead_attribution`` on the real timeline: won leads only, touches before the win only,
the five models side by side in the asset's metadata and in the report files."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

import dagster as dg
import pytest

from morpheus_pipelines.assets.leads.attribution import lead_attribution
from morpheus_pipelines.cli import main
from morpheus_pipelines.crm.repositories.leads import LeadRepository
from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID
from morpheus_pipelines.crm.rules.timeline import Touch
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from tests.support.timeline import REP_OWNER_ID, lead_with_history, subscription

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
_leads = LeadRepository()


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def close(url: str, lead_id: uuid.UUID, status: str, at: datetime) -> None:
    with get_session(url) as session:
        assert _leads.close(session, lead_id, status=status, at=at)


def attribution_run(url: str, subscription_id: uuid.UUID, home: Path) -> dict:
    result = dg.materialize(
        [lead_attribution],
        resources={
            "warehouse": WarehouseResource(database_url=url, home=str(home)),
            "ownership": OwnershipResource(subscription_id=str(subscription_id)),
        },
    )
    assert result.success
    return result.get_asset_materialization_events()[0].materialization.metadata


def test_won_leads_are_credited_five_ways_side_by_side(database_url: str, tmp_path: Path) -> None:
    subscription_id = subscription(database_url)
    won = lead_with_history(
        database_url,
        subscription_id,
        T0,
        [
            Touch(day(1), "call", "outbound", by_ai_dialer=True),
            Touch(day(2), "whatsapp", "inbound"),
            Touch(day(3), "call", "outbound"),
            Touch(day(9), "email", "inbound"),  # after the win: not credited
        ],
    )
    close(database_url, won, "won", day(4))
    lost = lead_with_history(database_url, subscription_id, T0, [Touch(day(1), "email", "inbound")])
    close(database_url, lost, "lost", day(2))
    lead_with_history(database_url, subscription_id, T0)  # still open
    elsewhere = subscription(database_url)  # another workspace's win stays out of the report
    theirs = lead_with_history(database_url, elsewhere, T0, [Touch(day(1), "email", "inbound")])
    close(database_url, theirs, "won", day(3))

    metadata = attribution_run(database_url, subscription_id, tmp_path)

    assert metadata["won_leads"].value == 1
    by_channel = metadata["credit_by_channel"].value
    assert set(by_channel) == {"form", "call", "whatsapp"}  # the email came after the win
    assert by_channel["form"]["first_touch"] == 1.0
    assert by_channel["call"]["last_touch"] == 1.0
    assert by_channel["call"]["linear"] == pytest.approx(0.5)  # 2 of the 4 touches
    assert by_channel["whatsapp"]["position_based"] == pytest.approx(0.1)
    report = local_file(metadata["file_markdown"].value).read_text()
    assert f"{DIALER_FALLBACK_HUBSPOT_OWNER_ID} (AI dialer)" in report
    assert REP_OWNER_ID in report
    assert "Where the models disagree most" in report
    assert "40 % to the first touch" in report
    html_page = local_file(metadata["file_html"].value).read_text()
    assert "data:image/png;base64," in html_page
    assert local_file(metadata["file_chart"].value).read_bytes().startswith(b"\x89PNG")


def local_file(url: str) -> Path:
    """The file a ``file://`` link of the metadata names (docs/reports.md)."""
    assert url.startswith("file:///"), url
    return Path(url2pathname(urlsplit(url).path))


def test_a_lead_is_closed_once_from_the_command_line(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)
    subscription_id = subscription(database_url)
    lead_id = str(lead_with_history(database_url, subscription_id, T0))

    won = main(["lead", "close", lead_id, "--status", "won", "--at", day(1).isoformat()])
    again = main(["lead", "close", lead_id, "--status", "lost"])
    naive = main(["lead", "close", lead_id, "--status", "lost", "--at", "2026-11-03T09:00"])

    assert (won, again, naive) == (0, 1, 2)
    assert "needs a timezone" in capsys.readouterr().err
    with get_session(database_url) as session:
        lead = _leads.get_by_id(session, uuid.UUID(lead_id))
        assert (lead.status, lead.closedAt) == ("won", day(1))
