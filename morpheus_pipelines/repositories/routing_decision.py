"""Repository of the routing decision record."""

from __future__ import annotations

from morpheus_pipelines.models import RoutingDecision
from morpheus_pipelines.repositories.bulk import SetBasedRepository


class RoutingDecisionRepository(SetBasedRepository[RoutingDecision]):
    model_class = RoutingDecision
