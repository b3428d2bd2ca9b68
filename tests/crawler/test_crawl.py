"""A crawler process crawls the web-in-a-box and stores what it found."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa

from focuscrawl.crawler.config import CrawlConfig, Mode
from focuscrawl.crawler.process import Crawler
from focuscrawl.crawler.timing import DUE_S
from focuscrawl.db.schema import DocState
from focuscrawl.db.seeds import add_seeds
from focuscrawl.web.urls import oid_of
from focuscrawl.webbox import RequestLog, WebBox, WebBoxThread, iter_log, load_corpus
from focuscrawl.webbox.synthetic import SyntheticCorpus

from .conftest import crawl, host_gaps, requested_pages, states


def test_crawl_stores_pages_text_and_every_out_link(
    engine: sa.Engine, webbox: WebBoxThread, synthetic: SyntheticCorpus
) -> None:
    stats = crawl(engine, webbox.proxy, [synthetic.url(0), synthetic.url(1500)], max_pages=120)
    assert stats.fetched == 120 and stats.failed == 0
    by_state = states(engine)
    assert by_state[DocState.FETCHED] == 120 and DocState.LEASED not in by_state
    with engine.connect() as connection:
        fetched = (
            connection.exec_driver_sql("SELECT d.url FROM doc AS d WHERE d.state = 2")
            .scalars()
            .all()
        )
        links = connection.exec_driver_sql("SELECT oid_src, oid_dst FROM link").all()
        texts = connection.exec_driver_sql(
            "SELECT count(*) FROM doc_text WHERE length(text) > 1000"
        ).scalar()
        known = set(connection.exec_driver_sql("SELECT oid FROM doc").scalars())
    expected = {
        (oid_of(url), oid_of(synthetic.url(target)))
        for url in fetched
        for target in synthetic.out_links(synthetic.page_id(url))  # type: ignore[arg-type]
    }
    assert set(map(tuple, links)) == expected
    assert {dst for _, dst in expected} <= known
    assert texts == 120


def test_breadth_first_fetches_in_depth_order(
    engine: sa.Engine, webbox: WebBoxThread, synthetic: SyntheticCorpus
) -> None:
    crawl(engine, webbox.proxy, [synthetic.url(7)], max_pages=60, threads=1)
    with engine.connect() as connection:
        depths = (
            connection.exec_driver_sql(
                "SELECT d.depth FROM doc AS d JOIN doc_fetch AS f USING (oid) "
                "WHERE d.state = 2 ORDER BY f.fetch_seq"
            )
            .scalars()
            .all()
        )
    assert depths[0] == 0 and depths[-1] >= 2
    # Claims take the frontier in depth order, but one thread fetches a claimed batch by
    # host readiness (a host just asked waits out its delay, 0.01 s at least), so where
    # one depth gives way to the next the two mix within a batch, the more the busier
    # the machine (a loaded one put 81 of some 1,000 pairs of different depths out of
    # order). A page never follows one two levels deeper, and the order is all but
    # sorted: an order blind to depth would invert about half of those pairs.
    deepest = list(itertools.accumulate(depths, max))
    assert all(depth >= before - 1 for depth, before in zip(depths[1:], deepest, strict=False))
    pairs = [(a, b) for i, a in enumerate(depths) for b in depths[i + 1 :] if a != b]
    inversions = sum(a > b for a, b in pairs)
    assert inversions <= len(pairs) * 0.15, depths


def test_hard_focus_holds_out_links_for_the_classifier(
    engine: sa.Engine, webbox: WebBoxThread, synthetic: SyntheticCorpus
) -> None:
    stats = crawl(engine, webbox.proxy, [synthetic.url(3)], mode=Mode.HARD)
    assert stats.fetched == 1  # nothing else was released into the frontier
    by_state = states(engine)
    assert by_state[DocState.HELD] == len(synthetic.out_links(3))


@pytest.mark.parametrize(("mode", "kept"), [(Mode.BFS, False), (Mode.HARD, True)])
def test_link_contexts_are_kept_where_the_link_learner_reads_them(
    engine: sa.Engine, webbox: WebBoxThread, synthetic: SyntheticCorpus, mode: Mode, kept: bool
) -> None:
    """The words around a link are found and stored only when the crawl's frontier
    estimate is the link learner's (soft, hard, paths): a breadth-first crawl spares
    the work and the bytes."""
    crawl(engine, webbox.proxy, [synthetic.url(3)], mode=mode, max_pages=5)
    with engine.connect() as connection:
        links, contexts = connection.exec_driver_sql(
            "SELECT count(*), count(context) FROM link"
        ).one()
    assert links >= len(synthetic.out_links(3))
    assert contexts == (links if kept else 0)


def test_per_host_delay_is_never_broken(
    engine: sa.Engine, webbox: WebBoxThread, synthetic: SyntheticCorpus, tmp_path: Path
) -> None:
    crawl(engine, webbox.proxy, [synthetic.url(11)], max_pages=80, host_delay=0.25, threads=16)
    assert webbox.box.log is not None
    webbox.box.log.flush()
    gaps = host_gaps(tmp_path / "requests.log")
    assert gaps and min(gaps) >= 0.24, min(gaps)
    urls = requested_pages(tmp_path / "requests.log")
    assert len(urls) == len(set(urls))  # no URL fetched twice


def test_a_polite_crawl_keeps_in_hand_what_its_rate_needs(engine: sa.Engine) -> None:
    """Under politeness a host is asked once a delay, so the URLs due within DUE_S are
    hosts: the crawl keeps twice its last DUE_S's pages of them, not a fixed batch."""
    polite = Crawler(engine, CrawlConfig(mode=Mode.SOFT, host_delay=1.0, quiet=True))
    assert polite._in_hand(100.0, 128) == 128  # no rate known yet
    polite.stats.fetched = 2000
    assert polite._in_hand(102.0, 128) == 2 * 1000 * DUE_S  # 1,000 pages/s
    polite.stats.fetched = 2100
    assert polite._in_hand(104.0, 128) == 128  # 50 pages/s (the last two seconds)
    eager = Crawler(engine, CrawlConfig(mode=Mode.SOFT, host_delay=0.0, quiet=True))
    eager._in_hand(100.0, 128)
    eager.stats.fetched = 2000
    assert eager._in_hand(102.0, 128) == 128  # no delay: what the workers take, a batch


@pytest.mark.parametrize("host_delay", [0.0, 0.05])
def test_a_host_held_between_pages_counts_each_request_and_its_limit(
    engine: sa.Engine,
    webbox: WebBoxThread,
    synthetic: SyntheticCorpus,
    tmp_path: Path,
    host_delay: float,
) -> None:
    """A process keeps a host's lease between its requests (no release and acquire
    between; with a delay, on the shelf while it runs): the site's count of requests
    stays exact, --max-pages-per-site holds across them, and when the crawl ends every
    lease is given back."""
    crawl(
        engine,
        webbox.proxy,
        [synthetic.url(11)],
        max_pages=150,
        max_pages_per_site=6,
        host_delay=host_delay,
    )
    assert webbox.box.log is not None
    webbox.box.log.flush()
    requests = Counter(host for host, _ in requested_pages(tmp_path / "requests.log"))
    with engine.connect() as connection:
        taken = dict(
            connection.exec_driver_sql(
                "SELECT host, pages_taken FROM site WHERE pages_taken > 0"
            ).all()
        )
        leased = connection.exec_driver_sql(
            "SELECT count(*) FROM site WHERE lease_until IS NOT NULL"
        ).scalar_one()
    assert taken == dict(requests)
    assert max(taken.values()) == 6  # the limit was reached, and held
    assert leased == 0


def test_max_pages_stops_and_returns_unfetched_claims(
    engine: sa.Engine, webbox: WebBoxThread, synthetic: SyntheticCorpus
) -> None:
    stats = crawl(engine, webbox.proxy, [synthetic.url(20)], max_pages=25)
    assert stats.fetched == 25
    by_state = states(engine)
    assert by_state[DocState.FETCHED] == 25 and DocState.LEASED not in by_state
    with engine.connect() as connection:
        leases = connection.exec_driver_sql("SELECT count(*) FROM doc_lease").scalar()
    assert leases == 0  # stored pages' leases ended with them; the rest were given back


@pytest.mark.parametrize("validator", ["etag", "last_modified"])
def test_maintenance_revisits_fetched_pages_with_conditional_requests(
    engine: sa.Engine, webbox: WebBoxThread, synthetic: SyntheticCorpus, validator: str
) -> None:
    crawl(engine, webbox.proxy, [synthetic.url(40)], max_pages=30)
    with engine.connect() as connection:
        before = dict(
            connection.exec_driver_sql(
                "SELECT oid, fetch_seq FROM doc JOIN doc_fetch USING (oid) WHERE state = 2"
            ).all()
        )
        etags, dates = connection.exec_driver_sql(
            "SELECT count(etag), count(last_modified) FROM doc JOIN doc_fetch USING (oid) "
            "WHERE state = 2"
        ).one()
    assert len(before) == 30 and etags == 30 and dates == 30
    # nothing new is left to crawl, so every claim is a revisit of a fetched page
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE doc SET state = 5 WHERE state = 0")
        # a server that gave only one validator: the revisit sends that one
        other = "last_modified" if validator == "etag" else "etag"
        connection.exec_driver_sql(f"UPDATE doc_fetch SET {other} = NULL")
    stats = crawl(engine, webbox.proxy, [], max_pages=30, revisit_after_seconds=0.0)
    with engine.connect() as connection:
        after = connection.exec_driver_sql(
            f"SELECT oid, fetch_seq, http_status, title, {validator} AS kept FROM doc_fetch "
            "WHERE oid = ANY(%(oids)s)",
            {"oids": list(before)},
        ).all()
    assert stats.fetched >= 30
    revisited = [r for r in after if r.fetch_seq != before[r.oid]]
    assert len(revisited) == 30
    assert {r.http_status for r in revisited} == {304}
    assert all(r.title and r.kept for r in revisited)  # a 304 keeps what the page had


def test_private_addresses_are_refused_unless_allowed(
    engine: sa.Engine, webbox: WebBoxThread
) -> None:
    # No proxy: the crawler resolves hosts itself, and 127.0.0.1 is loopback.
    url = f"http://127.0.0.1:{webbox.port}/private"
    crawl(engine, "", [url], proxy_none=True)
    with engine.connect() as connection:
        row = connection.exec_driver_sql(
            "SELECT state, error FROM doc JOIN doc_fetch USING (oid)"
        ).one()
    assert (row.state, row.error) == (DocState.EXCLUDED, "private_address")
    # refused at the page too, with robots.txt already known (as if the host had
    # resolved to a public address when it was fetched): the check is made on connecting
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE doc SET state = 0, num_tries = 0")
        connection.exec_driver_sql("DELETE FROM doc_fetch")
        connection.exec_driver_sql(
            "UPDATE site SET robots_status = 404, robots_txt = '', "
            "robots_expires_at = now() + interval '1 hour'"
        )
    crawl(engine, "", [], proxy_none=True)
    with engine.connect() as connection:
        row = connection.exec_driver_sql(
            "SELECT state, error, num_tries FROM doc JOIN doc_fetch USING (oid)"
        ).one()
    assert (row.state, row.error, row.num_tries) == (DocState.EXCLUDED, "private_address", 1)
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE doc SET state = 0")
        connection.exec_driver_sql("UPDATE doc_fetch SET error = NULL")
    crawl(engine, "", [], proxy_none=True, allow_private_hosts=True, max_tries=1)
    with engine.connect() as connection:
        row = connection.exec_driver_sql(
            "SELECT state, error FROM doc JOIN doc_fetch USING (oid)"
        ).one()
    assert row.error != "private_address"  # it was asked (the webbox knows no such host)


def test_a_focused_polite_crawl_holds_only_a_sites_next_url(engine: sa.Engine) -> None:
    """At a 1 s delay a focused crawl holds one URL of a site, so the site's next page
    is chosen as late as its delay allows; an unfocused crawl a quarter lease's worth."""

    def cap(mode: Mode, delay: float) -> int:
        config = CrawlConfig(mode=mode, host_delay=delay, lease_seconds=600.0, quiet=True)
        return Crawler(engine, config)._site_cap()

    assert cap(Mode.SOFT, 1.0) == cap(Mode.HARD, 1.0) == 1
    assert cap(Mode.SOFT, 0.25) == 4  # a second of the site's work
    assert cap(Mode.BFS, 1.0) == 150  # 600 s / 4 at 1 s


def test_a_host_that_does_not_resolve_is_asked_once_and_its_urls_wait(
    engine: sa.Engine, tmp_path: Path
) -> None:
    """A host outside the web costs one request (its robots.txt), not one a URL: the
    crawler holds it for a back-off and gives back its URLs unasked, to wait behind every
    untried URL; one checked in after is not claimed. Links to files the classifier
    cannot read are not followed at all."""
    gone = [f"http://gone.example/{n}" for n in range(6)]
    links = "".join(f'<a href="{u}">gone {n}</a> ' for n, u in enumerate(gone))
    pages = {
        "http://a.example/": links + '<a href="/1">one</a> <a href="/2">two</a> '
        '<a href="/report.pdf">report</a> <a href="/logo.png">logo</a>',
        "http://a.example/1": '<a href="http://gone.example/later">later</a> <a href="/2">two</a>',
        "http://a.example/2": "<p>two</p>",
    }
    directory = tmp_path / "web"
    directory.mkdir()
    manifest = [
        {
            "url": url,
            "headers": {"Content-Type": "text/html"},
            "body": f"<html><body>{b}</body></html>",
        }
        for url, b in pages.items()
    ]
    (directory / "pages.jsonl").write_text("".join(json.dumps(p) + "\n" for p in manifest))
    (directory / "corpus.json").write_text(
        json.dumps({"format": 1, "kind": "static", "faults": False})
    )
    log = RequestLog(tmp_path / "requests.log")
    corpus = load_corpus(str(directory), tmp_path)
    with WebBoxThread(WebBox(corpus, faults=False, log=log)) as running:
        stats = crawl(engine, running.proxy, ["http://a.example/"], threads=2, max_tries=3)
    asked = [(host, path) for _, host, path, _, _ in iter_log(tmp_path / "requests.log")]
    assert [a for a in asked if a[0] == "gone.example"] == [("gone.example", "/robots.txt")]
    assert ("a.example", "/report.pdf") not in asked and ("a.example", "/logo.png") not in asked
    assert stats.fetched == 3
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT d.url, d.state, d.num_tries, f.error FROM doc AS d "
            "LEFT JOIN doc_fetch AS f USING (oid) WHERE d.url LIKE 'http://gone.example/%%'"
        ).all()
        urls = {r.url for r in connection.exec_driver_sql("SELECT d.url FROM doc AS d")}
    assert {r.url for r in rows} == {*gone, "http://gone.example/later"}
    assert all(r.state == DocState.FRONTIER for r in rows), rows
    assert {r.url for r in rows if r.num_tries == 1} == set(gone)
    assert [r.error for r in rows if r.error] == ["dns_error"]  # one URL was tried
    assert "http://a.example/report.pdf" not in urls


def test_a_claims_hosts_are_leased_together_and_none_held_elsewhere(engine: sa.Engine) -> None:
    """The hosts of a claim's URLs that the process holds nothing of are leased in one
    statement as the claim comes and wait on the shelf for their URLs; a host another
    crawler holds is not taken, and its URL waits for its own acquire as before."""
    seeds = [f"http://h{n}.example/{page}" for n in range(6) for page in range(2)]
    with engine.begin() as connection:
        add_seeds(connection, seeds)
        connection.exec_driver_sql(
            "UPDATE site SET lease_until = now() + interval '1 minute' WHERE host = 'h5.example'"
        )
    crawler = Crawler(engine, CrawlConfig(mode=Mode.BFS, threads=2, quiet=True))
    assert crawler._claim(len(seeds)) == len(seeds)
    with engine.connect() as connection:
        sids = dict(connection.exec_driver_sql("SELECT host, sid FROM site").all())
        leased = {
            host
            for (host,) in connection.exec_driver_sql(
                "SELECT host FROM site WHERE lease_until IS NOT NULL"
            )
        }
    shelved = {host for host, sid in sids.items() if crawler.leases.holds(sid)}
    assert shelved == {f"h{n}.example" for n in range(5)}
    assert leased == shelved | {"h5.example"}
    assert crawler.scheduler.queued_for(sids["h5.example"]) == 2  # waits, claimed
    crawler._release(crawler.leases.drain())
    with engine.connect() as connection:
        still = connection.exec_driver_sql(
            "SELECT host FROM site WHERE lease_until IS NOT NULL"
        ).all()
    assert [host for (host,) in still] == ["h5.example"]
