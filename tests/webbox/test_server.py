"""The server speaks HTTP/1.1 as a forward proxy and as an origin."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx
import pytest

from focuscrawl.errors import ConfigError, CorpusError
from focuscrawl.web.corpus import Corpus
from focuscrawl.webbox import WebBox, WebBoxThread, iter_log, load_corpus
from focuscrawl.webbox.server import check_loopback

from .conftest import write_static_corpus


def _raw(server: WebBoxThread, payload: bytes, wait: float = 0.3) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(payload)
        time.sleep(wait)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_proxy_requests_keep_their_hosts(client: httpx.Client) -> None:
    home = client.get("http://a.example/")
    assert home.status_code == 200 and "<title>Home</title>" in home.text
    assert client.get("http://b.example/x").text == "<p>X</p>"
    assert client.get("http://b.example/gone").status_code == 410
    assert client.get("http://a.example/nothing").status_code == 404


def test_origin_form_uses_the_host_header(server: WebBoxThread) -> None:
    response = httpx.get(f"http://127.0.0.1:{server.port}/about", headers={"Host": "a.example"})
    assert response.text == "<p>About</p>"


def test_unknown_host_is_a_proxy_dns_error(client: httpx.Client) -> None:
    response = client.get("http://no-such-host.example/")
    assert response.status_code == 502
    assert response.headers["proxy-status"] == "webbox; error=dns_error"


def test_robots_txt_per_host(client: httpx.Client) -> None:
    assert "Disallow: /private" in client.get("http://a.example/robots.txt").text
    assert client.get("http://b.example/robots.txt").status_code == 404


def test_labels_and_manifest_are_never_served(client: httpx.Client) -> None:
    for path in ("/truth/labels.tsv", "/pages.jsonl", "/corpus.json", "/bodies/home.html"):
        assert client.get("http://a.example" + path).status_code == 404


def test_conditional_get_and_head(client: httpx.Client) -> None:
    first = client.get("http://a.example/")
    again = client.get("http://a.example/", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    head = client.head("http://a.example/")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(len(first.content))


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"If-Modified-Since": "Thu, 01 Jan 2026 00:00:00 GMT"}, 304),  # the page's own date
        ({"If-Modified-Since": "Sat, 01 Aug 2026 12:00:00 GMT"}, 304),  # later
        ({"If-Modified-Since": "Wed, 31 Dec 2025 23:59:59 GMT"}, 200),  # a second before
        ({"If-Modified-Since": "yesterday"}, 200),  # no date: ignored
        ({"If-Modified-Since": "Thu, 01 Jan 2026 00:00:00"}, 200),  # no zone: no HTTP date
        # If-None-Match decides when both are sent (RFC 9110, 13.2.2)
        ({"If-None-Match": '"other"', "If-Modified-Since": "Sat, 01 Aug 2026 12:00:00 GMT"}, 200),
    ],
)
def test_if_modified_since_against_last_modified(
    client: httpx.Client, headers: dict[str, str], status: int
) -> None:
    first = client.get("http://a.example/")
    assert first.headers["last-modified"] == "Thu, 01 Jan 2026 00:00:00 GMT"
    again = client.get("http://a.example/", headers=headers)
    assert again.status_code == status
    assert again.content == (b"" if status == 304 else first.content)


def test_pipelined_requests_are_answered_in_order(server: WebBoxThread) -> None:
    payload = (
        b"GET http://a.example/about HTTP/1.1\r\nHost: a.example\r\n\r\n"
        b"GET http://b.example/x HTTP/1.1\r\nHost: b.example\r\n\r\n"
    )
    answer = _raw(server, payload)
    assert answer.count(b"HTTP/1.1 200 OK") == 2
    assert answer.index(b"<p>About</p>") < answer.index(b"<p>X</p>")


def test_bad_requests_get_clear_statuses(server: WebBoxThread) -> None:
    assert _raw(server, b"NONSENSE\r\n\r\n").startswith(b"HTTP/1.1 400")
    post = b"POST http://a.example/ HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
    assert _raw(server, post).startswith(b"HTTP/1.1 405")
    assert _raw(server, b"CONNECT a.example:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 501")
    assert _raw(server, b"GET / HTTP/1.1\r\nX: " + b"a" * 70_000).startswith(b"HTTP/1.1 431")


def test_every_request_is_logged(
    client: httpx.Client, server: WebBoxThread, tmp_path: Path
) -> None:
    client.get("http://a.example/about")
    client.get("http://no-such-host.example/x")
    assert server.box.log is not None
    server.box.log.flush()
    rows = list(iter_log(tmp_path / "requests.log"))
    assert [(host, path, status) for _, host, path, status, _ in rows] == [
        ("a.example", "/about", 200),
        ("no-such-host.example", "/x", 502),
    ]


@pytest.mark.parametrize(
    "address", ["0.0.0.0", "10.0.0.1", "192.168.1.1", "8.8.8.8", "example.com"]
)
def test_it_refuses_to_listen_anywhere_but_loopback(address: str) -> None:
    with pytest.raises(ConfigError):
        check_loopback(address)


def test_manifest_errors_name_the_line(tmp_path: Path) -> None:
    directory = write_static_corpus(tmp_path / "bad")
    with (directory / "pages.jsonl").open("a") as manifest:
        manifest.write('{"url": "ftp://x.example/"}\n')
    with pytest.raises(CorpusError, match=r"pages.jsonl:5: bad page record"):
        load_corpus(str(directory), tmp_path)


def test_a_url_listed_twice_is_an_error_naming_the_line(tmp_path: Path) -> None:
    directory = write_static_corpus(tmp_path / "twice")
    (directory / "pages.jsonl").write_text(
        '{"url": "http://a.example/x", "body": "one"}\n'
        '{"url": "HTTP://A.example/x#top", "body": "two"}\n'
    )
    with pytest.raises(CorpusError, match=r"pages.jsonl:2: http://a.example/x is listed twice"):
        load_corpus(str(directory), tmp_path)


def test_body_files_must_stay_inside_the_corpus(tmp_path: Path) -> None:
    directory = write_static_corpus(tmp_path / "escape")
    (directory / "pages.jsonl").write_text(
        '{"url": "http://a.example/", "body_file": "../../etc/passwd"}\n'
    )
    with pytest.raises(CorpusError, match="inside the corpus"):
        load_corpus(str(directory), tmp_path)


def test_missing_corpus_says_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="import-wikispeedia"):
        load_corpus("wikispeedia", tmp_path)


def test_faults_can_be_switched_off(tiny_corpus: Corpus) -> None:
    with (
        WebBoxThread(WebBox(tiny_corpus, faults=False)) as running,
        httpx.Client(proxy=running.proxy) as http,
    ):
        response = http.get("http://status.faults.example/500")
    assert response.status_code == 502 and "dns_error" in response.headers["proxy-status"]
