"""What a body really is, from its first bytes (the WHATWG MIME Sniffing rules).

A server's Content-Type is often wrong: a PNG served as ``text/html`` parsed as HTML
is a page of binary junk in the index. ``sniff`` applies the standard's signature
tables for images, audio and video, fonts and archives (section 7.1, "identifying an
unknown MIME type") and its binary-data test (section 7.2, "rules for distinguishing
if a resource is text or binary") to bodies declared as nothing or as "unknown". A
body declared as HTML or text is re-typed only when it holds binary data bytes (then
by its signature, else as ``application/octet-stream``), so text that starts like a
signature ("BMW ...") stays text.
"""

from __future__ import annotations

import re

__all__ = ["sniff"]

#: (pattern, mask, type) of the standard's tables; a mask byte 0x00 matches any byte
_SIGNATURES: tuple[tuple[bytes, bytes | None, str], ...] = (
    (b"GIF87a", None, "image/gif"),
    (b"GIF89a", None, "image/gif"),
    (b"\x89PNG\r\n\x1a\n", None, "image/png"),
    (b"\xff\xd8\xff", None, "image/jpeg"),
    (b"BM", None, "image/bmp"),
    (b"\x00\x00\x01\x00", None, "image/x-icon"),
    (b"\x00\x00\x02\x00", None, "image/x-icon"),
    (
        b"RIFF\x00\x00\x00\x00WEBPVP",
        b"\xff\xff\xff\xff\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff",
        "image/webp",
    ),
    (
        b"RIFF\x00\x00\x00\x00WAVE",
        b"\xff\xff\xff\xff\x00\x00\x00\x00\xff\xff\xff\xff",
        "audio/wave",
    ),
    (
        b"RIFF\x00\x00\x00\x00AVI ",
        b"\xff\xff\xff\xff\x00\x00\x00\x00\xff\xff\xff\xff",
        "video/avi",
    ),
    (b"ID3", None, "audio/mpeg"),
    (b"OggS\x00", None, "application/ogg"),
    (b"MThd\x00\x00\x00\x06", None, "audio/midi"),
    (
        b"FORM\x00\x00\x00\x00AIFF",
        b"\xff\xff\xff\xff\x00\x00\x00\x00\xff\xff\xff\xff",
        "audio/aiff",
    ),
    (b"\x1a\x45\xdf\xa3", None, "video/webm"),
    (b"wOFF", None, "font/woff"),
    (b"wOF2", None, "font/woff2"),
    (b"OTTO", None, "font/otf"),
    (b"\x00\x01\x00\x00", None, "font/ttf"),
    (b"ttcf", None, "font/collection"),
    (b"\x1f\x8b\x08", None, "application/x-gzip"),
    (b"PK\x03\x04", None, "application/zip"),
    (b"Rar!\x1a\x07\x00", None, "application/x-rar-compressed"),
    (b"%PDF-", None, "application/pdf"),
    (b"%!PS-Adobe-", None, "application/postscript"),
)
#: bytes that do not occur in text (section 7.2's binary data bytes)
_BINARY = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")
#: the HTML patterns of section 7.1, after leading whitespace, case-insensitive
_HTML = re.compile(
    rb"[\t\n\x0c\r ]*(?:<!DOCTYPE HTML|<HTML|<HEAD|<SCRIPT|<IFRAME|<H1|<DIV|<FONT|<TABLE|<A"
    rb"|<STYLE|<TITLE|<B|<BODY|<BR|<P|<!--)[ >]",
    re.IGNORECASE,
)
#: what a server says when it does not know, or says only "text"
_UNKNOWN = ("", "unknown/unknown", "application/unknown", "*/*", "application/octet-stream")
_SNIFFED = ("text/html", "application/xhtml+xml", "text/plain", *_UNKNOWN)
RESOURCE_HEADER = 1445  # bytes the standard looks at


def _mp4(head: bytes) -> bool:
    """Section 6.2.1, "matches the signature for MP4"."""
    if len(head) < 12:
        return False
    size = int.from_bytes(head[:4], "big")
    if size > len(head) or size % 4 or size < 12 or head[4:8] != b"ftyp":
        return False
    if head[8:11] == b"mp4":
        return True
    return any(head[i : i + 3] == b"mp4" for i in range(16, size, 4))


def sniff(body: bytes, declared: str) -> str:
    """The media type to treat ``body`` as, given the ``declared`` one (lower case,
    without parameters). A declared type other than HTML, text or unknown is trusted."""
    if declared not in _SNIFFED or not body:
        return declared
    head = body[:RESOURCE_HEADER]
    if head.startswith((b"\xfe\xff", b"\xff\xfe", b"\xef\xbb\xbf")):
        return declared or "text/plain"  # a byte order mark: text (UTF-16 has NULs)
    binary = _BINARY.search(head) is not None
    if declared not in _UNKNOWN and not binary:
        return declared  # text that looks like text ("BMW", "GIF89a is..."): as declared
    for pattern, mask, media in _SIGNATURES:
        if mask is None:
            if head.startswith(pattern):
                return media
        elif len(head) >= len(pattern) and all(
            (b & m) == p for b, m, p in zip(head, mask, pattern, strict=False)
        ):
            return media
    if _mp4(head):
        return "video/mp4"
    if binary:
        return "application/octet-stream"
    return "text/html" if _HTML.match(head) else "text/plain"
