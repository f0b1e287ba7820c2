"""The reads of a lead's timeline (docs/leads.md, "The timeline"):
``GET /v1/leads/{lead_id}/timeline``, every activity newest first in pages, and
``GET /v1/leads/{lead_id}/whatsapp-window``, whether a free-form WhatsApp message may be sent
now."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy.orm import Session
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from morpheus_pipelines.crm.api import cursors
from morpheus_pipelines.crm.api.activities import activity_view
from morpheus_pipelines.crm.api.dependencies import (
    FORBIDDEN,
    Answer,
    Refused,
    intake_of,
    invalid,
    lead_id_of,
    respond,
)
from morpheus_pipelines.crm.api.leads import lead_is_callers
from morpheus_pipelines.crm.models import Activity
from morpheus_pipelines.crm.repositories.timeline import TimelineRepository
from morpheus_pipelines.crm.rules.timeline import InvalidActivity, whatsapp_window

DEFAULT_TIMELINE_PAGE = 50
MAX_TIMELINE_PAGE = 200
_timeline = TimelineRepository()


async def get_timeline(request: Request) -> Response:
    intake = intake_of(request)
    _, subscription_id = await intake.authorised(request)
    lead_id = lead_id_of(request)
    limit = _page_limit(request)
    cursor = request.query_params.get("cursor")
    return respond(
        await intake.in_transaction(
            lambda session: timeline_page(
                session, lead_id, subscription_id, limit=limit, cursor=cursor
            )
        )
    )


async def get_whatsapp_window(request: Request) -> Response:
    intake = intake_of(request)
    _, subscription_id = await intake.authorised(request)
    lead_id = lead_id_of(request)
    now = intake.now()
    return respond(
        await intake.in_transaction(
            lambda session: window_view(session, lead_id, subscription_id, now)
        )
    )


ROUTES = [
    Route("/v1/leads/{lead_id}/timeline", get_timeline, methods=["GET"]),
    Route("/v1/leads/{lead_id}/whatsapp-window", get_whatsapp_window, methods=["GET"]),
]


def _page_limit(request: Request) -> int:
    limit_text = request.query_params.get("limit", str(DEFAULT_TIMELINE_PAGE))
    if not (
        limit_text.isascii() and limit_text.isdigit() and 1 <= int(limit_text) <= MAX_TIMELINE_PAGE
    ):
        raise Refused(invalid("limit", f"limit must be an integer from 1 to {MAX_TIMELINE_PAGE}"))
    return int(limit_text)


def timeline_page(
    session: Session,
    lead_id: uuid.UUID,
    subscription_id: uuid.UUID,
    *,
    limit: int,
    cursor: str | None,
) -> Answer:
    before = _decode_cursor(cursor) if cursor is not None else None
    if not lead_is_callers(session, lead_id, subscription_id):
        return FORBIDDEN
    rows = _timeline.page(session, lead_id, limit=limit + 1, before=before)
    more = len(rows) > limit
    rows = rows[:limit]
    return Answer(
        200,
        {
            "items": [activity_view(row) for row in rows],
            "next_cursor": _cursor(rows[-1]) if more else None,
        },
    )


def _cursor(activity: Activity) -> str:
    return cursors.encode(activity.occurredAt, str(activity.id))


def _decode_cursor(cursor: str) -> tuple[datetime, int]:
    position = cursors.decode(cursor, cursors.ACTIVITY_CURSOR)
    if position is None:
        raise InvalidActivity("cursor", "cursor is not one this API returned")
    return position[0], int(position[1])


def window_view(
    session: Session, lead_id: uuid.UUID, subscription_id: uuid.UUID, now: datetime
) -> Answer:
    if not lead_is_callers(session, lead_id, subscription_id):
        return FORBIDDEN
    last = _timeline.last_inbound_whatsapp(session, lead_id, at=now)
    return Answer(200, whatsapp_window(last, now).as_json())
