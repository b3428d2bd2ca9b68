"""The faults of the real web, served under ``*.faults.example``.

Every fault has its own host, so a crawler meets it as it would a broken site:

=============================  =========================================================
``faults.example/``            an index linking to one URL of every fault (a seed)
``slow.faults.example/N``      answers after N seconds (default 3, at most 60)
``timeout.faults.example/*``   accepts the request and never answers
``status.faults.example/C``    status C (404, 410, 500, 503 + ``Retry-After: 2``, ...)
``redirect.faults.example``    ``/chain/N`` 301s N times then 200; ``/loop/a`` <-> ``/loop/b``
                               302 forever; ``/offsite`` 301s to another host;
                               ``/refresh`` a 200 page whose ``<meta http-equiv=refresh>``
                               leads to ``/refreshed``
``moved-robots.faults.example`` robots.txt 301s to robots.faults.example's
``looping-robots.faults.example`` robots.txt 302s to itself forever
``busy-robots.faults.example``  robots.txt answers 429 Too Many Requests
``greedy-robots.faults.example`` robots.txt asks ``Crawl-delay: 1e300`` (not linked from
                               the index: a crawl at any sane cap waits minutes for it)
``robots.faults.example``      robots.txt disallows ``/private/``, ``Crawl-delay: 2``;
                               ``/header/none`` says ``X-Robots-Tag: noindex, nofollow``,
                               ``/header/otherbot`` says it to another crawler only
``types.faults.example``       ``/report.pdf`` (application/pdf), ``/photo.png``
                               (image/png), ``/download`` (a PDF, the URL naming no
                               type), ``/mislabeled`` (PNG bytes served as text/html)
``big.faults.example/``        a 12 MB HTML page
``gzip.faults.example``        ``/page`` gzip-encoded; ``/bomb`` 256 MiB of zeros in 256 KB
``charset.faults.example``     ``/latin1`` (declared), ``/latin1-says-utf8`` (wrong header),
                               ``/cp1252-meta`` (meta only), ``/utf8-bom`` (BOM only),
                               ``/undeclared`` (latin-1, no declaration)
``malformed.faults.example``   ``/unclosed`` tags, ``/garbage`` bytes and NULs amid the HTML
``trap.faults.example``        ``/calendar/Y/M`` links to the next and previous month
                               forever; ``/shop?sessionid=X`` links anew with fresh ids
``dup.faults.example``         ``/a``, ``/b`` and ``/a?ref=1`` serve the same bytes
``refused.faults.example``     the origin refuses connections (proxy answers 502)
=============================  =========================================================
"""

from __future__ import annotations

import gzip
import hashlib
import zlib
from functools import cache
from urllib.parse import parse_qs, urlsplit

from focuscrawl.webbox.response import Response, html_page

__all__ = ["DOMAIN", "ROBOTS", "fault_response", "fault_robots", "fault_urls", "is_fault_host"]

DOMAIN = "faults.example"
HTML = (("Content-Type", "text/html; charset=utf-8"),)
ROBOTS = "User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n"
BIG_BYTES = 12 * 1024 * 1024
BOMB_BYTES = 256 * 1024 * 1024
MAX_DELAY = 60.0


def is_fault_host(host: str) -> bool:
    return host == DOMAIN or host.endswith("." + DOMAIN)


def fault_urls() -> list[str]:
    """One URL of every fault, as linked from the index."""
    paths = [
        "slow/3", "timeout/", "status/404", "status/410", "status/500", "status/503",
        "redirect/chain/3", "redirect/loop/a", "redirect/offsite", "redirect/refresh",
        "robots/public/1", "robots/private/1", "robots/header/none", "robots/header/otherbot",
        "moved-robots/public/1", "moved-robots/private/1", "looping-robots/private/1",
        "busy-robots/public/1",
        "types/report.pdf", "types/photo.png", "types/download", "types/mislabeled", "big/",
        "gzip/page", "gzip/bomb", "charset/latin1", "charset/latin1-says-utf8",
        "charset/cp1252-meta", "charset/utf8-bom", "charset/undeclared", "malformed/unclosed",
        "malformed/garbage",
        "trap/calendar/2026/11", "trap/shop?sessionid=1", "dup/a", "dup/b", "dup/a?ref=1",
        "refused/",
    ]  # fmt: skip
    urls = []
    for path in paths:
        host, _, rest = path.partition("/")
        urls.append(f"http://{host}.{DOMAIN}/{rest}")
    return urls


def _links(urls: list[str]) -> str:
    return "<ul>" + "".join(f'<li><a href="{u}">{u}</a></li>' for u in urls) + "</ul>"


def _ok(title: str, body_html: str = "") -> Response:
    return Response(200, HTML, html_page(title, body_html or "<p>A page.</p>"))


@cache
def _big_page() -> bytes:
    paragraph = b"<p>" + b"All work and no play makes a big page. " * 25 + b"</p>\n"
    head = b"<!DOCTYPE html><html><head><title>Big</title></head><body>\n"
    count = (BIG_BYTES - len(head)) // len(paragraph) + 1
    return head + paragraph * count + b"</body></html>\n"


@cache
def _bomb() -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(1024 * 1024)
    parts = [compressor.compress(chunk) for _ in range(BOMB_BYTES // len(chunk))]
    parts.append(compressor.flush())
    return b"".join(parts)


_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
_PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
_CP1252_TEXT = "\u201cQuoted\u201d caf\u00e9 \u2013 na\u00efve \u20ac5"


def _charset(path: str) -> Response:
    latin = "Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e, na\u00efve fa\u00e7ade."
    if path == "/latin1":
        body = html_page("Latin-1", f"<p>{latin}</p>", "iso-8859-1")
        return Response(200, (("Content-Type", "text/html; charset=iso-8859-1"),), body)
    if path == "/latin1-says-utf8":
        body = html_page("Wrong header", f"<p>{latin}</p>", "iso-8859-1").replace(
            b'charset="iso-8859-1"', b""
        )
        return Response(200, HTML, body)
    if path == "/cp1252-meta":
        body = (
            '<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252">'
            f"<title>cp1252</title></head><body><p>{_CP1252_TEXT}</p></body></html>"
        ).encode("cp1252")
        return Response(200, (("Content-Type", "text/html"),), body)
    if path == "/utf8-bom":
        body = b"\xef\xbb\xbf<html><head><title>BOM</title></head><body><p>" + (
            _CP1252_TEXT.encode("utf-8") + b"</p></body></html>"
        )
        return Response(200, (("Content-Type", "text/html"),), body)
    if path == "/undeclared":
        page = f"<html><head><title>None</title></head><body><p>{latin}</p></body></html>"
        return Response(200, (("Content-Type", "text/html"),), page.encode("iso-8859-1"))
    return Response(404, HTML, html_page("Not found", ""))


def _malformed(path: str) -> Response:
    index = f"http://{DOMAIN}/"
    if path == "/unclosed":
        body = (
            "<html><head><title>Unclosed<body><div><p>Text <b>bold <i>both <a href="
            f'"{index}">home<p>next <table><tr><td>cell<div>'
        ).encode()
        return Response(200, HTML, body)
    if path == "/garbage":
        noise = hashlib.sha512(b"garbage").digest() * 4
        body = (
            b"<html><head><title>Garbage\x00</title></head><body>\xff\xfe\x00<p>ok "
            + noise
            + f'<a href="{index}">home</a>'.encode()
            + b"\x00\x00<p\x01>\xc3\x28 more</body></html>"
        )
        return Response(200, HTML, body)
    return Response(404, HTML, html_page("Not found", ""))


def _trap(path: str, query: str) -> Response:
    parts = path.strip("/").split("/")
    if len(parts) == 3 and parts[0] == "calendar" and parts[1].isdigit() and parts[2].isdigit():
        year, month = int(parts[1]), int(parts[2])
        prev_y, prev_m = (year, month - 1) if month > 1 else (year - 1, 12)
        next_y, next_m = (year, month + 1) if month < 12 else (year + 1, 1)
        base = f"http://trap.{DOMAIN}/calendar"
        links = _links([f"{base}/{prev_y}/{prev_m}", f"{base}/{next_y}/{next_m}"])
        return _ok(f"Calendar {year}-{month:02d}", "<p>No events.</p>" + links)
    if parts == ["shop"]:
        session = parse_qs(query).get("sessionid", ["0"])[0]
        fresh = hashlib.sha1(session.encode(), usedforsecurity=False).hexdigest()[:12]
        base = f"http://trap.{DOMAIN}"
        links = _links([f"{base}/shop?sessionid={fresh}", f"{base}/shop?item=1&sessionid={fresh}"])
        return _ok("Shop", "<p>Welcome back.</p>" + links)
    return Response(404, HTML, html_page("Not found", ""))


def fault_robots(host: str) -> Response:
    """The robots.txt of a fault host: rules on robots., a redirect to them on
    moved-robots., a redirect to itself on looping-robots., 429 on busy-robots., a
    Crawl-delay of 1e300 s on greedy-robots., none elsewhere."""
    text = (("Content-Type", "text/plain; charset=utf-8"),)
    if host == f"robots.{DOMAIN}":
        return Response(200, text, ROBOTS.encode())
    if host == f"moved-robots.{DOMAIN}":
        location = f"http://robots.{DOMAIN}/robots.txt"
        return Response(301, (*text, ("Location", location)), b"moved\n")
    if host == f"busy-robots.{DOMAIN}":
        return Response(429, (*text, ("Retry-After", "1")), b"too many requests\n")
    if host == f"looping-robots.{DOMAIN}":
        return Response(302, (*text, ("Location", "/robots.txt")), b"moved\n")
    if host == f"greedy-robots.{DOMAIN}":
        return Response(200, text, b"User-agent: *\nCrawl-delay: 1e300\n")
    return Response(404, text, b"no robots.txt\n")


def fault_response(url: str) -> Response:
    """The response for a URL under faults.example (404 for unknown paths)."""
    parts = urlsplit(url)
    host, path, query = parts.netloc, parts.path or "/", parts.query
    kind = host[: -len(DOMAIN)].rstrip(".")
    not_found = Response(404, HTML, html_page("Not found", "<p>No such fault.</p>"))
    if kind == "":
        return _ok("Faults of the web", _links(fault_urls())) if path == "/" else not_found
    if kind == "slow":
        try:
            seconds = min(float(path.strip("/") or 3), MAX_DELAY)
        except ValueError:
            seconds = 3.0
        return Response(
            200, HTML, html_page("Slow", f"<p>{seconds:g} seconds late.</p>"), delay=seconds
        )
    if kind == "timeout":
        return Response(200, hang=True)
    if kind == "status":
        code = int(path.strip("/")) if path.strip("/").isdigit() else 404
        code = code if 200 <= code <= 599 else 404
        headers = HTML + ((("Retry-After", "2"),) if code in (429, 503) else ())
        return Response(code, headers, html_page(f"Status {code}", ""))
    if kind == "redirect":
        return _redirect(path)
    if kind in ("robots", "moved-robots", "looping-robots", "busy-robots", "greedy-robots"):
        tags = {"/header/none": "noindex, nofollow", "/header/otherbot": "otherbot: noindex"}
        text = "<p>Crawlers may or may not read this.</p>"
        if path not in tags:
            return _ok("Robots " + path, text)
        page = _ok("Robots " + path, f'{text}<p><a href="{path}/next">next</a></p>')
        return Response(200, (*page.headers, ("X-Robots-Tag", tags[path])), page.body)
    if kind == "types":
        types = {
            "/report.pdf": ("application/pdf", _PDF),
            "/photo.png": ("image/png", _PNG),
            "/download": ("application/pdf", _PDF),
            "/mislabeled": ("text/html; charset=utf-8", _PNG),
        }
        if path in types:
            content_type, body = types[path]
            return Response(200, (("Content-Type", content_type),), body)
        return not_found
    if kind == "big":
        return Response(200, HTML, _big_page())
    if kind == "gzip":
        if path == "/page":
            body = gzip.compress(html_page("Gzipped", "<p>This body was gzip-encoded.</p>"))
            return Response(200, (*HTML, ("Content-Encoding", "gzip")), body)
        if path == "/bomb":
            return Response(200, (*HTML, ("Content-Encoding", "gzip")), _bomb())
        return not_found
    if kind == "charset":
        return _charset(path)
    if kind == "malformed":
        return _malformed(path)
    if kind == "trap":
        return _trap(path, query)
    if kind == "dup" and path in ("/a", "/b"):
        return _ok("Duplicate", "<p>The same page under several URLs.</p>")
    if kind == "refused":
        return Response(502, meta={"error": "connection_refused"})
    return not_found


def _redirect(path: str) -> Response:
    parts = path.strip("/").split("/")
    base = f"http://redirect.{DOMAIN}"

    def moved(code: int, location: str) -> Response:
        body = html_page("Moved", f'<p><a href="{location}">here</a></p>')
        return Response(code, (*HTML, ("Location", location)), body)

    if len(parts) == 2 and parts[0] == "chain" and parts[1].isdigit():
        hops = int(parts[1])
        return moved(301, f"{base}/chain/{hops - 1}") if hops > 0 else _ok("End of chain")
    if parts == ["loop", "a"]:
        return moved(302, f"{base}/loop/b")
    if parts == ["loop", "b"]:
        return moved(302, "/loop/a")
    if parts == ["offsite"]:
        return moved(301, f"http://dup.{DOMAIN}/a")
    if parts == ["refresh"]:
        head = '<meta http-equiv="Refresh" content="0; URL=\'/refreshed\'">'
        return _ok("Refresh", f"{head}<p>This page has moved.</p>")
    if parts == ["refreshed"]:
        return _ok("Refreshed", "<p>The page a refresh led to.</p>")
    return Response(404, HTML, html_page("Not found", ""))
