"""Fetching one URL over HTTP with libcurl (pycurl), within limits a hostile server
cannot stretch: connect and read timeouts, and a total one for the whole exchange.

Bodies are read raw and decompressed here, chunk by chunk with a ceiling, so a gzip
bomb stops at ``max_bytes`` of output having cost about that much memory. Every
expected failure comes back as a ``FetchResult`` with an ``error`` class, never as
an exception: the worker stores it on the doc row and carries on.
"""

from __future__ import annotations

import email.utils
import math
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import certifi
import pycurl

from focuscrawl.crawler.network import public_socket
from focuscrawl.crawler.warc import Exchange
from focuscrawl.errors import ConfigError
from focuscrawl.settings import Settings, default_of

__all__ = ["REDIRECTS", "FetchConfig", "FetchResult", "Fetcher", "fetch_page"]

REDIRECTS = (301, 302, 303, 307, 308)

#: idle keep-alive connections are closed after this long (as httpx does)
KEEPALIVE_EXPIRY_S = 5.0


@dataclass(frozen=True)
class FetchConfig:
    user_agent: str = default_of("user_agent")
    proxy: str | None = None
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    total_timeout: float = 30.0
    max_bytes: int = 10 * 1024 * 1024
    #: idle keep-alive connections each worker thread keeps (it has one request in flight)
    keepalive_per_thread: int = 4
    #: the longest Retry-After honoured (a longer one counts as this)
    max_retry_after: float = default_of("max_retry_after")

    @classmethod
    def from_settings(cls, settings: Settings) -> FetchConfig:
        return cls(
            user_agent=str(settings.user_agent),
            proxy=settings.proxy,
            max_retry_after=float(settings.max_retry_after),
        )


@dataclass
class FetchResult:
    url: str
    status: int | None = None
    content_type: str = ""
    body: bytes = b""
    location: str | None = None
    retry_after: float | None = None
    etag: str | None = None
    last_modified: str | None = None
    x_robots_tag: str | None = None
    #: an error class when the fetch failed: timeout, connect, too_large, protocol, ...
    error: str | None = None

    @property
    def media_type(self) -> str:
        return self.content_type.split(";", 1)[0].strip().lower()

    @property
    def charset(self) -> str | None:
        """The charset parameter of the Content-Type header, lower case, if any."""
        for param in self.content_type.split(";")[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "charset":
                return value.strip().strip("\"'").strip().lower() or None
        return None


def _decoder(encoding: str) -> zlib._Decompress | None:
    encoding = encoding.strip().lower()
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    return None


def retry_after_seconds(
    value: str | None, now: float | None = None, cap: float = default_of("max_retry_after")
) -> float | None:
    """Seconds a ``Retry-After`` asks to wait: a number of seconds or an HTTP date
    (RFC 9110, 10.2.3), within 0 and ``cap``; None when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            return None  # HTTP dates are GMT; without a zone it is no HTTP date
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return max(0.0, min(seconds, cap))


class _Transfer:
    """One fetch as curl's callbacks see it: the header lines of the last response,
    and its body, decoded here chunk by chunk within ``max_bytes`` of output; ``raw``,
    when kept, gets the bytes as they came (before content decoding). A callback never
    raises: it says why it stopped the transfer in ``failure``."""

    __slots__ = (
        "_fields",
        "deadline",
        "decoder",
        "failure",
        "limit",
        "lines",
        "out",
        "raw",
        "refused",
        "started",
        "status",
        "status_line",
    )  # fmt: skip

    def __init__(self, limit: int, deadline: float, raw: bytearray | None) -> None:
        self.status_line = b""
        self.status: int | None = None  # the status line's code, once one came
        self.lines: list[bytes] = []
        self._fields: dict[str, str] | None = None  # the lines' fields, once read
        self.out = bytearray()
        self.raw = raw
        self.decoder: zlib._Decompress | None = None
        self.started = False
        #: too_large, timeout, bad_encoding; or "unread": a status that needs no body
        self.failure: str | None = None
        self.limit = limit
        self.deadline = deadline
        self.refused = False  # a private address the connection would have used

    def header(self, line: bytes) -> None:
        self._fields = None
        if line.startswith(b"HTTP/"):  # a new response (after a 100 Continue)
            self.status_line = line.rstrip(b"\r\n")
            parts = self.status_line.split(None, 2)
            self.status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
            self.lines = []
        elif line[:1] in (b" ", b"\t") and self.lines:  # a folded line continues
            self.lines[-1] = self.lines[-1].rstrip(b"\r\n") + b" " + line.strip()
        elif line.strip():
            self.lines.append(line)

    def fields(self) -> dict[str, str]:
        """The response's header fields by lower-case name (``_fields``), read once."""
        if self._fields is None:
            self._fields = _fields(self.headers())
        return self._fields

    def headers(self) -> list[tuple[bytes, bytes]]:
        pairs = []
        for line in self.lines:
            name, _, value = line.partition(b":")
            pairs.append((name.strip(), value.strip()))
        return pairs

    def write(self, chunk: bytes) -> int | None:
        if not self.started:
            self.started = True
            if self.status != 200 and self.raw is None:
                self.failure = "unread"  # nobody reads it: the connection is dropped
                return 0
            fields = self.fields() if self.status == 200 else {}
            declared = fields.get("content-length", "")
            encoding = fields.get("content-encoding")
            if declared.isdigit() and int(declared) > self.limit and encoding is None:
                return self._stop("too_large")
            self.decoder = _decoder(encoding or "")
        if self.raw is not None:
            self.raw += chunk
            if len(self.raw) > self.limit:
                return self._stop("too_large")
            if self.status != 200:
                return None
        if self.decoder is None:
            self.out += chunk
        else:
            try:
                self.out += self.decoder.decompress(chunk, self.limit + 1 - len(self.out))
            except zlib.error:
                return self._stop("bad_encoding")
            if self.decoder.unconsumed_tail:
                return self._stop("too_large")
        if len(self.out) > self.limit:
            return self._stop("too_large")
        if time.monotonic() > self.deadline:
            return self._stop("timeout")
        return None

    def _stop(self, failure: str) -> int:
        self.failure = failure
        return 0

    def body(self) -> bytes:
        if self.decoder is not None:
            try:
                self.out += self.decoder.flush()
            except zlib.error:
                self.failure = "bad_encoding"
                return b""
            if len(self.out) > self.limit:
                self.failure = "too_large"
                return b""
        return bytes(self.out)


#: libcurl's errors as the crawler names them (others: curl_<code>)
_CURL_ERRORS = {
    pycurl.E_OPERATION_TIMEDOUT: "timeout",
    pycurl.E_FILESIZE_EXCEEDED: "too_large",
    pycurl.E_COULDNT_RESOLVE_HOST: "dns_error",
    pycurl.E_COULDNT_RESOLVE_PROXY: "proxy_unreachable",
    pycurl.E_URL_MALFORMAT: "bad_url",
    pycurl.E_UNSUPPORTED_PROTOCOL: "unsupported_scheme",
    pycurl.E_GOT_NOTHING: "protocol",
    pycurl.E_PARTIAL_FILE: "protocol",
    pycurl.E_RECV_ERROR: "readerror",
    pycurl.E_SEND_ERROR: "writeerror",
    8: "protocol",  # CURLE_WEIRD_SERVER_REPLY: no HTTP status line
    pycurl.E_SSL_CONNECT_ERROR: "connect",
    pycurl.E_PEER_FAILED_VERIFICATION: "connect",
}


class Fetcher:
    """A libcurl handle per thread; ``fetch`` is safe to call from many threads.

    Requests go to libcurl (pycurl), which parses HTTP in C: under a third of the client
    CPU a fetch that httpcore's pure-Python HTTP took (0.18-0.21 against 0.61-0.70 ms a
    page from the web-in-a-box, eight threads, ``bench/fetch.py``). Each worker thread
    has its own handle and so its own keep-alive connections (``keepalive_per_thread``,
    idle ones closed after 5 s); curl follows no redirect (the crawler records them hop
    by hop), keeps no cookie and decodes nothing: bodies are decoded here, within
    ``max_bytes`` of output, so a gzip bomb stops at that much memory.

    With ``public_only`` it connects to public addresses only, checked on the address
    each connection is about to use (``focuscrawl.crawler.network``); a fetch refused so
    fails with ``private_address``.
    """

    def __init__(
        self,
        config: FetchConfig,
        public_only: bool = False,
        recorder: Callable[[Exchange], None] | None = None,
    ) -> None:
        self.config = config
        #: given every whole exchange, as it went over the wire (``crawl run --warc``)
        self.recorder = recorder
        self.public_only = public_only
        # Through an HTTP forward proxy every request goes to the proxy itself with an
        # absolute-form target, so the keep-alive connections to the proxy serve every
        # host.
        self._proxy = _proxy_address(config.proxy) if config.proxy else None
        agent = config.user_agent.encode("latin-1", errors="replace")
        self._headers = [
            (b"User-Agent", agent),
            (b"Accept", b"*/*"),
            (b"Accept-Encoding", b"gzip, deflate"),
        ]
        self._local = threading.local()
        self._handles: list[pycurl.Curl] = []
        self._handles_lock = threading.Lock()

    def _handle(self) -> pycurl.Curl:
        """This thread's curl handle."""
        handle: pycurl.Curl | None = getattr(self._local, "handle", None)
        if handle is None:
            config = self.config
            handle = pycurl.Curl()
            handle.setopt(pycurl.NOSIGNAL, 1)
            handle.setopt(pycurl.PROTOCOLS, pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS)
            handle.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_1_1)
            handle.setopt(pycurl.PATH_AS_IS, 1)  # the URL is normalised already
            handle.setopt(pycurl.FOLLOWLOCATION, 0)
            handle.setopt(pycurl.HTTP_CONTENT_DECODING, 0)
            handle.setopt(pycurl.CONNECTTIMEOUT_MS, int(config.connect_timeout * 1000))
            handle.setopt(pycurl.TIMEOUT_MS, int(config.total_timeout * 1000))
            # no byte for read_timeout seconds: a stalled server
            handle.setopt(pycurl.LOW_SPEED_LIMIT, 1)
            handle.setopt(pycurl.LOW_SPEED_TIME, max(1, math.ceil(config.read_timeout)))
            handle.setopt(pycurl.MAXCONNECTS, max(1, config.keepalive_per_thread))
            handle.setopt(pycurl.MAXAGE_CONN, math.ceil(KEEPALIVE_EXPIRY_S))
            handle.setopt(pycurl.CAINFO, certifi.where())
            if self._proxy is not None:
                handle.setopt(pycurl.PROXY, config.proxy)  # checked by _proxy_address
            if self.public_only:
                handle.setopt(pycurl.OPENSOCKETFUNCTION, self._open_socket)
            self._local.handle = handle
            with self._handles_lock:
                self._handles.append(handle)
        return handle

    def _open_socket(self, purpose: int, address: Any) -> Any:
        transfer: _Transfer | None = getattr(self._local, "transfer", None)
        opened = public_socket(address)
        if opened is None and transfer is not None:
            transfer.refused = True
        return pycurl.SOCKET_BAD if opened is None else opened

    def close(self) -> None:
        with self._handles_lock:
            handles, self._handles = self._handles, []
        for handle in handles:
            handle.close()

    def fetch(
        self, url: str, etag: str | None = None, last_modified: str | None = None
    ) -> FetchResult:
        """GET ``url``; with the validators of an earlier fetch, conditionally."""
        result = FetchResult(url)
        scheme = url.partition("://")[0].lower()
        if scheme not in ("http", "https") or (self._proxy is not None and scheme != "http"):
            # https through the proxy needs CONNECT, which the web-in-a-box lacks
            result.error = "unsupported_scheme"
            return result
        try:
            authority = _authority(url).encode("ascii")
            url.encode("ascii")
        except UnicodeEncodeError:
            result.error = "bad_url"
            return result
        headers = [(b"Host", authority), *self._headers]
        if etag:
            headers.append((b"If-None-Match", etag.encode("latin-1", errors="replace")))
        if last_modified:
            since = last_modified.encode("latin-1", errors="replace")
            headers.append((b"If-Modified-Since", since))
        recorder = self.recorder
        raw = bytearray() if recorder is not None else None
        transfer = _Transfer(
            self.config.max_bytes, time.monotonic() + self.config.total_timeout, raw
        )
        handle = self._handle()
        self._local.transfer = transfer
        handle.setopt(pycurl.URL, url)
        handle.setopt(pycurl.HTTPHEADER, [name + b": " + value for name, value in headers[1:]])
        handle.setopt(pycurl.HEADERFUNCTION, transfer.header)
        handle.setopt(pycurl.WRITEFUNCTION, transfer.write)
        error: str | None = None
        try:
            handle.perform()
        except pycurl.error as exc:
            code, message = exc.args[0], str(exc.args[1]) if len(exc.args) > 1 else ""
            if transfer.failure is not None:
                error = None if transfer.failure == "unread" else transfer.failure
            elif transfer.refused:
                error = "private_address"
            elif code == pycurl.E_COULDNT_CONNECT:
                error = (
                    "proxy_unreachable"
                    if self._proxy is not None
                    else ("connection_refused" if "refused" in message.lower() else "connect")
                )
            else:
                error = _CURL_ERRORS.get(code, f"curl_{code}")
        finally:
            self._local.transfer = None
        status = transfer.status
        if status is None:
            result.error = error or "protocol"
            return result
        fields = transfer.fields()
        result.status = status
        result.content_type = fields.get("content-type", "")
        result.location = fields.get("location")
        result.etag = fields.get("etag")
        result.last_modified = fields.get("last-modified")
        result.x_robots_tag = fields.get("x-robots-tag")
        result.retry_after = retry_after_seconds(
            fields.get("retry-after"), cap=self.config.max_retry_after
        )
        proxy_error = fields.get("proxy-status", "")
        if status == 502 and "error=" in proxy_error:
            # the proxy could not reach the origin: a network failure, not a page
            result.status = None
            result.error = proxy_error.split("error=", 1)[1].split(";")[0].strip()
            return result
        if error is None and status == 200:
            result.body = transfer.body()
            error = transfer.failure  # of decoding's end ("unread" is never a 200's)
            if error is not None:
                result.body = b""
        result.error = error
        if recorder is not None and raw is not None and error is None:
            recorder(_exchange(url, headers, transfer, bytes(raw)))
        return result


def fetch_page(fetcher: Fetcher, url: str, max_redirects: int = 5) -> FetchResult:
    """A page a person named (an example, a page to route down the taxonomy), fetched
    with the crawler's own client: its redirects followed hop by hop, each through
    ``fetcher`` and so checked as the crawler checks its requests (public addresses
    only, unless a proxy resolves the hosts). ``result.url`` is where it ended; past
    ``max_redirects`` hops the error is ``too_many_redirects``."""
    for _ in range(max_redirects + 1):
        result = fetcher.fetch(url)
        if result.status not in REDIRECTS or not result.location:
            return result
        url = urljoin(url, result.location)
    result.error = "too_many_redirects"
    return result


def _exchange(
    url: str, sent: list[tuple[bytes, bytes]], transfer: _Transfer, body: bytes
) -> Exchange:
    version, _, rest = transfer.status_line.partition(b" ")
    reason = rest.partition(b" ")[2]
    return Exchange(
        url=url,
        request_headers=sent,
        http_version=version.decode("ascii", errors="replace"),
        status=transfer.status or 0,
        reason=reason.decode("latin-1"),
        response_headers=transfer.headers(),
        body=body,
        conditional=any(name.startswith(b"If-") for name, _ in sent),
    )


def _authority(url: str) -> str:
    """``host[:port]`` of an absolute URL, without user information."""
    rest = url.partition("://")[2]
    for mark in "/?#":
        rest = rest.split(mark, 1)[0]
    return rest.rpartition("@")[2]


def _proxy_address(proxy: str) -> tuple[bytes, int]:
    """Host and port of an ``http://host[:port]`` forward proxy, or a ConfigError that
    names what is wrong with it."""
    scheme, _, rest = proxy.partition("://")
    if scheme.lower() != "http" or not rest:
        raise ConfigError(f"only http:// proxies are supported, not {proxy!r}")
    try:
        host, port = _host_port(_authority(proxy), 80)
    except ConfigError as exc:
        raise ConfigError(f"proxy {proxy!r}: {exc}") from None
    if not host or not 0 < port < 65536:
        raise ConfigError(f"proxy {proxy!r}: expected http://host:port with a port 1-65535")
    try:
        return host.encode("ascii"), port
    except UnicodeEncodeError:
        raise ConfigError(f"proxy {proxy!r}: the host must be ASCII (IDNA-encode it)") from None


def _host_port(authority: str, default: int) -> tuple[str, int]:
    if authority.startswith("["):  # an IPv6 literal
        host, _, port = authority[1:].partition("]")
        port = port.removeprefix(":")
    elif ":" in authority:
        host, _, port = authority.rpartition(":")
    else:
        host, port = authority, ""
    try:
        return host, int(port) if port else default
    except ValueError:
        raise ConfigError(f"bad port in {authority!r}") from None


def _fields(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """Response header fields by lower-case name; repeated fields joined with ", "."""
    fields: dict[str, str] = {}
    for name, value in raw:
        key = name.decode("latin-1").lower()
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            text = value.decode("latin-1")
        fields[key] = f"{fields[key]}, {text}" if key in fields else text
    return fields
