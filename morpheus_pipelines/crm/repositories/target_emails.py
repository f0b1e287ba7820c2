"""Repository of campaign addresses and their newsletter opt-out (docs/data-layer.md, "Email
repositories").

HubSpot subscription webhooks arrive out of order and more than once. ``set_newsletter_opt_out``
is therefore a guarded write: an event older than the one already recorded is ignored, so a
stale "subscribed" event can never undo a later opt-out — a compliance problem, not just a
data problem.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import and_, exists, func, literal, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from morpheus_pipelines.crm.models import TargetEmails
from morpheus_pipelines.platform.store.base import BaseRepository, RepositoryError


def _same_address(subscription_id: uuid.UUID, email: str) -> ColumnElement[bool]:
    return and_(
        TargetEmails.subscriptionId == subscription_id,
        func.lower(TargetEmails.email) == func.lower(email),
    )


def _event_is_not_older(occurred_at: datetime, opted_out: bool) -> ColumnElement[bool]:
    """The guard, evaluated against the stored row: may an event at ``occurred_at`` apply?

    Newer events apply, older ones do not. At an equal timestamp the opt-out wins: an opt-out
    applies over a stored opt-in of the same instant, an opt-in does not apply over a stored
    opt-out. This makes the final state independent of arrival order even for ties (the
    maximum of ``(occurred_at, opted_out)``), and a tie is resolved on the side that never
    mails someone who may have unsubscribed. A replay of the stored event applies again and
    changes nothing. ``newsletterOptOutAt IS NULL`` (no event recorded yet) always applies.
    """
    stored_at = TargetEmails.newsletterOptOutAt
    if opted_out:
        not_older = stored_at <= occurred_at
    else:
        not_older = or_(
            stored_at < occurred_at,
            and_(stored_at == occurred_at, TargetEmails.newsletterOptedOut.is_(False)),
        )
    return or_(stored_at.is_(None), not_older)


class TargetEmailsRepository(BaseRepository[TargetEmails]):
    model_class = TargetEmails

    def get_by_subscription_and_email(
        self, session: Session, *, subscription_id: uuid.UUID, email: str
    ) -> TargetEmails | None:
        """The subscription's row for ``email``, ignoring case (oldest first if several).

        Webhooks and imports do not agree on the case of an address; PostgreSQL's ``lower()``
        folds both sides. The unique constraint on ``(subscriptionId, email)`` is
        case-sensitive, so rows differing only in case can exist: the lowest ``id`` wins.
        """
        statement = (
            select(TargetEmails)
            .where(_same_address(subscription_id, email))
            .order_by(TargetEmails.id.asc())
            .limit(1)
        )
        return session.scalars(statement).first()

    def set_newsletter_opt_out(
        self,
        session: Session,
        *,
        subscription_id: uuid.UUID,
        email: str,
        opted_out: bool,
        occurred_at: datetime,
    ) -> bool:
        """Record a newsletter (un)subscribe event unless a newer one is already stored.

        Returns whether the event was applied. ``newsletterOptOutAt`` is the time of the
        latest applied event in either direction — the watermark of the guard — and
        ``newsletterOptedOut`` its state; an opt-in therefore also moves ``newsletterOptOutAt``
        forward, otherwise a stale opt-out could later overwrite it. Ties: see
        :func:`_event_is_not_older` (the opt-out wins).

        An address not stored yet is created (lower-cased) with the event's state, so an
        opt-out that arrives before the address was imported is not lost. Matching is
        case-insensitive; when several rows differ only in case, each is guarded and updated.

        Race-free without locks in the caller, in two statements. First ``INSERT … SELECT …
        WHERE NOT EXISTS (the address, any case) ON CONFLICT DO NOTHING`` creates the row when
        the address is new; when a concurrent transaction is inserting the same address,
        PostgreSQL makes this insert wait for it and then do nothing. If the row was created
        here, the event is its only state: applied. Otherwise the row exists and is committed,
        so the guarded ``UPDATE … WHERE newsletterOptOutAt IS NULL OR newsletterOptOutAt <=
        :occurred_at`` (with the tie rule) sees it; if another transaction updated the row
        first, PostgreSQL re-checks the guard on the row version it committed. Checking
        first and inserting second would not do: a row committed between the two statements
        would make the insert skip and the event be lost. The row is created in lower case
        so that concurrent first events in different cases collide on the unique constraint
        instead of creating two rows. Nothing commits; the caller's transaction does.
        """
        _require_timezone(occurred_at)
        if _create_new_address(session, subscription_id, email, opted_out, occurred_at):
            return True
        return _apply_unless_older(session, subscription_id, email, opted_out, occurred_at)


def _require_timezone(occurred_at: datetime) -> None:
    if occurred_at.tzinfo is None or occurred_at.utcoffset() is None:
        raise RepositoryError(
            "set_newsletter_opt_out: occurred_at must be timezone-aware "
            f"(got naive {occurred_at.isoformat()}); a naive time would be read in the "
            "database session's time zone and compare wrongly with stored events"
        )


def _create_new_address(
    session: Session,
    subscription_id: uuid.UUID,
    email: str,
    opted_out: bool,
    occurred_at: datetime,
) -> bool:
    """The address, lower-cased, with the event as its only state, unless it exists in any
    case; whether it was created here. A concurrent insert of the same address makes this
    one wait for it and then do nothing."""
    columns = TargetEmails.__table__.c
    new_row = select(
        literal(subscription_id, columns.subscriptionId.type),
        func.lower(email),
        literal(opted_out, columns.newsletterOptedOut.type),
        literal(occurred_at, columns.newsletterOptOutAt.type),
    ).where(~exists().where(_same_address(subscription_id, email)))
    create = (
        pg_insert(TargetEmails)
        .from_select(
            ["subscriptionId", "email", "newsletterOptedOut", "newsletterOptOutAt"], new_row
        )
        .on_conflict_do_nothing(index_elements=["subscriptionId", "email"])
        .returning(TargetEmails.id)
    )
    return session.execute(create).first() is not None


def _apply_unless_older(
    session: Session,
    subscription_id: uuid.UUID,
    email: str,
    opted_out: bool,
    occurred_at: datetime,
) -> bool:
    """The guarded ``UPDATE`` of every stored row of the address (any case); whether the
    event applied to one. PostgreSQL re-checks the guard on a row another transaction
    updated first."""
    guarded_update = (
        update(TargetEmails)
        .where(_same_address(subscription_id, email), _event_is_not_older(occurred_at, opted_out))
        .values(newsletterOptedOut=opted_out, newsletterOptOutAt=occurred_at, updatedAt=func.now())
        .returning(TargetEmails.id)
        .execution_options(synchronize_session="fetch")
    )
    return bool(session.execute(guarded_update).all())
