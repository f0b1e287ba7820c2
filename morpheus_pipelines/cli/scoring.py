"""``morpheus scoring``: a scoring model file against the versions the warehouse has scored
with (docs/scoring.md, "Versions")."""

from __future__ import annotations

import sys

import click

from morpheus_pipelines.cli.db import checked_warehouse_url
from morpheus_pipelines.cli.parsing import Group
from morpheus_pipelines.cli.setup_options import Refused, run, word


@click.group(cls=Group)
def scoring() -> None:
    """Check a scoring model file before a run uses it, or list the model versions the
    warehouse has scored with."""


@scoring.command()
@click.option(
    "--model",
    "model_path",
    metavar="PATH",
    default="",
    help="A scoring model TOML file (default: the model shipped with the package, what a run "
    "uses unless the scoring resource's model_path says otherwise).",
)
def check(model_path: str) -> int:
    """Validate the model file and compare it with the warehouse's record of its version;
    print `model VERSION fingerprint=FP recorded|new`. Exit 1, saying so, when the version
    was first scored with other numbers: a run would refuse it."""
    from morpheus_pipelines.db.session import get_session
    from morpheus_pipelines.tenants.rules.scoring_model import (
        ModelVersionReused,
        ScoringModelError,
        refuse_reused_version,
    )
    from morpheus_pipelines.tenants.steps.scoring_model import load_model
    from morpheus_pipelines.tenants.store.scoring_models import ScoringModelRepository

    def body() -> int:
        try:
            model = load_model(model_path or None)
        except (ScoringModelError, OSError) as error:
            raise Refused("--model", str(error)) from error
        with get_session(checked_warehouse_url()) as session:
            recorded = ScoringModelRepository().recorded(session, version=model.version)
        line = f"model {word(model.version)} fingerprint={model.fingerprint}"
        if recorded is None:
            print(f"{line} new (the next scoring run records it)")
            return 0
        try:
            refuse_reused_version(
                model,
                recorded_fingerprint=recorded.fingerprint,
                first_partition_key=recorded.first_partition_key,
                first_run_id=recorded.first_run_id,
            )
        except ModelVersionReused as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        print(
            f"{line} recorded first-scored={recorded.first_partition_key} "
            f"run={recorded.first_run_id}"
        )
        return 0

    return run(body)


@scoring.command()
def versions() -> int:
    """Print each model version the warehouse has scored with, oldest first: `VERSION
    fingerprint=FP first-scored=PARTITION run=RUN recorded=TIME`."""
    from morpheus_pipelines.db.session import get_session
    from morpheus_pipelines.tenants.store.scoring_models import ScoringModelRepository

    def body() -> int:
        with get_session(checked_warehouse_url()) as session:
            records = ScoringModelRepository().in_order(session)
            for record in records:
                print(
                    f"{word(record.score_model_version)} fingerprint={record.fingerprint} "
                    f"first-scored={record.first_partition_key} run={record.first_run_id} "
                    f"recorded={record.recorded_at.isoformat()}"
                )
        return 0

    return run(body)
