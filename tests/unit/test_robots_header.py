"""The X-Robots-Tag header: which directives apply to this crawler."""

from __future__ import annotations

import pytest

from focuscrawl.crawler.robots import header_directives


@pytest.mark.parametrize(
    ("value", "directives"),
    [
        (None, set()),
        ("", set()),
        ("noindex, nofollow", {"noindex", "nofollow"}),
        ("NoIndex", {"noindex"}),
        ("none", {"none"}),
        ("otherbot: noindex", set()),
        ("focuscrawl: noindex", {"noindex"}),
        ("FocusCrawl: nofollow", {"nofollow"}),
        ("otherbot: noindex, focuscrawl: nofollow", {"nofollow"}),
        ("otherbot: noindex, nofollow", set()),  # a name holds until the next one
        ("unavailable_after: 25 Jun 2010 15:00:00 PST", {"unavailable_after"}),
        ("max-snippet: 20, noindex", {"max-snippet", "noindex"}),
    ],
)
def test_directives_for_this_crawler(value: str | None, directives: set[str]) -> None:
    assert header_directives(value, "focuscrawl") == directives
