"""The states a lead and what follows it can be in (docs/leads.md): the lead itself, its
enrichment, its duplicate check and the messages queued for it.

Each value is what the ``leads``, ``lead_enrichments``, ``lead_duplicates`` and
``outbound_messages`` columns hold, so a member compares equal to the stored text.
"""

from __future__ import annotations

import enum


class LeadStatus(enum.StrEnum):
    """Where a lead is: open until it is won, lost or closed."""

    OPEN = "open"
    WON = "won"
    LOST = "lost"
    CLOSED = "closed"


class OwnerState(enum.StrEnum):
    """Who owns a lead, by the owner ladder: a pool member, a fallback rep (the pool's, else
    the subscription's), or nobody yet (waiting for someone to become assignable). Never the
    AI dialer's owner: that owner is not a human."""

    ASSIGNED = "assigned"
    FALLBACK = "fallback"
    WAITING = "waiting"


class EnrichmentStatus(enum.StrEnum):
    """What Domain Intelligence said about a lead's email domain."""

    ENRICHED = "enriched"  # the service knows the company
    NOT_FOUND = "not_found"  # a company domain the service does not know
    PERSONAL_EMAIL = "personal_email"  # never sent: a personal mailbox names no company
    NO_EMAIL = "no_email"
    UNAVAILABLE = "unavailable"  # no service, or the batch failed: asked again next run


class DuplicateMatch(enum.StrEnum):
    """What an older contact matched a lead on."""

    EMAIL = "email"
    PHONE = "phone"
    NONE = "none"  # checked: nothing older matches


class MessageStatus(enum.StrEnum):
    """Where an outbound message is."""

    QUEUED = "queued"
    # Handed to the sender: recorded before the provider is called, so a crash between the
    # call and its answer can never send the message a second time.
    SENDING = "sending"
    SENT = "sent"
    DELIVERED = "delivered"
    READ = "read"
    FAILED = "failed"
    CANCELLED = "cancelled"


def sql_values(states: type[enum.StrEnum]) -> str:
    """``'a', 'b', …``: the values of ``states`` as a SQL list, for a CHECK constraint."""
    return ", ".join(f"'{state.value}'" for state in states)
