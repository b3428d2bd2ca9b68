"""The fetcher's reading of response headers."""

from __future__ import annotations

import pytest

from focuscrawl.crawler.fetch import FetchResult, retry_after_seconds


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


NOW = 1_767_225_600.0  # Thu, 01 Jan 2026 00:00:00 GMT


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (None, None),
        ("120", 120.0),
        (" 2 ", 2.0),
        ("-5", 0.0),
        ("999999999", 86_400.0),  # at most a day
        ("nan", None),
        ("Thu, 01 Jan 2026 00:02:00 GMT", 120.0),  # an HTTP date, two minutes on
        ("Wed, 31 Dec 2025 23:00:00 GMT", 0.0),  # already past
        ("Thu, 01 Jan 2026 00:02:00", None),  # no zone: no HTTP date
        ("soon", None),
    ],
)
def test_retry_after_takes_seconds_or_an_http_date(
    value: str | None, seconds: float | None
) -> None:
    assert retry_after_seconds(value, now=NOW) == seconds
