"""Each scoring model version recorded with its numbers on first use, and a version that
names other numbers refused (docs/scoring.md, "Versions")."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import dagster as dg

from morpheus_pipelines.definitions import defs
from morpheus_pipelines.resources import ScoringModelResource
from morpheus_pipelines.tenants.rules.scoring_model import parse_model
from morpheus_pipelines.tenants.steps.scoring_model import DEFAULT_MODEL_PATH, load_model
from tests.support.pipeline import Pipeline
from tests.support.tenants import PARTITION
from tests.tenants.test_scoring_pipeline import _routed_and_scored

SCORED_TABLES = (
    "apac_tenant_score_snapshots",
    "apac_active_tenants",
    "apac_sales_owned_tenants",
    "apac_scoring_models",
)


def _score_with(pipeline: Pipeline, model_file: Path) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [defs.get_assets_def("tenant_scores")],
        partition_key=PARTITION,
        resources={
            **pipeline.resources(),
            "scoring": ScoringModelResource(model_path=str(model_file)),
        },
        raise_on_error=False,
    )


def _model_file(tmp_path: Path, *, version: str | None = None) -> Path:
    """The shipped model with two weights moved (still adding up to 100)."""
    shipped = DEFAULT_MODEL_PATH.read_text(encoding="utf-8")
    text = shipped.replace("plan = 20 ", "plan = 21 ").replace("seats = 15 ", "seats = 14 ")
    assert text.count("= 21 ") == 1 and text.count("= 14 ") == 1, "the weights moved"
    if version is not None:
        text = text.replace('version = "2026-11-30.1"', f'version = "{version}"')
    path = tmp_path / "scoring_model.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_model_is_recorded_once_with_numbers_that_read_back(pipeline: Pipeline) -> None:
    assert _routed_and_scored(pipeline).success
    model = load_model()
    rows = pipeline.query(
        "SELECT score_model_version, fingerprint, document, first_partition_key "
        "FROM apac_scoring_models"
    )
    assert [row[:2] + row[3:] for row in rows] == [(model.version, model.fingerprint, PARTITION)]
    stored = parse_model(rows[0][2], source=model.source)
    assert stored.fingerprint == model.fingerprint
    assert {f.name: getattr(stored, f.name) for f in dataclasses.fields(stored)} == {
        f.name: getattr(model, f.name) for f in dataclasses.fields(model)
    }
    assert pipeline.score(PARTITION).success
    assert pipeline.query("SELECT count(*) FROM apac_scoring_models") == [(1,)]


def test_a_version_first_scored_with_other_numbers_is_refused_before_any_write(
    pipeline: Pipeline, tmp_path: Path
) -> None:
    assert _routed_and_scored(pipeline).success
    before = {table: pipeline.table_hash(table) for table in SCORED_TABLES}

    refused = _score_with(pipeline, _model_file(tmp_path))

    assert not refused.success
    (failure,) = refused.get_step_failure_events()
    error = failure.step_failure_data.error
    message = error.cause.message if error.cause else error.message
    assert "version '2026-11-30.1' was first scored with other numbers" in message
    assert f"partition {PARTITION}" in message
    assert {table: pipeline.table_hash(table) for table in SCORED_TABLES} == before

    # The same numbers under a version of their own score, and are recorded beside it.
    assert _score_with(pipeline, _model_file(tmp_path, version="2026-12-07.1")).success
    assert pipeline.query("SELECT score_model_version FROM apac_scoring_models ORDER BY 1") == [
        ("2026-11-30.1",),
        ("2026-12-07.1",),
    ]
    assert pipeline.query(
        "SELECT DISTINCT score_model_version FROM apac_tenant_score_snapshots"
    ) == [("2026-12-07.1",)]


def test_the_scoring_commands_tell_what_a_run_would_do(
    pipeline: Pipeline, tmp_path: Path, capsys, monkeypatch
) -> None:
    from morpheus_pipelines.cli import main

    monkeypatch.setenv("MORPHEUS_DATABASE_URL", pipeline.database_url)
    model = load_model()
    assert main(["scoring", "check"]) == 0
    assert capsys.readouterr().out.strip() == (
        f"model {model.version} fingerprint={model.fingerprint} new "
        "(the next scoring run records it)"
    )
    assert _routed_and_scored(pipeline).success
    capsys.readouterr()

    assert main(["scoring", "check"]) == 0
    assert capsys.readouterr().out.startswith(
        f"model {model.version} fingerprint={model.fingerprint} recorded "
        f"first-scored={PARTITION} run="
    )
    assert main(["scoring", "check", "--model", str(_model_file(tmp_path))]) == 1
    assert "was first scored with other numbers" in capsys.readouterr().err
    renamed = _model_file(tmp_path, version="2026-12-07.1")
    assert main(["scoring", "check", "--model", str(renamed)]) == 0
    assert " new (" in capsys.readouterr().out

    broken = tmp_path / "broken.toml"
    broken.write_text(
        DEFAULT_MODEL_PATH.read_text(encoding="utf-8").replace("cap = 500", "capp = 500")
    )
    assert main(["scoring", "check", "--model", str(broken)]) == 2
    assert "unknown key 'signals.seats.capp'" in capsys.readouterr().err

    assert main(["scoring", "versions"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith(
        f"{model.version} fingerprint={model.fingerprint} first-scored={PARTITION} "
    )
