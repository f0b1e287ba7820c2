"""Email through an SMTP server (``MORPHEUS_SMTP_URL``, docs/messages.md), with the standard
library's ``smtplib`` and ``email.message``.

URL forms: ``smtp://[user:password@]host[:port]`` (port 25 by default; add ``?starttls=true``
to upgrade the connection with STARTTLS before logging in) and
``smtps://[user:password@]host[:port]`` for implicit TLS (port 465). User and password are
percent-decoded. The password is registered with the redaction and never appears in a repr
or an error.

Like the WhatsApp client, this one tells "certainly not sent" (:class:`NotSent`: no
connection, or the server refused the envelope or the data with a reply code) from "may have
been sent" (:class:`AnswerLost`: the connection broke or timed out after the data was
written, before the server's final reply). A refusal carries the server's code for the rules
(``crm.rules.message_sending.smtp_outcome``: 4xx retried, 5xx final).
"""

from __future__ import annotations

import smtplib
import ssl
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import formatdate, parseaddr
from typing import Self
from urllib.parse import parse_qs, unquote, urlsplit

from morpheus_pipelines.platform.observability.redaction import register_secret

_TRUE = {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class SmtpServer:
    """Where mail goes: parsed from ``MORPHEUS_SMTP_URL``."""

    host: str
    port: int
    implicit_tls: bool = False
    starttls: bool = False
    user: str = ""
    password: str = field(default="", repr=False)

    @classmethod
    def from_url(cls, url: str) -> SmtpServer:
        """Parse an ``smtp://`` or ``smtps://`` URL; raises ``ValueError`` naming what is
        wrong, without the password."""
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps"):
            raise ValueError("MORPHEUS_SMTP_URL must start with smtp:// or smtps://")
        if not parts.hostname:
            raise ValueError("MORPHEUS_SMTP_URL names no host")
        try:
            port = parts.port
        except ValueError:
            raise ValueError("MORPHEUS_SMTP_URL has a port that is not a number") from None
        implicit = parts.scheme == "smtps"
        query = parse_qs(parts.query)
        starttls = (query.get("starttls") or [""])[0].lower() in _TRUE
        if implicit and starttls:
            raise ValueError("MORPHEUS_SMTP_URL: smtps:// is TLS already; drop starttls")
        password = unquote(parts.password or "")
        register_secret(password)
        return cls(
            host=parts.hostname,
            port=port or (465 if implicit else 25),
            implicit_tls=implicit,
            starttls=starttls,
            user=unquote(parts.username or ""),
            password=password,
        )


class NotSent(RuntimeError):
    """The mail certainly was not accepted; ``code`` is the server's reply code, or ``None``
    when no server answered."""

    def __init__(self, message: str, *, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


class AnswerLost(RuntimeError):
    """The data was written but the server's final reply never came: it may have the mail."""


class _Disconnected(NotSent):
    """The session was gone before the envelope was accepted (nothing sent)."""

    def __init__(self) -> None:
        super().__init__("the SMTP server closed the session")


def _reply_text(raw: bytes | str) -> str:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    return " ".join(text.split())[:200]


class SmtpSender:
    """Sends one email at a time over one connection, opened on first use and opened again
    after a failure."""

    configured = True

    def __init__(
        self,
        server: SmtpServer,
        from_address: str,
        *,
        timeout: float = 20.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.server = server
        self.from_address = from_address
        self.timeout = timeout
        self.ssl_context = ssl_context or ssl.create_default_context()
        self.sent = 0
        self._connection: smtplib.SMTP | None = None

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.quit()
            except (smtplib.SMTPException, OSError):
                connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def build(self, message_id: str, to: str, subject: str, body: str) -> EmailMessage:
        """The email: from ``from_address``, with our ``Message-ID``."""
        mail = EmailMessage()
        mail["From"] = self.from_address
        mail["To"] = to
        mail["Subject"] = subject
        mail["Date"] = formatdate(usegmt=True)
        mail["Message-ID"] = message_id
        mail.set_content(body)
        return mail

    def _connect(self) -> smtplib.SMTP:
        server = self.server
        try:
            if server.implicit_tls:
                connection: smtplib.SMTP = smtplib.SMTP_SSL(
                    server.host, server.port, timeout=self.timeout, context=self.ssl_context
                )
            else:
                connection = smtplib.SMTP(server.host, server.port, timeout=self.timeout)
            connection.ehlo()
            if server.starttls:
                connection.starttls(context=self.ssl_context)
                connection.ehlo()
            if server.user:
                connection.login(server.user, server.password)
        except smtplib.SMTPResponseException as exc:
            raise NotSent(
                f"the SMTP server refused the session: {exc.smtp_code} "
                f"{_reply_text(exc.smtp_error)}",
                code=exc.smtp_code,
            ) from None
        except (smtplib.SMTPException, OSError) as exc:
            raise NotSent(f"the SMTP server could not be reached ({type(exc).__name__})") from None
        return connection

    def send(self, mail: EmailMessage) -> None:
        """Hand ``mail`` to the server; raises :class:`NotSent` or :class:`AnswerLost`. A
        kept connection the server has closed meanwhile is opened again once."""
        reused = self._connection is not None
        try:
            self._send(mail)
        except _Disconnected:
            if not reused:
                raise NotSent("the SMTP server closed the session before the data") from None
            self._send(mail)

    def _send(self, mail: EmailMessage) -> None:
        if self._connection is None:
            self._connection = self._connect()
        connection = self._connection
        to = mail["To"]
        try:
            # Envelope first: a refusal here certainly sent nothing.
            code, reply = connection.mail(parseaddr(self.from_address)[1])
            if code != 250:
                raise NotSent(f"MAIL FROM refused: {code} {_reply_text(reply)}", code=code)
            code, reply = connection.rcpt(parseaddr(to)[1])
            if code not in (250, 251):
                raise NotSent(f"RCPT TO refused: {code} {_reply_text(reply)}", code=code)
        except NotSent:
            self._reset()
            raise
        except smtplib.SMTPServerDisconnected:
            self._drop()
            raise _Disconnected from None
        except (smtplib.SMTPException, OSError) as exc:
            self._drop()
            problem = f"the SMTP session broke before the data ({type(exc).__name__})"
            raise NotSent(problem) from None
        try:
            # CRLF line ends: smtplib sends bytes as they are, and a server that reads lines
            # (RFC 5321) sees a bare-LF message as one line longer than 1,000 octets.
            code, reply = connection.data(mail.as_bytes(policy=mail.policy.clone(linesep="\r\n")))
        except smtplib.SMTPDataError as exc:
            self._reset()
            raise NotSent(
                f"DATA refused: {exc.smtp_code} {_reply_text(exc.smtp_error)}", code=exc.smtp_code
            ) from None
        except (smtplib.SMTPException, OSError) as exc:  # a timeout is an OSError
            # The data may have been written whole and queued by the server.
            self._drop()
            problem = f"no final reply from the SMTP server ({type(exc).__name__})"
            raise AnswerLost(problem) from None
        if code != 250:
            self._reset()
            raise NotSent(f"DATA refused: {code} {_reply_text(reply)}", code=code)
        self.sent += 1

    def _reset(self) -> None:
        """Abort the transaction and keep the connection."""
        if self._connection is None:
            return
        try:
            self._connection.rset()
        except (smtplib.SMTPException, OSError):
            self._drop()

    def _drop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()
