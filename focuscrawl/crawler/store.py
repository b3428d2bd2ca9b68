"""Writing fetch outcomes to PostgreSQL in bulk: COPY into staging, then set-based SQL.

One ``Store`` per crawler process runs a thread that drains outcomes every quarter
second (or every ``BATCH`` outcomes; a lockstep crawl's once a round), so a batch of
pages with thousands of links costs a handful of statements. When PostgreSQL is
unreachable it keeps the batch and retries; nothing already fetched is lost while the
database restarts.
"""

from __future__ import annotations

import io
import logging
import struct
import threading
import time
from collections import deque
from collections.abc import Container, Iterable
from dataclasses import dataclass, field
from typing import Any

import psycopg2
from sqlalchemy.engine import Engine

from focuscrawl.crawler.estimates import CheckInEstimates
from focuscrawl.db.database import engine_dsn, error_line
from focuscrawl.db.outages import close_quietly, retry_until_done
from focuscrawl.db.queries import queries
from focuscrawl.db.schema import DocState
from focuscrawl.db.shards import Layout
from focuscrawl.monitor.cpu import StageCpu
from focuscrawl.topics.linkmodel import LinkParts
from focuscrawl.web.urls import oid_bucket, split_url, url_ids

__all__ = [
    "FLUSH_SECONDS",
    "Claim",
    "Outcome",
    "Store",
    "copy_page_texts",
    "copy_rows",
    "copy_text",
]

log = logging.getLogger("focuscrawl.crawler")

BATCH = 500
FLUSH_SECONDS = 0.25
#: pages this store wrote as fetched, failed or excluded, remembered (up to this many) so
#: that links to them get no check-in estimate: store_link_docs leaves such URLs out
SETTLED_KEPT = 1_000_000
#: URLs this store has checked in (their doc rows exist), remembered up to this many so
#: that an unestimated check-in leaves them out: in a breadth-first crawl two links in
#: three lead to a URL already known, and each cost the server a join and a conflict.
#: (focuscrawl never deletes a doc row; one deleted by hand during a crawl is not checked
#: in again by a store that knew it.)
KNOWN_KEPT = 1_000_000
#: pages stored before the store first has the planner's statistics of the crawl's tables
#: taken again (sql/store.sql: analyze_grown_tables), and again each time they double:
#: until autovacuum's analyze (every minute on a stock server), a fresh table is planned
#: as if empty. On PostgreSQL 15 with its stock autovacuum, bench/crawl.py --classify
#: (20,000 pages) spent 58.1 s of the server's CPU without it, 13.9 with it
ANALYZE_FROM = 1_000
#: the states store_link_docs leaves a known URL in (sql/store.sql)
_SETTLED = frozenset((DocState.FETCHED, DocState.FAILED, DocState.EXCLUDED))


@dataclass(frozen=True)
class Claim:
    """A frontier URL this process holds a lease on."""

    oid: int
    url: str
    sid: int
    num_tries: int
    depth: int
    #: the ETag and Last-Modified of the last fetch, when this is a revisit
    etag: str | None = None
    last_modified: str | None = None
    #: a maintenance revisit of a fetched page (trap guards do not apply)
    revisit: bool = False
    #: the order of claims in this process: a batch is stored in it
    seq: int = 0


@dataclass
class Outcome:
    claim: Claim
    state: DocState
    http_status: int | None = None
    error: str | None = None
    content_type: str | None = None
    content_hash: int | None = None
    title: str | None = None
    text: str | None = None
    #: (normalised URL, anchor or None, context or None) of out-links and redirect
    #: targets (the context: the words around the link, focuscrawl.topics.linkmodel)
    links: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    link_state: DocState = DocState.FRONTIER
    #: its links' share of its text (``ParsedPage.link_share``); None: not HTML
    link_share: float | None = None
    etag: str | None = None
    last_modified: str | None = None


#: COPY's text format: backslash, tab, newline and carriage return escaped, NUL dropped
#: (PostgreSQL text cannot hold one). The backslash goes first. A ``str.replace`` for
#: each character found costs about 15 µs for a 20 KB page text, ``str.translate`` 1.2 ms
_REPLACEMENTS = (("\\", "\\\\"), ("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r"), ("\x00", ""))


def _escape(text: str) -> str:
    """``text`` for PostgreSQL's COPY text format. Most texts have nothing to escape
    (parsing has already collapsed their whitespace): five substring scans find that."""
    for special, escaped in _REPLACEMENTS:
        if special in text:
            text = text.replace(special, escaped)
    return text


def _special(text: str) -> bool:
    """``text`` holds a character COPY's text format escapes."""
    return any(special in text for special, _ in _REPLACEMENTS)


def _field(value: Any) -> str:
    """One value in PostgreSQL's COPY text format."""
    if value is None:
        return "\\N"
    if isinstance(value, str):
        return _escape(value)
    return str(int(value)) if isinstance(value, bool) else str(value)


def copy_rows(cursor: Any, table: str, rows: Iterable[tuple[Any, ...]]) -> None:
    """COPY rows into a (staging) table in PostgreSQL's text format."""
    buffer = io.StringIO()
    for row in rows:
        buffer.write("\t".join(map(_field, row)))
        buffer.write("\n")
    copy_text(cursor, f"COPY {table} FROM STDIN", buffer)


#: COPY's binary format: its signature, flags and header extension; a row of doc_text
#: (three fields: an int8, an int2 and the text's bytes); the end
_BINARY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)
_TEXT_ROW = struct.Struct("!hiqihi")
_BINARY_END = struct.pack("!h", -1)


def copy_page_texts(cursor: Any, texts: Iterable[tuple[int, int, str]]) -> None:
    """COPY (oid, bucket, text) rows into doc_text in COPY's binary format: a text goes
    as its bytes, with nothing to escape on this side or to unescape on the server's
    (4,000 Wikispeedia texts, 75 MB, COPYed alone: 0.1 s of the client's CPU against
    0.4-0.5 s in the text format, and stored in 0.34-0.38 s against 0.78-0.84). NUL,
    which PostgreSQL text cannot hold, is dropped, as the text format's escape does."""
    # the text of a binary COPY is read in the client's encoding, as in the text format
    codec = psycopg2.extensions.encodings[cursor.connection.encoding]
    parts = [_BINARY_HEADER]
    for oid, bucket, text in texts:
        if "\x00" in text:
            text = text.replace("\x00", "")
        data = text.encode(codec, "replace")
        parts.append(_TEXT_ROW.pack(3, 8, oid, 2, bucket, len(data)))
        parts.append(data)
    parts.append(_BINARY_END)
    body = b"".join(parts)
    cursor.copy_expert(
        "COPY doc_text (oid, bucket, text) FROM STDIN (FORMAT binary)",
        io.BytesIO(body),
        size=max(len(body), 1),
    )


def copy_text(cursor: Any, statement: str, buffer: io.StringIO) -> None:
    """Run ``statement`` (a COPY FROM STDIN) on all of ``buffer``, read in one piece.
    psycopg2 sends a COPY in pieces of ``size`` characters (8,192 unless told) and takes
    the GIL back after each; beside threads that compute, each take waits its turn. A
    COPY of 4,000 texts of 20 KB beside four busy threads took 74 s in pieces of 8 KB,
    4.5 s in pieces of 1 MB and 2.5 s in one; 0.4 s with the threads idle."""
    size = buffer.seek(0, io.SEEK_END)
    buffer.seek(0)
    cursor.copy_expert(statement, buffer, size=max(size, 1))


def _link_lines(
    batch: Iterable[Outcome],
    estimates: CheckInEstimates,
    settled: Container[int] = (),
    known: Container[int] = (),
) -> tuple[io.StringIO, set[int]]:
    """The out-links of a batch as ``stage_link`` COPY text (the hot path of ingest):
    each normalised URL as its ids, whether it is https, its host and its path, with
    its anchor, context, check-in estimate and the sum of its own features' weights
    (``link.own``; both NULL: unestimated, and for a URL in ``settled``, whose row no
    estimate changes), and whether its row is in ``known`` (it exists: an unestimated
    check-in leaves it out); and the URLs' oids."""
    rows: list[tuple[int, str, str | None, str | None, bool, str, str, int, int]] = []
    for outcome in batch:
        src = outcome.claim.oid
        for url, anchor, context in outcome.links:
            https, host, path = split_url(url)
            rows.append((src, url, anchor, context, https, host, path, *url_ids(url)))
    values: dict[int, tuple[float, float]] = {}
    if estimates.active:
        wanted = [n for n, row in enumerate(rows) if row[7] not in settled]
        found = estimates.of(
            [LinkParts(rows[n][2], rows[n][3], rows[n][5], rows[n][6]) for n in wanted]
        )
        if found is not None:
            values = dict(zip(wanted, zip(*found, strict=True), strict=True))
    # the batch's text fields are checked at once: most batches have nothing to escape,
    # and one call per field cost more than the rest of the line
    plain = not _special("".join(f"{r[2] or ''}{r[3] or ''}{r[5]}{r[6]}" for r in rows))
    buffer = io.StringIO()
    write = buffer.write
    targets = set()
    for n, (src, _, anchor, context, https, host, path, oid, bytehash) in enumerate(rows):
        targets.add(oid)
        text = "\\N" if anchor is None else anchor if plain else _escape(anchor)
        around = "\\N" if context is None else context if plain else _escape(context)
        if not plain:
            host, path = _escape(host), _escape(path)
        value = values.get(n)
        estimate = "\\N\t\\N" if value is None else f"{value[0]!r}\t{value[1]!r}"
        write(
            f"{src}\t{oid}\t{bytehash}\t{'t' if https else 'f'}\t{host}\t"
            f"{path}\t{text}\t{around}\t{estimate}\t{'t' if oid in known else 'f'}\n"
        )
    buffer.seek(0)
    return buffer, targets


def _failed(outcomes: Iterable[Outcome]) -> list[tuple[str, float]]:
    """(URL, label 0) of each URL whose first request brought no page (an error, not an
    exclusion): a lesson for the link learner that a link to it was worth nothing
    (focuscrawl.topics.linkmodel.failure_parts)."""
    return [
        (o.claim.url, 0.0)
        for o in outcomes
        if o.error is not None
        and o.state in (DocState.FRONTIER, DocState.FAILED)
        and o.claim.num_tries == 0
        and not o.claim.revisit
    ]


class Store:
    def __init__(
        self,
        engine: Engine,
        flush_seconds: float | None = FLUSH_SECONDS,
        cpu: StageCpu | None = None,
    ) -> None:
        """``flush_seconds``: how often the store writes what is queued; None: only when
        told (``flush``), a batch is full, or on ``close`` (a lockstep crawl, whose rounds
        are then written whole: a round slower than the interval numbers its new URLs,
        and its pages' fetches, in the order a quick one does). ``cpu``: where the CPU
        of each write is counted, as the stage ``store``."""
        self.engine = engine
        self._cpu = cpu
        self.flush_seconds = flush_seconds
        # Workers append outcomes and wake the store thread only when a batch is full:
        # a condition variable per page (queue.Queue) cost the workers a wake-up each.
        self._pending: deque[Outcome] = deque()
        self._full = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="store", daemon=True)
        self._connection: Any = None
        self.stored = 0
        self._analyze_at = ANALYZE_FROM
        self._taken = 0
        self._taken_lock = threading.Lock()
        self.estimates = CheckInEstimates()
        self._settled: set[int] = set()
        self._known: set[int] = set()
        #: which buckets share a shard: the crawler shares its own, read from the database
        #: it crawls into (one group on one server); pages are locked shard by shard
        self.layout = Layout(engine)
        #: why the store thread stopped, when PostgreSQL refused a write for good (a
        #: server too old for the schema, a table dropped under the crawl); the crawler
        #: stops on it rather than fetch pages nobody stores
        self.failure: str | None = None

    def start(self) -> None:
        self._thread.start()

    def put(self, outcome: Outcome) -> None:
        with self._taken_lock:
            self._taken += 1
        self._pending.append(outcome)
        if len(self._pending) >= BATCH:
            self._full.set()

    @property
    def unwritten(self) -> int:
        """Outcomes handed to the store and not yet committed."""
        return self._taken - self.stored

    @property
    def idle(self) -> bool:
        """Nothing is waiting to be written."""
        return not self._pending

    def flush(self) -> None:
        """Write what is queued now rather than at the next quarter second."""
        self._full.set()

    def close(self) -> None:
        """Store everything queued, then stop."""
        self._stop.set()
        self._full.set()
        if self._thread.is_alive():
            self._thread.join()
        if self._connection is not None:
            self._connection.close()

    def _run(self) -> None:
        try:
            while True:
                self._full.wait(self.flush_seconds)
                self._full.clear()
                stopping = self._stop.is_set()
                while self._pending:
                    size = min(BATCH, len(self._pending))
                    batch = [self._pending.popleft() for _ in range(size)]
                    self._write_until_done(batch)
                if stopping:
                    return
        except Exception as exc:  # not an outage or a deadlock: the crawl cannot store
            reason = error_line(exc)[:200]
            log.error("event=store_failed error=%s", reason)
            self.failure = f"{type(exc).__name__}: {reason}"

    def _write_until_done(self, batch: list[Outcome]) -> None:
        """Store a batch, waiting out a database outage: nothing fetched is lost."""

        def lost() -> None:
            close_quietly(self._connection)
            self._connection = None

        try:
            retry_until_done(
                lambda: self.write(batch), "store", on_lost=lost, on_layout=self.layout.read
            )
        except Exception:
            self._pending.extendleft(reversed(batch))  # not stored: still the store's
            raise
        self.stored += len(batch)
        if self.stored >= self._analyze_at:
            self._analyze_at = 2 * self.stored
            self._analyze()

    def _analyze(self) -> None:
        """Have the planner's statistics taken again of the tables that outgrew them. A
        help, not a write: when it fails (an outage, a lock held long), the crawl goes
        on without it and autovacuum takes them in its time."""
        try:
            with self._cursor() as cursor:
                cursor.execute(queries["analyze_grown_tables"])
            self._connection.commit()
        except psycopg2.Error as exc:
            log.warning("event=analyze_skipped error=%s", error_line(exc)[:200])
            close_quietly(self._connection)
            self._connection = None

    def unstored(self) -> list[int]:
        """The claims of the outcomes a failed store never wrote (read once it stopped)."""
        return [outcome.claim.oid for outcome in self._pending]

    def _cursor(self) -> Any:
        if self._connection is None:
            self._connection = psycopg2.connect(engine_dsn(self.engine))
            with self._connection.cursor() as cursor:
                cursor.execute(queries["crawler_session"])
                cursor.execute(queries["create_staging"])
            self._connection.commit()
        return self._connection.cursor()

    def write(self, batch: list[Outcome]) -> None:
        """Store one batch in one transaction."""
        start = time.thread_time()
        try:
            self._write(batch)
        finally:
            if self._cpu is not None:
                self._cpu.add("store", start)

    def _write(self, batch: list[Outcome]) -> None:
        # a page fetched twice in one batch (its lease ran out meanwhile) is stored once;
        # pages go in the order they were claimed, so new URLs are numbered in that order
        unique = {outcome.claim.oid: outcome for outcome in batch}
        outcomes = sorted(unique.values(), key=lambda outcome: outcome.claim.seq)
        results, texts = [], []
        for outcome in outcomes:
            claim = outcome.claim
            results.append(
                (claim.oid, int(outcome.state), outcome.http_status, outcome.error,
                 outcome.content_type, outcome.content_hash, outcome.title, outcome.etag,
                 outcome.last_modified, claim.sid, claim.depth, int(outcome.link_state),
                 outcome.link_share)
            )  # fmt: skip
            if outcome.text is not None:
                texts.append((claim.oid, oid_bucket(claim.oid), outcome.text))
        with_links = any(outcome.links for outcome in outcomes)
        targets: set[int] = set()
        shards = self.layout.map
        with self._cursor() as cursor:
            copy_rows(cursor, "stage_result", results)
            failed = _failed(outcomes)
            if with_links or failed:
                self.estimates.refresh(cursor)
            if with_links:
                lines, targets = _link_lines(outcomes, self.estimates, self._settled, self._known)
                copy_text(cursor, "COPY stage_link FROM STDIN", lines)
            # the order sql/store.sql gives, and why
            for buckets, oids in shards.split(outcome.claim.oid for outcome in outcomes):
                cursor.execute(queries["lock_pages"], {"oids": oids, "buckets": buckets})
            model_id = self.estimates.model_id
            for buckets, _ in shards.split(targets):  # shard by shard on a cluster
                cursor.execute(queries["store_link_sites"], {"buckets": buckets})
                if model_id:
                    params = {"link_model": model_id, "buckets": buckets}
                    cursor.execute(queries["store_link_docs"], params)
                else:
                    cursor.execute(queries["store_link_docs_unestimated"], {"buckets": buckets})
            cursor.execute(queries["forget_links"])
            if with_links:
                cursor.execute(queries["store_links"])
            if texts:
                for buckets, oids in shards.split(oid for oid, _, _ in texts):
                    cursor.execute(queries["forget_texts"], {"oids": oids, "buckets": buckets})
                copy_page_texts(cursor, texts)
            cursor.execute(queries["store_results"])
            # the link model whose sums the pages' links keep (link.own), if any
            links_model = model_id if with_links and model_id else None
            cursor.execute(queries["store_fetches"], {"links_model": links_model})
            if failed and self.estimates.learning:
                # the link learner's lessons of failed requests (sql/links.sql:
                # crawl_failed_urls reads the same for a version fitted afresh)
                copy_rows(cursor, "link_example (url, label)", failed)
            if any(outcome.state == DocState.FETCHED for outcome in outcomes):
                cursor.execute(queries["notify_pages_stored"])  # the classifier's work
        self._connection.commit()
        if len(self._known) < KNOWN_KEPT:  # every target has its row now
            self._known.update(targets)
        if len(self._settled) < SETTLED_KEPT:
            self._settled.update(o.claim.oid for o in outcomes if o.state in _SETTLED)
