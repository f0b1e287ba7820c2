"""Helpers of the Meta Graph emulator tests: the test credentials, a hand-advanced clock, and
our webhook endpoint reduced to an independent ``http.server`` that checks signatures."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "META_APP_SECRET",
    "META_TOKEN",
    "META_VERIFY_TOKEN",
    "DateClock",
    "Received",
    "WebhookReceiver",
    "start_receiver",
]

META_TOKEN = "EAAmeta-test-token"
META_APP_SECRET = "meta-app-secret-for-tests"
META_VERIFY_TOKEN = "verify-me"


class DateClock:
    """A hand-advanced wall clock (aware UTC datetimes) for the 24-hour window."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 7, 1, 8, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@dataclass
class Received:
    """One request the receiver got, and whether its signature verified."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    signature_valid: bool

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class WebhookReceiver:
    """Our side, reduced to the least: a loopback ``http.server`` that recomputes
    ``X-Hub-Signature-256`` over the raw body with the app secret on its own, records every
    request and answers ``status`` (the Meta verification GET echoes ``hub.challenge``)."""

    secret: str
    status: int = 200
    received: list[Received] = field(default_factory=list)
    url: str = ""
    _cond: threading.Condition = field(default_factory=threading.Condition)

    def expected_signature(self, body: bytes) -> str:
        return "sha256=" + hmac.new(self.secret.encode(), body, hashlib.sha256).hexdigest()

    def record(self, item: Received) -> None:
        with self._cond:
            self.received.append(item)
            self._cond.notify_all()

    def wait_for(self, count: int, timeout: float = 5.0) -> list[Received]:
        with self._cond:
            self._cond.wait_for(lambda: len(self.received) >= count, timeout)
            return list(self.received)


def _receiver_handler(receiver: WebhookReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _record(self, body: bytes) -> None:
            split = urlsplit(self.path)
            signature = self.headers.get("X-Hub-Signature-256", "")
            receiver.record(
                Received(
                    method=self.command,
                    path=split.path,
                    query={k: v[-1] for k, v in parse_qs(split.query).items()},
                    headers=dict(self.headers.items()),
                    body=body,
                    signature_valid=hmac.compare_digest(
                        signature, receiver.expected_signature(body)
                    ),
                )
            )

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._record(body)
            self.send_response(receiver.status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            self._record(b"")
            query = parse_qs(urlsplit(self.path).query)
            verified = query.get("hub.verify_token") == [META_VERIFY_TOKEN]
            answer = query.get("hub.challenge", [""])[0].encode() if verified else b""
            self.send_response(200 if verified else 403)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    return Handler


def start_receiver(secret: str = META_APP_SECRET) -> tuple[WebhookReceiver, ThreadingHTTPServer]:
    """A receiver serving on a free loopback port from a background thread; shut the server
    down (``shutdown()``, ``server_close()``) when done."""
    found = WebhookReceiver(secret)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _receiver_handler(found))
    found.url = f"http://127.0.0.1:{server.server_address[1]}/webhooks/meta"
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    return found, server
