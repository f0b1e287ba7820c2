"""Shared plumbing for the loopback HTTP emulators.

Each emulator is one :class:`http.server.ThreadingHTTPServer` on 127.0.0.1, served from a
background thread. Every request goes through the same pipeline, so logging and fault
injection behave identically in both emulators::

    read body -> route -> log (seq, nth) -> pick fault -> optional delay
      -> reset | fault response | preflight (auth, rate limit) | handler -> write (maybe cut short)

The request log entry is opened when the request arrives and completed *before* the response
bytes are written, so a client that has received a response always finds its entry in the log.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import socketserver
import struct
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from email.message import Message
from enum import StrEnum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self, TextIO
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "EmulatorServer",
    "Fault",
    "FaultKind",
    "FaultRegistry",
    "Request",
    "RequestLog",
    "RequestRecord",
    "Response",
    "RollingWindowLimiter",
    "correlation_id",
    "iso_now",
    "serve_until_signalled",
]


class FaultKind(StrEnum):
    """Every fault an emulator can inject; each emulator declares which ones it supports."""

    STATUS = "status"  # an HTTP error status (5xx, 429, ...) with an error body
    RESET = "reset"  # close the socket with a TCP RST and no response at all
    TRUNCATED_JSON = "truncated_json"  # consistent Content-Length, but the JSON is cut in half
    SHORT_BODY = "short_body"  # Content-Length promises more bytes than are sent, then close
    SLOW = "slow"  # the normal response, after ``delay`` seconds
    # HubSpot-only kinds.
    RATE_LIMIT = "rate_limit"  # 429 with one of HubSpot's policy bodies and optional headers
    UNAUTHORIZED = "unauthorized"  # 401 INVALID_AUTHENTICATION whatever the token
    DUPLICATE_MEMBERS = "duplicate_members"  # a membership page repeats a record id
    LIST_SIZE = "list_size"  # the list reports a size that differs from its memberships
    PROCESSING_STATUS = "processing_status"  # the list reports a status other than COMPLETE
    MISSING_COMPANIES = "missing_companies"  # a batch read answers 207 naming missing ids


GENERIC_FAULTS = frozenset(
    {
        FaultKind.STATUS,
        FaultKind.RESET,
        FaultKind.TRUNCATED_JSON,
        FaultKind.SHORT_BODY,
        FaultKind.SLOW,
    }
)


def iso_now() -> str:
    """UTC now as HubSpot formats timestamps (millisecond precision, ``Z`` suffix)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def correlation_id() -> str:
    """A fresh correlation id (HubSpot's Error schema declares ``format: uuid``)."""
    return str(uuid.uuid4())


@dataclass(eq=False)
class Fault:
    """One injectable fault.

    Targeting (all optional, all must match):

    * ``endpoint`` - an endpoint name of the emulator (e.g. ``"memberships"``);
    * ``page`` - 0-based page index (page 0 is the request without a cursor);
    * ``nth`` - 1-based request ordinal from which the fault is eligible; counted per endpoint
      when ``endpoint`` is set, else over all requests. ``nth=3, times=2`` fails the 3rd and
      4th request;
    * ``times`` - how many requests it fires on (``None`` = every matching request).

    ``kind`` may also be a status code such as ``"503"`` or ``429``: shorthand for
    ``kind="status", status=...``. ``delay`` (seconds) applies before any kind, so a slow 503 is
    possible; ``kind="slow"`` is a delay followed by the normal response.
    """

    kind: str | int
    endpoint: str | None = None
    page: int | None = None
    nth: int | None = None
    times: int | None = 1
    status: int | None = None
    delay: float = 0.0
    retry_after: int | None = None  # Retry-After header value in seconds, None = no header
    headers: Mapping[str, str] = field(default_factory=dict)  # extra response headers
    body: Any = None  # overrides the error body (JSON-able, or str/bytes sent verbatim)
    policy: str = "TEN_SECONDLY_ROLLING"  # rate_limit: TEN_SECONDLY_ROLLING | SECONDLY | DAILY
    rate_headers: bool = True  # rate_limit: send the X-HubSpot-RateLimit-* headers
    list_size: int | None = None  # list_size: the size to report (None = true size + 1)
    processing_status: str = "PROCESSING"  # processing_status: the status to report
    ids: tuple[str, ...] | None = None  # missing_companies: ids to drop (None = first input)
    fired: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        kind = str(self.kind)
        if kind.isdigit():
            self.status = int(kind)
            kind = FaultKind.STATUS
        self.kind = FaultKind(kind)  # ValueError names the bad kind
        if self.kind is FaultKind.STATUS and self.status is None:
            self.status = 500
        if self.kind is FaultKind.SLOW and self.delay <= 0:
            raise ValueError("a slow fault needs delay > 0")
        if self.times is not None and self.times < 1:
            raise ValueError("times must be >= 1 or None")
        if self.nth is not None and self.nth < 1:
            raise ValueError("nth is 1-based")
        if self.page is not None and self.page < 0:
            raise ValueError("page is 0-based")
        if self.ids is not None:
            self.ids = tuple(str(i) for i in self.ids)

    @property
    def exhausted(self) -> bool:
        """True once the fault has fired ``times`` times."""
        return self.times is not None and self.fired >= self.times

    def matches(self, endpoint: str, page: int | None, nth: int, seq: int) -> bool:
        """Whether this fault applies to a request (ignores exhaustion)."""
        if self.endpoint is not None and self.endpoint != endpoint:
            return False
        if self.page is not None and self.page != page:
            return False
        ordinal = nth if self.endpoint is not None else seq
        return self.nth is None or ordinal >= self.nth


class FaultRegistry:
    """Thread-safe, ordered set of faults; the first eligible fault fires for a request."""

    def __init__(
        self,
        kinds: Iterable[str],
        endpoints: Iterable[str],
        kind_endpoints: Mapping[str, str] | None = None,
    ) -> None:
        self._kinds = frozenset(FaultKind(k) for k in kinds)
        self._endpoints = frozenset(endpoints)
        # Data-level faults only make sense on one endpoint; default and enforce it so a
        # mistargeted fault fails loudly instead of being consumed by an unrelated request.
        self._kind_endpoints = dict(kind_endpoints or {})
        self._faults: list[Fault] = []
        self._lock = threading.Lock()

    def add(self, fault: Fault) -> Fault:
        """Register ``fault`` and return it (read ``.fired`` later)."""
        if fault.kind not in self._kinds:
            raise ValueError(f"fault kind {fault.kind!r} not supported here: {sorted(self._kinds)}")
        required = self._kind_endpoints.get(fault.kind)
        if fault.endpoint is None and required is not None:
            fault.endpoint = required
        if fault.endpoint is not None and fault.endpoint not in self._endpoints:
            raise ValueError(f"unknown endpoint {fault.endpoint!r}: {sorted(self._endpoints)}")
        if required is not None and fault.endpoint != required:
            raise ValueError(f"{fault.kind} faults apply to endpoint {required!r} only")
        with self._lock:
            self._faults.append(fault)
        return fault

    def remove(self, fault: Fault) -> None:
        """Withdraw one fault."""
        with self._lock:
            self._faults = [f for f in self._faults if f is not fault]

    def clear(self) -> None:
        """Withdraw every fault."""
        with self._lock:
            self._faults.clear()

    def all(self) -> list[Fault]:
        """Every registered fault, fired or not, in registration order."""
        with self._lock:
            return list(self._faults)

    def pending(self) -> list[Fault]:
        """Faults that can still fire."""
        with self._lock:
            return [f for f in self._faults if not f.exhausted]

    def pick(self, endpoint: str, page: int | None, nth: int, seq: int) -> Fault | None:
        """Atomically choose and consume the fault for one request."""
        with self._lock:
            for fault in self._faults:
                if not fault.exhausted and fault.matches(endpoint, page, nth, seq):
                    fault.fired += 1
                    return fault
        return None


@dataclass(frozen=True)
class RequestRecord:
    """One request as the emulator saw it.

    ``status`` is None while the request is pending and when no response was sent
    (``outcome`` ``"reset"`` or ``"aborted"``). ``seq`` is the 1-based ordinal over all
    requests, ``nth`` the ordinal within ``endpoint``. Authorization headers are not kept.
    """

    seq: int
    nth: int
    timestamp: float
    method: str
    path: str
    query: dict[str, str]
    endpoint: str
    body: Any
    page: int | None = None
    fault: str | None = None
    status: int | None = None
    outcome: str = "pending"  # pending | responded | reset | aborted
    error: str | None = None


class RequestLog:
    """Thread-safe request log, also the source of request ordinals for fault targeting."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._records: list[RequestRecord] = []
        self._index: dict[int, int] = {}
        self._seq = 0
        self._per_endpoint: dict[str, int] = {}

    def _open(
        self, method: str, path: str, query: dict[str, str], endpoint: str, body: Any
    ) -> RequestRecord:
        with self._cond:
            self._seq += 1
            nth = self._per_endpoint.get(endpoint, 0) + 1
            self._per_endpoint[endpoint] = nth
            record = RequestRecord(
                seq=self._seq,
                nth=nth,
                timestamp=time.time(),
                method=method,
                path=path,
                query=query,
                endpoint=endpoint,
                body=body,
            )
            self._index[record.seq] = len(self._records)
            self._records.append(record)
            self._cond.notify_all()
            return record

    def _update(self, seq: int, **changes: Any) -> None:
        with self._cond:
            pos = self._index.get(seq)
            if pos is not None:  # None when the log was cleared mid-request
                self._records[pos] = replace(self._records[pos], **changes)
            self._cond.notify_all()

    def entries(self, endpoint: str | None = None) -> list[RequestRecord]:
        """A snapshot of the records, oldest first, optionally for one endpoint."""
        with self._cond:
            return [r for r in self._records if endpoint is None or r.endpoint == endpoint]

    def statuses(self, endpoint: str | None = None) -> list[int | None]:
        """Response statuses in arrival order (None for reset/aborted/pending)."""
        return [r.status for r in self.entries(endpoint)]

    def count(
        self, endpoint: str | None = None, *, status: int | None = None, fault: str | None = None
    ) -> int:
        """Number of records matching every given criterion."""
        return sum(
            1
            for r in self.entries(endpoint)
            if (status is None or r.status == status) and (fault is None or r.fault == fault)
        )

    def last(self, endpoint: str | None = None) -> RequestRecord | None:
        """The most recent record, if any."""
        records = self.entries(endpoint)
        return records[-1] if records else None

    def wait_until(
        self, predicate: Callable[[list[RequestRecord]], bool], timeout: float = 5.0
    ) -> bool:
        """Block until ``predicate(entries)`` holds (True) or ``timeout`` passes (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(list(self._records)), timeout)

    def clear(self) -> None:
        """Forget all records and restart the request ordinals used by ``Fault.nth``."""
        with self._cond:
            self._records.clear()
            self._index.clear()
            self._seq = 0
            self._per_endpoint.clear()

    def __len__(self) -> int:
        with self._cond:
            return len(self._records)


class RollingWindowLimiter:
    """At most ``max_requests`` admitted per rolling ``interval_s``, like HubSpot's 10 s limit.

    Rejected requests do not consume budget, so a client that backs off recovers.
    """

    def __init__(
        self,
        max_requests: int,
        interval_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_requests < 1 or interval_s <= 0:
            raise ValueError("max_requests >= 1 and interval_s > 0 required")
        self.max_requests = max_requests
        self.interval_s = interval_s
        self._clock = clock
        self._stamps: deque[float] = deque()
        self._lock = threading.Lock()

    def acquire(self) -> tuple[bool, int, float]:
        """Try to admit one request: ``(admitted, remaining, seconds_until_a_slot_frees)``."""
        with self._lock:
            now = self._clock()
            while self._stamps and self._stamps[0] <= now - self.interval_s:
                self._stamps.popleft()
            if len(self._stamps) >= self.max_requests:
                return False, 0, self._stamps[0] + self.interval_s - now
            self._stamps.append(now)
            return True, self.max_requests - len(self._stamps), 0.0


@dataclass
class Request:
    """A parsed request handed to emulator hooks."""

    method: str
    path: str
    query: dict[str, str]
    headers: Message
    raw_body: bytes
    endpoint: str
    params: dict[str, str]
    seq: int = 0
    nth: int = 0
    page: int | None = None
    # Headers a preflight hook wants on the eventual response (e.g. rate-limit budget).
    response_headers: dict[str, str] = field(default_factory=dict)

    @property
    def json(self) -> Any:
        """The body parsed as JSON; raises ValueError when it is not JSON."""
        return json.loads(self.raw_body) if self.raw_body else None


@dataclass
class Response:
    """A response to write; ``body`` is JSON-serialised unless it is str/bytes."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json;charset=utf-8"

    def encode(self) -> bytes:
        """The body as bytes."""
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        if self.body is None:
            return b""
        return json.dumps(self.body, separators=(",", ":")).encode()


def _parse_log_body(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 keeps connections alive, as real APIs do, so pooled-connection bugs show up.
    protocol_version = "HTTP/1.1"
    # Idle keep-alive connections give up eventually; stop() also shuts them down explicitly.
    timeout = 60
    # Headers and body go out in separate writes; with Nagle on, the client's delayed ACK
    # adds ~40 ms to every keep-alive request.
    disable_nagle_algorithm = True
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.emulator._track(self.connection, add=True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.emulator._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        # The request log replaces stderr access logs.
        pass

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def _dispatch(self) -> None:
        emu = self.server.emulator
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        split = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        routed = emu.route(self.command, split.path)
        endpoint, params = routed if routed is not None else ("unknown", {})
        record = emu.log._open(self.command, split.path, query, endpoint, _parse_log_body(raw))
        request = Request(
            method=self.command,
            path=split.path,
            query=query,
            headers=self.headers,
            raw_body=raw,
            endpoint=endpoint,
            params=params,
            seq=record.seq,
            nth=record.nth,
        )
        try:
            request.page = emu.page_of(request)
        except Exception:  # a malformed cursor is the handler's 400, not a crash here
            request.page = None
        fault = emu.faults.pick(endpoint, request.page, record.nth, record.seq)
        emu.log._update(record.seq, page=request.page, fault=fault.kind if fault else None)

        if fault is not None and fault.delay > 0 and emu._stopping.wait(fault.delay):
            # Shutting down: drop the request instead of holding stop() hostage.
            emu.log._update(record.seq, outcome="aborted")
            self.close_connection = True
            return
        if fault is not None and fault.kind is FaultKind.RESET:
            emu.log._update(record.seq, outcome="reset")
            self._reset()
            return

        error = None
        try:
            response = emu.fault_response(request, fault) if fault is not None else None
            if response is None:
                if routed is None:
                    response = emu.not_found(request)
                else:
                    response = emu.preflight(request) or emu.handle(request, fault)
                    response.headers = {**request.response_headers, **response.headers}
        except Exception as exc:  # surfaced in the log and emu.errors, not swallowed
            error = f"{type(exc).__name__}: {exc}"
            emu.errors.append(error)
            response = Response(500, emu.error_body(500, f"emulator error: {error}"))
        self._write(record.seq, response, fault, error)

    def _write(self, seq: int, response: Response, fault: Fault | None, error: str | None) -> None:
        emu = self.server.emulator
        payload = response.encode()
        declared = len(payload)
        if fault is not None and fault.kind is FaultKind.TRUNCATED_JSON:
            payload = payload[: max(1, len(payload) // 2)]
            declared = len(payload)
        elif fault is not None and fault.kind is FaultKind.SHORT_BODY:
            payload = payload[: len(payload) // 2]
            self.close_connection = True
        emu.log._update(seq, status=response.status, outcome="responded", error=error)
        try:
            self.send_response(response.status)
            if payload or declared:
                self.send_header("Content-Type", response.content_type)
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(declared))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except OSError:  # the client gave up (e.g. its read timeout fired)
            self.close_connection = True

    def _reset(self) -> None:
        # SO_LINGER with a zero timeout turns close() into a TCP RST: the client sees
        # "connection reset by peer" rather than a polite EOF.
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.rfile.close()
            self.connection.close()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # stop() shuts connections down and joins handler threads itself, with a bound.
    block_on_close = False
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], emulator: EmulatorServer) -> None:
        self.emulator = emulator
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls getfqdn(), a reverse DNS lookup that can stall.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients vanishing mid-connection is routine under fault injection.
        exc = sys.exc_info()[1]
        if not isinstance(exc, OSError):
            self.emulator.errors.append(f"{type(exc).__name__}: {exc}")


class EmulatorServer:
    """Base class: lifecycle, request log, faults and the request pipeline.

    Subclasses set ``endpoints``/``supported_faults``/``fault_endpoints`` and implement
    :meth:`route` and :meth:`handle`; optionally :meth:`page_of`, :meth:`preflight`,
    :meth:`fault_response` and :meth:`error_body`.
    """

    name: ClassVar[str] = "emulator"
    endpoints: ClassVar[tuple[str, ...]] = ()
    supported_faults: ClassVar[frozenset[str]] = GENERIC_FAULTS
    fault_endpoints: ClassVar[Mapping[str, str]] = {}

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self._host = host
        self._requested_port = port
        self.log = RequestLog()
        self.faults = FaultRegistry(
            self.supported_faults, (*self.endpoints, "unknown"), self.fault_endpoints
        )
        self.errors: list[str] = []  # emulator bugs; tests should expect this to stay empty
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._conn_lock = threading.Lock()
        self._connections: dict[socket.socket, threading.Thread] = {}

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> Self:
        """Bind and serve in a background thread; returns self."""
        if self._httpd is not None:
            raise RuntimeError(f"{self.name} emulator already running at {self.base_url}")
        self._stopping.clear()
        self._httpd = _HTTPServer((self._host, self._requested_port), self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},  # stop() returns within ~50 ms
            name=f"{self.name}-emulator",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving, abort delayed responses, close connections; idempotent."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        with self._conn_lock:
            connections = dict(self._connections)
        for conn in connections:
            # Wakes handler threads blocked reading the next request on a kept-alive socket.
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        deadline = time.monotonic() + timeout
        for worker in connections.values():
            worker.join(max(0.0, deadline - time.monotonic()))
        if thread is not None:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._httpd = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """True between start() and stop()."""
        return self._httpd is not None

    @property
    def port(self) -> int:
        """The bound port (only while running)."""
        if self._httpd is None:
            raise RuntimeError(f"{self.name} emulator is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` without a trailing slash."""
        return f"http://{self._host}:{self.port}"

    def url(self, path: str) -> str:
        """Absolute URL for a path on this emulator."""
        return self.base_url + (path if path.startswith("/") else "/" + path)

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._conn_lock:
            if add:
                self._connections[conn] = threading.current_thread()
            else:
                self._connections.pop(conn, None)

    # -- fault helpers -----------------------------------------------------------------------

    def fail(
        self,
        kind: str | int,
        *,
        endpoint: str | None = None,
        page: int | None = None,
        nth: int | None = None,
        times: int | None = 1,
        **params: Any,
    ) -> Fault:
        """Register a fault, e.g. ``fail(503, endpoint="memberships", times=2)``."""
        return self.faults.add(
            Fault(kind, endpoint=endpoint, page=page, nth=nth, times=times, **params)
        )

    def slow(
        self,
        delay: float,
        *,
        endpoint: str | None = None,
        page: int | None = None,
        nth: int | None = None,
        times: int | None = 1,
    ) -> Fault:
        """Answer normally but only after ``delay`` seconds (trips client read timeouts)."""
        return self.fail(
            FaultKind.SLOW, endpoint=endpoint, page=page, nth=nth, times=times, delay=delay
        )

    # -- hooks -------------------------------------------------------------------------------

    def route(self, method: str, path: str) -> tuple[str, dict[str, str]] | None:
        """Map a request to ``(endpoint, path_params)``; None means 404."""
        raise NotImplementedError

    def handle(self, request: Request, fault: Fault | None) -> Response:
        """Produce the normal response; data-level faults are passed in to bend it."""
        raise NotImplementedError

    def page_of(self, request: Request) -> int | None:
        """0-based page index of a paged request, for ``Fault.page``."""
        return None

    def preflight(self, request: Request) -> Response | None:
        """Checks before the handler (auth, rate limits); a Response short-circuits."""
        return None

    def error_body(self, status: int, message: str, **extra: Any) -> Any:
        """The emulated API's error body."""
        return {"error": status, "message": message, **extra}

    def not_found(self, request: Request) -> Response:
        """Answer for an unrouted path."""
        return Response(404, self.error_body(404, f"no route for {request.method} {request.path}"))

    def fault_response(self, request: Request, fault: Fault) -> Response | None:
        """Response replacing the normal one for status-type faults; None otherwise."""
        if fault.kind is not FaultKind.STATUS:
            return None
        status = int(fault.status or 500)
        headers = dict(fault.headers)
        if fault.retry_after is not None:
            headers["Retry-After"] = str(fault.retry_after)
        if fault.body is None:
            return Response(status, self.error_body(status, _REASONS.get(status, "error")), headers)
        content_type = (
            "text/html" if isinstance(fault.body, str | bytes) else "application/json;charset=utf-8"
        )
        return Response(status, fault.body, headers, content_type)


_REASONS = {
    400: "Bad Request",
    404: "Not Found",
    429: "Too Many Requests",
    500: "internal error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def serve_until_signalled(emulator: EmulatorServer, out: TextIO | None = None) -> int:
    """Start ``emulator``, print its base URL, serve until SIGINT/SIGTERM; returns 0."""
    out = out or sys.stdout
    stop = threading.Event()
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, lambda *_: stop.set())
    emulator.start()
    try:
        # The first line is the bare URL so scripts can capture it.
        print(emulator.base_url, file=out, flush=True)
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        emulator.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
