"""Shared plumbing for the loopback HTTP emulators.

Each emulator is one :class:`http.server.ThreadingHTTPServer` on 127.0.0.1, served from a
background thread. Every request goes through the same pipeline, so logging and fault
injection behave identically in both emulators::

    read body -> route -> log (seq, nth) -> pick fault -> optional delay
      -> reset | fault response | preflight (auth, rate limit) | handler
      -> write (maybe cut short) | drop unanswered (the handler's effect stays: answer_lost)

The request log entry is opened when the request arrives and completed *before* the response
bytes are written, so a client that has received a response always finds its entry in the log.

The pieces it drives live beside it: ``_faults`` (what to inject, on which request),
``_request_log``, ``_rate_limit`` (a rolling budget for emulators that enforce one) and
``_messages`` (the :class:`~._messages.Request` and :class:`~._messages.Response` the hooks see).
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
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self, TextIO
from urllib.parse import parse_qs, urlsplit

from ._faults import GENERIC_FAULTS, Fault, FaultKind, FaultRegistry
from ._messages import Request, Response
from ._request_log import RequestLog

__all__ = ["EmulatorServer", "serve_until_signalled"]


def _parse_log_body(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


# Query parameters that carry a credential (Graph's access_token): the request log keeps their
# name, never their value.
_SECRET_QUERY_PARAMETERS = frozenset({"access_token"})


def _loggable_query(query: dict[str, str]) -> dict[str, str]:
    return {k: ("<redacted>" if k in _SECRET_QUERY_PARAMETERS else v) for k, v in query.items()}


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
        record = emu.log._open(
            self.command, split.path, _loggable_query(query), endpoint, _parse_log_body(raw)
        )
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
        if fault is not None and fault.kind is FaultKind.ANSWER_LOST:
            # The request was applied; the client never learns it (a write it must retry safely).
            emu.log._update(record.seq, outcome="answer_lost", error=error)
            if fault.hold > 0:
                emu._stopping.wait(fault.hold)
            self._reset()
            return
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
    fault_endpoints: ClassVar[Mapping[str, str | tuple[str, ...]]] = {}

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
