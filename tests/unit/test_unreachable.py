"""What a crawl does not ask for: hosts that could not be reached (for a back-off),
files the classifier cannot read; and what a failed request teaches the link learner."""

from __future__ import annotations

import pytest

from focuscrawl.crawler.policy import readable
from focuscrawl.crawler.unreachable import BACKOFF_MOST_S, UnreachableHosts
from focuscrawl.topics.linkmodel import FAILED, failure_parts, features_of


def test_an_unreachable_host_is_held_for_a_back_off_that_doubles() -> None:
    hosts = UnreachableHosts(backoff=10.0)
    assert hosts.failed(7, now=100.0)  # new: the caller defers its URLs
    assert hosts.holds(7, 109.0) and not hosts.holds(7, 110.5)
    assert hosts.held(105.0) == [7] and hosts.held(111.0) == []
    assert not hosts.failed(7, now=105.0)  # still held: nothing more to defer
    assert hosts.holds(7, 124.0) and not hosts.holds(7, 125.5)  # then 20 s
    assert hosts.failed(7, now=200.0)  # past it: a new failure, a longer wait
    assert hosts.holds(7, 239.0)


def test_a_host_that_answers_is_reachable_again_and_back_offs_are_capped() -> None:
    hosts = UnreachableHosts(backoff=BACKOFF_MOST_S)
    hosts.failed(3, now=0.0)
    hosts.failed(3, now=BACKOFF_MOST_S + 1)
    assert not hosts.holds(3, 2 * BACKOFF_MOST_S + 2)  # never longer than the cap
    hosts.reached(3)
    assert not hosts.holds(3, 1.0) and hosts.held(0.0) == []
    assert hosts.failed(3, now=5.0)  # a fresh back-off


@pytest.mark.parametrize(
    ("url", "read"),
    [
        ("http://a.example/paper.pdf", False),
        ("http://a.example/paper.PS.Z", False),
        ("http://a.example/photo.JPG", False),
        ("http://a.example/src/tool-1.2.tar.gz", False),
        ("http://a.example/", True),
        ("http://a.example/index.html", True),
        ("http://a.example/page.php?id=3", True),
        ("http://a.example/get?file=x.pdf", True),  # the query names no type of the path
        ("http://a.example/wiki/Washington,_D.C.", True),
        ("http://a.example/v1.2/", True),
    ],
)
def test_links_to_files_the_classifier_cannot_read_are_not_followed(url: str, read: bool) -> None:
    assert readable(url) is read


def test_a_failed_request_teaches_its_host_and_file_type_never_words() -> None:
    parts = failure_parts("b.example", "/birds-3/owls.pdf?x=1")
    assert (parts.anchor, parts.context, parts.host, parts.path) == (
        None,
        None,
        "b.example",
        ".pdf",
    )
    assert failure_parts("b.example", "/birds-3/owls").path == ""
    ids = features_of(parts).tolist()
    live = features_of(parts._replace(failed=False)).tolist()
    assert FAILED in ids and FAILED not in live and set(live) < set(ids)
