"""What the fetcher sends: the configured User-Agent, compression it can undo, the ETag
of a revisit, and no cookies, even to a server that sets them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from focuscrawl.crawler.fetch import FetchConfig, Fetcher


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, str]]] = []

    def do_GET(self) -> None:
        _Recorder.seen.append({k.lower(): v for k, v in self.headers.items()})
        body = b"<html><title>t</title></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Set-Cookie", "session=abc; Path=/")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Recorder.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_requests_carry_the_agent_and_etag_and_no_cookies(server: str) -> None:
    fetcher = Fetcher(FetchConfig(user_agent="testbot/1.0 (+http://a.example/)"))
    try:
        first = fetcher.fetch(f"{server}/a")
        second = fetcher.fetch(f"{server}/b", etag='"v1"')
    finally:
        fetcher.close()
    assert (first.status, first.charset, first.media_type) == (200, "utf-8", "text/html")
    assert b"<title>t</title>" in first.body and second.status == 200
    one, two = _Recorder.seen
    assert one["user-agent"] == "testbot/1.0 (+http://a.example/)"
    assert one["accept-encoding"] == "gzip, deflate"
    assert one["host"] == server.removeprefix("http://")
    assert "if-none-match" not in one and two["if-none-match"] == '"v1"'
    assert "cookie" not in two  # the first response set one
