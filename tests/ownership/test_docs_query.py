"""The operator's "who is next" query in docs/ownership.md names the rep the next
reservation returns."""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import text

from morpheus_pipelines.crm.models import ReengagementSegment
from morpheus_pipelines.crm.repositories.sales_rep_round_robin import (
    select_next_sales_rep_round_robin,
)
from tests.support.ownership import World

DOC = Path(__file__).resolve().parents[2] / "docs" / "ownership.md"


def _who_is_next_query() -> str:
    section = DOC.read_text(encoding="utf-8").split("### Who is next", 1)[1]
    return re.search(r"```sql\n(.*?)```", section, re.S).group(1)


def _next_by_query(world: World) -> str:
    with world.sessions() as session:
        row = session.execute(
            text(_who_is_next_query()), {"subscription": str(world.subscription_id)}
        ).one()
    return row.email


def test_the_documented_query_names_the_next_rep(world: World) -> None:
    for i in range(4):
        world.add_rep(f"rep{i}@acme.test", str(300 + i))
    world.add_rep("left@acme.test", "399", active=False)
    assert _next_by_query(world) == "rep0@acme.test"  # no cursor yet

    for contact in [world.add_contact() for _ in range(6)]:
        world.add_member(ReengagementSegment.SUPPLIER, contact)
    world.assign(ReengagementSegment.SUPPLIER)

    expected = _next_by_query(world)
    with world.sessions() as session:
        chosen = select_next_sales_rep_round_robin(
            session, world.subscription_id, require_nooks=False
        )
    assert chosen.email == expected == "rep2@acme.test"
