"""The ``morpheus`` command: database management, the Dagster UI, the demo and the emulators.

morpheus db start|stop|status|url|migrate
morpheus dev [--port 3000]
morpheus demo
morpheus emulate hubspot|domain-intel --port N --data FILE
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
from pathlib import Path

from morpheus_pipelines.db.embedded import DAGSTER_DATABASE, EmbeddedPostgres
from morpheus_pipelines.db.migrate import upgrade
from morpheus_pipelines.db.urls import DAGSTER_URL_VARIABLE, dagster_url, libpq_url, with_driver
from morpheus_pipelines.settings import Settings, load_settings

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _embedded(settings: Settings) -> EmbeddedPostgres:
    return EmbeddedPostgres(settings.home)


def _external(settings: Settings) -> bool:
    if settings.database_url:
        print("MORPHEUS_DATABASE_URL is set: using that database, nothing embedded is managed.")
        return True
    return False


def cmd_db(args: argparse.Namespace) -> int:
    settings = load_settings()
    if args.action == "start":
        if not _external(settings):
            status = _embedded(settings).start()
            print(f"embedded PostgreSQL running on 127.0.0.1:{status.port} ({status.data_dir})")
            print(libpq_url(status.url()))
        return 0
    if args.action == "stop":
        if not _external(settings):
            stopped = _embedded(settings).stop()
            print("stopped" if stopped else "not running")
        return 0
    if args.action == "status":
        if settings.database_url:
            print(f"external database: {_redacted(settings.database_url)}")
            return 0
        status = _embedded(settings).status()
        if status.running:
            print(f"running: pid {status.pid}, 127.0.0.1:{status.port}, data {status.data_dir}")
            return 0
        print(f"not running (data directory {status.data_dir})")
        return 3
    if args.action == "url":
        if settings.database_url:
            url = settings.database_url
        else:
            status = _embedded(settings).status()
            if not status.running:
                print(
                    "embedded PostgreSQL is not running; run `morpheus db start`", file=sys.stderr
                )
                return 1
            url = status.url()
        if args.database == DAGSTER_DATABASE:
            url = dagster_url(settings)
        print(libpq_url(url) if args.driver == "libpq" else with_driver(url, args.driver))
        return 0
    if args.action == "migrate":
        url = _ensure_database(settings)
        upgrade(url)
        print(f"warehouse migrated: {_redacted(url)}")
        return 0
    raise AssertionError(args.action)


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def _ensure_database(settings: Settings) -> str:
    """The warehouse URL, starting the embedded server when no URL is configured."""
    from morpheus_pipelines.db.urls import warehouse_url

    return warehouse_url(settings)


def prepare_dagster_environment(settings: Settings) -> dict[str, str]:
    """Start and migrate the database, and build the environment Dagster processes need."""
    url = _ensure_database(settings)
    upgrade(url)
    dagster_home = settings.home / "dagster_home"
    dagster_home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PROJECT_ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
    env = dict(os.environ)
    env.update(
        {
            "DAGSTER_HOME": str(dagster_home),
            "MORPHEUS_HOME": str(settings.home),
            "MORPHEUS_DATABASE_URL": url,
            DAGSTER_URL_VARIABLE: dagster_url(settings),
        }
    )
    return env


def cmd_dev(args: argparse.Namespace) -> int:
    settings = load_settings()
    if args.configured:
        return _dagster_dev(prepare_dagster_environment(settings), args)
    from morpheus_pipelines.demo import demo_environment

    with demo_environment(settings, tenants=args.tenants, companies=args.companies) as demo:
        print(
            f"HubSpot emulator on {demo.hubspot.base_url}, Domain Intelligence emulator on "
            f"{demo.domain_intel.base_url}, demo data loaded ({args.tenants:,} tenants)"
        )
        return _dagster_dev(demo.env, args)


def _dagster_dev(env: dict[str, str], args: argparse.Namespace) -> int:
    """Run `dagster dev` (webserver + daemon) in a child process until it exits or Ctrl-C."""
    import subprocess

    command = [
        sys.executable,
        "-m",
        "dagster",
        "dev",
        "-w",
        str(PROJECT_ROOT / "workspace.yaml"),
        "-h",
        args.host,
        "-p",
        str(args.port),
    ]
    print(f"Dagster UI on http://{args.host}:{args.port}  (DAGSTER_HOME={env['DAGSTER_HOME']})")
    child = subprocess.Popen(command, env=env, cwd=env["DAGSTER_HOME"])
    # SIGTERM to `morpheus dev` is passed on, so `dagster dev` shuts its webserver, daemon
    # and code server down instead of being orphaned.
    signal.signal(signal.SIGTERM, lambda *_: child.send_signal(signal.SIGTERM))
    while True:
        try:
            return child.wait()
        except KeyboardInterrupt:
            # Ctrl-C already reached `dagster dev` (same process group): let it shut down.
            try:
                return child.wait(timeout=30)
            except (subprocess.TimeoutExpired, KeyboardInterrupt):
                child.kill()


def cmd_demo(args: argparse.Namespace) -> int:
    from morpheus_pipelines.demo import run_demo

    return run_demo(load_settings(), tenants=args.tenants, companies=args.companies)


def cmd_emulate(args: argparse.Namespace) -> int:
    argv = ["--port", str(args.port)]
    if args.data:
        argv += ["--data", args.data]
    if args.service == "hubspot":
        from morpheus_pipelines.emulators.hubspot import main as emulator_main
    else:
        from morpheus_pipelines.emulators.domain_intel import main as emulator_main
    return emulator_main(argv)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="morpheus", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)

    db = sub.add_parser("db", help="manage the warehouse database (embedded by default)")
    db.add_argument("action", choices=["start", "stop", "status", "url", "migrate"])
    db.add_argument(
        "--driver",
        choices=["libpq", "psycopg", "psycopg2"],
        default="libpq",
        help="URL form printed by `url` (default: libpq, usable by psql)",
    )
    db.add_argument("--database", choices=["morpheus", DAGSTER_DATABASE], default="morpheus")
    db.set_defaults(func=cmd_db)

    dev = sub.add_parser(
        "dev",
        help="Dagster UI and daemon on the embedded default, with the emulators and demo data",
    )
    dev.add_argument("--host", default="127.0.0.1")
    dev.add_argument("--port", type=int, default=3000)
    dev.add_argument("--tenants", type=int, default=10_000)
    dev.add_argument("--companies", type=int, default=500)
    dev.add_argument(
        "--configured",
        action="store_true",
        help="use HubSpot, Domain Intelligence and the source database as configured in the "
        "environment instead of the emulators and generated data",
    )
    dev.set_defaults(func=cmd_dev)

    demo = sub.add_parser("demo", help="run the whole pipeline once on generated data")
    demo.add_argument("--tenants", type=int, default=10_000)
    demo.add_argument("--companies", type=int, default=500)
    demo.set_defaults(func=cmd_demo)

    emulate = sub.add_parser("emulate", help="serve an emulated HubSpot or Domain Intelligence")
    emulate.add_argument("service", choices=["hubspot", "domain-intel"])
    emulate.add_argument("--port", type=int, default=0)
    emulate.add_argument("--data", help="JSON data file")
    emulate.set_defaults(func=cmd_emulate)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
