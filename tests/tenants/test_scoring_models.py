"""Each scoring model version recorded with its numbers on first use, and a version that
names other numbers refused (docs/scoring.md, "Versions")."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import dagster as dg

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.definitions import defs
from morpheus_pipelines.resources import ScoringModelResource
from morpheus_pipelines.tenants.rules.scoring_model import model_document, parse_model
from morpheus_pipelines.tenants.steps.scoring_model import DEFAULT_MODEL_PATH, load_model
from morpheus_pipelines.tenants.store.scoring_models import ScoringModelRepository
from tests.support.locks import wait_until_blocked
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
    first_run = _routed_and_scored(pipeline)
    assert first_run.success
    model = load_model()
    record = "SELECT * FROM apac_scoring_models"
    (row,) = pipeline.query(record)
    version, fingerprint, document, partition_key, run_id, _ = row
    assert (version, fingerprint) == (model.version, model.fingerprint)
    assert (partition_key, run_id) == (PARTITION, first_run.run_id)
    stored = parse_model(document, source=model.source)
    assert stored.fingerprint == model.fingerprint
    assert {f.name: getattr(stored, f.name) for f in dataclasses.fields(stored)} == {
        f.name: getattr(model, f.name) for f in dataclasses.fields(model)
    }
    assert pipeline.score(PARTITION).success
    assert pipeline.query(record) == [row], "a later run rewrote the first run's record"


def test_two_runs_recording_one_version_at_once_both_get_the_first_record(
    database_url: str,
) -> None:
    repository = ScoringModelRepository()
    model = load_model()

    def record(session, run_id: str):
        return repository.record(
            session,
            version=model.version,
            fingerprint=model.fingerprint if run_id == "first" else "other",
            document=model_document(model),
            partition_key="2026-11-28",
            run_id=run_id,
        )

    seen: list[tuple[str, str]] = []
    with get_session(database_url) as first:
        record(first, "first")  # not committed yet: the second waits for it
        second = threading.Thread(
            target=lambda: _record_in_own_session(database_url, record, seen), daemon=True
        )
        second.start()
        wait_until_blocked(database_url, second)
    second.join(timeout=30)
    assert seen == [(model.fingerprint, "first")]


def _record_in_own_session(database_url: str, record, seen: list) -> None:
    with get_session(database_url) as session:
        got = record(session, "second")
        seen.append((got.fingerprint, got.first_run_id))


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
