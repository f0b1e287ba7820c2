"""The Daily Summary and the Weekly Metrics reach the managers (docs/reports.md, "Delivery"):
a real SMTP server and a Slack webhook receiver on 127.0.0.1, the deliveries in Postgres."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import dagster as dg
import pytest

from morpheus_pipelines.assets.reports import daily_summary_delivery, weekly_metrics_delivery
from morpheus_pipelines.resources.report_delivery import ReportDeliveryResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from tests.support.messages import SmtpTestServer
from tests.support.reports import DAY, WEEK, bucket_row, insert_rows, query

MANAGERS = ("Ana.Lim@Acme.example", "raj@acme.example")
FROM = "Morpheus Reports <reports@acme.example>"
HOOK_TOKEN = "T000/B000/slack-hook-secret-xyz"


class SlackReceiver:
    """A Slack incoming webhook on 127.0.0.1: records each JSON body, answers ``status``."""

    def __init__(self) -> None:
        self.posts: list[dict] = []
        self.status = 200
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.posts.append({"path": self.path, **json.loads(body)})
                self.send_response(receiver.status)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/services/{HOOK_TOKEN}"


@pytest.fixture
def slack() -> Iterator[SlackReceiver]:
    receiver = SlackReceiver()
    receiver.thread.start()
    yield receiver
    receiver.server.shutdown()
    receiver.server.server_close()


@pytest.fixture
def smtp_server() -> Iterator[SmtpTestServer]:
    server = SmtpTestServer()
    server.start()
    yield server
    server.stop()


def deliver(
    asset: dg.AssetsDefinition,
    partition_key: str,
    database_url: str,
    home: Path,
    smtp: SmtpTestServer,
    slack: SlackReceiver | None = None,
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [asset],
        partition_key=partition_key,
        resources={
            "warehouse": WarehouseResource(database_url=database_url, home=str(home)),
            "report_delivery": ReportDeliveryResource(
                recipients=", ".join(MANAGERS),
                smtp_url=smtp.url,
                email_from=FROM,
                slack_webhook_url=slack.url if slack else "",
                request_timeout=5.0,
            ),
        },
    )


def deliveries(database_url: str) -> set[tuple]:
    return set(
        query(
            database_url,
            "SELECT report, partition_key, channel, recipient, status, retryable, attempts "
            "FROM report_deliveries",
        )
    )


def check_passed(result: dg.ExecuteInProcessResult) -> bool:
    (evaluation,) = result.get_asset_check_evaluations()
    return evaluation.passed


def part_text(mail: Message, content_type: str) -> str:
    part = next(p for p in mail.walk() if p.get_content_type() == content_type)
    return part.get_payload(decode=True).decode(part.get_content_charset() or "utf-8")


def test_the_daily_summary_reaches_each_manager_once_however_often_it_runs(
    database_url: str, run_daily, home: Path, smtp_server: SmtpTestServer, slack: SlackReceiver
) -> None:
    insert_rows(
        database_url,
        "apac_active_tenants",
        [bucket_row("t-up", priority="P1", priority_changed_partition=DAY)],
    )
    assert run_daily(DAY).success

    first = deliver(daily_summary_delivery, DAY, database_url, home, smtp_server, slack)
    second = deliver(daily_summary_delivery, DAY, database_url, home, smtp_server, slack)

    assert first.success and second.success
    mails = smtp_server.mailbox.accepted
    assert sorted(mail["To"] for mail in mails) == ["ana.lim@acme.example", "raj@acme.example"]
    assert all(mail["Subject"] == f"APAC Daily Summary - {DAY}" for mail in mails)
    assert "t-up" in part_text(mails[0], "text/html")
    assert len(slack.posts) == 1
    page = (home / "reports" / "daily" / DAY / "summary.html").resolve().as_uri()
    assert page in slack.posts[0]["text"] and DAY in slack.posts[0]["text"]
    assert deliveries(database_url) == {
        ("daily_summary", DAY, "email", "ana.lim@acme.example", "sent", False, 1),
        ("daily_summary", DAY, "email", "raj@acme.example", "sent", False, 1),
        ("daily_summary", DAY, "slack", "webhook", "sent", False, 1),
    }
    assert check_passed(first) and check_passed(second)
    (event,) = second.asset_materializations_for_node("daily_summary_delivery")
    assert event.metadata["attempted"].value == {"email": 0, "slack": 0}
    # no secret and no address in what the UI shows
    shown = json.dumps({k: str(v.value) for k, v in event.metadata.items()})
    assert HOOK_TOKEN not in shown and "raj@" not in shown and "ana.lim@" not in shown


def test_the_weekly_metrics_email_carries_its_charts_inline(
    database_url: str, run_daily, run_weekly, home: Path, smtp_server: SmtpTestServer
) -> None:
    assert run_daily(DAY).success
    assert run_weekly(WEEK).success

    assert deliver(weekly_metrics_delivery, WEEK, database_url, home, smtp_server).success

    mails = smtp_server.mailbox.accepted
    assert len(mails) == 2
    mail = mails[0]
    related = next(p for p in mail.walk() if p.get_content_type() == "multipart/related")
    images = [p for p in related.walk() if p.get_content_maintype() == "image"]
    assert len(images) == 2  # priorities and match methods
    body = part_text(mail, "text/html")
    assert "data:image" not in body
    for image in images:
        assert image.get_payload(decode=True).startswith(b"\x89PNG")
        assert f'src="cid:{image["Content-ID"].strip("<>")}"' in body
    assert f"weekly/{WEEK}/metrics.html" in part_text(mail, "text/plain")


def test_an_smtp_server_that_is_down_leaves_the_delivery_to_the_next_run(
    database_url: str, run_daily, home: Path, smtp_server: SmtpTestServer
) -> None:
    assert run_daily(DAY).success
    smtp_server.stop()

    down = deliver(daily_summary_delivery, DAY, database_url, home, smtp_server)

    assert down.success  # the asset recorded what happened; its check is red
    assert not check_passed(down)
    (evaluation,) = down.get_asset_check_evaluations()
    assert evaluation.metadata["failed"].value == 2
    assert all(
        status == "failed" and retryable for *_, status, retryable, _ in deliveries(database_url)
    )

    smtp_server.start()
    again = deliver(daily_summary_delivery, DAY, database_url, home, smtp_server)

    assert check_passed(again)
    assert len(smtp_server.mailbox.accepted) == 2
    assert {row[4:] for row in deliveries(database_url)} == {("sent", False, 2)}


def test_a_refused_recipient_is_final_and_the_others_still_get_it(
    database_url: str, run_daily, home: Path, smtp_server: SmtpTestServer
) -> None:
    assert run_daily(DAY).success
    smtp_server.mailbox.rcpt_answers.append("550 5.1.1 no such user")

    first = deliver(daily_summary_delivery, DAY, database_url, home, smtp_server)
    deliver(daily_summary_delivery, DAY, database_url, home, smtp_server)

    assert not check_passed(first)
    assert len(smtp_server.mailbox.accepted) == 1  # the refused one is not tried again
    statuses = {(row[3], row[4], row[5]) for row in deliveries(database_url)}
    assert ("ana.lim@acme.example", "failed", False) in statuses
    assert ("raj@acme.example", "sent", False) in statuses


def _slack_rows(database_url: str) -> set[tuple]:
    return {row[2:] for row in deliveries(database_url) if row[2] == "slack"}


def test_slack_answering_503_is_posted_again_by_the_next_run(
    database_url: str,
    run_daily,
    home: Path,
    smtp_server: SmtpTestServer,
    slack: SlackReceiver,
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert run_daily(DAY).success
    slack.status = 503

    unavailable = deliver(daily_summary_delivery, DAY, database_url, home, smtp_server, slack)

    assert unavailable.success and not check_passed(unavailable)
    assert _slack_rows(database_url) == {("slack", "webhook", "failed", True, 1)}
    (evaluation,) = unavailable.get_asset_check_evaluations()
    problems = json.dumps(evaluation.metadata["problems"].value)
    assert "503" in problems and "retried next run" in problems
    assert HOOK_TOKEN not in problems and HOOK_TOKEN not in caplog.text

    slack.status = 200
    again = deliver(daily_summary_delivery, DAY, database_url, home, smtp_server, slack)

    assert check_passed(again)
    assert len(slack.posts) == 2  # the refused post, then the one that arrived
    assert _slack_rows(database_url) == {("slack", "webhook", "sent", False, 2)}
    assert len(smtp_server.mailbox.accepted) == 2  # the emails went once, on the first run


def test_slack_refusing_the_webhook_is_final_and_not_posted_again(
    database_url: str, run_daily, home: Path, smtp_server: SmtpTestServer, slack: SlackReceiver
) -> None:
    assert run_daily(DAY).success
    slack.status = 404  # Slack's answer to a revoked webhook: "no_service"

    refused = deliver(daily_summary_delivery, DAY, database_url, home, smtp_server, slack)
    slack.status = 200
    later = deliver(daily_summary_delivery, DAY, database_url, home, smtp_server, slack)

    assert not check_passed(refused) and not check_passed(later)
    assert len(slack.posts) == 1
    assert _slack_rows(database_url) == {("slack", "webhook", "failed", False, 1)}
    (event,) = later.asset_materializations_for_node("daily_summary_delivery")
    assert event.metadata["attempted"].value == {"email": 0, "slack": 0}
