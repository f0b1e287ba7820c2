"""What every signed webhook endpoint does before its own work: the client address admitted
(a refused signature counts against it, as a wrong API key does), the body read within the
limits of every endpoint, the signature checked over those raw bytes (401 and nothing read
further), then the body parsed (422 naming the field)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from starlette.requests import Request

from morpheus_pipelines.crm.api.dependencies import Intake, Refused, intake_of, invalid
from morpheus_pipelines.crm.api.problems import problem
from morpheus_pipelines.crm.rules.delivery_json import InvalidDelivery, SignatureRefused
from morpheus_pipelines.platform.observability.events import log_event

Parsed = TypeVar("Parsed")


async def read_signed_delivery(
    request: Request,
    *,
    verify: Callable[[Intake, bytes], None],
    parse: Callable[[bytes], Parsed],
    refused_event: str,
    not_ours: str,
) -> tuple[Intake, Parsed]:
    """The endpoint's intake and its parsed delivery; raises the 401 or 422 as a problem.
    ``verify`` raises :class:`SignatureRefused`, ``parse`` :class:`InvalidDelivery`;
    ``not_ours`` is the 401's detail."""
    intake = intake_of(request)
    intake.admit_address(request)  # a signature is this endpoint's authentication
    body = await intake.read_bytes(request)
    try:
        verify(intake, body)
    except SignatureRefused as refused:
        log_event(refused_event, level=logging.WARNING, reason=refused.reason)
        raise intake.failed_authentication(
            request, problem(401, refused.reason, not_ours)
        ) from None
    try:
        return intake, parse(body)
    except InvalidDelivery as exc:
        raise Refused(invalid(exc.field, str(exc))) from None
