"""focuscrawl.db.shards: which buckets share a shard, and a batch of oids split by shard."""

from __future__ import annotations

from focuscrawl.db.shards import BUCKETS, ShardMap
from focuscrawl.web.urls import oid_bucket, oid_of


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


def test_shards_are_taken_in_turn_from_the_one_after_the_last_that_had_rows() -> None:
    shards = ShardMap.of([bucket % 4 for bucket in BUCKETS])
    asked: list[int] = []

    def claim(buckets: list[int]) -> list[int]:
        asked.append(shards.group_of[buckets[0]])
        return [1] if shards.group_of[buckets[0]] in (0, 2) else []

    assert shards.in_turn(1, claim) == ([1], 3)  # 1 has none, 2 has some
    assert asked == [1, 2]
    assert shards.in_turn(3, claim) == ([1], 1)  # 3 has none, 0 has some
    assert shards.in_turn(0, lambda buckets: []) == ([], 0)  # none anywhere: start again


def test_buckets_grouped_by_an_old_layout_are_regrouped_by_the_shards_after_a_split() -> None:
    before = ShardMap.of([bucket % 4 for bucket in BUCKETS])
    # shard 3 split in two: its buckets below 128 stay, the others go to a new shard 4
    after = ShardMap.of(
        [4 if bucket % 4 == 3 and bucket >= 128 else bucket % 4 for bucket in BUCKETS]
    )
    assert len(after.groups) == 5
    unsplit = list(before.groups[1])
    assert after.regroup(unsplit) == [unsplit]
    low, high = after.regroup(list(before.groups[3]))
    assert low == [b for b in before.groups[3] if b < 128]
    assert high == [b for b in before.groups[3] if b >= 128]
    assert ShardMap.single().regroup([5, 1, 9]) == [[5, 1, 9]]  # one server: as they are
