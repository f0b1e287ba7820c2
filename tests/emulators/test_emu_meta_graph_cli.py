"""``python -m ...meta_graph`` and ``morpheus emulate meta`` serve the emulator in a process of
its own until SIGTERM; with ``--auto-status`` a send is followed by signed status webhooks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import requests

from morpheus_pipelines.devtools.emulators.meta_graph import DEFAULT_PHONE_NUMBER_ID
from tests.support.emulator_process import serving
from tests.support.meta_graph import META_APP_SECRET, WebhookReceiver

TOKEN = "cli-token"


@pytest.mark.timeout(30)
def test_the_module_serves_the_data_file_until_sigterm(tmp_path: Path) -> None:
    data = {"leads": {"900": {"page_id": "1", "form_id": "2", "field_data": {"email": "a@x.com"}}}}
    path = tmp_path / "meta.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    module = "morpheus_pipelines.devtools.emulators.meta_graph"
    cmd = [sys.executable, "-m", module, "--port", "0", "--token", TOKEN, "--data", str(path)]
    with serving(cmd) as base_url:
        resp = requests.get(f"{base_url}/v21.0/900", params={"access_token": TOKEN}, timeout=5)
        assert resp.json()["field_data"] == [{"name": "email", "values": ["a@x.com"]}]
        assert requests.get(f"{base_url}/v21.0/900", timeout=5).status_code == 400


@pytest.mark.timeout(60)
def test_morpheus_emulate_meta_posts_automatic_statuses(receiver: WebhookReceiver) -> None:
    cmd = [
        sys.executable,
        "-c",
        "import sys; from morpheus_pipelines.cli import main; sys.exit(main())",
        "emulate",
        "meta",
        "--port",
        "0",
        "--token",
        TOKEN,
        "--app-secret",
        META_APP_SECRET,
        "--webhook-url",
        receiver.url,
        "--auto-status",
    ]
    with serving(cmd) as base_url:
        resp = requests.post(
            f"{base_url}/v21.0/{DEFAULT_PHONE_NUMBER_ID}/messages",
            headers={"Authorization": f"Bearer {TOKEN}"},
            json={
                "messaging_product": "whatsapp",
                "to": "6591234567",
                "type": "template",
                "template": {"name": "hello_world", "language": {"code": "en_US"}},
            },
            timeout=5,
        )
        assert resp.status_code == 200
        wamid = resp.json()["messages"][0]["id"]
        got = receiver.wait_for(2, timeout=10)
    statuses = [g.json["entry"][0]["changes"][0]["value"]["statuses"][0] for g in got]
    assert [(s["id"], s["status"]) for s in statuses] == [(wamid, "sent"), (wamid, "delivered")]
    assert all(g.signature_valid for g in got)
