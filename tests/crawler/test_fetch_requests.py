"""What the fetcher sends: the configured User-Agent, compression it can undo, the ETag
and Last-Modified of a revisit, and no cookies, even to a server that sets them."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from focuscrawl.crawler.fetch import FetchConfig, Fetcher
from focuscrawl.crawler.network import is_public, public_socket
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


def test_requests_carry_the_agent_and_validators_and_no_cookies(server: str) -> None:
    fetcher = Fetcher(FetchConfig(user_agent="testbot/1.0 (+http://a.example/)"))
    date = "Thu, 01 Jan 2026 00:00:00 GMT"
    try:
        first = fetcher.fetch(f"{server}/a")
        second = fetcher.fetch(f"{server}/b", etag='"v1"', last_modified=date)
    finally:
        fetcher.close()
    assert (first.status, first.charset, first.media_type) == (200, "utf-8", "text/html")
    assert b"<title>t</title>" in first.body and second.status == 200
    one, two = _Recorder.seen
    assert one["user-agent"] == "testbot/1.0 (+http://a.example/)"
    assert one["accept-encoding"] == "gzip, deflate"
    assert one["host"] == server.removeprefix("http://")
    assert "if-none-match" not in one and two["if-none-match"] == '"v1"'
    assert "if-modified-since" not in one and two["if-modified-since"] == date
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


def test_public_only_fetcher_refuses_private_hosts_before_sending(server: str) -> None:
    port = server.rsplit(":", 1)[1]
    fetcher = Fetcher(FetchConfig(), public_only=True)
    try:
        results = [fetcher.fetch(f"http://{host}:{port}/a") for host in ("127.0.0.1", "localhost")]
    finally:
        fetcher.close()
    assert [r.error for r in results] == ["private_address", "private_address"]
    assert _Recorder.seen == []  # nothing reached the server


def test_a_connection_gets_a_socket_only_for_a_public_address() -> None:
    """libcurl asks for a socket for each address it is about to connect to, after its
    one lookup: the check is on the address the connection then uses, so a rebinding
    host cannot answer one address to the check and another to the connection."""
    tcp = (socket.AF_INET, socket.SOCK_STREAM, 6)
    for private in ("127.0.0.1", "10.0.0.7", "169.254.1.1"):
        assert public_socket((*tcp, (private, 80))) is None
    opened = public_socket((*tcp, ("93.184.216.34", 80)))
    assert isinstance(opened, socket.socket) and opened.family == socket.AF_INET
    opened.close()  # never connected: nothing was sent


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2001:4860:4860::8888", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("192.168.0.1", False),
        ("169.254.169.254", False),  # cloud metadata
        ("100.64.0.1", False),  # carrier-grade NAT
        ("::1", False),
        ("fe80::1%eth0", False),
        ("fc00::1", False),
        ("::ffff:127.0.0.1", False),
        ("0.0.0.0", False),
        ("not an address", False),
    ],
)
def test_is_public(address: str, public: bool) -> None:
    assert is_public(address) is public
