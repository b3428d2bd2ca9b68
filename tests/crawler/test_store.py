"""The store writes fetch outcomes in bulk: new URLs, links stored once, revisits."""

from __future__ import annotations

import io
import math
import time

import pytest
import sqlalchemy as sa

from focuscrawl.crawler import store as store_module
from focuscrawl.crawler.store import FLUSH_SECONDS, Claim, Outcome, Store, copy_text
from focuscrawl.db.schema import DocState
from focuscrawl.db.seeds import add_seeds
from focuscrawl.web.urls import oid_of

PAGE = "http://a.example/page"
B, C, D = "http://b.example/b", "http://c.example/c", "http://a.example/d"
#: doc keeps a URL's scheme and path, site its host with the port
E = "https://e.example:8443/e/f?q=1&r=%20"


def _claim(engine: sa.Engine) -> Claim:
    with engine.begin() as connection:
        add_seeds(connection, [PAGE])
        sid, depth = connection.exec_driver_sql(
            "SELECT sid, depth FROM doc WHERE doc.url = %(url)s", {"url": PAGE}
        ).one()
    return Claim(oid_of(PAGE), PAGE, sid, 0, depth)


def _fetched(claim: Claim, links: list[tuple[str, str | None]], status: int = 200) -> Outcome:
    out = [(url, anchor, None if anchor is None else f"before | {anchor}") for url, anchor in links]
    return Outcome(claim, DocState.FETCHED, status, content_type="text/html", links=out)


def _links(engine: sa.Engine) -> list[tuple[str, str | None, bool]]:
    """(target URL, anchor, sid_src and sid_dst right) of every stored link, sorted."""
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(
            """
            SELECT d.url, l.anchor,
                   l.sid_src = p.sid AND l.sid_dst = d.sid
                   AND l.context IS NOT DISTINCT FROM 'before | ' || l.anchor
            FROM link AS l JOIN doc AS p ON p.oid = l.oid_src JOIN doc AS d ON d.oid = l.oid_dst
            ORDER BY d.url
            """
        ).all()
    return [tuple(row) for row in rows]  # type: ignore[misc]


def _write(engine: sa.Engine, *outcomes: Outcome) -> None:
    store = Store(engine)
    try:
        store.write(list(outcomes))
    finally:
        store.close()


def test_out_links_are_checked_in_one_level_deeper_and_unestimated(engine: sa.Engine) -> None:
    claim = _claim(engine)
    anchor = "tab\there\nnew line \\ back\\slash"
    _write(engine, _fetched(claim, [(B, anchor), (C, None), (E, "e")]))
    assert _links(engine) == [(B, anchor, True), (C, None, True), (E, "e", True)]
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT d.url, d.depth, d.state, d.relevance FROM doc AS d "
            "WHERE d.url <> %(url)s ORDER BY 1",
            {"url": PAGE},
        ).all()
        parts = connection.exec_driver_sql(
            "SELECT d.https, s.host, d.path FROM doc AS d JOIN site AS s USING (sid) "
            "WHERE d.oid = %(oid)s",
            {"oid": oid_of(E)},
        ).one()
    assert [(url, depth, state) for url, depth, state, _ in rows] == [
        (B, claim.depth + 1, DocState.FRONTIER),
        (C, claim.depth + 1, DocState.FRONTIER),
        (E, claim.depth + 1, DocState.FRONTIER),
    ]
    assert tuple(parts) == (True, "e.example:8443", "/e/f?q=1&r=%20")
    assert all(relevance == -math.inf for *_, relevance in rows)


def test_a_page_fetched_again_keeps_only_its_new_links(engine: sa.Engine) -> None:
    claim = _claim(engine)
    _write(engine, _fetched(claim, [(B, "b"), (C, "c")]))
    _write(engine, _fetched(claim, [(C, "c again"), (D, "d")]))
    assert _links(engine) == [(D, "d", True), (C, "c again", True)]
    # answered 304 Not Modified: the page and its links stay as they were
    _write(engine, _fetched(claim, [], status=304))
    assert _links(engine) == [(D, "d", True), (C, "c again", True)]
    with engine.connect() as connection:
        known = connection.exec_driver_sql("SELECT count(*) FROM doc").scalar()
    assert known == 4  # B stays known although no page links to it now


def test_links_to_urls_the_store_checked_in_before_are_stored_and_known_once(
    engine: sa.Engine,
) -> None:
    """Links to a URL the store checked in before (staged as known) are stored with
    their sites, the URL's row stays as it was (the depth of its first page), and the
    URLs new in the same batch come in."""
    claim = _claim(engine)
    store = Store(engine)
    try:
        store.write([_fetched(claim, [(B, "b")])])
        with engine.begin() as connection:  # a deeper page links to B and C
            add_seeds(connection, [D])
            connection.exec_driver_sql(
                "UPDATE doc SET depth = 5 WHERE doc.url = %(url)s", {"url": D}
            )
            sid = connection.exec_driver_sql(
                "SELECT sid FROM doc WHERE doc.url = %(url)s", {"url": D}
            ).scalar()
        store.write([_fetched(Claim(oid_of(D), D, sid, 0, 5), [(B, "b from d"), (C, "c")])])
    finally:
        store.close()
    assert _links(engine) == [(B, "b", True), (B, "b from d", True), (C, "c", True)]
    with engine.connect() as connection:
        depths = dict(
            connection.exec_driver_sql(
                "SELECT d.url, d.depth FROM doc AS d WHERE d.url IN (%(b)s, %(c)s)",
                {"b": B, "c": C},
            ).all()
        )
    assert depths == {B: claim.depth + 1, C: 6}


def test_a_page_twice_in_one_batch_is_stored_once(engine: sa.Engine) -> None:
    claim = _claim(engine)
    _write(engine, _fetched(claim, [(B, "first")]), _fetched(claim, [(B, "second"), (C, "c")]))
    assert _links(engine) == [(B, "second", True), (C, "c", True)]
    with engine.connect() as connection:
        fetches = connection.exec_driver_sql(
            "SELECT num_tries FROM doc WHERE doc.url = %(url)s", {"url": PAGE}
        ).scalar()
    assert fetches == 1


def test_page_text_is_stored_as_it_is_not_compressed(engine: sa.Engine) -> None:
    """pglz cost the server a quarter of its work in a focused crawl (migration 0015):
    a long text goes out of line uncompressed, whole."""
    claim = _claim(engine)
    text = " ".join(f"word{n % 97} term" for n in range(4000))  # 40 KB, compresses well
    outcome = _fetched(claim, [])
    outcome.text = text
    _write(engine, outcome)
    with engine.connect() as connection:
        stored, method, size = connection.exec_driver_sql(
            "SELECT text, pg_column_compression(text), pg_column_size(text) FROM doc_text"
        ).one()
    assert stored == text
    assert method is None
    assert size >= len(text)


def test_page_text_is_stored_exactly_but_for_nul(engine: sa.Engine) -> None:
    """Texts go in COPY's binary format: what the text format escapes (backslash, tab,
    newline, carriage return) arrives as it was, and so do letters of any script; NUL,
    which PostgreSQL text cannot hold, is dropped."""
    claim = _claim(engine)
    text = "back\\slash \\N\ttab\nline\r\nend Ünïcödé 漢字 🙂 nul\x00here"
    outcome = _fetched(claim, [])
    outcome.text = text
    _write(engine, outcome)
    with engine.connect() as connection:
        stored = connection.exec_driver_sql("SELECT text FROM doc_text").scalar_one()
    assert stored == text.replace("\x00", "")


def _stored_after(store: Store, seconds: float, pages: int = 1) -> int:
    """What the store has stored once it has stored ``pages``, or ``seconds`` passed."""
    deadline = time.monotonic() + seconds
    while store.stored < pages and time.monotonic() < deadline:
        time.sleep(0.02)
    return store.stored


def test_a_store_without_an_interval_writes_only_when_told(engine: sa.Engine) -> None:
    """A lockstep crawl's store writes a round whole: a round slower than the interval
    is not split in two batches (which would number its new URLs in another order)."""
    claim = _claim(engine)
    told = Store(engine, flush_seconds=None)
    told.start()
    try:
        told.put(_fetched(claim, [(B, "b")]))
        assert _stored_after(told, 4 * FLUSH_SECONDS) == 0
        assert _links(engine) == []
        told.flush()
        assert _stored_after(told, 10.0) == 1
    finally:
        told.close()
    assert [url for url, *_ in _links(engine)] == [B]
    timed = Store(engine)  # the default: every FLUSH_SECONDS, told or not
    timed.start()
    try:
        timed.put(_fetched(claim, [(C, "c")]))
        assert _stored_after(timed, 10.0) == 1
    finally:
        timed.close()
    assert [url for url, *_ in _links(engine)] == [C]  # the page's links, fetched again


def _planned_rows(engine: sa.Engine) -> dict[str, float]:
    """The rows the planner counts in each of the crawl's growing tables (-1: unknown,
    never analysed)."""
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT relname, reltuples FROM pg_class "
            "WHERE relname IN ('doc', 'doc_fetch', 'doc_text', 'link', 'site') "
            "AND relkind IN ('r', 'p')"
        ).all()
    return {name: float(count) for name, count in rows}


def test_a_store_has_the_planner_count_the_crawls_tables_as_its_pages_double(
    engine: sa.Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Until autovacuum analyses them (every minute on a stock server) the tables of a
    new crawl are planned as if empty, and the claims read whole tables; the store has
    their statistics taken when its pages reach ANALYZE_FROM, and not before."""
    monkeypatch.setattr(store_module, "ANALYZE_FROM", 2)
    claim = _claim(engine)
    assert set(_planned_rows(engine).values()) == {-1.0}  # a fresh database
    store = Store(engine, flush_seconds=None)
    store.start()
    try:
        page = _fetched(claim, [(B, "b"), (C, "c")])
        page.text = "words"
        store.put(page)
        store.flush()
        assert _stored_after(store, 10.0) == 1
        assert set(_planned_rows(engine).values()) == {-1.0}
        store.put(_fetched(claim, [(B, "b"), (D, "d")]))
        store.flush()
        assert _stored_after(store, 10.0, pages=2) == 2
    finally:
        store.close()
    assert store.failure is None
    planned = _planned_rows(engine)
    assert planned["doc"] >= 3 and planned["link"] >= 2 and planned["site"] >= 2, planned
    assert planned["doc_fetch"] >= 1 and planned["doc_text"] >= 1, planned


def _lessons(engine: sa.Engine) -> list[tuple[object, ...]]:
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT url, anchor, context, src_cid, src_relevance, label FROM link_example"
        ).all()
    return [tuple(row) for row in rows]


def test_a_request_that_failed_teaches_the_link_learner_its_url_once(engine: sa.Engine) -> None:
    """A first try that brought no page queues a lesson of its URL alone (no source,
    label 0); a second try, an exclusion or a crawl whose estimate is not the link
    learner's queues none."""
    claim = _claim(engine)
    _write(engine, Outcome(claim, DocState.FRONTIER, error="dns_error"))
    assert _lessons(engine) == [(PAGE, None, None, None, None, 0.0)]
    again = Claim(claim.oid, PAGE, claim.sid, 1, claim.depth)
    _write(engine, Outcome(again, DocState.FAILED, 404, "http_404"))
    _write(engine, Outcome(claim, DocState.EXCLUDED, error="robots"))
    assert len(_lessons(engine)) == 1
    with engine.begin() as connection:
        connection.exec_driver_sql("DELETE FROM link_example")
        connection.exec_driver_sql(
            "INSERT INTO crawl_setting (name, value) VALUES ('estimate', 'soft-1999')"
        )
    _write(engine, Outcome(claim, DocState.FRONTIER, error="timeout"))
    assert _lessons(engine) == []


class _CountedReads(io.StringIO):
    """A buffer that records how much each read took."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.reads: list[int] = []

    def read(self, size: int | None = -1) -> str:
        out = super().read(size)
        self.reads.append(len(out))
        return out


def test_a_copy_is_read_in_one_piece(engine: sa.Engine) -> None:
    """psycopg2 takes the GIL back after each piece of a COPY it sends (8,192 characters
    unless told), and beside the crawler's parsing threads each take waits: the store's
    COPYs are read whole."""
    text = "".join(f"{n}\tword {n}\n" for n in range(5_000))
    buffer = _CountedReads(text)
    connection = engine.raw_connection()
    try:
        with connection.cursor() as cursor:
            cursor.execute("CREATE TEMP TABLE copied (n integer, s text)")
            copy_text(cursor, "COPY copied FROM STDIN", buffer)
            cursor.execute("SELECT count(*), max(s) FROM copied")
            assert cursor.fetchone() == (5_000, "word 999")
    finally:
        connection.close()
    assert len(text) > 8_192 and buffer.reads[0] == len(text) and sum(buffer.reads) == len(text)
