"""focuscrawl.shards: which buckets share a shard, and a batch of oids split by shard."""

from __future__ import annotations

from focuscrawl.shards import BUCKETS, ShardMap
from focuscrawl.urls import oid_bucket, oid_of


def test_one_server_is_one_group_of_every_bucket() -> None:
    single = ShardMap.single()
    assert not single.distributed and single.groups == (BUCKETS,)
    oids = [oid_of(f"http://h{n}.example/") for n in range(20)]
    ((buckets, members),) = single.split(oids)
    assert members == oids and buckets == sorted({oid_bucket(o) for o in oids})


def test_oids_are_split_by_the_shard_of_their_bucket() -> None:
    # four shards of 64 buckets each, as Citus hashes them (any assignment will do)
    shards = ShardMap.of([102008 + bucket % 4 for bucket in BUCKETS])
    assert shards.distributed and len(shards.groups) == 4
    assert sorted(b for group in shards.groups for b in group) == list(BUCKETS)
    oids = [oid_of(f"http://h{n}.example/p") for n in range(200)]
    split = shards.split(oids)
    assert sorted(o for _, members in split for o in members) == sorted(oids)
    for buckets, members in split:
        (group,) = {shards.group_of[b] for b in buckets}  # one shard's buckets only
        assert {oid_bucket(o) for o in members} == set(buckets)
        assert all(shards.group_of[oid_bucket(o)] == group for o in members)
    positions = shards.split_rows(oids)
    assert [[oids[p] for p in rows] for _, rows in positions] == [m for _, m in split]
