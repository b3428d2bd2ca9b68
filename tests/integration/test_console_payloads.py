"""Whatever JSON a client posts to the console's actions, against a real database: a
400 or 409 with one line, or the change it names; never a 500, and the scope stored
stays one every crawler can read."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from focuscrawl.console import create_app
from focuscrawl.crawler.scope import load_scope
from tests.strategies import json_values

TOKEN = "payload-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Host": "127.0.0.1"}

scope_fields = st.sampled_from(
    ["allow_domains", "deny_domains", "include", "exclude", "max_depth", "max_pages_per_site",
     "clear", "colour"]
)  # fmt: skip
domains = st.lists(st.sampled_from(["a.example", "B.Example", "*.c.example", "", "x y", 5]))
scope_bodies = st.dictionaries(
    scope_fields, st.one_of(json_values, domains, st.integers(-3, 50)), max_size=4
)
bodies = {
    "/api/scope": scope_bodies,
    "/api/label": st.fixed_dictionaries(
        {}, optional={"urls": json_values, "good": json_values, "category": json_values}
    ),
    "/api/good": st.fixed_dictionaries({}, optional={"category": json_values, "good": json_values}),
}


async def _post(app: Any, path: str, body: Any) -> httpx.Response:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        return await client.post(path, json=body, headers=AUTH)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_json_posted_to_an_action_is_answered_in_one_line_or_done(
    engine: sa.Engine, data: st.DataObject
) -> None:
    path = data.draw(st.sampled_from(sorted(bodies)))
    body: Any = data.draw(st.one_of(bodies[path], json_values))
    answer = asyncio.run(_post(create_app(engine, TOKEN), path, body))
    assert answer.status_code in (200, 400, 409), (path, body, answer.text)
    if answer.status_code != 200:
        message = answer.json()["error"]
        assert isinstance(message, str) and message and "\n" not in message
    with engine.connect() as connection:
        load_scope(connection)  # what was stored reads back
