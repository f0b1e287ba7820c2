"""docs/ownership.md, "Setting up a portal", run as written: every line of its code block, in
order, against a fresh warehouse and the HubSpot emulator, each comment line under a command
being a line that command must print. A command added to the page that this test cannot run,
or a command that no longer works as the page says, fails here.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sqlalchemy import text

from morpheus_pipelines.cli import main
from morpheus_pipelines.crm.models import IntakeApiKey, Subscription
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from tests.support.ownership import TOKEN

DOC = Path(__file__).resolve().parents[2] / "docs" / "ownership.md"
SECTION = "## Setting up a portal"
GOOGLE_ADS_KEY = "gk-acme-lead-forms-2026"
# The page's reps, as HubSpot's owners.
OWNERS = [
    {"id": "101", "email": "ana@acme.test", "firstName": "Ana"},
    {"id": "102", "email": "bo@acme.test", "firstName": "Bo"},
    {"id": "103", "email": "cy@acme.test", "firstName": "Cy"},
]
# The reps' ids on the page: a fresh warehouse numbers them from 1, a deployment's from
# wherever its sequence is.
FIRST_REP_ID = 12


@dataclass
class Line:
    """One command of the block and the output lines written under it."""

    command: str
    expected: list[str] = field(default_factory=list)


def portal_block() -> list[Line]:
    """The first ``bash`` block of the section, its continuations joined."""
    page = DOC.read_text(encoding="utf-8")
    section = page[page.index(SECTION) :]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block is not None, f"{SECTION} has no bash block"
    lines: list[Line] = []
    pending = ""
    for raw in block.group(1).splitlines():
        if raw.startswith("#"):
            assert lines and not pending, f"output without a command: {raw}"
            lines[-1].expected.append(raw[1:].strip())
            continue
        pending += raw.rstrip("\\").strip() + " " if raw.endswith("\\") else raw.strip()
        if not raw.endswith("\\") and pending:
            lines.append(Line(pending))
            pending = ""
    return lines


def _matches(printed: list[str], expected: list[str]) -> bool:
    """The printed lines are the expected ones; a line ending in … is a prefix."""
    if len(printed) != len(expected):
        return False
    return all(
        p.startswith(e[:-1].rstrip()) if e.endswith("…") else p == e
        for p, e in zip(printed, expected, strict=True)
    )


@pytest.fixture
def portal_emulator() -> Iterator[HubSpotEmulator]:
    """The portal the page sets up: its owners and its two segment lists."""
    with HubSpotEmulator({"token": TOKEN, "owners": OWNERS}) as emulator:
        for list_id, name in (("7101", "No-shows"), ("7102", "Lost deals")):
            emulator.set_list(list_id, name=name, object_type_id="0-1")
        yield emulator
    assert emulator.errors == []


def test_the_documented_portal_setup_runs_as_written(
    database_url: str,
    portal_emulator: HubSpotEmulator,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
    tmp_path: Path,
) -> None:
    with get_session(database_url) as session:
        session.execute(text(f"ALTER SEQUENCE sales_reps_id_seq RESTART WITH {FIRST_REP_ID}"))
    for name, value in {
        "MORPHEUS_DATABASE_URL": database_url,
        "HUBSPOT_BASE_URL": portal_emulator.base_url,
        "HUBSPOT_PRIVATE_APP_TOKEN": TOKEN,
        "GOOGLE_ADS_KEY": GOOGLE_ADS_KEY,
        "DAGSTER_HOME": str(tmp_path),
    }.items():
        monkeypatch.setenv(name, value)
    variables: dict[str, str] = {}

    def expand(command: str) -> list[str]:
        """The command's words, its variables replaced as the shell would (the block's own,
        then the environment's)."""
        known = {**os.environ, **variables}
        words = shlex.split(command, comments=True)
        return [re.sub(r"\$(\w+)", lambda m: known[m.group(1)], word) for word in words]

    def run(words: list[str]) -> list[str]:
        """What the command printed on stdout; it must succeed."""
        assert words[:2] == ["uv", "run"], f"not a command the page may hold: {words}"
        if words[2] == "morpheus":
            status = main(words[3:])
            out, err = capsys.readouterr()
            assert status == 0, f"{' '.join(words)} failed: {err}"
            return out.splitlines()
        assert words[2] == "dagster", f"not a command the page may hold: {words}"
        done = subprocess.run(
            [sys.executable, "-m", "dagster", *words[3:]],
            env=os.environ.copy(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{' '.join(words)} failed: {done.stderr[-3000:]}"
        return done.stdout.splitlines()

    lines = portal_block()
    assert len(lines) > 10
    for line in lines:
        if assignment := re.fullmatch(r"(\w+)=\$\((.*) \| tail -1\)", line.command):
            printed = run(expand(assignment.group(2)))
            variables[assignment.group(1)] = printed[-1]
        elif export := re.fullmatch(r"export (\w+)=(\S+)", line.command):
            variables[export.group(1)] = expand(export.group(2))[0]
            monkeypatch.setenv(export.group(1), variables[export.group(1)])
        else:
            printed = run(expand(line.command))
        if line.expected:
            assert _matches(printed, line.expected), (line.command, printed)

    # what the page set up is in the warehouse, and the key only as its hash
    subscription_id = uuid.UUID(variables["SUB"])
    with get_session(database_url) as session:
        row = session.get(Subscription, subscription_id)
        assert (row.name, row.hubspotPortalId, row.defaultRegion) == ("Acme APAC", 62515, "SG")
        assert row.googleAdsKeyHash == hashlib.sha256(GOOGLE_ADS_KEY.encode()).hexdigest()
        assert session.query(IntakeApiKey).filter_by(subscriptionId=subscription_id).count() == 1
    # the segment lists were checked in HubSpot, not taken on trust
    assert {entry.path for entry in portal_emulator.log.entries("list")} == {
        "/crm/v3/lists/7101",
        "/crm/v3/lists/7102",
    }


def test_the_block_is_read_whole() -> None:
    lines = portal_block()
    commands = [line.command for line in lines]
    assert commands[0].startswith("SUB=$(uv run morpheus subscription create")
    # a continued line is one command
    assert any(c.endswith("--campaign-id spring-26 --priority 5") for c in commands)
    assert all(not c.endswith("\\") for c in commands)
    [reps] = [line for line in lines if line.command.endswith("rep list --subscription $SUB")]
    assert len(reps.expected) == 3
    assert _matches(["id  123", "name  x"], ["id  …", "name  x"])
    assert not _matches(["id  123"], ["id  124"]) and not _matches([], ["x"])
