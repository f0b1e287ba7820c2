"""The Meta Graph emulator: one loopback server for the lead retrieval and WhatsApp send
endpoints, and the webhook sender beside it (see the package docstring)."""

from __future__ import annotations

import argparse
import json
import re
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from .._faults import GENERIC_FAULTS, Fault, FaultKind
from .._messages import Request, Response
from .._server import EmulatorServer, serve_until_signalled
from .errors import CLOUD_API_CODES, cloud_error, graph_error
from .events import WebhookEvents
from .leads import LeadEndpoints
from .webhooks import BackgroundSender, DeliveryLog
from .whatsapp import SentMessage, WhatsAppEndpoints, as_utc

__all__ = [
    "DEFAULT_DISPLAY_PHONE_NUMBER",
    "DEFAULT_PHONE_NUMBER_ID",
    "DEFAULT_TEMPLATES",
    "DEFAULT_TOKEN",
    "DEFAULT_WABA_ID",
    "MetaGraphEmulator",
    "main",
]

DEFAULT_TOKEN = "meta-emulator-access-token"
DEFAULT_WABA_ID = "100000000000001"
DEFAULT_PHONE_NUMBER_ID = "100000000000101"
DEFAULT_DISPLAY_PHONE_NUMBER = "15550100101"
# Meta gives every new WhatsApp Business Account the hello_world template.
DEFAULT_TEMPLATES = (("hello_world", "en_US", "UTILITY"),)

_VERSION = r"/v\d+\.\d+"
_NODE_RE = re.compile(rf"^{_VERSION}/([^/]+)/?$")
_MESSAGES_RE = re.compile(rf"^{_VERSION}/([^/]+)/messages/?$")
_MISSING_TOKEN = "An access token is required to request this resource."
_INVALID_TOKEN = "Invalid OAuth access token - Cannot parse access token"
_EXPIRED_TOKEN = "Error validating access token: Session has expired."
# The Cloud API's codes for an injected status on the send endpoint (Graph's 1/2/4 elsewhere).
_CLOUD_FAULT_CODES = {429: 130429, 500: 131000, 502: 2, 503: 2, 504: 2}
_GRAPH_FAULT_CODES = {
    400: (100, "Invalid parameter"),
    401: (190, _INVALID_TOKEN),
    403: (200, "(#200) Permissions error"),
    404: (100, "Invalid parameter"),
    429: (4, "(#4) Application request limit reached"),
    500: (1, "An unknown error has occurred."),
}


class MetaGraphEmulator(WebhookEvents, WhatsAppEndpoints, LeadEndpoints, EmulatorServer):
    """Loopback Meta Graph API: lead retrieval, WhatsApp sends, and the webhooks Meta posts
    (see the package doc).

    Args:
        data: the data dict (package docstring format); None = the default number and
            template, no leads.
        token: the valid access token (overrides ``data["token"]``).
        app_secret: signs the webhooks (``X-Hub-Signature-256``); needed to deliver any.
        webhook_url: our endpoint the webhooks go to.
        host, port: bind address; port 0 picks a free port.
        now: the clock (returns an aware datetime) for the 24-hour window and every
            timestamp; inject one in tests to age a window without sleeping.
        auto_status: follow every accepted send with ``sent`` and ``delivered`` status
            webhooks from a background thread (needs ``webhook_url`` and ``app_secret``).
        auto_status_delay: seconds before each background delivery, so our side has the
            send's answer before its statuses arrive.
        reengagement_failure: how a free-form message outside the window fails:
            ``"response"`` (400, code 131047, nothing sent) or ``"webhook"`` (accepted with a
            wamid, then a ``failed`` status carrying 131047). Meta documents that Cloud API
            errors come synchronously, by webhook, or both; clients should handle both.
        waba_id: the WhatsApp Business Account id the webhooks name.
        webhook_timeout: seconds to wait for our side's answer to a delivery.
    """

    name = "meta-graph"
    endpoints = ("lead", "messages")
    supported_faults = GENERIC_FAULTS | {FaultKind.ANSWER_LOST, FaultKind.UNAUTHORIZED}

    def __init__(
        self,
        data: Mapping[str, Any] | None = None,
        *,
        token: str | None = None,
        app_secret: str | None = None,
        webhook_url: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        now: Callable[[], datetime] | None = None,
        auto_status: bool = False,
        auto_status_delay: float = 0.05,
        reengagement_failure: str = "response",
        waba_id: str | None = None,
        webhook_timeout: float = 10.0,
    ) -> None:
        super().__init__(host=host, port=port)
        data = data or {}
        if reengagement_failure not in ("response", "webhook"):
            raise ValueError("reengagement_failure must be 'response' or 'webhook'")
        self._lock = threading.RLock()
        self._clock = now or (lambda: datetime.now(UTC))
        self.token: str = token or data.get("token") or DEFAULT_TOKEN
        self.app_secret = app_secret or data.get("app_secret")
        self.webhook_url = webhook_url or data.get("webhook_url")
        if auto_status and (self.webhook_url is None or self.app_secret is None):
            raise ValueError("auto_status needs webhook_url and app_secret")
        self.auto_status = auto_status
        self.auto_status_delay = auto_status_delay
        self.reengagement_failure = reengagement_failure
        self.waba_id = str(waba_id or data.get("waba_id") or DEFAULT_WABA_ID)
        self.webhook_timeout = webhook_timeout
        self.deliveries = DeliveryLog()
        self._sender = BackgroundSender(self.errors.append)
        self._leads: dict[str, dict[str, Any]] = {}
        self._lead_pages: dict[str, str] = {}
        self._phone_numbers: dict[str, str] = {}
        self._templates: dict[tuple[str, str], str] = {}
        self._inbound: dict[tuple[str, str], datetime] = {}
        self._sent: list[SentMessage] = []
        self._load(data)

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> Self:
        """Build an emulator from a JSON data file (kwargs as for the constructor)."""
        return cls(json.loads(Path(path).read_text(encoding="utf-8")), **kwargs)

    def _now(self) -> datetime:
        return as_utc(self._clock())

    def _load(self, data: Mapping[str, Any]) -> None:
        default_numbers = {DEFAULT_PHONE_NUMBER_ID: DEFAULT_DISPLAY_PHONE_NUMBER}
        numbers = data.get("phone_numbers") or default_numbers
        for phone_number_id, display in numbers.items():
            self.add_phone_number(phone_number_id, display)
        templates = data.get("templates")
        if templates is None:
            templates = [
                {"name": n, "language": lang, "category": c} for n, lang, c in DEFAULT_TEMPLATES
            ]
        for template in templates:
            self.add_template(
                template["name"], template["language"], category=template.get("category", "UTILITY")
            )
        for leadgen_id, lead in (data.get("leads") or {}).items():
            created = lead.get("created_time")
            self.add_lead(
                leadgen_id,
                page_id=lead["page_id"],
                form_id=lead["form_id"],
                field_data=lead["field_data"],
                ad_id=lead.get("ad_id"),
                created_time=datetime.fromisoformat(created) if created else None,
            )
        for inbound in data.get("inbound") or []:
            at = inbound.get("at")
            self.record_inbound(
                inbound["phone_number_id"],
                inbound["wa_id"],
                datetime.fromisoformat(at) if at else None,
            )

    # -- lifecycle: the background webhook sender lives as long as the server ---------------

    def start(self) -> Self:
        """Bind and serve; also start the background webhook sender."""
        super().start()
        self._sender.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving and the background sender (queued deliveries are dropped)."""
        super().stop(timeout)
        self._sender.stop(timeout)

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Block until every queued background delivery has been made (True) or ``timeout``
        passes (False)."""
        return self._sender.wait_idle(timeout)

    # -- fault helpers -----------------------------------------------------------------------

    def expire_token(
        self, *, endpoint: str | None = None, nth: int | None = None, times: int | None = 1
    ) -> Fault:
        """Answer as for an expired token (code 190, subcode 463) even with the right one."""
        return self.fail(FaultKind.UNAUTHORIZED, endpoint=endpoint, nth=nth, times=times)

    def lose_answer(
        self,
        endpoint: str = "messages",
        *,
        hold: float = 0.0,
        nth: int | None = None,
        times: int | None = 1,
    ) -> Fault:
        """The request is applied (a send is recorded, its statuses queued), then the
        connection is reset, after ``hold`` seconds when given: a client that retries the
        send blindly sends the message twice."""
        return self.fail(FaultKind.ANSWER_LOST, endpoint=endpoint, nth=nth, times=times, hold=hold)

    # -- pipeline hooks ----------------------------------------------------------------------

    def route(self, method: str, path: str) -> tuple[str, dict[str, str]] | None:
        """``GET /vNN.N/{id}`` is a lead read, ``POST /vNN.N/{id}/messages`` a send."""
        if method == "GET" and (m := _NODE_RE.match(path)):
            return "lead", {"object_id": m.group(1)}
        if method == "POST" and (m := _MESSAGES_RE.match(path)):
            return "messages", {"object_id": m.group(1)}
        return None

    def preflight(self, request: Request) -> Response | None:
        """The access token, from ``Authorization: Bearer`` or the ``access_token`` query
        parameter: missing is code 104, wrong is code 190."""
        authorization = request.headers.get("Authorization", "")
        supplied = request.query.get("access_token")
        scheme, _, credential = authorization.partition(" ")
        if scheme.lower() in ("bearer", "oauth") and credential.strip():
            supplied = credential.strip()
        if not supplied:
            return Response(400, graph_error(_MISSING_TOKEN, code=104))
        if supplied != self.token:
            return self._token_refused(request, _INVALID_TOKEN)
        return None

    def handle(self, request: Request, fault: Fault | None) -> Response:
        """Dispatch to the endpoint handlers."""
        if request.endpoint == "lead":
            return self._handle_lead(request)
        return self._handle_messages(request)

    def error_body(self, status: int, message: str, **extra: Any) -> dict[str, Any]:
        """Graph's error shape, with the code Graph uses for that HTTP status."""
        code, graph_message = _GRAPH_FAULT_CODES.get(status, (2, "Service temporarily unavailable"))
        if message.startswith("emulator error"):
            graph_message = message
        return graph_error(graph_message, code=code, **extra)

    def not_found(self, request: Request) -> Response:
        """Graph's answer for a path it has no node or edge for."""
        return Response(400, graph_error(f"Unknown path components: {request.path}", code=2500))

    def fault_response(self, request: Request, fault: Fault) -> Response | None:
        """Status faults in the Cloud API's shape on the send endpoint, Graph's elsewhere; the
        expired-token fault."""
        if fault.kind is FaultKind.UNAUTHORIZED:
            return self._token_refused(request, _EXPIRED_TOKEN, subcode=463)
        if (
            fault.kind is FaultKind.STATUS
            and fault.body is None
            and request.endpoint == "messages"
            and (code := _CLOUD_FAULT_CODES.get(int(fault.status or 500))) is not None
        ):
            response = cloud_error(code, CLOUD_API_CODES[code][0])
            response.status = int(fault.status or 500)
            if fault.retry_after is not None:
                response.headers["Retry-After"] = str(fault.retry_after)
            response.headers.update(fault.headers)
            return response
        return super().fault_response(request, fault)

    def _token_refused(
        self, request: Request, message: str, *, subcode: int | None = None
    ) -> Response:
        # The Cloud API documents 401 for code 190; Graph's node reads answer it with 400.
        status = 401 if request.endpoint == "messages" else 400
        header = f'OAuth "Facebook Platform" "invalid_token" "{message}"'
        return Response(
            status, graph_error(message, code=190, subcode=subcode), {"WWW-Authenticate": header}
        )


def main(argv: list[str] | None = None) -> int:
    """``morpheus emulate meta``: serve the emulator until Ctrl-C / SIGTERM."""
    parser = argparse.ArgumentParser(
        prog="morpheus emulate meta",
        description="Serve a Meta Graph API (Lead Ads, WhatsApp Cloud API) emulator on loopback.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port; 0 picks a free one")
    parser.add_argument("--data", type=Path, help="JSON data file (leads, numbers, templates)")
    parser.add_argument("--token", help=f"the valid access token (default {DEFAULT_TOKEN})")
    parser.add_argument("--app-secret", help="app secret signing the webhooks")
    parser.add_argument("--webhook-url", help="our endpoint the webhooks are posted to")
    parser.add_argument(
        "--auto-status",
        action="store_true",
        help="follow every accepted send with 'sent' and 'delivered' status webhooks",
    )
    parser.add_argument(
        "--reengagement-failure",
        choices=("response", "webhook"),
        default="response",
        help="a free-form message outside the 24 h window fails in the response (131047, "
        "default) or later by a 'failed' status webhook",
    )
    args = parser.parse_args(argv)
    data = json.loads(args.data.read_text(encoding="utf-8")) if args.data else {}
    try:
        emulator = MetaGraphEmulator(
            data,
            token=args.token,
            app_secret=args.app_secret,
            webhook_url=args.webhook_url,
            host=args.host,
            port=args.port,
            auto_status=args.auto_status,
            reengagement_failure=args.reengagement_failure,
        )
    except ValueError as exc:
        parser.error(str(exc))
    return serve_until_signalled(emulator)


if __name__ == "__main__":
    raise SystemExit(main())
