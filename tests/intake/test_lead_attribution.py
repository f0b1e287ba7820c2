"""``lead_attribution`` on the real timeline: won leads only, touches before the win only,
the five models side by side in the asset's metadata and in the report files."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest

from morpheus_pipelines.assets.leads.attribution import lead_attribution
from morpheus_pipelines.crm.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID
from morpheus_pipelines.crm.repositories.leads import LeadRepository
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.rules.timeline import Touch
from tests.support.timeline import REP_OWNER_ID, lead_with_history, subscription

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
_leads = LeadRepository()


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def close(url: str, lead_id: uuid.UUID, status: str, at: datetime) -> None:
    with get_session(url) as session:
        assert _leads.close(session, lead_id, status=status, at=at)


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

    result = dg.materialize(
        [lead_attribution],
        resources={"warehouse": WarehouseResource(database_url=database_url, home=str(tmp_path))},
    )

    assert result.success
    metadata = result.get_asset_materialization_events()[0].materialization.metadata
    assert metadata["won_leads"].value == 1
    by_channel = metadata["credit_by_channel"].value
    assert set(by_channel) == {"form", "call", "whatsapp"}  # the email came after the win
    assert by_channel["form"]["first_touch"] == 1.0
    assert by_channel["call"]["last_touch"] == 1.0
    assert by_channel["call"]["linear"] == pytest.approx(0.5)  # 2 of the 4 touches
    assert by_channel["whatsapp"]["position_based"] == pytest.approx(0.1)
    report = Path(metadata["file_markdown"].value).read_text()
    assert f"{DIALER_FALLBACK_HUBSPOT_OWNER_ID} (AI dialer)" in report
    assert REP_OWNER_ID in report
    assert "Where the models disagree most" in report
    assert "40 % to the first touch" in report
    html_page = Path(metadata["file_html"].value).read_text()
    assert "data:image/png;base64," in html_page
    assert Path(metadata["file_chart"].value).read_bytes().startswith(b"\x89PNG")


def test_closing_a_lead_twice_changes_nothing(database_url: str) -> None:
    subscription_id = subscription(database_url)
    lead_id = lead_with_history(database_url, subscription_id, T0)
    close(database_url, lead_id, "won", day(1))
    with get_session(database_url) as session:
        assert not _leads.close(session, lead_id, status="lost", at=day(2))
        assert _leads.get_by_id(session, lead_id).status == "won"
