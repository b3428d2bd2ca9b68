"""The report links a URL only where a browser could open it."""

from __future__ import annotations

import pytest

from focuscrawl.report.build import linkable


@pytest.mark.parametrize(
    ("url", "linked"),
    [
        ("https://en.wikipedia.org/wiki/Zebra", True),
        ("http://[::1]:8080/x", True),
        ("http://site-15.wikispeedia.example/wiki/Zebra", False),
        ("http://site0001.synth.example:8080/p/1", False),
        ("http://example/", False),
        ("http://a.test./x", False),
        ("http://printer.invalid/", False),
        ("ftp://en.wikipedia.org/", False),
        ("not a url", False),
    ],
)
def test_only_hosts_that_can_resolve_are_linked(url: str, linked: bool) -> None:
    assert linkable(url) is linked
