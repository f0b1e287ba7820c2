"""``morpheus demo``: the main job on the embedded default, end to end."""

from __future__ import annotations

from morpheus_pipelines.settings import Settings


def run_demo(settings: Settings, *, tenants: int, companies: int) -> int:
    from morpheus_pipelines.cli import prepare_dagster_environment

    env = prepare_dagster_environment(settings)
    print(f"warehouse ready and migrated: {env['MORPHEUS_DATABASE_URL']}")
    print("The asset graph is not built yet: nothing else to run.")
    return 0
