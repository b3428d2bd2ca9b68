"""Content sniffing (the WHATWG MIME Sniffing rules) before a body is parsed."""

from __future__ import annotations

import pytest

from focuscrawl.crawler.sniff import sniff

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"


@pytest.mark.parametrize(
    ("body", "declared", "sniffed"),
    [
        (PNG, "text/html", "image/png"),  # the fault host's mislabelled image
        (PNG, "", "image/png"),
        (b"GIF89a\x01\x00\x01\x00\x80\x00", "text/html", "image/gif"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "text/plain", "image/jpeg"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\x00", "text/html", "application/pdf"),
        (b"PK\x03\x04\x14\x00\x00\x00", "application/octet-stream", "application/zip"),
        (b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom", "", "video/mp4"),
        (b"text\x00with a NUL", "text/html", "application/octet-stream"),
        (b"  <!DOCTYPE html><title>x</title>", "", "text/html"),
        (b"<p>a paragraph</p>", "unknown/unknown", "text/html"),
        (b"plain words", "", "text/plain"),
        # declared text that only starts like a signature stays text
        (b"BMW and GIF89a are names", "text/html", "text/html"),
        (b"%PDF- is how a PDF starts", "text/plain", "text/plain"),
        # UTF-16 has NUL bytes but is text: a byte order mark says so
        ("<html>é</html>".encode("utf-16"), "text/html", "text/html"),
        # a declared type that is neither HTML, text nor unknown is trusted
        (b"<html></html>", "application/json", "application/json"),
        (b"", "text/html", "text/html"),
    ],
)
def test_sniff(body: bytes, declared: str, sniffed: str) -> None:
    assert sniff(body, declared) == sniffed
