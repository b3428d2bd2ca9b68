"""Which buckets share a shard: the unit a statement that locks rows may name.

Every per-page row has a ``bucket``, the top byte of its ``oid`` (migration 0016). On a
Citus cluster (``focuscrawl db distribute``) the tables are split into shards by bucket,
and Citus runs ``SELECT ... FOR UPDATE`` only when the statement's buckets all lie in one
shard. So a statement that locks frontier rows names buckets (``%(buckets)s``), and its
caller runs it once per group of buckets that share a shard, with that group's rows.

On one PostgreSQL there are no shards: every bucket is in one group, and each such
statement runs once, as it always did. A process reads the layout as it starts
(:func:`shard_map`). A shard Citus moves to another node keeps its buckets, and
statements follow it unchanged; a shard Citus splits puts a group's buckets in two
shards. Citus then refuses the statements grouped by the old layout
(``outages.layout_changed``), the process reads the layout again (:class:`Layout`)
and runs them again, regrouped (:meth:`ShardMap.regroup`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy.engine import Connection, Engine

from focuscrawl.db.database import execute
from focuscrawl.db.queries import queries
from focuscrawl.web.urls import oid_bucket

__all__ = ["BUCKETS", "Layout", "ShardMap", "shard_map"]

#: every bucket: the first byte of an MD5
BUCKETS = tuple(range(256))

_T = TypeVar("_T")


@dataclass(frozen=True)
class ShardMap:
    """The groups of buckets that share a shard; one group of all on one server."""

    #: bucket -> the index of its group
    group_of: tuple[int, ...]
    groups: tuple[tuple[int, ...], ...]

    @property
    def distributed(self) -> bool:
        return len(self.groups) > 1

    @classmethod
    def single(cls) -> ShardMap:
        return cls((0,) * len(BUCKETS), (BUCKETS,))

    @classmethod
    def of(cls, shard_of_bucket: Sequence[int]) -> ShardMap:
        """From each bucket's shard id (bucket 0 first)."""
        ids = sorted(set(shard_of_bucket))
        index = {shard: n for n, shard in enumerate(ids)}
        group_of = tuple(index[s] for s in shard_of_bucket)
        groups = tuple(tuple(b for b in BUCKETS if group_of[b] == n) for n in range(len(ids)))
        return cls(group_of, groups)

    def _by_group(self, items: Iterable[int], bucket_of: Callable[[int], int]) -> list[list[int]]:
        """``items`` by the group of their bucket, groups in order, items in theirs."""
        by_group: dict[int, list[int]] = defaultdict(list)
        for item in items:
            by_group[self.group_of[bucket_of(item)]].append(item)
        return [members for _, members in sorted(by_group.items())]

    def split(self, oids: Iterable[int]) -> list[tuple[list[int], list[int]]]:
        """``oids`` by shard: (the shard's buckets among them, their oids), in order."""
        return [
            (sorted({oid_bucket(o) for o in members}), members)
            for members in self._by_group(oids, oid_bucket)
        ]

    def regroup(self, buckets: Sequence[int]) -> list[list[int]]:
        """``buckets`` (grouped by an older layout) by the shard each lies in now: one
        list, themselves, unless a shard was split since they were grouped."""
        if not self.distributed:  # every statement with buckets asks this: no loop here
            return [list(buckets)]
        return self._by_group(buckets, int)

    def in_turn(self, start: int, claim: Callable[[list[int]], list[_T]]) -> tuple[list[_T], int]:
        """``claim`` the buckets of one shard after another from group ``start`` until one
        returns rows; those rows, and the group to start from next time."""
        count = len(self.groups)
        for n in range(count):
            group = (start + n) % count
            rows = claim(list(self.groups[group]))
            if rows:
                return rows, (group + 1) % count
        return [], start


def shard_map(connection: Connection) -> ShardMap:
    """The layout of the database ``connection`` is on: Citus's shards of ``doc`` when it
    is distributed, one group otherwise."""
    if not execute(connection, queries["citus_installed"]).scalar():
        return ShardMap.single()
    if not execute(connection, queries["citus_doc_distributed"]).scalar():
        return ShardMap.single()
    rows = execute(connection, queries["bucket_shards"]).all()
    return ShardMap.of([int(row.shard) for row in sorted(rows, key=lambda row: row.bucket)])


class Layout:
    """The shard map a process works by, shared by its threads: one group until
    :meth:`read`, which reads it from the database; read again when Citus says the
    shards changed (``outages.retry_until_done``'s ``on_layout``)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.map = ShardMap.single()

    def read(self) -> None:
        with self.engine.connect() as connection:
            self.map = shard_map(connection)
