"""Meta Graph API emulator: the Lead Ads and WhatsApp Cloud API endpoints Morpheus uses, over
real HTTP, and the signed webhooks Meta posts to us.

Modules: ``emulator`` (the server, routing, auth, faults, ``main``), ``leads`` (the stored
leads and their retrieval), ``whatsapp`` (business numbers, templates, the 24-hour window,
sends), ``events`` (the webhooks: leadgen, inbound messages, statuses, the automatic
statuses), ``payloads`` (the webhook bodies, built from plain values), ``webhooks`` (signing,
the delivery log, the background sender), ``errors`` (Graph's and the Cloud API's error
bodies).

Endpoints (any version prefix ``/vNN.N``; every request needs the token, as
``Authorization: Bearer <token>`` or ``?access_token=<token>``)::

    GET  /{version}/{leadgen_id}[?fields=a,b]   endpoint "lead"
         -> 200 {"created_time": "2026-07-01T08:49:14+0000", "id", "field_data":
                 [{"name": "email", "values": ["..."]}, ...]}       (Graph's default fields)
            with fields=: exactly those (of id, created_time, ad_id, form_id, field_data,
            is_organic, platform) and id; an unknown field is 400 code 100
         -> 400 GraphMethodException code 100, error_subcode 33: no such lead
    POST /{version}/{phone_number_id}/messages  endpoint "messages"
         {"messaging_product": "whatsapp", "to": "+6591234567", "type": "text",
          "text": {"body": "..."}}
         {"messaging_product": "whatsapp", "to": "...", "type": "template",
          "template": {"name": "hello_world", "language": {"code": "en_US"}}}
         -> 200 {"messaging_product": "whatsapp", "contacts": [{"input": to, "wa_id": digits}],
                 "messages": [{"id": "wamid...."}]}   (templates add "message_status": "accepted")

Errors (Graph's ``{"error": {"message", "type", "code", "error_subcode"?, "fbtrace_id"}}``;
the send endpoint's add ``error_data: {"messaging_product": "whatsapp", "details"}`` and
read ``"(#<code>) <title>"``)::

    no token                       400 OAuthException code 104
    wrong token                    401 (messages) / 400 (lead) OAuthException code 190,
                                   WWW-Authenticate header
    unknown lead / phone number    400 GraphMethodException code 100, subcode 33
    unreadable body, missing messaging_product or to, an unknown type
                                   400 code 100
    missing text.body, template.name, template.language.code
                                   400 code 131008
    free-form message, window closed or never opened
                                   400 code 131047 "Re-engagement message" (or, with
                                   reengagement_failure="webhook", 200 and then a failed
                                   status carrying 131047)
    unknown template name/language 404 code 132001
    unknown path                   400 code 2500

Webhooks (POSTed to ``webhook_url``, JSON, signed ``X-Hub-Signature-256: sha256=<hex
HMAC-SHA256 of the raw body under app_secret>`` and ``X-Hub-Signature: sha1=...``)::

    deliver_leadgen(page_id, leadgen_id, form_id=, ad_id=)
        {"object": "page", "entry": [{"id": page_id, "time": <epoch s>, "changes": [{"field":
         "leadgen", "value": {"leadgen_id", "page_id", "form_id", "adgroup_id", "ad_id",
         "created_time": <epoch s>}}]}]}            (an organic lead has no ad/adgroup id)
    send_inbound_message(phone_number_id, from_wa_id, text, profile_name=)
        {"object": "whatsapp_business_account", "entry": [{"id": waba_id, "changes":
         [{"field": "messages", "value": {"messaging_product": "whatsapp", "metadata":
         {"display_phone_number", "phone_number_id"}, "contacts": [{"profile": {"name"},
         "wa_id"}], "messages": [{"from", "id", "timestamp": "<epoch s>", "type": "text",
         "text": {"body"}}]}}]}]}                   (also opens the window from its time)
    deliver_statuses(wamid, ["sent", "delivered", "read"]) / deliver_failure(wamid, code)
        the same envelope with "statuses": [{"id", "status", "timestamp", "recipient_id",
        "conversation": {"id", "origin": {"type"}, "expiration_timestamp" (sent only)}
        and "pricing": {"billable", "pricing_model": "PMP", "category", "type"} (sent and
        delivered), "errors": [{"code", "title", "message", "error_data": {"details"},
        "href"}] (failed)}]
    verify_webhook(verify_token)   GET ?hub.mode=subscribe&hub.challenge=&hub.verify_token=

Each returns the HTTP status our side answered (None when no answer came; ``verify_webhook``
returns whether the challenge came back); every delivery is kept in ``emu.deliveries``
(:class:`~.webhooks.DeliveryLog`: kind, payload, raw body, headers, status, error).
``auto_status=True`` follows every accepted send with ``sent`` then ``delivered`` from a
background thread, ``auto_status_delay`` seconds apart; failures there are logged, never
raised. ``wait_for_deliveries(n)`` and ``wait_idle()`` let a test wait for them.

Behaviour worth knowing:

* The window: a free-form message (any type but ``template``) to ``wa_id`` from
  ``phone_number_id`` is accepted only within 24 hours of the last inbound message the
  emulator knows (``record_inbound(phone_number_id, wa_id, at)``, ``send_inbound_message``,
  or the data file), measured with the injectable ``now`` clock. Templates go out whatever
  the window, if registered (``add_template(name, language, category=)``; ``hello_world`` /
  ``en_US`` by default).
* ``sent_messages(to=, phone_number_id=)`` lists every accepted send (:class:`SentMessage`:
  wamid, to, wa_id, type, the request body, text or template, time); refused sends are not
  in it, so "sent at most once" is ``len(emu.sent_messages(to=...)) <= 1``.
* ``add_lead(leadgen_id, page_id=, form_id=, field_data={"email": ..., "phone_number": ...,
  "full_name": ...}, ad_id=, created_time=)`` seeds a lead; ``lead(id)`` reads it back.

Data format (``MetaGraphEmulator(data)`` / ``MetaGraphEmulator.from_file(path)``)::

    {
      "token": "...", "app_secret": "...", "webhook_url": "http://127.0.0.1:8000/...",
      "waba_id": "100000000000001",
      "phone_numbers": {"100000000000101": "15550100101"},   # default: this one
      "templates": [{"name": "hello_world", "language": "en_US", "category": "UTILITY"}],
      "leads": {"900000000000001": {"page_id": "...", "form_id": "...", "ad_id": "...",
                "created_time": "2026-07-01T08:00:00+00:00",
                "field_data": {"email": "a@x.com", "full_name": "A B"}}},
      "inbound": [{"phone_number_id": "...", "wa_id": "6591234567",
                   "at": "2026-07-01T08:00:00+00:00"}]
    }

Faults: the generic ones (``fail(503, endpoint="messages")``, ``"reset"``,
``"truncated_json"``, ``"short_body"``, ``slow(delay)``), a status on ``messages`` answered in
the Cloud API's shape (429 -> 130429, 500 -> 131000, 502/503/504 -> 2), ``expire_token()``
(code 190, subcode 463, whatever the token) and ``lose_answer()`` (the send is recorded,
then the connection is reset). See
:class:`~morpheus_pipelines.devtools.emulators._faults.Fault` for targeting.

There is no HTTP control surface (the HubSpot emulator has none either): tests and the demo
drive the emulator through these methods in-process; ``morpheus emulate meta`` serves the
data file, answers sends, and with ``--auto-status`` posts their statuses.
"""

from .emulator import (
    DEFAULT_DISPLAY_PHONE_NUMBER,
    DEFAULT_PHONE_NUMBER_ID,
    DEFAULT_TOKEN,
    DEFAULT_WABA_ID,
    MetaGraphEmulator,
    main,
)
from .payloads import status_error
from .webhooks import Delivery, DeliveryLog, sign
from .whatsapp import SentMessage

__all__ = [
    "DEFAULT_DISPLAY_PHONE_NUMBER",
    "DEFAULT_PHONE_NUMBER_ID",
    "DEFAULT_TOKEN",
    "DEFAULT_WABA_ID",
    "Delivery",
    "DeliveryLog",
    "MetaGraphEmulator",
    "SentMessage",
    "main",
    "sign",
    "status_error",
]
