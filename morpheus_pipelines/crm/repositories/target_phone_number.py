"""Repository of phone numbers to call (docs/data-layer.md, "TargetPhoneNumberRepository").

Numbers arrive formatted by whoever typed or exported them ("+61 2 9999 0000", "(02) 9999
0000", "61299990000"), and lookups come from dialers and webhooks with yet another format, so
the lookup matches on digits rather than characters.
"""

from __future__ import annotations

import re
import uuid

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import TargetPhoneNumber
from morpheus_pipelines.platform.store.base import BaseRepository

# A probe with fewer significant digits than this matches too much of any table to identify
# a number (an empty probe would match every row), so it matches nothing.
MIN_MATCH_DIGITS = 6

_NON_DIGITS = re.compile(r"\D")


def significant_digits(phone_number: str) -> str:
    """The digits of ``phone_number`` without leading zeros: the form the lookup matches.

    Dropping every non-digit removes formatting (spaces, dashes, dots, brackets, the "+").
    Dropping leading zeros removes a national trunk prefix ("02 9999 0000") and an
    international "00" prefix ("0061 2 9999 0000"), neither of which appears in a number
    stored in international form.
    """
    return _NON_DIGITS.sub("", phone_number).lstrip("0")


class TargetPhoneNumberRepository(BaseRepository[TargetPhoneNumber]):
    model_class = TargetPhoneNumber

    def get_by_phone_number(self, session: Session, phone_number: str) -> TargetPhoneNumber | None:
        """The stored number that contains ``phone_number``, tolerating format differences.

        A substring match, as docs/data-layer.md specifies (``phoneNumber.contains(…)``), but
        on digits: the probe is reduced to :func:`significant_digits` and compared with the
        stored number stripped of non-digits (``regexp_replace``). That tolerates, for a
        stored "+61 2 9999 0000": "299990000", "02 9999 0000", "(02) 9999-0000",
        "+61299990000", "0061 2 9999 0000" and the local "9999 0000". What it does not
        tolerate: a probe carrying more than the stored number — "+61 2 9999 0000" does not
        find a number stored nationally as "02 9999 0000" (its digits "61299990000" are not
        inside "0299990000"). A raw character substring would have missed every one of the
        examples above but the last; any probe with at least :data:`MIN_MATCH_DIGITS` digits
        that the raw match finds, this one finds too. Fewer digits (or none) match nothing.

        Several rows can match (a number stored twice, a short probe inside longer numbers):
        a row whose digits end with the probe comes first (the probe is the whole number, not
        a fragment of its middle), then live rows (not deleted, active), then the oldest id.
        The lookup is not tenant-scoped, exactly as specified; it scans the table
        (``regexp_replace`` defeats any plain index).
        """
        probe = significant_digits(phone_number)
        if len(probe) < MIN_MATCH_DIGITS:
            return None
        stored = func.regexp_replace(TargetPhoneNumber.phoneNumber, "[^0-9]", "", "g")
        statement = (
            select(TargetPhoneNumber)
            .where(stored.contains(probe))
            .order_by(
                stored.endswith(probe).desc(),
                TargetPhoneNumber.isDeleted.asc(),
                TargetPhoneNumber.isActive.desc(),
                TargetPhoneNumber.id.asc(),
            )
            .limit(1)
        )
        return session.scalars(statement).first()

    def list_pending_twilio_sync(
        self, session: Session, *, subscription_id: uuid.UUID, limit: int
    ) -> list[TargetPhoneNumber]:
        """The work queue of phone line intelligence: numbers Twilio Lookup has not described.

        ``syncTwilio`` false, active and not deleted, ordered ``syncPriority DESC`` (each
        Lookup costs money, so the priority decides what the budget is spent on), then
        ``createdAt ASC`` (nothing of equal priority is starved), then ``id`` (a total order).
        ``limit`` has no default: the caller passes the configured batch size,
        ``load_settings().phone_agent_batch_size`` (``PHONE_AGENT_BATCH_SIZE``).
        """
        statement = (
            select(TargetPhoneNumber)
            .where(
                TargetPhoneNumber.subscriptionId == subscription_id,
                TargetPhoneNumber.syncTwilio.is_(False),
                TargetPhoneNumber.isActive.is_(True),
                TargetPhoneNumber.isDeleted.is_(False),
            )
            .order_by(
                TargetPhoneNumber.syncPriority.desc(),
                TargetPhoneNumber.createdAt.asc(),
                TargetPhoneNumber.id.asc(),
            )
            .limit(limit)
        )
        return list(session.scalars(statement))
