"""Enrichment reuse (docs/pipeline.md, "Enrichment reuse"): an answer for unchanged inputs,
younger than DOMAIN_INTELLIGENCE_MAX_AGE_DAYS, is reused instead of asked again; a changed
tenant, an old answer, an ``unavailable`` one, or a maximum age of 0 asks again."""

from __future__ import annotations

import dataclasses

from morpheus_pipelines.devtools.emulators import DomainIntelEmulator
from tests.support.pipeline import Pipeline, load_source, tenant

DAY_1, DAY_2 = "2026-11-28", "2026-11-29"
TENANTS = [tenant(f"t-{n}", email=f"ops@company{n}.com.sg") for n in range(6)]


def asked(emulator: DomainIntelEmulator) -> list[str]:
    ids = [i["tenant_id"] for e in emulator.log.entries("enrich") for i in e.body["inputs"]]
    emulator.log.clear()
    return sorted(ids)


def enrichment(pipeline: Pipeline, partition_key: str) -> dict[str, tuple]:
    rows = pipeline.query(
        "SELECT tenant_id, enrichment_status, official_website, country, enriched_at "
        "FROM apac_enriched_tenants WHERE partition_key = :p",
        p=partition_key,
    )
    return {row[0]: row[1:] for row in rows}


def metadata(result) -> dict:
    events = [
        e
        for e in result.get_asset_materialization_events()
        if e.asset_key.to_user_string() == "enriched_tenants"
    ]
    return {k: v.value for k, v in events[0].materialization.metadata.items()}


def test_unchanged_tenants_are_not_asked_again(
    pipeline: Pipeline, domain_intel: DomainIntelEmulator
) -> None:
    load_source(pipeline.database_url, TENANTS)
    pipeline.snapshot()
    first = metadata(pipeline.route(DAY_1))
    assert asked(domain_intel) == [f"t-{n}" for n in range(6)]

    changed = [*TENANTS[:5], tenant("t-5", email="ops@newcompany.com.sg")]
    load_source(pipeline.database_url, changed)
    second = metadata(pipeline.route(DAY_2))

    assert asked(domain_intel) == ["t-5"]  # only the tenant whose inputs changed
    assert (first["tenants_asked"], first["tenants_reused"]) == (6, 0)
    assert (second["tenants_asked"], second["tenants_reused"]) == (1, 5)
    day_1, day_2 = enrichment(pipeline, DAY_1), enrichment(pipeline, DAY_2)
    for n in range(5):  # the same answer, and its age is the first answer's
        assert day_2[f"t-{n}"] == day_1[f"t-{n}"]
    assert day_2["t-5"][3] > day_1["t-5"][3]


def test_an_old_or_unavailable_answer_is_asked_again(
    pipeline: Pipeline, domain_intel: DomainIntelEmulator
) -> None:
    load_source(pipeline.database_url, TENANTS)
    pipeline.snapshot()
    pipeline.route(DAY_1)
    asked(domain_intel)
    pipeline.execute(
        "UPDATE apac_enriched_tenant_versions SET enriched_at = enriched_at - interval '31 days' "
        "WHERE tenant_id = 't-0'"
    )
    pipeline.execute(  # enriched_at kept: only the status keeps it from being reused
        "UPDATE apac_enriched_tenant_versions SET enrichment_status = 'unavailable' "
        "WHERE tenant_id = 't-1'"
    )

    pipeline.route(DAY_2)

    assert asked(domain_intel) == ["t-0", "t-1"]


def test_a_maximum_age_of_zero_asks_for_every_tenant_every_run(
    pipeline: Pipeline, domain_intel: DomainIntelEmulator
) -> None:
    never = dataclasses.replace(pipeline, domain_intel_options={"max_age_days": 0})
    load_source(never.database_url, TENANTS)
    never.snapshot()
    never.route(DAY_1)
    asked(domain_intel)

    never.route(DAY_2)

    assert asked(domain_intel) == [f"t-{n}" for n in range(6)]


def test_a_day_when_nothing_changed_asks_nothing_and_keeps_every_answer(
    pipeline: Pipeline, domain_intel: DomainIntelEmulator
) -> None:
    # Every tenant of the chunk reused, and one whose free-mail address changed: its answer
    # is reused (the service is not told free-mail domains) but its class is today's.
    tenants = [*TENANTS, tenant("t-free", email="someone@gmail.com")]
    load_source(pipeline.database_url, tenants)
    pipeline.snapshot()
    pipeline.route(DAY_1)
    asked(domain_intel)
    load_source(pipeline.database_url, [*TENANTS, tenant("t-free", email=None)])

    second = metadata(pipeline.route(DAY_2))
    rerun = metadata(pipeline.route(DAY_2))

    assert asked(domain_intel) == []
    assert second["tenants_reused"] == rerun["tenants_reused"] == 7
    day_1, day_2 = enrichment(pipeline, DAY_1), enrichment(pipeline, DAY_2)
    assert {t: v for t, v in day_2.items() if t != "t-free"} == {
        t: v for t, v in day_1.items() if t != "t-free"
    }
    classes = dict(
        pipeline.query(
            "SELECT partition_key, email_domain_class FROM apac_enriched_tenants "
            "WHERE tenant_id = 't-free'"
        )
    )
    assert classes == {DAY_1: "free", DAY_2: "missing"}


def test_an_answer_stored_under_other_domain_lists_is_asked_again(
    pipeline: Pipeline, domain_intel: DomainIntelEmulator
) -> None:
    """The copy of yesterday's answers checks the domain lists' version in the fingerprint:
    an answer classified under other lists is not copied (nor reused) but asked again."""
    load_source(pipeline.database_url, TENANTS)
    pipeline.snapshot()
    pipeline.route(DAY_1)
    asked(domain_intel)
    pipeline.execute(
        "UPDATE apac_enriched_tenant_versions SET input_fingerprint = "
        "'000000000000:' || split_part(input_fingerprint, ':', 2) WHERE tenant_id = 't-2'"
    )

    second = metadata(pipeline.route(DAY_2))

    assert asked(domain_intel) == ["t-2"]
    assert (second["tenants_asked"], second["tenants_reused"]) == (1, 5)
