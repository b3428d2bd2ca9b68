"""Fetching one URL over HTTP with httpcore (the engine of httpx), within limits a
hostile server cannot stretch: connect and read timeouts, and a total one for the body.

Bodies are read raw and decompressed here, chunk by chunk with a ceiling, so a gzip
bomb stops at ``max_bytes`` of output having cost about that much memory. Every
expected failure comes back as a ``FetchResult`` with an ``error`` class, never as
an exception: the worker stores it on the doc row and carries on.
"""

from __future__ import annotations

import email.utils
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin

import httpcore

from focuscrawl.crawler.network import PrivateAddress, PublicOnlyBackend, connect_error
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


class _TooLarge(Exception):
    pass


class _TooSlow(Exception):
    """The body took longer than the total timeout (a trickling server)."""


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


class Fetcher:
    """A connection pool per thread; ``fetch`` is safe to call from many threads.

    Requests go to httpcore, the HTTP engine under httpx, with no httpx layer in
    between: a worker's own ``httpcore.ConnectionPool`` spares the threads the lock of a
    shared one, and skipping httpx's request, URL and header models halves the client's
    CPU a fetch (0.28 -> 0.17 ms against the web-in-a-box, one thread). None of what
    those layers add is used by a crawler: redirects are recorded hop by hop by the
    crawler, no cookies are kept, and bodies are read and decompressed here.

    With ``public_only`` it connects to public addresses only, checked as it connects
    (``focuscrawl.crawler.network``); a fetch refused so fails with ``private_address``.
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
        self._backend = PublicOnlyBackend() if public_only else None
        # Through an HTTP forward proxy every request goes to the proxy itself with an
        # absolute-form target, so one pool of keep-alive connections to the proxy serves
        # every host (a proxying pool would keep a connection per origin host, which
        # churns connections on a crawl of thousands of hosts).
        self._proxy = _proxy_address(config.proxy) if config.proxy else None
        self._headers = [
            (b"User-Agent", config.user_agent.encode("latin-1", errors="replace")),
            (b"Accept", b"*/*"),
            (b"Accept-Encoding", b"gzip, deflate"),
        ]
        self._timeout = {
            "connect": config.connect_timeout,
            "read": config.read_timeout,
            "write": config.total_timeout,
            "pool": config.total_timeout,
        }
        self._local = threading.local()
        self._pools: list[httpcore.ConnectionPool] = []
        self._pools_lock = threading.Lock()

    @property
    def pool(self) -> httpcore.ConnectionPool:
        """This thread's connection pool."""
        pool: httpcore.ConnectionPool | None = getattr(self._local, "pool", None)
        if pool is None:
            keepalive = self.config.keepalive_per_thread
            pool = httpcore.ConnectionPool(
                max_connections=keepalive + 1,
                max_keepalive_connections=keepalive,
                keepalive_expiry=KEEPALIVE_EXPIRY_S,
                network_backend=self._backend,
            )
            self._local.pool = pool
            with self._pools_lock:
                self._pools.append(pool)
        return pool

    def close(self) -> None:
        with self._pools_lock:
            pools, self._pools = self._pools, []
        for pool in pools:
            pool.close()

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
            if self._proxy is None:
                target = httpcore.URL(url)
            else:
                host, port = self._proxy
                target = httpcore.URL(scheme=b"http", host=host, port=port, target=url.encode())
        except (UnicodeEncodeError, ValueError):
            result.error = "bad_url"
            return result
        headers = [(b"Host", authority), *self._headers]
        if etag:
            headers.append((b"If-None-Match", etag.encode("latin-1", errors="replace")))
        if last_modified:
            since = last_modified.encode("latin-1", errors="replace")
            headers.append((b"If-Modified-Since", since))
        deadline = time.monotonic() + self.config.total_timeout
        try:
            request = httpcore.Request(
                b"GET", target, headers=headers, extensions={"timeout": self._timeout}
            )
            response = self.pool.handle_request(request)
            try:
                fields = _fields(response.headers)
                result.status = response.status
                result.content_type = fields.get("content-type", "")
                result.location = fields.get("location")
                result.etag = fields.get("etag")
                result.last_modified = fields.get("last-modified")
                result.x_robots_tag = fields.get("x-robots-tag")
                result.retry_after = retry_after_seconds(
                    fields.get("retry-after"), cap=self.config.max_retry_after
                )
                proxy_error = fields.get("proxy-status", "")
                if response.status == 502 and "error=" in proxy_error:
                    # the proxy could not reach the origin: a network failure, not a page
                    result.status = None
                    result.error = proxy_error.split("error=", 1)[1].split(";")[0].strip()
                    return result
                recorder = self.recorder
                raw = bytearray() if recorder is not None else None
                if response.status == 200:
                    result.body = self._read(response, fields, deadline, raw)
                elif raw is not None:
                    self._read(response, {}, deadline, raw)  # the body, for the record only
                if recorder is not None and raw is not None:
                    recorder(_exchange(url, headers, response, bytes(raw)))
            finally:
                response.close()
        except _TooLarge:
            result.error = "too_large"
        except (httpcore.TimeoutException, _TooSlow):
            result.error = "timeout"
        except PrivateAddress:
            result.error = "private_address"
        except httpcore.ConnectError as exc:
            result.error = connect_error(exc, proxied=self._proxy is not None)
        except (httpcore.RemoteProtocolError, httpcore.LocalProtocolError):
            result.error = "protocol"
        except zlib.error:
            result.error = "bad_encoding"
        except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.ProxyError,
                httpcore.UnsupportedProtocol) as exc:  # fmt: skip
            result.error = type(exc).__name__.lower()[:64]
        return result

    def _read(
        self,
        response: httpcore.Response,
        fields: dict[str, str],
        deadline: float,
        raw: bytearray | None = None,
    ) -> bytes:
        """The body, decoded, refused past ``max_bytes`` of output or the total timeout;
        ``raw`` gets the bytes as they came (before content decoding)."""
        limit = self.config.max_bytes
        declared = fields.get("content-length", "")
        encoded = "content-encoding" in fields
        if declared.isdigit() and int(declared) > limit and not encoded:
            raise _TooLarge
        decoder = _decoder(fields.get("content-encoding", ""))
        out = bytearray()
        for chunk in response.iter_stream():
            if raw is not None:
                raw += chunk
                if len(raw) > limit:
                    raise _TooLarge
            if decoder is None:
                out += chunk
            else:
                out += decoder.decompress(chunk, limit + 1 - len(out))
                if decoder.unconsumed_tail:
                    raise _TooLarge
            if len(out) > limit:
                raise _TooLarge
            if time.monotonic() > deadline:
                raise _TooSlow
        if decoder is not None:
            out += decoder.flush()
            if len(out) > limit:
                raise _TooLarge
        return bytes(out)


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
    url: str, sent: list[tuple[bytes, bytes]], response: httpcore.Response, body: bytes
) -> Exchange:
    version = response.extensions.get("http_version", b"HTTP/1.1")
    reason = response.extensions.get("reason_phrase", b"")
    return Exchange(
        url=url,
        request_headers=sent,
        http_version=version.decode("ascii", errors="replace"),
        status=response.status,
        reason=reason.decode("latin-1"),
        response_headers=list(response.headers),
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
