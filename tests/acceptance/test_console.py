"""``focuscrawl console`` in a real headless chromium, driven over its DevTools protocol:
the page loads, the harvest chart draws, a label button changes the database, and an
action without the token is refused (from the browser and from a plain client)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from acceptance_helpers import (  # type: ignore[import-not-found]
    HEADLESS,
    browser_or_skip,
    crawl_sports_in_rounds,
)
from prometheus_client.parser import text_string_to_metric_families
from websockets.sync.client import ClientConnection, connect

from focuscrawl.console.app import ENDPOINTS
from tests.classifier.topics import write_tree_dir

TOKEN = "console-test-token"


class PageGone(Exception):
    """The tab answered with an error: its page was being replaced (a reload under way)."""


def _wait(condition: Any, what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = condition()
        except PageGone:  # asked while the reload destroyed the page: ask again
            value = None
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def console(db_url: str, tmp_path: Path) -> Iterator[str]:
    """The console on a free port, as a user starts it; yields its base URL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOCUSCRAWL_")}
    env.update({"FOCUSCRAWL_HOME": str(tmp_path / "home"), "FOCUSCRAWL_CONSOLE_TOKEN": TOKEN})
    command = [sys.executable, "-m", "focuscrawl", "--database-url", db_url, "console"]
    process = subprocess.Popen(
        [*command, "--port", "0"], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stderr is not None
        first = process.stderr.readline().strip()
        assert first.startswith("console: http://127.0.0.1:"), first
        assert first.endswith(f"/#token={TOKEN}")
        yield first.removeprefix("console: ").partition("/#")[0]
    finally:
        process.terminate()
        process.communicate(timeout=30)


@pytest.fixture
def api(console: str) -> Iterator[httpx.Client]:
    """A client of the console that sends its token, as the page does."""
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=console, timeout=30, headers=auth) as client:
        yield client


class Page:
    """One chromium tab, spoken to over the DevTools protocol."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.ids = itertools.count(1)

    def evaluate(self, expression: str) -> Any:
        number = next(self.ids)
        params = {"expression": expression, "returnByValue": True, "awaitPromise": True}
        self.socket.send(json.dumps({"id": number, "method": "Runtime.evaluate", "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=60))
            if message.get("id") == number:
                if "result" not in message:  # e.g. the execution context was destroyed
                    raise PageGone(str(message.get("error", message)))
                result = message["result"]
                assert "exceptionDetails" not in result, result
                return result["result"].get("value")


@pytest.fixture
def browser_page(console: str, tmp_path: Path) -> Iterator[Page]:
    browser = browser_or_skip()
    profile = tmp_path / "profile"
    url = f"{console}/#token={TOKEN}"
    process = subprocess.Popen(
        [
            browser,
            *HEADLESS,
            "--window-size=1400,1000",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            url,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        active = profile / "DevToolsActivePort"
        _wait(lambda: active.is_file() and active.read_text().strip(), "chromium's DevTools port")
        port = active.read_text().split()[0]

        def page_socket() -> str | None:
            targets = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json()
            pages = [t for t in targets if t["type"] == "page" and t["url"].startswith(console)]
            return pages[0]["webSocketDebuggerUrl"] if pages else None

        with connect(_wait(page_socket, "the console's tab"), max_size=None) as socket:
            yield Page(socket)
    finally:
        process.terminate()
        process.wait(timeout=30)


def _labels(engine: sa.Engine) -> list[tuple[str, bool]]:
    with engine.connect() as connection:
        return [
            (str(url), bool(good))
            for url, good in connection.exec_driver_sql(
                "SELECT e.url, l.good FROM page_label AS l JOIN example AS e ON e.eid = l.eid"
            )
        ]


def test_the_console_shows_the_crawl_and_its_label_button_labels(
    cli: Any, db_url: str, engine: sa.Engine, tmp_path: Path, browser_page: Page, console: str
) -> None:
    crawl_sports_in_rounds(cli, {"FOCUSCRAWL_DATABASE_URL": db_url}, tmp_path)
    page = browser_page
    page.evaluate("location.reload()")  # the crawl is there now
    _wait(
        lambda: (
            page.evaluate("document.querySelectorAll('#harvest polyline').length") == 2
            and page.evaluate("document.querySelectorAll('#harvest circle').length") >= 40
        ),
        "the harvest chart",
    )
    fetched = page.evaluate("document.querySelector('#numbers b').textContent")
    assert fetched == "45"  # three rounds of 15 pages
    assert "no alarm: stagnation, diffusion, harvest" in page.evaluate(
        "document.getElementById('alarms').textContent"
    )
    shown = page.evaluate("document.getElementById('topic').textContent")
    assert shown.startswith("topic: ") and shown.endswith(f"database {engine.url.database}")
    # the label table's R and why fit in a 1,400-pixel window
    _wait(lambda: page.evaluate("document.querySelectorAll('#suggestions td.why').length"), "why")
    page.evaluate("document.querySelector('#suggestions').scrollIntoView()")
    right = page.evaluate(
        "Math.max(...[...document.querySelectorAll('#suggestions td.why')]"
        ".map(td => td.getBoundingClientRect().right))"
    )
    assert right <= page.evaluate("window.innerWidth"), right
    assert page.evaluate("document.querySelectorAll('#next tr').length") > 1
    assert page.evaluate("document.getElementById('tokenstate').textContent") == (
        "actions: enabled"
    )

    # an action without the token is refused, from the page's origin and from a client
    refused = page.evaluate(
        "fetch('/api/label', {method: 'POST', body: JSON.stringify({urls: ['x'], good: true})})"
        ".then(r => r.status)"
    )
    assert refused == 401
    for headers in ({}, {"Authorization": "Bearer wrong-token"}):
        response = httpx.post(
            f"{console}/api/good", json={"category": "topics.science"}, headers=headers
        )
        assert response.status_code == 401, response.text
    assert _labels(engine) == []

    # the first suggestion's "good" button makes the page a good example
    _wait(
        lambda: page.evaluate("document.querySelectorAll('button.label-good').length"), "a button"
    )
    url = page.evaluate("document.querySelector('button.label-good').dataset.url")
    page.evaluate("document.querySelector('button.label-good').click()")
    assert _wait(lambda: _labels(engine), "the label in the database") == [(url, True)]
    _wait(
        lambda: "labelled good" in page.evaluate("document.getElementById('message').textContent"),
        "the page to say so",
    )

    # the console's metrics parse, and say what the database says
    text = httpx.get(f"{console}/metrics").text
    families = {f.name: f for f in text_string_to_metric_families(text)}
    fetched_sample = [
        s for s in families["focuscrawl_pages"].samples if s.labels["state"] == "fetched"
    ]
    assert fetched_sample[0].value == 45
    # beyond loopback names: refused (DNS rebinding)
    assert httpx.get(f"{console}/api/status", headers={"Host": "evil.example"}).status_code == 400


def test_every_read_needs_the_token_and_the_metrics_stay_open_on_loopback(
    console: str, api: httpx.Client
) -> None:
    reads = [path for method, path, _ in ENDPOINTS if method == "GET" and path.startswith("/api/")]
    assert len(reads) >= 8
    for path in reads:
        for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": TOKEN}):
            refused = httpx.get(f"{console}{path}", headers=headers, timeout=30)
            assert refused.status_code == 401, (path, headers, refused.text)
            assert "token" in refused.json()["error"]
        assert api.get(path).status_code == 200, path
    assert httpx.get(f"{console}/", timeout=30).status_code == 200  # the page holds no data
    assert httpx.get(f"{console}/metrics", timeout=30).status_code == 200  # loopback only


def test_a_console_beyond_loopback_guards_its_metrics_and_one_on_ipv6_loopback_answers(
    db_url: str, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOCUSCRAWL_")}
    env.update({"FOCUSCRAWL_HOME": str(tmp_path / "home"), "FOCUSCRAWL_CONSOLE_TOKEN": TOKEN})
    command = [sys.executable, "-m", "focuscrawl", "--database-url", db_url, "console"]
    auth = {"Authorization": f"Bearer {TOKEN}"}
    for host, metrics_open in (("::1", True), ("0.0.0.0", False)):
        process = subprocess.Popen(
            [*command, "--host", host, "--port", "0"], env=env, stderr=subprocess.PIPE, text=True
        )
        try:
            assert process.stderr is not None
            base = process.stderr.readline().strip().removeprefix("console: ").partition("/#")[0]
            if host == "0.0.0.0":
                base = base.replace("0.0.0.0", "127.0.0.1")
            assert httpx.get(f"{base}/api/status", headers=auth, timeout=30).status_code == 200
            assert httpx.get(f"{base}/api/status", timeout=30).status_code == 401
            metrics = httpx.get(f"{base}/metrics", timeout=30).status_code
            assert metrics == (200 if metrics_open else 401), (host, metrics)
            assert httpx.get(f"{base}/metrics", headers=auth, timeout=30).status_code == 200
        finally:
            process.terminate()
            process.communicate(timeout=30)


def test_console_actions_check_their_input_and_change_only_what_they_say(
    cli: Any, db_url: str, tmp_path: Path, api: httpx.Client
) -> None:
    env = {"FOCUSCRAWL_DATABASE_URL": db_url}
    assert (
        cli("taxonomy", "import", str(write_tree_dir(tmp_path / "tree")), env=env).returncode == 0
    )
    client = api
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert client.get("/api/taxonomy").json()[0]["good"] is False

    marked = client.post("/api/good", json={"category": "topics.sports"}, headers=auth)
    assert marked.status_code == 200 and marked.json()["marked"] == ["topics.sports"]
    goods = {c["path"]: (c["good"], c["inherited"]) for c in client.get("/api/taxonomy").json()}
    assert goods["topics.sports"] == (True, False)
    assert goods["topics.sports.cycling"] == (False, True)

    saved = client.post(
        "/api/scope", json={"allow_domains": ["topics.example"], "max_depth": 3}, headers=auth
    )
    assert saved.status_code == 200, saved.text
    assert client.get("/api/scope").json()["scope"]["max_depth"] == 3
    shown = cli("crawl", "scope", "show", env=env)
    assert "allowed domains: topics.example" in shown.stdout

    for path, body, says in (
        ("/api/scope", {"exclude": ["("]}, "--exclude"),
        ("/api/scope", {"colour": "red"}, "unknown scope fields: colour"),
        ("/api/scope", {"allow_domains": [5]}, "allow_domains.0: input should be a valid string"),
        ("/api/scope", {"max_depth": "3"}, "max_depth: input should be a valid integer"),
        ("/api/scope", {"include": "x"}, "include: input should be a valid list"),
        ("/api/good", {"category": "topics.nothing"}, "topics.nothing"),
        ("/api/label", {"urls": "x", "good": True}, "give"),
        ("/api/label", {"urls": ["http://sports.topics.example/no"], "good": True}, "not a page"),
    ):
        refused = client.post(path, json=body, headers=auth)
        assert refused.status_code in (400, 409) and says in refused.json()["error"], refused.text
    assert client.post("/api/good", content=b"{", headers=auth).status_code == 400
    assert client.get("/api/scope").json()["scope"]["max_depth"] == 3  # unchanged

    for args, says in ((("--port", "70000"), "not a TCP port"), (("--token", "short"), "8")):
        bad = cli("console", *args, env=env)
        assert bad.returncode == 2 and says in bad.stderr and len(bad.stderr.splitlines()) == 1
