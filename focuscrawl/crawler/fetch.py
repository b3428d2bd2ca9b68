"""Fetching one URL with httpx, within limits a hostile server cannot stretch.

Bodies are read raw and decompressed here, chunk by chunk with a ceiling, so a gzip
bomb stops at ``max_bytes`` of output having cost about that much memory. Every
expected failure comes back as a ``FetchResult`` with an ``error`` class, never as
an exception: the worker stores it on the doc row and carries on.
"""

from __future__ import annotations

import threading
import zlib
from dataclasses import dataclass
from typing import Any

import httpx

from focuscrawl.errors import ConfigError

__all__ = ["FetchConfig", "FetchResult", "Fetcher"]


@dataclass(frozen=True)
class FetchConfig:
    user_agent: str = "focuscrawl/0.1 (+https://example.invalid/focuscrawl)"
    proxy: str | None = None
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    total_timeout: float = 30.0
    max_bytes: int = 10 * 1024 * 1024
    #: idle keep-alive connections each worker thread keeps (it has one request in flight)
    keepalive_per_thread: int = 4


@dataclass
class FetchResult:
    url: str
    status: int | None = None
    content_type: str = ""
    body: bytes = b""
    location: str | None = None
    retry_after: float | None = None
    etag: str | None = None
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


def _decoder(encoding: str) -> zlib._Decompress | None:
    encoding = encoding.strip().lower()
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    return None


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, min(float(value.strip()), 86_400.0))
    except ValueError:
        return None  # an HTTP date: fall back to the host delay


class Fetcher:
    """An httpx transport per thread; ``fetch`` is safe to call from many threads.

    A worker sends each request straight to its own ``httpx.HTTPTransport``: a pool
    of its own spares the threads the lock of a shared one, and going below
    ``httpx.Client`` spares every request the client's cookie jar, auth and redirect
    layers, none of which a crawler uses (redirects are recorded hop by hop by the
    crawler, and no cookies are kept). That was a tenth of the crawler's CPU time.
    """

    def __init__(self, config: FetchConfig) -> None:
        self.config = config
        # Through an HTTP forward proxy every request goes to the proxy itself with an
        # absolute-form target, so one pool of keep-alive connections to the proxy serves
        # every host (httpx's own proxy support keeps a connection per origin host, which
        # churns connections on a crawl of thousands of hosts).
        self._proxy = httpx.URL(config.proxy) if config.proxy else None
        if self._proxy is not None and self._proxy.scheme != "http":
            raise ConfigError(f"only http:// proxies are supported, not {config.proxy}")
        self._headers = {
            "User-Agent": config.user_agent,
            "Accept": "*/*",
            "Accept-Encoding": "gzip, deflate",
        }
        self._timeout = httpx.Timeout(
            config.total_timeout, connect=config.connect_timeout, read=config.read_timeout
        ).as_dict()
        self._local = threading.local()
        self._transports: list[httpx.HTTPTransport] = []
        self._transports_lock = threading.Lock()

    @property
    def transport(self) -> httpx.HTTPTransport:
        """This thread's transport."""
        transport: httpx.HTTPTransport | None = getattr(self._local, "transport", None)
        if transport is None:
            keepalive = self.config.keepalive_per_thread
            limits = httpx.Limits(
                max_connections=keepalive + 1, max_keepalive_connections=keepalive
            )
            transport = httpx.HTTPTransport(limits=limits)
            self._local.transport = transport
            with self._transports_lock:
                self._transports.append(transport)
        return transport

    def close(self) -> None:
        with self._transports_lock:
            transports, self._transports = self._transports, []
        for transport in transports:
            transport.close()

    def fetch(self, url: str, etag: str | None = None) -> FetchResult:
        result = FetchResult(url)
        headers = dict(self._headers)
        if etag:
            headers["If-None-Match"] = etag
        extensions: dict[str, Any] = {"timeout": self._timeout}
        target = url
        if self._proxy is not None:
            parsed = httpx.URL(url)
            if parsed.scheme != "http":
                result.error = "unsupported_scheme"  # https needs CONNECT, which the proxy lacks
                return result
            headers["Host"] = parsed.netloc.decode("ascii")
            extensions["target"] = url.encode("ascii")
            target = str(self._proxy.copy_with(raw_path=parsed.raw_path))
        try:
            request = httpx.Request("GET", target, headers=headers, extensions=extensions)
            response = self.transport.handle_request(request)
            try:
                result.status = response.status_code
                result.content_type = response.headers.get("content-type", "")
                result.location = response.headers.get("location")
                result.etag = response.headers.get("etag")
                result.retry_after = _retry_after(response.headers.get("retry-after"))
                proxy_error = response.headers.get("proxy-status", "")
                if response.status_code == 502 and "error=" in proxy_error:
                    # the proxy could not reach the origin: a network failure, not a page
                    result.status = None
                    result.error = proxy_error.split("error=", 1)[1].split(";")[0].strip()
                    return result
                if response.status_code == 200:
                    result.body = self._read(response)
            finally:
                response.close()
        except _TooLarge:
            result.error = "too_large"
        except httpx.TimeoutException:
            result.error = "timeout"
        except httpx.ConnectError:
            result.error = "connect"
        except (httpx.RemoteProtocolError, httpx.LocalProtocolError):
            result.error = "protocol"
        except zlib.error:
            result.error = "bad_encoding"
        except httpx.HTTPError as exc:
            result.error = type(exc).__name__.lower()[:64]
        return result

    def _read(self, response: httpx.Response) -> bytes:
        limit = self.config.max_bytes
        declared = response.headers.get("content-length", "")
        encoded = "content-encoding" in response.headers
        if declared.isdigit() and int(declared) > limit and not encoded:
            raise _TooLarge
        decoder = _decoder(response.headers.get("content-encoding", ""))
        out = bytearray()
        for chunk in response.iter_raw():
            if decoder is None:
                out += chunk
            else:
                out += decoder.decompress(chunk, limit + 1 - len(out))
                if decoder.unconsumed_tail:
                    raise _TooLarge
            if len(out) > limit:
                raise _TooLarge
        if decoder is not None:
            out += decoder.flush()
            if len(out) > limit:
                raise _TooLarge
        return bytes(out)
