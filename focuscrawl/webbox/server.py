"""The web-in-a-box HTTP server: one loopback port answering for a whole web.

Clients use it as an HTTP forward proxy (absolute-form request targets, as httpx
and curl send them with ``--proxy``), so URLs keep their real hosts; a plain
request with a ``Host`` header works too. It is a small HTTP/1.1 server on
asyncio's ``Protocol`` (keep-alive, pipelining, HEAD, conditional GET) because it
must never be the bottleneck of a crawl benchmark.

Hosts that do not exist answer ``502`` with ``Proxy-Status: webbox; error=dns_error``
(RFC 9209), as a real proxy reports a failed lookup; a host that refuses connections
answers ``502`` with ``error=connection_refused``. Without a proxy (origin-form
requests) a refusing host drops the connection instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import ipaddress
import signal
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

from focuscrawl.errors import ConfigError, InvalidURL
from focuscrawl.web.corpus import Corpus
from focuscrawl.web.urls import normalize_url
from focuscrawl.webbox.faults import fault_response, fault_robots, is_fault_host
from focuscrawl.webbox.response import Response, html_page

__all__ = ["RequestLog", "WebBox", "WebBoxThread", "check_loopback", "serve_forever"]

MAX_HEAD = 64 * 1024
HANG_LIMIT_S = 600.0
LAST_MODIFIED = "Thu, 01 Jan 2026 00:00:00 GMT"
_REASONS = {
    200: "OK",
    301: "Moved Permanently",
    302: "Found",
    304: "Not Modified",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    410: "Gone",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    501: "Not Implemented",
    502: "Bad Gateway",
    503: "Service Unavailable",
}
_TEXT = (("Content-Type", "text/plain; charset=utf-8"),)


def check_loopback(address: str) -> None:
    """The web-in-a-box listens on loopback only; anything else is a configuration error."""
    try:
        ip = ipaddress.ip_address("127.0.0.1" if address == "localhost" else address)
    except ValueError as exc:
        raise ConfigError(f"webbox address {address!r} is not an IP address") from exc
    if not ip.is_loopback:
        raise ConfigError(f"the web-in-a-box listens on loopback only, not {address}")


class RequestLog:
    """Tab-separated log of every request: unix time, host, path, status, body bytes."""

    def __init__(self, path: Path) -> None:
        self._file: IO[str] = path.open("a", encoding="utf-8", buffering=1 << 16)
        self._lock = threading.Lock()

    def write(self, when: float, host: str, target: str, status: int, size: int) -> None:
        with self._lock:
            self._file.write(f"{when:.6f}\t{host}\t{target}\t{status}\t{size}\n")

    def flush(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.flush()

    def close(self) -> None:
        """Flush and close; the server closes its log when it stops."""
        with self._lock:
            self._file.close()


@dataclass
class WebBox:
    """Maps a request to a response: faults, robots.txt, corpus pages, unknown hosts."""

    corpus: Corpus
    faults: bool = True
    log: RequestLog | None = None

    def respond(
        self, url: str, if_none_match: str | None, if_modified_since: str | None = None
    ) -> tuple[str, Response]:
        """Return (host, response) for an absolute URL and the request's validators.

        As RFC 9110 (13.2.2) orders them: If-None-Match when the request has it, else
        If-Modified-Since against the page's Last-Modified.
        """
        try:
            normal = normalize_url(url)
        except InvalidURL as exc:
            return "", Response(400, _TEXT, f"{exc}\n".encode())
        host, _, rest = normal.partition("://")[2].partition("/")
        path = "/" + rest
        if self.faults and is_fault_host(host):
            if path == "/robots.txt":
                return host, fault_robots(host)
            # a server sees the query it was sent: session ids, which normalising strips,
            # are what the shop trap runs on
            query = urlsplit(url).query
            return host, fault_response(normal.split("?", 1)[0] + (f"?{query}" if query else ""))
        if not self.corpus.has_host(host):
            return host, Response(502, meta={"error": "dns_error"})
        if path == "/robots.txt":
            robots = self.corpus.robots(host)
            if robots is None:
                return host, Response(404, _TEXT, b"no robots.txt\n")
            return host, Response(200, _TEXT, robots.encode())
        page = self.corpus.page(normal)
        if page is None:
            body = html_page("Not found", "<p>There is no such page on this site.</p>")
            return host, Response(404, (("Content-Type", "text/html; charset=utf-8"),), body)
        headers = page.headers
        if page.status == 200:
            etag = f'"{zlib.crc32(page.body):08x}-{len(page.body):x}"'
            validators = (("ETag", etag), ("Last-Modified", LAST_MODIFIED))
            if if_none_match is not None:
                if etag in if_none_match:
                    return host, Response(304, validators)
            elif _not_modified_since(LAST_MODIFIED, if_modified_since):
                return host, Response(304, validators)
            headers = (*headers, *validators)
        return host, Response(page.status, headers, page.body)


def _not_modified_since(last_modified: str, if_modified_since: str | None) -> bool:
    """The page last modified at ``last_modified`` has not changed since the request's
    date (an invalid date is ignored, as RFC 9110 asks)."""
    if not if_modified_since:
        return False
    try:
        since = email.utils.parsedate_to_datetime(if_modified_since)
    except (TypeError, ValueError):
        return False
    if since.tzinfo is None:
        return False  # HTTP dates are GMT; a date without a zone is not one
    return email.utils.parsedate_to_datetime(last_modified) <= since


def _serialise(response: Response, keep_alive: bool, head_only: bool) -> bytes:
    status = response.status
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
    lines.extend(f"{name}: {value}" for name, value in response.headers)
    if "error" in response.meta:
        lines.append(f"Proxy-Status: webbox; error={response.meta['error']}")
    body = b"" if status == 304 else response.body
    lines.append(f"Content-Length: {len(body)}")
    lines.append("Server: focuscrawl-webbox")
    if not keep_alive:
        lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head if head_only else head + body


class _Connection(asyncio.Protocol):
    def __init__(self, box: WebBox) -> None:
        self.box = box
        self.buffer = b""
        self.skip = 0  # request-body bytes still to discard
        self.busy = False
        self.closed = False
        self.transport: asyncio.Transport | None = None
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.timer is not None:
            self.timer.cancel()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._process()

    def _process(self) -> None:
        while not self.busy and not self.closed:
            if self.skip:
                taken = min(self.skip, len(self.buffer))
                self.buffer, self.skip = self.buffer[taken:], self.skip - taken
                if self.skip:
                    return
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEAD:
                    self._write(Response(431, _TEXT, b"request head too large\n"), False, False)
                return
            head, self.buffer = self.buffer[:end], self.buffer[end + 4 :]
            self._handle(head)

    def _handle(self, head: bytes) -> None:
        arrived = time.time()
        lines = head.decode("latin-1").split("\r\n")
        request = lines[0].split(" ")
        if len(request) != 3 or not request[2].startswith("HTTP/1."):
            self._write(Response(400, _TEXT, b"malformed request line\n"), False, False)
            return
        method, target, version = request
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        length = headers.get("content-length", "0")
        self.skip = int(length) if length.isdigit() else 0
        connection = headers.get("connection", "").lower()
        keep_alive = "close" not in connection and (
            version == "HTTP/1.1" or "keep-alive" in connection
        )
        proxied = target.startswith("http://")
        if method not in ("GET", "HEAD"):
            allow = (("Allow", "GET, HEAD"), *_TEXT)
            self._write(
                Response(405 if method != "CONNECT" else 501, allow, b"GET or HEAD only\n"),
                keep_alive,
                False,
            )
            return
        url = target if proxied else f"http://{headers.get('host', '')}{target}"
        host, response = self.box.respond(
            url, headers.get("if-none-match"), headers.get("if-modified-since")
        )
        if self.box.log is not None:
            path = url.split(host, 1)[1] if host and host in url else target
            self.box.log.write(arrived, host, path or "/", response.status, len(response.body))
        if response.meta.get("error") == "connection_refused" and not proxied:
            assert self.transport is not None
            self.transport.abort()
            return
        if response.hang:
            self.busy = True
            self.timer = asyncio.get_running_loop().call_later(HANG_LIMIT_S, self._abort)
            return
        if response.delay > 0:
            self.busy = True
            self.timer = asyncio.get_running_loop().call_later(
                response.delay, self._late, response, keep_alive, method == "HEAD"
            )
            return
        self._write(response, keep_alive, method == "HEAD")

    def _late(self, response: Response, keep_alive: bool, head_only: bool) -> None:
        self.busy = False
        self.timer = None
        if not self.closed:
            self._write(response, keep_alive, head_only)
            self._process()

    def _abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def _write(self, response: Response, keep_alive: bool, head_only: bool) -> None:
        assert self.transport is not None
        self.transport.write(_serialise(response, keep_alive, head_only))
        if not keep_alive:
            self.closed = True
            self.transport.close()


async def _serve(
    box: WebBox,
    address: str,
    port: int,
    ready: Callable[[int], None],
    stop: asyncio.Event,
) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Connection(box), address, port, backlog=1024)
    bound = server.sockets[0].getsockname()[1]
    ready(bound)

    async def flush_log() -> None:
        while box.log is not None:
            await asyncio.sleep(1.0)
            box.log.flush()

    flusher = asyncio.create_task(flush_log())
    try:
        await stop.wait()
    finally:
        flusher.cancel()
        server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 2)
        if box.log is not None:
            box.log.close()


def serve_forever(box: WebBox, address: str, port: int, ready: Callable[[int], None]) -> None:
    """Serve until SIGINT or SIGTERM, then stop cleanly."""
    check_loopback(address)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await _serve(box, address, port, ready, stop)

    asyncio.run(main())


class WebBoxThread:
    """The server on a background thread, for tests and the demo.

    ``with WebBoxThread(box) as server: ... server.proxy ...``
    """

    def __init__(self, box: WebBox, address: str = "127.0.0.1", port: int = 0) -> None:
        check_loopback(address)
        self.box, self.address, self.port = box, address, port
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="webbox", daemon=True)
        self._error: BaseException | None = None

    @property
    def proxy(self) -> str:
        return f"http://{self.address}:{self.port}"

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()

            def ready(port: int) -> None:
                self.port = port
                self._ready.set()

            await _serve(self.box, self.address, self.port, ready, self._stop)

        try:
            asyncio.run(main())
        except BaseException as exc:  # surfaced by start()
            self._error = exc
            self._ready.set()

    def start(self) -> WebBoxThread:
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None:
            raise ConfigError(f"the web-in-a-box could not start: {self._error}") from self._error
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(5)

    def __enter__(self) -> WebBoxThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def iter_log(path: Path) -> Iterator[tuple[float, str, str, int, int]]:
    """Read a request log back: (time, host, path, status, bytes)."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            when, host, target, status, size = line.rstrip("\n").split("\t")
            yield float(when), host, target, int(status), int(size)
