"""Development tooling: the HubSpot, Domain Intelligence and Meta Graph emulators, the demo (data
generator and runner) and the stand-in DevOps source table.

Nothing in the runtime (assets, resources, sensors, services, repositories, rules, models,
clients, db, definitions) imports this package; only ``morpheus_pipelines.cli`` (inside its
commands), the tests and the benchmarks do.
"""
