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
