"""The deployment files against their published schemas and against the code they configure.

* deploy/compose.yaml against the Compose Specification's schema (tests/deploy/schemas/);
* deploy/helm/intake-api.yaml against the Kubernetes v1.33 Deployment, Service and Job schemas;
* deploy/dagster.yaml through Dagster's own instance-config validation, and its compute-log
  manager's config against that class's config schema;
* the Helm values against the same instance choices (the chart's own schema is not vendored:
  tests/deploy/schemas/README.md);
* deploy/Dockerfile: the shape the image test relies on.
Each schema is also shown to refuse a file with one mistake, so a pass means something."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from dagster._config import process_config
from dagster._core.instance.config import dagster_instance_config
from dagster_aws.s3.compute_log_manager import S3ComputeLogManager

from morpheus_pipelines.db.embedded import SERVER_OPTIONS
from morpheus_pipelines.platform.settings import DEFAULTS
from tests.support.image import stages

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
SCHEMAS = Path(__file__).resolve().parent / "schemas"
# Set by the deployment files for the code of other changes or for Dagster and AWS
# themselves, not (yet) in platform/settings.py.
OTHER_VARIABLES = {
    "MORPHEUS_DAGSTER_DATABASE_URL",  # db/urls.py
    "MORPHEUS_REPORTS_URL",  # DESIGN §11: reports to a folder or s3://
    "MORPHEUS_INTAKE_WORKERS",  # deploy/entrypoint.sh
}


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def _errors(schema: dict[str, Any], document: Any) -> list[str]:
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


# --- compose ------------------------------------------------------------------------------


def test_compose_file_is_valid_compose_spec() -> None:
    schema = json.loads((SCHEMAS / "compose-spec.json").read_text())
    compose = _yaml(DEPLOY / "compose.yaml")
    assert _errors(schema, compose) == []
    broken = copy.deepcopy(compose)
    broken["services"]["intake"]["healthchek"] = broken["services"]["intake"].pop("healthcheck")
    assert _errors(schema, broken), "the compose schema accepted an unknown service key"


def test_compose_runs_every_process_with_a_health_check() -> None:
    services = _yaml(DEPLOY / "compose.yaml")["services"]
    assert set(services) == {"postgres", "migrate", "code-server", "webserver", "daemon", "intake"}
    for name, service in services.items():
        if name != "migrate":  # a one-shot job
            assert service["healthcheck"]["test"], name
    roles = {name: service.get("command") for name, service in services.items()}
    assert roles["code-server"] == ["code-server"] and roles["intake"] == ["intake"]
    assert services["intake"]["depends_on"]["migrate"]["condition"] == (
        "service_completed_successfully"
    )


def test_compose_postgres_has_the_benchmarks_settings_but_durable_commits() -> None:
    command = _yaml(DEPLOY / "compose.yaml")["services"]["postgres"]["command"]
    assert command[0] == "postgres"
    options = dict(word.split("=", 1) for word in command[1:] if word != "-c")
    tuned = {
        key: value
        for key, value in SERVER_OPTIONS.items()
        if key not in {"listen_addresses", "unix_socket_directories", "synchronous_commit"}
    }
    assert {key: options.get(key) for key in tuned} == tuned
    assert SERVER_OPTIONS["synchronous_commit"] == "off"  # the embedded server's, for speed
    assert options["synchronous_commit"] == "on"


def test_compose_environment_names_only_variables_the_code_reads() -> None:
    compose = _yaml(DEPLOY / "compose.yaml")
    names = set(compose["x-environment"]) | set(compose["services"]["intake"]["environment"])
    ours = {
        name
        for name in names
        if name.startswith(("MORPHEUS_", "HUBSPOT_", "META_", "DOMAIN_", "APAC_"))
    }
    assert ours - set(DEFAULTS) - OTHER_VARIABLES == set()


# --- Kubernetes ---------------------------------------------------------------------------


def _kubernetes_schema(kind: str) -> dict[str, Any]:
    vendored = json.loads((SCHEMAS / "kubernetes-v1.33.0-strict.json").read_text())
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        **vendored["kinds"][kind],
        "$defs": vendored["$defs"],
    }


def _manifests() -> dict[str, dict[str, Any]]:
    documents = yaml.safe_load_all((DEPLOY / "helm" / "intake-api.yaml").read_text())
    return {document["kind"]: document for document in documents}


def test_intake_manifests_are_valid_kubernetes_objects() -> None:
    manifests = _manifests()
    assert set(manifests) == {"Deployment", "Service", "Job"}
    for kind, manifest in manifests.items():
        assert _errors(_kubernetes_schema(kind), manifest) == [], kind
    broken = copy.deepcopy(manifests["Deployment"])
    container = broken["spec"]["template"]["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")
    assert _errors(_kubernetes_schema("Deployment"), broken), "a misspelt field was accepted"


def test_intake_probes_readiness_needs_the_database_liveness_does_not() -> None:
    deployment, service = _manifests()["Deployment"], _manifests()["Service"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["args"] == ["intake"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/openapi.json"
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["ports"][0]["targetPort"] == "http"


# --- the Dagster instance -------------------------------------------------------------------


def _instance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    (tmp_path / "dagster.yaml").write_text((DEPLOY / "dagster.yaml").read_text())
    monkeypatch.setenv("DAGSTER_COMPUTE_LOGS_BUCKET", "morpheus-compute-logs")
    config, custom_class = dagster_instance_config(str(tmp_path))
    assert custom_class is None
    return dict(config)


def test_production_instance_passes_dagsters_validation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _instance(tmp_path, monkeypatch)
    assert config["storage"]["custom"]["class"] == "MorpheusPostgresStorage"
    assert config["run_coordinator"]["class"] == "QueuedRunCoordinator"
    assert config["concurrency"]["pools"] == {"default_limit": 1}
    assert config["concurrency"]["runs"]["max_concurrent_runs"] > 0
    monitoring = config["run_monitoring"]
    assert monitoring["enabled"] and monitoring["max_resume_run_attempts"] == 0
    assert monitoring["start_timeout_seconds"] > 0 and monitoring["max_runtime_seconds"] > 0
    assert config["run_retries"] == {
        "enabled": True,
        "max_retries": 2,
        "retry_on_asset_or_op_failure": False,
    }
    assert set(config["retention"]) >= {"schedule", "sensor"}

    logs = config["compute_logs"]
    assert (logs["module"], logs["class"]) == (
        S3ComputeLogManager.__module__,
        S3ComputeLogManager.__name__,
    )
    processed = process_config(S3ComputeLogManager.config_type(), logs["config"])
    assert processed.success, processed.errors
    assert processed.value["bucket"] == "morpheus-compute-logs"


def test_dagster_refuses_a_production_instance_with_a_mistake(tmp_path: Path) -> None:
    text = (DEPLOY / "dagster.yaml").read_text().replace("max_retries:", "max_retrys:")
    (tmp_path / "dagster.yaml").write_text(text)
    with pytest.raises(Exception, match="max_retrys"):
        dagster_instance_config(str(tmp_path))


# --- Helm ----------------------------------------------------------------------------------


def test_helm_values_make_the_same_instance_choices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = _yaml(DEPLOY / "helm" / "values.yaml")
    instance = _instance(tmp_path, monkeypatch)
    assert values["additionalInstanceConfig"]["concurrency"] == instance["concurrency"]
    daemon = values["dagsterDaemon"]
    monitoring = instance["run_monitoring"]
    assert daemon["runMonitoring"] == {
        "enabled": True,
        "startTimeoutSeconds": monitoring["start_timeout_seconds"],
        "cancelTimeoutSeconds": monitoring["cancel_timeout_seconds"],
        "maxRuntimeSeconds": monitoring["max_runtime_seconds"],
        "maxResumeRunAttempts": monitoring["max_resume_run_attempts"],
        "pollIntervalSeconds": monitoring["poll_interval_seconds"],
    }
    retries = instance["run_retries"]
    assert daemon["runRetries"] == {
        "enabled": True,
        "maxRetries": retries["max_retries"],
        "retryOnAssetOrOpFailure": retries["retry_on_asset_or_op_failure"],
    }
    for ticks in ("schedule", "sensor"):
        days = values["retention"][ticks]["purgeAfterDays"]
        assert days == instance["retention"][ticks]["purge_after_days"], ticks
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    assert values["postgresql"]["enabled"] is False
    assert values["postgresql"]["postgresqlPassword"] == ""  # from the secret
    assert values["generatePostgresqlPasswordSecret"] is False
    assert values["computeLogManager"]["type"] == "S3ComputeLogManager"
    # Run-queue limits in the run coordinator's config conflict with `concurrency`.
    assert values["dagsterDaemon"]["runCoordinator"]["config"]["queuedRunCoordinator"] == {}


def test_helm_user_code_is_this_image_and_this_code_location() -> None:
    values = _yaml(DEPLOY / "helm" / "values.yaml")
    deployment = values["dagster-user-deployments"]["deployments"][0]
    args = deployment["dagsterApiGrpcArgs"]
    assert args[args.index("--module-name") + 1] == "morpheus_pipelines.definitions"
    image = deployment["image"]
    assert values["dagsterWebserver"]["image"] == image == values["dagsterDaemon"]["image"]
    manifest_images = {
        container["image"]
        for manifest in _manifests().values()
        if manifest["kind"] in {"Deployment", "Job"}
        for container in manifest["spec"]["template"]["spec"]["containers"]
    }
    assert manifest_images == {f"{image['repository']}:{image['tag']}"}


# --- the Dockerfile -----------------------------------------------------------------------


def test_dockerfile_installs_locked_without_dev_and_runs_unprivileged() -> None:
    found = stages(DEPLOY / "Dockerfile")
    syncs = [words for kind, words in found["build"].steps if kind == "RUN"]
    assert syncs and all(
        words[:2] == ["uv", "sync"] and {"--frozen", "--no-dev"} <= set(words) for words in syncs
    )
    runtime = found["runtime"]
    assert runtime.user is not None and runtime.user.split(":")[0] not in {"0", "root"}
    assert runtime.entrypoint == ["/opt/morpheus/entrypoint.sh"]
    allowed = (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
    for stage in found.values():
        for kind, words in stage.steps:
            if kind == "COPY" and not any(w.startswith("--from=") for w in words):
                for source in words[:-1]:
                    assert f"!{source.rstrip('/')}" in [a.rstrip("/") for a in allowed], source


def test_entrypoint_roles_are_the_ones_compose_and_kubernetes_use() -> None:
    text = (DEPLOY / "entrypoint.sh").read_text()
    roles = {line.strip()[:-1] for line in text.splitlines() if line.strip().endswith(")")}
    used = {
        service["command"][0]
        for service in _yaml(DEPLOY / "compose.yaml")["services"].values()
        if isinstance(service.get("command"), list) and service["command"][0] != "postgres"
    }
    used.add(_manifests()["Deployment"]["spec"]["template"]["spec"]["containers"][0]["args"][0])
    assert used <= roles, used - roles
