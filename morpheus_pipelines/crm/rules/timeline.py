"""The rules of the unified timeline (docs/leads.md, "The timeline"): what an activity may
say, the WhatsApp window, and when an automation may nudge a lead.

Plain Python. The sensor evaluates the same rules as one SQL statement over the
``activities`` table; the replay functions here state them one lead at a time, so a test can
hold the statement to them and show a sales manager what a timer would have sent instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

WHATSAPP_WINDOW = timedelta(hours=24)
CHANNELS = ("form", "whatsapp", "call", "email")
DIRECTIONS = ("inbound", "outbound")
MESSAGE_CHANNELS = ("whatsapp", "email")
# Clocks drift: a webhook stamped a little ahead of ours is not "in the future".
CLOCK_SKEW = timedelta(minutes=5)

# External ids the product writes itself: a lead's form entry, a dialer call. A caller of
# ``POST /v1/activities`` may not take one, or the entry it stands for would find its id in
# use and never reach the timeline. All-digit ids are HubSpot engagement ids (the engagement
# sync writes them bare), and the other prefixes are kept for the senders still to come.
FORM_EXTERNAL_ID_PREFIX = "form:"
DIALER_CALL_EXTERNAL_ID_PREFIX = "dialer-call:"
RESERVED_EXTERNAL_ID_PREFIXES = (
    FORM_EXTERNAL_ID_PREFIX,
    DIALER_CALL_EXTERNAL_ID_PREFIX,
    "hubspot:",
    "meta:",
    "whatsapp:",
    "google-ads:",
    "message:",
)


class InvalidActivity(ValueError):
    """An activity or message the timeline cannot take; ``field`` names the culprit."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def check_caller_external_id(external_id: str) -> str:
    """``external_id`` unless the product keeps it for its own entries
    (:data:`RESERVED_EXTERNAL_ID_PREFIXES`, or all digits)."""
    lowered = external_id.lower()
    reserved = next((p for p in RESERVED_EXTERNAL_ID_PREFIXES if lowered.startswith(p)), None)
    if reserved is not None:
        raise InvalidActivity(
            "external_id", f"external_id may not start with {reserved!r}: the product keeps it"
        )
    if external_id.isascii() and external_id.isdigit():
        raise InvalidActivity(
            "external_id",
            "an all-digit external_id is kept for HubSpot engagements; prefix yours "
            "(e.g. 'crm-12345')",
        )
    return external_id


def check_occurred_at(occurred_at: datetime, now: datetime) -> datetime:
    """The instant in UTC; refuses a time without a timezone (ambiguous: whose 9 o'clock?)
    and one later than ``now`` beyond clock skew (it would hold the WhatsApp window open and
    silence automations for a conversation that has not happened)."""
    if occurred_at.tzinfo is None or occurred_at.utcoffset() is None:
        raise InvalidActivity(
            "occurred_at", "occurred_at needs a timezone, e.g. 2026-12-01T09:30:00+08:00"
        )
    try:
        instant = occurred_at.astimezone(UTC)
    except OverflowError:
        raise InvalidActivity("occurred_at", "occurred_at is out of range") from None
    if instant > now + CLOCK_SKEW:
        raise InvalidActivity(
            "occurred_at", f"occurred_at {instant.isoformat()} is in the future (now {now})"
        )
    return instant


@dataclass(frozen=True)
class WhatsAppWindow:
    open: bool
    opened_at: datetime | None
    closes_at: datetime | None
    remaining_seconds: int

    def as_json(self) -> dict[str, object]:
        return {
            "open": self.open,
            "opened_at": self.opened_at.isoformat() if self.opened_at else None,
            "closes_at": self.closes_at.isoformat() if self.closes_at else None,
            "remaining_seconds": self.remaining_seconds,
        }


def whatsapp_window(last_inbound_whatsapp: datetime | None, now: datetime) -> WhatsAppWindow:
    """24 hours from the lead's last *inbound* WhatsApp message; our own messages do not
    reopen it. A closed window still says when it opened and closed, if it ever did."""
    if last_inbound_whatsapp is None:
        return WhatsAppWindow(False, None, None, 0)
    closes_at = last_inbound_whatsapp + WHATSAPP_WINDOW
    remaining = (closes_at - now).total_seconds()
    if remaining <= 0:
        return WhatsAppWindow(False, last_inbound_whatsapp, closes_at, 0)
    return WhatsAppWindow(True, last_inbound_whatsapp, closes_at, int(remaining))


# -- automations -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Touch:
    """One entry of a lead's timeline, as the automations see it."""

    occurred_at: datetime
    channel: str  # one of CHANNELS
    direction: str  # inbound | outbound
    by_ai_dialer: bool = False

    @property
    def is_engagement(self) -> bool:
        """The lead spoke to us on any channel, or a human rep called them."""
        if self.direction == "inbound":
            return True
        return self.channel == "call" and not self.by_ai_dialer


@dataclass(frozen=True)
class NudgeRule:
    """ "No engagement for ``quiet`` → nudge on ``channel``". Only a free-form WhatsApp
    message is bound to the 24-hour window: such a rule nudges ``window_lead`` before the
    window closes, never outside it. An approved template may go at any time, so a WhatsApp
    template rule may name ``window_lead`` (to land before the window closes when it is open)
    and fires on its quiet period whether or not the window is open."""

    channel: str
    quiet: timedelta
    window_lead: timedelta | None = None
    kind: str = "free_form"

    def __post_init__(self) -> None:
        if self.channel not in MESSAGE_CHANNELS:
            raise InvalidActivity("channel", f"a rule nudges on {MESSAGE_CHANNELS}")
        if self.kind not in ("free_form", "template"):
            raise InvalidActivity("kind", "a rule sends a free_form message or a template")
        if self.quiet <= timedelta(0):
            raise InvalidActivity("quiet", "the quiet period must be positive")
        if self.channel != "whatsapp" and self.window_lead is not None:
            raise InvalidActivity("window_lead", "only a WhatsApp rule names window_lead")
        if self.window_bound and self.window_lead is None:
            raise InvalidActivity(
                "window_lead", "a free-form WhatsApp rule names window_lead (the window binds it)"
            )
        if self.window_lead is not None and (
            self.window_lead <= timedelta(0) or self.quiet + self.window_lead > WHATSAPP_WINDOW
        ):
            raise InvalidActivity(
                "window_lead",
                "quiet + window_lead must fit in the 24-hour window, or the rule never fires",
            )

    @property
    def window_bound(self) -> bool:
        """Whether the rule may only fire inside the WhatsApp window (free-form WhatsApp)."""
        return self.channel == "whatsapp" and self.kind == "free_form"


def _hours(delta: timedelta) -> str:
    hours = delta.total_seconds() / 3600
    return f"{hours:g} h"


def describe_rule(rule: NudgeRule) -> str:
    """The sentence the UI shows for a rule: what it waits for and when it cannot fire."""
    quiet = (
        f"when the lead has been quiet for {_hours(rule.quiet)} (no inbound message on any "
        "channel and no call from a rep)"
    )
    if rule.window_lead is None:
        return f"Nudge by {rule.channel} {quiet}; once per quiet period."
    if not rule.window_bound:
        return (
            f"Nudge on WhatsApp with a template {quiet}, {_hours(rule.window_lead)} before "
            "the 24-hour window closes when it is open; a template may go outside the window, "
            "so the nudge is never held back by it; once per quiet period."
        )
    return (
        f"Nudge on WhatsApp {_hours(rule.window_lead)} before the 24-hour window closes, "
        f"{quiet}; never outside the window, so never more than 24 h after the lead's last "
        "WhatsApp message; once per quiet period."
    )


def nudge_due_at(
    rule: NudgeRule, quiet_since: datetime, last_inbound_whatsapp: datetime | None
) -> datetime | None:
    """When the rule nudges a lead quiet since ``quiet_since``; ``None`` if it cannot (a
    free-form WhatsApp rule with no window, or whose time falls after the window closes; a
    template is never held back by the window)."""
    due = quiet_since + rule.quiet
    if rule.window_lead is None:
        return due
    if last_inbound_whatsapp is None:
        return None if rule.window_bound else due
    closes_at = last_inbound_whatsapp + WHATSAPP_WINDOW
    due = max(due, closes_at - rule.window_lead)
    return due if due < closes_at or not rule.window_bound else None


def replay_evidence_rule(
    rule: NudgeRule, created_at: datetime, history: Iterable[Touch], until: datetime
) -> list[datetime]:
    """The nudges the evidence rule sends to one lead up to ``until``: at most one per quiet
    period, where a quiet period starts at creation or at the last engagement."""
    touches = sorted(
        (t for t in history if t.occurred_at <= until), key=lambda touch: touch.occurred_at
    )
    quiet_since, last_whatsapp = created_at, None
    sent: list[datetime] = []
    fired_for: datetime | None = None

    def fire_if_due(before: datetime, *, inclusive: bool) -> None:
        nonlocal fired_for
        due = nudge_due_at(rule, quiet_since, last_whatsapp)
        if due is None or fired_for == quiet_since:
            return
        if due < before or (inclusive and due == before):
            sent.append(due)
            fired_for = quiet_since

    for touch in touches:
        # An engagement at the very instant the nudge falls due wins: the lead is not quiet.
        fire_if_due(touch.occurred_at, inclusive=False)
        if touch.is_engagement:
            quiet_since = max(quiet_since, touch.occurred_at)
        if touch.channel == "whatsapp" and touch.direction == "inbound":
            last_whatsapp = touch.occurred_at
    fire_if_due(until, inclusive=True)
    return sent


def replay_timer_rule(
    channel: str, every: timedelta, created_at: datetime, history: Sequence[Touch], until: datetime
) -> list[datetime]:
    """What a plain timer sends, for comparison: "no reply on this channel in N hours →
    nudge", counted from creation and from its own last nudge. It sees only replies on its
    own channel; a reply elsewhere or a rep's call does not stop it, and on WhatsApp it does
    not know the window exists."""
    sent: list[datetime] = []
    clock = created_at
    replies = sorted(
        t.occurred_at for t in history if t.channel == channel and t.direction == "inbound"
    )
    while clock + every <= until:
        due = clock + every
        replied = [r for r in replies if clock < r <= due]
        if replied:
            clock = replied[-1]
            continue
        sent.append(due)
        clock = due
    return sent


def outside_whatsapp_window(moment: datetime, history: Iterable[Touch]) -> bool:
    """Whether a free-form WhatsApp message at ``moment`` would fall outside the window."""
    last = max(
        (
            t.occurred_at
            for t in history
            if t.channel == "whatsapp" and t.direction == "inbound" and t.occurred_at <= moment
        ),
        default=None,
    )
    return not whatsapp_window(last, moment).open


# The HubSpot engagement sync brings reps' calls onto the timeline every 15 minutes. Older
# than this, it has stopped (four runs missed, not one run late), and a lead a rep has since
# called would look quiet: the automations wait for it.
ENGAGEMENT_SYNC_MAX_AGE = timedelta(hours=1)


def engagement_sync_missing(
    last_synced_at: datetime | None,
    now: datetime,
    max_age: timedelta = ENGAGEMENT_SYNC_MAX_AGE,
) -> str | None:
    """Why silence cannot be judged now: the HubSpot engagement sync never ran, or not within
    ``max_age`` (a rep's call would be missing from the timeline); ``None`` when it did."""
    if last_synced_at is None:
        return (
            "the HubSpot engagement sync has never run, so no rep's HubSpot call is on the "
            "timeline and every lead would look quiet"
        )
    age = now - last_synced_at
    if age > max_age:
        return (
            f"the HubSpot engagement sync last ran {age.total_seconds() / 3600:.1f} h ago "
            f"(more than {_hours(max_age)}), so a rep's recent HubSpot call may be missing "
            "from the timeline"
        )
    return None
