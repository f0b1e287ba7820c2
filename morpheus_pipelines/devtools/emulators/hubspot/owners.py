"""The Owners API: ``GET /crm/v3/owners``."""

from __future__ import annotations

import copy
from typing import Any

from .._faults import Fault
from .._messages import Request, Response
from .params import _int_param
from .portal import Portal

MAX_OWNERS_LIMIT = 500


class OwnerEndpoints(Portal):
    """The ``owners`` endpoint."""

    def _owner_window(self, request: Request) -> tuple[int, int]:
        limit = _int_param(request.query, "limit", 100, 1, MAX_OWNERS_LIMIT)
        return _int_param(request.query, "after", 0, 0, None), limit

    def _handle_owners(self, request: Request, fault: Fault | None) -> Response:
        start, limit = self._owner_window(request)
        archived = request.query.get("archived", "false").lower() == "true"
        email = request.query.get("email", "").lower()
        with self._lock:
            owners = [
                copy.deepcopy(o)
                for o in self._owners
                if o["archived"] == archived and (not email or o.get("email", "").lower() == email)
            ]
        body: dict[str, Any] = {"results": owners[start : start + limit]}
        if start + limit < len(owners):
            body["paging"] = {"next": {"after": str(start + limit)}}
        return Response(200, body)
