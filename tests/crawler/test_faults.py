"""Every fault of the web-in-a-box is crawled through and ends in the right state."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import sqlalchemy as sa

from focuscrawl.db.schema import DocState
from focuscrawl.webbox import WebBoxThread, iter_log

from .conftest import crawl

F = "faults.example"


def test_crawling_every_fault_ends_in_the_right_stored_state(
    engine: sa.Engine, webbox: WebBoxThread
) -> None:
    stats = crawl(
        engine,
        webbox.proxy,
        [f"http://{F}/"],
        max_depth=4,
        max_tries=2,
        read_timeout=3.5,
        threads=16,
    )
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT d.url, d.state, f.http_status, f.error, f.content_type, f.content_hash, "
            "t.text FROM doc d LEFT JOIN doc_fetch f USING (oid) LEFT JOIN doc_text t USING (oid)"
        ).all()
        delays = dict(
            connection.exec_driver_sql(
                "SELECT host, crawl_delay FROM site WHERE crawl_delay IS NOT NULL"
            ).all()
        )
    doc = {r.url: r for r in rows}

    def check(
        url: str, state: DocState, status: int | None = None, error: str | None = None
    ) -> None:
        row = doc[url]
        assert (row.state, row.http_status, row.error) == (state, status, error), row

    assert stats.fetched > 20
    assert not [r for r in rows if r.state == DocState.LEASED]
    check(f"http://slow.{F}/3", DocState.FETCHED, 200)
    check(f"http://timeout.{F}/", DocState.FAILED, None, "timeout")
    check(f"http://status.{F}/404", DocState.FAILED, 404, "http_404")
    check(f"http://status.{F}/410", DocState.FAILED, 410, "http_410")
    check(f"http://status.{F}/500", DocState.FAILED, 500, "http_500")
    check(f"http://status.{F}/503", DocState.FAILED, 503, "http_503")
    for hop in ("3", "2", "1"):
        check(f"http://redirect.{F}/chain/{hop}", DocState.FETCHED, 301)
    check(f"http://redirect.{F}/chain/0", DocState.FETCHED, 200)
    check(f"http://redirect.{F}/loop/a", DocState.FETCHED, 302)
    check(f"http://redirect.{F}/loop/b", DocState.FETCHED, 302)
    check(f"http://redirect.{F}/offsite", DocState.FETCHED, 301)
    # a meta refresh is a link to follow; the page itself is a page
    check(f"http://redirect.{F}/refresh", DocState.FETCHED, 200)
    check(f"http://redirect.{F}/refreshed", DocState.FETCHED, 200)
    # X-Robots-Tag: noindex, nofollow keeps the text and the links out ...
    check(f"http://robots.{F}/header/none", DocState.FETCHED, 200)
    assert doc[f"http://robots.{F}/header/none"].text is None
    assert f"http://robots.{F}/header/none/next" not in doc
    # ... unless it is said to another crawler
    assert "Crawlers may" in doc[f"http://robots.{F}/header/otherbot"].text
    check(f"http://robots.{F}/header/otherbot/next", DocState.FETCHED, 200)
    check(f"http://robots.{F}/public/1", DocState.FETCHED, 200)
    check(f"http://robots.{F}/private/1", DocState.EXCLUDED, None, "robots")
    assert delays == {f"robots.{F}": 2.0, f"moved-robots.{F}": 2.0}
    # a robots.txt that redirects is followed to its rules (RFC 9309)
    check(f"http://moved-robots.{F}/public/1", DocState.FETCHED, 200)
    check(f"http://moved-robots.{F}/private/1", DocState.EXCLUDED, None, "robots")
    # past five redirects robots.txt counts as unavailable (4xx): everything is allowed
    check(f"http://looping-robots.{F}/private/1", DocState.FETCHED, 200)
    # a 429 is no permission: the pages wait, and fail when their tries run out
    check(f"http://busy-robots.{F}/public/1", DocState.FAILED, None, "robots_unavailable")
    # links to files the classifier cannot read (by their URL's type) are not followed
    assert f"http://types.{F}/report.pdf" not in doc
    assert f"http://types.{F}/photo.png" not in doc
    # a URL that names no type is fetched, and its answer stored as what it is
    check(f"http://types.{F}/download", DocState.FETCHED, 200)
    assert doc[f"http://types.{F}/download"].content_type == "application/pdf"
    assert doc[f"http://types.{F}/download"].text is None
    check(f"http://types.{F}/mislabeled", DocState.FETCHED, 200)
    # PNG bytes served as text/html: sniffed, stored as what they are, not parsed as a page
    assert doc[f"http://types.{F}/mislabeled"].content_type == "image/png"
    assert doc[f"http://types.{F}/mislabeled"].text is None
    check(f"http://big.{F}/", DocState.FAILED, 200, "too_large")
    assert "gzip-encoded" in doc[f"http://gzip.{F}/page"].text
    check(f"http://gzip.{F}/bomb", DocState.FAILED, 200, "too_large")
    for path in ("latin1", "latin1-says-utf8", "undeclared"):
        assert "Café crème brûlée" in doc[f"http://charset.{F}/{path}"].text, path
    for path in ("cp1252-meta", "utf8-bom"):
        assert (
            "\u201cQuoted\u201d café \u2013 naïve €5" in doc[f"http://charset.{F}/{path}"].text
        ), path
    check(f"http://malformed.{F}/unclosed", DocState.FETCHED, 200)
    check(f"http://malformed.{F}/garbage", DocState.FETCHED, 200)
    calendar = [r for r in rows if "/calendar/" in r.url]
    assert any(r.state == DocState.EXCLUDED and r.error == "max_depth" for r in calendar)
    assert len(calendar) < 20  # the trap was cut off
    hashes = {doc[f"http://dup.{F}/{p}"].content_hash for p in ("a", "b", "a?ref=1")}
    assert len(hashes) == 1 and None not in hashes
    # a host that refuses connections is not asked again within its back-off: its URL
    # waits in the frontier, tried once (focuscrawl.crawler.unreachable)
    check(f"http://refused.{F}/", DocState.FRONTIER, None, "connection_refused")


def test_spider_traps_stop_long_before_the_depth_bound(
    engine: sa.Engine, webbox: WebBoxThread
) -> None:
    """The calendar (a month links to the next, forever) and the shop (fresh session
    ids on every page), crawled with the default depth bound of 40."""
    from focuscrawl.crawler.traps import NEAR_DUPLICATES

    stats = crawl(
        engine,
        webbox.proxy,
        [f"http://trap.{F}/calendar/2026/11", f"http://trap.{F}/shop?sessionid=1"],
        threads=4,
        max_pages=500,
    )
    with engine.connect() as connection:
        fetched = (
            connection.exec_driver_sql("SELECT d.url FROM doc AS d WHERE d.state = 2")
            .scalars()
            .all()
        )
    calendar = [u for u in fetched if "/calendar/" in u]
    shop = sorted(u for u in fetched if "/shop" in u)
    # session ids are stripped as URLs are normalised: the shop is two pages
    assert shop == [f"http://trap.{F}/shop", f"http://trap.{F}/shop?item=1"]
    # past NEAR_DUPLICATES pages of one pattern and shape, links are not followed; the
    # pages already found (two links a page) are still fetched
    assert NEAR_DUPLICATES < len(calendar) <= 2 * NEAR_DUPLICATES + 2, calendar
    assert stats.fetched == len(fetched) < 40


def _site(engine: sa.Engine, host: str) -> tuple[float | None, object]:
    with engine.connect() as connection:
        row = connection.exec_driver_sql(
            "SELECT crawl_delay, next_fetch_at FROM site WHERE host = %(host)s", {"host": host}
        ).one()
    return row[0], row[1]


def test_a_crawl_delay_past_the_cap_is_honoured_at_the_cap_and_poisons_nothing(
    engine: sa.Engine, webbox: WebBoxThread
) -> None:
    """``Crawl-delay: 1e300`` stopped every crawler (a timestamp out of range), again
    after each restart. Now it counts as max_crawl_delay, and a value an older version
    stored is capped as it is read."""
    host = f"greedy-robots.{F}"
    options = {"max_crawl_delay": 0.5, "host_delay": 0.05, "idle_exit_seconds": 2.0}
    stats = crawl(engine, webbox.proxy, [f"http://{host}/public/1"], max_depth=0, **options)
    assert (stats.fetched, stats.failed) == (1, 0)
    assert _site(engine, host)[0] == 0.5
    with engine.begin() as connection:  # as an older version left it
        connection.exec_driver_sql(
            "UPDATE site SET crawl_delay = 1e300 WHERE host = %(host)s", {"host": host}
        )
    again = crawl(engine, webbox.proxy, [f"http://{host}/public/2"], max_depth=0, **options)
    assert (again.fetched, again.failed) == (1, 0)
    with engine.connect() as connection:
        states = connection.exec_driver_sql("SELECT state, count(*) FROM doc GROUP BY 1").all()
    assert states == [(DocState.FETCHED, 2)]


def test_robots_redirects_are_asked_one_a_turn_under_each_hosts_politeness(
    engine: sa.Engine, webbox: WebBoxThread, tmp_path: Path
) -> None:
    """A robots.txt redirecting to itself got 6 requests in 4 ms at a 0.05 s delay, and
    one redirecting to another host asked it 9.5 ms after that host's own request,
    though its Crawl-delay is 2 s."""
    stats = crawl(
        engine, webbox.proxy, [f"http://looping-robots.{F}/private/1"], host_delay=0.2,
        max_depth=0,
    )  # fmt: skip
    assert stats.fetched == 1  # past the redirects: no rules, everything allowed
    assert webbox.box.log is not None
    webbox.box.log.flush()
    looping = [w for w, h, p, _, _ in iter_log(tmp_path / "requests.log") if h.startswith("loop")]
    assert len(looping) == 7  # six robots.txt requests, then the page
    assert min(b - a for a, b in pairwise(looping)) >= 0.19

    # robots.'s own rules first (Crawl-delay: 2), then a robots.txt that redirects there
    crawl(engine, webbox.proxy, [f"http://robots.{F}/public/1"], host_delay=0.05, max_depth=0)
    crawl(engine, webbox.proxy, [f"http://moved-robots.{F}/public/1"], host_delay=0.05, max_depth=0)
    webbox.box.log.flush()
    robots = [w for w, h, p, _, _ in iter_log(tmp_path / "requests.log") if h == f"robots.{F}"]
    assert len(robots) == 3  # its robots.txt, its page, and the redirected robots.txt
    assert min(b - a for a, b in pairwise(robots)) >= 1.99
