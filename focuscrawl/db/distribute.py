"""``focuscrawl db distribute``: the crawl's tables laid out on a Citus cluster.

On the coordinator named by ``FOCUSCRAWL_DATABASE_URL``, with the schema at the
migrations' head (the same schema as on one server):

- the per-page tables (:data:`DISTRIBUTED`) are distributed by ``bucket`` and colocated
  with ``site``, so a site, its pages and their out-links live in one shard;
- the taxonomy, examples, models, settings, runs, labels and the link learner's queue
  (:data:`REFERENCE`) become reference tables, copied to every node;
- the functions statements call (:data:`FUNCTIONS`) are created on every worker;
- the statement-level triggers of migrations 0009 and 0012 are dropped: Citus does not
  run them on distributed tables. They checked that a ``doc`` row's oid is its URL's hash
  and its site exists, that a child row names a ``doc``, and that a URL does not change,
  and they deleted a document's children with it. The crawl's own statements keep
  those rules; on a cluster nothing else enforces them;
- the database's sessions let multi-shard writes run beside each other
  (``citus.enable_deadlock_prevention`` off): the crawl orders its row locks itself
  (sql/distribute.sql, ``allow_parallel_writers``). Sessions opened before this run keep
  the old setting: start crawlers and classifiers after it.

It is idempotent: run again, it does what is left. See docs/scale-out.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.engine import Connection, Engine

from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.errors import DatabaseError

__all__ = [
    "DISTRIBUTED",
    "FUNCTIONS",
    "REFERENCE",
    "Distributed",
    "WorkerHealth",
    "distribute",
    "worker_health",
]

#: distributed by bucket, colocated with the first
DISTRIBUTED = (
    "site", "doc", "doc_fetch", "doc_text", "doc_class", "doc_lease", "link", "hits_score",
)  # fmt: skip
#: reference tables, in an order their foreign keys allow
REFERENCE = (
    "taxonomy", "example", "example_link", "model", "crawl_setting", "distill_run",
    "page_label", "link_example",
)  # fmt: skip
#: functions the crawl's statements call, which a routed statement calls on a worker
FUNCTIONS = (
    "host_bucket(text)", "oid_bucket(bigint)", "url_host(text)", "url_oid(text)",
    "url_bytehash(text)", "doc_url(boolean,text,text)",
)  # fmt: skip
#: url(doc), the computed field, depends on doc: distributed after it
DOC_FUNCTIONS = ("url(doc)",)


@dataclass(frozen=True)
class WorkerHealth:
    """A worker of the cluster as the coordinator sees it now."""

    node: str  # host:port, as the coordinator names it
    active: bool
    reachable: bool

    @property
    def up(self) -> bool:
        return self.active and self.reachable


def worker_health(connection: Connection) -> list[WorkerHealth]:
    """Each worker of a Citus coordinator and whether it reaches it now (sql/distribute.sql:
    citus_nodes); [] on a server without Citus. Runs with a worker down."""
    if not execute(connection, queries["citus_installed"]).scalar_one():
        return []
    return [
        WorkerHealth(f"{row.nodename}:{row.nodeport}", bool(row.isactive), bool(row.reachable))
        for row in execute(connection, queries["citus_nodes"])
    ]


@dataclass
class Distributed:
    """What a run of :func:`distribute` did."""

    shards: int = 0
    triggers_dropped: list[str] = field(default_factory=list)
    tables_distributed: list[str] = field(default_factory=list)
    reference_tables: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)


def distribute(engine: Engine, shards: int) -> Distributed:
    """Lay the crawl out on the Citus coordinator ``engine`` is connected to."""
    if shards < 1:
        raise DatabaseError(f"--shards must be at least 1 (got {shards})")
    done = Distributed()
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        if not execute(connection, queries["citus_installed"]).scalar():
            raise DatabaseError(
                "this database has no Citus extension: db distribute needs a Citus "
                "coordinator (CREATE EXTENSION citus, and workers added with citus_add_node)"
            )
        tables = {r.name: r for r in execute(connection, queries["citus_tables"])}
        for trigger in execute(
            connection, queries["statement_triggers"], {"tables": list(DISTRIBUTED)}
        ).all():
            connection.exec_driver_sql(f'DROP TRIGGER "{trigger.name}" ON "{trigger.table_name}"')
            done.triggers_dropped.append(f"{trigger.table_name}.{trigger.name}")
        for signature in FUNCTIONS:
            _distribute_function(connection, signature, done)
        for table in REFERENCE:
            if table not in tables:
                execute(connection, queries["create_reference_table"], {"table": table})
                done.reference_tables.append(table)
        for table in DISTRIBUTED:
            known = tables.get(table)
            if known is not None and known.method == "h":
                continue
            if table == "site":
                execute(connection, queries["create_first_distributed_table"], {"shards": shards})
            else:
                execute(connection, queries["create_colocated_table"], {"table": table})
            done.tables_distributed.append(table)
        for signature in DOC_FUNCTIONS:
            _distribute_function(connection, signature, done)
        execute(connection, queries["allow_parallel_writers"])
        done.shards = int(execute(connection, queries["shard_count"]).scalar() or 0)
    return done


def _distribute_function(connection: Connection, signature: str, done: Distributed) -> None:
    params = {"signature": signature}
    if not execute(connection, queries["distributed_function"], params).scalar():
        execute(connection, queries["distribute_function"], params)
        done.functions.append(signature)
