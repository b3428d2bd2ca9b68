"""Fixtures for the web-in-a-box: corpora on disk and a server on a loopback port."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from focuscrawl.web.corpus import Corpus
from focuscrawl.webbox import WebBox, WebBoxThread, load_corpus


@pytest.fixture(scope="session")
def wikispeedia(wikispeedia_home: Path) -> Corpus:
    return load_corpus("wikispeedia", wikispeedia_home)


def write_static_corpus(directory: Path, faults: bool = True) -> Path:
    """A three-page corpus on two hosts, written in the documented format."""
    (directory / "bodies").mkdir(parents=True)
    (directory / "robots").mkdir()
    (directory / "truth").mkdir()
    (directory / "bodies" / "home.html").write_text(
        '<html><head><title>Home</title></head><body><a href="/about">About</a> '
        '<a href="http://b.example/x">X</a></body></html>'
    )
    pages = [
        {
            "url": "http://a.example/",
            "headers": {"Content-Type": "text/html"},
            "body_file": "bodies/home.html",
        },
        {
            "url": "http://a.example/about",
            "headers": {"Content-Type": "text/html"},
            "body": "<p>About</p>",
        },
        {"url": "http://b.example/x", "headers": {"Content-Type": "text/html"}, "body": "<p>X</p>"},
        {"url": "http://b.example/gone", "status": 410, "body": "gone"},
    ]
    (directory / "pages.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pages))
    (directory / "robots" / "a.example.txt").write_text("User-agent: *\nDisallow: /private\n")
    (directory / "truth" / "labels.tsv").write_text(
        "http://a.example/\ttop.left\nhttp://b.example/x\ttop.right\n"
    )
    meta = {"format": 1, "name": "tiny", "kind": "static", "faults": faults}
    (directory / "corpus.json").write_text(json.dumps(meta))
    return directory


@pytest.fixture
def tiny_corpus(tmp_path: Path) -> Corpus:
    return load_corpus(str(write_static_corpus(tmp_path / "tiny")), tmp_path)


@pytest.fixture
def server(tiny_corpus: Corpus, tmp_path: Path) -> Iterator[WebBoxThread]:
    from focuscrawl.webbox import RequestLog

    with WebBoxThread(
        WebBox(tiny_corpus, faults=True, log=RequestLog(tmp_path / "requests.log"))
    ) as running:
        yield running


@pytest.fixture
def client(server: WebBoxThread) -> Iterator[httpx.Client]:
    with httpx.Client(proxy=server.proxy, timeout=10) as http:
        yield http
