"""The scoring model as a Dagster resource."""

from functools import cached_property
from typing import TYPE_CHECKING

import dagster as dg

if TYPE_CHECKING:
    from morpheus_pipelines.tenants.rules.scoring_model import ScoringModel


class ScoringModelResource(dg.ConfigurableResource):
    """The versioned scoring model (weights and priority thresholds, see docs/scoring.md).
    `model_path` empty means the model shipped with the package."""

    model_path: str = ""

    @cached_property
    def model(self) -> "ScoringModel":
        # The model brings numpy: loaded by the run that scores, not by the code location.
        from morpheus_pipelines.tenants.steps.scoring_model import load_model

        return load_model(self.model_path or None)
