"""The crawler's side of the database: each thread's connection, the named statements it
runs (waiting out an outage), a claim and its leases in one transaction, and the
crawl's scope and shard layout as the database holds them."""

from __future__ import annotations

import contextlib
from functools import cache
from typing import Any

import psycopg2

from focuscrawl.crawler.scope import Scope, load_scope
from focuscrawl.crawler.state import CrawlerState
from focuscrawl.db.outages import close_quietly, retry_until_done
from focuscrawl.db.queries import Prepared, prepared, queries
from focuscrawl.db.shards import ShardMap

__all__ = ["PER_PAGE_STATEMENTS", "Statements"]


#: statements run for every page, prepared on each worker connection (planned once)
PER_PAGE_STATEMENTS = ("acquire_site",)


#: a claim's leases, and the commit, in one round trip (Crawler._claim_together)
_LEASE_AND_COMMIT = queries["lease_claims"].rstrip().rstrip(";") + ";\nCOMMIT"


@cache
def _per_page() -> dict[str, Prepared]:
    return {name: prepared(name) for name in PER_PAGE_STATEMENTS}


class Statements(CrawlerState):
    def _sql(self, name: str, params: dict[str, Any], fetch: bool = False) -> list[tuple[Any, ...]]:
        """Run a named statement on this thread's connection, waiting out a database
        outage. Claims and acquires give up, returning nothing, when the crawler is
        stopping; everything else runs once the database is back.
        A claim (``claim_*``) commits with the leases of what it claimed."""
        if name.startswith("claim_"):
            return self._claim_together(name, params)

        def run() -> list[tuple[Any, ...]]:
            per_page = _per_page().get(name)
            statement = queries[name] if per_page is None else per_page.execute
            rows: list[tuple[Any, ...]] = []
            with self._connection().cursor() as cursor:
                for asked in self._regrouped(params):
                    cursor.execute(statement, asked)
                    rows += cursor.fetchall() if fetch else []
            return rows

        gives_up = name in ("frontier_top", "acquire_site", "acquire_sites")
        stop = self.stop_event if gives_up else None
        rows = retry_until_done(
            run, name, stop=stop, on_lost=self._lost, on_layout=self.layout.read
        )
        return [] if rows is None else rows

    def _regrouped(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """``params`` once per shard their ``buckets`` lie in now: themselves, unless a
        shard was split since the buckets were grouped."""
        if "buckets" not in params:
            return [params]
        groups = self.shards.regroup(params["buckets"])
        return [params] if len(groups) == 1 else [{**params, "buckets": g} for g in groups]

    def _claim_together(self, name: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """A claim (a ``claim_*`` statement; on a cluster naming one shard's buckets) and
        the leases of the URLs it claimed (``lease_claims``) in one transaction: a
        crawler that dies between them leaves nothing claimed without a lease. BEGIN and
        COMMIT travel with the statements: two round trips in all. (One transaction for
        the claims of several shards would cost a two-phase commit across workers: 52-58
        ms a claim of 64 URLs on the local cluster against 37-43.) Gives up, returning
        nothing, when the crawler is stopping."""

        def run() -> list[tuple[Any, ...]]:
            # a claim locks rows of one shard: after a split, of the first the buckets
            # lie in now (the next claim asks the others)
            asked = self._regrouped(params)[0]
            with self._connection().cursor() as cursor:
                try:
                    cursor.execute("BEGIN;\n" + queries[name], asked)
                    rows: list[tuple[Any, ...]] = cursor.fetchall()
                    if rows:
                        oids = [row[0] for row in rows]
                        lease = {"oids": oids, "lease_seconds": params["lease_seconds"]}
                        cursor.execute(_LEASE_AND_COMMIT, lease)
                    else:
                        cursor.execute("COMMIT")
                except BaseException:
                    with contextlib.suppress(psycopg2.Error):
                        cursor.execute("ROLLBACK")
                    raise
            return rows

        rows = retry_until_done(
            run, name, stop=self.stop_event, on_lost=self._lost, on_layout=self.layout.read
        )
        return [] if rows is None else rows

    @property
    def shards(self) -> ShardMap:
        return self.layout.map

    def _connection(self) -> Any:
        """This thread's connection, opened (with the per-page statements prepared) on
        first use and after a loss."""
        if self._local.connection is None:
            self._local.connection = psycopg2.connect(self._dsn, application_name=self._name)
            self._local.connection.autocommit = True
            with self._local.connection.cursor() as cursor:
                cursor.execute(queries["crawler_session"])
                for statement in _per_page().values():
                    cursor.execute(statement.prepare)
        return self._local.connection

    def _lost(self) -> None:
        close_quietly(self._local.connection)
        self._local.connection = None

    def _read_scope(self) -> None:
        """The crawl's scope as the database holds it now (``crawl scope set``)."""

        def read() -> Scope:
            with self.engine.connect() as connection:
                return load_scope(connection)

        scope = retry_until_done(read, "scope", stop=self.stop_event)
        if scope is not None:
            self.scope = scope

    def _read_shards(self) -> None:
        """Which buckets share a shard: on a Citus cluster a claim locks rows of one."""
        retry_until_done(self.layout.read, "shards", stop=self.stop_event)

    def _release_claims(self, oids: list[int]) -> None:
        """URLs claimed and not to be fetched: back to the frontier, shard by shard."""
        for buckets, group in self.shards.split(oids):
            self._sql("release_claims", {"oids": group, "buckets": buckets})
