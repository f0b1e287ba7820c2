"""Attribution of won leads, five ways side by side (docs/leads.md, "Attribution").

No model is the truth; each is a way of splitting one won lead's credit among the touches
that came before the win. A sales manager sees them next to each other, with a sentence each,
and where they disagree most: that is where the choice of model changes the story.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

TIME_DECAY_HALF_LIFE = timedelta(days=7)


@dataclass(frozen=True)
class AttributedTouch:
    occurred_at: datetime
    channel: str
    owner: str  # who made or handled the touch: a HubSpot owner id


@dataclass(frozen=True)
class WonLead:
    lead_id: str
    won_at: datetime
    touches: Sequence[AttributedTouch]


def _first(touches: Sequence[AttributedTouch], won_at: datetime) -> list[float]:
    return [1.0] + [0.0] * (len(touches) - 1)


def _last(touches: Sequence[AttributedTouch], won_at: datetime) -> list[float]:
    return [0.0] * (len(touches) - 1) + [1.0]


def _linear(touches: Sequence[AttributedTouch], won_at: datetime) -> list[float]:
    return [1.0 / len(touches)] * len(touches)


def _position_based(touches: Sequence[AttributedTouch], won_at: datetime) -> list[float]:
    n = len(touches)
    if n <= 2:
        return [1.0 / n] * n
    middle = 0.2 / (n - 2)
    return [0.4] + [middle] * (n - 2) + [0.4]


def _time_decay(touches: Sequence[AttributedTouch], won_at: datetime) -> list[float]:
    # Measured from the newest touch, whose weight is 1, rather than from the win: the shares
    # are the same, and touches decades old cannot all underflow to zero.
    newest = max(touch.occurred_at for touch in touches)
    weights = [0.5 ** ((newest - touch.occurred_at) / TIME_DECAY_HALF_LIFE) for touch in touches]
    total = sum(weights)
    return [weight / total for weight in weights]


@dataclass(frozen=True)
class Model:
    name: str
    explanation: str
    split: Callable[[Sequence[AttributedTouch], datetime], list[float]]


MODELS: tuple[Model, ...] = (
    Model("first_touch", "All credit to the touch that brought the lead in.", _first),
    Model("last_touch", "All credit to the last touch before the win.", _last),
    Model("linear", "Every touch before the win gets an equal share.", _linear),
    Model(
        "position_based",
        "40 % to the first touch, 40 % to the last, 20 % shared by the ones between "
        "(one or two touches share equally).",
        _position_based,
    ),
    Model(
        "time_decay",
        "A touch's share halves for every 7 days it came before the win.",
        _time_decay,
    ),
)


def credit(touches: Sequence[AttributedTouch], won_at: datetime, model: Model) -> list[float]:
    """Each touch's share of one win (the shares sum to 1); touches in time order."""
    if not touches:
        return []
    return model.split(sorted(touches, key=lambda touch: touch.occurred_at), won_at)


@dataclass
class Attribution:
    """Credit per model, per channel and per owner, in won leads (each win is 1.0)."""

    won_leads: int = 0
    leads_without_touches: int = 0
    by_channel: dict[str, dict[str, float]] = field(default_factory=dict)
    by_owner: dict[str, dict[str, float]] = field(default_factory=dict)

    def disagreements(self, dimension: str, top: int = 5) -> list[tuple[str, float, str, str]]:
        """``(value, spread, model giving most, model giving least)``, widest spread first:
        where the choice of model moves the most credit."""
        table = self.by_channel if dimension == "channel" else self.by_owner
        rows = []
        for value, per_model in table.items():
            most = max(per_model, key=per_model.__getitem__)
            least = min(per_model, key=per_model.__getitem__)
            rows.append((value, per_model[most] - per_model[least], most, least))
        rows.sort(key=lambda row: (-row[1], row[0]))
        return rows[:top]


def attribute(leads: Iterable[WonLead]) -> Attribution:
    result = Attribution()
    by_channel: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(_names(), 0.0))
    by_owner: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(_names(), 0.0))
    for lead in leads:
        result.won_leads += 1
        touches = sorted(lead.touches, key=lambda touch: touch.occurred_at)
        if not touches:
            result.leads_without_touches += 1
            continue
        for model in MODELS:
            for touch, share in zip(touches, credit(touches, lead.won_at, model), strict=True):
                by_channel[touch.channel][model.name] += share
                by_owner[touch.owner][model.name] += share
    result.by_channel = dict(sorted(by_channel.items()))
    result.by_owner = dict(sorted(by_owner.items()))
    return result


def _names() -> list[str]:
    return [model.name for model in MODELS]
