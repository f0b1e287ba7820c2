"""Domain Intelligence emulator: our enrichment contract, over real HTTP.

Contract::

    POST /v1/enrich/batch   endpoint "enrich"
         {"inputs": [{"tenant_id": "t1", "name": "Acme", "email_domain": "acme.sg"}]}   (<= 100)
      -> 200 {"results": [{"tenant_id": "t1", "official_website": "https://acme.sg" | null,
                           "company_name": ... | null, "industry": ... | null,
                           "employee_count": 120 | null, "country": "SG" | null}]}
      -> 400 {"error": "too_many_inputs" | "invalid_request", "message": ...}
    GET  /healthz           endpoint "health"  -> 200 {"status": "ok"}

Results come back in input order, one per input. A tenant is looked up by ``tenant_id`` first,
then by lower-cased ``email_domain``; unknown tenants get all-null fields. 429 and 5xx are
injected with faults (``emu.fail(429, retry_after=2)``, ``emu.fail(503, times=2)``, ``"reset"``,
``"truncated_json"``, ``"short_body"``, ``emu.slow(0.5)``), all targetable by ``nth``/``times``.

Data format (``DomainIntelEmulator(data)`` / ``from_file(path)`` / ``to_data()``)::

    {
      "token": null,                     # optional bearer token to require
      "tenants": {"t1": {"official_website": "https://acme.sg", "company_name": "Acme Pte Ltd",
                         "industry": "Logistics", "employee_count": 120, "country": "SG"}},
      "domains": {"acme.sg": {...same fields...}}     # optional fallback by email domain
    }
"""

from __future__ import annotations

import argparse
import copy
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

from ._faults import Fault
from ._messages import Request, Response
from ._server import EmulatorServer, serve_until_signalled

__all__ = ["ENRICHMENT_FIELDS", "DomainIntelEmulator", "main"]

MAX_BATCH_INPUTS = 100
ENRICHMENT_FIELDS = ("official_website", "company_name", "industry", "employee_count", "country")


def _normalize_record(raw: Mapping[str, Any]) -> dict[str, Any]:
    record = {name: raw.get(name) for name in ENRICHMENT_FIELDS}
    if record["employee_count"] is not None:
        record["employee_count"] = int(record["employee_count"])
    return record


class DomainIntelEmulator(EmulatorServer):
    """Loopback Domain Intelligence service (see module doc).

    Args:
        data: ``{"tenants": {...}, "domains": {...}, "token": ...}``; None = knows nobody.
        token: bearer token to require (overrides ``data["token"]``); None = no auth.
        host, port: bind address; port 0 picks a free port.
    """

    name = "domain-intel"
    endpoints = ("enrich", "health")

    def __init__(
        self,
        data: Mapping[str, Any] | None = None,
        *,
        token: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(host=host, port=port)
        data = data or {}
        self._lock = threading.RLock()
        self._token: str | None = token if token is not None else data.get("token")
        self._tenants = {
            str(k): _normalize_record(v) for k, v in (data.get("tenants") or {}).items()
        }
        self._domains = {
            str(k).strip().lower(): _normalize_record(v)
            for k, v in (data.get("domains") or {}).items()
        }

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> Self:
        """Build an emulator from a JSON data file (kwargs as for the constructor)."""
        return cls(json.loads(Path(path).read_text(encoding="utf-8")), **kwargs)

    def to_data(self) -> dict[str, Any]:
        """The current state in the data-file format."""
        with self._lock:
            return {
                "token": self._token,
                "tenants": copy.deepcopy(self._tenants),
                "domains": copy.deepcopy(self._domains),
            }

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_data` as JSON."""
        Path(path).write_text(json.dumps(self.to_data(), indent=2), encoding="utf-8")

    def set_token(self, token: str | None) -> None:
        """Require a different token (None turns auth off)."""
        with self._lock:
            self._token = token

    def set_tenant(self, tenant_id: str, record: Mapping[str, Any]) -> None:
        """Add or replace what the service knows about a tenant."""
        with self._lock:
            self._tenants[str(tenant_id)] = _normalize_record(record)

    def remove_tenant(self, tenant_id: str) -> None:
        """Forget a tenant (it then comes back all-null unless its domain is known)."""
        with self._lock:
            self._tenants.pop(str(tenant_id), None)

    def set_domain(self, domain: str, record: Mapping[str, Any]) -> None:
        """Add or replace the fallback record for an email domain."""
        with self._lock:
            self._domains[domain.strip().lower()] = _normalize_record(record)

    # -- pipeline hooks ----------------------------------------------------------------------

    def route(self, method: str, path: str) -> tuple[str, dict[str, str]] | None:
        """Map paths to endpoint names."""
        if method == "POST" and path.rstrip("/") == "/v1/enrich/batch":
            return "enrich", {}
        if method == "GET" and path.rstrip("/") == "/healthz":
            return "health", {}
        return None

    def error_body(self, status: int, message: str, **extra: Any) -> dict[str, Any]:
        """``{"error": code, "message": ...}``."""
        code = {
            400: "invalid_request",
            401: "unauthorized",
            404: "not_found",
            429: "rate_limited",
        }.get(status, "server_error" if status >= 500 else "error")
        return {"error": extra.pop("code", code), "message": message, **extra}

    def preflight(self, request: Request) -> Response | None:
        """Bearer-token check when a token is configured."""
        with self._lock:
            token = self._token
        if token is not None and request.headers.get("Authorization", "") != f"Bearer {token}":
            return Response(401, self.error_body(401, "missing or invalid bearer token"))
        return None

    def handle(self, request: Request, fault: Fault | None) -> Response:
        """Answer health checks and enrichment batches."""
        if request.endpoint == "health":
            return Response(200, {"status": "ok"})
        try:
            payload = request.json
        except ValueError:
            return Response(400, self.error_body(400, "body is not JSON"))
        inputs = payload.get("inputs") if isinstance(payload, dict) else None
        if not isinstance(inputs, list):
            return Response(400, self.error_body(400, "'inputs' must be an array"))
        if len(inputs) > MAX_BATCH_INPUTS:
            message = f"at most {MAX_BATCH_INPUTS} inputs per batch, got {len(inputs)}"
            return Response(400, self.error_body(400, message, code="too_many_inputs"))
        results = []
        with self._lock:
            for item in inputs:
                tenant_id = item.get("tenant_id") if isinstance(item, dict) else None
                if not isinstance(tenant_id, str) or not tenant_id:
                    message = "every input needs a non-empty string 'tenant_id'"
                    return Response(400, self.error_body(400, message))
                domain = item.get("email_domain")
                record = self._tenants.get(tenant_id)
                if record is None and isinstance(domain, str):
                    record = self._domains.get(domain.strip().lower())
                results.append({"tenant_id": tenant_id, **(record or _normalize_record({}))})
        return Response(200, {"results": results})


def main(argv: list[str] | None = None) -> int:
    """``morpheus emulate domain-intel``: serve the emulator until Ctrl-C / SIGTERM."""
    parser = argparse.ArgumentParser(
        prog="morpheus emulate domain-intel",
        description="Serve a Domain Intelligence emulator on loopback.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port; 0 picks a free one")
    parser.add_argument("--data", type=Path, help="JSON data file (default: knows nobody)")
    parser.add_argument("--token", help="bearer token to require (default: none)")
    args = parser.parse_args(argv)
    data = json.loads(args.data.read_text(encoding="utf-8")) if args.data else {}
    emulator = DomainIntelEmulator(data, token=args.token, host=args.host, port=args.port)
    return serve_until_signalled(emulator)


if __name__ == "__main__":
    raise SystemExit(main())
