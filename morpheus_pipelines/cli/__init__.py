"""The ``morpheus`` command: database management, the Dagster UI, the demo and the emulators.

morpheus db start|stop|status|url|migrate
morpheus dev [--port 3000] [--no-demo-runs] [--configured]
morpheus demo
morpheus subscription create --name NAME | list
morpheus serve [--host 127.0.0.1] [--port 8080] [--no-owner-cache]
morpheus api-key create --subscription UUID [--label TEXT] | revoke KEY_ID
morpheus emulate hubspot|domain-intel --port N --data FILE
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid

from morpheus_pipelines.db.dagster_home import PROJECT_ROOT, prepare_dagster_environment
from morpheus_pipelines.db.embedded import DAGSTER_DATABASE, EmbeddedPostgres, EmbeddedPostgresError
from morpheus_pipelines.db.migrate import upgrade
from morpheus_pipelines.db.urls import dagster_url, libpq_url, warehouse_url, with_driver
from morpheus_pipelines.platform.settings import Settings, load_settings


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
        try:
            url = warehouse_url(settings, start_embedded=False)
        except EmbeddedPostgresError as exc:
            running = _embedded(settings).status().running
            print(
                exc if running else "embedded PostgreSQL is not running; run `morpheus db start`",
                file=sys.stderr,
            )
            return 1
        if args.database == DAGSTER_DATABASE:
            url = dagster_url(settings)
        print(libpq_url(url) if args.driver == "libpq" else with_driver(url, args.driver))
        return 0
    if args.action == "migrate":
        url = warehouse_url(settings)
        upgrade(url)
        print(f"warehouse migrated: {_redacted(url)}")
        return 0
    raise AssertionError(args.action)


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def cmd_dev(args: argparse.Namespace) -> int:
    # Until `dagster dev` runs, SIGTERM is Ctrl-C: the emulators and the database sessions
    # are closed on the way out instead of the process vanishing mid-statement.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    settings = load_settings()
    if args.configured:
        return _dagster_dev(prepare_dagster_environment(settings), args)
    from morpheus_pipelines.devtools.demo.runner import (
        demo_environment,
        materialise_if_new_instance,
    )

    with demo_environment(settings, tenants=args.tenants, companies=args.companies) as demo:
        print(
            f"HubSpot emulator on {demo.hubspot.base_url}, Domain Intelligence emulator on "
            f"{demo.domain_intel.base_url}, demo data loaded ({args.tenants:,} tenants)"
        )
        if args.no_demo_runs:
            print("  --no-demo-runs: not materialising the demo partitions")
        elif materialise_if_new_instance(demo.partition_key) is False:
            print("  some demo runs failed: see them in the UI")
        return _dagster_dev(demo.env, args)


# `morpheus dev` must be gone within 10 s of SIGTERM or Ctrl-C: `dagster dev` and everything
# it started get this long to shut down cleanly (measured: 5.3-5.7 s on 2 busy cores, most of
# it the code server's), then whatever is left is killed.
SHUTDOWN_GRACE_SECONDS = 6.5
KILL_WAIT_SECONDS = 2.0


def _dagster_dev(env: dict[str, str], args: argparse.Namespace) -> int:
    """Run `dagster dev` (webserver + daemon + code server) until it exits, or until
    `morpheus dev` receives SIGTERM or SIGINT; then stop its whole process tree.

    `dagster dev` runs in its own session (so its own process group): Ctrl-C in the terminal
    reaches only `morpheus dev`, which then interrupts the group (what Ctrl-C does to a plain
    `dagster dev`), waits up to SHUTDOWN_GRACE_SECONDS, and SIGKILLs whatever survives: the
    group and every descendant recorded on the way (even one that left the group or was
    orphaned by its parent's exit)."""
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
    received: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        received.append(signum)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        print(f"Dagster UI on http://{args.host}:{args.port}  (DAGSTER_HOME={env['DAGSTER_HOME']})")
        child = subprocess.Popen(
            command,
            env=env,
            cwd=env["DAGSTER_HOME"],
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        tree = _ProcessTree(child.pid)
        while not received and child.poll() is None:
            tree.refresh()
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=0.5)
        if received:
            print(f"\n{signal.Signals(received[0]).name} received: stopping Dagster", flush=True)
        tree.stop(child)
        return 128 + received[0] if received else child.returncode
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class _ProcessTree:
    """The processes `dagster dev` started: its process group, plus (where ``/proc`` exists)
    every descendant ever seen, identified by pid and start time so that a reused pid is
    never signalled."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[int, str] = {}  # pid → start time

    def refresh(self) -> dict[int, tuple[int, int, str, str]]:
        """Record the group's members and the root's descendants; the ``/proc`` table read."""
        table = _proc_table()
        children: dict[int, list[int]] = {}
        for pid, (ppid, pgid, start, _state) in table.items():
            children.setdefault(ppid, []).append(pid)
            if pgid == self.root:
                self.seen.setdefault(pid, start)
        stack = [self.root, *self.seen]
        while stack:
            for pid in children.get(stack.pop(), ()):
                if pid not in self.seen:
                    self.seen[pid] = table[pid][2]
                    stack.append(pid)
        return table

    def running(self, table: dict[int, tuple[int, int, str, str]]) -> list[int]:
        """Recorded processes still running (a zombie has finished; a pid whose start time
        changed is another process)."""
        return [
            pid
            for pid, start in self.seen.items()
            if pid in table and table[pid][2] == start and table[pid][3] != "Z"
        ]

    def _group_exists(self) -> bool:
        try:
            os.killpg(self.root, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def _done(self, child) -> bool:
        table = self.refresh()
        if child.poll() is None:
            return False
        # Without /proc the process group is all there is to go by.
        return not self.running(table) if table else not self._group_exists()

    def _signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.root, signum)
        table = self.refresh()
        for pid in self.running(table):
            if table[pid][1] != self.root:  # it left the group: signal it directly
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signum)

    def _wait(self, child, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while not self._done(child):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)
        return True

    def stop(self, child) -> None:
        """SIGINT to the group (Ctrl-C for a plain `dagster dev`), SIGKILL to whatever is
        left after the grace period, and wait until none of it runs."""
        if self._done(child):
            return
        self._signal(signal.SIGINT)
        if not self._wait(child, SHUTDOWN_GRACE_SECONDS):
            left = len(self.running(self.refresh()))
            print(
                f"Dagster did not stop within {SHUTDOWN_GRACE_SECONDS} s: killing "
                f"{left or 'what is left of'} its processes",
                flush=True,
            )
            self._signal(signal.SIGKILL)
            self._wait(child, KILL_WAIT_SECONDS)
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=KILL_WAIT_SECONDS)


def _proc_table() -> dict[int, tuple[int, int, str, str]]:
    """pid → (parent pid, process group, start time, state) from ``/proc``; empty where
    there is no ``/proc`` (the process group is then all `morpheus dev` stops)."""
    table: dict[int, tuple[int, int, str, str]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue
        # The command name (field 2) may hold spaces and parentheses: split after the last ")".
        fields = stat[stat.rindex(")") + 2 :].split()
        table[int(name)] = (int(fields[1]), int(fields[2]), fields[19], fields[0])
    return table


def cmd_subscription(args: argparse.Namespace) -> int:
    from morpheus_pipelines.crm.steps.subscriptions import create_subscription, list_subscriptions
    from morpheus_pipelines.db.session import get_session

    url = warehouse_url(load_settings())
    upgrade(url)
    with get_session(url) as session:
        if args.action == "create":
            try:
                subscription_id = create_subscription(session, args.name or "")
            except ValueError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            print(f"subscription {args.name.strip()!r} created; set MORPHEUS_SUBSCRIPTION_ID to")
            print(subscription_id)
            return 0
        for subscription_id, name in list_subscriptions(session):
            print(f"{subscription_id}  {name}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from morpheus_pipelines.crm.api.server import serve

    return serve(
        load_settings(),
        host=args.host,
        port=args.port,
        owner_cache=not args.no_owner_cache,
        workers=args.workers,
    )


def _uuid_argument(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a UUID: {value!r}") from None


def cmd_api_key(args: argparse.Namespace) -> int:
    from morpheus_pipelines.crm.api.server import create_api_key, revoke_api_key
    from morpheus_pipelines.crm.steps.subscriptions import subscription_exists

    url = warehouse_url(load_settings())
    upgrade(url)
    if args.action == "create":
        if args.subscription is None:
            print("error: --subscription is required", file=sys.stderr)
            return 2
        if not subscription_exists(url, args.subscription):
            print(f"error: subscription {args.subscription} does not exist", file=sys.stderr)
            return 2
        key_id, key = create_api_key(url, args.subscription, args.label)
        print(f"API key {key_id} for subscription {args.subscription}; it is shown only once:")
        print(key)
        return 0
    if args.key_id is None:
        print("error: revoke needs the key id", file=sys.stderr)
        return 2
    if not revoke_api_key(url, args.key_id):
        print(f"error: no active key {args.key_id}", file=sys.stderr)
        return 1
    print(f"API key {args.key_id} revoked")
    return 0


def cmd_automation_rule(args: argparse.Namespace) -> int:
    from datetime import timedelta

    from sqlalchemy.exc import IntegrityError

    from morpheus_pipelines.crm.rules.timeline import NudgeRule, describe_rule
    from morpheus_pipelines.crm.steps.lead_automations import add_rule, describe_rules
    from morpheus_pipelines.crm.steps.subscriptions import subscription_exists
    from morpheus_pipelines.db.session import get_session

    url = warehouse_url(load_settings())
    upgrade(url)
    if not subscription_exists(url, args.subscription):
        print(f"error: subscription {args.subscription} does not exist", file=sys.stderr)
        return 2
    if args.action == "list":
        with get_session(url) as session:
            for name, active, description in describe_rules(session, args.subscription):
                print(f"{name}{'' if active else ' (inactive)'}: {description}")
        return 0
    missing = [
        flag
        for flag, value in (
            ("--name", args.name),
            ("--channel", args.channel),
            ("--quiet-hours", args.quiet_hours),
        )
        if value is None
    ]
    if missing:
        print(f"error: add needs {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        rule = NudgeRule(
            args.channel,
            timedelta(hours=args.quiet_hours),
            timedelta(hours=args.window_lead_hours) if args.window_lead_hours else None,
        )
        with get_session(url) as session:
            add_rule(
                session,
                args.subscription,
                name=args.name,
                rule=rule,
                template_name=args.template,
                body=args.body,
            )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except IntegrityError as exc:
        if "uq_automation_rules_subscriptionId_name" in str(exc.orig):
            print(
                f"error: the subscription already has a rule named {args.name!r}", file=sys.stderr
            )
        else:
            print(f"error: the database refused the rule: {exc.orig}", file=sys.stderr)
        return 2
    print(f"rule {args.name!r} added: {describe_rule(rule)}")
    return 0


def cmd_lead(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from morpheus_pipelines.crm.api.server import close_lead

    try:
        at = datetime.fromisoformat(args.at) if args.at else datetime.now(UTC)
    except ValueError:
        print(f"error: --at must be an ISO 8601 time, got {args.at!r}", file=sys.stderr)
        return 2
    if at.tzinfo is None:
        print("error: --at needs a timezone, e.g. 2026-12-01T09:30:00+08:00", file=sys.stderr)
        return 2
    url = warehouse_url(load_settings())
    upgrade(url)
    if not close_lead(url, args.lead_id, args.status, at):
        print(f"error: no open lead {args.lead_id}", file=sys.stderr)
        return 1
    print(f"lead {args.lead_id} {args.status} at {at.isoformat()}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from morpheus_pipelines.devtools.demo.runner import run_demo

    return run_demo(load_settings(), tenants=args.tenants, companies=args.companies)


def cmd_emulate(args: argparse.Namespace) -> int:
    argv = ["--port", str(args.port)]
    if args.data:
        argv += ["--data", args.data]
    if args.service == "hubspot":
        from morpheus_pipelines.devtools.emulators.hubspot import main as emulator_main
    else:
        from morpheus_pipelines.devtools.emulators.domain_intel import main as emulator_main
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
        "--no-demo-runs",
        action="store_true",
        help="do not materialise the demo partitions on a Dagster instance without runs",
    )
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

    subscription = sub.add_parser(
        "subscription", help="create or list subscriptions (workspaces) in the warehouse"
    )
    subscription.add_argument("action", choices=["create", "list"])
    subscription.add_argument("--name", help="the workspace's name (create)")
    subscription.set_defaults(func=cmd_subscription)

    serve = sub.add_parser("serve", help="the lead-intake API (docs/leads.md)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument(
        "--no-owner-cache",
        action="store_true",
        help="look pool members up with a query per lead instead of the in-process cache",
    )
    serve.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    serve.set_defaults(func=cmd_serve)

    api_key = sub.add_parser("api-key", help="create or revoke an intake API key")
    api_key.add_argument("action", choices=["create", "revoke"])
    api_key.add_argument("key_id", nargs="?", type=_uuid_argument, help="the key to revoke")
    api_key.add_argument("--subscription", type=_uuid_argument)
    api_key.add_argument("--label")
    api_key.set_defaults(func=cmd_api_key)

    rules = sub.add_parser(
        "automation-rule", help="add or list lead automation rules (docs/leads.md)"
    )
    rules.add_argument("action", choices=["add", "list"])
    rules.add_argument("--subscription", type=_uuid_argument, required=True)
    rules.add_argument("--name")
    rules.add_argument("--channel", choices=["email", "whatsapp"])
    rules.add_argument("--quiet-hours", type=float, help="hours without engagement")
    rules.add_argument(
        "--window-lead-hours", type=float, help="WhatsApp: hours before the window closes"
    )
    rules.add_argument("--template", help="send this approved template")
    rules.add_argument("--body", help="send this free-form text")
    rules.set_defaults(func=cmd_automation_rule)

    lead = sub.add_parser("lead", help="close a lead as won, lost or closed (docs/leads.md)")
    lead.add_argument("action", choices=["close"])
    lead.add_argument("lead_id", type=_uuid_argument)
    lead.add_argument("--status", choices=["won", "lost", "closed"], required=True)
    lead.add_argument("--at", help="when (ISO 8601 with a timezone); default now")
    lead.set_defaults(func=cmd_lead)

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
