"""What the fetcher sends: the configured User-Agent, compression it can undo, the ETag
of a revisit, and no cookies, even to a server that sets them."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from focuscrawl.crawler.fetch import FetchConfig, Fetcher
from focuscrawl.errors import ConfigError


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


class _Trickler(BaseHTTPRequestHandler):
    """Sends a 2,000-byte body ten bytes at a time, 50 ms apart (10 s in all)."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", "2000")
        self.end_headers()
        try:
            for _ in range(200):
                self.wfile.write(b"x" * 10)
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:
            pass  # the client gave up, as it should

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_trickling_body_stops_at_the_total_timeout() -> None:
    """Each read comes well within the read timeout; the total timeout still ends it."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Trickler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    fetcher = Fetcher(FetchConfig(read_timeout=5.0, total_timeout=1.0))
    try:
        began = time.monotonic()
        result = fetcher.fetch(f"http://127.0.0.1:{httpd.server_address[1]}/slow")
        took = time.monotonic() - began
    finally:
        fetcher.close()
        httpd.shutdown()
        httpd.server_close()
    assert (result.status, result.error, result.body) == (200, "timeout", b"")
    assert took < 3.0


@pytest.mark.parametrize("url", ["ftp://a.example/x", "file:///etc/passwd", "gopher://a.example/"])
def test_only_http_and_https_are_fetched(url: str) -> None:
    fetcher = Fetcher(FetchConfig())
    try:
        assert fetcher.fetch(url).error == "unsupported_scheme"
    finally:
        fetcher.close()


@pytest.mark.parametrize(
    ("proxy", "says"),
    [
        ("socks5://127.0.0.1:1080", "only http:// proxies"),
        ("http://", "only http:// proxies"),
        ("http://127.0.0.1:notaport", "bad port"),
        ("http://127.0.0.1:70000", "port 1-65535"),
        ("http://:8080", "port 1-65535"),
        ("http://bücher.example:8080", "must be ASCII"),
    ],
)
def test_a_bad_proxy_is_a_config_error_that_says_why(proxy: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as info:
        Fetcher(FetchConfig(proxy=proxy))
    assert "\n" not in str(info.value)
