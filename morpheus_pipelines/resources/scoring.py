"""The scoring model as a Dagster resource."""

from functools import cached_property

import dagster as dg

from morpheus_pipelines.tenants.rules.scoring_model import ScoringModel
from morpheus_pipelines.tenants.steps.scoring_model import load_model


class ScoringModelResource(dg.ConfigurableResource):
    """The versioned scoring model (weights and priority thresholds, see docs/scoring.md).
    `model_path` empty means the model shipped with the package."""

    model_path: str = ""

    @cached_property
    def model(self) -> ScoringModel:
        return load_model(self.model_path or None)
