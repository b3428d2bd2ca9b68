"""Every HTTP exchange of a crawl as WARC records (``crawl run --warc DIR``), with warcio.

Each exchange is a ``request`` record and a ``response`` record (a ``revisit`` record,
profile *server-not-modified*, when a conditional request got 304), each record gzipped
on its own, so any record can be read from its offset. The response's payload is the
body as the server sent it (content-encoding kept; only the chunked transfer encoding,
which libcurl takes off, is gone, and with it the ``Transfer-Encoding`` header). Files
are named as Heritrix names them, ``PREFIX-TIMESTAMP17-SERIAL-PID~HOST~PORT.warc.gz``,
carry ``.open`` while written, start with a ``warcinfo`` record, and rotate once they
pass ``max_bytes``. Robots.txt fetches and redirects are exchanges too; a fetch that
ended without a whole response (a timeout, a body past the size limit) is not recorded.
A crawl writing into a directory first closes the ``.open`` files of crawlers of this
machine that were killed (``close_orphans``).
"""

from __future__ import annotations

import os
import socket
import threading
import time
import zlib
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from focuscrawl import __version__
from focuscrawl.errors import ConfigError
from focuscrawl.pids import alive

__all__ = ["DEFAULT_MAX_BYTES", "Exchange", "WarcFiles", "close_orphans"]

DEFAULT_MAX_BYTES = 1_000_000_000  # Heritrix's default file size
PREFIX = "FOCUSCRAWL"
NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"

Headers = list[tuple[bytes, bytes]]


@dataclass
class Exchange:
    """One request and the whole response to it, as they went over the wire."""

    url: str
    request_headers: Headers
    http_version: str
    status: int
    reason: str
    response_headers: Headers
    body: bytes
    conditional: bool = False  # the request carried If-None-Match / If-Modified-Since


def _host() -> str:
    """This machine's short name, as the WARC file names carry it."""
    return socket.gethostname().split(".")[0] or "localhost"


def _whole_records(path: Path) -> int:
    """The length of the file's leading whole gzip members (a record each): what a
    writer killed in the middle of a record had finished."""
    whole = seen = 0
    member = zlib.decompressobj(16 + zlib.MAX_WBITS)
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            while chunk:
                try:
                    member.decompress(chunk)
                except zlib.error:
                    return whole
                if not member.eof:
                    seen += len(chunk)
                    break
                seen += len(chunk) - len(member.unused_data)
                whole = seen
                chunk = member.unused_data
                member = zlib.decompressobj(16 + zlib.MAX_WBITS)
    return whole


def close_orphans(directory: Path) -> list[Path]:
    """Close the ``.open`` files a crawler of this machine left when it was killed (its
    PID, in the name, runs no more): each is cut after its last whole record and renamed
    without ``.open``, as its writer would have. Returns the files closed."""
    here = _host()
    closed = []
    for path in sorted(directory.glob("*.warc.gz.open")):
        name = path.name.removesuffix(".open")
        parts = name.removesuffix(".warc.gz").split("~")
        pid = parts[0].rpartition("-")[2]
        if len(parts) != 3 or parts[1] != here or not pid.isdigit() or alive(int(pid)):
            continue
        try:
            with path.open("r+b") as stream:
                stream.truncate(_whole_records(path))
            os.replace(path, directory / name)
        except OSError:
            continue  # another crawler starting here closed it first
        closed.append(directory / name)
    return closed


def _text(headers: Headers) -> list[tuple[str, str]]:
    return [(n.decode("latin-1"), v.decode("latin-1")) for n, v in headers]


class WarcFiles:
    """A directory of WARC files that worker threads write exchanges to."""

    def __init__(
        self, directory: Path, max_bytes: int = DEFAULT_MAX_BYTES, prefix: str = PREFIX
    ) -> None:
        if max_bytes < 1_000_000:
            raise ConfigError(f"--warc-max-size {max_bytes}: at least 1000000 bytes")
        self.directory = directory
        self.max_bytes = max_bytes
        self.prefix = prefix
        self.records = 0
        self.files: list[Path] = []
        self._serial = 0
        self._lock = threading.Lock()
        self._stream: BinaryIO | None = None
        self._writer: WARCWriter | None = None
        self._name = ""
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"--warc {directory}: {exc.strerror or exc}") from None
        if not directory.is_dir() or not os.access(directory, os.W_OK | os.X_OK):
            raise ConfigError(f"--warc {directory}: not a directory this user can write to")
        self.closed_orphans = close_orphans(directory)
        with self._lock:
            self._open()  # a directory that refuses files says so before the crawl starts

    def _open(self) -> None:
        now = time.time()
        stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(now)) + f"{int(now * 1000) % 1000:03d}"
        host = _host()
        self._name = f"{self.prefix}-{stamp}-{self._serial:05d}-{os.getpid()}~{host}~0.warc.gz"
        self._serial += 1
        path = self.directory / (self._name + ".open")
        try:
            self._stream = path.open("xb")
        except OSError as exc:
            raise ConfigError(f"--warc {self.directory}: {exc.strerror or exc}") from None
        self._writer = WARCWriter(self._stream, gzip=True, warc_version="1.1")
        info = {"software": f"focuscrawl/{__version__}", "format": "WARC File Format 1.1",
                "hostname": host, "operator": ""}  # fmt: skip
        self._writer.write_record(self._writer.create_warcinfo_record(self._name, info))

    def _close_file(self) -> None:
        if self._stream is None:
            return
        self._stream.close()
        final = self.directory / self._name
        os.replace(self.directory / (self._name + ".open"), final)
        self.files.append(final)
        self._stream = self._writer = None

    def record(self, exchange: Exchange) -> None:
        """Write the exchange's request and response (or revisit) records."""
        parts = urlsplit(exchange.url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        request = StatusAndHeaders(
            f"GET {target} {exchange.http_version}",
            _text(exchange.request_headers),
            is_http_request=True,
        )
        response_headers = [
            (n, v) for n, v in _text(exchange.response_headers)
            if n.lower() != "transfer-encoding"
        ]  # fmt: skip
        response = StatusAndHeaders(
            f"{exchange.status} {exchange.reason}".strip(),
            response_headers,
            protocol=exchange.http_version,
        )
        with self._lock:
            if self._writer is None:
                self._open()
            writer = self._writer
            assert writer is not None and self._stream is not None
            if exchange.conditional and exchange.status == 304:
                answer = writer.create_warc_record(
                    exchange.url, "revisit", http_headers=response,
                    warc_headers_dict={"WARC-Profile": NOT_MODIFIED},
                )  # fmt: skip
            else:
                answer = writer.create_warc_record(
                    exchange.url, "response", payload=BytesIO(exchange.body),
                    length=len(exchange.body), http_headers=response,
                )  # fmt: skip
            asked = writer.create_warc_record(exchange.url, "request", http_headers=request)
            writer.write_request_response_pair(asked, answer)
            self.records += 2
            if self._stream.tell() >= self.max_bytes:
                self._close_file()

    def close(self) -> None:
        """Finish the file being written (renamed without ``.open``)."""
        with self._lock:
            self._close_file()
