"""A Slack incoming webhook (``MORPHEUS_SLACK_WEBHOOK_URL``, docs/reports.md, "Delivery").

The URL is the credential: it is registered with the redaction and never appears in a repr,
an error or a log line. Like the SMTP client, a post that certainly did not arrive
(:class:`~.smtp.NotSent`: no connection, 429 or 5xx, ``retryable``; another 4xx, final) is
told from one whose answer was lost (:class:`~.smtp.AnswerLost`: it may have been posted).
"""

from __future__ import annotations

import requests

from morpheus_pipelines.platform.clients.smtp import AnswerLost, NotSent
from morpheus_pipelines.platform.observability.redaction import register_secret


class SlackWebhook:
    configured = True

    def __init__(self, url: str, *, timeout: float = 10.0) -> None:
        register_secret(url)
        self._url = url
        self.timeout = timeout

    def __repr__(self) -> str:
        return "SlackWebhook(<set>)"

    def post(self, text: str) -> None:
        """Post ``text`` (Slack's mrkdwn); raises :class:`NotSent` or :class:`AnswerLost`."""
        try:
            answer = requests.post(self._url, json={"text": text}, timeout=self.timeout)
        except requests.ConnectionError as exc:
            raise NotSent(f"the webhook could not be reached ({type(exc).__name__})") from None
        except requests.RequestException as exc:  # a timeout after the request was written
            raise AnswerLost(f"no answer from the webhook ({type(exc).__name__})") from None
        if answer.status_code >= 300:
            retryable = answer.status_code == 429 or answer.status_code >= 500
            # Slack's body is a short reason ("invalid_token", "channel_not_found").
            reason = " ".join(answer.text.split())[:100]
            raise NotSent(
                f"the webhook answered {answer.status_code} {reason}".rstrip(),
                code=None if retryable else answer.status_code,
            )
