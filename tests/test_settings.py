"""The settings module (pydantic-settings): every malformed variable named at once with its
form, secrets as ``SecretStr``, a given mapping read alone."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from morpheus_pipelines.platform.settings import SettingsError, load_settings


def test_every_malformed_variable_is_reported_at_once_by_name_with_its_form() -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(
            {
                "PHONE_AGENT_BATCH_SIZE": "1.5",
                "HUBSPOT_REQUESTS_PER_10S": "many",
                "MORPHEUS_DATABASE_URL": "postgresql+psycopg://u:hunter22@:notaport/db",
                "HUBSPOT_PRIVATE_APP_TOKEN": "pat-secret",
            }
        )
    error = caught.value
    assert [name for name, _, _ in error.problems] == [
        "MORPHEUS_DATABASE_URL",
        "HUBSPOT_REQUESTS_PER_10S",
        "PHONE_AGENT_BATCH_SIZE",
    ]
    # The first line names them all (what a traceback's last line shows).
    assert str(error).splitlines()[0] == (
        "malformed environment variables: MORPHEUS_DATABASE_URL, HUBSPOT_REQUESTS_PER_10S, "
        "PHONE_AGENT_BATCH_SIZE"
    )
    assert "PHONE_AGENT_BATCH_SIZE: expected a whole number, got '1.5'" in error.lines
    assert "hunter22" not in str(error) and "u:***@" in str(error)


def test_secrets_are_secret_strings_never_shown() -> None:
    settings = load_settings({"HUBSPOT_PRIVATE_APP_TOKEN": "pat-secret", "APAC_SALES_EMAILS": ""})
    assert isinstance(settings.hubspot_private_app_token, SecretStr)
    assert settings.hubspot_private_app_token.get_secret_value() == "pat-secret"
    assert settings.apac_sales_emails.get_secret_value() == ""
    shown = repr(settings)
    assert "pat-secret" not in shown
    assert "hubspot_private_app_token=<set>" in shown and "apac_sales_emails=<empty>" in shown


def test_a_given_mapping_is_read_alone_and_empty_means_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HUBSPOT_RETRY_COUNT", "7")
    monkeypatch.setenv("PHONE_AGENT_BATCH_SIZE", "not a number")  # not read: not given
    settings = load_settings({"HUBSPOT_BASE_URL": "http://127.0.0.1:9/", "HUBSPOT_RETRY_COUNT": ""})
    assert settings.hubspot_retry_count == 3
    assert settings.hubspot_base_url == "http://127.0.0.1:9"
    assert settings.environment == "development" and not settings.production


def test_the_process_environment_is_read_through_pydantic_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HUBSPOT_RETRY_COUNT", "7")
    monkeypatch.setenv("MORPHEUS_ENV", "production")
    monkeypatch.setenv("HUBSPOT_TARGET_LIST_ID", "")
    settings = load_settings()
    assert settings.hubspot_retry_count == 7 and settings.production
    assert settings.hubspot_target_list_id == "19544"


def test_the_benchmark_floor_is_refused_in_production_and_allowed_elsewhere() -> None:
    floor = {"MORPHEUS_INTAKE_BENCHMARK_FLOOR": "1", "MORPHEUS_DATABASE_URL": "postgresql://h/d"}

    with pytest.raises(SettingsError) as refused:
        load_settings({**floor, "MORPHEUS_ENV": "production"})

    assert [name for name, _, _ in refused.value.problems] == ["MORPHEUS_INTAKE_BENCHMARK_FLOOR"]
    assert load_settings(floor).intake_benchmark_floor
    off = load_settings(
        {**floor, "MORPHEUS_ENV": "production", "MORPHEUS_INTAKE_BENCHMARK_FLOOR": "0"}
    )
    assert off.production and not off.intake_benchmark_floor
