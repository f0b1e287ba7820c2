"""Reading a scoring model file: the file IO around the pure
:func:`~morpheus_pipelines.tenants.rules.scoring_model.parse_model`."""

from __future__ import annotations

import tomllib
from pathlib import Path

from morpheus_pipelines.tenants import rules
from morpheus_pipelines.tenants.rules.scoring_model import (
    ScoringModel,
    ScoringModelError,
    parse_model,
)

# The model shipped with the package, beside the rules it parameterises.
DEFAULT_MODEL_PATH = Path(rules.__file__).with_name("scoring_model.toml")


def load_model(path: str | Path | None = None) -> ScoringModel:
    """Read and validate a scoring model TOML file (default: :data:`DEFAULT_MODEL_PATH`).

    Raises :class:`ScoringModelError` naming the file and the key for malformed TOML, unknown or
    missing keys, weights that do not add up to 100 (±0.01), thresholds that are not strictly
    descending within ``(0, 100]``, fractions outside ``[0, 1]`` and non-positive caps.
    ``FileNotFoundError`` propagates unchanged.
    """
    model_path = Path(path) if path is not None else DEFAULT_MODEL_PATH
    with model_path.open("rb") as handle:
        try:
            data = tomllib.load(handle)
        except tomllib.TOMLDecodeError as error:
            raise ScoringModelError(f"scoring model {model_path}: invalid TOML: {error}") from error
    return parse_model(data, source=str(model_path))
