"""Meta's side of webhooks: signed POSTs to our endpoint, their log and a background sender.

Meta signs the raw body with the app secret: ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256>``
(and the older ``X-Hub-Signature: sha1=<hex HMAC-SHA1>``). The signature is computed here on
its own, not with the service's rule, so a delivery the service accepts shows the two agree.

Every delivery (synchronous or from the background sender) is kept in a :class:`DeliveryLog`
with the status our side answered; one that fails (connection refused, timeout, non-2xx) is
recorded with its status or error and never raised from the background thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import queue
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode

__all__ = [
    "BackgroundSender",
    "Delivery",
    "DeliveryLog",
    "post_signed",
    "sign",
    "verify_subscription",
]

USER_AGENT = "facebookexternalua"


def sign(body: bytes, app_secret: str, *, digest: str = "sha256") -> str:
    """The signature header value Meta sends for ``body``: ``sha256=<hex>``."""
    mac = hmac.new(app_secret.encode("utf-8"), body, getattr(hashlib, digest))
    return f"{digest}={mac.hexdigest()}"


@dataclass(frozen=True)
class Delivery:
    """One webhook POST as sent, and how our side answered.

    ``kind`` is ``"leadgen"``, ``"messages"`` (an inbound message), ``"statuses"`` or
    ``"verification"``; ``status`` is None when no HTTP answer came (``error`` says why).
    """

    seq: int
    kind: str
    url: str
    payload: Any
    body: bytes
    headers: Mapping[str, str]
    status: int | None
    error: str | None
    background: bool
    timestamp: float
    response_body: bytes = b""

    @property
    def ok(self) -> bool:
        """True when our side answered 2xx."""
        return self.status is not None and 200 <= self.status < 300


class DeliveryLog:
    """Thread-safe list of deliveries, oldest first."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._deliveries: list[Delivery] = []

    def _append(self, delivery: Delivery) -> Delivery:
        with self._cond:
            delivery = replace(delivery, seq=len(self._deliveries) + 1)
            self._deliveries.append(delivery)
            self._cond.notify_all()
            return delivery

    def entries(self, kind: str | None = None) -> list[Delivery]:
        """A snapshot, optionally of one kind."""
        with self._cond:
            return [d for d in self._deliveries if kind is None or d.kind == kind]

    def wait_until(self, predicate: Callable[[list[Delivery]], bool], timeout: float = 5.0) -> bool:
        """Block until ``predicate(entries)`` holds (True) or ``timeout`` passes (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(list(self._deliveries)), timeout)

    def clear(self) -> None:
        """Forget every delivery."""
        with self._cond:
            self._deliveries.clear()

    def __len__(self) -> int:
        with self._cond:
            return len(self._deliveries)


def _send(request: urllib.request.Request, timeout: float) -> tuple[int | None, bytes, str | None]:
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, answer.read(), None
    except urllib.error.HTTPError as exc:  # a non-2xx answer is an answer
        with contextlib.suppress(OSError):
            return exc.code, exc.read(), None
        return exc.code, b"", None
    except (OSError, ValueError) as exc:  # refused, reset, timeout, bad URL
        return None, b"", f"{type(exc).__name__}: {exc}"


def _deliver(
    log: DeliveryLog,
    request: urllib.request.Request,
    kind: str,
    payload: Any,
    *,
    background: bool,
    timeout: float,
) -> Delivery:
    status, answer, error = _send(request, timeout)
    body = request.data if isinstance(request.data, bytes) else b""
    delivery = Delivery(
        seq=0,  # numbered by the log
        kind=kind,
        url=request.full_url,
        payload=payload,
        body=body,
        # as sent: urllib title-cases names on the wire (X-Hub-Signature-256)
        headers={name.title(): value for name, value in request.header_items()},
        status=status,
        error=error,
        background=background,
        timestamp=time.time(),
        response_body=answer,
    )
    return log._append(delivery)


def post_signed(
    log: DeliveryLog,
    url: str,
    app_secret: str,
    kind: str,
    payload: Any,
    *,
    background: bool = False,
    timeout: float = 10.0,
) -> Delivery:
    """POST ``payload`` as JSON to ``url``, signed as Meta signs; logged and returned."""
    body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Hub-Signature": sign(body, app_secret, digest="sha1"),
        "X-Hub-Signature-256": sign(body, app_secret),
    }
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    return _deliver(log, request, kind, payload, background=background, timeout=timeout)


def verify_subscription(
    log: DeliveryLog, url: str, verify_token: str, challenge: str, *, timeout: float = 10.0
) -> Delivery:
    """Meta's verification request: ``GET url?hub.mode=subscribe&hub.challenge=...&
    hub.verify_token=...``; our side must answer 200 with the challenge as its body."""
    query = urlencode(
        {"hub.mode": "subscribe", "hub.challenge": challenge, "hub.verify_token": verify_token}
    )
    separator = "&" if "?" in url else "?"
    full = f"{url}{separator}{query}"
    request = urllib.request.Request(full, headers={"User-Agent": USER_AGENT}, method="GET")
    return _deliver(log, request, "verification", None, background=False, timeout=timeout)


class BackgroundSender:
    """One daemon thread running queued deliveries in order, each after its delay.

    Used for what Meta sends on its own after a send (the ``sent``/``delivered`` statuses, or
    an asynchronous failure). Work still queued at :meth:`stop` is dropped; an exception in a
    job is reported through ``on_error`` instead of killing the thread.
    """

    def __init__(self, on_error: Callable[[str], None], *, name: str = "meta-webhooks") -> None:
        self._on_error = on_error
        self._name = name
        self._queue: queue.Queue[tuple[float, Callable[[], None]] | None] = queue.Queue()
        self._stopping = threading.Event()
        self._idle = threading.Condition()
        self._pending = 0
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread (idempotent)."""
        if self._thread is not None:
            return
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop after the job in progress; queued jobs are dropped."""
        thread = self._thread
        if thread is None:
            return
        self._stopping.set()
        self._queue.put(None)
        thread.join(timeout)
        self._thread = None
        with self._idle:
            while not self._queue.empty():
                with contextlib.suppress(queue.Empty):
                    self._queue.get_nowait()
            self._pending = 0
            self._idle.notify_all()

    def submit(self, job: Callable[[], None], *, delay: float = 0.0) -> None:
        """Run ``job`` on the thread, ``delay`` seconds after the jobs before it."""
        with self._idle:
            self._pending += 1
        self._queue.put((delay, job))

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Block until every submitted job has run (True) or ``timeout`` passes (False)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None or self._stopping.is_set():
                return
            delay, job = item
            if delay > 0 and self._stopping.wait(delay):
                return
            try:
                job()
            except Exception as exc:  # a bug of the emulator: surfaced, never raised here
                self._on_error(f"{type(exc).__name__}: {exc}")
            finally:
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()
