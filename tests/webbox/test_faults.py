"""Each fault of the real web, observed through the proxy as a crawler would meet it."""

from __future__ import annotations

import time
import zlib

import httpx
import pytest
from lxml import html as lxml_html

from focuscrawl.webbox import WebBoxThread
from focuscrawl.webbox.faults import BIG_BYTES, fault_urls


def _links(page: httpx.Response) -> list[str]:
    tree = lxml_html.fromstring(page.content)
    return [str(a.get("href")) for a in tree.iter("a")]


def test_index_links_every_fault(client: httpx.Client) -> None:
    index = client.get("http://faults.example/")
    assert index.status_code == 200
    assert _links(index) == fault_urls()


def test_slow_server_answers_late(client: httpx.Client) -> None:
    start = time.monotonic()
    response = client.get("http://slow.faults.example/1.5")
    assert response.status_code == 200
    assert time.monotonic() - start >= 1.4


def test_timeout_server_never_answers(client: httpx.Client) -> None:
    start = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        client.get("http://timeout.faults.example/", timeout=0.5)
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("code", [404, 410, 500, 503])
def test_error_statuses(client: httpx.Client, code: int) -> None:
    response = client.get(f"http://status.faults.example/{code}")
    assert response.status_code == code
    assert ("retry-after" in response.headers) == (code == 503)
    if code == 503:
        assert response.headers["retry-after"] == "2"


def test_redirect_chain_loop_and_offsite(client: httpx.Client) -> None:
    chain = client.get("http://redirect.faults.example/chain/3", follow_redirects=True)
    assert chain.status_code == 200 and len(chain.history) == 3
    assert [r.status_code for r in chain.history] == [301, 301, 301]
    with pytest.raises(httpx.TooManyRedirects):
        client.get("http://redirect.faults.example/loop/a", follow_redirects=True)
    offsite = client.get("http://redirect.faults.example/offsite", follow_redirects=True)
    assert offsite.url.host == "dup.faults.example"


def test_robots_rules_and_crawl_delay(client: httpx.Client) -> None:
    robots = client.get("http://robots.faults.example/robots.txt").text
    assert "Disallow: /private/" in robots and "Crawl-delay: 2" in robots
    # the server serves what robots.txt forbids: obeying it is the crawler's job
    assert client.get("http://robots.faults.example/private/1").status_code == 200


def test_non_html_content_types(client: httpx.Client) -> None:
    pdf = client.get("http://types.faults.example/report.pdf")
    assert pdf.headers["content-type"] == "application/pdf" and pdf.content.startswith(b"%PDF")
    png = client.get("http://types.faults.example/photo.png")
    assert png.headers["content-type"] == "image/png" and png.content.startswith(b"\x89PNG")
    lie = client.get("http://types.faults.example/mislabeled")
    assert lie.headers["content-type"].startswith("text/html") and lie.content.startswith(
        b"\x89PNG"
    )


def test_page_over_ten_megabytes(client: httpx.Client) -> None:
    with client.stream("GET", "http://big.faults.example/") as response:
        assert int(response.headers["content-length"]) >= BIG_BYTES > 10_000_000


def test_gzip_body_and_gzip_bomb(client: httpx.Client) -> None:
    page = client.get("http://gzip.faults.example/page")
    assert page.headers["content-encoding"] == "gzip" and "gzip-encoded" in page.text
    with client.stream("GET", "http://gzip.faults.example/bomb") as bomb:
        compressed = b"".join(bomb.iter_raw())
    assert len(compressed) < 1_000_000
    inflate = zlib.decompressobj(31)
    grown = len(inflate.decompress(compressed, 50_000_000))
    assert grown >= 50_000_000  # and it would keep going: 256 MiB in all


def test_charsets_declared_wrongly_or_not_at_all(client: httpx.Client) -> None:
    latin = client.get("http://charset.faults.example/latin1")
    assert latin.headers["content-type"].endswith("iso-8859-1") and b"Caf\xe9" in latin.content
    liar = client.get("http://charset.faults.example/latin1-says-utf8")
    assert liar.headers["content-type"].endswith("utf-8")
    with pytest.raises(UnicodeDecodeError):
        liar.content.decode("utf-8")
    meta = client.get("http://charset.faults.example/cp1252-meta")
    assert "charset" not in meta.headers["content-type"] and b"charset=windows-1252" in meta.content
    assert b"\x93Quoted\x94" in meta.content
    bom = client.get("http://charset.faults.example/utf8-bom")
    assert bom.content.startswith(b"\xef\xbb\xbf") and b"charset" not in bom.content
    bare = client.get("http://charset.faults.example/undeclared")
    assert b"charset" not in bare.content and b"\xe9" in bare.content


def test_malformed_html(client: httpx.Client) -> None:
    unclosed = client.get("http://malformed.faults.example/unclosed").content
    assert b"</html>" not in unclosed and b"<title>Unclosed<body>" in unclosed
    garbage = client.get("http://malformed.faults.example/garbage").content
    assert b"\x00" in garbage and b"\xff\xfe" in garbage
    assert "http://faults.example/" in _links(client.get("http://malformed.faults.example/garbage"))


def test_infinite_calendar_never_ends(client: httpx.Client) -> None:
    seen, url = set(), "http://trap.faults.example/calendar/2026/11"
    for _ in range(30):
        seen.add(url)
        url = _links(client.get(url))[1]  # "next month"
    assert len(seen) == 30 and url.endswith("/calendar/2029/5")


def test_session_ids_make_new_urls_forever(client: httpx.Client) -> None:
    url, seen = "http://trap.faults.example/shop?sessionid=1", set()
    for _ in range(10):
        seen.add(url)
        url = _links(client.get(url))[0]
    assert len(seen) == 10 and all("sessionid=" in u for u in seen)


def test_duplicate_pages_under_different_urls(client: httpx.Client) -> None:
    bodies = {client.get(f"http://dup.faults.example{p}").content for p in ("/a", "/b", "/a?ref=1")}
    assert len(bodies) == 1


def test_host_that_refuses_connections(client: httpx.Client, server: WebBoxThread) -> None:
    proxied = client.get("http://refused.faults.example/")
    assert proxied.status_code == 502
    assert proxied.headers["proxy-status"] == "webbox; error=connection_refused"
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.get(f"http://127.0.0.1:{server.port}/", headers={"Host": "refused.faults.example"})
