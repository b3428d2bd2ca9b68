"""The fetcher's reading of response headers."""

from __future__ import annotations

import pytest

from focuscrawl.crawler.fetch import FetchResult


@pytest.mark.parametrize(
    ("content_type", "charset"),
    [
        ("text/html; charset=UTF-8", "utf-8"),
        ('text/html;charset="ISO-8859-1"', "iso-8859-1"),
        ("text/html; Charset = 'windows-1252' ; q=1", "windows-1252"),
        ("text/html; format=flowed; charset=koi8-r", "koi8-r"),
        ("text/html", None),
        ("text/html; charset=", None),
        ("text/html; xcharset=utf-8", None),
        ("", None),
    ],
)
def test_charset_comes_from_the_content_type_parameter(
    content_type: str, charset: str | None
) -> None:
    assert FetchResult("http://a.example/", content_type=content_type).charset == charset


def test_media_type_drops_parameters_and_case() -> None:
    assert FetchResult("http://a.example/", content_type="Text/HTML; charset=x").media_type == (
        "text/html"
    )
