"""HostScheduler: every claimed URL is queued or taken until its outcome is known,
so that --max-pages and lockstep rounds never lose count of one."""

from __future__ import annotations

from focuscrawl.crawler.politeness import HostScheduler
from focuscrawl.crawler.store import Claim


def claim(seq: int, sid: int) -> Claim:
    return Claim(oid=seq, url=f"http://h{sid}.test/{seq}", sid=sid, num_tries=0, depth=0, seq=seq)


def test_a_taken_url_counts_until_finished() -> None:
    scheduler = HostScheduler()
    scheduler.add(claim(1, 1))
    scheduler.add(claim(2, 2))
    assert scheduler.outstanding() == (2, 0)
    taken = scheduler.take(0.0)
    assert taken is not None
    assert scheduler.outstanding() == (1, 1)
    scheduler.finished(taken)
    scheduler.finished(taken)  # only the first call counts
    assert scheduler.outstanding() == (1, 0)


def test_a_url_put_back_is_counted_once() -> None:
    scheduler = HostScheduler()
    scheduler.add(claim(1, 1))
    taken = scheduler.take(0.0)
    assert taken is not None
    scheduler.retry(taken, 60.0)  # the host was not free: back in the queue, no longer taken
    assert scheduler.outstanding() == (1, 0)
    scheduler.finished(taken)  # a late finish does not make it vanish from the queue
    assert scheduler.outstanding() == (1, 0)
    assert scheduler.take(0.0) is None  # its host's turn has not come
    assert [c.seq for c in scheduler.drain()] == [1]


def test_the_worker_holding_a_host_takes_its_next_url_at_once() -> None:
    scheduler = HostScheduler()
    for seq, sid in ((1, 1), (2, 1), (3, 2)):
        scheduler.add(claim(seq, sid))
    assert scheduler.take_next(1) is None  # nobody holds host 1 yet
    first = scheduler.take(0.0)
    assert first is not None and first.sid == 1
    scheduler.finished(first)
    following = scheduler.take_next(1)  # the holder's next URL, no turn waited for
    assert following is not None and following.seq == 2
    assert scheduler.outstanding() == (1, 1)
    assert scheduler.take_next(1) is None  # host 1 has nothing queued
    other = scheduler.take(0.0)  # host 1 is still busy: another worker gets host 2
    assert other is not None and other.sid == 2
    scheduler.done(1, 0.0)
    assert scheduler.take_next(1) is None  # given back: no longer held


def test_hosts_in_use_have_urls_queued_or_a_worker_on_them() -> None:
    scheduler = HostScheduler()
    for seq, sid in ((1, 1), (2, 2)):
        scheduler.add(claim(seq, sid))
    assert scheduler.in_use() == {1, 2}
    taken = scheduler.take(0.0)
    assert taken is not None
    assert scheduler.in_use() == {1, 2}  # one queued, one with a worker on it
    scheduler.done(taken.sid, 0.0)
    assert scheduler.in_use() == {3 - taken.sid}
