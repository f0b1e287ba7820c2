"""Repositories of email campaigns (docs/data-layer.md, "Email repositories").

``Email`` and ``EmailVariation`` need nothing beyond ``BaseRepository``: their handlers
look templates up by id and filter with ``filter_by``. ``EmailCampaignTarget`` adds the two
operations of the email agent: finding the recipient a reply came from,
and recording how the reply was categorised.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import Email, EmailCampaignTarget, EmailVariation
from morpheus_pipelines.platform.store.base import BaseRepository


class EmailRepository(BaseRepository[Email]):
    """A plain model wrapper: an email template of a campaign."""

    model_class = Email


class EmailVariationRepository(BaseRepository[EmailVariation]):
    """A plain model wrapper: a variant of an email template."""

    model_class = EmailVariation


class EmailCampaignTargetRepository(BaseRepository[EmailCampaignTarget]):
    model_class = EmailCampaignTarget

    def get_by_campaign_and_email(
        self, session: Session, *, campaign_id: str, email: str
    ) -> EmailCampaignTarget | None:
        """The recipient of ``campaign_id`` whose address equals ``email`` ignoring case.

        Replies come back from mail servers and clients that change the case of an address
        ("Jane.Doe@Example.com" for "jane.doe@example.com"), so an exact match would miss
        them. Both sides go through PostgreSQL's ``lower()`` so the folding is the same
        whichever side the address came from. The unique constraint on ``(campaignId,
        email)`` is case-sensitive, so two rows differing only in case can exist: the oldest
        (lowest ``id``) is returned, deterministically.
        """
        statement = (
            select(EmailCampaignTarget)
            .where(
                EmailCampaignTarget.campaignId == campaign_id,
                func.lower(EmailCampaignTarget.email) == func.lower(email),
            )
            .order_by(EmailCampaignTarget.id.asc())
            .limit(1)
        )
        return session.scalars(statement).first()

    def update_categorisation(
        self,
        session: Session,
        record: EmailCampaignTarget,
        *,
        category: str,
        categorised_at: datetime,
        category_model: str,
    ) -> EmailCampaignTarget:
        """Write the verdict with when and by which model it was reached; flush, return it.

        ``categoryModel`` is stored next to the verdict so a misclassification can be traced
        back to the model that produced it (docs/data-layer.md, "Email repositories").
        """
        return self.update(
            session,
            record,
            {
                "category": category,
                "categorisedAt": categorised_at,
                "categoryModel": category_model,
            },
        )
