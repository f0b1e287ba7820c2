"""How uvicorn serves the intake API, with the limits a public endpoint needs
(docs/security.md, "Server limits").

uvicorn's httptools protocol (the fastest it has) sets no bound on a request head and no
timeout for reading one: a header that never ends is buffered without limit, and a
connection that sends nothing stays open for ever. h11 bounds the head but has no read
timeout either and costs more per request. So the httptools protocol is kept and given the
three guards it lacks, in :class:`GuardedHttpToolsProtocol`:

* the head (request line and headers) is at most ``max_head_bytes``; past it the answer is
  ``431`` and the connection is closed. A head is counted as the parser hands over its URL and
  each header, and, while a header is still unfinished (httptools buffers it whole before
  handing it over), by the reads that carry it, so at most one read beyond the limit is ever
  buffered;
* at most ``max_headers`` header fields, else ``431``;
* the head must arrive within ``head_timeout`` seconds of the connection opening or of the
  previous response, else ``408`` and the connection is closed.

Every answer written here is an RFC 9457 problem (:mod:`.problems`), as are uvicorn's own
``400`` for a request that is not HTTP and its ``503`` past ``limit_concurrency``, which are
taken over. The body's read timeout is the application's
(``IntakeSettings.body_read_timeout``), and the cap on concurrent connections per worker is
uvicorn's ``limit_concurrency`` (``503`` past it). It subclasses a uvicorn class that is not
a documented extension point: the version is pinned by the lock file, and
``tests/intake/test_server_limits.py`` fails if an upgrade changes what it relies on.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.flow_control import service_unavailable
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from morpheus_pipelines.crm.api.problems import PROBLEM_JSON, problem_bytes


@dataclass(frozen=True)
class ServerLimits:
    max_head_bytes: int = 16 * 1024
    max_headers: int = 100
    head_timeout: float = 10.0
    keep_alive_timeout: int = 5
    max_connections: int = 1_000  # per worker; uvicorn answers 503 past it


DEFAULT_LIMITS = ServerLimits()

_STATUS_LINES = {
    400: b"HTTP/1.1 400 Bad Request\r\n",
    408: b"HTTP/1.1 408 Request Timeout\r\n",
    431: b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
}
_ERRORS = {400: "bad_request", 408: "request_timeout", 431: "request_head_too_large"}


class _HeadRefused(Exception):
    pass


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a bounded, timed request head."""

    limits: ServerLimits = DEFAULT_LIMITS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = True
        self._head_bytes = 0  # of the current head: parsed parts and unfinished reads
        self._header_count = 0
        self._began_in_read = False
        self._refusal: tuple[int, str] | None = None
        self._deferred: tuple[int, str] | None = None
        self._head_timer: asyncio.TimerHandle | None = None

    # -- the head timer ----------------------------------------------------------------------

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self.limits.head_timeout, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.cycle is not None and not self.cycle.response_complete:
            return  # a response is under way; its request's head was read in time
        self._refuse(408, "the request head did not arrive in time")

    # -- refusals ----------------------------------------------------------------------------

    def _refuse(self, status: int, message: str) -> None:
        if self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:
            # A pipelined request is refused while the one before it is still being
            # answered: that answer goes out whole first, then this one, then the close.
            self._deferred = (status, message)
            self.flow.pause_reading()
            return
        body = problem_bytes(status, _ERRORS[status], message)
        self.transport.write(
            b"".join(
                [
                    _STATUS_LINES[status],
                    b"content-type: " + PROBLEM_JSON.encode() + b"\r\n",
                    b"content-length: " + str(len(body)).encode() + b"\r\n",
                    b"connection: close\r\n\r\n",
                    body,
                ]
            )
        )
        self.transport.close()

    def send_400_response(self, msg: str) -> None:
        # The parser stops on a callback's exception and uvicorn answers 400; a head refused
        # here gets its own status instead, and a request that is not HTTP a problem.
        if self._refusal is not None:
            self._refuse(*self._refusal)
        else:
            self._refuse(400, "the request is not valid HTTP/1.1")

    # -- the protocol ------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        was_in_head = self._in_head
        self._began_in_read = False
        super().data_received(data)
        if (
            was_in_head
            and self._in_head
            and not self._began_in_read
            and not self.transport.is_closing()
        ):
            # A head begun in an earlier read and still unfinished: all of this read is its.
            self._count_head(len(data))
            if self._refusal is not None:
                self._refuse(*self._refusal)

    def _count_head(self, size: int) -> None:
        self._head_bytes += size
        if self._head_bytes > self.limits.max_head_bytes and self._refusal is None:
            self._refusal = (431, f"the request head is over {self.limits.max_head_bytes} bytes")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._began_in_read = True
        self._head_bytes = 0
        self._header_count = 0
        if self._head_timer is None:
            self._arm_head_timer()

    def on_url(self, url: bytes) -> None:
        self._count_head(len(url))
        if self._refusal is not None:
            raise _HeadRefused
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        self._count_head(len(name) + len(value) + 4)  # ": " and CRLF
        if self._header_count > self.limits.max_headers and self._refusal is None:
            self._refusal = (431, f"more than {self.limits.max_headers} header fields")
        if self._refusal is not None:
            raise _HeadRefused  # the parser stops; send_400_response answers
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._cancel_head_timer()
        super().on_headers_complete()

    def _start_asgi_task(self, cycle: Any, app: Any) -> None:
        # Past ``limit_concurrency`` uvicorn runs its plain-text 503 instead of the app.
        super()._start_asgi_task(cycle, _server_busy if app is service_unavailable else app)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._deferred is not None:
            status, message = self._deferred
            self._deferred = None
            self._refuse(status, message)
        elif not self.transport.is_closing():
            self._arm_head_timer()


async def _server_busy(scope: Any, receive: Any, send: Any) -> None:
    """uvicorn's answer past ``limit_concurrency``, as a problem."""
    body = problem_bytes(503, "server_busy", "too many connections; retry shortly")
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", PROBLEM_JSON.encode()),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", b"1"),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


def protocol_with(limits: ServerLimits) -> type[GuardedHttpToolsProtocol]:
    """The protocol class enforcing ``limits`` (uvicorn takes a class, not an instance). The
    default limits are the module's own class: with several workers uvicorn pickles its
    configuration, and only a class importable by name can be pickled."""
    if limits == DEFAULT_LIMITS:
        return GuardedHttpToolsProtocol
    return type("GuardedHttpToolsProtocol", (GuardedHttpToolsProtocol,), {"limits": limits})


def uvicorn_options(limits: ServerLimits = DEFAULT_LIMITS) -> dict[str, Any]:
    """The ``uvicorn.Config`` options every intake server uses: ``morpheus serve``, the demo
    and the tests."""
    return {
        "http": protocol_with(limits),
        "limit_concurrency": limits.max_connections,
        "timeout_keep_alive": limits.keep_alive_timeout,
        "access_log": False,  # the app writes its own JSON access lines
        "server_header": False,
    }
