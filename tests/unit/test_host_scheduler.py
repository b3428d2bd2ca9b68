"""HostScheduler: every claimed URL is queued or taken until its outcome is known,
so that --max-pages and lockstep rounds never lose count of one."""

from __future__ import annotations

import threading
import time

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


def test_a_waiting_worker_takes_a_sooner_turn_at_once() -> None:
    """Only a turn sooner than every other wakes a waiting worker (a later one would
    wake it for nothing): a host whose turn is now must still be taken at once."""
    scheduler = HostScheduler()
    scheduler.add(claim(1, 1), not_before=time.monotonic() + 60)  # a minute away
    taken: list[Claim | None] = []
    worker = threading.Thread(target=lambda: taken.append(scheduler.take(30.0)))
    worker.start()
    time.sleep(0.1)  # the worker waits for host 1's turn, up to its timeout
    scheduler.add(claim(2, 2), not_before=time.monotonic() + 90)  # later: no wake-up
    scheduler.add(claim(3, 3))  # host 3's turn is now
    worker.join(10.0)  # far within the 30 s the worker would wait unwoken
    assert not worker.is_alive(), "the worker was not woken for a turn that had come"
    assert [c.seq for c in taken if c is not None] == [3]
    assert len(scheduler) == 2 and scheduler.outstanding() == (2, 1)


def test_the_count_of_queued_urls_follows_every_change() -> None:
    scheduler = HostScheduler()
    for seq, sid in ((1, 1), (2, 1), (3, 2)):
        scheduler.add(claim(seq, sid))
    assert len(scheduler) == 3
    first = scheduler.take(0.0)  # host 1's turn came first
    assert first is not None and first.seq == 1 and len(scheduler) == 2
    following = scheduler.take_next(1)
    assert following is not None and following.seq == 2 and len(scheduler) == 1
    scheduler.retry(following, 60.0)
    assert len(scheduler) == 2 and scheduler.due_within(0.25, 0.0) == 2
    assert len(scheduler.drain()) == 2 and len(scheduler) == 0
